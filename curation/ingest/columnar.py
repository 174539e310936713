"""The ingest rules as column expressions, for JSON Lines read through a mapping.

`fast_rows_sql` turns a mapping into one DuckDB query over the file's lines. For each
line it gives the catalog row and `ok`: whether the vectorised rules are certain to
give exactly what `records.normalise_record` gives. A line that is not `ok` (an
unusual type, a count written in a way only Python's parser reads, a record that
will be rejected) goes through the per-record path, which decides and names the
reason. So the columnar path only ever accepts, and the rules stay written once: the
expressions here accept a subset of what the per-record rules accept, with the same
values (tests/ingest/test_columnar.py compares both paths on a fuzzed corpus).
"""

from __future__ import annotations

from curation.core.catalog import sql_literal
from curation.core.fingerprint import record_hash_expr
from curation.ingest.generic import FieldRule, Mapping
from curation.ingest.records import COUNT_FIELDS, LIST_FIELDS, STRING_FIELDS, VIDEO_FIELDS
from curation.ingest.sql_text import (
    HASHTAG_RE2,
    LIST_EDGES,
    QUOTES,
    WS_CLASS,
    cleaned_list,
    deduped_list,
    pystrip,
)

# Lines DuckDB's JSON reader accepts but Python's does not (trailing commas; NaN and
# Infinity in spellings Python does not read), and escapes whose decoding may differ (lone
# surrogates, NUL): such lines take the per-record path. A false alarm costs only speed.
# Each test is a regular expression of its own, tried only on lines a cheaper test lets
# through: RE2 skips ahead to a literal first character, but not to an alternation.
_TRAILING_COMMA_RE2 = r",[ \t\r\n]*[\]}]"
_ODD_ESCAPE_RE2 = r"\\u[dD][89a-fA-F]|\\u0000"
# A NaN or Infinity is a double to DuckDB. In a mapped field a double or a container is
# certain only where its type is checked (counts, durations, list items); in an unmapped
# top-level field Python reads the line for `extra` (and sends it per record if it cannot).
# Only inside an object a dotted path goes through can one hide from both.
_NAN_RE2 = r"(?i)[:\[,][ \t\r\n]*-?(nan|inf)"
# Python's json gives up on nesting near its recursion limit and on integers of more than
# 4,300 digits; lines that might hold either (a cheap over-estimate) go per record.
_TOO_DEEP_OR_LONG = ("strlen(text) - strlen(replace(replace(text, '[', ''), '{', '')) > 500 "
                     "OR regexp_matches(text, '[0-9]{1000}')")
_COUNT_RE2 = (r"^([0-9]{1,15}(?:\.[0-9]{1,6})?)[ \t]*([wW万亿kK千]?)[ \t]*"
              r"(?:赞|[Ll][Ii][Kk][Ee][Ss]?|次|个)?$")
_UNIT_SQL = "CASE {u} WHEN '' THEN 1 WHEN 'k' THEN 1000 WHEN 'K' THEN 1000 WHEN '千' THEN 1000 " \
            "WHEN '亿' THEN 100000000 ELSE 10000 END"
_ISO_RE2 = (r"^[12][0-9]{3}-[0-9]{2}-[0-9]{2}"
            r"([ T]([01][0-9]|2[0-3]):[0-5][0-9](:[0-5][0-9](\.[0-9]{6})?)?)?$")
_MAX_INT = 9_000_000_000_000_000_000
_SQL_TYPES = {**dict.fromkeys(LIST_FIELDS, "VARCHAR[]"), **dict.fromkeys(COUNT_FIELDS, "BIGINT"),
              "author_verified": "BOOLEAN", "synthetic": "BOOLEAN", "duration_s": "DOUBLE",
              "published_at": "TIMESTAMP"}


def json_path(path: str) -> str | None:
    """The DuckDB JSON path of a dotted mapping path, or None if a part cannot be quoted."""
    parts = path.split(".")
    if any(not p or '"' in p or "\\" in p or not p.isprintable() for p in parts):
        return None
    return "$." + ".".join(f'"{p}"' for p in parts)


