"""Precise contradictions: the only cases where the builtin grader says `contradicted` rather than `unsupported`
(a quantity, unit, month, polarity or antonym that differs in the evidence sentence most about the rest of the
claim; docs/builtin-grader.md, "Contradicted only where it is precise"; anything less certain is left to the
support score); and `polarity_differs`, which keeps a sentence that says a claim the other way from supporting it."""

from __future__ import annotations

from evalrun.grading.builtin.evidence import Evidence, Unit, weighted_coverage
from evalrun.grading.builtin.lexicon import ANTONYMS, stem
from evalrun.grading.builtin.quantities import (
    Quantity,
    excludes,
    quantities,
    same_quantity,
    satisfies,
    stated,
    unit_quantities,
)
from evalrun.grading.builtin.terms import Terms, Token, sequence, short, surface, tokenize

#: The sentence compared with the claim must have this weighted share of the claim's other keys.
SAME_SUBJECT_MIN = 0.5
#: A polarity mismatch needs a clause with this weighted share of the claim's keys.
NEGATION_MIN = 0.8
#: Prefixes that negate the word they start ("non-refundable", "unlimited", "invalid", "disallowed").
NEGATING_PREFIXES = ("non", "un", "in", "im", "il", "ir", "dis")
_LATIN_PREFIXES = frozenset({"in", "im", "il", "ir"})
_ADJECTIVE_ENDINGS = ("able", "ible", "ent", "ant", "al", "ive", "ect", "ete", "id", "ar", "ure", "ite")
#: Time relations that exclude each other (function words, so not in the antonym table of content words).
OPPOSITE_RELATIONS = tuple((a, b) for x, y in (("before", "after"), ("within", "after"), ("earlier", "later"))
                           for a, b in ((x, y), (y, x)))


def find(claim: str, t: Terms, w: dict[str, float], ev: Evidence, best: tuple[int, ...],
         near: tuple[int, ...] = ()) -> str | None:
    """A reason when the evidence precisely contradicts the claim, else None (see the module docstring)."""
    if not best:
        return None
    total = sum(w.values())
    sentences = [ev.sentences[i] for i in best]
    toks = tokenize(claim)
    for q in quantities(toks):
        reason = _quantity_conflict(q, w, total, ev, near or best, t.keys)
        if reason:
            return reason
    for m in sorted(t.months - ev.keys):
        for sent in sentences:
            if sent.terms.months - t.months and \
                    weighted_coverage(w, total, sent.keys, frozenset(t.months)) >= SAME_SUBJECT_MIN:
                return f"the claim says {surface(toks, [m])[0]} where the evidence says otherwise: \"{short(sent.text)}\""
    cseq = sequence(toks)
    for sent in sentences:
        clauses = [ev.clauses[ci] for ci in sent.clause_ids or ()]
        for unit in (*clauses, sent):
            reason = _clause_conflict(t, w, total, unit, toks)
            if reason and not _restated(cseq, unit, clauses, w, total):
                return reason
    return None


def _restated(claim_seq: tuple[str, ...], unit: Unit, clauses: list[Unit], w: dict[str, float], total: float) -> bool:
    """Does a clause of the sentence state, with the claim's polarity, every word that `unit` states the other way,
    and hold as much of the claim as the clauses that state them the other way? ("you need to cancel it" against
    "... does not cancel a subscription, which must be cancelled separately": the second clause says it.)"""
    c_neg, c_aff, _ = _scope(claim_seq)
    u_neg, u_aff, _ = _scope(unit.seq)
    flipped_aff, flipped_neg = c_aff & u_neg, c_neg & u_aff
    if not (flipped_aff or flipped_neg):
        return False
    against, agree = 0.0, 0.0
    for clause in clauses:
        o_neg, o_aff, _ = _scope(clause.seq)
        cov = weighted_coverage(w, total, clause.keys)
        if flipped_aff & o_neg or flipped_neg & (o_aff - o_neg):
            against = max(against, cov)
        elif flipped_aff <= o_aff and flipped_neg <= o_neg:
            agree = max(agree, cov)
    return agree > 0 and agree >= against


