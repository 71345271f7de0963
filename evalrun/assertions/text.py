"""String assertions: equals, contains and its variants, starts-with, regex, word-count, is-refusal.

Semantics follow promptfoo 0.121: comparisons are case-sensitive unless the type starts with `i`; numbers and
booleans in `value` compare as JavaScript prints them (`true`, `5`, `1.5`); list-valued types also accept a
comma-separated string (double quotes protect commas: `"a, b", c`).
"""

from __future__ import annotations

import json
import re
from typing import Any

from evalrun.assertions.base import Score, TextAssertion, binary
from evalrun.assertions.jsregex import compile_js_regex
from evalrun.assertions.registry import register
from evalrun.assertions.values import js_str, parse_csv_values, strict_equal

__all__ = ["Equals", "Contains", "ContainsAny", "ContainsAll", "StartsWith", "Regex", "WordCount", "IsRefusal"]


def _quote(s: str, limit: int = 80) -> str:
    """The string in double quotes for a reason, shortened to `limit` characters."""
    return '"' + (s if len(s) <= limit else s[: limit - 3] + "...") + '"'


@register("equals")
class Equals(TextAssertion):
    """Output equals `value` exactly.

    YAML keys: `value` (required): a string (compared verbatim, no trimming) or a number/boolean (compared as
    text), or an object/list (the output is parsed as JSON and compared structurally).
    """

    summary = "output is exactly the value (objects: JSON-equal)"
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


class _ContainsBase(TextAssertion):
    requires_value = True
    ignore_case = False
    value_hint = "give a non-empty string or a number"

    def parse(self, value: Any) -> str:
        if isinstance(value, bool) or not isinstance(value, (str, int, float)) or value == "":
            raise ValueError(f"{self.spec.type} needs a non-empty string or number value, got {value!r}")
        return js_str(value)

    def judge_text(self, output: str, value: Any) -> Score:
        needle = self.parsed(value)
        hay = output
        passed = needle.lower() in hay.lower() if self.ignore_case else needle in hay
        return binary(passed, f"Output {'contains' if passed else 'does not contain'} {_quote(needle)}"
                      + (" (ignoring case)" if self.ignore_case else ""))


@register("contains")
class Contains(_ContainsBase):
    """Output contains `value` as a substring (case-sensitive).

    YAML keys: `value` (required): a non-empty string or a number.
    """

    summary = "output contains the value (case-sensitive)"


@register("icontains")
class IContains(_ContainsBase):
    """Output contains `value`, ignoring case.

    YAML keys: `value` (required): a non-empty string or a number.
    """

    summary = "output contains the value, ignoring case"
    ignore_case = True


class _ListBase(TextAssertion):
    requires_value = True
    ignore_case = False
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

    def _found(self, output: str, value: Any) -> tuple[list[str], list[str]]:
        items = self.parsed(value)
        hay = output.lower() if self.ignore_case else output
        present = [v for v in items if (v.lower() if self.ignore_case else v) in hay]
        return items, present


class _AnyBase(_ListBase):
    def judge_text(self, output: str, value: Any) -> Score:
        items, present = self._found(output, value)
        if present:
            return binary(True, f"Output contains {_quote(present[0])}", found=present)
        return binary(False, f"Output contains none of {json.dumps(items, ensure_ascii=False)}", found=[])


class _AllBase(_ListBase):
    def judge_text(self, output: str, value: Any) -> Score:
        items, present = self._found(output, value)
        missing = [v for v in items if v not in present]
        if not missing:
            return binary(True, f"Output contains all of {json.dumps(items, ensure_ascii=False)}")
        return binary(False, f"Output is missing {json.dumps(missing, ensure_ascii=False)}", missing=missing)


@register("contains-any")
class ContainsAny(_AnyBase):
    """Output contains at least one of the values (case-sensitive).

    YAML keys: `value` (required): a list of strings/numbers, or one comma-separated string.
    """

    summary = "output contains at least one of the values"


@register("icontains-any")
class IContainsAny(_AnyBase):
    """Output contains at least one of the values, ignoring case.

    YAML keys: `value` (required): a list of strings/numbers, or one comma-separated string.
    """

    summary = "output contains at least one of the values, ignoring case"
    ignore_case = True


@register("contains-all")
class ContainsAll(_AllBase):
    """Output contains every one of the values (case-sensitive).

    YAML keys: `value` (required): a list of strings/numbers, or one comma-separated string.
    """

    summary = "output contains every one of the values"


@register("icontains-all")
class IContainsAll(_AllBase):
    """Output contains every one of the values, ignoring case.

    YAML keys: `value` (required): a list of strings/numbers, or one comma-separated string.
    """

    summary = "output contains every one of the values, ignoring case"
    ignore_case = True


@register("starts-with")
class StartsWith(TextAssertion):
    """Output starts with `value` (case-sensitive, no trimming).

    YAML keys: `value` (required): a non-empty string.
    """

    summary = "output starts with the value"
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

    summary = "output matches the regular expression"
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
        rx = self.parsed(value)
        m = rx.search(output)
        if m:
            return binary(True, f"Output matches /{value}/ at {_quote(m.group(0))}")
        return binary(False, f"Output does not match /{value}/")


def count_words(text: str) -> int:
    """Words as promptfoo counts them: whitespace-separated, non-empty."""
    return len(text.split())


@register("word-count")
class WordCount(TextAssertion):
    """Output has exactly N words, or between `min` and `max` words (inclusive).

    YAML keys: `value` (required): a number, or a mapping with `min` and/or `max`. Words are
    whitespace-separated runs of characters.
    """

    summary = "number of words equals the value or is within {min, max}"
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
        n = count_words(output)
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


@register("is-refusal")
class IsRefusal(TextAssertion):
    """Output is a refusal ("I'm sorry, I can't ...", "As an AI ..."), or empty.

    YAML keys: none. Uses promptfoo's phrase lists (prefixes and whole-word substrings, case-insensitive).
    An empty output counts as a refusal with score 0 (as in promptfoo).
    """

    takes_value = False

    summary = "output is a refusal (promptfoo's phrase list) or empty"

    def judge_text(self, output: str, value: Any) -> Score:
        from evalrun.assertions.refusal import is_basic_refusal

        if not output.strip():
            return Score(True, 0.0, "Empty output treated as a refusal", keep_score_on_negate=True)
        passed = is_basic_refusal(output)
        return binary(passed, "Output is a refusal" if passed else "Output is not a refusal")