class _Rule:
    """The SQL of one mapped field, in layers (each names columns the next one uses, so
    no expression is computed twice): its catalog value and whether it is certain."""

    def __init__(self, target: str, rule: FieldRule, k: int, at: int, mapping: Mapping) -> None:
        self.target, self.rule, self.path = target, rule, json_path(rule.path) or ""
        # the layers of the source field (`at`, its place in the path list) are shared by
        # every rule that reads it; those of the rule's own value are numbered by the rule
        t, s, p = f"t{at}", f"s{at}", f"p{at}"
        self.t, self.s, self.p, self.absent = t, s, p, f"a{at}"
        self.list, self.array = f"l{k}", f"r{k}"  # a string made a list by `extract`; a JSON array
        sentinels = ", ".join(sql_literal(m) for m in mapping.missing) or "NULL"
        self.layers: list[list[str]] = [
            [f"jt[{at}] AS {t}", f"js[{at}] AS {s}"],
            [f"{pystrip(s)} AS {p}"],
            # missing_to_none: sentinel strings (after strip) and integers that print as one
            [f"({t} IS NULL OR {t} = 'NULL' OR ({t} = 'VARCHAR' AND {p} IN ({sentinels})) OR "
             f"({t} IN ('BIGINT', 'UBIGINT') AND {s} IN ({sentinels}))) AS {self.absent}"],
            [], [],
        ]  # layer 0 reads the line's lists jt (JSON types) and js (strings unescaped, else JSON text)
        extract = rule.extract
        if extract == "hashtags":  # a hashtag holds no white space at all (HASHTAG_RE2 excludes it)
            tags = f"regexp_extract_all({s}, {sql_literal(HASHTAG_RE2)}, 1)"
            cleaned = cleaned_list(f"CASE WHEN contains({s}, '#') THEN {tags} ELSE []::VARCHAR[] END", stripped=True)
        elif extract in ("list", "split"):
            if extract == "list":
                inner = f"CASE WHEN starts_with({p}, '[') AND ends_with({p}, ']') THEN {p}[2:-2] ELSE {p} END"
                items, edges = f"string_split({inner}, ',')", LIST_EDGES
                unquoted = f"list_transform({items}, lambda x: trim({pystrip('x')}, {QUOTES}))"
                quoted = f"list_filter({unquoted}, lambda x: x <> '')"
            else:
                items, edges = f"string_split({s}, {sql_literal(rule.sep)})", WS_CLASS
                quoted = items
            # items strip only where the text has white space (or a quote) at all
            cleaned = (f"CASE WHEN regexp_matches({s}, {edges}) THEN {cleaned_list(quoted)} "
                       f"ELSE {cleaned_list(items, stripped=True)} END")
        if extract is not None:
            self.layers[3].append(f"CASE WHEN {t} = 'VARCHAR' THEN {cleaned} END AS c{k}")
            self.layers[4].append(f"{deduped_list(f'c{k}')} AS {self.list}")
        if target in LIST_FIELDS:
            strings = f"json_extract_string(text, {sql_literal(self.path + '[*]')})"
            self.layers[3].append(f"CASE WHEN {t} = 'ARRAY' THEN {cleaned_list(strings)} END AS e{k}")
            self.layers[4].append(f"{deduped_list(f'e{k}')} AS {self.array}")
        bool_sentinel = any(m in ("True", "False") for m in mapping.missing)
        self.guard = f"NOT ({t} = 'BOOLEAN')" if bool_sentinel else "true"
        if target in mapping.strip_html:  # html.unescape is left to Python
            self.guard += f" AND NOT ({t} = 'VARCHAR' AND regexp_matches({s}, '[<&]'))"

    def _case(self, branches: list[tuple[str, str]]) -> str:
        body = " ".join(f"WHEN {cond} THEN {value}" for cond, value in branches)
        return f"CASE WHEN {self.absent} THEN NULL {body} ELSE NULL END"

    def value_and_ok(self) -> tuple[str, str]:
        """SQL for the field's catalog value, and for `the per-record rules agree`.

        Values are computed for every line, certain or not, so every cast is a TRY_CAST."""
        target, t, s, p, extract = self.target, self.t, self.s, self.p, self.rule.extract
        string, is_int = f"{t} = 'VARCHAR'", f"{t} IN ('BIGINT', 'UBIGINT')"
        # `s` is the JSON text of a number or boolean, so casting it reads the value
        as_int, as_double = f"TRY_CAST({s} AS BIGINT)", f"TRY_CAST({s} AS DOUBLE)"
        array_length = f"CASE WHEN readable THEN json_array_length(text, {sql_literal(self.path)}) END"
        # `extract` turns a string into a list; hashtags turn anything else into nothing
        listed = string if extract in ("list", "split") else "false"
        nothing = "false"
        if extract == "hashtags":
            listed = f"({string} AND {self.list} IS NOT NULL)"
            # a value that is not a string gives no hashtags; only scalars that cannot be a
            # NaN or Infinity are certain (a container or a double may hold a spelling that only
            # DuckDB reads, and Python refuses the line)
            nothing = f"(({string} AND {self.list} IS NULL) OR {t} IN ('BIGINT', 'UBIGINT', 'BOOLEAN'))"
            if target not in LIST_FIELDS and target != "comments":
                if target == "native_id":
                    return "NULL", "false"
                value = "false" if target == "synthetic" else "NULL"
                return value, self._certain(nothing)
        scalar = f"NOT {listed}"
        if target in ("native_id", *STRING_FIELDS):
            value = self._case([(f"{scalar} AND {string}", f"nullif({p}, '')"),
                                (f"{scalar} AND {is_int}", s)])
            ok = f"({nothing} OR ({scalar} AND ({string} OR {is_int})))"
            if target == "native_id":  # an id with a control character is rejected per record
                return value, (f"CASE WHEN {self.absent} OR NOT coalesce({ok}, false) THEN false "
                               f"ELSE coalesce({value} IS NOT NULL AND {self.guard} "
                               f"AND NOT regexp_matches({value}, '\\p{{Cc}}'), false) END")
        elif target in LIST_FIELDS:
            all_strings = (f"CASE WHEN readable THEN list_bool_and(list_transform("
                           f"json_type(text, {sql_literal(self.path + '[*]')}), lambda x: x = 'VARCHAR')) END")
            branches = [] if extract == "hashtags" else [(f"{t} = 'ARRAY'", self.array)]
            if extract is not None:
                branches.insert(0, (string, self.list))
            value = self._case(branches)
            array = "false" if extract == "hashtags" else _first(
                (f"{t} = 'ARRAY'", f"coalesce(CASE WHEN {array_length} = 0 THEN true ELSE {all_strings} END, false)"))
            ok = f"({nothing} OR {listed} OR {array})"
        elif target in COUNT_FIELDS:
            text = f"replace(replace({p}, ',', ''), '，', '')"
            number = f"TRY_CAST(regexp_extract({text}, {sql_literal(_COUNT_RE2)}, 1) AS DOUBLE)"
            unit = _UNIT_SQL.format(u=f"regexp_extract({text}, {sql_literal(_COUNT_RE2)}, 2)")
            from_text = f"round_even({number} * {unit}, 0)"
            value = self._case([(is_int, as_int),
                                (f"{t} = 'DOUBLE'", f"TRY_CAST(round_even({as_double}, 0) AS BIGINT)"),
                                (string, f"TRY_CAST({from_text} AS BIGINT)")])
            # a count that is not whole is rejected per record (never rounded); a product a double cannot hold
            # exactly ("1.1w") is decided there too
            ok = f"({nothing} OR ({scalar} AND " + _first(
                (is_int, f"{as_int} >= 0"),
                (f"{t} = 'DOUBLE'", f"{as_double} BETWEEN 0 AND 1e15 AND {as_double} = floor({as_double})"),
                (string, f"regexp_full_match({text}, {sql_literal(_COUNT_RE2)}) AND {from_text} < {_MAX_INT} "
                         f"AND {number} * {unit} = {from_text}")) + "))"
        elif target in ("author_verified", "synthetic"):
            value = self._case([(f"{t} = 'BOOLEAN'", f"TRY_CAST({s} AS BOOLEAN)"), (is_int, f"{as_int} > 0"),
                                (f"{string} AND {s} = ''", "NULL"),
                                (string, f"lower({p}) IN ('true', '1', '2')")])
            words = "'[Tt][Rr][Uu][Ee]|[Ff][Aa][Ll][Ss][Ee]|[012]'"
            ok = f"({nothing} OR ({scalar} AND " + _first(
                (f"{t} = 'BOOLEAN'", "true"), (is_int, f"{as_int} >= 0"),
                (string, f"{s} = '' OR regexp_full_match({p}, {words})")) + "))"
            if target == "synthetic":
                value = f"coalesce({value}, false)"
        elif target == "duration_s":
            value = self._case([(f"{string} AND {s} = ''", "NULL"), (string, f"TRY_CAST({s} AS DOUBLE)"),
                                (f"{t} IN ('BIGINT', 'UBIGINT', 'DOUBLE')", as_double)])
            ok = f"({nothing} OR ({scalar} AND " + _first(
                (string, f"{s} = '' OR regexp_full_match({s}, '[0-9]{{1,15}}(\\.[0-9]{{1,15}})?')"),
                (f"{t} IN ('BIGINT', 'UBIGINT', 'DOUBLE')", f"isfinite({as_double}) AND {as_double} >= 0")) + "))"
        elif target == "published_at":
            digits = f"(CASE WHEN {is_int} THEN {as_int} ELSE TRY_CAST({p} AS BIGINT) END)"
            epoch_ok = f"coalesce({digits} BETWEEN 0 AND 4000000000000, false)"
            epoch = (f"CASE WHEN NOT {epoch_ok} THEN NULL WHEN {digits} > 100000000000 "
                     f"THEN make_timestamp({digits} * 1000) ELSE make_timestamp({digits} * 1000000) END")
            digits_only = f"regexp_full_match({p}, '[0-9]{{1,13}}')"
            number_text = f"{string} AND {digits_only}"
            iso = f"TRY_CAST({p} AS TIMESTAMP)"
            value = self._case([(f"{string} AND {s} = ''", "NULL"), (number_text, epoch),
                                (string, iso), (is_int, epoch)])
            # a string of digits alone never matches _ISO_RE2, which needs a '-'
            from_string = _first((f"{s} = ''", "true"), (digits_only, epoch_ok),
                                 ("true", f"regexp_matches({p}, {sql_literal(_ISO_RE2)}) AND {iso} IS NOT NULL"))
            ok = f"({nothing} OR ({scalar} AND " + _first((string, from_string), (is_int, epoch_ok)) + "))"
        elif target == "comments":  # only records without comments are vectorised
            value = "NULL"
            ok = _first((f"{extract is None} AND {t} = 'ARRAY'", f"{array_length} = 0"))
        else:
            raise ValueError(f"no columnar rule for {target}")
        return value, self._certain(ok)

    def _certain(self, ok: str) -> str:
        """The field is absent, or `ok` and the guard hold (never null)."""
        return (f"CASE WHEN {self.absent} THEN true WHEN NOT coalesce({ok}, false) THEN false "
                f"ELSE coalesce({self.guard}, false) END")


