"""The builtin grader judges meaning (issue 22): the semantic tier, polarity, reasons that explain the number,
claims that keep their subject. The support-bot examples are the issue's own; the figures on public data are in
benchmarks/grading/README.md."""

from __future__ import annotations

import pytest

from evalrun.assertions.rag import claims_reason
from evalrun.grading import embeddings
from evalrun.grading.builtin import extract_claims, judge
from evalrun.grading.builtin.grader import classify
from evalrun.types import Verdict

POLICY = ("Refunds can be requested within 30 days of delivery. Digital downloads and gift cards are "
          "non-refundable. Opening the device voids the warranty.")


def test_the_semantic_tier_is_in_the_default_install() -> None:
    assert embeddings.offline_available()
    sims = embeddings.similarities("How long do I have to ask for a refund?",
                               ["Blenders ship in two to five days.",
                                "You can request a refund within 30 days of delivery."])
    assert sims[1] > 0.6 and sims[1] > sims[0] + 0.3


@pytest.mark.parametrize(("claim", "evidence"), [
    ("Gift cards are refundable.", "Digital downloads and gift cards are non-refundable."),
    ("Gift cards are valid after the expiry date.", "Gift cards are invalid after the expiry date."),
    ("The warranty stays valid if you open the device.", "Opening the device voids the warranty."),
    ("Express shipping is available to Alaska.", "Express shipping is not available to Alaska."),
    ("Returns are never accepted after 30 days.", "Returns are accepted after 30 days with a receipt."),
    ("You must return the item.", "You do not need to return the item."),
    ("Deleting your profile also cancels your subscription.",
     "Deleting your profile does not cancel your subscription, which must be cancelled separately."),
])
def test_a_flipped_policy_is_contradicted(claim: str, evidence: str) -> None:
    j = judge(claim, (evidence,))
    assert j.verdict == "contradicted" and j.score <= 0.1, j


@pytest.mark.parametrize(("claim", "evidence"), [
    ("Gift cards cannot be refunded.", "Digital downloads and gift cards are non-refundable."),
    ("Unopened items can be returned.", "Items that have not been opened can be returned."),
    ("You won't pay for shipping on orders over $50.", "Shipping is free on orders over $50."),
    ("If you have a subscription, you need to cancel it on its own.",
     "Deleting your profile does not cancel your subscription, which must be cancelled separately."),
])
def test_the_same_polarity_in_other_words_is_not_a_contradiction(claim: str, evidence: str) -> None:
    assert judge(claim, (evidence,)).verdict != "contradicted"


def test_a_faithful_rewording_passes_and_its_flip_fails() -> None:
    # "-able" is a derivation ("non-refundable" = "cannot be refunded", issue 34)
    faithful = judge("Gift cards cannot be refunded.", (POLICY,))
    flipped = judge("Gift cards are refundable.", (POLICY,))
    assert faithful.verdict == "supported" and faithful.score >= 0.7, faithful
    assert flipped.verdict == "contradicted" and flipped.score < 0.3


def test_an_invented_fact_stays_unsupported_in_any_words() -> None:
    j = judge("Refunds are paid in cash at any of our stores.", (POLICY,))
    assert j.verdict != "supported" and j.score < 0.5, j


def test_context_relevance_follows_meaning_not_shared_words() -> None:
    query = "How long do I have to ask for a refund?"
    answering = "You can request a refund within 30 days of delivery."
    distractor = "Refunds go to the original payment method; ask our team if you have questions about a refund."
    result, raw = classify(query, "", [answering, distractor])
    levels = [c.level for c in result.chunks]
    order = ["none", "low", "medium", "high"]
    assert levels[0] in ("high", "medium") and order.index(levels[0]) > order.index(levels[1])
    assert raw["chunks"][0]["similarity"] > raw["chunks"][1]["similarity"]
    assert result.missing == ()  # a chunk answers it: nothing is reported missing


@pytest.mark.parametrize(("text", "expected"), [
    ("Once your refund is approved, it goes back to your original card, and it usually shows up on your "
     "statement within about a week.", "Your refund usually shows up on your statement within about a week."),
    ("A 10% restocking fee applies to opened electronics and is deducted from your refund, unless the item was "
     "defective.", "A 10% restocking fee is deducted from your refund, unless the item was defective."),
    ("Our support team answers emails within 24 hours and can also help by phone.",
     "Our support team can also help by phone."),
    ("Points stay on the account that earned them and are valid for a year.", "Points are valid for a year."),
])
def test_claims_keep_their_subject(text: str, expected: str) -> None:
    assert extract_claims(text)[-1] == expected


def test_a_failing_reason_names_the_claims_that_pulled_it_down() -> None:
    claims = ["Shipping is free.", "Refunds take 60 days."]
    verdicts = [Verdict("supported", "every asserted word is in \"Shipping is free.\"", support=0.93),
                Verdict("contradicted", "the claim says 60 where the evidence says 30", support=0.02)]
    reason = claims_reason(claims, verdicts, passed=False, bad_word="not supported by the context")
    assert reason.startswith("2 claims, 1 not supported by the context: 'Refunds take 60 days.' contradicted")
    assert "support 0.02" in reason and "60 where the evidence says 30" in reason


def test_a_failing_reason_never_says_nothing_failed() -> None:
    """A score under a strict threshold whose claims the grader each labelled supported still names the weakest."""
    verdicts = [Verdict("supported", "closest in meaning (0.81)", support=0.78)]
    reason = claims_reason(["Gift cards cannot be refunded."], verdicts, passed=False,
                           bad_word="not supported by the context")
    assert "0 not supported" not in reason and "weakest: 'Gift cards cannot be refunded.'" in reason
    assert "support 0.78" in reason
    assert claims_reason(["A."], verdicts, passed=True, bad_word="x") == "1 claim, all supported"
