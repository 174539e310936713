"""The configuration written back as commented TOML, for `curate config`."""

from __future__ import annotations

import dataclasses
from typing import Any

from curation.core.config_fields import toml_value


def _is_table(value: Any) -> bool:
    return dataclasses.is_dataclass(value) or isinstance(value, dict)


def _section(name: str, value: Any, out: list[str], array: bool = False) -> None:
    scalars, tables = [], []
    if isinstance(value, dict):
        items = [(k, v, "") for k, v in value.items()]
    else:
        items = [(f.name, getattr(value, f.name), f.metadata.get("help", "")) for f in dataclasses.fields(value)]
    for key, item, help_text in items:
        is_list_of_tables = isinstance(item, list) and item and all(_is_table(i) for i in item)
        if _is_table(item) or is_list_of_tables:
            tables.append((key, item))
        else:
            scalars.append(f"{key} = {toml_value(item)}" + (f"  # {help_text}" if help_text else ""))
    if name and (scalars or array):
        out.append(f"\n[[{name}]]" if array else f"\n[{name}]")
    out.extend(scalars)
    for key, item in tables:
        full = f"{name}.{key}" if name else key
        if isinstance(item, list):
            for element in item:
                _section(full, element, out, array=True)
        else:
            _section(full, item, out)


def config_toml(config: Any) -> str:
    out = ["# LivingScreen curation toolkit configuration (`curate config`); lay a copy over the",
           "# defaults with `curate --config FILE`. Secrets are named, never written here."]
    _section("", config, out)
    return "\n".join(out) + "\n"
