"""Typed configuration: one place for defaults, strict keys and types, env overrides, secrets."""

from __future__ import annotations

import subprocess
import sys
import tomllib

import pytest

from curation.core.config import Config, load_config, secret
from curation.core.errors import ConfigError
from curation.qc.shortcut.inspectors import make_inspectors
from tests.conftest import ROOT


def _file(tmp_path, text: str):
    path = tmp_path / "my.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_file_lays_over_the_defaults_key_by_key(tmp_path):
    config = load_config(_file(tmp_path, "[cluster]\nmin_cluster_size = 9\n"), environ={})
    assert config.cluster.min_cluster_size == 9
    assert config.cluster.backend == Config().cluster.backend == "sklearn"  # the one default, untouched


@pytest.mark.parametrize(("text", "message"), [
    ("[ingest]\nbatch_size = 5\n", "unknown key ingest.batch_size"),      # read by nothing: refused
    ("[clustr]\nbackend = 'sklearn'\n", "unknown section [clustr]"),
    ("[cluster]\nmin_cluster_size = 'five'\n", "cluster.min_cluster_size must be int"),
    ("[cluster]\nbackend = 'kmeans'\n", "cluster.backend = 'kmeans' is not one of"),
    ("[feeds]\nratio_min = 3.0\n", "ratio_min <= ratio_max"),
    ("[media]\nsuffixes = '.mp4'\n", "media.suffixes must be a list"),
    ("[[qc.shortcut.inspectors]]\nname = 'x'\nkind = 'openai'\n", "x: base_url is required"),
    # a model named without `kind`: never silently the word-overlap baseline
    ("[[qc.shortcut.inspectors]]\nname = 'qwen'\nbase_url = 'http://127.0.0.1:8077/v1'\nmodel = 'q'\n",
     "qwen: base_url and model are set but kind is lexical"),
    ("[cluster\n", "my.toml"),
    ("[qc.shortcut]\nconcurrency = 0\n", "qc.shortcut.concurrency must be at least 1"),
    ("[embedding]\nbatch_size = 0\n", "embedding.batch_size must be at least 1"),
    ("[keywords]\nstop_patterns = ['(oops']\n", "is not a regular expression"),
    ("[feeds]\nmax_feed_len = 6\n", "must exceed anchor_max"),
    ("[media]\nkeyframe_fps = 0\n", "media.keyframe_fps must be above 0"),
])
def test_wrong_keys_and_types_are_refused_by_name(tmp_path, text, message):
    with pytest.raises(ConfigError, match=message.replace("[", r"\[").replace("(", r"\(")):
        load_config(_file(tmp_path, text), environ={})


def test_a_missing_config_file_is_an_error_not_an_empty_config(tmp_path):
    with pytest.raises(ConfigError, match="does not exist"):
        load_config(tmp_path / "absent.toml", environ={})


def test_environment_overrides_win_and_typos_there_are_named(tmp_path):
    config = load_config(_file(tmp_path, "[cluster]\nmin_cluster_size = 9\n"),
                         environ={"CURATE__CLUSTER__MIN_CLUSTER_SIZE": "12", "CURATE__QC__SHORTCUT__RULE": "mmstar",
                                  "CURATE__MEDIA__PRESET": "medium"})
    assert config.cluster.min_cluster_size == 12 and config.qc.shortcut.rule == "mmstar"
    assert config.media.preset == "medium"
    with pytest.raises(ConfigError, match="unknown key cluster.min_size"):
        load_config(None, environ={"CURATE__CLUSTER__MIN_SIZE": "3"})
    # names in tables keyed by name keep their case although environment variables are upper case
    sources = load_config(None, environ={"CURATE__SOURCES__KUAIREC__PLAYABLE": "true"}).sources
    assert sources["KuaiRec"].playable and "kuairec" not in sources


def test_media_settings_hash_is_the_one_outputs_were_made_with():
    # what the untyped config hashed (keyframe_fps = 1 was an integer): outputs made then stay current
    import hashlib
    import json

    from curation.media.normalise import settings_sha256
    old = {"width": 720, "height": 1280, "fps": 30, "crf": 23, "preset": "veryfast", "audio_bitrate": "128k",
           "poster_at_s": 1.0, "keyframe_fps": 1, "recipe": 1}
    assert settings_sha256(Config().media) == hashlib.sha256(json.dumps(old, sort_keys=True).encode()).hexdigest()


def test_printed_config_reads_back_as_the_same_config(tmp_path):
    out = subprocess.run([sys.executable, "-m", "curation.cli", "config", "--defaults"], cwd=tmp_path,
                         capture_output=True, text=True, check=True, env={"PATH": "/usr/bin:/bin",
                                                                          "PYTHONPATH": str(ROOT)}).stdout
    tomllib.loads(out)
    assert load_config(_file(tmp_path, out), environ={}) == Config()


def test_an_unset_secret_fails_up_front_naming_the_variable(monkeypatch):
    monkeypatch.delenv("NO_SUCH_KEY_VAR", raising=False)
    with pytest.raises(ConfigError, match="NO_SUCH_KEY_VAR is not set"):
        secret("NO_SUCH_KEY_VAR", "a test")
    config = load_config(None, environ={})
    inspector = {"name": "remote", "kind": "openai", "base_url": "http://127.0.0.1:9/v1", "model": "m",
                 "api_key_env": "NO_SUCH_KEY_VAR"}
    from curation.core.config import ShortcutConfig, build
    spec = build(ShortcutConfig, {"inspectors": [inspector]}, "qc.shortcut")
    with pytest.raises(ConfigError, match="NO_SUCH_KEY_VAR is not set"):  # before any request
        make_inspectors(spec.inspectors)
    monkeypatch.setenv("NO_SUCH_KEY_VAR", "sk-test")
    (built,) = make_inspectors(spec.inspectors)
    assert built.api_key == "sk-test" and "sk-test" not in repr(built)
    assert config.qc.shortcut.inspectors[0].kind == "lexical"


def test_the_run_says_which_inspector_decides_under_each_rule(tmp_path):
    two = ("[[qc.shortcut.inspectors]]\nname = 'first'\nkind = 'openai'\nbase_url = 'http://127.0.0.1:9/v1'\n"
           "model = 'm'\nsamples = 3\n[[qc.shortcut.inspectors]]\nname = 'second'\n")
    paper = load_config(_file(tmp_path, two), environ={}).qc.shortcut
    assert paper.who_decides() == ("rule paper: inspector first decides, by its first answer (discarded when right); "
                                   "its further samples are evidence only; the answers of second are kept as "
                                   "evidence only")
    mmstar = load_config(_file(tmp_path, "[qc.shortcut]\nrule = 'mmstar'\nmax_correct = 1\n" + two),
                         environ={}).qc.shortcut
    assert mmstar.who_decides() == ("rule mmstar: every answer of first, second counts; a task is kept when at most "
                                    "1 of them are right")
