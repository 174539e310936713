"""A seeded corpus of awkward JSON Lines: every field in the types and spellings real
crawls produce, and broken lines of every kind, for comparing the ingest paths."""

from __future__ import annotations

import json
import random
from pathlib import Path

WS = ["", " ", "\u3000", "\t", "\xa0", "\u2009", "\n"]
TEXTS = ["猫咪 #萌宠", "#下雪#第一次", "hello #x #x #y.", "<em class=\"k\">猫</em>", "Tom &amp; Jerry", "",
         "   ", "-124", "NA", "#" + "长" * 70, "#a，#b。#c！#d?#e\u3000#f", "plain text", "x\u200by", "é\u0301",
         "#tag1#tag2 #tag1", "emoji 😀 #😀", "note: information", "infinite NaN"]
COUNTS = [0, 5, 1_200, -5, 2.5, 3.5, 1e20, "1.2w", "3.5万", "1,234", "12 赞", "1.2w 赞", "7 LIKES", "8likes",
          "2亿", "-5", "many", "１２", "1e3", " 42 ", "1.15w", "", "-124", True, None, [1], "4k", "4 K 次",
          "9" * 20, "0.5"]
BOOLS = [True, False, 0, 1, 2, -1, "true", "TRUE", " false ", "2", "yes", "", None, 1.0, "ｔrue"]
DURATIONS = [12, 12.5, "1.5", " 2", "inf", -1, "", "abc", 0, "1_0", "3.25", None, True, 1e400]
TIMES = [1700000000, 1700000000123, "1700000000", " 1700000000123 ", "2024-02-30", "2024-01-02T03:04:05",
         "2024-01-02 03:04", "2024-01-02T03:04:05Z", "2024-01-02T03:04:05.123456", "2024-01-02", "", "yesterday",
         -5, 99999999999999, 1.5e9, "0000-01-01", "2024-01-02T24:00:00", None]
LISTS = ["[a, 'b',  c ,a]", "[]", "[ ]", "萌宠,日常", "['x']", ["p", " q ", "p", ""], ["p", 3], [], "", "a|b| |c",
         None, 5, {"k": 1}, "[\u3000z\u3000]"]
IDS = ["1", "2", " 3 ", 4, "", None, "-124", "a/b", "7", "7", "x" * 5, 5.5, True, "\u3000", "NA"]


def _value(rng: random.Random, pool: list, usual: object = None) -> object:
    value = rng.choice(pool) if usual is None or rng.random() < 0.15 else usual
    if isinstance(value, str) and rng.random() < 0.3:
        value = rng.choice(WS) + value + rng.choice(WS)
    return value


def _record(rng: random.Random, n: int) -> dict:
    record: dict = {"id": _value(rng, IDS) if rng.random() < 0.1 else f"v{n}"}
    usual = {"caption": f"视频 {n} #话题{n % 7}", "desc": f"第{n}条", "likes": n * 3, "shares": n % 11,
             "cmts": str(n % 5), "stars": f"{n % 9}.{n % 10}w", "verified": n % 2 == 0, "fake": 0,
             "dur": n % 60 + 0.5, "time": 1_600_000_000 + n, "tags": f"[a{n % 4}, b{n % 3}]", "label": "真"}
    for key, pool in (("caption", TEXTS), ("desc", TEXTS), ("likes", COUNTS), ("shares", COUNTS),
                      ("cmts", COUNTS), ("stars", COUNTS), ("verified", BOOLS), ("fake", BOOLS),
                      ("dur", DURATIONS), ("time", TIMES), ("tags", LISTS), ("label", TEXTS)):
        if rng.random() < 0.9:
            record[key] = _value(rng, pool, usual[key])
    if rng.random() < 0.7:
        record["author"] = {"name": _value(rng, TEXTS, f"作者{n % 13}"), "bio": _value(rng, TEXTS, "简介")}
    elif rng.random() < 0.3:
        record["author"] = _value(rng, TEXTS)
    if rng.random() < 0.1:
        record["comments"] = rng.choice([[], ["nice"], [{"text": "好", "like_count": "1.2w"}],
                                         [{"text": "a", "comment_id": "c"}, {"text": "b", "comment_id": "c"}],
                                         [{"txt": "typo"}], "not a list", [{"text": "t", "created_at": 1700000000}]])
    if rng.random() < 0.3:
        record["views"] = rng.choice([1, 1.0, 1e5, "x", None, {"nested": {"a": [1, 2]}}, [1, "2"], 10**25])
    return record


