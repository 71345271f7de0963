"""The lexical entailment scorer: supported / contradicted / unsupported, scores and attribution."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from evalrun.grading.builtin import attributes, judge, support_score
from evalrun.grading.builtin.grader import CONTRADICTED_MAX, SUPPORT_THRESHOLD

CURIE = ("Marie Curie was born in Warsaw in 1867. She moved to Paris in 1891 to study physics and mathematics "
         "at the Sorbonne. In 1903 she shared the Nobel Prize in Physics with Pierre Curie and Henri Becquerel. "
         "She won a second Nobel Prize, in Chemistry, in 1911.")
ACME = ("Acme Corp reported revenue of $4.2 billion for the 2023 fiscal year, up 12% from the previous year. "
        "Net income fell to $310 million because of higher interest costs.")


@pytest.mark.parametrize("claim", [
    "Marie Curie was born in Warsaw.",
    "In 1903 Curie shared the Nobel Prize in Physics.",
    "Marie Curie won a second Nobel Prize in 1911.",
    "Curie moved to Paris in 1891.",
    "Acme reported revenue of $4.2 billion for 2023.",
])
def test_supported(claim: str) -> None:
    j = judge(claim, [CURIE, ACME])
    assert j.verdict == "supported", j.reason
    assert j.score >= SUPPORT_THRESHOLD


@pytest.mark.parametrize(("claim", "reason_part"), [
    ("Marie Curie was born in Warsaw in 1876.", "1876 where the evidence says 1867"),
    ("Acme's revenue for fiscal 2023 was $4.8 billion.", "$4.8 billion where the evidence says $4.2 billion"),
    ("Marie Curie never won a second Nobel Prize.", "negates"),
    ("Net income rose to $310 million.", "rose"),
])
def test_contradicted_only_where_precise(claim: str, reason_part: str) -> None:
    j = judge(claim, [CURIE, ACME])
    assert j.verdict == "contradicted", j.reason
    assert reason_part in j.reason
    assert j.score <= CONTRADICTED_MAX


@pytest.mark.parametrize(("claim", "evidence"), [
    ("Marie Curie was born in Krakow.", "Marie Curie was born in Warsaw in 1867."),
    ("Osaka is the capital of Japan.", "Tokyo is the capital of Japan."),
    ("Berlin is the capital of France.", "Paris is the capital of France."),
    ("Łódź is the capital of Poland.", "Warsaw is the capital of Poland."),
    ("Bergen is the capital of Norway.", "Oslo is the capital of Norway and its largest city."),
])
def test_a_swapped_name_is_unsupported_not_contradicted(claim: str, evidence: str) -> None:
    """A name the evidence does not have is not backed; calling it a contradiction was often wrong on real text
    (benchmarks/grading/README.md), so it is `unsupported`, with a low score."""
    j = judge(claim, [evidence])
    assert j.verdict == "unsupported", j.reason
    assert j.score < SUPPORT_THRESHOLD
    assert judge(evidence, [evidence]).verdict == "supported"


def test_date_swap_in_other_order_is_contradicted() -> None:
    evidence = ["The Apollo 11 mission landed on the Moon on 20 July 1969."]
    assert judge("Apollo 11 landed on the Moon on July 20, 1969.", evidence).verdict == "supported"
    assert judge("Apollo 11 landed on the Moon on 21 July 1969.", evidence).verdict == "contradicted"
    j = judge("Apollo 11 landed on the Moon on 20 August 1969.", evidence)
    assert j.verdict == "contradicted" and "August" in j.reason


@pytest.mark.parametrize("claim", [
    "Marie Curie's father taught mathematics in Poland.",  # material nowhere in the evidence
    "JavaScript is also popular.",
    "Curie was the first woman to teach at a university in Lyon.",
])
def test_unsupported(claim: str) -> None:
    assert judge(claim, [CURIE]).verdict == "unsupported"


def test_an_added_word_costs_less_than_a_replaced_one() -> None:
    exact = support_score("Curie was born in Warsaw in 1867.", CURIE)
    added = support_score("Curie was born in the city of Warsaw in 1867.", CURIE)  # "city" added between
    replaced = support_score("Curie was born in the city in 1867.", CURIE)  # "city" where "Warsaw" stood
    assert exact > added > replaced


def test_negation_in_another_clause_does_not_contradict() -> None:
    evidence = ["The researchers said the results have not been replicated, and the process is too slow."]
    assert judge("The process is too slow.", evidence).verdict == "supported"


def test_score_orders_supported_above_unsupported_above_contradicted() -> None:
    good = support_score("Marie Curie was born in Warsaw in 1867.", CURIE)
    added = support_score("Marie Curie was born in Warsaw to a family of teachers.", CURIE)
    wrong = support_score("Marie Curie was born in Warsaw in 1876.", CURIE)
    assert 1.0 >= good > added > wrong >= 0.0


def test_short_answer_read_with_its_question_and_every_claim_word_verified() -> None:
    """A short answer is checked for what it says; a full sentence has every word checked, question or not."""
    context = ["The Oberoi Group is a hotel company with its head office in Delhi."]
    assert judge("Delhi", context).verdict == "supported"
    j = judge("The Oberoi family's hotel company is based in Mumbai.", context)
    assert j.verdict == "unsupported" and j.reason.startswith("Mumbai, ") and "not in the context" in j.reason


WARRANTY = ("All electronics come with a one-year limited warranty that covers manufacturing defects. "
            "Accidental damage is not covered by the warranty.")


@pytest.mark.parametrize("query", [None, "Does the warranty cover accidental damage to electronics?"])
def test_question_is_not_evidence_a_flip_fails_when_the_question_names_it(tmp_path: Path,
                                                                         query: str | None) -> None:
    """Issue 34: with a query naming exactly what the policy negates, the flipped answer passed (0.77, "every
    asserted word is in" a sentence that says nothing about accidental damage). Through the engine."""
    from evalrun.api import evaluate

    cfg = tmp_path / "evalrun.yaml"
    cfg.write_text(yaml.safe_dump({
        "prompts": ["{{answer}}"], "providers": ["echo"],
        "tests": [{"vars": {"answer": "Accidental damage is covered by the one-year limited warranty.",
                            "context": WARRANTY, **({"query": query} if query else {})},
                   "assert": [{"type": "faithfulness"}]}]}))
    [row] = list(evaluate(cfg, results_file=tmp_path / "r.jsonl").iter_results())
    assert row["status"] == "fail"
    [claim] = row["assertions"][0]["details"]["claims"]
    assert claim["verdict"] == "contradicted"
    assert "Accidental damage is not covered by the warranty." in claim["reason"]


@pytest.mark.parametrize("claim, evidence", [
    # the claim restates the negated clause with detail from elsewhere
    ("Accidental damage is covered by the one-year limited warranty.", WARRANTY),
    ("You must return the damaged item before we send a replacement.",
     "You do not need to return the damaged item. We will send a replacement at no cost."),
])
def test_a_flipped_clause_the_claim_restates_is_a_contradiction(claim: str, evidence: str) -> None:
    j = judge(claim, [evidence])
    assert j.verdict == "contradicted" and j.score <= CONTRADICTED_MAX


def test_same_polarity_in_other_negations_is_not_a_contradiction() -> None:
    j = judge("Anything marked final sale isn't eligible for a return or an exchange.",
              ["Final-sale items cannot be returned or exchanged."])
    assert j.verdict != "contradicted"


def test_a_universal_claim_needs_universal_evidence() -> None:
    """"for all returns" where the evidence says "for defective or incorrect items": not supported."""
    evidence = ["We provide a prepaid return label for defective or incorrect items."]
    j = judge("We provide a prepaid return label for all returns.", evidence)
    assert j.verdict == "unsupported" and "all not in the context" in j.reason
    assert judge("We provide a prepaid return label for every return.",
                 ["We provide a prepaid return label for all returns."]).verdict == "supported"


def test_a_supported_reason_quotes_a_sentence_that_carries_the_claim_alone() -> None:
    """The quoted sentence is the one that decided: a claim judged supported is supported by that sentence alone,
    and when the reason says "every asserted word is in" it, that sentence alone verifies every word (the
    support-bot dev answers, each claim against its policy; the question is never evidence)."""
    from benchmarks.grading import supportbot
    from evalrun.grading.builtin.segment import claims as split_claims
    from evalrun.grading.builtin.segment import resolved_sentences

    checked = 0
    for item in supportbot.items("dev"):
        for claim in split_claims(item["answer"], item["question"]):
            j = judge(claim, [item["context"]])
            if j.verdict != "supported" or j.reason.startswith("the evidence says it verbatim"):
                continue
            quoted = j.reason.split('"')[1].rstrip("\u2026")
            sentence = next(s for s in resolved_sentences(item["context"]) if s.startswith(quoted))
            alone = judge(claim, [sentence])
            assert alone.verdict == "supported", (claim, j.reason)
            if j.reason.startswith("every asserted word is in"):
                assert alone.reason.startswith("every asserted word is in"), (claim, alone.reason)
                checked += 1
    assert checked >= 5


def test_empty_claim_and_empty_evidence() -> None:
    assert judge("", [CURIE]).verdict == "unsupported"
    assert judge("Marie Curie was born in Warsaw.", []).verdict == "unsupported"
    assert judge("Marie Curie was born in Warsaw.", [""]).verdict == "unsupported"


def test_evidence_items_point_at_the_supporting_text() -> None:
    j = judge("Net income fell to $310 million.", [CURIE, ACME])
    assert j.verdict == "supported"
    assert 1 in j.items


def test_deterministic() -> None:
    a = [judge(c, [CURIE]) for c in ("Curie was born in Krakow.", "Curie moved to Paris.")]
    b = [judge(c, [CURIE]) for c in ("Curie was born in Krakow.", "Curie moved to Paris.")]
    assert a == b


def test_attribution_is_lenient_on_entities_but_not_on_contradictions() -> None:
    chunks = ["Python is a high-level programming language known for its simplicity and readability.",
              "JavaScript is used for web development. Java requires compilation.",
              "Python supports multiple programming paradigms including procedural and object-oriented.",
              "Ruby was created by Yukihiro Matsumoto in 1995."]
    assert [attributes("JavaScript is also popular.", c) for c in chunks] == [False, True, False, False]
    assert [attributes("Python is a high-level language.", c) for c in chunks] == [True, False, False, False]
    assert attributes("Ruby was created by Yukihiro Matsumoto in 1993.", chunks[3]) is False
    assert judge("JavaScript is also popular.", [chunks[1]]).verdict == "unsupported"


def test_long_context_finds_the_needle() -> None:
    filler = " ".join(f"Report {i} covered topic number {i} in the archive." for i in range(2000))
    evidence = [filler + " The harbour in Valletta was rebuilt in 1952. " + filler]
    assert judge("The harbour in Valletta was rebuilt in 1952.", evidence).verdict == "supported"
    assert judge("The harbour in Valletta was rebuilt in 1962.", evidence).verdict == "contradicted"


def test_negation_must_bear_on_a_word_of_the_claim() -> None:
    evidence = ["The new version was released in May and was not backward compatible with the old one."]
    assert judge("The new version was released in May.", evidence).verdict == "supported"
    assert judge("The new version was backward compatible with the old one.", evidence).verdict == "contradicted"


def test_number_checked_against_the_sentence_about_the_claim() -> None:
    evidence = ["The city proper has about 2 million residents. The wider metropolitan area is home to more than "
                "5 million people."]
    assert judge("About 2 million people live in the metropolitan area.", evidence).verdict != "supported"
    assert judge("More than 5 million people live in the metropolitan area.", evidence).verdict != "contradicted"


def test_a_proportion_is_not_compared_with_a_count() -> None:
    evidence = ["The works will last about eighteen months."]
    assert judge("The works will last about half a year.", evidence).verdict != "contradicted"


CANBERRA = ("Canberra is the capital city of Australia. It was selected as the capital in 1908 as a compromise "
            "between Sydney and Melbourne.")
PYTHON = "Python was created by Guido van Rossum and first released in 1991. Python 3.0 came out in 2008."


def test_claim_stated_word_for_word_is_supported_despite_another_sentence() -> None:
    j = judge("Canberra is the capital city of Australia.", [CANBERRA])
    assert j.verdict == "supported", j.reason
    assert judge("Canberra is the capital city of Australia.", list(reversed(CANBERRA.split(". ", 1)))
                 ).verdict == "supported"
    assert judge("Canberra is not the capital city of Australia.", [CANBERRA]).verdict == "contradicted"


@pytest.mark.parametrize("evidence", [
    ["The Eiffel Tower was completed in 1889. It was built as the entrance arch to the 1889 World's Fair, which "
     "was held in Paris to mark the centenary of the French Revolution."],
    ["Mount Everest is the highest mountain on Earth. Its summit was first reached in 1953 by Edmund Hillary "
     "and Tenzing Norgay of Nepal."],
    [CURIE, ACME],
])
def test_every_sentence_of_the_evidence_supports_itself(evidence: list[str]) -> None:
    """Extractive answers: each evidence sentence, judged as a claim against the evidence, is supported."""
    from evalrun.grading.builtin.segment import claims

    for text in evidence:
        for claim in claims(text):
            j = judge(claim, evidence)
            assert j.verdict == "supported", (claim, j.reason)


@pytest.mark.parametrize(("claim", "evidence", "said"), [
    ("Python 3.0 was released in 1991.", PYTHON, "1991 where the evidence says 2008"),
    ("Python was first released in 2008.", PYTHON, "2008 where the evidence says 1991"),
    # a sentence on the same subject that has the claim's year, but not its predicate, does not excuse it
    ("Python was created in 2008.", "Python was created in 1991. Python became popular in 2008.",
     "2008 where the evidence says 1991"),
])
def test_number_swaps_between_sentences_stay_contradicted(claim: str, evidence: str, said: str) -> None:
    j = judge(claim, [evidence])
    assert j.verdict == "contradicted" and said in j.reason, j.reason


def test_claim_repeating_the_evidence_verbatim_is_supported_in_any_script() -> None:
    for text in ("東京は日本の首都です。", "서울은 한국의 수도입니다.", "Warsaw is the capital of Poland."):
        j = judge(text, [text])
        assert j.verdict == "supported", j.reason
        assert j.score == 1.0


@pytest.mark.parametrize(("claim", "evidence", "contradicted"), [
    # a name with a number is not a quantity
    ("The clinic confirmed more than 40 COVID-19 cases.", "The clinic has confirmed 45 cases of COVID-19.", False),
    # dates as bounds, in calendar order
    ("The store opened before May 10, 2021.", "The store opened on 3 May 2021.", False),
    ("The store opened after May 10, 2021.", "The store opened on 3 May 2021.", True),
    ("The store opened before 2019.", "The store opened in 2021.", True),
    # decades
    ("The bridge was built in the 1910s.", "The bridge was built in 1915.", False),
    ("The bridge was built in the 1930s.", "The bridge was built in 1915.", True),
    # a bound in the evidence decides only what lies beyond it
    ("The film grossed more than $100 million.", "The film grossed over $133 million.", False),
    ("The film grossed less than $100 million.", "The film grossed over $133 million.", True),
    ("The film grossed less than $100 million.", "The film grossed over $85 million.", False),
    # a word negated about one thing and affirmed about another is no polarity flip
    ("The city will run buses at weekend levels.",
     "The city will run buses at weekend levels, with ferries not running and trams running as usual.", False),
])
def test_quantities_dates_and_scope_contradict_only_when_excluded(claim: str, evidence: str,
                                                                   contradicted: bool) -> None:
    j = judge(claim, [evidence])
    assert (j.verdict == "contradicted") is contradicted, j


def test_words_that_only_look_negated_or_numeric_are_not_flips() -> None:
    film = ('Vincenzo Natali is a film director best known for the films "Cube", "Nothing", and "Splice".')
    assert judge("Vincenzo Natali.", [film]).verdict != "contradicted"  # a title is no negation
    firm = "The Zale Corporation is an American jewelry retailer, incorporated in Delaware in 1993."
    assert judge("Zale Corporation.", [firm]).verdict != "contradicted"  # in- negates adjectives, not "incorporated"
    born = "James Chaney (May 30, 1943 - June 21, 1964) was one of three civil rights workers."
    assert judge("May 30, 1943.", [born]).verdict == "supported"  # a first "May" before a number is the month
    j = judge("Kingsley has acted for 40 years.", ["Kingsley is an actor with a career spanning over 40 years."])
    assert j.verdict == "contradicted" and "more than 40" in j.reason  # the reason quotes the bound


def test_both_sides_negating_the_same_word_agree() -> None:
    evidence = ["The grand jury's decision not to indict means the officers won't face charges."]
    assert judge("A grand jury has decided not to indict the officers.", evidence).verdict != "contradicted"


@pytest.mark.parametrize(("claim", "evidence"), [
    ("You'll get a reply within one hour.", "Every message gets a reply within 60 minutes."),
    ("Unfortunately, there's a fee for late returns.", "There is a fee for late returns."),
    ("Sorry, we're closed on Sundays.", "We are closed on Sundays."),
])
def test_contractions_courtesies_and_units_are_not_asserted_words(claim: str, evidence: str) -> None:
    j = judge(claim, [evidence])
    assert j.verdict == "supported" and j.score >= 0.5, j
