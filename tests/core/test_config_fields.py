"""Every setting has help text, and the settings as the docs print them (TOML key, environment variable, default)
are the ones `load_config` reads."""

from __future__ import annotations

import dataclasses
import typing
from typing import Any

from hypothesis import given
from hypothesis import settings as hypothesis_settings
from hypothesis import strategies as st

from curation.core.config import Config, load_config
from curation.core.config_fields import NAMED, settings, toml_value


def walk(cls: type, path: tuple[str, ...] = ()) -> list[tuple[str, dataclasses.Field[Any]]]:
    """Every field of the configuration that is not a section of its own, found here by walking the dataclasses
    (not through `settings()`, which this checks): lists and tables of tables are walked into as well."""
    found = []
    hints = typing.get_type_hints(cls)
    for f in dataclasses.fields(cls):
        hint, where = hints[f.name], (*path, f.name)
        if dataclasses.is_dataclass(hint):
            found += walk(hint, where)  # type: ignore[arg-type]
            continue
        found.append((".".join(where), f))
        inner = [a for a in typing.get_args(hint) if dataclasses.is_dataclass(a)]
        if inner:
            found += walk(inner[0], where if typing.get_origin(hint) is list else (*where, NAMED))
    return found


def test_every_setting_has_help_text():
    fields = walk(Config)
    assert len(fields) > 100
    assert [name for name, f in fields if not str(f.metadata.get("help", "")).strip()] == []


def test_the_settings_listed_are_every_field_of_the_configuration():
    assert [s.dotted for s in settings()] == [name for name, _ in walk(Config)]


def value_at(config: Config, dotted: str, source: str) -> Any:
    value: Any = config
    for part in dotted.split("."):
        value = value[source if part == NAMED else part] if isinstance(value, dict) else getattr(value, part)
    return value


WITH_VARIABLE = [s for s in settings() if s.env]


@hypothesis_settings(max_examples=60, deadline=None)
@given(setting=st.sampled_from(WITH_VARIABLE), source=st.sampled_from(sorted(Config().sources)))
def test_each_variable_the_docs_name_sets_its_setting_to_the_value_given(setting, source):
    """The documented variable, given the documented default as its value, is read by `load_config` (an unknown
    variable is refused) and sets exactly that setting to it."""
    name = setting.env.replace(f"__{NAMED.upper()}__", f"__{source.upper()}__")
    config = load_config(None, environ={name: setting.default})
    assert toml_value(value_at(config, setting.dotted, source)) == setting.default


def test_every_setting_inside_a_list_of_tables_has_no_variable_of_its_own():
    inside = [s for s in settings() if s.array]
    assert inside and all(s.env is None for s in inside)
    assert [s for s in settings() if s.env is None and not s.array] == [s for s in settings() if not s.section]
