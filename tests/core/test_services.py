"""Waiting for a helper server the way `make labelstudio` does (issue 43): a slow start is waited for as long
as the server lives, never cut off by a deadline while it comes up; a server that exits first is one error
holding the end of its log."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from curation.core.services import free_port, wait_http


def _server(port: int, delay_s: float, log) -> subprocess.Popen:
    code = textwrap.dedent(f"""
        import http.server, time
        time.sleep({delay_s})
        class Ok(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                self.send_response(200); self.end_headers()
            def log_message(self, *args):
                pass
        http.server.HTTPServer(("127.0.0.1", {port}), Ok).serve_forever()
        """)
    return subprocess.Popen([sys.executable, "-c", code], stdout=log, stderr=subprocess.STDOUT)


def test_a_slow_start_is_waited_for_while_the_server_lives(tmp_path):
    port = free_port()
    with (tmp_path / "slow.log").open("wb") as log:
        proc = _server(port, 3.0, log)
    try:
        wait_http(f"http://127.0.0.1:{port}/", "the slow server", None, proc, interval_s=0.2)
        assert proc.poll() is None  # it answered: the wait ended because it was ready, not because it gave up
    finally:
        proc.kill()
        proc.wait()


def test_a_server_that_exits_first_is_one_error_with_the_end_of_its_log(tmp_path):
    log = tmp_path / "exits.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([sys.executable, "-c", "print('port 8080 is taken, giving up'); raise SystemExit(3)"],
                                stdout=out, stderr=subprocess.STDOUT)
    with pytest.raises(RuntimeError) as raised:
        wait_http(f"http://127.0.0.1:{free_port()}/", "the server", None, proc, interval_s=0.2, log=log)
    message = str(raised.value)
    assert message.startswith("the server exited with code 3 before it was ready")
    assert "port 8080 is taken, giving up" in message
