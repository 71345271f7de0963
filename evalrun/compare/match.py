"""The two sides of a comparison, loaded (slimmed to what the diff reads) and paired: which case of run B is which
case of run A across edits (docs/compare.md, "Matching cases across edits")."""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalrun.errors import UsageError
from evalrun.run import store
from evalrun.run.history import History

Key = tuple[Any, ...]
KEEP = ("test_index", "description", "vars", "provider", "prompt_index", "prompt_label", "prompt_sha", "repeat",
        "status", "score", "error", "reason", "output", "prompt", "id")


@dataclass
class LoadedRun:
    ref: str  # as given on the command line
    label: str  # run id or file name
    records: list[dict[str, Any]]
    info: dict[str, Any] = field(default_factory=dict)  # the history row, when there is one


def slim(rec: dict[str, Any]) -> dict[str, Any]:
    """The fields compare needs: the case identity, verdict, scores and each assertion's claims."""
    out: dict[str, Any] = {k: rec.get(k) for k in KEEP}
    out["assertions"] = []
    for a in rec.get("assertions") or []:
        details = a.get("details") or {}
        claims = details.get("claims") if isinstance(details, dict) else None
        slim_a = {k: a.get(k) for k in ("type", "metric", "value", "score", "pass", "error", "lower_is_better")}
        if isinstance(claims, list):
            slim_a["claims"] = [{"text": c.get("text"), "verdict": c.get("verdict")} if isinstance(c, dict)
                                else {"text": str(c), "verdict": None} for c in claims]
        out["assertions"].append(slim_a)
    return out


def _read(path: Path) -> list[dict[str, Any]]:
    return [slim(rec) for rec in store.records(path, key="RUN", hint=f"pass {store.ACCEPTED}, or a run id")]


def load(ref: str, history: History) -> LoadedRun:
    """A results file when `ref` names an existing file, else a run from the history."""
    path = Path(ref)
    try:
        is_file = path.is_file()
    except OSError:  # a name the system refuses (over 255 bytes): no file, perhaps a run id
        is_file = False
    if is_file and (path.suffix or "/" in ref or "\\" in ref):  # any file: store.records refuses the wrong kind
        return LoadedRun(ref, path.name, _read(path))
    if path.suffix.lower() in (".json", ".jsonl") and not is_file and ("/" in ref or "\\" in ref):
        raise UsageError(f"no results file {ref!r}", hint="pass an existing results file or a run id")
    record = history.resolve(ref)
    if not record.results_file.is_file():
        raise UsageError(f"run {record.id}: its results file {str(record.results_file)!r} is gone",
                         hint="`evalrun runs` lists the runs; compare results files directly instead")
    return LoadedRun(ref, record.id, _read(record.results_file), record.as_dict())


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
        return bool(self.a and self.b and self.a.sha and self.b.sha and self.a.sha != self.b.sha)

    @property
    def label(self) -> str:
        """B's label (A's for a prompt B dropped)."""
        return self.b.label if self.b else self.a.label if self.a else ""

    @property
    def index(self) -> int:
        """B's position among its prompts (A's for a prompt B dropped; last when unknown)."""
        info = self.b or self.a
        return info.index if info is not None and info.index is not None else 1 << 30

    def as_dict(self) -> dict[str, Any]:
        a, b = ({"index": p.index, "label": p.label, "sha": p.sha} if p else None for p in (self.a, self.b))
        return {"a": a, "b": b, "text_changed": self.text_changed}


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
    """Pair B's prompts with A's: same text (same label first), then same label, then in order of position."""
    left_a = list(a)
    pairs: list[PromptPair] = []
    pending = list(b)
    rules = (lambda pa, pb: pb.sha and pa.sha == pb.sha and pa.label == pb.label,
             lambda pa, pb: pb.sha and pa.sha == pb.sha, lambda pa, pb: pa.label == pb.label)
    for rule in rules:
        still: list[PromptInfo] = []
        for pb in pending:
            match = next((pa for pa in left_a if rule(pa, pb)), None)
            if match is None:
                still.append(pb)
            else:
                left_a.remove(match)
                pairs.append(PromptPair(match, pb))
        pending = still
    n = min(len(left_a), len(pending))  # the rest pair up in order of position
    pairs += [PromptPair(pa, pb) for pa, pb in zip(left_a[:n], pending[:n], strict=True)]
    pairs += [PromptPair(pa, None) for pa in left_a[n:]] + [PromptPair(None, pb) for pb in pending[n:]]
    return sorted(pairs, key=lambda p: (p.b is None, p.index))


def test_ids(records: list[dict[str, Any]]) -> dict[int, Any]:
    """test_index -> the test's identity across runs: its description when unique in the run, else its position."""
    desc: dict[int, Any] = {}
    for rec in records:
        desc.setdefault(int(rec.get("test_index") or 0), rec.get("description"))
    count = Counter(d for d in desc.values() if d)
    return {i: ("description", d) if d and count[d] == 1 else ("position", i) for i, d in desc.items()}


def group(records: list[dict[str, Any]], prompt_ids: dict[Any, Any]) -> dict[Key, list[dict[str, Any]]]:
    """Records grouped by case key: test x vars x provider x prompt pair id; repeats in repeat order."""
    tests = test_ids(records)
    out: dict[Key, list[dict[str, Any]]] = {}
    for rec in records:
        key = (tests[int(rec.get("test_index") or 0)], json.dumps(rec.get("vars") or {}, sort_keys=True, default=str),
               rec.get("provider"), prompt_ids[_prompt_key(rec)])
        out.setdefault(key, []).append(rec)
    for recs in out.values():
        recs.sort(key=lambda r: r.get("repeat") or 0)
    return out


def pair_leftovers(ga: dict[Key, list[dict[str, Any]]], gb: dict[Key, list[dict[str, Any]]]) -> dict[Key, Key]:
    """A key -> B key for cases without an exact match: same test, provider and prompt, in expansion order."""
    def slots(mine: dict[Key, list[dict[str, Any]]], other: dict[Key, list[dict[str, Any]]]) -> dict[Key, list[Key]]:
        out: dict[Key, list[Key]] = {}
        left = sorted((k for k in mine if k not in other), key=lambda k: min(r.get("index") or 0 for r in mine[k]))
        for k in left:
            out.setdefault((k[0], k[2], k[3]), []).append(k)
        return out

    slots_b = slots(gb, ga)
    return {ka: kb for slot, keys_a in slots(ga, gb).items()
            for ka, kb in zip(keys_a, slots_b.get(slot, []), strict=False)}
