"""gleu and meteor: formulas against worked examples computed by hand, defaults, not-, bad arguments."""

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


def _words(text: str) -> list[str]:
    return text.split()


def test_meteor_worked_examples_by_hand() -> None:
    from evalrun.assertions.overlap import chunks, meteor_one
    # identical six words: P = R = 1, Fmean 1, one chunk of 6 matches: 1 - 0.5 * (1/6)^3
    assert meteor_one(_words("the cat sat on the mat"), _words("the cat sat on the mat")) == \
        pytest.approx(1 - 0.5 / 216)
    # the same words reordered: NLTK's alignment (from the last word back, to the last equal reference word)
    # gives pairs (0,3) (1,0) (2,5) (3,4) (4,1) (5,2): 5 chunks -> 1 - 0.5 * (5/6)^3
    assert chunks([(0, 3), (1, 0), (2, 5), (3, 4), (4, 1), (5, 2)]) == 5
    assert meteor_one(_words("on the mat the cat sat"), _words("the cat sat on the mat")) == \
        pytest.approx(1 - 0.5 * (5 / 6) ** 3)
    # P = 3/4, R = 3/5: Fmean = PR / (0.9P + 0.1R) = 0.45 / 0.735; the candidate's "the" aligns with the
    # reference's second "the" (the last one unmatched), so (0,3) (1,1) (3,4) are 3 chunks of 3 matches
    fmean = (3 / 4) * (3 / 5) / (0.9 * 3 / 4 + 0.1 * 3 / 5)
    assert meteor_one(_words("the cat on mat"), _words("the cat sat the mat")) == \
        pytest.approx(fmean * (1 - 0.5 * (3 / 3) ** 3))
    # with one "the" in the reference the first two words are one chunk: 2 chunks of 3 matches
    fmean = (3 / 4) * (3 / 4) / (0.9 * 3 / 4 + 0.1 * 3 / 4)
    assert meteor_one(_words("the cat on mat"), _words("the cat sat mat")) == \
        pytest.approx(fmean * (1 - 0.5 * (2 / 3) ** 3))
    # case-insensitive; nothing in common -> 0; alpha 0.5 is the harmonic mean
    assert meteor_one(_words("The CAT"), _words("the cat")) == pytest.approx(1 - 0.5 * (1 / 2) ** 3)
    assert meteor_one(_words("dogs"), _words("the cat")) == 0.0
    assert meteor_one(_words("the cat"), _words("the cat sat the"), alpha=0.5, gamma=0) == \
        pytest.approx(2 * 1 * 0.5 / 1.5)


def test_meteor_assertion_threshold_not_references_and_errors() -> None:
    r = run("meteor", "The cat sat on the mat.", "the cat sat on the mat")
    assert r.pass_ and r.score == pytest.approx(1 - 0.5 / 216) and r.threshold == 0.5
    r = run("meteor", "on the mat the cat sat", ["dogs bark", "the cat sat on the mat"], threshold=0.8)
    assert not r.pass_ and "METEOR score 0.7106 is less than threshold 0.8" in r.reason
    r = run("not-meteor", "on the mat the cat sat", "the cat sat on the mat", threshold=0.8)
    assert r.pass_ and r.score == pytest.approx(0.5 * (5 / 6) ** 3)
    r = run("meteor", "the cat", "the cat", config={"gamma": 0})
    assert r.score == 1.0
    assert "empty output" in (run("meteor", "", "x").error or "")


def test_meteor_bad_arguments() -> None:
    assert "meteor" in bad("meteor", 5).message
    assert "config.alpha must be a number from 0 to 1" in bad("meteor", "x", config={"alpha": 2}).message
    assert "unknown config key" in bad("meteor", "x", config={"delta": 1}).message


def test_meteor_stem_stage_with_a_given_stemmer() -> None:
    from evalrun.assertions.overlap import meteor_one

    class Plural:  # a stand-in stemmer: drops a final "s"
        def stem(self, word: str) -> str:
            return word[:-1] if word.endswith("s") else word
    # "cats" ~ "cat" by stem, "sat" exact: 2 matches in one chunk -> 1 - 0.5 * (1/2)^3
    assert meteor_one(_words("cats sat"), _words("cat sat"), stemmer=Plural()) == pytest.approx(1 - 0.5 / 8)
    fmean = 0.5 * 0.5 / (0.9 * 0.5 + 0.1 * 0.5)   # without it only "sat" matches
    assert meteor_one(_words("cats sat"), _words("cat sat")) == pytest.approx(fmean * 0.5)


class _NoSynonyms:
    """A WordNet stand-in for NLTK's meteor_score: no synsets (its WordNet data is a download)."""

    def synsets(self, word: str) -> list[object]:
        return []


@pytest.mark.parametrize(("hyp", "ref"), [
    ("the cat sat on the mat", "the cat sat on the mat"),
    ("on the mat the cat sat", "the cat sat on the mat"),
    ("the cats were running to the mats", "a cat runs to the mat"),
    ("It is a guide to action which ensures that the military always obeys the commands of the party",
     "It is a guide to action that ensures that the military will forever heed Party commands"),
    ("generously given gifts", "a generous gift was given"),
    ("nothing in common", "entirely different words"),
])
def test_meteor_equals_nltks_meteor_score_without_synonyms(hyp: str, ref: str) -> None:
    nltk_meteor = pytest.importorskip("nltk.translate.meteor_score",
                                      reason="the optional evalrun[meteor] extra (NLTK) is not installed")
    from evalrun.assertions.overlap import meteor_one, porter_stemmer
    want = nltk_meteor.single_meteor_score(ref.split(), hyp.split(), wordnet=_NoSynonyms())
    assert meteor_one(hyp.split(), ref.split(), stemmer=porter_stemmer()) == pytest.approx(want)
    r = run("meteor", hyp, ref, threshold=0)
    assert r.score == pytest.approx(want)       # the assertion uses the stemmer when NLTK is installed
