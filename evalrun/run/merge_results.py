"""Shard results -> one results file and one tally, as if the cases had run in one `evalrun eval`.

    merge(paths, out) -> RunOutcome      records of every shard's results JSONL (or -o .json report), in
                                         expansion order, written to `out`; the tally (summary, exit code) is
                                         computed from them. Other reports are refused (run/readback.py).

Only a file number and a byte offset per case index are held (10 bytes a case), so memory stays small. A case
index found in two files is an error (the files are not shards of one run, or a shard was given twice).
"""

from __future__ import annotations

import contextlib
import time
from array import array
from pathlib import Path
from typing import BinaryIO

from evalrun.errors import UsageError
from evalrun.run import readback
from evalrun.run.runner import RunOutcome
from evalrun.run.store import ResultsWriter, read_at
from evalrun.run.tally import Tally
from evalrun.types import Suite

HINT = ("pass the results file of each `evalrun eval --shard K/N` run (its --results-file JSONL) or its "
        "-o .json report")


def merge(paths: list[Path], out: Path) -> RunOutcome:
    resolved_out = out.resolve()
    where = array("h")  # by case index: which file holds it (-1: none)
    offsets = array("q")  # by case index: its byte offset in that file
    tally = Tally()
    graders: dict[str, None] = {}
    with contextlib.ExitStack() as stack:
        files: list[BinaryIO] = []
        for fno, path in enumerate(paths):
            if not path.is_file():
                raise UsageError(f"no results file {str(path)!r}", key="RESULTS_JSONL", hint=HINT)
            if path.resolve() == resolved_out:
                raise UsageError(f"{str(path)!r} is both an input and the merged results file", key="--results-file",
                                 hint="choose another --results-file")
            jsonl = readback.as_jsonl(path, stack, key="RESULTS_JSONL", hint=HINT)
            files.append(stack.enter_context(open(jsonl, "rb")))
            for offset, rec in readback.indexed(jsonl, key="RESULTS_JSONL", hint=HINT, shown=path):
                index = int(rec.get("index", 0))
                if index >= len(where):
                    grow = index + 1 - len(where)
                    where.extend(array("h", [-1]) * grow)
                    offsets.extend(array("q", [0]) * grow)
                if where[index] >= 0:
                    raise UsageError(f"case {index} is in both {str(paths[where[index]])!r} and {str(path)!r}",
                                     key="RESULTS_JSONL", hint="merge the results files of one sharded run, each once")
                where[index], offsets[index] = fno, offset
        writer = ResultsWriter(out, append=False)
        try:
            for fno, offset in zip(where, offsets, strict=True):
                if fno < 0:
                    continue
                rec = read_at(files[fno], offset)
                tally.add(rec, writer.write(rec))
                for a in rec.get("assertions") or ():
                    if a.get("grader"):
                        graders[str(a["grader"])] = None
        finally:
            writer.close()
    tally.finished = time.time()
    tally.graders = list(graders)
    suite = Suite(description=f"merged from {len(paths)} results files", prompts=(), providers=(), tests=(),
                  files=tuple(str(p) for p in paths))
    return RunOutcome(suite, tally, out)
