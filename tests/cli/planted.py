"""A bug planted where no user can reach it: `curate ...` in a fresh process in which one
function raises an exception nobody meant. It shows what a real bug in that place would
do: the run is `failed` with the error and its traceback, and no plausible row or message
stands in for it."""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

from curation.core.catalog import Catalog
from tests.conftest import ROOT

PROGRAM = """
import builtins, importlib, sys
from curation.cli import main

module_name, _, path = sys.argv[1].partition(":")
*owners, attribute = path.split(".")
owner = importlib.import_module(module_name)
for name in owners:
    owner = getattr(owner, name)

kind, _, message = sys.argv[2].partition(":")

def planted(*args, **kwargs):
    raise getattr(builtins, kind)(message)

setattr(owner, attribute, planted)
main(sys.argv[3:])
"""


def curate_with_bug(target: str, error: str, *args: str) -> subprocess.CompletedProcess:
    """`curate ARGS` where `target` ("module:Class.method" or "module:function") raises `error`
    when called: a built-in exception and its message, "RuntimeError:injected"."""
    return subprocess.run([sys.executable, "-c", PROGRAM, target, error, *args], cwd=ROOT, capture_output=True,
                          text=True, env=os.environ.copy(), timeout=600)


def last_run(cat: Catalog, stage: str) -> dict[str, Any]:
    return cat.rows("SELECT run_id, status, error, traceback FROM runs WHERE stage = ? "
                    "ORDER BY started_at DESC LIMIT 1", [stage])[0]


def assert_bug_kept(out: subprocess.CompletedProcess, db: str, stage: str, error: str, where: str,
                    hidden: str) -> None:
    """The CLI called it a bug in one line, and the stage's run is `failed` with `error` and a traceback
    through `where`; `hidden`, the message a broad handler used to put in its place, is nowhere."""
    assert out.returncode == 1
    assert out.stderr.startswith(f"error: unexpected {error} (a bug, not bad input)"), out.stderr
    assert hidden not in out.stderr
    with Catalog(db) as cat:
        run = last_run(cat, stage)
    assert run["status"] == "failed" and run["error"] == error
    assert f"in {where}" in run["traceback"] and hidden not in run["traceback"]
