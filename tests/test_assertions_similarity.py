"""levenshtein, rouge-n, bleu: formulas, defaults, not-, bad arguments."""

from __future__ import annotations

import math

import pytest

from evalrun.assertions.similarity import bleu, levenshtein, rouge_n, treebank_tokenize
from tests.test_assertions_helpers import bad, bad_yaml, run


@pytest.mark.parametrize(("a", "b", "d"), [("", "", 0), ("abc", "", 3), ("kitten", "sitting", 3),
                                           ("flaw", "lawn", 2), ("same", "same", 0)])
def test_levenshtein_distance(a: str, b: str, d: int) -> None:
    assert levenshtein(a, b) == d == levenshtein(b, a)


def test_levenshtein_counts_utf16_units_like_javascript() -> None:
    assert levenshtein("😀", "a") == 2          # one astral character is two UTF-16 units
    assert levenshtein("naïve", "naive") == 1


def test_levenshtein_default_threshold_five() -> None:
    assert run("levenshtein", "abcdefgh", "abc").pass_            # distance 5
    assert not run("levenshtein", "abcdefghi", "abc").pass_       # distance 6
    assert not run("levenshtein", "kitten", "sitting", threshold=2).pass_
    r = run("not-levenshtein", "kitten", "sitting")
    assert not r.pass_ and r.score == 0.0


def test_treebank_tokens() -> None:
    assert treebank_tokenize("The cat, I think, can't sit.") == \
        ["The", "cat", ",", "I", "think", ",", "ca", "n't", "sit", "."]
    assert treebank_tokenize("cannot") == ["can", "not"]


def test_rouge_n_values() -> None:
    assert rouge_n("the cat sat on the mat", "the cat sat on the mat") == 1.0   # clipped counts
    assert rouge_n("the cat sat on the mat", "the cat sat on a mat") == pytest.approx(5 / 6)
    assert rouge_n("A dog", "the cat") == 0.0
    assert rouge_n("", "x") == 0.0


def test_rouge_n_assertion_default_threshold_and_not() -> None:
    r = run("rouge-n", "the cat sat on the mat", "the cat sat on a mat")
    assert r.pass_ and r.score == pytest.approx(5 / 6) and r.threshold == 0.75
    r = run("rouge-n", "the cat sat on the mat", "the cat sat on a mat", threshold=0.9)
    assert not r.pass_
    r = run("not-rouge-n", "the cat sat on the mat", "the cat sat on a mat")
    assert not r.pass_ and r.score == pytest.approx(1 / 6)


def test_bleu_values() -> None:
    assert bleu("the cat is on the mat", ["the cat is on the mat"]) == pytest.approx(1.0)
    assert bleu("", ["x"]) == 0.0
    # brevity penalty: 3 words against a 6-word reference, all n-grams matching
    assert bleu("the cat is", ["the cat is on the mat"]) == pytest.approx(math.exp(1 - 6 / 3))
    assert 0 < bleu("there is a cat on the mat", ["the cat is on the mat"]) < 0.5


def test_bleu_assertion_default_threshold_multi_reference_and_not() -> None:
    assert run("bleu", "the cat is on the mat", "the cat is on the mat").threshold == 0.5
    assert run("bleu", "the cat sat on the mat", ["a dog", "the cat sat on the mat"]).pass_
    assert not run("bleu", "there is a cat on the mat", "the cat is on the mat").pass_
    r = run("not-bleu", "completely different words", "the cat is on the mat")
    assert r.pass_ and r.score == pytest.approx(1.0, abs=1e-3)


@pytest.mark.parametrize(("type_", "value", "kw", "needle"), [
    ("levenshtein", None, {}, "value is required"),
    ("levenshtein", ["a"], {}, "needs a string"),
    ("rouge-n", 3, {}, "needs a string"),
    ("bleu", [], {}, "non-empty list of strings"),
    ("bleu", {"a": 1}, {}, "string or a non-empty list"),
])
def test_bad_arguments(type_: str, value: object, kw: dict[str, object], needle: str) -> None:
    assert needle in str(bad(type_, value, **kw))


def test_a_threshold_that_is_no_number_is_refused_by_the_loader() -> None:
    e = bad_yaml({"type": "levenshtein", "value": "a", "threshold": "x"})
    assert "threshold must be a number" in str(e) and e.key == "tests[0].assert[0].threshold"
