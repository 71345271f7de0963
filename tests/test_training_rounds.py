"""The opt-in training rounds of scripts/train_entailment_head.py (issue 34, part 4): how WordNet antonyms and
CondaQA's edits become labelled pairs. Pure functions on small inputs; the data files themselves are not needed."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import random
import sys
from pathlib import Path
from types import ModuleType

import pytest

SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def load(name: str, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(SCRIPTS))  # train_entailment_head imports wordnet_antonyms beside it
    spec = importlib.util.spec_from_file_location(name, SCRIPTS / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, name, module)
    spec.loader.exec_module(module)
    return module


def test_contradictory_antonyms_give_the_negated_other_both_ways(monkeypatch: pytest.MonkeyPatch) -> None:
    train = load("train_entailment_head", monkeypatch)
    rows = train.wordnet_pairs("The item is available.", "Evidence.", random.Random(0),
                               {"available": ("unavailable", True)})
    by_pair = {(p, h): y for p, h, y in rows}
    assert by_pair[("The item is available.", "The item is unavailable.")] == "refuted"
    assert by_pair[("The item is unavailable.", "The item is available.")] == "refuted"
    assert by_pair[("Evidence.", "The item is unavailable.")] == "refuted"
    negated = [(p, h, y) for p, h, y in rows if "unavailable" in h and ("not" in h or "n't" in h or "never" in h)]
    assert negated and all(y == "supported" for _, _, y in negated)
    back = [y for p, h, y in rows if h == "The item is available." and "unavailable" in p and p != "The item is unavailable."]
    assert back == ["supported"]  # "not unavailable" gives "available": the pair is contradictory


def test_contrary_antonyms_do_not_give_the_other_from_its_negation(monkeypatch: pytest.MonkeyPatch) -> None:
    train = load("train_entailment_head", monkeypatch)
    rows = train.wordnet_pairs("The soup is hot.", None, random.Random(0), {"hot": ("cold", False)})
    by_pair = {(p, h): y for p, h, y in rows}
    assert by_pair[("The soup is hot.", "The soup is cold.")] == "refuted"
    from_not_cold = [y for p, h, y in rows if h == "The soup is hot." and p != "The soup is cold."]
    assert from_not_cold == ["nei"]  # "not cold" does not give "hot"
    to_not_cold = [y for p, h, y in rows if p == "The soup is hot." and h not in ("The soup is cold.",)]
    assert to_not_cold == ["supported"]  # "hot" gives "not cold"
    assert train.wordnet_pairs("Nothing to swap here.", None, random.Random(0), {"hot": ("cold", False)}) == []


def test_verb_antonyms_are_swapped_in_the_same_form(monkeypatch: pytest.MonkeyPatch) -> None:
    wordnet = load("wordnet_antonyms", monkeypatch)
    assert wordnet._inflections("allow", {}) == ["allow", "allows", "allowed"]
    assert wordnet._inflections("deny", {}) == ["deny", "denies", "denied"]
    assert wordnet._inflections("sell", {"sell": ["sold"]}) == ["sell", "sells", "sold"]


def test_condaqa_edits_become_pairs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    train = load("train_entailment_head", monkeypatch)
    original = "Gift cards are not refundable."
    passage = f"Our store sells gift cards. {original} They never expire."
    edits = {0: passage, 1: passage.replace(original, "Gift cards cannot be refunded."),
             2: passage.replace(original, "Not all gift cards are refundable."),
             3: passage.replace(original, "Gift cards are refundable.")}
    path = tmp_path / "condaqa_dev.json"
    path.write_text("".join(json.dumps({"PassageID": 7, "PassageEditID": k, "sentence1": text,
                                        "original sentence": original}) + "\n" for k, text in edits.items()))
    monkeypatch.setattr(train, "CONDAQA", path)
    monkeypatch.setattr(train, "CONDAQA_SHA256", hashlib.sha256(path.read_bytes()).hexdigest())
    pairs = {(p["p"], p["h"]): p["y"] for p in train.condaqa_pairs()}
    assert pairs == {(original, "Gift cards cannot be refunded."): "supported",
                     ("Gift cards cannot be refunded.", original): "supported",
                     (original, "Gift cards are refundable."): "refuted",
                     ("Gift cards are refundable.", original): "refuted"}
    monkeypatch.setattr(train, "CONDAQA_SHA256", "0" * 64)
    with pytest.raises(SystemExit, match="sha256"):
        train.condaqa_pairs()
