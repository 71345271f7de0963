"""Test evalrun against other dependency versions than constraints.txt pins, and say which package broke what.

    python scripts/check_deps.py newest [--extras dev,ray] [--venv DIR] [--constraints FILE] [TEST ...]
        A fresh venv with constraints.txt's versions (what CI tests), then every dependency upgraded to its newest
        release and the whole test suite run. When tests fail: back to the baseline, then each upgraded package
        alone at its newest version (all others pinned), rerunning the failing tests, so the report names the
        package that broke each test (or says that only a combination of upgrades breaks it, or that the test
        fails at the baseline too). TEST arguments (pytest's) narrow the run; default: the whole suite.
    python scripts/check_deps.py oldest [--venv DIR] [TEST ...]
        [project].dependencies at their lower bounds (`name==lower`), the dev tools at their newest: whether the
        ranges pyproject.toml states really work.
    python scripts/check_deps.py freeze
        Regenerates constraints.txt: `pip freeze` of a fresh venv holding every extra, resolved from the index now.

Out of the default CI path: it needs the package index and takes 10-30 minutes. Exit code 0 when every test
passes, 1 when some fail (the report says which package broke what), 2 when pip cannot install a set.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from datetime import date
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parent.parent
CONSTRAINTS = ROOT / "constraints.txt"
DISTRIBUTION = "evalrun-llm"
#: Installed next to the extras when freezing: what .ci/run installs besides them (`build` for the wheel step).
ALSO = ["build"]
HEADER = """\
# The versions CI tests with: `pip freeze` of a fresh Python {py} venv holding evalrun-llm with every extra
# ({extras}) and {also}, resolved from the package index on {day} (the project itself excluded).
# Used as `pip install -c constraints.txt ...` by the README and .ci/run (pip itself is pinned too: a current pip
# resolves this tree in half the time of Python 3.11's bundled 23.2), so a fresh machine gets what CI tested.
# Regenerate: python scripts/check_deps.py freeze
# Newest releases against these: python scripts/check_deps.py newest (names the package that broke what).
"""


def canonical(name: str) -> str:
    """PEP 503's normalised project name."""
    return re.sub(r"[-_.]+", "-", name).lower()


