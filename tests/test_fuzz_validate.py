"""A bounded fuzz test: mutated configs fed to `evalrun validate` exit 0 or 2, every error names FILE:LINE,
no traceback escapes, and time and memory stay bounded (hypothesis; about 10 s)."""

from __future__ import annotations

import re
import resource
import time
from pathlib import Path

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from evalrun.cli import main  # noqa: E402

SEED = b"""description: fuzz seed
prompts:
  - "Answer {{question}} using {{context}}"
  - id: p2
    raw: "Short: {{question}}"
providers:
  - echo
  - id: echo
    label: second
    delay: 10
defaultTest:
  options: {disableVarExpansion: false}
  assert:
    - type: contains
      value: "{{question}}"
tests:
  - description: one
    vars: {question: "What is 2+2?", context: [four, 4]}
    assert:
      - type: faithfulness
        threshold: 0.5
      - type: regex
        value: "\\\\d+"
        weight: 2
  - vars: &v {question: q, context: c}
    threshold: 0.5
    assert:
      - type: assert-set
        assert: [{type: icontains, value: q}, {type: levenshtein, value: q, threshold: 3}]
  - vars: *v
evaluateOptions: {maxConcurrency: 2, repeat: 1, delay: 0}
"""

#: Fragments an attacker or a careless user types: YAML syntax, aliases, deep nesting, junk bytes.
FRAGMENTS = [b"&a ", b"*a", b"*v", b"<<: *v\n", b"[", b"]", b"{", b"}", b": ", b"- ", b"\t", b"\x00", b"\xff",
             b"\xed\xa0\xbd", b"\"", b"'", b"|\n", b">-\n", b"!!int ", b"!!python/object ", b"? ", b"#", b"%YAML 1.1\n",
             b"---\n", b"...\n", b".nan", b".inf", b"1e309", b"-1", b"10" * 200, b"{{", b"}}", b"{% for %}",
             b"[" * 300 + b"]" * 300, b"{a: " * 200 + b"1" + b"}" * 200, b"- " * 150 + b"x\n",
             b"type: not-a-type\n", b"threshold: 7\n", b"weight: .inf\n", b"file://nope.yaml", b"\xef\xbb\xbf",
             b"\r\n", b"\\ud83d", b"\n  ", b"\n    - ", b"\n"]

mutation = st.tuples(st.integers(0, len(SEED)), st.integers(0, 40), st.sampled_from(FRAGMENTS) | st.binary(max_size=8))
LOCATED = re.compile(r"^evalrun: [^\n]*?\.yaml:\d+: ", re.M)


@settings(max_examples=120, deadline=None, derandomize=True, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.lists(mutation, min_size=1, max_size=4))
def test_mutated_configs_validate_to_0_or_2_with_a_location(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                           mutations: list[tuple[int, int, bytes]]) -> None:
    data = SEED
    for at, cut, frag in mutations:
        at = min(at, len(data))
        data = data[:at] + frag + data[at + cut:]
    path = tmp_path / "fuzz.yaml"
    path.write_bytes(data)
    start = time.monotonic()
    rc = main(["validate", str(path)])
    elapsed = time.monotonic() - start
    out, err = capsys.readouterr()
    assert rc in (0, 2), (rc, err, data)
    assert "Traceback" not in err + out, data
    if rc == 2:
        assert LOCATED.search(err), (err, data)
    assert elapsed < 5, (elapsed, data)


def test_memory_stayed_bounded() -> None:
    """After the fuzz run (same process), the peak resident size is far from an alias bomb's gigabytes."""
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    assert peak_kb < 1_500_000, f"peak RSS {peak_kb / 1024:.0f} MB"
