"""Calibration files (`evalrun calibrate ... -o calibration.json`): the thresholds a person's
labels chose, with the grader they were measured on, the labels' digest and the figure behind each. A suite points a
graded assertion at one (`threshold: calibrated`, which reads `calibration.json` next to the config, or
`calibration: file://FILE`); `eval` warns when the grader in use differs from the calibrated one.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from evalrun.config.files import display_path
from evalrun.errors import ConfigError, Location
from evalrun.types import AssertionSpec, TestSpec, every_assertion

FORMAT = 1
KIND = "evalrun-calibration"
DEFAULT_FILE = "calibration.json"
#: Calibration files read by this process: `mismatches` walks the tests only when one was (a suite of 100k
#: streamed rows without calibration pays nothing).
READ: set[str] = set()
HINT = ("run `evalrun calibrate RESULTS --labels labels.csv -o calibration.json` "
        "(docs/calibrate.md)")


@dataclass(frozen=True)
class Calibrated:
    """Where an assertion's threshold came from: one metric of a calibration file."""

    file: str
    metric: str
    threshold: float
    grader: dict[str, Any]
    figure: float | None  # out-of-fold balanced accuracy of the threshold
    n: int
    labels_sha256: str | None

    def describe(self) -> str:
        figure = "" if self.figure is None else f", out-of-fold balanced accuracy {self.figure:.2f}"
        return (f"{self.threshold:.4g} from {self.file} ({self.metric}, {self.n} labels{figure}, grader "
                f"{grader_text(self.grader)})")


def grader_text(g: Mapping[str, Any]) -> str:
    extra = [f"{k} {g[k]}" for k in ("version", "model_hash") if g.get(k)]
    return str(g.get("id")) + (f" ({', '.join(extra)})" if extra else "")


def document(metrics: Iterable[Mapping[str, Any]], identities: Mapping[str, Mapping[str, Any]], *,
             results: str, labels: str, labels_sha256: str, created: str) -> dict[str, Any]:
    """The file's content from `calibrate`'s per-metric figures; metrics without a threshold (too few labels)
    are kept with `threshold: null` so the file says why."""
    return {"kind": KIND, "format": FORMAT, "created": created, "results": results,
            "labels": {"file": labels, "sha256": labels_sha256},
            "metrics": [{"metric": m["metric"], "grader": dict(identities[m["grader"]]),
                         "threshold": m.get("suggested_yaml_threshold"),
                         "oof_balanced_accuracy": m.get("oof_balanced_accuracy"),
                         "balanced_accuracy_at_run_threshold": m.get("balanced_accuracy"), "kappa": m.get("kappa"),
                         "auroc": m.get("auroc"), "n": m["n"], "n_human_pass": m["n_human_pass"],
                         "n_human_fail": m["n_human_fail"], "note": m.get("note")} for m in metrics]}


#: (path, mtime, size) -> the file's content: every assertion of a suite may name the same file.
_LOADED: dict[tuple[str, int, int], Any] = {}