def _first(*branches: tuple[str, str]) -> str:
    """The check of the first branch whose condition holds, else false. A CASE, because DuckDB
    evaluates both sides of AND and OR for every row, but a THEN only for the rows it gets:
    `t = 'ARRAY' AND json_array_length(...)` parsed every line again."""
    return "CASE " + " ".join(f"WHEN {cond} THEN {check}" for cond, check in branches) + " ELSE false END"


def _unique_keys(path: str) -> str:
    keys = f"json_keys(text, {sql_literal(path)})"
    # no object at the path: nothing there can repeat (the fields under it are absent)
    return f"coalesce(list_unique({keys}) = len({keys}), true)"


def used_keys(mapping: Mapping) -> str:
    """The top-level keys a line may have without Python reading it for `extra`. `$key` (an
    object file's record key) is not one of them: no rule reads a JSON Lines field of that
    name, so Python must see it, if only to refuse a NaN spelled as only DuckDB reads it."""
    return "[" + ", ".join(sql_literal(k) for k in sorted(mapping.used_fields - {"$key"})) + "]"


def fast_rows_sql(mapping: Mapping, source: str, lines: str, max_field_bytes: int) -> str | None:
    """One row per line of the relation `lines(ord, raw_ref, text)`: `ok`, the catalog
    columns, `record_native` (the id as mapped, for a duplicate's reject), `has_extra`
    (the line has unmapped fields, which Python writes as `extra`, as the per-record path does)
    and `record_hash`, the fingerprint of a certain line without unmapped fields.
    None when the mapping itself is beyond the columnar rules."""
    rules = mapping.fields
    paths = [json_path(rule.path) for rule in rules.values()]
    if None in paths or any(r.extract == "split" and not r.sep for r in rules.values()):
        return None
    # objects a path goes through must not repeat a key: Python keeps the last, DuckDB the first
    prefixes = sorted({".".join(r.path.split(".")[:n]) for r in rules.values()
                       for n in range(1, len(r.path.split(".")))})
    nested_unique = " AND ".join(_unique_keys(json_path(p) or "") for p in prefixes) or "true"
    unique_paths = list(dict.fromkeys(paths))
    dotted = any("." in rule.path for rule in rules.values())
    nan_test = f"WHEN regexp_matches(text, {sql_literal(_NAN_RE2)}) THEN NULL" if dotted else ""
    built = [_Rule(target, rule, k, unique_paths.index(path) + 1, mapping)
             for k, ((target, rule), path) in enumerate(zip(rules.items(), paths, strict=True), start=1)]
    values, oks = {}, []
    for rule in built:
        values[rule.target], ok = rule.value_and_ok()
        oks.append(ok)
    columns = [f"{sql_literal(source + '/')} || ({values['native_id']}) AS video_id",
               f"{sql_literal(source)} AS source"]
    for name in VIDEO_FIELDS:
        default = "false" if name == "synthetic" else "NULL"
        columns.append(f"CAST({values.get(name, default)} AS {_SQL_TYPES.get(name, 'VARCHAR')}) AS {name}")
    native = built[list(rules).index("native_id")]
    path_list = "[" + ", ".join(sql_literal(p or "") for p in unique_paths) + "]"
    layers, previous = "", "checked"
    for depth in range(len(built[0].layers)):
        names = list(dict.fromkeys(c for rule in built for c in rule.layers[depth]))
        if names:
            layers += f",\n        layer{depth} AS (SELECT *, {', '.join(names)} FROM {previous})"
            previous = f"layer{depth}"
    return f"""
        WITH parsed AS (
            SELECT ord, raw_ref, text,
                   CASE WHEN strlen(text) > {max_field_bytes} THEN NULL
                        WHEN strlen(text) > 1000 AND ({_TOO_DEEP_OR_LONG}) THEN NULL
                        WHEN regexp_matches(text, {sql_literal(_TRAILING_COMMA_RE2)}) THEN NULL
                        WHEN contains(text, '\\u') AND regexp_matches(text, {sql_literal(_ODD_ESCAPE_RE2)}) THEN NULL
                        {nan_test}
                        ELSE try(json_keys(text)) END AS keys
            FROM {lines}),
        -- the keys most lines have, in their order: a line with exactly these needs no test
        -- of its own for repeated or unmapped keys (which lines are looked at changes only speed)
        usual AS (
            SELECT usual_keys, NOT list_has_all({used_keys(mapping)}, usual_keys) AS usual_extra FROM (
                SELECT coalesce(mode(k), []) AS usual_keys FROM (SELECT try(json_keys(text)) AS k FROM {lines} LIMIT 64)
                WHERE len(k) > 0 AND list_unique(k) = len(k))),
        extracted AS (
            -- only an object has keys (one without any is left to the per-record rules)
            SELECT ord, raw_ref, text, keys, usual_keys, usual_extra, coalesce(len(keys) > 0, false) AS readable,
                   CASE WHEN len(keys) > 0 THEN json_type(text, {path_list}) END AS jt,
                   CASE WHEN len(keys) > 0 THEN json_extract_string(text, {path_list}) END AS js
            FROM parsed, usual),
        checked AS (
            SELECT * REPLACE (CASE WHEN NOT readable THEN false WHEN keys = usual_keys THEN {nested_unique}
                                   ELSE list_unique(keys) = len(keys) AND {nested_unique} END AS readable)
            FROM extracted){layers},
        certain AS (
        SELECT ord, raw_ref, {_first(*((f"NOT {c}", "false") for c in ["readable", *oks]), ("true", "true"))} AS ok,
               {sql_literal(source + "/")} || {native.s} AS record_native,
               {', '.join(columns)},
               CASE WHEN keys = usual_keys THEN usual_extra
                    ELSE NOT coalesce(list_has_all({used_keys(mapping)}, keys), true) END AS has_extra
        FROM {previous})
        -- certain lines have no comments, and those without unmapped fields no `extra`
        SELECT *, CASE WHEN ok AND NOT has_extra THEN {record_hash_expr("c", extra="NULL")} END AS record_hash
        FROM certain c"""
