"""Every setting of the configuration as data, read from the dataclasses of `curation/core/config.py`
themselves: where it sits in TOML, the environment variable that overrides it, its type, its default
and its help text. The docs' settings lists are printed from this, so a new field is documented by
writing its `metadata=_help(...)`, and nowhere else."""

from __future__ import annotations

import dataclasses
import json
import types
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Literal

from curation.core.config import ENV_PREFIX, Config

NAMED = "<name>"  # the key of one entry of a table keyed by name ([sources.<name>])


@dataclass(frozen=True)
class Setting:
    section: tuple[str, ...]  # ("cluster",), ("qc", "shortcut"), ("sources", "<name>")
    key: str
    type: str
    default: str  # as TOML writes it
    help: str
    env: str | None  # None: inside a list of tables, which is set whole
    array: bool = False  # the section is one element of a list of tables ([[qc.shortcut.inspectors]])

    @property
    def top(self) -> str:
        """The top-level section the setting belongs to: the unit a docs page owns."""
        return self.section[0] if self.section else self.key

    @property
    def toml(self) -> str:
        table = ".".join(self.section)
        if not table:  # a top-level table of tables ([sources]): its entries are the settings below it
            return f"[{self.key}]"
        return f"[[{table}]] {self.key}" if self.array else f"[{table}] {self.key}"

    @property
    def dotted(self) -> str:
        return ".".join((*self.section, self.key))


def toml_value(value: Any) -> str:
    """`value` as a TOML literal; a dataclass as an inline table of the keys that differ from its defaults."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        plain = type(value)()
        changed = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)
                   if getattr(value, f.name) != getattr(plain, f.name)}
        return toml_value(changed)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {toml_value(v)}" for k, v in value.items()) + "}" if value else "{}"
    raise TypeError(f"no TOML form for {type(value).__name__}")


def type_text(hint: Any) -> str:
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is Literal:
        return "one of " + ", ".join(toml_value(a) for a in args)
    if origin is list:
        return "list of tables" if dataclasses.is_dataclass(args[0]) else f"list of {type_text(args[0])}"
    if origin is dict:
        return "table of tables" if dataclasses.is_dataclass(args[1]) else f"table of {type_text(args[1])}"
    if origin in (types.UnionType, typing.Union):
        raise TypeError(f"union types are not supported in config ({hint})")
    return {bool: "bool", int: "int", float: "float", str: "string"}[hint]


def _element(hint: Any) -> tuple[Any, bool]:
    """The dataclass a list or table of tables holds, and whether it is a list."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin is list and dataclasses.is_dataclass(args[0]):
        return args[0], True
    if origin is dict and dataclasses.is_dataclass(args[1]):
        return args[1], False
    return None, False


def _env(path: tuple[str, ...]) -> str:
    return ENV_PREFIX + "__".join(p.upper() for p in path)


def settings(cls: type = Config, section: tuple[str, ...] = (), env: bool = True,
             array: bool = False) -> Iterator[Setting]:
    """Every setting under `cls`, in the order the dataclasses declare them: each field that is not a
    section of its own, and the fields of the tables a list or a table of tables holds."""
    hints = typing.get_type_hints(cls)
    defaults = cls()
    for f in dataclasses.fields(cls):
        hint = hints[f.name]
        if isinstance(hint, type) and dataclasses.is_dataclass(hint):
            yield from settings(hint, (*section, f.name), env, array)
            continue
        where = (*section, f.name)
        default = getattr(defaults, f.name)
        default = float(default) if hint is float else default  # 14400 given for a float reads back as 14400.0
        # one variable names a key inside a section: a top-level table is set by its entries
        named = _env(where) if env and section else None
        yield Setting(section, f.name, type_text(hint), toml_value(default), str(f.metadata.get("help", "")), named,
                      array)
        element, is_list = _element(hint)
        if element is not None:
            # a list is set whole (in a file, or one variable holding a TOML array); a table's entries by name
            yield from settings(element, where if is_list else (*where, NAMED), env and not is_list, is_list)
