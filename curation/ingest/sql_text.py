"""Python's text rules spelled in DuckDB SQL: `str.strip()`, the hashtag regex, list clean-up.

The columnar ingest builds its expressions from these; tests/ingest/test_columnar.py checks
each spelling against Python on random strings.
"""

from __future__ import annotations

from curation.core.catalog import sql_literal
from curation.ingest.text import HASHTAG_STOPS, PY_WHITESPACE


def re_class(chars: str, negate: bool = False) -> str:
    """An RE2 character class of exactly these characters, by code point."""
    return "[" + ("^" if negate else "") + "".join(f"\\x{{{ord(c):X}}}" for c in chars) + "]"


HASHTAG_RE2 = "#(" + re_class(PY_WHITESPACE + HASHTAG_STOPS, negate=True) + "{1,64})#?"
QUOTES = sql_literal("'\"")
WS_CLASS = sql_literal(re_class(PY_WHITESPACE))
LIST_EDGES = sql_literal(re_class(PY_WHITESPACE + "'\""))  # what a list item may need stripped of
_WS_CODES = ", ".join(str(ord(c)) for c in PY_WHITESPACE)
_STRIP_RE2 = sql_literal(f"^{re_class(PY_WHITESPACE)}+|{re_class(PY_WHITESPACE)}+$")


def pystrip(expr: str) -> str:
    """`str.strip()` in SQL: Unicode white space off both ends. Only a string whose first
    or last character is white space is touched (that test is cheaper by code point than
    by regular expression), and a regular expression strips it: DuckDB's `trim` by a set
    of characters is several times slower."""
    edge = f"unicode({expr}) IN ({_WS_CODES}) OR unicode({expr}[-1:]) IN ({_WS_CODES})"
    return f"CASE WHEN {edge} THEN regexp_replace({expr}, {_STRIP_RE2}, '', 'g') ELSE {expr} END"


def cleaned_list(expr: str, stripped: bool = False) -> str:
    """`_clean_list` before its de-duplication: items stripped (unless they cannot have white
    space at either end), empty ones dropped."""
    items = expr if stripped else f"list_transform({expr}, lambda x: {pystrip('x')})"
    return f"list_filter({items}, lambda x: x <> '')"


def deduped_list(column: str) -> str:
    """The list's first occurrences in order, NULL for an empty list."""
    return f"nullif(list_filter({column}, lambda x, i: list_position({column}, x) = i), [])"
