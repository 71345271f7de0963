"""Sentence and claim segmentation for the builtin grader: `sentences`, `resolved_sentences` (leading pronouns
resolved, for evidence) and `claims` (short self-contained claims). What it copes with and what it drops:
docs/builtin-grader.md, "What it does, step by step"."""

from __future__ import annotations

import re

from evalrun.grading.builtin.lexicon import words
from evalrun.grading.builtin.terms import Token, tokenize

_ABBREVIATIONS = frozenset(
    ["mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "mt", "ft", "vs", "etc", "e.g", "i.e", "eg", "ie", "inc", "ltd", "co", "corp", "no", "nos", "fig", "figs", "approx", "dept", "est", "gen", "col", "lt", "sgt", "capt", "rev", "gov", "sen", "rep", "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec", "u.s", "u.k", "u.n", "a.m", "p.m", "ca", "cf", "al", "op", "vol", "pp", "ed", "eds"]
)
_BULLET_RE = re.compile(r"^\s*(?:[-*\u2022\u2023\u25aa\u25cf\u2013]|\(?\d{1,3}[.)]|\(?[a-zA-Z][.)])\s+")
_HEADING_RE = re.compile(r"^\s*#{1,6}\s")  # markdown headings are titles, not claims
_FENCE_RE = re.compile(r"^\s*(?:```|~~~)")
_QUOTE_RE = re.compile(r"^\s*(?:>\s?)+")
_EMPHASIS_RE = re.compile(r"\*\*|__|`")
_BOUNDARY_RE = re.compile(r"([.!?\u2026]+)([\"'\u201d\u2019)\]]*)(\s+)(?=[\"'\u201c\u2018(\[]?[A-Z0-9])")
#: A short label before a colon opening a sentence ("Note: ...", "Dean Obeidallah: ..."): not part of the claim.
_LABEL_RE = re.compile(r"^(?:[A-Z][\w.'-]*\s){0,2}[A-Z][\w.'-]*:\s+(?=[A-Z\"'\u201c])")
_TAG_STARTS = words("have has had right ok okay no")  # besides _WH: "..., have you seen it?", "..., right?"
_GLUED_STOP_RE = re.compile(r"(?<=[a-z0-9)\]])\.(?=[A-Z][a-z])")
#: A line ending in one of these continues on the next line (otherwise an unpunctuated line is a sentence).
_CONTINUES = tuple(",;:-([/&") + ("and", "or", "the", "a", "of", "to", "in")
#: Statements about the context or the answerer rather than the world: not factual claims.
_ABOUT_CONTEXT_RE = re.compile(
    r"\b(?:the |this |that )?(?:provided |given )?(?:context|passage|text|document|documents|evidence|article|"
    r"information|sources?)(?: provided| given| above)? (?:does not|doesn't|do not|don't|did not|cannot|can't|"
    r"fails? to) (?:state|say|mention|specify|provide|include|contain|indicate|give|tell)\b|"
    r"\b(?:is|are|was|were) not (?:mentioned|stated|specified|given|provided) in the "
    r"(?:context|passage|text|document|article|information)\b|"
    r"\bthere is no (?:information|mention)\b|\bI (?:do not|don't) know\b", re.I)
#: A negative yes/no question asks for agreement with the positive ("Isn't Tony Parker married to Eva
#: Longoria?" claims that he is): its "n't" is dropped.
_NEGATIVE_QUESTION_RE = re.compile(r"^(is|are|was|were|do|does|did|has|have|had|can|could|would|will|should)n't\b",
                                   re.I)
#: A claim about the speaker ("I agree", "I'm not sure", "I love that film") that names nothing (no name or
#: number) states an attitude, not a fact the context could support.
_FIRST_PERSON = frozenset({"i", "i'm", "i've", "i'd", "i'll", "me", "my"})
#: The speaker and the listener: never the topic a later pronoun stands for.
_SPEAKERS = frozenset({"i", "you", "we", "me", "us"})
_WORD_BEFORE_RE = re.compile(r"([A-Za-z][A-Za-z.]*)$")
_PARTICLE_RE = re.compile(r"^(?:(?:yes|no|yeah|nope|sure|correct|indeed|in short|in summary|overall|"
                          r"to summarise|to summarize|in conclusion)\s*[,.:;!-]+\s*|"
                          r"(?:yes|no|yeah|nope)\s+(?=(?:it|he|she|they|we|you|i|that|this)\b))", re.I)
_FILLER_RE = re.compile(r"^(?:of course|certainly|sure|thanks?(?: you)?|great question|good question|"
                        r"(?:i )?hope (?:this|that) helps|let me know if [^.!?]*|here is [^.!?]*:?)\s*[.!:]*$", re.I)
#: Claims split at semicolons, contrastive conjunctions, ", and" before a clause, and "and" before a pronoun or an
#: auxiliary ("... in 1889 and is 330 metres tall"). Not at "and" + a few words + a verb: that split cut "he and
#: others like him are denied" into fragments and made the grader worse on the benchmark.
_CLAUSE_SPLIT_RE = re.compile(r"(\s*;\s+|,\s+(?:but|while|whereas|although|though|yet)\s+|"
                              r"\s+(?:and|but|whereas)\s+(?=(?:it|he|she|they|its|his|her|their|was|were|is|"
                              r"are|has|have|had|will|would|can|could|did|does|should|may|might|must)\b))")
_AUX = words("is are was were has have had will would can could did does do should may might must shall be been")
_SUBJECT_PRONOUNS = {"it": "", "he": "", "she": "", "they": "", "its": "'s", "his": "'s",
                     "her": "'s", "their": "'s"}
_PREPOSITIONS = words("in on at by for with from to after before during since until under over according")
_WH = words("what where when who whom whose which why how did does do is are was were can could will would should")
_MAX_SUBJECT_WORDS = 8
_PERSONAL = frozenset({"he", "she", "his", "her"})
_DETERMINERS = words("the a an this that these those our your my their")
#: Words a subject never ends with: a cut there went past the verb.
_DANGLING = words("that which who whom whose") | _PREPOSITIONS | _DETERMINERS
#: Words that open a subordinate clause: not part of its subject ("Once your refund is approved").
_SUBORDINATORS = words("once when whenever if after before because since although though while unless until as")


def sentences(text: str) -> list[str]:
    """Split `text` into sentences (list items, paragraphs and unpunctuated lines are sentences of their own; a
    full stop glued to the next sentence, "in 1846.First for Women", is a boundary)."""
    if "." in text:
        text = _GLUED_STOP_RE.sub(". ", text)
    return [s for block in _blocks(text) for s in _split_block(block)]


def _blocks(text: str) -> list[str]:
    blocks: list[list[str]] = [[]]  # the lines of each block; an empty list starts the next one
    in_code = False
    for line in text.splitlines():
        if _FENCE_RE.match(line):  # code blocks hold no factual claims to check
            in_code = not in_code
            line = ""
        if in_code:
            continue
        line = _EMPHASIS_RE.sub("", _QUOTE_RE.sub("", line))
        m = _BULLET_RE.match(line)
        if not line.strip() or _HEADING_RE.match(line):
            blocks.append([])
        elif m:
            blocks.append([line[m.end():].strip()])
        else:
            current = blocks[-1]
            if current and not current[-1].rstrip("\"')\u201d").endswith(_CONTINUES) and line.lstrip()[:1].isupper():
                blocks.append([])  # a line without closing punctuation ends its sentence
            blocks[-1].append(line.strip())
    return [" ".join(b) for b in blocks if b]


def _split_block(block: str) -> list[str]:
    out: list[str] = []
    start = 0
    for m in _BOUNDARY_RE.finditer(block):
        if m.group(1) == "." and _is_abbreviation(block[start:m.start()]):
            continue
        piece = block[start:m.end(2)].strip()
        if piece:
            out.append(piece)
        start = m.end()
    tail = block[start:].strip()
    if tail:
        out.append(tail)
    return out


def _claim_in_question(sent: str) -> str:
    """The statement a question carries, or "": the part before a tag question ("He produced Snow White, have you
    watched it?" -> "He produced Snow White"), or a question that names something (an entity or number: "Do you
    like it because of its author Stephen King?") as it stands; a question naming nothing carries no claim."""
    head, sep, tag = sent.rpartition(",")
    if sep and len(tag.split()) <= 5 and tag.split() and tag.split()[0].lower() in _WH | _TAG_STARTS:
        return head.strip()
    toks = tokenize(sent)
    if any(t.kind in ("num", "year") or (t.capital and not t.initial and t.kind == "word") for t in toks):
        return _NEGATIVE_QUESTION_RE.sub(r"\1", sent.rstrip("?\uff1f \"'"))
    return ""


def _about_the_speaker(clause: str, toks: tuple[Token, ...]) -> bool:
    """Is the clause the speaker's attitude rather than a fact (see _FIRST_PERSON)?"""
    first = clause.split(" ", 1)[0].lower().replace("\u2019", "'").strip(",")
    return first in _FIRST_PERSON and not any(t.kind in ("num", "year", "month") or (t.capital and not t.initial and t.kind == "word")
                   for t in toks)


def _is_abbreviation(before: str) -> bool:
    m = _WORD_BEFORE_RE.search(before)
    if not m:
        return False
    word = m.group(1)
    initial = len(word) == 1 and word.isupper()  # "J. K. Rowling"
    return initial or word.lower().rstrip(".") in _ABBREVIATIONS or ("." in word and len(word) <= 5)


def subject_of(clause: str) -> str | None:
    """The words before the clause's first auxiliary or finite-looking verb (a heuristic), or None."""
    words = clause.split()
    while words and words[0].lower() in _SUBORDINATORS:
        words = words[1:]
    if not words or words[0].lower().strip(",") in _PREPOSITIONS:
        return None
    for i, w in enumerate(words[1:_MAX_SUBJECT_WORDS + 1], start=1):
        lw = w.lower().strip(",.")
        prev = words[i - 1]
        third_person = lw.endswith("s") and not lw.endswith(("ss", "us", "is", "'s"))
        after_name = prev[:1].isupper() and third_person
        # "Our support team answers ...": a verb after a plain noun (not a determiner, adjective-like or possessive)
        after_noun = i >= 2 and third_person and prev.islower() and prev not in _DETERMINERS \
            and not prev.endswith(("'s", "s", ",")) and words[0].lower() in _DETERMINERS \
            and not any(x.lower() in _PREPOSITIONS for x in words[1:i])
        if after_noun and lw not in _AUX:
            after_name = True
        if lw in _AUX or (w[0].islower() and (lw.endswith(("ed", "es")) or after_name) and len(lw) > 3):
            # an appositive ("Anna, a young doctor," / "A young doctor, Anna,"): prefer the name
            pieces = [p.strip() for p in " ".join(words[:i]).split(",") if p.strip()]
            subj = next((p for p in pieces if _is_named(p)), pieces[0] if pieces else "")
            if subj.split() and subj.split()[-1].lower() in _DANGLING:  # "Points stay on the account that (earned)"
                subj = " ".join(words[:2] if words[0].lower() in _DETERMINERS else words[:1]).strip(",")
            return subj if subj and subj.lower() not in _SUBJECT_PRONOUNS and subj.lower() not in _SPEAKERS else None
    if words[0].lower() in _DETERMINERS and len(words) > 2:
        return " ".join(words[:2]).strip(",")
    return None


def _topic_of_question(question: str) -> str | None:
    words = [w.strip("?,.") for w in question.split()]
    run: list[str] = []
    for i, w in enumerate(words):
        if i > 0 and w[:1].isupper() and w.lower() not in _WH and w.lower() not in _FIRST_PERSON:
            run.append(w.removesuffix("'s"))
        elif run:
            break
    return " ".join(run) or None


def _resolve(clause: str, subject: str | None, person: str | None = None) -> str:
    """Replace a subject pronoun (first word, or after an introductory phrase: "In 1903 she ...") with
    `person` for he/she/his/her and with `subject` (else `person`) for it/they/this/its/their."""
    words = clause.split(" ")
    for i, w in enumerate(words[:4]):
        lw = w.lower().strip(",")
        if lw in _SUBJECT_PRONOUNS:
            name = (person or subject) if lw in _PERSONAL else (subject or person)
            if not name:
                return clause
            words[i] = name + _SUBJECT_PRONOUNS[lw] + ("," if w.endswith(",") else "")
            if i == 0:
                words[i] = words[i][:1].upper() + words[i][1:]
            elif name.split(" ", 1)[0].lower() in _DETERMINERS:
                words[i] = words[i][:1].lower() + words[i][1:]
            return " ".join(words)
        if i == 0 and lw not in _PREPOSITIONS:
            break
    return clause


def _is_verb_phrase(part: str, coordinated: bool) -> bool:
    """Does a clause lack its own subject ("was designed by ...", and after "and": "marries him")?"""
    words = part.split()
    lead = words[0].lower()
    if lead in _AUX:
        return True
    if not coordinated or not words[0].islower() or lead in _SUBJECT_PRONOUNS or lead in _DETERMINERS:
        return False
    return lead.endswith(("ed", "es", "s")) and not any(w.lower() in _AUX for w in words[1:3])


def _is_named(subject: str) -> bool:
    """Does the subject contain a name (a capitalised word other than a leading determiner)?"""
    words = subject.split()
    if words[0].lower() in _DETERMINERS:
        words = words[1:]
    return any(w[:1].isupper() for w in words)


_FULL_STOPS = "\u3002\uff0e\uff01\uff1f"  # 。．！？
_QUESTION_MARKS = "?\uff1f"


def _finish(text: str) -> str:
    text = text.strip().strip(",;:- ")
    if text and text[-1] not in ".!\"'\u201d)" + _FULL_STOPS:
        text += "."
    return text[:1].upper() + text[1:]


def resolved_sentences(text: str) -> list[str]:
    """`sentences(text)` with a leading subject pronoun replaced by the running topic (for evidence)."""
    topic: str | None = None
    person: str | None = None
    out: list[str] = []
    for sent in sentences(text):
        sent = _resolve(sent, topic, person)
        subject = subject_of(sent)
        if subject:
            topic = subject
            if _is_named(subject):
                person = subject
        out.append(sent)
    return out


def claims(text: str, question: str | None = None) -> list[str]:
    """Short, self-contained claims of `text` (possibly none)."""
    topic = _topic_of_question(question) if question else None
    person = topic
    out: list[str] = []
    for sent in sentences(text):
        sent = _LABEL_RE.sub("", _PARTICLE_RE.sub("", sent)).strip()
        if sent.rstrip("\"')").endswith(tuple(_QUESTION_MARKS)):
            sent = _claim_in_question(sent)
        if not sent or sent.rstrip("\"')").endswith(":") or _FILLER_RE.match(sent):
            continue  # list intros, fillers
        pieces = _CLAUSE_SPLIT_RE.split(sent)  # [clause, separator, clause, ...]
        parts = [pieces[0]] + [p for k in range(2, len(pieces), 2) if (p := pieces[k]).strip()]
        seps = [""] + [pieces[k - 1] for k in range(2, len(pieces), 2) if pieces[k].strip()]
        if not parts[0].strip():
            parts, seps = parts[1:], seps[1:]
        if not parts:
            continue
        first = _resolve(parts[0], topic, person)
        subject = subject_of(first)
        if subject:
            topic = subject
            if _is_named(subject):
                person = subject
        for k, part in enumerate(parts):
            part = part.strip()
            if k == 0:
                clause = first
            else:
                coordinated = seps[k].strip().startswith(("and", ", and", ",")) and "and" in seps[k]
                verb_phrase = _is_verb_phrase(part, coordinated)
                clause = f"{topic} {part}" if topic and verb_phrase else _resolve(part, topic, person)
            toks = tokenize(clause)
            content = [t for t in toks if t.kind not in ("stop", "neg")]
            if not content or _about_the_speaker(clause, toks) or _ABOUT_CONTEXT_RE.search(clause):
                continue  # no content, the speaker's attitude, a statement about the context ("it does not say")
            out.append(_finish(clause))
    return out
