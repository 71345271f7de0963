"""Scrubber.record's fast path (one encode and a search) gives what the full walk gives."""

from __future__ import annotations

import math

from evalrun.run.scrub import REDACTED, Scrubber


def test_clean_record_is_returned_as_is_and_dirty_ones_are_walked() -> None:
    s = Scrubber(["sk-secret-12345", 'quote"secret-999'])
    assert s.plain is False  # a secret JSON escapes: every record is walked
    clean = {"a": [1, 2.5, {"b": "text"}], "c": None}
    t = Scrubber(["sk-secret-12345"])
    assert t.plain and t.record(clean) is clean
    dirty = {"out": ["x sk-secret-12345 y"], "sk-secret-12345": 1, "score": math.nan, "n": [math.inf]}
    got = t.record(dirty)
    assert got == {"out": [f"x {REDACTED} y"], REDACTED: 1, "score": None, "n": [None]}
    assert s.record({"v": 'a quote"secret-999 b'}) == {"v": f"a {REDACTED} b"}
    assert Scrubber().record({"x": -math.inf, "y": "NaN is a word"}) == {"x": None, "y": "NaN is a word"}
