"""Words and numbers of a text (`tokenize`: contractions expanded, ISO dates and spelled fractions written out,
numbers read with their scale words, each word classified and keyed by its stem) and `Terms`, the normalised
content of a sentence, clause or claim, with its keys in reading order (`sequence`). Pure and cached."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import NamedTuple

from evalrun.grading.builtin.lexicon import ANTONYMS, NEGATIONS, STOPWORDS, UNITS, stem, words

#: "a half" and "half" as numbers, but not "an hour and a half" / "two and a half" (a whole plus a fraction).
_FRACTIONS_RE = re.compile(r"(?<!\band )(?<!\band)\b(?:(?:a|one)\s+(half|third|quarter|fifth)|(?<!and a )(half))\b", re.I)
_FRACTION_VALUE = {"half": "0.5", "third": "0.333", "quarter": "0.25", "fifth": "0.2"}
_ISO_DATE_RE = re.compile(r"\b(1\d{3}|20\d{2})-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])\b")
_MONTH_NAMES = ("January", "February", "March", "April", "May", "June", "July", "August", "September",
                "October", "November", "December")
#: Month names and abbreviations -> a three-letter key. Not "may": far more often the modal verb, it is a month
#: only when capitalised (handled in `tokenize`).
MONTHS = {**{m.lower(): m[:3].lower() for m in _MONTH_NAMES if m != "May"}, "sept": "sep",
          **{m[:3].lower(): m[:3].lower() for m in _MONTH_NAMES if m != "May"}}
WEEKDAYS = words("monday tuesday wednesday thursday friday saturday sunday")

NUMBER_WORDS: dict[str, int] = {
    **{w: i for i, w in enumerate(("zero one two three four five six seven eight nine ten eleven twelve thirteen "
                                   "fourteen fifteen sixteen seventeen eighteen nineteen twenty").split())},
    "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90,
    "dozen": 12, "twice": 2, "double": 2, "triple": 3}
SCALES: dict[str, float] = {"hundred": 1e2, "thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12,
                            "bn": 1e9}
ORDINALS: dict[str, int] = {w: i + 1 for i, w in enumerate(
    "first second third fourth fifth sixth seventh eighth ninth tenth eleventh twelfth".split())}


def _iso_date(m: re.Match[str]) -> str:
    """2023-05-01 -> "1 May 2023" (the same terms as the date written out)."""
    return f"{int(m.group(3))} {_MONTH_NAMES[int(m.group(2)) - 1]} {m.group(1)}"


def rewrite_dates_and_fractions(text: str) -> str:
    """`text` with ISO dates written out and spelled fractions ("a half", "one third") as decimals."""
    if "-" in text:
        text = _ISO_DATE_RE.sub(_iso_date, text)
    lowered = text.lower()
    if "half" in lowered or "third" in lowered or "quarter" in lowered or "fifth" in lowered:
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
    value, j = _with_scales(raw, i + 1, float(tok.lstrip("$€£").rstrip("%").replace(",", "")))
    return value, j, j == i + 1 and tok.isdigit() and len(tok) == 4 and 1000 <= value <= 2100


def read_number_words(raw: list[str], i: int) -> tuple[float, int]:
    """(value, index after it) of the number word `raw[i]` with the units and scale words after it."""
    n = len(raw)
    value = float(NUMBER_WORDS[raw[i].lower()])
    j = i + 1
    while j < n and raw[j].lower() in NUMBER_WORDS and NUMBER_WORDS[raw[j].lower()] < 10 <= value:
        value += NUMBER_WORDS[raw[j].lower()]
        j += 1
    return _with_scales(raw, j, value)


def _with_scales(raw: list[str], j: int, value: float) -> tuple[float, int]:
    """`value` times the scale words from `raw[j]` on ("4.2 billion"), and the index after them."""
    while j < len(raw) and raw[j].lower() in SCALES:
        value *= SCALES[raw[j].lower()]
        j += 1
    return value, j


#: One token: a number (with optional currency, thousands separators, decimals, percent) or a word.
#: Hyphens and slashes separate words ("high-level", "km/h"); "3-1" is two numbers.
#: A word starts with a letter and may carry digits ("km2", "CO2", "G7"). Numbers are ASCII digits: other scripts'
#: digits (Ethiopic "፭፻") are not read as numbers.
_TOKEN_RE = re.compile(r"[$€£]?[0-9]+(?:,[0-9]{3})*(?:\.[0-9]+)?%?|[^\W\d_](?:[^\W_]|')*")
#: "one hour" is a duration ("within one hour" = "within 60 minutes"); "one of", "one day I" are not numbers.
_TIME_UNITS = frozenset("second minute hour week month year decade century seconds minutes hours weeks months "
                        "years decades".split())
#: A hyphen between a word and a number makes one name ("COVID-19", "F-16", "Apollo-11"), not a quantity.
_NAME_NUMBER_RE = re.compile(r"(?<=[^\W\d_])-(?=[0-9])")
#: A lowercase-to-capital change inside a word: two words glued together (scraped text) or a camel-cased name.
_GLUED_RE = re.compile(r"(?<=[a-z]{2})(?=[A-Z][a-z])")
_CONTRACTIONS = (
    (re.compile(r"\b(can)'?t\b", re.I), r"\1 not"),
    (re.compile(r"\bwon't\b", re.I), "will not"),
    (re.compile(r"n't\b", re.I), " not"),
    # the rest expand to stopwords, so "You'll" or "There's" is not taken for a word the claim asserts
    (re.compile(r"'ll\b", re.I), " will"),
    (re.compile(r"'ve\b", re.I), " have"),
    (re.compile(r"'re\b", re.I), " are"),
    (re.compile(r"'d\b", re.I), " would"),
    (re.compile(r"\b(i)'m\b", re.I), r"\1 am"),
    (re.compile(r"\b(there|that|it|he|she|what|here|who|where|how|let)'s\b", re.I), r"\1 is"),
)


class Token(NamedTuple):
    """A word or number as written (`text`), its normalised key, and its kind."""

    text: str
    key: str
    kind: str  # "word" | "stop" | "num" | "year" | "ord" | "month" | "neg"
    capital: bool = False
    initial: bool = False  # first word of its sentence

    @property
    def term(self) -> str:
        """The key as `Terms` hold it: a number's as "#value"."""
        return "#" + self.key if self.kind in ("num", "year", "ord") else self.key


