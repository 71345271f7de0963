"""Pure formulas of Mastra's deterministic scorers (packages/evals/src/scorers/code/ in mastra-ai/mastra), each
reproducing Mastra's code and the npm library it calls (named in its docstring) so the same texts give the same
score. Scores are in [0, 1] before Mastra's `scale`, which the caller applies."""

from __future__ import annotations

import difflib
import json
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from importlib import resources
from itertools import pairwise


def _units(s: str) -> Sequence[str] | list[int]:
    """The string as JavaScript indexes it (UTF-16 code units) when it holds astral characters."""
    if all(ord(c) <= 0xFFFF for c in s):
        return s
    raw = s.encode("utf-16-le")
    return [int.from_bytes(raw[i:i + 2], "little") for i in range(0, len(raw), 2)]


# ------------------------------------------------------------------ content-similarity
def dice(first: str, second: str) -> float:
    """string-similarity's compareTwoStrings: Dice coefficient of character bigrams, whitespace removed."""
    a = _units(re.sub(r"\s+", "", first))
    b = _units(re.sub(r"\s+", "", second))
    if list(a) == list(b):
        return 1.0
    if len(a) < 2 or len(b) < 2:
        return 0.0
    shared = Counter(pairwise(a)) & Counter(pairwise(b))  # the bigrams in both, each as often as in both
    return 2.0 * sum(shared.values()) / (len(a) + len(b) - 2)


def content_similarity(reference: str, output: str, *, ignore_case: bool = True,
                       ignore_whitespace: bool = True) -> float:
    """Mastra's content-similarity: normalise case / whitespace, then Dice similarity."""
    if ignore_case:
        reference, output = reference.lower(), output.lower()
    if ignore_whitespace:
        reference = re.sub(r"\s+", " ", reference).strip()
        output = re.sub(r"\s+", " ", output).strip()
    return dice(reference, output)


# ------------------------------------------------------------------ textual-difference
@dataclass(frozen=True)
class Difference:
    ratio: float  # the score (Mastra's code scores the ratio alone)
    changes: int  # non-equal opcodes
    length_diff: float  # |len(a) - len(b)| / max length
    confidence: float  # 1 - length_diff (reported, not scored)


def textual_difference(reference: str, output: str) -> Difference:
    """difflib's SequenceMatcher(None, reference, output) ratio (as the npm port), change count, length difference."""
    matcher = difflib.SequenceMatcher(None, reference, output)
    changes = sum(1 for op in matcher.get_opcodes() if op[0] != "equal")
    longest = max(len(reference), len(output))
    length_diff = abs(len(reference) - len(output)) / longest if longest else 0.0
    return Difference(matcher.ratio(), changes, length_diff, 1.0 - length_diff)


# ------------------------------------------------------------------ keyword-coverage
@cache
def stopwords() -> frozenset[str]:
    text = resources.files("evalrun").joinpath("data/smart_stopwords.txt").read_text(encoding="utf-8")
    return frozenset(w for w in text.split("\n") if w)


_HTML = re.compile(r"(<([^>]+)>)", re.I)
_URL = re.compile(r"https?://.*[\r\n]*")
_PUNCT = re.compile(r"\.|,|;|!|\?|\(|\)|:|\"|^'|'$|“|”|‘|’")


def keywords(text: str) -> list[str]:
    """keyword-extractor 0.0.28's extract(text, {remove_digits, return_changed_case, remove_duplicates})."""
    body = _HTML.sub("", text).strip()
    if not body:
        return []
    stop = stopwords()
    out: list[str] = []
    for word in re.split(r"\s", body):
        is_url = bool(_URL.search(word))
        w = word if is_url else _PUNCT.sub("", word)
        if len(w) == 1:
            w = re.sub(r"_|@|&|#", "", w)
        if w and len(re.findall(r"[0-9]", w)) == len(w):
            w = ""
        if not w or w.lower() in stop:
            continue
        kw = w if is_url else w.lower()
        if kw not in out:
            out.append(kw)
    return out


@dataclass(frozen=True)
class Coverage:
    score: float
    matched: tuple[str, ...]
    missing: tuple[str, ...]


def keyword_coverage(reference: str, output: str) -> Coverage:
    """Share of the reference's keywords found among the output's; 1 when the reference has none."""
    ref = keywords(reference)
    got = set(keywords(output))
    if not ref:
        return Coverage(1.0, (), ())
    matched = tuple(k for k in ref if k in got)
    return Coverage(len(matched) / len(ref), matched, tuple(k for k in ref if k not in got))


