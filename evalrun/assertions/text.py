"""String assertions (equals, contains and its variants, starts-with, regex, word-count, is-refusal), reading their
values with JavaScript's semantics as promptfoo does (docs/design-notes.md)."""

from __future__ import annotations

import functools
import json
import math
import re
from importlib import resources
from typing import Any, ClassVar

from evalrun.assertions.base import Score, TextAssertion, binary
from evalrun.assertions.registry import register


def js_str(value: Any) -> str:
    """`String(value)` as JavaScript prints it: true/false, null, 5 (not 5.0), 1.5."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        if value.is_integer() and abs(value) < 1e21:
            return str(int(value))
        return repr(value)
    return str(value)


def parse_csv_values(value: str) -> list[str]:
    """promptfoo's parseCommaSeparatedValues for a contains-any/all string: fields split on commas (runs of commas
    and blanks between fields skipped), double-quoted fields keep commas and spaces (`\\"` and `""` escape a
    quote). The csv module differs on `\\"`, empty quoted fields and text after a closing quote."""
    out: list[str] = []
    i = 0
    while True:
        m = _FIELD.match(value, i)
        if m is None:
            raise ValueError(f"unterminated quoted field in {value!r}")
        quoted, plain = m.groups()
        i = m.end()
        if quoted is not None:
            out.append(_ESCAPE.sub(lambda e: e.group(0)[1], quoted))
            if i < len(value) and value[i] != ",":
                raise ValueError(f"expected a comma after a quoted field in {value!r}")
        elif plain:
            out.append(plain.strip())
        else:
            return out


#: A field after the commas and blanks before it: a quoted one (`\\"`, `\\\\` and `""` inside are escapes, as in
#: promptfoo's parseQuotedField) and the blanks after it, or an unquoted one up to the next comma. Possessive
#: quantifiers: an escape is never split, and a quote that does not close matches nothing.
_FIELD = re.compile(r'[\s,]*+(?:"((?:\\["\\]|""|[^"])*+)"\s*|((?!")[^,]*))')
_ESCAPE = re.compile(r'\\["\\]|""')


def strict_equal(a: Any, b: Any) -> bool:
    """Deep equality where booleans never equal numbers (like node's isDeepStrictEqual on JSON data)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(strict_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(strict_equal(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


_W = "A-Za-z0-9_"
_OUTSIDE = {
    "d": "[0-9]", "D": "[^0-9]", "w": f"[{_W}]", "W": f"[^{_W}]",
    "b": f"(?:(?<=[{_W}])(?![{_W}])|(?<![{_W}])(?=[{_W}]))",
    "B": f"(?:(?<=[{_W}])(?=[{_W}])|(?<![{_W}])(?![{_W}]))",
}
_INSIDE = {"d": "0-9", "w": _W}


#: The tokens of a JavaScript pattern outside a character class (`\\k<name>`, an escape, `[^]`, `[]`, a class
#: opening, `$`, a named group's opening, any other character) and inside one (an escape, any character).
_TOKEN_OUTSIDE = re.compile(r"\\k<([^>]*)>|\\[\s\S]|\[\^\]|\[\]|\[\^?|\$|\(\?<(?![=!])|[\s\S]")
_TOKEN_INSIDE = re.compile(r"\\[\s\S]|[\s\S]")
_SPECIAL = {"[^]": r"[\s\S]", "[]": "(?!)", "$": r"\Z", "(?<": "(?P<"}


def translate(pattern: str) -> str:
    """The Python `re` pattern equivalent to a JavaScript pattern."""
    out: list[str] = []
    i, in_class = 0, False
    while i < len(pattern):
        m = (_TOKEN_INSIDE if in_class else _TOKEN_OUTSIDE).match(pattern, i)
        assert m is not None  # the last alternative matches any character
        token, i = m.group(0), m.end()
        if not in_class and m.group(1) is not None:
            out.append(f"(?P={m.group(1)})")
        elif len(token) == 2 and token[0] == "\\":
            out.append((_INSIDE if in_class else _OUTSIDE).get(token[1], token))
        elif in_class:
            in_class = token != "]"
            out.append("\\[" if token == "[" else token)
        else:
            in_class = token in ("[", "[^")
            out.append(_SPECIAL.get(token, token))
    return "".join(out)


@functools.lru_cache(maxsize=1024)
def compile_js_regex(pattern: str) -> re.Pattern[str]:
    """Compile a JavaScript regex (no flags) with Python's `re`; memoised (a regex assertion runs on every case)."""
    return re.compile(translate(pattern))


def _quote(s: str, limit: int = 80) -> str:
    """The string in double quotes for a reason, shortened to `limit` characters."""
    return '"' + (s if len(s) <= limit else s[: limit - 3] + "...") + '"'


@register("equals")
class Equals(TextAssertion):
    """Output equals `value` exactly.

    YAML keys: `value` (required): a string (compared verbatim, no trimming) or a number/boolean (compared as
    text), or an object/list (the output is parsed as JSON and compared structurally).
    """

    requires_value = True

    def judge_text(self, output: str, value: Any) -> Score:
        if isinstance(value, (dict, list)):
            try:
                passed = strict_equal(value, json.loads(output))
            except ValueError:
                passed = False
            expected = json.dumps(value, separators=(",", ":"), ensure_ascii=False)
        else:
            expected = js_str(value)
            passed = output == expected
        verb = "equals" if passed else "does not equal"
        return binary(passed, f"Output {_quote(output)} {verb} {_quote(expected)}")


@register("contains")
class Contains(TextAssertion):
    """Output contains `value` as a substring (case-sensitive).

    YAML keys: `value` (required): a non-empty string or a number.
    """

    requires_value = True
    ignore_case = False
    value_hint = "give a non-empty string or a number"

    def parse(self, value: Any) -> str:
        if isinstance(value, bool) or not isinstance(value, (str, int, float)) or value == "":
            raise ValueError(f"{self.spec.type} needs a non-empty string or number value, got {value!r}")
        return js_str(value)

    def judge_text(self, output: str, value: Any) -> Score:
        needle = self.parsed(value)
        passed = needle.lower() in output.lower() if self.ignore_case else needle in output
        return binary(passed, f"Output {'contains' if passed else 'does not contain'} {_quote(needle)}"
                      + (" (ignoring case)" if self.ignore_case else ""))


@register("contains-any")
class ContainsAny(TextAssertion):
    """Output contains at least one of the values (case-sensitive).

    YAML keys: `value` (required): a list of strings/numbers, or one comma-separated string.
    """

    requires_value = True
    ignore_case = False
    every: ClassVar[bool] = False  # contains-all (else contains-any)
    value_hint = "give a list (`[a, b]`) or a comma-separated string (`a, b`)"

    def parse(self, value: Any) -> list[str]:
        if isinstance(value, str):
            items = parse_csv_values(value)
        elif isinstance(value, list):
            items = [js_str(v) for v in value]
        else:
            raise ValueError(f"{self.spec.type} needs a list or a comma-separated string, got {value!r}")
        if not items:
            raise ValueError(f"{self.spec.type} needs at least one item")
        return items

    def judge_text(self, output: str, value: Any) -> Score:
        items = self.parsed(value)
        hay = output.lower() if self.ignore_case else output
        present = [v for v in items if (v.lower() if self.ignore_case else v) in hay]
        listed = json.dumps(items, ensure_ascii=False)
        if not self.every:
            if present:
                return binary(True, f"Output contains {_quote(present[0])}", found=present)
            return binary(False, f"Output contains none of {listed}", found=[])
        missing = [v for v in items if v not in present]
        if not missing:
            return binary(True, f"Output contains all of {listed}")
        return binary(False, f"Output is missing {json.dumps(missing, ensure_ascii=False)}", missing=missing)


@register("contains-all")
class ContainsAll(ContainsAny):
    """Output contains every one of the values (case-sensitive).

    YAML keys: `value` (required): a list of strings/numbers, or one comma-separated string.
    """

    every = True


for _cls in (Contains, ContainsAny, ContainsAll):  # icontains, icontains-any, icontains-all: the same, ignoring case
    _doc = (_cls.__doc__ or "").replace(" (case-sensitive).", ", ignoring case.", 1)
    register("i" + _cls.name)(type(f"I{_cls.__name__}", (_cls,), {"__doc__": _doc, "ignore_case": True,
                                                                  "__module__": __name__}))


@register("starts-with")
class StartsWith(TextAssertion):
    """Output starts with `value` (case-sensitive, no trimming).

    YAML keys: `value` (required): a non-empty string.
    """

    requires_value = True

    def parse(self, value: Any) -> str:
        if not isinstance(value, str) or not value:
            raise ValueError(f"starts-with needs a non-empty string value, got {value!r}")
        return value

    def judge_text(self, output: str, value: Any) -> Score:
        prefix = self.parsed(value)
        passed = output.startswith(prefix)
        return binary(passed, f"Output {'starts' if passed else 'does not start'} with {_quote(prefix)}")


#: Longest `regex` value accepted (a config error beyond it, before anything is compiled).
MAX_REGEX_CHARS = 10_000


@register("regex")
class Regex(TextAssertion):
    """Output matches the regular expression `value` anywhere (search, not full match; no flags).

    YAML keys: `value` (required): a regex in JavaScript syntax, meaning what it means in JavaScript (`$` is the
    end of the output, `\\d \\w \\b` are ASCII); Python's `(?i)` also works. An invalid regex, or one longer than
    MAX_REGEX_CHARS (10,000 characters), is a config error.
    """

    requires_value = True

    def parse(self, value: Any) -> re.Pattern[str]:
        if not isinstance(value, str) or not value:
            raise ValueError(f"regex needs a non-empty string value, got {value!r}")
        if len(value) > MAX_REGEX_CHARS:  # compiling megabytes of pattern costs seconds and hundreds of MB
            raise ValueError(f"the regular expression is {len(value):,} characters long; the limit is "
                             f"{MAX_REGEX_CHARS:,} (match a shorter pattern, or use contains / a python assertion)")
        try:
            return compile_js_regex(value)
        except re.error as e:
            raise ValueError(f"invalid regular expression {value!r}: {e}") from None

    def judge_text(self, output: str, value: Any) -> Score:
        m = self.parsed(value).search(output)
        if m:
            return binary(True, f"Output matches /{value}/ at {_quote(m.group(0))}")
        return binary(False, f"Output does not match /{value}/")


@register("word-count")
class WordCount(TextAssertion):
    """Output has exactly N words, or between `min` and `max` words (inclusive).

    YAML keys: `value` (required): a number, or a mapping with `min` and/or `max`. Words are
    whitespace-separated runs of characters.
    """

    requires_value = True
    value_hint = "write `value: 50` or `value: {min: 10, max: 100}`"

    def parse(self, value: Any) -> tuple[float | None, float | None]:
        if isinstance(value, dict):
            unknown = set(value) - {"min", "max"}
            if unknown:
                raise ValueError(f"word-count takes only min and max, got {sorted(unknown)}")
            lo, hi = value.get("min"), value.get("max")
            if lo is None and hi is None:
                raise ValueError("word-count needs min and/or max")
            for v in (lo, hi):
                if v is not None and (isinstance(v, bool) or not isinstance(v, (int, float))):
                    raise ValueError(f"word-count min/max must be numbers, got {v!r}")
            if lo is not None and hi is not None and lo > hi:
                raise ValueError(f"word-count min ({lo}) must be <= max ({hi})")
            return lo, hi
        if isinstance(value, bool):
            raise ValueError(f"word-count needs a number, got {value!r}")
        try:
            n = float(value)
        except (TypeError, ValueError):
            raise ValueError(f"word-count needs a number or {{min, max}}, got {value!r}") from None
        return n, n

    def judge_text(self, output: str, value: Any) -> Score:
        lo, hi = self.parsed(value)
        n = len(output.split())  # promptfoo's words: whitespace-separated, non-empty
        passed = (lo is None or n >= lo) and (hi is None or n <= hi)
        if lo == hi:
            want = f"exactly {js_str(lo)}"
        elif lo is None:
            want = f"at most {js_str(hi)}"
        elif hi is None:
            want = f"at least {js_str(lo)}"
        else:
            want = f"between {js_str(lo)} and {js_str(hi)}"
        return binary(passed, f"Word count {n} {'is' if passed else 'is not'} {want}", words=n)


#: promptfoo's basic refusal detector: its phrase lists (promptfoo 0.121, src/redteam/util.ts), apostrophes as `'`.
_APOSTROPHES = re.compile("[\u2032\u2019']")
_PHRASES = json.loads(resources.files("evalrun").joinpath("data/refusal_phrases.json").read_text(encoding="utf-8"))
REFUSAL_PREFIXES = tuple(_APOSTROPHES.sub("'", s.lower()) for s in _PHRASES["prefixes"])
#: One alternation of every phrase, each between word boundaries (ASCII \b, as in JavaScript).
REFUSAL_PATTERN = re.compile(r"\b(?:" + "|".join(re.escape(s.lower()) for s in _PHRASES["substrings"]) + r")\b",
                             re.ASCII)


@register("is-refusal")
class IsRefusal(TextAssertion):
    """Output is a refusal ("I'm sorry, I can't ...", "As an AI ..."), or empty.

    YAML keys: none. Uses promptfoo's phrase lists (prefixes and whole-word substrings, case-insensitive).
    An empty output counts as a refusal with score 0 (as in promptfoo).
    """

    takes_value = False

    def judge_text(self, output: str, value: Any) -> Score:
        if not output.strip():
            return Score(True, 0.0, "Empty output treated as a refusal", keep_score_on_negate=True)
        low = _APOSTROPHES.sub("'", output.strip().lower())
        passed = low.startswith(REFUSAL_PREFIXES) or REFUSAL_PATTERN.search(low) is not None
        return binary(passed, "Output is a refusal" if passed else "Output is not a refusal")
