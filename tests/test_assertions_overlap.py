"""gleu (and meteor): formulas against worked examples, defaults, not-, bad arguments."""

from __future__ import annotations

import pytest

from evalrun.assertions.overlap import gleu
from tests.test_assertions_helpers import bad, run


def test_gleu_worked_examples() -> None:
    # "the cat sat on the mat" vs "the cat sat on a mat": 1-grams 5/6 (clipped: one "the"), 2-grams 3/5,
    # 3-grams 2/4, 4-grams 1/3 -> 11 matches of 18 n-grams on both sides
    assert gleu("the cat sat on the mat", ["the cat sat on a mat"]) == pytest.approx(11 / 18)
    # different lengths: precision 3/3 ("the cat", "the", "cat" ... ) vs recall over the longer reference
    assert gleu("the cat", ["the cat sat"]) == pytest.approx(min(3 / 3, 3 / 6))
    assert gleu("The Cat sat.", ["the cat sat"]) == 1.0     # lowercased, trailing dots dropped: identical
    assert gleu("dogs run", ["the cat sat"]) == 0.0
    assert gleu("the cat", ["dogs", "the cat sat"]) == pytest.approx(0.5)   # the best reference


def test_gleu_assertion_default_threshold_not_and_errors() -> None:
    r = run("gleu", "the cat sat on the mat", "the cat sat on a mat")
    assert r.pass_ and r.score == pytest.approx(11 / 18) and r.threshold == 0.5
    r = run("gleu", "the cat sat on the mat", ["a dog", "the cat sat on a mat"], threshold=0.7)
    assert not r.pass_ and "GLEU score 0.6111 is less than threshold 0.7" in r.reason
    r = run("not-gleu", "the cat sat on the mat", "the cat sat on a mat")
    assert not r.pass_ and r.score == pytest.approx(7 / 18)
    assert run("not-gleu", "dogs run", "the cat sat").pass_
    r = run("gleu", "", "the cat")
    assert r.error and "empty output" in r.error


@pytest.mark.parametrize("value", [3, [], ["a", 1], {"a": "b"}])
def test_gleu_bad_values(value: object) -> None:
    e = bad("gleu", value)
    assert "gleu" in e.message and "tests[0].assert[0].value" in str(e)
    assert "value is required" in bad("gleu").message