def _quantity_conflict(q: Quantity, w: dict[str, float], total: float, ev: Evidence,
                       near: tuple[int, ...], claim_keys: frozenset[str] = frozenset()) -> str | None:
    """The claim's quantity `q` is contradicted when the sentence most about the rest of the claim states another
    value of the same quantity, and no sentence stating a value that satisfies `q` is as much about the rest:
    "Python 3.0 was released in 1991" against "Python ... first released in 1991. Python 3.0 came out in 2008"."""
    rest = frozenset({q.key})
    with_q, against, example = -1.0, -1.0, None
    # the sentences most about the claim (`near`, best first) and every sentence that has q's value
    ids = sorted(set(near) | set(ev.sentence_index.get(q.key, ())))
    for sent in (ev.sentences[i] for i in ids):
        if not sent.terms.numbers:
            continue
        cov = weighted_coverage(w, total, sent.keys, rest)
        same = [e for e in unit_quantities(sent.text) if same_quantity(q, e)]
        excluding = [e for e in same if excludes(e, q) and (e.key == q.key or e.key not in claim_keys)]
        if any(satisfies(q, e) for e in same):
            with_q = max(with_q, cov)
        elif excluding and cov > against:  # a value the claim also states is not one it replaces
            against, example = cov, (sent, excluding[0])
        elif q.unit is not None and cov > against:
            other = [e for e in unit_quantities(sent.text) if e.key == q.key and e.kind == q.kind and e.unit is not None]
            if other:
                against, example = cov, (sent, other[0])
    if example is None or against < SAME_SUBJECT_MIN or against <= with_q + 1e-9:
        return None
    sent, e = example
    if e.key == q.key and q.unit_text and e.unit_text and q.unit != e.unit:
        return (f"the claim says {stated(q)} {q.unit_text} where the evidence says {stated(e)} {e.unit_text}: "
                f"\"{short(sent.text)}\"")
    return f"the claim says {stated(q)} where the evidence says {stated(e)}: \"{short(sent.text)}\""


def affix_negated(words: tuple[str, ...], other_keys: frozenset[str]) -> frozenset[str]:
    """Keys of those `words` (lowercase, as written) that are a negating prefix on a word whose key the other side
    has, where the other side lacks the word itself: "non-refundable" / "refundable", "invalid" / "valid",
    "disallowed" / "allowed". Each counts as a negation on its side (and as found, for coverage)."""
    out = set()
    for word in words:
        for prefix in NEGATING_PREFIXES:
            rest = word[len(prefix):].lstrip("-")
            if prefix in _LATIN_PREFIXES and not rest.endswith(_ADJECTIVE_ENDINGS):
                continue  # "incorporated", "increase", "import": in-/im- negate adjectives ("invalid", "impossible")
            if word.startswith(prefix) and len(rest) >= 4 and stem(rest) in other_keys and stem(word) not in other_keys:
                out.add(stem(word))
                break
    return frozenset(out)


def _words(toks: tuple[Token, ...]) -> tuple[str, ...]:
    return tuple(tok.text.lower() for tok in toks if tok.kind == "word")


def polarity_differs(t: Terms, toks: tuple[Token, ...], unit: Unit) -> bool:
    """Does `unit` state a word of the claim with the other polarity ("are refundable" / "are non-refundable",
    "points expire" / "points never expire"), whatever else either side says?"""
    return _polarity(t, toks, unit)[0]


def _polarity(t: Terms, toks: tuple[Token, ...], unit: Unit) -> tuple[bool, bool, frozenset[str], frozenset[str]]:
    """(polarity differs, parity differs, the claim's affix-negated keys, the unit's) of the claim against `unit`."""
    ct = unit.terms
    mine, theirs = affix_negated(_words(toks), ct.keys), affix_negated(_words(tokenize(unit.text)), t.keys)
    cseq = sequence(toks)
    parity = ((t.negations + len(mine)) % 2) != ((ct.negations + len(theirs)) % 2)
    differs = parity and bool(mine or theirs or _same_scope(t, ct, cseq, unit.seq)) or _flipped_head(cseq, unit.seq)
    return differs, parity, mine, theirs