def parse_pins(text: str) -> dict[str, str]:
    """`name==version` lines (comments and other lines skipped) -> {canonical name: version}."""
    pins = {}
    for line in text.splitlines():
        m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*==\s*([^\s;#]+)", line)
        if m:
            pins[canonical(m.group(1))] = m.group(2)
    return pins


def lower_bounds(pyproject: dict) -> dict[str, str]:
    """{name: lowest version} of [project].dependencies that state a `>=` bound."""
    bounds = {}
    for req in pyproject["project"]["dependencies"]:
        m = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?\s*([^;]*)", req)
        if m:
            low = re.search(r">=\s*([^\s,;]+)", m.group(2))
            if low:
                bounds[canonical(m.group(1))] = low.group(1)
    return bounds


def upgrades(before: dict[str, str], after: dict[str, str]) -> dict[str, tuple[str | None, str]]:
    """{name: (baseline version or None when new, newest version)} for every package that changed."""
    return {n: (before.get(n), v) for n, v in sorted(after.items()) if before.get(n) != v}


def pip_error(output: str) -> str:
    """The lines of pip's error output that say what went wrong (its resolver's explanation included)."""
    lines = [line for line in output.splitlines() if line.strip() and "is ignored:" not in line]
    start = next((i for i, line in enumerate(lines) if "conflict is caused by" in line), max(len(lines) - 8, 0))
    return "\n".join(lines[start:start + 12])


def failing_tests(pytest_output: str) -> dict[str, str]:
    """{node id: first words of the reason} from pytest's `-rfE` summary lines."""
    found = {}
    for line in pytest_output.splitlines():
        m = re.match(r"(FAILED|ERROR) (\S+)(?: - (.*))?$", line)
        if m:
            found[m.group(2)] = (m.group(3) or m.group(1))[:160]
    return found


class Venv:
    def __init__(self, path: Path, tests: list[str]) -> None:
        self.path = path
        self.tests = tests
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(path)], check=True)
        self.python = str(path / "bin" / "python")
        self.must_pip("--upgrade", "pip")  # a current pip resolves this tree in half the time of an old one

    def pip(self, *args: str) -> subprocess.CompletedProcess[str]:
        cmd = [self.python, "-m", "pip", "install", "--disable-pip-version-check", *args]
        return subprocess.run(cmd, cwd=ROOT, text=True, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)

    def must_pip(self, *args: str) -> None:
        done = self.pip(*args)
        if done.returncode:
            sys.exit(f"pip install {' '.join(args)} failed:\n{pip_error(done.stdout)}")

    def freeze(self, with_pip: bool = False) -> dict[str, str]:
        out = subprocess.run([self.python, "-m", "pip", "freeze", "--all", "--exclude", DISTRIBUTION], text=True,
                             capture_output=True, check=True).stdout
        pins = parse_pins(out)
        drop = {"setuptools", "wheel"} | (set() if with_pip else {"pip"})  # what `pip freeze` leaves out
        return {n: v for n, v in pins.items() if n not in drop}

    def pytest(self, *node_ids: str) -> dict[str, str]:
        """Failing tests (node id -> reason); an empty dict when every test passed."""
        cmd = [self.python, "-m", "pytest", "-o", "addopts=", "-q", "-rfE", "-p", "no:cacheprovider",
               *(node_ids or self.tests)]
        done = subprocess.run(cmd, cwd=ROOT, text=True, capture_output=True)
        print("   ", (done.stdout.strip().splitlines() or ["(no output)"])[-1])
        failed = failing_tests(done.stdout)
        if done.returncode not in (0, 5) and not failed:
            sys.exit(f"pytest exited {done.returncode} without a failing test:\n{done.stdout[-2000:]}{done.stderr}")
        return failed


def pin_file(pins: dict[str, str], folder: Path, name: str) -> str:
    path = folder / name
    path.write_text("".join(f"{n}=={v}\n" for n, v in sorted(pins.items())), encoding="utf-8")
    return str(path)


def newest(venv: Venv, extras: str, work: Path, constraints: Path) -> int:
    target = f".[{extras}]"
    print(f"== baseline: -c {constraints.name} -e '{target}'")
    venv.must_pip("-c", str(constraints), "-e", target)
    baseline = venv.freeze()
    print("== every dependency at its newest release")
    venv.must_pip("--upgrade", "--upgrade-strategy", "eager", "-e", target)
    changed = upgrades(baseline, venv.freeze())
    for name, (old, new) in changed.items():
        print(f"   {name} {old or '(new)'} -> {new}")
    if not changed:
        print("   nothing newer than constraints.txt")
    print("== tests at the newest releases")
    failed = venv.pytest()
    if not failed:
        print(f"GREEN: every test passes with the newest releases ({len(changed)} packages newer than "
              "constraints.txt): regenerate it with `python scripts/check_deps.py freeze`")
        return 0
    print(f"== {len(failed)} failing; back to the baseline to find which upgrade broke them")
    baseline_file = pin_file(baseline, work, "baseline.txt")
    venv.must_pip("-r", baseline_file)
    at_baseline = venv.pytest(*failed)
    culprits: dict[str, list[str]] = {}
    for name, (old, new) in changed.items():
        if old is None:
            continue  # a new transitive package comes with the upgrade that needs it
        alone = {**baseline, name: new}
        done = venv.pip("-c", pin_file(alone, work, "alone.txt"), f"{name}=={new}")
        if done.returncode:
            reason = pip_error(done.stdout).replace("\n", "\n   ")
            print(f"-- {name} {new} cannot be installed with the others at the baseline:\n   {reason}")
            continue
        print(f"-- {name} {old} -> {new} alone")
        for test in venv.pytest(*[t for t in failed if t not in at_baseline]):
            culprits.setdefault(test, []).append(f"{name} {old} -> {new}")
        venv.must_pip("-c", baseline_file, f"{name}=={old}")
    print("\nREPORT: tests that fail with the newest releases")
    for test, reason in failed.items():
        if test in at_baseline:
            cause = f"fails at the baseline ({constraints.name}) too: not an upgrade"
        elif test in culprits:
            cause = "broken by " + ", ".join(culprits[test])
        else:
            cause = "no single upgrade breaks it alone: a combination does (or it is flaky)"
        print(f"  {test}\n      {cause}\n      newest: {reason}")
    return 1


