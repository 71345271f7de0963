"""yamlevents (large YAML read from parser events) gives exactly what the composing reader gives, or falls back."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from evalrun.config import yamlevents, yamlsrc
from evalrun.config.yamlsrc import LDict, LList
from evalrun.errors import ConfigError

ROOT = Path(__file__).resolve().parent.parent


def composed(text: str, file: str = "f.yaml") -> Any:
    """The composing reader, whatever the text's size."""
    loader = yamlsrc._Loader(text)
    try:
        node = loader.get_single_node()
        return None if node is None else yamlsrc._Converter(loader, file).convert(node)
    finally:
        loader.dispose()


def same(a: Any, b: Any, path: str = "") -> None:
    """Equal values, types, lines and key/item lines, all the way down."""
    assert type(a) is type(b), path
    if isinstance(a, LDict):
        assert (a.file, a.line, a.key_lines) == (b.file, b.line, b.key_lines), path
        assert list(a) == list(b), path
        for k in a:
            same(a[k], b[k], f"{path}.{k}")
    elif isinstance(a, LList):
        assert (a.file, a.line, a.item_lines, len(a)) == (b.file, b.line, b.item_lines, len(b)), path
        for i, (x, y) in enumerate(zip(a, b, strict=True)):
            same(x, y, f"{path}[{i}]")
    elif isinstance(a, float) and a != a:
        assert b != b, path
    else:
        assert a == b, path


DOCS = [
    "a: 1\nb: [x, 'y', 2.5, true, null, ~, 0o17, 0x1F, 012, yes, 1:30, .inf, -.Inf, .nan]\n",
    "- {a: b, c: [1, 2, {d: e}]}\n- - nested\n  - list\n- ''\n-\n",
    "tests:\n  - vars: {q: [one, two, three]}\n    assert:\n      - type: contains\n        value: one\n",
    "x: &a {k: v, l: [1, 2]}\ny: *a\nz: [*a, *a]\ns: &s scalar\nt: *s\nu: [*s]\n",
    "1: int key\n2.5: float key\ntrue: bool key\nnull: null key\n'str': s\n",
    "multi: |\n  line one\n  line two\nfolded: >\n  a\n  b\nplain: !!str 123\n",
    "empty_map: {}\nempty_list: []\n",
    "just a scalar\n",
    "",
]
FALLBACKS = [
    "a: 1\na: 2\n",  # duplicate key
    "base: &b {x: 1}\nother:\n  <<: *b\n  y: 2\n",  # merge key
    "a: !!binary aGVsbG8=\n",  # a non-core tag
    "? [a, b]\n: complex key\n",  # a non-scalar key
    "--- 1\n--- 2\n",  # two documents
    "a: !!int notanumber\n",  # an explicit tag that does not fit
    "x: &a\n  - *a\n",  # an alias inside its own anchor
    "k: &k key\n*k : v\n",  # an alias as a key
]


@pytest.mark.parametrize("text", DOCS)
def test_same_values_and_lines_as_the_composing_reader(text: str) -> None:
    built = yamlevents.build(text, "f.yaml")
    assert built is not yamlevents.FALLBACK
    same(built, composed(text))


def test_aliases_share_one_object_and_equal_strings_are_stored_once() -> None:
    built = yamlevents.build("x: &a [1]\ny: *a\nv: [same text, same text]\n", "f.yaml")
    assert built["x"] is built["y"]
    assert built["v"][0] is built["v"][1]


@pytest.mark.parametrize("text", FALLBACKS)
def test_documents_it_does_not_treat_fall_back(text: str) -> None:
    assert yamlevents.build(text, "f.yaml") is yamlevents.FALLBACK


def _outcome(text: str) -> tuple[Any, Any]:
    try:
        return yamlsrc.parse_yaml(text, "f.yaml"), None
    except ConfigError as e:
        return None, (e.message, e.line, e.hint)