@lru_cache(maxsize=65536)
def tokenize(text: str) -> tuple[Token, ...]:
    """Words and numbers of `text`, with numbers merged with their scale words ("4.2 billion"). Cached."""
    if "'" in text or "\u2019" in text:
        text = text.replace("\u2019", "'")
        for rx, rep in _CONTRACTIONS:
            text = rx.sub(rep, text)
    text = rewrite_dates_and_fractions(_NAME_NUMBER_RE.sub("", text))
    if _GLUED_RE.search(text):  # "ZodiacZodiac", "JavaScript": both sides of a comparison split alike
        text = _GLUED_RE.sub(" ", text)
    raw = _TOKEN_RE.findall(text)
    out: list[Token] = []
    i = 0
    n = len(raw)
    while i < n:
        tok = raw[i]
        initial = i == 0
        if tok[0] in "0123456789$€£":  # ASCII digits only: str.isdigit() is true for "፭" too
            value, j, is_year = read_numeral(raw, i)
            out.append(Token(" ".join(raw[i:j]), canon_number(value), "year" if is_year else "num", initial=initial))
            if tok[0] in _CURRENCY:  # "$4.2" reads as "4.2 dollars", "12%" as "12 percent"
                out.append(Token(tok[0], _CURRENCY[tok[0]], "word"))
            if tok[-1] == "%":
                out.append(Token("%", _PERCENT, "word"))
            i = j
            continue
        lower = tok.lower()
        capital = tok[0].isupper()
        if lower == "one" and not (i + 1 < n and (raw[i + 1].lower() in SCALES or raw[i + 1].lower() in _TIME_UNITS)):
            out.append(Token(tok, lower, "stop", capital, initial))  # "one of", "one day"
        elif lower == "may" and capital and (not initial or (i + 1 < n and raw[i + 1][0].isdigit())):
            out.append(Token(tok, "may", "month", True, initial))
        elif lower in NUMBER_WORDS:
            value, i = read_number_words(raw, i)
            out.append(Token(tok, canon_number(value), "num", initial=initial))
            continue
        elif lower in SCALES and lower != "hundred":  # "a million" with no digit: treat as a number
            out.append(Token(tok, canon_number(SCALES[lower]), "num", initial=initial))
        elif lower in NEGATIONS:
            out.append(Token(tok, "not", "neg", capital, initial))
        elif lower in ORDINALS:
            out.append(Token(tok, f"o{ORDINALS[lower]}", "ord", capital, initial))
        elif lower in MONTHS:
            out.append(Token(tok, MONTHS[lower], "month", capital, initial))
        elif lower in WEEKDAYS:
            out.append(Token(tok, lower[:3], "month", capital, initial))
        elif lower in UNITS and out and out[-1].kind == "num":
            out.append(Token(tok, stem(UNITS[lower]), "word", capital, initial))
        elif lower in UNIVERSALS and (lower != "all" or (i + 1 < n and raw[i + 1].isalpha()
                                                        and raw[i + 1].lower() not in STOPWORDS)):
            # "for all returns" asserts more than "for defective items": one key, verified ("all or part": no)
            out.append(Token(tok, "all", "word", capital, initial))
        elif lower in STOPWORDS or (len(lower) < 2 and not (capital and not initial)):
            out.append(Token(tok, lower, "stop", capital, initial))
        else:
            out.append(Token(tok, stem(lower), "word", capital, initial))
        i += 1
    return tuple(out)