def _read(path: Path, loc: Location | None, key: str) -> dict[str, Any]:
    try:
        st = path.stat()
        stamp = (str(path.resolve()), st.st_mtime_ns, st.st_size)
        data = _LOADED.get(stamp)
        if data is None:
            data = _LOADED[stamp] = json.loads(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise ConfigError.at(loc, f"cannot read calibration {str(path)!r}: {e.strerror or e}", key=key,
                             hint=HINT) from None
    except ValueError as e:
        raise ConfigError.at(loc, f"calibration {str(path)!r} is not JSON: {e}", key=key, hint=HINT) from None
    if not isinstance(data, dict) or data.get("kind") != KIND or not isinstance(data.get("metrics"), list):
        raise ConfigError.at(loc, f"{str(path)!r} is not an evalrun calibration file", key=key, hint=HINT)
    if data.get("format") != FORMAT:
        raise ConfigError.at(loc, f"calibration {str(path)!r} has format {data.get('format')!r}; this evalrun "
                             f"reads format {FORMAT}", key=key, hint=HINT)
    return data


def threshold_from(raw: Mapping[str, Any], metric: str, base_dir: str, loc: Location | None,
                   key: str) -> tuple[float, Calibrated]:
    """The threshold of an assertion (`raw`, reported under `metric`: its `metric` name or type) from its
    calibration file; ConfigError naming the key when the file, the metric or its threshold is missing."""
    ref = raw.get("calibration")
    threshold = raw.get("threshold")
    if threshold is not None and threshold != "calibrated":
        raise ConfigError.at(loc, f"threshold {threshold!r} and a calibration both given", key=f"{key}.threshold",
                             hint="remove `threshold` to use the calibrated one, or remove `calibration`")
    if ref is None:
        ref_key, path = f"{key}.threshold", Path(base_dir, DEFAULT_FILE)
    elif isinstance(ref, str) and ref.startswith("file://") and len(ref) > len("file://"):
        ref_key, path = f"{key}.calibration", Path(base_dir, ref[len("file://"):])
    else:
        raise ConfigError.at(loc, f"calibration must be a file:// reference, not {ref!r}", key=f"{key}.calibration",
                             hint="e.g. `calibration: file://calibration.json`")
    data = _read(path, loc, ref_key)
    READ.add(str(path))
    found = [m for m in data["metrics"] if isinstance(m, dict) and m.get("metric") == metric]
    if not found:
        have = ", ".join(str(m.get("metric")) for m in data["metrics"] if isinstance(m, dict)) or "none"
        raise ConfigError.at(loc, f"calibration {str(path)!r} has no metric {metric!r} (it has: {have})",
                             key=ref_key, hint="label this metric and calibrate again, or set a numeric threshold")
    entry = found[0]
    value = entry.get("threshold")
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        why = entry.get("note") or "it has no threshold"
        raise ConfigError.at(loc, f"calibration {str(path)!r} gives {metric} no threshold: {why}", key=ref_key,
                             hint="label more cases (at least 20 pass and 20 fail) and calibrate again")
    grader: dict[str, Any] = entry["grader"] if isinstance(entry.get("grader"), dict) else {}
    n: int = entry["n"] if isinstance(entry.get("n"), int) else 0
    figure = entry.get("oof_balanced_accuracy")
    labels: dict[str, Any] = data["labels"] if isinstance(data.get("labels"), dict) else {}
    return float(value), Calibrated(display_path(path), metric, float(value), dict(grader),
                                    float(figure) if isinstance(figure, (int, float)) else None, n,
                                    labels.get("sha256"))


def mismatches(tests: Iterable[TestSpec], cli_grader: str | None, suite: Any) -> list[str]:
    """A warning per calibrated assertion whose grader in this run differs from the one it was calibrated with
    (another id, or another builtin version or model hash)."""
    from evalrun.grading.select import GraderResolver, grader_id_of, grader_identity

    if not READ:
        return []
    resolver = GraderResolver(suite, cli_grader, None)
    out: list[str] = []
    said: set[tuple[str, str, str]] = set()
    for test in tests:
        for spec in every_assertion(test.asserts):
            cal: Calibrated | None = spec.calibration
            if cal is None:
                continue
            used = grader_identity(grader_id_of(resolver.spec_for(spec, test)[0]))
            differs = ["id"] if cal.grader.get("id") != used["id"] else \
                [k for k in ("version", "model_hash") if cal.grader.get(k) != used.get(k)]
            key = (cal.file, cal.metric, json.dumps(used, sort_keys=True))
            if differs and key not in said:
                said.add(key)
                out.append(f"{_where(spec)}: the threshold of {cal.metric} was calibrated ({cal.file}) with grader "
                           f"{grader_text(cal.grader)}, but this run grades with {grader_text(used)} "
                           f"({' and '.join(differs)} differ{'s' if len(differs) == 1 else ''}): the threshold "
                           "and its agreement figure may not carry over; label a sample of this run and "
                           "calibrate again (docs/calibrate.md)")
    return out


def _where(spec: AssertionSpec) -> str:
    return f"{spec.loc or ''} {spec.key_path}".strip()