@pytest.mark.parametrize("text", FALLBACKS + DOCS[:4] + ["a: [1, 2\n", "a:\n\tb: 1\n"])
def test_large_files_keep_the_usual_values_and_errors(text: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Past the size threshold parse_yaml reads from events; values, merges and errors come out as before."""
    big = text + "# padding\n" * (yamlsrc._EVENTS_MIN_CHARS // 10 + 1)
    assert len(big) >= yamlevents.MIN_CHARS == yamlsrc._EVENTS_MIN_CHARS
    value, error = _outcome(big)
    monkeypatch.setattr(yamlsrc, "_EVENTS_MIN_CHARS", 10**12)  # the composing reader only
    old_value, old_error = _outcome(big)
    assert error == old_error
    if error is None:
        same(value, old_value)


def test_every_yaml_file_of_the_project_reads_the_same() -> None:
    """Differential check over the examples and test fixtures (a large variety of real configs)."""
    checked = 0
    for path in sorted([*ROOT.glob("examples/**/*.y*ml"), *ROOT.glob("tests/**/*.y*ml"), *ROOT.glob("docs/**/*.y*ml")]):
        text = path.read_text(encoding="utf-8-sig")
        try:
            expected = composed(text, str(path))
        except Exception:  # noqa: BLE001 - broken on purpose (fixtures of errors): not this module's concern
            continue
        built = yamlevents.build(text, str(path))
        if built is not yamlevents.FALLBACK:
            same(built, expected, str(path))
            checked += 1
    assert checked >= 15


#: Plain scalars at the edges of the implicit resolvers (the builder decides "str" with one pattern, then caches).
SCALARS = ["true", "True", "tRue", "false", "FALSE", "null", "Null", "nULL", "~", "", "0", "-0", "+12", "012", "0o17",
           "0o8", "0x1F", "0xg", "1_000", "1:30", "1.5", "-.5e3", "1e3", "1.", ".5", ".inf", "-.Inf", "+.INF", ".nan",
           ".NaN", "nan", "inf", "yes", "no", "on", "off", "y", "n", "<<", "<", "-", "--x", "0.0.1", "12abc", "t", "f",
           "2001-12-14", "1e", "e3", "N", "~x", "null x", "true x"]


@pytest.mark.parametrize("scalar", SCALARS)
def test_plain_scalars_resolve_as_the_composing_reader_resolves_them_first_and_cached(scalar: str) -> None:
    """Each value three times (the second and third from the cache), in a list, as a mapping value and a key."""
    if scalar in ("<<", "-", ""):  # a merge key (falls back), and texts that are not plain scalars in a flow list
        return
    text = (f"a: [{scalar}, {scalar}]\nb: {scalar}\nc: {{{scalar}: 1}}\nd: {{{scalar}: 2, z: 3}}\n"
            f"e:\n  - {scalar}\n  - '{scalar}'\n")
    built = yamlevents.build(text, "f.yaml")
    assert built is not yamlevents.FALLBACK
    same(built, composed(text))


def test_nan_values_are_not_shared_and_a_repeated_key_in_a_later_mapping_is_still_a_duplicate() -> None:
    built = yamlevents.build("a: .nan\nb: .nan\n", "f.yaml")
    assert built["a"] is not built["b"]
    assert yamlevents.build("m: {k: 1, j: 2}\nn: {k: 1, k: 2}\n", "f.yaml") is yamlevents.FALLBACK
    assert yamlevents.build("m: {null: 1}\nn: {~: 1, null: 2}\n", "f.yaml") is yamlevents.FALLBACK


def test_alias_budget_counts_what_the_composing_reader_counts() -> None:
    """Values added by aliases: each alias of a list/mapping adds its anchor's size once expanded (nested ones too)."""
    def spent(text: str) -> int:
        loader = yamlsrc._Loader(text)
        conv = yamlsrc._Converter(loader, "f.yaml")
        node = loader.get_single_node()
        assert node is not None
        conv.convert(node)
        return conv.budget.spent

    text = "a: &a {k: [1, 2, {x: y}], s: &s v}\nb: &b [*a, *a, *s, [*a]]\nc: [*b, *b]\nd: {p: *b, q: *s}\n"
    assert spent(text) == 3 * 10 + 3 * 33  # `a` expands to 10 values, `b` to 33
    same(yamlevents.build(text, "f.yaml"), composed(text))
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(yamlevents, "MAX_ALIAS_VALUES", spent(text) - 1)
        assert yamlevents.build(text, "f.yaml") is yamlevents.FALLBACK
        mp.setattr(yamlevents, "MAX_ALIAS_VALUES", spent(text))
        assert yamlevents.build(text, "f.yaml") is not yamlevents.FALLBACK


def _random_value(rnd: Any, depth: int, shared: list[Any]) -> Any:
    """Random config-like data; some lists/mappings reused (safe_dump writes them as anchors and aliases)."""
    if shared and rnd.random() < 0.08:
        return rnd.choice(shared)
    if depth >= 4 or rnd.random() < 0.45:
        return rnd.choice([*SCALARS, "text with spaces", "multi\nline", "quote ' and \"", "é ✓ 😀", "#hash",
                           "a: b", "- dash", 7, -3, 2.5, 1e20, True, False, None, "12", "true", "null", ""])
    if rnd.random() < 0.5:
        out: Any = [_random_value(rnd, depth + 1, shared) for _ in range(rnd.randint(0, 4))]
    else:
        keys = rnd.sample(["a", "b", "type", "value", "vars", "assert", "1", "true", "null", "x y", "é"], 4)
        out = {k: _random_value(rnd, depth + 1, shared) for k in keys[: rnd.randint(0, 4)]}
    if rnd.random() < 0.2:
        shared.append(out)
    return out


def test_random_documents_in_every_style_read_the_same_as_the_composing_reader() -> None:
    """A varied corpus: random data written block, flow and mixed, with aliases; values and lines must match."""
    import random

    import yaml as pyyaml

    rnd = random.Random(14)
    checked = 0
    for i in range(300):
        data = {"tests": [_random_value(rnd, 1, []) for _ in range(rnd.randint(1, 6))]}
        text = pyyaml.safe_dump(data, default_flow_style=[False, True, None][i % 3], allow_unicode=i % 2 == 0,
                                width=rnd.choice([20, 80, 1000]), sort_keys=False)
        built = yamlevents.build(text, "r.yaml")
        if built is yamlevents.FALLBACK:  # only what the module documents: a merge key `<<` written as a key
            assert "<<" in text, text
            continue
        same(built, composed(text, "r.yaml"), text)
        checked += 1
    assert checked >= 250


def test_caches_emptied_past_their_bound_change_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    """The shared-string, plain-scalar and key caches are bounded (emptied when full): values and lines stay."""
    monkeypatch.setattr(yamlevents, "_STRINGS_MAX", 3)
    text = "".join(f"k{i}: {{a: v{i}, b: true, 'c': [x{i}, 1, '{i}', v{i}]}}\n" for i in range(50))
    same(yamlevents.build(text, "f.yaml"), composed(text))


def test_the_text_is_not_kept_alive_by_the_builder(tmp_path: Path) -> None:
    """Loading runs with the cyclic collector off: the builder's closures (a cycle) must not hold the whole
    text (a 23 MB config kept 22 MB through the run)."""
    import gc
    import tracemalloc

    from evalrun import config

    body = "".join(f"  - vars: {{q: 'value number {i} {'x' * 200}'}}\n    assert: [{{type: contains, value: v}}]\n"
                   for i in range(4000))
    path = tmp_path / "evalrun.yaml"
    path.write_text("providers: [echo]\nprompts: ['{{q}}']\ntests:\n" + body)
    size = path.stat().st_size
    assert size > 512 * 1024  # read from parser events
    was = gc.isenabled()
    gc.disable()
    tracemalloc.start()
    try:
        suite = config.load([str(path)])
        current, _ = tracemalloc.get_traced_memory()
        gc.collect()
        collected = current - tracemalloc.get_traced_memory()[0]  # what only cyclic garbage still held
    finally:
        tracemalloc.stop()
        if was:
            gc.enable()
    assert len(suite.tests) == 4000
    assert collected < size // 4, (collected, size)


def test_the_builder_leaves_no_cycle_behind() -> None:
    """Its functions refer to each other; emptied when it returns, they and its tables (every distinct string of
    the document) are freed by refcount, not kept until a collection (`validate` freezes what is alive after
    loading: a cycle left then would never be freed)."""
    import gc

    text = "".join(f"t{i}: {{a: [v{i}, {{b: c}}], d: &x{i} {{e: f}}, g: *x{i}}}\n" for i in range(40))
    was = gc.isenabled()
    gc.disable()
    try:
        gc.collect()
        built = yamlevents.build(text, "f.yaml")
        left = gc.collect()
    finally:
        if was:
            gc.enable()
    assert built is not yamlevents.FALLBACK and built["t3"]["g"] is built["t3"]["d"]
    assert left == 0
