"""Context-relevance items from public data: HaluEval QA questions with their own passage or a word-sharing one.

Each HaluEval QA row holds a question and the `knowledge` passage it was written from. For every question of a
split this yields two labelled items for the `context-relevance` assertion:

* **relevant**: the question with its own knowledge passage;
* **distractor**: the question with the knowledge passage of a *different* question of the same split. Set
  `relevance`: the passage of the question that shares the most content words with this question (same topic
  words, another question); set `relevance-retrieved`: the other passage that contains the most of this
  question's content words (what a lexical retriever would return). Ties: the rarer shared words, then the lower
  row. A candidate whose passage contains this question's answer (case-insensitive) is skipped, so the distractor
  does not answer the question by accident; so is one whose passage equals the question's own.

Same dev/test/check row splits as data.py (the distractor comes from the same split, so no passage crosses a
split). The output under test is empty: context relevance is a property of the query and the chunks, and an
empty output keeps the metric's "used" flags equal for both items of a pair (the answer would have told a grader
which chunk it came from). Items: `{id, set, kind, row, group, question, context, answer, label}`; label True =
the relevant passage.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter, defaultdict
from collections.abc import Iterator
from functools import cache
from typing import Any

from benchmarks.grading import data, metrics

_WORD = re.compile(r"[a-z0-9]+")


def content_words(text: str) -> set[str]:
    """Lowercased alphanumeric words of `text` that are not stopwords (the baseline's list)."""
    return {w for w in _WORD.findall(text.lower()) if w not in metrics.STOPWORDS}


@cache
def _qa_rows() -> tuple[dict[str, Any], ...]:
    path = data.data_dir() / "dataset_halueval_qa.jsonl"
    return tuple(json.loads(line) for line in path.read_text(encoding="utf-8").splitlines())


@cache
def distractors(split: str, by: str = "question") -> dict[int, int]:
    """Row -> the row whose knowledge is its distractor, for every row of `split` that has one.

    `by="question"`: the row whose *question* shares the most content words with this question;
    `by="passage"`: the row whose *passage* contains the most of this question's content words (what a lexical
    retriever would return). Ties: the rarer shared words (idf over the split), then the lower row."""
    rows = _qa_rows()
    pool = data.split_rows(split, len(rows))
    query = {r: content_words(rows[r]["question"]) for r in pool}
    field = "question" if by == "question" else "knowledge"
    words = query if by == "question" else {r: content_words(rows[r][field]) for r in pool}
    df = Counter(w for r in pool for w in words[r])
    idf = {w: math.log(len(pool) / n) for w, n in df.items()}
    index: dict[str, list[int]] = defaultdict(list)
    for r in pool:
        for w in words[r]:
            index[w].append(r)
    out = {}
    for r in pool:
        answer = rows[r]["right_answer"].strip().lower()
        own = rows[r]["knowledge"].strip()
        shared: Counter[int] = Counter()
        rarity: dict[int, float] = defaultdict(float)
        for w in query[r]:
            for c in index.get(w, ()):
                shared[c] += 1
                rarity[c] += idf[w]
        candidates = sorted((c for c in shared if c != r), key=lambda c: (-shared[c], -rarity[c], c))
        for c in candidates:
            knowledge = rows[c]["knowledge"]
            if knowledge.strip() != own and not (answer and answer in knowledge.lower()):
                out[r] = c
                break
    return out


def items(split: str, limit: int | None = None, by: str = "question") -> Iterator[dict[str, Any]]:
    """Two labelled items per question of `split` (relevant first); `limit` caps the questions."""
    if split not in data.SPLITS or by not in ("question", "passage"):
        raise ValueError(f"split must be one of {data.SPLITS} and `by` question or passage")
    rows = _qa_rows()
    pick = distractors(split, by)
    name = "relevance" if by == "question" else "relevance-retrieved"
    chosen = [r for r in data.split_rows(split, len(rows)) if r in pick]
    for r in chosen[:limit] if limit else chosen:
        question = rows[r]["question"]
        for relevant, source in ((True, r), (False, pick[r])):
            yield {"id": f"{name}-{r}-{'r' if relevant else 'd'}", "set": name,
                   "kind": "context-relevance", "row": r, "group": f"qa-{r}", "question": question,
                   "context": rows[source]["knowledge"], "answer": "", "label": relevant}
