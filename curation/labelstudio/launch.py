"""`make labelstudio`: Label Studio and the access gate in front of it, in the foreground, stopped together.

Label Studio runs in a session of its own, so a terminal's Ctrl-C (SIGINT to the foreground group), a
closed terminal (SIGHUP) or `kill`/systemd (SIGTERM) never reaches it directly: this process stops the
gate, then Label Studio and its workers, and only then exits. A restore (`make labelstudio-restore`)
can follow at once.

    python -m curation.labelstudio.launch --data-dir build/labelstudio --port 8080 \\
        --gate-host 127.0.0.1 --gate-port 8081 --public-url https://label.example.org
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
from pathlib import Path
from types import FrameType

from curation.core.config import load_config
from curation.core.errors import CurationError
from curation.labelstudio import gate
from curation.labelstudio.server import origin, start_server, stop_server, wait_ready

NEEDED = ("LABEL_STUDIO_USERNAME", "LABEL_STUDIO_PASSWORD", "LABEL_STUDIO_API_KEY")


def _stop_on(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt  # the one way out of the gate's loop and the wait, with every `finally` run


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m curation.labelstudio.launch", description=__doc__.split("\n")[0])
    parser.add_argument("--data-dir", type=Path, default=Path("build/labelstudio"), help="Label Studio's data folder")
    parser.add_argument("--port", type=int, default=8080, help="Label Studio's own port, on 127.0.0.1 only")
    parser.add_argument("--media-root", type=Path, default=Path(load_config().media.output_dir),
                        help="normalised media served to annotators (default: [media] output_dir)")
    parser.add_argument("--gate-host", default="127.0.0.1", help="the gate's address (0.0.0.0: every interface)")
    parser.add_argument("--gate-port", type=int, default=8081)
    parser.add_argument("--public-url", default="", help="the address people open when a TLS proxy sits in front")
    args = parser.parse_args(argv)
    missing = [name for name in NEEDED if not os.environ.get(name)]
    if missing:
        sys.stderr.write(f"error: set {', '.join(missing)} in the environment first (the API key is the admin's "
                         "preset token: 40 hex characters)\n")
        return 2
    try:
        if args.public_url:
            origin(args.public_url)  # a typo in LS_PUBLIC_URL stops here, before anything starts
    except CurationError as exc:
        sys.stderr.write(f"error: {exc}\n")
        return exc.exit_code
    for signum in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(signum, _stop_on)
    log = args.data_dir / "server.log"
    server = start_server(args.data_dir, args.port, os.environ["LABEL_STUDIO_USERNAME"],
                          os.environ["LABEL_STUDIO_PASSWORD"], os.environ["LABEL_STUDIO_API_KEY"], args.media_root,
                          log=log, public_url=args.public_url)
    url = f"http://127.0.0.1:{args.port}"
    try:
        print(f"Label Studio starting at {url} (pid {server.pid}, log {log})", flush=True)
        wait_ready(url, proc=server, log=log)
        print(f"Label Studio ready at {url}; for the toolkit's commands: export LABEL_STUDIO_URL={url} "
              f"LABEL_STUDIO_DATA_DIR={args.data_dir.resolve()}", flush=True)
        gate.main(["--upstream", url, "--host", args.gate_host, "--port", str(args.gate_port),
                   "--data-dir", str(args.data_dir), "--public-url", args.public_url])
    except KeyboardInterrupt:
        pass
    except RuntimeError as exc:  # Label Studio exited before it was ready: the message holds its log's end
        sys.stderr.write(f"error: {exc}\n")
        return 1
    finally:
        stop_server(server)
        print("stopped the gate and Label Studio", flush=True)
    return 0  # stopped when told: not a failure, for systemd's Restart=on-failure too


if __name__ == "__main__":
    raise SystemExit(main())
