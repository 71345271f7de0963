"""VitaminC (Schuster et al., NAACL 2021; CC BY-SA 3.0): claims against contrastive Wikipedia evidence.

The set ships inside the `bigbench==1.0.0` sdist on PyPI (BIG-bench, Apache-2.0; the task's data keeps its own
licence) as `bigbench/benchmark_tasks/vitaminc_fact_verification/task.json`: 54,668 real (not synthetic) pairs of
a Wikipedia sentence and a claim, labelled True (the evidence supports the claim), False (it refutes it) or
Neither. Many come in contrastive pairs: one claim against two revisions of a sentence, one supporting and one
refuting it ("more than 23 million" / "more than 24 million"), or one sentence against a claim and its reversal;
the claims are crowd-written in other words than the evidence. `data_file()` downloads the sdist (358 MB, once)
into `benchmarks/.work/`, keeps the one task file (23 MB) and deletes the archive.

Items for `faithfulness` (text detokenised: the task stores it Penn-Treebank tokenised): the evidence (prefixed
with its page title, as the task gives it) is `vars.context`,
the claim is the output; label True = supported, False = refuted or not enough information (`type` says which).
Splits, seeded and by source pair: examples that share a claim or an evidence sentence are one group (union-find),
the groups are shuffled with data.SEED and cut into thirds: `dev`, `test`, `check`. `limit` caps the groups.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import sys
import tarfile
import urllib.request
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

from benchmarks.grading import data

SDIST = "bigbench==1.0.0"
MEMBER = "bigbench-1.0.0/bigbench/benchmark_tasks/vitaminc_fact_verification/task.json"
CACHE = Path(os.environ.get("EVALRUN_BENCH_DATA") or Path(__file__).resolve().parents[1] / ".work") / "vitaminc"
#: The sdist's file on PyPI and its digest: `pip download` (26.x) refuses this sdist, whose setup.py declares a
#: direct-URL dependency (bleurt), even with --no-deps, so the file is fetched from PyPI's file host itself.
URL = ("https://files.pythonhosted.org/packages/95/f8/c019b3579df548a04cac12342cfcb878e50ddf6cfcd7fddba8cfc721c157/"
       "bigbench-1.0.0.tar.gz")
SHA256 = "1bb398a5512c6d798cdebe0dfa0ac03f67f6033fa6b39c6ef71df978c7cbc5c2"
TYPES = {"True": "supports", "False": "refutes", "Neither": "not-enough-info"}


def data_file() -> Path:
    """The task file, downloading the bigbench sdist from PyPI on first use."""
    target = CACHE / "vitaminc_task.json"
    if target.exists():
        return target
    CACHE.mkdir(parents=True, exist_ok=True)
    if not list(CACHE.glob("bigbench-*.tar.gz")):
        print(f"downloading {SDIST} from PyPI (358 MB, once; only VitaminC's task file is kept) ...",
              file=sys.stderr)
        _download_sdist(CACHE / URL.rsplit("/", 1)[1])
    archive = next(CACHE.glob("bigbench-*.tar.gz"))
    with tarfile.open(archive) as tf:
        member = tf.extractfile(MEMBER)
        if member is None:
            raise RuntimeError(f"{archive} has no {MEMBER}")
        target.with_suffix(".part").write_bytes(member.read())
    target.with_suffix(".part").rename(target)
    archive.unlink()
    return target


def _download_sdist(target: Path) -> None:
    """Fetch the sdist from PyPI to `target`, checking its sha256."""
    part = target.with_suffix(".part")
    digest = hashlib.sha256()
    with urllib.request.urlopen(URL, timeout=600) as reply, part.open("wb") as out:
        while block := reply.read(1 << 20):
            digest.update(block)
            out.write(block)
    if digest.hexdigest() != SHA256:
        part.unlink()
        raise RuntimeError(f"{URL}: sha256 {digest.hexdigest()}, expected {SHA256}")
    part.rename(target)


#: Penn-Treebank tokenisation of the source text, undone (the claims and evidence are stored tokenised)
_DETOKENISE = ((" ,", ","), (" .", "."), (" ;", ";"), (" :", ":"), (" 's", "'s"), (" n't", "n't"), ("`` ", '"'),
               (" ''", '"'), ("-LRB- ", "("), (" -RRB-", ")"), ("-LRB-", "("), ("-RRB-", ")"), ("( ", "("),
               (" )", ")"), (" %", "%"), ("$ ", "$"), ("\ufffd", " "))


def detokenise(text: str) -> str:
    """`text` with the common tokenisation artefacts joined back ("Halloween II ( 1981 ) ," -> "(1981),")."""
    for old, new in _DETOKENISE:
        text = text.replace(old, new)
    return " ".join(text.split())


def _parse(example: dict[str, Any]) -> tuple[str, str, str]:
    """(evidence with its page title, claim, label) of one task example."""
    evidence, _, claim = example["input"].partition("\nClaim: ")
    label = max(example["target_scores"], key=example["target_scores"].get)
    return detokenise(evidence), detokenise(claim), label


@cache
def _groups() -> tuple[tuple[tuple[str, str, str], ...], ...]:
    """Examples grouped by shared claim or evidence (union-find), groups in a seeded random order."""
    examples = [_parse(e) for e in json.loads(data_file().read_text(encoding="utf-8"))["examples"]]
    parent: dict[str, str] = {}

    def find(x: str) -> str:
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for evidence, claim, _ in examples:
        parent[find("e:" + evidence)] = find("c:" + claim)
    groups: dict[str, list[tuple[str, str, str]]] = {}
    for ex in examples:
        groups.setdefault(find("c:" + ex[1]), []).append(ex)
    ordered = [tuple(g) for _, g in sorted(groups.items())]
    random.Random(data.SEED).shuffle(ordered)
    return tuple(ordered)


def items(split: str, limit: int | None = None) -> Iterator[dict[str, Any]]:
    """Labelled items of `split`; `limit` caps the groups (source pairs), not the items."""
    if split not in data.SPLITS:
        raise ValueError(f"split must be one of {data.SPLITS}")
    groups = _groups()
    third = len(groups) // 3
    start = data.SPLITS.index(split) * third
    chosen = groups[start:start + third] if split != "check" else groups[start:]
    for g, group in enumerate(chosen[:limit] if limit else chosen):
        for k, (evidence, claim, label) in enumerate(group):
            yield {"id": f"vitaminc-{split}-{g}-{k}", "set": "vitaminc", "kind": "faithfulness",
                   "group": f"{split}-{g}", "type": TYPES[label], "question": None, "context": evidence,
                   "answer": claim, "label": label == "True"}
