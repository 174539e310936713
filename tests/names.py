"""File names as Linux hands them over: any bytes, not always UTF-8 (shared by the fuzz tests)."""

from __future__ import annotations


def is_utf8(name: bytes) -> bool:
    """Whether a name's bytes are UTF-8 (else Python sees it with surrogate escapes, `os.fsdecode`)."""
    try:
        name.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True
