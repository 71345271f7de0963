"""Random promptfoo-style cases, compared between evalrun and promptfoo (see compare.py).

    python tests/compat/fuzz.py [--seed N] [--cases N] [--keep DIR]

Generates configs for the areas most likely to drift (similarity scores, markup/JSON/SQL detection, regex
semantics, weights/thresholds/assert-set scoring), runs compare.py on them and lists every pass/fail mismatch
and every score difference. Exit status as compare.py (77: promptfoo unavailable). Known, accepted
differences (docs/assertions.md) are reported too: judge them by hand.
"""

from __future__ import annotations

import argparse
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from tests.compat.compare import SKIP, compare, promptfoo_bin  # noqa: E402

_TEXT = ("the cat sat on mat dog ran park I can't won't it's Hello, world! How are you? quick brown fox Mr. "
         "Smith's e.g. U.S. 3.5 $10 50% (note) [x] \"quoted\" don't cannot gonna well... end.")
WORDS = tuple(_TEXT.split(" "))
MARKUP = ["<p>", "</p>", "<div>", "</div>", "<b>bold</b>", "text", " ", "<br>", "<br/>", "&amp;", "<!-- c -->",
          '<a href="x">l</a>', "<html>", "</html>", "<body>", "</body>", "<foo>", "</foo>", "<my-el>", "</my-el>",
          '<?xml version="1.0"?>', "<root>", "</root>", "<item id='1'/>", '{"a": 1}', "{'b': 2}", "{x}", "}", "{",
          "[1,2]", "1 < 2", "\n", "SELECT a FROM t", "I'm sorry", "As an AI", "I cannot help", "Sure!",
          "<title>T</title>", "<head>", "</head>"]
SQL = ["SELECT a, b FROM t", "SELECT a b c FROM t", "INSERT INTO t VALUES (1, 'x')", "UPDATE t SET a = 1",
       "DELETE FROM t WHERE id = 3", "SELECT a FROM", "FROM t SELECT a", "CREATE TABLE x (a INT)",
       "SELECT a FROM t LEFT JOIN u ON t.id = u.id", "SELECT a, FROM t", "hello world", "SELECT a::int FROM t",
       "WITH x AS (SELECT 1) SELECT * FROM x", "SELECT `a` FROM `t`", "SELECT a FROM t GROUP BY a HAVING COUNT(*) > 1",
       "SELECT 'unterminated", "SELECT a FROM t WHERE (a = 1", "show tables", "SELECT a FROM t LIMIT 1, 2"]
REGEX = [r"^Paris$", r"\d+", r"^\w+$", r"\bcat\b", r"caf\w", r"[^]", r"a[\w-]+z", r"(?<y>\d{4})-\k<y>", r"\W",
         r"colou?r", r"\$\d+(\.\d\d)?", r"(?<!x)y", r"^$", r"a.c", r"[\d.]+", r"^(?:yes|no)$"]
REGEX_OUT = ["Paris", "café", "cat", "concat", "1234-1234", "١٢٣", "  ", "abc", "Hello.", "$12.50", "xy", "y",
             "a\nc", "3.14", "yes", "ünïcode word"]


def _sentence(r: random.Random) -> str:
    return " ".join(r.choice(WORDS) for _ in range(r.randint(1, 12)))


def generate(r: random.Random, n: int) -> list[dict[str, Any]]:
    """n cases per area, as promptfoo test entries over the echo provider."""
    tests: list[dict[str, Any]] = []
    for i in range(n):
        a, b = _sentence(r), _sentence(r)
        t = r.choice(["rouge-n", "bleu"])
        tests.append({"description": f"{t} {i}", "vars": {"out": a},
                      "assert": [{"type": t, "value": r.choice([a, b, a + " " + b]), "threshold": 0.0001}]})
        out = "".join(r.choice(MARKUP) for _ in range(r.randint(1, 5)))
        t = r.choice(["is-html", "contains-html", "is-xml", "contains-xml", "contains-json", "is-json", "is-refusal"])
        tests.append({"description": f"{t} {i}", "vars": {"out": out}, "assert": [{"type": t}]})
        tests.append({"description": f"sql {i}", "vars": {"out": r.choice(SQL)},
                      "assert": [{"type": r.choice(["is-sql", "contains-sql"])}]})
        tests.append({"description": f"regex {i}", "vars": {"out": r.choice(REGEX_OUT)},
                      "assert": [{"type": r.choice(["regex", "not-regex"]), "value": r.choice(REGEX)}]})
        tests.append(_scoring(r, i))
    return tests


def _assertion(r: random.Random) -> dict[str, Any]:
    d: dict[str, Any] = {"type": r.choice(["contains", "not-contains", "icontains", "levenshtein", "rouge-n"]),
                         "value": r.choice(["alpha", "beta", "gamma"])}
    if d["type"] in ("levenshtein", "rouge-n") and r.random() < 0.5:
        d["threshold"] = r.choice([0, 1, 3, 0.2, 0.5])
    if r.random() < 0.5:
        d["weight"] = r.choice([0, 0.5, 1, 2, 3])
    return d


def _scoring(r: random.Random, i: int) -> dict[str, Any]:
    asserts = [_assertion(r) for _ in range(r.randint(1, 4))]
    if r.random() < 0.4:
        s: dict[str, Any] = {"type": "assert-set", "assert": [_assertion(r) for _ in range(r.randint(1, 3))]}
        if r.random() < 0.6:
            s["threshold"] = r.choice([0, 0.3, 0.5, 0.8, 1])
        if r.random() < 0.5:
            s["weight"] = r.choice([1, 2])      # weight 0 on a set is a known difference
        asserts.append(s)
    t: dict[str, Any] = {"description": f"scoring {i}", "assert": asserts,
                         "vars": {"out": " ".join(r.sample(["alpha", "beta", "gamma"], r.randint(1, 3)))}}
    if r.random() < 0.4:
        t["threshold"] = r.choice([0, 0.25, 0.5, 0.75, 1])
    return t


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cases", type=int, default=60, help="cases per area (5 areas)")
    ap.add_argument("--keep", type=Path, default=None, help="write the generated config here")
    args = ap.parse_args(argv)
    binary = promptfoo_bin()
    if binary is None:
        print("skipped: node or promptfoo not available", file=sys.stderr)
        return SKIP
    tests = generate(random.Random(args.seed), args.cases)
    with tempfile.TemporaryDirectory(prefix="evalrun-fuzz-") as tmp:
        cfg = (args.keep or Path(tmp)) / "fuzz.yaml"
        cfg.parent.mkdir(parents=True, exist_ok=True)
        cfg.write_text(yaml.safe_dump({"prompts": ["{{out}}"], "providers": ["echo"], "tests": tests},
                                      sort_keys=False, allow_unicode=True))
        rows, mismatches = compare([cfg], binary)
    by_desc = {t["description"]: t for t in tests}
    for row in rows:
        if not row["match"] or row["score_differs"]:
            case = by_desc.get(row["description"], {})
            print(f"{'DIFF ' if not row['match'] else 'score'} {row['description']}: evalrun={row['evalrun']} "
                  f"({row['evalrun_score']}) promptfoo={row['promptfoo']} ({row['promptfoo_score']}) "
                  f"out={case.get('vars', {}).get('out')!r} assert={case.get('assert')}")
    print(f"{len(rows)} cases, {mismatches} pass/fail mismatches")
    return 1 if mismatches else 0


if __name__ == "__main__":
    raise SystemExit(main())
