"""Numbers and dates as written, for the tokeniser: canonical values, scale words, ISO dates, fractions.

`rewrite_dates_and_fractions` rewrites a text before tokenising (2023-05-01 -> "1 May 2023", "a half" ->
"0.5"); `read_numeral` and `read_number_words` read a number starting at a raw token, merged with the scale
words after it ("4.2 billion", "twenty five million"); `canon_number` is the number's key.
"""

from __future__ import annotations

import re

from evalrun.grading.builtin.lexicon import NUMBER_WORDS, SCALES

#: "a half" and "half" as numbers, but not "an hour and a half" / "two and a half" (a whole plus a fraction).
_FRACTIONS_RE = re.compile(r"(?<!\band )(?<!\band)\b(?:(?:a|one)\s+(half|third|quarter|fifth)|(?<!and a )(half))\b", re.I)
_FRACTION_VALUE = {"half": "0.5", "third": "0.333", "quarter": "0.25", "fifth": "0.2"}
_FRACTION_HINTS = ("half", "third", "quarter", "fifth")
_ISO_DATE_RE = re.compile(r"\b(1\d{3}|20\d{2})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])\b")
_MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
                "October", "November", "December")


def _iso_date(m: re.Match[str]) -> str:
    """2023-05-01 -> "1 May 2023" (the same terms as the date written out)."""
    return f"{int(m.group(3))} {_MONTH_NAMES[int(m.group(2)) - 1]} {m.group(1)}"


def rewrite_dates_and_fractions(text: str) -> str:
    """`text` with ISO dates written out and spelled fractions ("a half", "one third") as decimals."""
    if "-" in text:
        text = _ISO_DATE_RE.sub(_iso_date, text)
    lowered = text.lower()
    if "half" in lowered or "third" in lowered or "quarter" in lowered or "fifth" in lowered:  # _FRACTION_HINTS
        text = _FRACTIONS_RE.sub(lambda m: _FRACTION_VALUE[(m.group(1) or m.group(2)).lower()], text)
    return text


def canon_number(value: float) -> str:
    """The key of a number: an integer without a decimal point, otherwise six significant digits."""
    if value == int(value):
        return str(int(value))
    return f"{value:.6g}"


def read_numeral(raw: list[str], i: int) -> tuple[float, int, bool]:
    """(value, index after it, is a year) of the numeral `raw[i]` ("$1,200", "12%") and its scale words."""
    tok = raw[i]
    n = len(raw)
    digits = tok.lstrip("$€£").rstrip("%").replace(",", "")
    value = float(digits)
    is_year = (tok.isdigit() and len(tok) == 4 and 1000 <= value <= 2100)
    j = i + 1
    while j < n and raw[j].lower() in SCALES:
        value *= SCALES[raw[j].lower()]
        j += 1
        is_year = False
    return value, j, is_year


def read_number_words(raw: list[str], i: int) -> tuple[float, int]:
    """(value, index after it) of the number word `raw[i]` with the units and scale words after it."""
    n = len(raw)
    value = float(NUMBER_WORDS[raw[i].lower()])
    j = i + 1
    while j < n and raw[j].lower() in NUMBER_WORDS and NUMBER_WORDS[raw[j].lower()] < 10 <= value:
        value += NUMBER_WORDS[raw[j].lower()]
        j += 1
    while j < n and raw[j].lower() in SCALES:
        value *= SCALES[raw[j].lower()]
        j += 1
    return value, j
