"""The Label Studio authoring config and the taxonomy agree, so annotators pick what the importer knows."""

import xml.etree.ElementTree as ET

import yaml

from curation.core.resources import resource_text
from curation.tasks.taxonomy import load_taxonomy


def test_subcategory_choices_are_the_taxonomy_with_both_names():
    root = ET.fromstring(resource_text("authoring.xml"))
    choices = root.find(".//Choices[@name='subcategory']")
    assert choices is not None
    aliases = [c.get("alias") for c in choices.findall("Choice")]
    assert aliases == list(load_taxonomy().subcategories)  # stored values are the runner's id prefixes
    spec = yaml.safe_load(resource_text("taxonomy.yaml"))
    names = {s["id"]: (s["zh"], s["en"]) for body in spec["tiers"].values() for s in body["subcategories"]}
    for choice in choices.findall("Choice"):
        zh, en = names[choice.get("alias")]
        assert zh in choice.get("value") and en in choice.get("value")  # what annotators read
    assert root.find(".//TextArea[@name='instruction']").get("required") == "true"


def test_the_admin_cannot_be_made_an_annotator():
    import pytest

    from curation.core.errors import UsageError
    from curation.labelstudio.accounts import provision

    with pytest.raises(UsageError, match="own admin account"):
        provision("Admin@Example.org", "admin@example.org", "Sunflower-2026")
