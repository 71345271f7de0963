"""The learned entailment head in the builtin grader's verdict (issue 34, part 2): asked only where the words
leave a claim open, never over a missing name or number or a conflict; its verdicts say so with the figure."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import numpy as np
import pytest

from evalrun.grading import embeddings
from evalrun.grading.builtin import BuiltinGrader, judge
from evalrun.grading.builtin.grader import MEANING_REFUTED, MEANING_SUPPORTED
from evalrun.types import GraderTrace

POLICY = ("Refunds can be requested within 30 days of delivery. Approved refunds are returned to the original "
          "payment method. Digital downloads and gift cards are non-refundable.")
PAYBACK = "Approved refunds are returned to the original payment method. They show up within 5-7 business days."


class FixedHead:
    """A stand-in head that answers every premise with the same probabilities and records what it was asked."""

    def __init__(self, supported: float, refuted: float) -> None:
        self.row = np.array([supported, refuted, max(0.0, 1 - supported - refuted)], dtype=np.float32)
        self.asked: list[tuple[list[str], str]] = []

    def probs(self, premises: Sequence[str], hypothesis: str) -> np.ndarray:
        self.asked.append((list(premises), hypothesis))
        return np.tile(self.row, (len(premises), 1))


def test_words_leave_a_rewording_open_and_the_head_reads_it() -> None:
    claim = "Approved refunds go back to the card you originally paid with."
    assert judge(claim, [PAYBACK]).verdict == "unsupported"
    head = FixedHead(supported=0.93, refuted=0.02)
    j = judge(claim, [PAYBACK], head)  # type: ignore[arg-type]
    assert j.verdict == "supported"
    assert j.score == pytest.approx(0.93, abs=1e-6)
    assert "says it in other words (learned entailment 0.93" in j.reason
    assert "Approved refunds are returned to the original payment method" in j.reason
    premises, hypothesis = head.asked[0]
    assert hypothesis == claim and premises[0].startswith("Approved refunds are returned")


@pytest.mark.parametrize(("supported", "refuted"), [
    (MEANING_SUPPORTED - 0.01, 0.0),  # not sure enough
    (0.99, MEANING_REFUTED),  # a closest sentence may refute it
])
def test_the_head_decides_only_above_its_thresholds(supported: float, refuted: float) -> None:
    claim = "Approved refunds go back to the card you originally paid with."
    j = judge(claim, [PAYBACK], FixedHead(supported, refuted))  # type: ignore[arg-type]
    assert j.verdict == "unsupported"
    assert "learned entailment" not in j.reason


@pytest.mark.parametrize("claim", [
    "Refunds can be requested within 60 days of delivery.",  # a number the policy contradicts
    "Digital downloads like e-books are refundable.",  # a flipped policy
    "Refunds are returned to your PayPal balance by Stripe.",  # names the policy does not have
])
def test_never_over_a_conflict_or_a_missing_name_or_number(claim: str) -> None:
    head = FixedHead(supported=1.0, refuted=0.0)
    j = judge(claim, [POLICY], head)  # type: ignore[arg-type]
    assert j.verdict != "supported", j.reason
    assert not head.asked


def test_a_sentence_that_says_it_the_other_way_supports_nothing() -> None:
    # "E-books" is the subject here, not a modifier added before the words the evidence has; and the head is not
    # asked where a close sentence states a word of the claim the other way ("non-refundable")
    for claim in ("E-books are refundable.", "Digital downloads like e-books are refundable.",
                  "Approved refunds go back to the card you originally paid with."):
        head = FixedHead(supported=1.0, refuted=0.0)
        j = judge(claim, [POLICY], head)  # type: ignore[arg-type]
        assert j.verdict == "unsupported" and "learned" not in j.reason, j
        assert not head.asked


def test_a_claim_the_words_support_needs_no_head() -> None:
    head = FixedHead(supported=0.0, refuted=1.0)
    j = judge("Refunds can be requested within 30 days of delivery.", [POLICY], head)  # type: ignore[arg-type]
    assert j.verdict == "supported" and not head.asked


@pytest.mark.skipif(not embeddings.offline_available(), reason="the offline MiniLM model is not installed")
def test_the_grader_reads_meaning_with_the_shipped_head() -> None:
    grader = BuiltinGrader()
    assert grader.reads_meaning
    claims = ["Approved refunds go back to the card you originally paid with.",
              "Digital downloads like e-books are refundable."]
    verdicts = asyncio.run(grader.verify(claims, [POLICY], GraderTrace(grader="builtin")))
    assert verdicts[1].verdict == "unsupported" and "other polarity" in verdicts[1].reason
    for claim, v in zip(claims, verdicts, strict=True):  # whatever the head says, its verdicts say so
        lexical = judge(claim, [POLICY])
        assert v.verdict == lexical.verdict or "learned entailment" in v.reason


@pytest.mark.parametrize("claim", ["Marketing emails are sent to all customers.",
                                   "Marketing emails are sent to all customers unless they opt out."])
def test_a_word_that_sets_the_scope_is_asserted_not_merely_added(claim: str) -> None:
    # "the capital *city* of" adds a modifier; "*all* customers", "*unless* they opt out" change what is claimed
    j = judge(claim, ["Marketing emails are sent only to customers who opt in."])
    assert j.verdict == "unsupported" and j.score < 0.5, j
    assert judge("The capital city of Australia is Canberra.", ["The capital of Australia is Canberra."]).verdict \
        == "supported"


def test_a_predicate_between_two_found_words_is_asserted_not_merely_added() -> None:
    j = judge("Orders can only be cancelled once one hour has passed since they were placed.",
              ["Orders can be changed or cancelled within one hour of being placed."])
    assert j.verdict == "unsupported" and "passed" in j.reason, j
    # a word the context has elsewhere is background, not a new assertion (examples/rag-app)
    j = judge("Canberra was selected as the capital in 1908 as a compromise between Sydney and Melbourne.",
              ["Canberra is the capital of Australia. It was chosen in 1908 as a compromise between Sydney and "
               "Melbourne."])
    assert j.verdict == "supported", j