# ------------------------------------------------------------------ completeness
def _normalise(s: str) -> str:
    return "".join(c for c in unicodedata.normalize("NFD", s) if not 0x300 <= ord(c) <= 0x36F).lower()


def elements(text: str) -> list[str]:
    """The text's distinct words (diacritics removed, lower case, split on anything not a-z/0-9): Mastra's
    compromise nouns, verbs, topics and terms, less the verb infinitives (evalrun has no part-of-speech tagger)."""
    words = re.sub(r"[^a-z0-9]+", " ", _normalise(text)).split()
    return list(dict.fromkeys(words))


def completeness(reference: str, output: str) -> Coverage:
    """Mastra's calculateCoverage: an input element is covered by an output element when they are equal
    (3 characters or fewer) or one contains the other and the shorter is over 60% of the longer."""
    original, simplified = elements(reference), elements(output)
    if not original:
        return Coverage(1.0 if not simplified else 0.0, (), ())

    def covered(elem: str) -> bool:
        for s in simplified:
            if len(elem) <= 3:
                if elem == s:
                    return True
                continue
            longer, shorter = (elem, s) if len(elem) > len(s) else (s, elem)
            if shorter in longer and len(shorter) / len(longer) > 0.6:
                return True
        return False

    hit = tuple(e for e in original if covered(e))
    return Coverage(len(hit) / len(original), hit, tuple(e for e in original if e not in hit))


# ------------------------------------------------------------------ tone-consistency
@cache
def afinn() -> dict[str, int]:
    """AFINN-165 plus emoji scores, as the `sentiment` npm package ships them."""
    raw = resources.files("evalrun").joinpath("data/afinn165.json").read_text(encoding="utf-8")
    data: dict[str, int] = json.loads(raw)
    return data


_NEGATORS = frozenset({"cant", "can't", "dont", "don't", "doesnt", "doesn't", "not", "non", "wont", "won't",
                       "isnt", "isn't"})
_STRIP = re.compile(r"[.,/#!?$%^&*;:{}=_`\"~()]")


def sentiment(text: str) -> float:
    """`sentiment`'s comparative score: AFINN sum (a negator before a word flips it) / number of tokens."""
    t = _STRIP.sub(" ", text.lower().replace("\n", " "))
    tokens = re.sub(r"\s\s+", " ", t).strip().split(" ")
    labels = afinn()
    score = 0
    for i, tok in enumerate(tokens):
        value = labels.get(tok)
        if value is None:
            continue
        score += -value if i > 0 and tokens[i - 1] in _NEGATORS else value
    return score / len(tokens) if tokens else 0.0


@dataclass(frozen=True)
class Tone:
    score: float
    response: float  # the output's sentiment (comparison) or mean sentence sentiment (stability)
    reference: float | None = None  # comparison mode only
    variance: float | None = None  # stability mode only


def tone_consistency(output: str, reference: str | None = None) -> Tone:
    """Comparison (reference given): 1 - |s(output) - s(reference)|, floored at 0. Stability: 1 - variance of
    the sentence sentiments (sentences = runs ending in . ! or ?), floored at 0."""
    if reference:
        r, o = sentiment(reference), sentiment(output)
        return Tone(max(0.0, 1.0 - abs(o - r)), o, reference=r)
    sentences = re.findall(r"[^.!?]+[.!?]+", output) or [output]
    values = [sentiment(s) for s in sentences]
    mean = sum(values) / len(values)
    variance = sum((v - mean) ** 2 for v in values) / len(values)
    return Tone(max(0.0, 1.0 - variance), mean, variance=variance)


# ------------------------------------------------------------------ tool-call-accuracy (code variant)
def tool_order_ok(actual: Sequence[str], expected: Sequence[str], strict: bool = False) -> bool:
    """Strict: exactly the expected sequence. Otherwise each expected tool's first call comes after the
    previous one's (extra tools allowed)."""
    if strict:
        return list(actual) == list(expected)
    if any(tool not in actual for tool in expected):
        return False
    indices = [list(actual).index(tool) for tool in expected]
    return all(b > a for a, b in pairwise(indices))


def tool_call_accuracy(actual: Sequence[str], *, expected_tool: str | None = None, strict: bool = False,
                       expected_order: Sequence[str] | None = None) -> float:
    """Mastra's calculateAccuracy: 0 without tool calls; the order check when an order is given; else the
    expected tool called (strict: as the only call)."""
    if not actual:
        return 0.0
    if expected_order:
        return 1.0 if tool_order_ok(actual, expected_order, strict) else 0.0
    if not expected_tool:
        return 0.0
    if strict:
        return 1.0 if len(actual) == 1 and actual[0] == expected_tool else 0.0
    return 1.0 if expected_tool in actual else 0.0
