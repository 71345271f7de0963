"""The lexical entailment scorer: supported / contradicted / unsupported, scores and attribution."""

from __future__ import annotations

import pytest

from evalrun.grading.builtin import SUPPORT_THRESHOLD, attributes, judge, support_score

CURIE = ("Marie Curie was born in Warsaw in 1867. She moved to Paris in 1891 to study physics and mathematics "
         "at the Sorbonne. In 1903 she shared the Nobel Prize in Physics with Pierre Curie and Henri Becquerel. "
         "She won a second Nobel Prize, in Chemistry, in 1911.")
ACME = ("Acme Corp reported revenue of $4.2 billion for the 2023 fiscal year, up 12% from the previous year. "
        "Net income fell to $310 million because of higher interest costs.")


@pytest.mark.parametrize("claim", [
    "Marie Curie was born in Warsaw.",
    "Curie was born in the city of Warsaw in 1867.",
    "Marie Curie won a second Nobel Prize in 1911.",
    "Curie moved to Paris in 1891.",
    "Acme's revenue for fiscal 2023 was 4.2 billion dollars.",
])
def test_supported(claim: str) -> None:
    j = judge(claim, [CURIE, ACME])
    assert j.verdict == "supported", j.reason
    assert j.score >= SUPPORT_THRESHOLD


@pytest.mark.parametrize(("claim", "reason_part"), [
    ("Marie Curie was born in Warsaw in 1876.", "1876"),  # year swap
    ("Acme's revenue for fiscal 2023 was $4.8 billion.", "$4.8 billion where the evidence says $4.2 billion"),
    ("Marie Curie was born in Krakow.", "Krakow"),  # entity swap
    ("Marie Curie never won a second Nobel Prize.", "negates"),  # negation
    ("Net income rose to $310 million.", "rose"),  # antonym
    ("Curie won her second Nobel Prize in 1911, in Physics.", "Physics"),  # entity in the matching clause
])
def test_contradicted(claim: str, reason_part: str) -> None:
    j = judge(claim, [CURIE, ACME])
    assert j.verdict == "contradicted", j.reason
    assert reason_part in j.reason


def test_date_swap_in_other_order_is_contradicted() -> None:
    evidence = ["The Apollo 11 mission landed on the Moon on 20 July 1969."]
    assert judge("Apollo 11 landed on the Moon on July 20, 1969.", evidence).verdict == "supported"
    assert judge("Apollo 11 landed on the Moon on 21 July 1969.", evidence).verdict == "contradicted"
    j = judge("Apollo 11 landed on the Moon on 20 August 1969.", evidence)
    assert j.verdict == "contradicted" and "August where the evidence says July" in j.reason


@pytest.mark.parametrize("claim", [
    "Marie Curie's father taught mathematics in Poland.",  # material nowhere in the evidence
    "JavaScript is also popular.",
    "Curie was the first woman to teach at a university in Lyon.",
])
def test_unsupported(claim: str) -> None:
    assert judge(claim, [CURIE]).verdict == "unsupported"


def test_negation_in_another_clause_does_not_contradict() -> None:
    evidence = ["The researchers said the results have not been replicated, and the process is too slow."]
    assert judge("The process is too slow.", evidence).verdict == "supported"


def test_score_orders_supported_above_unsupported_above_contradicted() -> None:
    good = support_score("Marie Curie was born in Warsaw in 1867.", CURIE)
    added = support_score("Marie Curie was born in Warsaw to a family of teachers in Poland.", CURIE)
    wrong = support_score("Marie Curie was born in Krakow in 1867.", CURIE)
    assert good > added > wrong >= 0.0
    assert good <= 1.0


def test_empty_claim_and_empty_evidence() -> None:
    assert judge("", [CURIE]).verdict == "unsupported"
    assert judge("Marie Curie was born in Warsaw.", []).verdict == "unsupported"
    assert judge("Marie Curie was born in Warsaw.", [""]).verdict == "unsupported"


def test_evidence_items_point_at_the_supporting_text() -> None:
    j = judge("Net income fell to $310 million.", [CURIE, ACME])
    assert j.items == (1,)


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
    # verification stays strict: popularity is not stated anywhere
    assert judge("JavaScript is also popular.", [chunks[1]]).verdict == "unsupported"


def test_long_context_finds_the_needle() -> None:
    filler = " ".join(f"Report {i} covered topic number {i} in the archive." for i in range(2000))
    evidence = [filler + " The harbour in Valletta was rebuilt in 1952. " + filler]
    assert judge("The harbour in Valletta was rebuilt in 1952.", evidence).verdict == "supported"
    assert judge("The harbour in Valletta was rebuilt in 1962.", evidence).verdict == "contradicted"


# --- checks from word order, substitution, negation scope and negative prefixes -------------------------------

MATCH = "Northgate United beat Eastfield Rovers 2-0 in the county final. Their coach, Ruth Adams, praised the defence."
FERRY = ("The ferry company Blue Line bought the rival operator Seaways in 2019. "
         "Oslo is the capital of Norway and its largest city. Ferries leave Oslo for Kiel every day.")


def test_role_swap_between_two_names_is_contradicted() -> None:
    assert judge("Northgate United beat Eastfield Rovers 2-0 in the county final.", [MATCH]).verdict == "supported"
    j = judge("Eastfield Rovers beat Northgate United 2-0 in the county final.", [MATCH])
    assert j.verdict == "contradicted" and "other way round" in j.reason
    j = judge("Seaways bought Blue Line in 2019.", [FERRY])
    assert j.verdict == "contradicted"


