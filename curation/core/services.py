"""Local helper servers (Label Studio, the LLM): free ports and readiness polling."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path


def installation_root() -> Path:
    """Where the toolkit is installed: the checkout holding its pyproject.toml (where `make` puts the
    helper venvs), else, for a package installed into a venv, the folder holding that venv."""
    checkout = Path(__file__).resolve().parents[2]
    if (checkout / "pyproject.toml").is_file():
        return checkout
    return Path(sys.prefix).resolve().parent


def helper_venv(folder: str, env: str) -> Path:
    """A helper server's own venv (`.venv-ls`, `.venv-llm`): `$env` when set, else `folder` in the
    installation root, so that a command finds it whatever folder it runs in."""
    return Path(os.environ[env]) if os.environ.get(env) else installation_root() / folder


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_http(url: str, name: str, timeout_s: float | None, proc: subprocess.Popen | None = None,
              interval_s: float = 0.5, log: Path | None = None) -> None:
    """Poll `url` until it answers 200; fail early, with the end of its `log`, when `proc` has exited.
    `timeout_s=None` waits for as long as `proc` lives (a first start may take minutes on a busy machine),
    saying every 30 s that it still waits."""
    started = time.monotonic()
    said = started
    while timeout_s is None or time.monotonic() - started < timeout_s:
        if proc is not None and proc.poll() is not None:
            tail = log.read_text(encoding="utf-8", errors="replace")[-1500:] if log and log.is_file() else ""
            raise RuntimeError(f"{name} exited with code {proc.returncode} before it was ready"
                               + (f"; the end of {log}:\n{tail}" if tail else ""))
        try:
            with urllib.request.urlopen(url, timeout=5) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        if timeout_s is None and time.monotonic() - said >= 30:
            said = time.monotonic()
            print(f"{name} is still starting ({said - started:.0f} s)" + (f"; its log: {log}" if log else ""),
                  flush=True)
        time.sleep(interval_s)
    raise TimeoutError(f"{name} at {url} not ready after {timeout_s:.0f} s")
