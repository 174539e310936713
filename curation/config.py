"""Configuration: `curation.toml` defaults, an optional override file, secrets from env."""

from __future__ import annotations

import os
import tomllib
from pathlib import Path
from typing import Any

PROJECT_ROOT = Path(__file__).resolve().parents[1]
DEFAULTS_FILE = PROJECT_ROOT / "curation.toml"


def _merge(base: dict[str, Any], over: dict[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in over.items():
        if isinstance(value, dict) and isinstance(merged.get(key), dict):
            merged[key] = _merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def load_config(path: Path | None = None) -> dict[str, Any]:
    """The project defaults with `path` (if given) laid over them."""
    config: dict[str, Any] = {}
    if DEFAULTS_FILE.exists():
        config = tomllib.loads(DEFAULTS_FILE.read_text(encoding="utf-8"))
    if path is not None:
        if not path.exists():
            raise FileNotFoundError(f"config file {path} does not exist")
        config = _merge(config, tomllib.loads(path.read_text(encoding="utf-8")))
    return config


def secret(env_name: str) -> str:
    """A secret by the name of the environment variable that holds it; never logged."""
    value = os.environ.get(env_name)
    if not value:
        raise RuntimeError(f"environment variable {env_name} is not set")
    return value