#: Universal quantifiers: one content key ("all"), so a claim about all of something needs evidence about all of it.
UNIVERSALS = frozenset({"all", "every", "each", "everyone", "everybody", "everything"})
_CURRENCY = {"$": stem("dollar"), "€": stem("euro"), "£": stem("pound")}
_PERCENT = stem("percent")



@dataclass(frozen=True)
class Terms:
    """The normalised content of one sentence, clause or claim."""

    keys: frozenset[str]  # every content key: stems, numbers, months
    entities: frozenset[str]  # keys written capitalised (named entities, by the rule in `entity_keys`)
    numbers: frozenset[tuple[str, str]]  # (kind, value): kind "num" | "year" | "ord"
    months: frozenset[str]
    negations: int
    polar: frozenset[str]  # keys that have an antonym in the lexicon
    first_key: str | None  # the first content key (the usual subject head)


def entity_keys(tokens: tuple[Token, ...] | list[Token], known: frozenset[str] = frozenset()) -> frozenset[str]:
    """Keys of capitalised content words: not sentence-initial, or initial and also followed by another
    capitalised word ("Marie Curie") or known as an entity from elsewhere (`known`)."""
    ents: set[str] = set()
    for i, t in enumerate(tokens):
        if t.kind != "word" or not t.capital:
            continue
        inner_capital = any(c.isupper() for c in t.text[1:])  # "JavaScript", "NASA"
        next_capital = i + 1 < len(tokens) and tokens[i + 1].capital and tokens[i + 1].kind == "word"
        if not t.initial or inner_capital or t.key in known or next_capital:
            ents.add(t.key)
    return frozenset(ents)


@lru_cache(maxsize=65536)
def analyse(text: str) -> Terms:
    return terms_of(tokenize(text))


def terms_of(tokens: tuple[Token, ...] | list[Token], known_entities: frozenset[str] = frozenset()) -> Terms:
    """Build `Terms` from tokens; `known_entities` lets a sentence-initial word count as an entity."""
    keys: set[str] = set()
    numbers: set[tuple[str, str]] = set()
    months: set[str] = set()
    negs = 0
    first: str | None = None
    for t in tokens:
        if t.kind == "stop":
            continue
        if t.kind == "neg":
            negs += 1
            continue
        keys.add(t.term)
        if t.kind in ("num", "year", "ord"):
            numbers.add((t.kind, t.key))
        elif t.kind == "month":
            months.add(t.key)
        if first is None:
            first = t.key if t.kind == "word" else None
    frozen = frozenset(keys)
    return Terms(
        keys=frozen,
        entities=entity_keys(tokens, known_entities),
        numbers=frozenset(numbers),
        months=frozenset(months),
        negations=negs,
        polar=frozenset(k for k in frozen if k in ANTONYMS),
        first_key=first,
    )


def sequence(tokens: tuple[Token, ...] | list[Token]) -> tuple[str, ...]:
    """The content keys of `tokens` in reading order (numbers as "#value"), with two markers the order checks
    need: "~by" (the agent of a passive verb follows) and "~not" (a negation)."""
    out: list[str] = []
    for t in tokens:
        if t.kind == "stop":
            if t.key == "by":
                out.append("~by")
        else:
            out.append("~not" if t.kind == "neg" else t.term)
    return tuple(out)


def merge_terms(parts: list[Terms]) -> Terms:
    return Terms(
        keys=frozenset().union(*(p.keys for p in parts)),
        entities=frozenset().union(*(p.entities for p in parts)),
        numbers=frozenset().union(*(p.numbers for p in parts)),
        months=frozenset().union(*(p.months for p in parts)),
        negations=sum(p.negations for p in parts),
        polar=frozenset().union(*(p.polar for p in parts)),
        first_key=next((p.first_key for p in parts if p.first_key), None),
    )


def content_words(text: str) -> list[tuple[str, str]]:
    """(surface word, key) of the content words of `text`, in order, without duplicates."""
    seen: set[str] = set()
    out: list[tuple[str, str]] = []
    for t in tokenize(text):
        if t.kind in ("word", "num", "year", "month") and t.key not in seen:
            seen.add(t.key)
            out.append((t.text, t.term))
    return out


def surface(tokens: tuple[Token, ...], keys: list[str]) -> list[str]:
    """The words of `tokens` as written for the given keys (for reasons)."""
    forms: dict[str, str] = {}
    for tok in tokens:
        forms.setdefault(tok.term, tok.text)
    return [forms.get(k, k.lstrip("#")) for k in keys]


def short(text: str, limit: int = 90) -> str:
    """`text` cut to `limit` characters with an ellipsis (for quoting evidence in reasons)."""
    return text if len(text) <= limit else text[: limit - 1] + "\u2026"
