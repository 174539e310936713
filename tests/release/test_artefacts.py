"""Every file a release holds is described where its readers look: each data file in croissant.json's distribution
(with the manifest's hash), and every file in the dataset card. A file added to `build_release` without them fails
here (docs/development.md, "How to add…", a release artefact)."""

from __future__ import annotations

import json

from curation.release.build import build_release
from curation.release.croissant import CROISSANT
from curation.release.manifest import MANIFEST
from tests.release.helpers import reviewed_catalog, settings

CARD = "README.md"
# the files about the release rather than its data: the card names them, Croissant does not describe them
ABOUT = {CARD, "CHANGELOG.md", MANIFEST, CROISSANT, "health.json", "health.svg"}


def test_every_file_of_a_release_is_in_croissant_and_the_card(clustered_catalog, tmp_path):
    reviewed_catalog(clustered_catalog)
    folder = build_release(clustered_catalog, "1.0.0", settings(tmp_path), repo="org/tasks").folder
    files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    croissant = json.loads((folder / CROISSANT).read_text(encoding="utf-8"))
    manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    described = {f["contentUrl"]: f["sha256"] for f in croissant["distribution"] if "contentUrl" in f}
    assert [f for f in files if f not in ABOUT and f not in described] == []
    assert all(manifest["files"][f]["sha256"] == sha for f, sha in described.items())
    card = (folder / CARD).read_text(encoding="utf-8")
    unnamed = [f for f in files if f != CARD and f not in card and f"`{f.split('/')[0]}/`" not in card]
    assert unnamed == []