def _clause_conflict(t: Terms, w: dict[str, float], total: float, clause: Unit,
                     toks: tuple[Token, ...]) -> str | None:
    ct = clause.terms
    differs, parity, mine, theirs = _polarity(t, toks, clause)
    cov = weighted_coverage(w, total, ct.keys | mine)
    cseq = sequence(toks)
    flipped = _flipped_head(cseq, clause.seq)
    if differs and (cov >= NEGATION_MIN
                    or (parity and (flipped or mine or theirs) and cov >= SAME_SUBJECT_MIN
                        and _within(clause, t.keys | mine | theirs) >= NEGATION_MIN)):
        side = "negates" if t.negations % 2 else "affirms"
        return f"the claim {side} what the evidence states the other way: \"{short(clause.text)}\""
    said = {tok.text.lower() for tok in toks}
    there = {tok.text.lower() for tok in tokenize(clause.text)}
    for a, b in OPPOSITE_RELATIONS:
        if a in said and b in there and b not in said and a not in there \
                and weighted_coverage(w, total, ct.keys) >= NEGATION_MIN:
            return f"the claim says '{a}' where the evidence says '{b}': \"{short(clause.text)}\""
    c_neg = _scope(cseq)[0]
    e_neg = _scope(clause.seq)[0]
    for p in sorted(t.polar - ct.keys):
        opposite = (ANTONYMS[p] & ct.keys) - t.keys
        # "won't pay" against "free" agrees: an antonym contradicts only with the same polarity on both sides
        if opposite and (p in c_neg) == bool(opposite & e_neg) \
                and weighted_coverage(w, total, ct.keys, frozenset({p})) >= SAME_SUBJECT_MIN:
            return (f"the claim says '{surface(toks, [p])[0]}' where the evidence says the opposite: "
                    f"\"{short(clause.text)}\"")
    return None


def _within(unit: Unit, keys: frozenset[str]) -> float:
    """Share of the content keys of `unit` that `keys` has: a clause the claim restates with a word flipped needs only
    the same subject ("Accidental damage is covered by the one-year ... warranty" / "... is not covered by ...")."""
    own = [k for k in unit.seq if k[0] != "~"]
    return sum(k in keys for k in own) / len(own) if own else 0.0


def _negated_heads(seq: tuple[str, ...]) -> list[str]:
    """The content key right after each negation ("did not *win*", "no *pilots*"): what is negated."""
    return [seq[i + 1] for i, k in enumerate(seq[:-1]) if k == "~not" and seq[i + 1][0] != "~"]


#: Words between a negation and what it negates ("can *no longer* be modified").
_NEGATION_FILLERS = frozenset({"longer", "long", "more", "any"})


def _scope(seq: tuple[str, ...]) -> tuple[set[str], set[str], set[str]]:
    """(negated, affirmed, outside) content keys of a sequence: the first content key after a negation is negated
    ("can no longer be *modified*", "points never *expire*"), every other one affirmed; `outside`: the keys that
    occur at least once outside a negation's scope."""
    negated: set[str] = set()
    outside: set[str] = set()
    pending = False
    for k in seq:
        if k == "~not":
            pending = True
        elif k[0] != "~":
            if not pending:
                outside.add(k)
            elif k not in _NEGATION_FILLERS:
                negated.add(k)
                pending = False
    return negated, {k for k in seq if k[0] != "~"} - negated, outside


def _flipped_head(claim_seq: tuple[str, ...], evidence_seq: tuple[str, ...]) -> bool:
    """Is a word negated on one side and affirmed, never negated, on the other ("points never expire" against
    "points expire 12 months after ... and cannot be transferred")? Scope-aware where parity is not."""
    c_neg, c_aff, c_outside = _scope(claim_seq)
    e_neg, e_aff, e_outside = _scope(evidence_seq)
    c_only, e_only = c_neg - c_outside, e_neg - e_outside
    return bool((c_only & e_aff) - e_neg) or bool((e_only & c_aff) - c_neg)


def _same_scope(t: Terms, ct: Terms, cseq: tuple[str, ...], eseq: tuple[str, ...]) -> bool:
    """A polarity mismatch counts only when what is negated on one side is affirmed on the other, and that side
    does not also affirm it ("ferries not running, and commuter rail running" negates nothing the claim says
    about running)."""
    seq, other = (cseq, eseq) if t.negations > ct.negations else (eseq, cseq)
    affirmed = _scope(other)[2]  # "decided not to indict" against "a decision not to indict": no flip
    return any(h in affirmed and h not in _scope(seq)[2] for h in _negated_heads(seq))
