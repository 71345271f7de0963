"""promptfoo-style configs expand exactly as promptfoo expands them.

Figures measured by running promptfoo 0.121.20 on each fixture with the echo provider:
    promptfoo eval -c promptfooconfig.yaml --no-cache --no-table -o out.json
and counting `results.results` (all passed, 0 errors). Each fixture folder also keeps promptfoo's sorted
(provider, output) pairs in promptfoo-outputs.json: since echo returns the rendered prompt, matching them proves
the same var combinations, provider x prompt pairs and rendered prompts (lists printed as `1,2,3`, booleans as
`true`, as Nunjucks prints them), not just the same count.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from evalrun.config import load
from evalrun.expand import count_cases, iter_cases
from evalrun.templating import render_prompt

FIXTURES = Path(__file__).parent / "fixtures" / "config"

#: fixture -> (tests, cases) ; cases as counted from promptfoo's output (see module docstring)
PROMPTFOO_CASES = {
    "matrix": (3, 156),  # (3x2 + 2x3 + 1 var combos) x 2 providers x 3 prompts x repeat 2; `yes`/`no` are strings
    "defaulttest": (3, 7),  # defaultTest's list var expands in the tests that do not override it
    "scenarios": (7, 13),  # 1 plain test + 3 entries (one with a list var) x 2 scenario tests
    "csv": (4, 8),  # 4 CSV rows x 2 prompts
    "jsonl": (4, 14),  # 3 JSONL lines (one with a 3-value list) + an inline 2-value test, x 2 providers
    "filters": (3, 12),  # provider `prompts` filter, test `providers` and `prompts` filters
    "expansion": (3, 9),  # numeric lists stay whole, mixed lists follow element 0, disableVarExpansion, affixes
}


@pytest.mark.parametrize("name", sorted(PROMPTFOO_CASES))
def test_case_counts_match_promptfoo(name: str) -> None:
    suite = load([str(FIXTURES / name / "promptfooconfig.yaml")])
    tests, cases = PROMPTFOO_CASES[name]
    assert (len(suite.tests), count_cases(suite)) == (tests, cases)
    assert sum(1 for _ in iter_cases(suite)) == cases


@pytest.mark.parametrize("name", sorted(PROMPTFOO_CASES))
def test_rendered_prompts_match_promptfoo_outputs(name: str) -> None:
    peer = json.loads((FIXTURES / name / "promptfoo-outputs.json").read_text(encoding="utf-8"))
    suite = load([str(FIXTURES / name / "promptfooconfig.yaml")])
    ours = Counter((c.provider.name, render_prompt(c.prompt.raw, c.vars)) for c in iter_cases(suite))
    assert peer["cases"] == PROMPTFOO_CASES[name][1]
    assert ours == Counter((p, o) for p, o in peer["outputs"])