def numeric(version: str) -> tuple[int, ...]:
    """"1.89.2" -> (1, 89, 2); the numeric release part only (enough to order these projects' releases)."""
    return tuple(int(x) for x in re.findall(r"\d+", version.split("+")[0])[:4])


def lowest_release(venv: Venv, name: str, bound: str) -> str:
    """The oldest release on the index at or above `bound` (a bound like "9.2" when the first release is 9.2.1)."""
    out = subprocess.run([venv.python, "-m", "pip", "index", "versions", name], text=True, capture_output=True).stdout
    listed = re.search(r"Available versions: (.*)", out)
    releases = [v.strip() for v in listed.group(1).split(",")] if listed else []
    above = sorted((v for v in releases if numeric(v) >= numeric(bound)), key=numeric)
    return above[0] if above else bound


def oldest(venv: Venv, work: Path) -> int:
    bounds = lower_bounds(tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8")))
    bounds = {name: lowest_release(venv, name, bound) for name, bound in bounds.items()}
    print("== [project].dependencies at their lower bounds: " + ", ".join(f"{n}=={v}" for n, v in bounds.items()))
    done = venv.pip("-c", pin_file(bounds, work, "lowest.txt"), "-e", ".[dev]")
    if done.returncode:
        print(pip_error(done.stdout))
        print("RED: pip cannot install the lower bounds together (raise the bound it names)")
        return 2
    installed = venv.freeze()
    print("   installed: " + ", ".join(f"{n}=={installed.get(n)}" for n in bounds))
    failed = venv.pytest()
    for test, reason in failed.items():
        print(f"  {test}\n      {reason}")
    print("GREEN: the lower bounds work" if not failed else f"RED: {len(failed)} tests fail at the lower bounds")
    return 1 if failed else 0


def freeze(venv: Venv) -> int:
    extras = "dev,ray"
    venv.must_pip(f".[{extras}]", *ALSO)
    pins = venv.freeze(with_pip=True)
    py = ".".join(map(str, sys.version_info[:2]))
    head = HEADER.format(py=py, extras=", ".join(extras.split(",")), also=", ".join(ALSO),
                         day=date.today().isoformat())
    lines = [f"{n}=={v}" for n, v in sorted(pins.items())]
    CONSTRAINTS.write_text(head + "\n".join(lines) + "\n", encoding="utf-8")
    print(f"wrote {CONSTRAINTS} ({len(lines)} pins)")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("mode", choices=["newest", "oldest", "freeze"])
    parser.add_argument("--extras", default="dev,ray", help="extras installed for `newest` (dev,ray)")
    parser.add_argument("--venv", type=Path, help="where to build the venv (default: a temporary folder)")
    parser.add_argument("--constraints", type=Path, default=CONSTRAINTS, help="the baseline of `newest`")
    parser.add_argument("tests", nargs="*", help="pytest arguments narrowing the run (default: every test)")
    args = parser.parse_intermixed_args()
    with tempfile.TemporaryDirectory(prefix="evalrun-deps-") as tmp:
        work = Path(tmp)
        venv = Venv(args.venv or work / "venv", args.tests)
        if args.mode == "newest":
            return newest(venv, args.extras, work, args.constraints.resolve())
        if args.mode == "oldest":
            return oldest(venv, work)
        return freeze(venv)


if __name__ == "__main__":
    sys.exit(main())
