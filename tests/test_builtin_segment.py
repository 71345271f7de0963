"""Sentence and claim segmentation of the builtin grader."""

from __future__ import annotations

from evalrun.grading.builtin.segment import claims, resolved_sentences, sentences, subject_of


def test_sentences_respect_abbreviations_initials_and_decimals() -> None:
    text = "Dr. J. K. Rowling earned $3.5 million in 2020, e.g. from books. Sales rose 4.5%. Then she left."
    assert sentences(text) == [
        "Dr. J. K. Rowling earned $3.5 million in 2020, e.g. from books.",
        "Sales rose 4.5%.",
        "Then she left.",
    ]


def test_sentences_keep_closing_quotes_and_brackets() -> None:
    assert sentences('He said "It works." She agreed (mostly.) Done!') == [
        'He said "It works."', "She agreed (mostly.)", "Done!"]


def test_bullets_numbered_items_and_paragraphs_are_separate() -> None:
    text = "Features:\n- fast startup\n* small memory use\n1. typed API\n2) good docs\n\nA new paragraph"
    assert sentences(text) == ["Features:", "fast startup", "small memory use", "typed API", "good docs",
                               "A new paragraph"]


def test_wrapped_lines_join_into_one_sentence() -> None:
    assert sentences("The tower was completed\nin 1889 for the fair.") == [
        "The tower was completed in 1889 for the fair."]


def test_claims_resolve_pronouns_and_split_coordinated_clauses() -> None:
    text = ("The Eiffel Tower was completed in 1889. It was designed by Gustave Eiffel's company. "
            "The tower is 330 metres tall and was the tallest structure until 1930.")
    assert claims(text) == [
        "The Eiffel Tower was completed in 1889.",
        "The Eiffel Tower was designed by Gustave Eiffel's company.",
        "The tower is 330 metres tall.",
        "The tower was the tallest structure until 1930.",
    ]


def test_coordinated_verb_phrases_get_the_subject() -> None:
    assert claims("Anna falls in love with Tomas and she marries him.") == [
        "Anna falls in love with Tomas.", "Anna marries him."]
    assert claims("The tower was completed in 1889 and is 330 metres tall.") == [
        "The tower was completed in 1889.", "The tower is 330 metres tall."]
    # not at "and" + a few words + a verb: that split cut claims into fragments (benchmarks/grading/README.md)
    assert claims("It is outrageous that he and others like him are denied citizenship.") == [
        "It is outrageous that he and others like him are denied citizenship."]


def test_claims_split_at_semicolons_and_comma_conjunctions() -> None:
    assert claims("Sales rose in May; profits fell in June, but costs were flat.") == [
        "Sales rose in May.", "Profits fell in June.", "Costs were flat."]


def test_personal_pronouns_resolve_to_the_named_subject() -> None:
    text = ("A young doctor, Anna, moves to a village. The villagers distrust her at first. "
            "She falls in love with a teacher.")
    assert claims(text)[-1] == "Anna falls in love with a teacher."
    assert claims(text)[1] == "The villagers distrust her at first."  # object pronouns stay


def test_answer_particles_and_questions_are_dropped() -> None:
    assert claims("No, Python 3 was not backward compatible. Why? Because it changed strings.") == [
        "Python 3 was not backward compatible.", "Because it changed strings."]


def test_short_answers_stay_as_written() -> None:
    """The question is context for what a short answer means (verify() gets it), not text glued into the claim."""
    assert claims("Warsaw.", "Where was Marie Curie born?") == ["Warsaw."]


def test_question_topic_resolves_a_leading_pronoun() -> None:
    assert claims("She won it in 1911.", "When did Marie Curie win her second prize?") == [
        "Marie Curie won it in 1911."]


def test_no_claims_from_empty_or_contentless_text() -> None:
    assert claims("") == []
    assert claims("   \n\n") == []
    assert claims("Yes. Of course!") == []


def test_subject_heuristic() -> None:
    assert subject_of("Marie Curie was born in Warsaw") == "Marie Curie"
    assert subject_of("Hannah Lee scored twice") == "Hannah Lee"
    assert subject_of("Anna falls in love") == "Anna"
    assert subject_of("In 1903 she shared the prize") is None
    assert subject_of("It was designed by Eiffel") is None


def test_evidence_pronouns_are_resolved() -> None:
    assert resolved_sentences("Marie Curie was born in Warsaw. She moved to Paris.") == [
        "Marie Curie was born in Warsaw.", "Marie Curie moved to Paris."]


def test_markdown_is_cleaned_and_list_tails_are_not_clauses() -> None:
    text = ("## Summary\n\n1. **Python** was created by Guido van Rossum in 1991.\n"
            "2. It is used by Google, Netflix, and Dropbox.\n"
            "> Note: the `json` module parses JSON.\n```\nprint(1)\n```")
    assert claims(text) == [
        "Python was created by Guido van Rossum in 1991.",
        "Python is used by Google, Netflix, and Dropbox.",
        "Note: the json module parses JSON.",
    ]


def test_list_introductions_are_not_claims() -> None:
    assert claims("The main features are:\n- fast startup\n- small memory use") == [
        "Fast startup.", "Small memory use."]


def test_cjk_full_sentence_is_not_a_bare_answer() -> None:
    """In scripts without spaces a whole sentence is one token: only a really short answer is joined."""
    assert claims("東京は日本の首都です。", "日本の首都は？") == ["東京は日本の首都です。"]
    assert claims("東京", "日本の首都は？") == ["東京."]
