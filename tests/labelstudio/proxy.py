"""The TLS reverse proxy of docs/deployment.md, for real: Debian's nginx running the server block the docs
give (read from the docs, so that what people copy is what the tests run), with a self-signed certificate,
in front of a gate. `https_proxy` starts it and stops it."""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.conftest import ROOT

NGINX = shutil.which("nginx") or "/usr/sbin/nginx"


def documented_server_block() -> str:
    """The nginx `server { … }` block of docs/deployment.md, as written there."""
    text = (ROOT / "docs" / "deployment.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```nginx\n(.*?)```", text, flags=re.S)
    assert len(blocks) == 1, "docs/deployment.md should hold exactly one nginx block"
    return blocks[0]


def self_signed(folder: Path, host: str) -> tuple[Path, Path]:
    cert, key = folder / "cert.pem", folder / "key.pem"
    name = f"IP:{host}" if re.fullmatch(r"[\d.]+", host) else f"DNS:{host}"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", f"/CN={host}",
                    "-addext", f"subjectAltName={name}", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True)
    return cert, key


def _config(folder: Path, public_url: str, upstream: str) -> Path:
    """nginx.conf around the documented block: its port, name, certificate and upstream put in, paths in `folder`."""
    parts = urlsplit(public_url)
    cert, key = self_signed(folder, parts.hostname or "")
    block = documented_server_block()
    replaced = {r"listen 443 ssl;": f"listen {parts.hostname}:{parts.port} ssl;",
                r"server_name \S+;": f"server_name {parts.hostname};",
                r"ssl_certificate\s+\S+;": f"ssl_certificate {cert};",
                r"ssl_certificate_key\s+\S+;": f"ssl_certificate_key {key};",
                r"proxy_pass http://127\.0\.0\.1:8081;": f"proxy_pass {upstream.rstrip('/')};"}
    for pattern, value in replaced.items():
        block, found = re.subn(pattern, value, block)
        assert found == 1, f"the documented nginx block no longer has {pattern!r}"
    temp = "\n".join(f"    {kind}_temp_path {folder / kind};" for kind in ("client_body", "proxy", "fastcgi", "uwsgi",
                                                                           "scgi"))
    conf = folder / "nginx.conf"
    conf.write_text(("user root;\n" if os.geteuid() == 0 else "")
                    + f"pid {folder / 'nginx.pid'};\nerror_log {folder / 'error.log'};\nevents {{}}\nhttp {{\n"
                    f"    access_log {folder / 'access.log'};\n{temp}\n{block}}}\n", encoding="utf-8")
    return conf


@contextmanager
def https_proxy(public_url: str, upstream: str, folder: Path) -> Iterator[str]:
    """nginx serving `public_url` (https://127.0.0.1:<port>) in front of `upstream` until the block ends."""
    if not Path(NGINX).exists():
        pytest.fail("Debian's nginx is not installed: `make test` installs it")
    folder.mkdir(parents=True, exist_ok=True)
    conf = _config(folder, public_url, upstream)
    proc = subprocess.Popen([NGINX, "-p", str(folder), "-e", str(folder / "error.log"), "-c", str(conf),
                             "-g", "daemon off;"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    parts = urlsplit(public_url)
    try:
        deadline = time.monotonic() + 30
        while True:
            assert proc.poll() is None, f"nginx did not start: {proc.stderr.read() if proc.stderr else ''}"
            try:
                with socket.create_connection((parts.hostname, parts.port), timeout=1):
                    break
            except OSError:
                assert time.monotonic() < deadline, "nginx did not listen within 30 s"
                time.sleep(0.1)
        yield public_url.rstrip("/")
    finally:
        proc.terminate()
        proc.wait(timeout=30)
