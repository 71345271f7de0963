"""Which case of run B is which case of run A, across edited prompts. Pure.

B's prompts are paired with A's (same text, then same label, then position); a test is known by its
description when unique, else its position; a case whose vars were edited pairs with the leftover case of the
same test, provider and prompt. Repeats of one case form a group."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass
from typing import Any

Key = tuple[Any, ...]


@dataclass(frozen=True)
class PromptInfo:
    key: Any  # prompt_index (or the label for records written before prompt_index existed)
    index: int | None
    label: str
    sha: str | None


@dataclass(frozen=True)
class PromptPair:
    a: PromptInfo | None
    b: PromptInfo | None

    @property
    def text_changed(self) -> bool:
        return self.a is not None and self.b is not None and bool(self.a.sha and self.b.sha) \
            and self.a.sha != self.b.sha


def _prompt_key(rec: dict[str, Any]) -> Any:
    idx = rec.get("prompt_index")
    return idx if idx is not None else f"label:{rec.get('prompt_label')}"


def prompts_of(records: list[dict[str, Any]]) -> list[PromptInfo]:
    seen: dict[Any, PromptInfo] = {}
    for rec in records:
        key = _prompt_key(rec)
        if key not in seen:
            seen[key] = PromptInfo(key, rec.get("prompt_index"), str(rec.get("prompt_label") or ""),
                                   rec.get("prompt_sha"))
    return sorted(seen.values(), key=lambda p: (p.index is None, p.index or 0, p.label))


def pair_prompts(a: list[PromptInfo], b: list[PromptInfo]) -> list[PromptPair]:
    """Pair B's prompts with A's: same text, then same label, then same position among those left."""
    left_a = list(a)
    pairs: list[PromptPair] = []
    pending = list(b)
    for rule in ("sha", "label"):
        still: list[PromptInfo] = []
        for pb in pending:
            match = _find(pb, left_a, rule)
            if match is None:
                still.append(pb)
            else:
                left_a.remove(match)
                pairs.append(PromptPair(match, pb))
        pending = still
    n = min(len(left_a), len(pending))  # the rest pair up in order of position
    pairs += [PromptPair(pa, pb) for pa, pb in zip(left_a[:n], pending[:n], strict=True)]
    pairs += [PromptPair(pa, None) for pa in left_a[n:]] + [PromptPair(None, pb) for pb in pending[n:]]

    def order(p: PromptPair) -> tuple[int, int]:
        info = p.b or p.a
        return (0 if p.b else 1, info.index if info is not None and info.index is not None else 1 << 30)

    return sorted(pairs, key=order)


def _find(pb: PromptInfo, candidates: list[PromptInfo], rule: str) -> PromptInfo | None:
    if rule == "sha":
        return next((pa for pa in candidates if pb.sha and pa.sha == pb.sha and pa.label == pb.label), None) or \
            next((pa for pa in candidates if pb.sha and pa.sha == pb.sha), None)
    return next((pa for pa in candidates if pa.label == pb.label), None)


def test_ids(records: list[dict[str, Any]]) -> dict[int, Any]:
    """test_index -> the test's identity across runs: its description when no other test of the run has the
    same one (so inserting or moving a test does not shift the others), else its position."""
    desc: dict[int, Any] = {}
    for rec in records:
        desc.setdefault(int(rec.get("test_index") or 0), rec.get("description"))
    count = Counter(d for d in desc.values() if d)
    return {i: ("description", d) if d and count[d] == 1 else ("position", i) for i, d in desc.items()}


def case_key(rec: dict[str, Any], prompt: Any, test: Any = None) -> Key:
    """Test x vars x provider x (paired) prompt; the repeat index is left out (repeats form one group)."""
    return (test if test is not None else ("position", rec.get("test_index", 0)),
            json.dumps(rec.get("vars") or {}, sort_keys=True, default=str), rec.get("provider"), prompt)


def group(records: list[dict[str, Any]], prompt_ids: dict[Any, Any]) -> dict[Key, list[dict[str, Any]]]:
    """Records grouped by case key (the prompt replaced by its pair id), repeats in repeat order."""
    tests = test_ids(records)
    out: dict[Key, list[dict[str, Any]]] = {}
    for rec in records:
        key = case_key(rec, prompt_ids[_prompt_key(rec)], tests[int(rec.get("test_index") or 0)])
        out.setdefault(key, []).append(rec)
    for recs in out.values():
        recs.sort(key=lambda r: r.get("repeat") or 0)
    return out


def pair_ids(pairs: list[PromptPair]) -> tuple[dict[Any, Any], dict[Any, Any]]:
    """Prompt key -> pair number, for A's and B's records."""
    ids_a: dict[Any, Any] = {}
    ids_b: dict[Any, Any] = {}
    for n, p in enumerate(pairs):
        if p.a is not None:
            ids_a[p.a.key] = n
        if p.b is not None:
            ids_b[p.b.key] = n
    return ids_a, ids_b


def pair_leftovers(ga: dict[Key, list[dict[str, Any]]], gb: dict[Key, list[dict[str, Any]]]) -> dict[Key, Key]:
    """A key -> B key for cases without an exact match: same test, provider and prompt, in expansion order."""
    def slots(mine: dict[Key, list[dict[str, Any]]], other: dict[Key, list[dict[str, Any]]]) -> dict[Key, list[Key]]:
        out: dict[Key, list[Key]] = {}
        left = sorted((k for k in mine if k not in other), key=lambda k: min(r.get("index") or 0 for r in mine[k]))
        for k in left:
            out.setdefault((k[0], k[2], k[3]), []).append(k)
        return out

    slots_b = slots(gb, ga)
    renamed: dict[Key, Key] = {}
    for slot, keys_a in slots(ga, gb).items():
        for ka, kb in zip(keys_a, slots_b.get(slot, []), strict=False):
            renamed[ka] = kb
    return renamed
