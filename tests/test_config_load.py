"""evalrun.config.load: every loader feature on small configs written to a temp folder."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from evalrun.config import load
from evalrun.errors import ConfigError
from evalrun.expand import count_cases, iter_cases


def write(folder: Path, name: str, text: str) -> Path:
    path = folder / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return path


def test_minimal_config_and_assertion_specs(tmp_path: Path) -> None:
    cfg = write(tmp_path, "c.yaml", """
        prompts: ["Say {{word}}"]
        providers: [echo]
        tests:
          - description: first
            vars: {word: hi}
            assert:
              - type: not-contains
                value: bye
                weight: 2
                metric: m
              - type: assert-set
                threshold: 0.5
                assert:
                  - type: icontains
                    value: HI
        """)
    suite = load([str(cfg)])
    assert [p.raw for p in suite.prompts] == ["Say {{word}}"]
    assert [p.id for p in suite.providers] == ["echo"]
    t = suite.tests[0]
    assert (t.index, t.description, t.vars, t.loc.line, t.key_path) == (0, "first", {"word": "hi"}, 4, "tests[0]")
    a, s = t.asserts
    assert (a.type, a.negate, a.full_type, a.weight, a.metric) == ("contains", True, "not-contains", 2.0, "m")
    assert a.loc.line == 7 and a.key_path == "tests[0].assert[0]" and a.handler is not None
    assert a.handler.spec is a
    assert s.type == "assert-set" and s.children[0].key_path == "tests[0].assert[1].assert[0]"
    assert s.children[0].loc.line == 14 and s.children[0].handler is not None


def test_default_prompt_and_no_tests_runs_once(tmp_path: Path) -> None:
    cfg = write(tmp_path, "c.yaml", """
        providers: [echo]
        defaultTest:
          vars: {prompt: hello}
        """)
    suite = load([str(cfg)])
    assert suite.prompts[0].raw == "{{prompt}}" and len(suite.tests) == 1
    assert count_cases(suite) == 1 and suite.tests[0].vars == {"prompt": "hello"}


def test_prompt_forms(tmp_path: Path) -> None:
    write(tmp_path, "p/one.txt", "One {{x}}\n---\nTwo {{x}}\n")
    write(tmp_path, "p/chat.json", '[{"role": "system", "content": "be brief"}, {"role": "user", "content": "{{x}}"}]')
    write(tmp_path, "p/chat.yaml", "- role: user\n  content: 'Y {{x}}'\n")
    cfg = write(tmp_path, "c.yaml", """
        prompts:
          - file://p/one.txt
          - file://p/chat.*
          - raw: 'Raw {{x}}'
            label: rawl
          - '[{"role": "user", "content": "J {{x}}"}]'
          - - role: user
              content: 'inline {{x}}'
        providers: [echo]
        tests: [{vars: {x: 1}}]
        """)
    suite = load([str(cfg)])
    raws = [p.raw for p in suite.prompts]
    assert raws[0] == "One {{x}}" and raws[1] == "Two {{x}}"
    assert suite.prompts[0].label == "p/one.txt [1]" and suite.prompts[0].id == "file://p/one.txt#1"
    assert raws[2][1] == {"role": "user", "content": "{{x}}"}  # chat.json (sorted glob)
    assert raws[3] == [{"role": "user", "content": "Y {{x}}"}]
    assert suite.prompts[4].label == "rawl" and raws[4] == "Raw {{x}}"
    assert raws[5] == [{"role": "user", "content": "J {{x}}"}] and isinstance(suite.prompts[5].raw, list)
    assert raws[6] == [{"role": "user", "content": "inline {{x}}"}]
    assert count_cases(suite) == 7


def test_prompt_paths_without_prefix_and_txt_trimming(tmp_path: Path) -> None:
    write(tmp_path, "p/a.txt", "\n  A {{x}}  \n\n")
    write(tmp_path, "p/b.txt", "B1\n  ---  \n\n---\nB2\n")
    cfg = write(tmp_path, "c.yaml", """
        prompts:
          - p/a.txt
          - p/b*
          - 'Summarize README.md for {{x}}'
        providers: [echo]
        tests: [{vars: {x: 1}}]
        """)
    suite = load([str(cfg)])
    assert [p.raw for p in suite.prompts] == ["A {{x}}", "B1", "B2", "Summarize README.md for {{x}}"]
    assert [p.label for p in suite.prompts][:3] == ["p/a.txt", "p/b.txt [1]", "p/b.txt [2]"]
    bad = write(tmp_path, "d.yaml", "prompts: [p/missing.txt]\nproviders: [echo]\n")
    with pytest.raises(ConfigError, match="file not found: p/missing.txt"):
        load([str(bad)])


def test_prompt_map_form_and_labels(tmp_path: Path) -> None:
    write(tmp_path, "a.txt", "A {{x}}")
    cfg = write(tmp_path, "c.yaml", """
        prompts:
          file://a.txt: short
          'B {{x}}': long
        providers: [echo]
        tests: [{vars: {x: 1}}]
        """)
    suite = load([str(cfg)])
    assert [(p.label, p.raw) for p in suite.prompts] == [("short", "A {{x}}"), ("long", "B {{x}}")]


def test_provider_forms_and_targets_alias(tmp_path: Path) -> None:
    write(tmp_path, "prov.py", "def call_api(prompt, options, context):\n    return {'output': prompt}\n")
    write(tmp_path, "more.yaml", "- id: echo\n  label: from-file\n")
    cfg = write(tmp_path, "c.yaml", """
        prompts: ['{{x}}']
        targets:
          - echo
          - id: openai:gpt-4o-mini
            label: mini
            config: {temperature: 0}
            delay: 50
          - anthropic:messages:claude-3-haiku:
              config: {max_tokens: 10}
          - file://prov.py:call_api
          - file://more.yaml
        tests: [{vars: {x: 1}}]
        """)
    suite = load([str(cfg)])
    p = suite.providers
    assert [x.id for x in p[:3]] == ["echo", "openai:gpt-4o-mini", "anthropic:messages:claude-3-haiku"]
    assert (p[1].label, p[1].config, p[1].delay_ms) == ("mini", {"temperature": 0}, 50)
    assert p[2].config == {"max_tokens": 10}
    assert p[3].id == f"file://{(tmp_path / 'prov.py').resolve()}:call_api"
    assert p[4].label == "from-file" and p[1].loc.line == 4


def test_provider_prompt_filter_and_test_filters(tmp_path: Path) -> None:
    cfg = write(tmp_path, "c.yaml", """
        prompts:
          - {raw: 'A {{x}}', label: a}
          - {raw: 'B {{x}}', label: b}
        providers:
          - {id: echo, label: e1, prompts: [a]}
          - {id: echo, label: e2}
        tests:
          - vars: {x: 1}
          - vars: {x: 2}
            providers: [e2]
            prompts: [b]
        """)
    suite = load([str(cfg)])
    got = [(c.test.index, c.provider.label, c.prompt.label) for c in iter_cases(suite)]
    assert got == [(0, "e1", "a"), (0, "e2", "a"), (0, "e2", "b"), (1, "e2", "b")]
    assert count_cases(suite) == 4


def test_unknown_filter_names_are_errors(tmp_path: Path) -> None:
    cfg = write(tmp_path, "c.yaml", """
        prompts: [{raw: 'A', label: alpha}]
        providers: [{id: echo, prompts: [alpah]}]
        """)
    with pytest.raises(ConfigError, match="alpah") as e:
        load([str(cfg)])
    assert "alpha" in (e.value.hint or "") and e.value.line == 2
    cfg = write(tmp_path, "d.yaml", """
        prompts: ['A']
        providers: [echo]
        tests: [{providers: [ecko]}]
        """)
    with pytest.raises(ConfigError, match="ecko") as e:
        load([str(cfg)])
    assert e.value.line == 3


@pytest.mark.parametrize("written", ["file://prov.py", "file://./prov.py", "ABS", "mine", "file://prov*"])
def test_test_provider_filter_matches_the_id_as_written(tmp_path: Path, written: str) -> None:
    write(tmp_path, "prov.py", "def call_api(prompt, options, context):\n    return {'output': prompt}\n")
    if written == "ABS":
        written = f"file://{tmp_path / 'prov.py'}"
    cfg = write(tmp_path, "c.yaml", f"""
        prompts: ['A']
        providers: [echo, {{id: 'file://prov.py', label: mine}}, 'file://prov.py:call_api']
        tests:
          - providers: ['{written}']
          - providers: [echo]
        """)
    suite = load([str(cfg)])
    got = [(c.test.index, c.provider.id) for c in iter_cases(suite)]
    assert got[-1] == (1, "echo") and all(i == 0 for i, _ in got[:-1])
    ids = [pid for i, pid in got if i == 0]
    assert ids and all(pid.startswith(f"file://{tmp_path}") for pid in ids)
    assert len(ids) == (2 if written.endswith("*") else 1)


def test_test_provider_filter_still_rejects_unknown_file_ids(tmp_path: Path) -> None:
    write(tmp_path, "prov.py", "def call_api(prompt, options, context):\n    return {'output': prompt}\n")
    cfg = write(tmp_path, "c.yaml", """
        prompts: ['A']
        providers: [echo, 'file://prov.py']
        tests: [{providers: ['file://other.py']}]
        """)
    with pytest.raises(ConfigError, match="other.py"):
        load([str(cfg)])


def test_default_test_merge(tmp_path: Path) -> None:
    cfg = write(tmp_path, "c.yaml", """
        prompts: ['{{a}} {{b}}']
        providers: [echo]
        defaultTest:
          vars: {a: da, b: db}
          assert: [{type: contains, value: d}]
          options: {provider: openai:gpt-4o-mini, prefix: 'P '}
          threshold: 0.5
          metadata: {team: x}
        tests:
          - vars: {b: tb}
            assert: [{type: icontains, value: t}]
            metadata: {owner: y}
          - threshold: 0.9
            options: {suffix: ' S'}
        """)
    suite = load([str(cfg)])
    t0, t1 = suite.tests
    assert t0.vars == {"a": "da", "b": "tb"} and t1.vars == {"a": "da", "b": "db"}
    assert [a.type for a in t0.asserts] == ["contains", "icontains"]
    assert t0.asserts[0] is t1.asserts[0]  # the default's assertions are built once and shared
    assert t0.asserts[0].key_path == "defaultTest.assert[0]"
    assert (t0.threshold, t1.threshold) == (0.5, 0.9)
    assert t0.metadata == {"team": "x", "owner": "y"}
    assert t1.options == {"provider": "openai:gpt-4o-mini", "prefix": "P ", "suffix": " S"}
    raws = [c.prompt.raw for c in iter_cases(suite)]
    assert raws == ["P {{a}} {{b}}", "P {{a}} {{b}} S"]


def test_default_test_from_file(tmp_path: Path) -> None:
    write(tmp_path, "d/default.yaml", "vars: {a: 1}\nassert:\n  - type: contains\n    value: file://exp.txt\n")
    write(tmp_path, "d/exp.txt", "expected text")
    cfg = write(tmp_path, "c.yaml", """
        prompts: ['{{a}}']
        providers: [echo]
        defaultTest: file://d/default.yaml
        """)
    suite = load([str(cfg)])
    assert suite.tests[0].vars == {"a": 1}
    assert suite.tests[0].asserts[0].value == "expected text"  # relative to default.yaml's folder


def test_tests_from_every_file_kind(tmp_path: Path) -> None:
    write(tmp_path, "t/a.yaml", "- vars: {q: y1}\n- vars: {q: y2}\n")
    write(tmp_path, "t/b.json", '[{"vars": {"q": "j1"}}]')
    write(tmp_path, "t/c.jsonl", '{"vars": {"q": "l1"}}\n{"vars": {"q": "l2"}, "assert": [{"type": "contains", "value": "l"}]}\n')
    write(tmp_path, "t/d.csv", "q,__expected\nc1,contains:c\n")
    write(tmp_path, "gen.py", "def generate_tests(config=None):\n    return [{'vars': {'q': 'g' + str(i)}} for i in range(2)]\n"
                              "def other(config):\n    return [{'vars': {'q': config['v']}}]\n")
    cfg = write(tmp_path, "c.yaml", """
        prompts: ['{{q}}']
        providers: [echo]
        tests:
          - vars: {q: inline}
          - file://t/*.yaml
          - t/b.json
          - file://t/c.jsonl
          - file://t/d.csv
          - file://gen.py
          - path: file://gen.py:other
            config: {v: cfg}
        """)
    suite = load([str(cfg)])
    qs = [t.vars["q"] for t in suite.tests]
    assert qs == ["inline", "y1", "y2", "j1", "l1", "l2", "c1", "g0", "g1", "cfg"]
    by_q = {t.vars["q"]: t for t in suite.tests}
    assert by_q["l2"].loc.file.endswith("c.jsonl") and by_q["l2"].loc.line == 2
    assert by_q["c1"].loc.line == 2 and by_q["c1"].asserts[0].type == "contains"
    assert by_q["y2"].loc.line == 2


def test_tests_as_single_path_string(tmp_path: Path) -> None:
    write(tmp_path, "tests.csv", "q\na\nb\n")
    cfg = write(tmp_path, "c.yaml", "prompts: ['{{q}}']\nproviders: [echo]\ntests: tests.csv\n")
    assert [t.vars for t in load([str(cfg)]).tests] == [{"q": "a"}, {"q": "b"}]


def test_vars_from_files(tmp_path: Path) -> None:
    write(tmp_path, "ctx.txt", "context text")
    write(tmp_path, "chunks.json", '[{"text": "a", "relevant": true}]')
    write(tmp_path, "qs/1.txt", "q1")
    write(tmp_path, "qs/2.txt", "q2")
    write(tmp_path, "vars.yaml", "shared: from-file\n")
    cfg = write(tmp_path, "c.yaml", """
        prompts: ['{{context}} {{q}}']
        providers: [echo]
        tests:
          - vars:
              context: file://ctx.txt
              chunks: file://chunks.json
              q: file://qs/*.txt
          - vars: file://vars.yaml
            prompts: []
        """)
    suite = load([str(cfg)])
    v = suite.tests[0].vars
    assert v["context"] == "context text" and v["chunks"] == [{"text": "a", "relevant": True}]
    assert v["q"] == ["q1", "q2"] and count_cases(suite) == 2
    assert suite.tests[1].vars == {"shared": "from-file"}


def test_scenarios(tmp_path: Path) -> None:
    cfg = write(tmp_path, "c.yaml", """
        prompts: ['{{lang}} {{q}}']
        providers: [echo]
        defaultTest:
          vars: {lang: none, q: dq}
          assert: [{type: contains, value: x}]
        tests: [{vars: {q: plain}}]
        scenarios:
          - description: langs
            config:
              - vars: {lang: fr}
                assert: [{type: icontains, value: f}]
              - vars: {lang: de}
            tests:
              - vars: {q: one}
                assert: [{type: not-contains, value: z}]
              - description: two
                vars: {q: two}
        """)
    suite = load([str(cfg)])
    got = [(t.vars["lang"], t.vars["q"], [a.full_type for a in t.asserts]) for t in suite.tests]
    assert got == [
        ("none", "plain", ["contains"]),
        ("fr", "one", ["contains", "icontains", "not-contains"]),
        ("fr", "two", ["contains", "icontains"]),
        ("de", "one", ["contains", "not-contains"]),
        ("de", "two", ["contains"]),
    ]
    assert suite.tests[1].description == "langs" and suite.tests[2].description == "two"
    assert [t.index for t in suite.tests] == [0, 1, 2, 3, 4]


def test_several_configs_merge(tmp_path: Path) -> None:
    a = write(tmp_path, "a/a.yaml", """
        prompts: ['{{x}}']
        providers: [echo]
        defaultTest: {vars: {x: a, y: a}, assert: [{type: contains, value: a}]}
        tests: [{vars: {z: 1}}]
        evaluateOptions: {maxConcurrency: 2, repeat: 2}
        """)
    b = write(tmp_path, "b/b.yaml", """
        prompts: ['{{x}}']
        providers: [echo, {id: echo, label: two}]
        defaultTest: {vars: {y: b}, assert: [{type: icontains, value: b}]}
        tests: [{vars: {z: 2}}]
        evaluateOptions: {repeat: 3}
        """)
    suite = load([str(a), str(b)])
    assert len(suite.prompts) == 1 and [p.name for p in suite.providers] == ["echo", "two"]
    assert [t.vars for t in suite.tests] == [{"x": "a", "y": "b", "z": 1}, {"x": "a", "y": "b", "z": 2}]
    assert [x.type for x in suite.tests[0].asserts] == ["contains", "icontains"]
    assert suite.evaluate_options == {"maxConcurrency": 2, "repeat": 3}
    assert count_cases(suite) == 2 * 2 * 3 and count_cases(suite, repeat=1) == 4


def test_extends(tmp_path: Path) -> None:
    write(tmp_path, "base/base.yaml", """
        description: base
        prompts: ['{{x}}']
        providers: [echo]
        defaultTest: {vars: {x: 1}}
        tests: [{description: from-base}]
        grader: builtin
        """)
    cfg = write(tmp_path, "c.yaml", """
        extends: base/base.yaml
        description: child
        tests: [{description: from-child}]
        grader: openai:gpt-4o-mini
        """)
    suite = load([str(cfg)])
    assert suite.description == "child" and suite.grader == "openai:gpt-4o-mini"
    assert [t.description for t in suite.tests] == ["from-base", "from-child"]
    loop = write(tmp_path, "loop.yaml", "extends: loop.yaml\nproviders: [echo]\n")
    with pytest.raises(ConfigError, match="loops back"):
        load([str(loop)])


def test_env_and_cli_vars(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from evalrun import templating

    monkeypatch.setenv("FROM_OS", "os")
    cfg = write(tmp_path, "c.yaml", """
        env: {GREETING: hi, N: 3}
        prompts: ['{{ env.GREETING }} {{ env.FROM_OS }} {{ who }}']
        providers: [echo]
        tests: [{vars: {}}, {vars: {who: test}}]
        """)
    suite = load([str(cfg)], cli_vars={"who": "cli"})
    assert suite.env == {"GREETING": "hi", "N": "3"}
    assert [t.vars["who"] for t in suite.tests] == ["cli", "test"]
    assert templating.render(suite.prompts[0].raw, suite.tests[0].vars) == "hi os cli"


def test_settings_are_kept(tmp_path: Path) -> None:
    cfg = write(tmp_path, "c.yaml", """
        description: d
        prompts: ['x']
        providers: [echo]
        outputPath: out.json
        grader: {id: openai:gpt-4o-mini, config: {temperature: 0}}
        derivedMetrics: [{name: f1, value: 'a + b'}]
        evaluateOptions: {maxConcurrency: 3, cache: false, timeoutMs: 1000, delay: 5}
        """)
    suite = load([str(cfg)])
    assert suite.output_paths == ("out.json",) and suite.grader["id"] == "openai:gpt-4o-mini"
    assert suite.derived_metrics == ({"name": "f1", "value": "a + b"},)
    assert suite.evaluate_options["maxConcurrency"] == 3 and suite.files == (str(cfg),)


def test_assertion_file_values(tmp_path: Path) -> None:
    write(tmp_path, "check.py", "def get_assert(output, context):\n    return True\n")
    write(tmp_path, "expected.txt", "the answer")
    write(tmp_path, "chunks.yaml", "- {text: a, relevant: true}\n")
    cfg = write(tmp_path, "c.yaml", """
        prompts: ['x']
        providers: [echo]
        tests:
          - assert:
              - {type: python, value: file://check.py}
              - {type: equals, value: file://expected.txt}
              - {type: noise-sensitivity, value: gt, config: {contextChunks: file://chunks.yaml}}
        """)
    a = load([str(cfg)]).tests[0].asserts
    assert a[0].value == f"file://{(tmp_path / 'check.py').resolve()}"
    assert a[1].value == "the answer"
    assert a[2].config["contextChunks"] == [{"text": "a", "relevant": True}]


def test_disable_var_expansion(tmp_path: Path) -> None:
    cfg = write(tmp_path, "c.yaml", """
        prompts: ['{{xs}}']
        providers: [echo]
        defaultTest: {options: {disableVarExpansion: true}}
        tests: [{vars: {xs: [a, b, c]}}]
        """)
    suite = load([str(cfg)])
    assert suite.disable_var_expansion and count_cases(suite) == 1
    assert [c.vars for c in iter_cases(suite)] == [{"xs": ["a", "b", "c"]}]


def test_json_config_with_lines(tmp_path: Path) -> None:
    cfg = write(tmp_path, "c.json", """
        {
          "prompts": ["{{q}}"],
          "providers": ["echo"],
          "tests": [
            {"vars": {"q": "a"}, "assert": [{"type": "contains", "value": "a"}]},
            {"vars": {"q": "b"}, "asert": []}
          ]
        }
        """)
    with pytest.raises(ConfigError) as e:
        load([str(cfg)])
    assert (e.value.line, e.value.key) == (6, "tests[1].asert")
    cfg.write_text(cfg.read_text().replace('"asert"', '"assert"'))
    suite = load([str(cfg)])
    assert count_cases(suite) == 2 and suite.tests[0].asserts[0].loc.line == 5


def test_generator_errors_name_the_reference(tmp_path: Path) -> None:
    write(tmp_path, "gen.py", "def generate_tests():\n    raise ValueError('no data')\n"
                              "def bad_shape():\n    return [{'vars': {}, 'asserts': []}]\n")
    cfg = write(tmp_path, "c.yaml", "prompts: ['x']\nproviders: [echo]\ntests:\n  - file://gen.py\n")
    with pytest.raises(ConfigError, match="raised ValueError: no data") as e:
        load([str(cfg)])
    assert e.value.line == 4
    cfg = write(tmp_path, "d.yaml", "prompts: ['x']\nproviders: [echo]\ntests:\n  - file://gen.py:bad_shape\n")
    with pytest.raises(ConfigError, match="unknown key 'asserts'") as e:
        load([str(cfg)])
    assert "did you mean `assert`" in (e.value.hint or "")


def test_unset_environment_variables_are_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("EVALRUN_T_UNSET", raising=False)
    cfg = write(tmp_path, "c.yaml", """
        env: {FROM_CONFIG: x}
        prompts: ["{{ env.FROM_CONFIG }} {{ env['EVALRUN_T_UNSET'] }}"]
        providers: [echo]
        """)
    with pytest.raises(ConfigError, match="environment variable 'EVALRUN_T_UNSET' used in prompt") as e:
        load([str(cfg)])
    assert e.value.line == 2 and "export EVALRUN_T_UNSET" in (e.value.hint or "")
    monkeypatch.setenv("EVALRUN_T_UNSET", "now set")
    assert load([str(cfg)]).prompts[0].raw.startswith("{{ env.FROM_CONFIG }}")
    cfg = write(tmp_path, "d.yaml", """
        prompts: ['x']
        providers: [echo]
        tests:
          - assert:
              - type: contains
                value: '{{ env.EVALRUN_T_NOPE }}'
        """)
    with pytest.raises(ConfigError, match="'EVALRUN_T_NOPE' used in the value of contains") as e:
        load([str(cfg)])
    assert e.value.line == 5


def test_postprocess_is_an_alias_of_transform(tmp_path: Path) -> None:
    cfg = write(tmp_path, "c.yaml", "prompts: [x]\nproviders: [echo]\ntests: [{options: {postprocess: output}}]\n")
    assert load([str(cfg)]).tests[0].options == {"transform": "output"}


def test_assertion_template_errors(tmp_path: Path) -> None:
    cfg = write(tmp_path, "c.yaml", """
        prompts: ['{{q}}']
        providers: [echo]
        tests:
          - vars: {q: a}
            assert:
              - type: contains
                value: '{{ q | shout }}'
        """)
    with pytest.raises(ConfigError, match="No filter named 'shout'") as e:
        load([str(cfg)])
    assert (e.value.line, e.value.key) == (6, "tests[0].assert[0].value")


def test_a_file_reached_twice_counts_once(tmp_path: Path) -> None:
    write(tmp_path, "d.yaml", "providers: [echo]\nprompts: ['{{x}}']\ntests: [{vars: {x: d}}]\n")
    write(tmp_path, "b.yaml", "extends: d.yaml\ntests: [{vars: {x: b}}]\n")
    write(tmp_path, "c.yaml", "extends: d.yaml\ntests: [{vars: {x: c}}]\n")
    a = write(tmp_path, "a.yaml", "extends: [b.yaml, c.yaml]\n")
    assert [t.vars["x"] for t in load([str(a)]).tests] == ["d", "b", "c"]


def test_optional_variables_are_not_required(tmp_path: Path) -> None:
    cfg = write(tmp_path, "c.yaml", """
        prompts: ["{{ q }} {{ tone | default('neutral') }}{% if extra is defined %} {{ extra }}{% endif %}"]
        providers: [echo]
        tests:
          - vars: {q: a}
          - vars: {q: b, tone: warm, extra: more}
        """)
    from evalrun.templating import render_prompt

    suite = load([str(cfg)])
    assert [render_prompt(c.prompt.raw, c.vars) for c in iter_cases(suite)] == ["a neutral", "b warm more"]
