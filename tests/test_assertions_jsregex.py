"""JavaScript regex semantics on Python's re."""

from __future__ import annotations

import re

import pytest

from evalrun.assertions.text import compile_js_regex, translate


@pytest.mark.parametrize(("pattern", "text", "matches"), [
    ("Paris$", "Paris\n", False),          # JavaScript `$` is the end of the input
    ("^Paris$", "Paris", True),
    (r"\d", "١", False),                   # Arabic-Indic digit: not \d in JavaScript
    (r"\w", "é", False),
    (r"caf\w\b", "café", False),
    (r"\bcat\b", "a cat!", True),
    (r"\bcat\b", "concat", False),
    (r"\Bat", "cat", True),
    ("[^]", "\n", True),
    ("[]", "anything", False),
    (r"(?<y>\d{2})-\k<y>", "12-12", True),
    (r"(?<y>\d{2})-\k<y>", "12-13", False),
    (r"(?<!x)y", "xy", False),
    (r"[\w-]+z", "a-bz", True),
    ("a[[]b", "a[b", True),
    (r"[^\d]", "5", False),
    ("(?i)paris", "PARIS", True),          # Python's inline flag still works
])
def test_javascript_meaning(pattern: str, text: str, matches: bool) -> None:
    assert bool(compile_js_regex(pattern).search(text)) is matches


def test_invalid_pattern_raises_re_error() -> None:
    with pytest.raises(re.error):
        compile_js_regex("(")


def test_escapes_pass_through() -> None:
    assert translate(r"\.\$\(") == r"\.\$\("
