"""Scrubber.encoded's fast path (one encode and a search) gives what the full walk gives."""

from __future__ import annotations

import math

from evalrun.credentials import REDACTED, Scrubber


def test_clean_record_is_returned_as_is_and_dirty_ones_are_walked() -> None:
    s = Scrubber(["sk-secret-12345", 'quote"secret-999'])
    assert s.plain_bytes is False  # a secret JSON escapes: every record is walked
    clean = {"a": [1, 2.5, {"b": "text"}], "c": None}
    t = Scrubber(["sk-secret-12345"])
    assert t.plain_bytes and t.encoded(clean)[0] is clean
    dirty = {"out": ["x sk-secret-12345 y"], "sk-secret-12345": 1, "score": math.nan, "n": [math.inf]}
    got = t.encoded(dirty)[0]
    assert got == {"out": [f"x {REDACTED} y"], REDACTED: 1, "score": None, "n": [None]}
    assert s.encoded({"v": 'a quote"secret-999 b'})[0] == {"v": f"a {REDACTED} b"}
    assert Scrubber().encoded({"score": -math.inf, "y": "NaN is a word"})[0] == {"score": None, "y": "NaN is a word"}


def test_encoded_gives_the_bytes_written_and_the_record_the_tally_reads() -> None:
    import json

    s = Scrubber(["sk-secret-12345", "ключ-секрет-42"])
    clean = {"id": "a", "score": 1.0, "vars": {"q": "ünïcode"}, "assertions": [{"score": 0.5, "weight": 1.0}]}
    rec, data = s.encoded(clean)
    assert rec is clean and json.loads(data) == clean and not data.endswith(b"\n")
    # a secret anywhere (keys too, non-ASCII ones too) is redacted in the file and in the record
    rec, data = s.encoded({"out": "x sk-secret-12345", "ключ-секрет-42": 1, "score": 1.0})
    assert rec == {"out": f"x {REDACTED}", REDACTED: 1, "score": 1.0} and json.loads(data) == rec
    # a non-finite number of the record's own fields: the record handed back holds null as the file does
    for dirty in ({"score": math.nan}, {"cost": math.inf}, {"tokens": {"total": math.nan}},
                  {"assertions": [{"score": 1.0, "children": [{"score": -math.inf}]}]}):
        rec, data = s.encoded(dirty)
        assert rec != dirty and json.loads(data) == rec
        assert b"NaN" not in data and b"Infinity" not in data
    # elsewhere (vars, details): the file holds null, never NaN
    rec, data = s.encoded({"vars": {"x": math.nan}, "score": 1.0})
    assert json.loads(data) == {"vars": {"x": None}, "score": 1.0}


def test_secrets_the_encoder_would_escape_are_found_by_the_walk() -> None:
    import json

    s = Scrubber(['quote"secret-999', "tab\tsecret-999"])
    assert not s.plain_bytes
    rec, data = s.encoded({"v": 'a quote"secret-999 b', "w": "tab\tsecret-999"})
    assert json.loads(data) == rec == {"v": f"a {REDACTED} b", "w": REDACTED}