def build_fuzzed_corpus(path: Path, n: int = 3000, seed: int = 11) -> None:
    rng = random.Random(seed)
    lines: list[bytes] = []
    for i in range(n):
        roll = rng.random()
        if roll < 0.02:
            lines.append(rng.choice([b'{"id": "bad\xff"}', b'{"id": "cut', b'{"id": "t", "likes": 1,}',
                                     b'{"id": "nan%d", "likes": NaN}' % i, b'[1, 2]', b'42', b'',
                                     b'{"id": "s%d", "caption": "\\ud800"}' % i, b'   ',
                                     b'{"id": "d%d", "id": "e%d"}' % (i, i), b'{"id": "inf%d", "views": Infinity}' % i,
                                     b'{"id": "z%d", "caption": "a\\u0000b"}' % i, b'{"id": "r%d"}\r' % i,
                                     # NaN as Python spells it and as only DuckDB reads it, unmapped
                                     # and inside an object a dotted path reads
                                     b'{"id": "m%d", "views": -Infinity}' % i, b'{"id": "l%d", "views": nan}' % i,
                                     b'{"id": "o%d", "author": {"name": "x", "age": inf}}' % i,
                                     b'{"id": "p%d", "author": {"name": "x", "tags": [1 ,\n]}}' % i,
                                     # ... and where a rule takes any value that is not a string
                                     b'{"id": "q%d", "caption": nan}' % i, b'{"id": "w%d", "caption": [inf]}' % i,
                                     b'{"id": "j%d", "desc": {"x": -nan}}' % i, b'{"id": "k%d", "$key": nan}' % i,
                                     b'{"id": "h%d", "$key": 1, "caption": 7}' % i]))
            continue
        text = json.dumps(_record(rng, i), ensure_ascii=rng.random() < 0.2)
        if roll < 0.03:
            text = text.replace('"caption": "', '"caption": "' + "长" * 400, 1)  # over a small field limit
        lines.append(text.encode())
    path.write_bytes(b"\n".join(lines) + b"\n")


MAPPINGS = {
    "flat": """source = "Fuzz"
format = "jsonl"
[fields]
native_id = "id"
title = { from = "desc", extract = "hashtags" }
hashtags = { from = "caption", extract = "hashtags" }
keywords = { from = "tags", extract = "list" }
like_count = "likes"
duration_s = "dur"
published_at = "time"
synthetic = "fake"
comments = "comments"
""",
    "list": """source = "Fuzz"
format = "jsonl"
[fields]
native_id = "id"
title = "caption"
description = "desc"
hashtags = { from = "caption", extract = "hashtags" }
keywords = { from = "tags", extract = "list" }
author_name = "author.name"
author_bio = "author.bio"
author_verified = "verified"
like_count = "likes"
comment_count = "cmts"
collect_count = "stars"
share_count = "shares"
duration_s = "dur"
published_at = "time"
label = "label"
synthetic = "fake"
comments = "comments"
[clean]
strip_html = ["title"]
""",
    "split": """source = "Fuzz"
format = "jsonl"
[fields]
native_id = "id"
title = { from = "desc", extract = "hashtags" }
hashtags = { from = "caption", extract = "hashtags" }
keywords = { from = "tags", extract = "split", sep = "|" }
category = "label"
author_bio = "author.bio"
like_count = "likes"
published_at = "time"
[clean]
missing = ["", "-124", "NA", "True"]
""",
}