def test_passive_rewording_is_not_a_role_swap() -> None:
    assert judge("Seaways was bought by Blue Line in 2019.", [FERRY]).verdict == "supported"
    assert judge("Eastfield Rovers were beaten by Northgate United 2-0 in the county final.",
                 [MATCH]).verdict != "contradicted"


def test_unknown_name_in_place_of_the_evidence_subject_is_contradicted() -> None:
    j = judge("Bergen is the capital of Norway.", [FERRY])
    assert j.verdict == "contradicted" and "Oslo" in j.reason


def test_negation_must_bear_on_a_word_of_the_claim() -> None:
    evidence = ["The new version was released in May and was not backward compatible with the old one."]
    assert judge("The new version was released in May.", evidence).verdict == "supported"
    assert judge("The new version was backward compatible with the old one.", evidence).verdict == "contradicted"


def test_negative_prefix_reads_as_negation() -> None:
    evidence = ["The vaccine was effective in older patients, and the trial was complete."]
    assert judge("The vaccine was ineffective in older patients.", evidence).verdict == "contradicted"
    assert judge("The vaccine was effective in older patients.", evidence).verdict == "supported"


def test_number_checked_against_the_sentence_about_the_claim() -> None:
    evidence = ["The city proper has about 2 million residents. The wider metropolitan area is home to more than "
                "5 million people."]
    assert judge("About 2 million people live in the metropolitan area.", evidence).verdict == "contradicted"
    assert judge("More than 5 million people live in the metropolitan area.", evidence).verdict == "supported"


def test_a_proportion_is_not_compared_with_a_count() -> None:
    evidence = ["The works will last about eighteen months."]
    assert judge("The works will last about half a year.", evidence).verdict != "contradicted"


# --- a sentence that states the claim wins; numbers are checked against the sentence about the claim's subject ---

CANBERRA = ("Canberra is the capital city of Australia. It was selected as the capital in 1908 as a compromise "
            "between Sydney and Melbourne.")
PYTHON = "Python was created by Guido van Rossum and first released in 1991. Python 3.0 came out in 2008."


def test_claim_stated_word_for_word_is_supported_despite_another_sentence() -> None:
    # rag-app example: the second sentence ("Canberra was selected ... Sydney and Melbourne" after pronoun
    # resolution) named other cities; the first sentence says the claim verbatim
    j = judge("Canberra is the capital city of Australia.", [CANBERRA])
    assert j.verdict == "supported", j.reason
    assert "Canberra is the capital city of Australia." in j.reason
    assert judge("Canberra was selected as the capital in 1908 as a compromise between Sydney and Melbourne.",
                 [CANBERRA]).verdict == "supported"
    # the same evidence as separate chunks, and the claim's sentence second
    assert judge("Canberra is the capital city of Australia.", list(reversed(CANBERRA.split(". ", 1)))
                 ).verdict == "supported"


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


def test_stating_sentence_still_checks_its_own_polarity_and_roles() -> None:
    assert judge("Canberra is not the capital city of Australia.", [CANBERRA]).verdict == "contradicted"
    evidence = ["Canberra is the capital of Australia, but it is not the largest city."]
    assert judge("Canberra is the capital of Australia.", evidence).verdict == "supported"
    assert judge("Canberra is not the capital of Australia.", evidence).verdict == "contradicted"
    assert judge("Eastfield Rovers beat Northgate United 2-0 in the county final.", [MATCH]).verdict == "contradicted"


def test_number_is_checked_against_the_sentence_about_the_claims_subject() -> None:
    # rag-app example: "Python" + "released" matched the first sentence better by words, but the second is
    # about Python 3.0 and carries 2008
    j = judge("Python 3.0 was released in 2008.", [PYTHON])
    assert j.verdict == "supported", j.reason
    assert judge("Python was created by Guido van Rossum and first released in 1991.", [PYTHON]).verdict == "supported"


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


@pytest.mark.parametrize(("claim", "evidence"), [
    ("Osaka is the capital of Japan.", "Tokyo is the capital of Japan."),
    ("Berlin is the capital of France.", "Paris is the capital of France."),
    ("Łódź is the capital of Poland.", "Warsaw is the capital of Poland."),
    ("Киев — столица России.", "Москва — столица России."),
])
def test_swapped_sentence_initial_name_is_contradicted(claim: str, evidence: str) -> None:
    """A name in first position is still a name: swapped for the evidence's, the claim is contradicted."""
    j = judge(claim, [evidence])
    assert j.verdict == "contradicted", j.reason
    assert support_score(claim, evidence) < SUPPORT_THRESHOLD
    assert judge(evidence, [evidence]).verdict == "supported"


def test_sentence_initial_name_missing_from_evidence_is_not_supported() -> None:
    j = judge("Osaka is a large city in Japan.", ["Japan is a large country. Its capital city is Tokyo."])
    assert j.verdict != "supported", j.reason
    # an ordinary word at the start of a sentence is not a name
    assert judge("Researchers found that sleep improves memory.",
                 ["Scientists found that sleep improves memory."]).verdict == "supported"


def test_claim_repeating_the_evidence_verbatim_is_supported_in_any_script() -> None:
    for text in ("東京は日本の首都です。", "서울은 한국의 수도입니다.", "Warsaw is the capital of Poland."):
        j = judge(text, [text])
        assert j.verdict == "supported", j.reason
        assert j.score == 1.0
