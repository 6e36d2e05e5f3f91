"""The README's test command runs the fast suite: the marked categories are left out by default, marked by
rule, named in the README, and each run by `.ci/run` as its own job."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CATEGORIES = ("browser", "jvm", "ray_cluster", "slow")


def pytest_options() -> dict[str, object]:
    options = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["pytest"]["ini_options"]
    assert isinstance(options, dict)
    return options


def test_every_category_is_declared_left_out_by_default_named_in_the_readme_and_run_by_ci() -> None:
    options = pytest_options()
    declared = {str(line).split(":", 1)[0] for line in options["markers"]}  # type: ignore[attr-defined]
    assert set(CATEGORIES) <= declared
    expression = re.search(r"-m '([^']*)'", str(options["addopts"]))
    assert expression is not None, "addopts must deselect the marked categories"
    assert expression.group(1) == f"not ({' or '.join(CATEGORIES)})"
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    assert f"for marker in {' '.join(CATEGORIES)}; do" in ci
    for category in CATEGORIES:
        assert f"python -m pytest -m {category}`" in readme, f"README does not say how to run -m {category}"
    assert "`-m ''`" in readme


def collected(*args: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "--collect-only", "-q", "-p", "no:cacheprovider", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode in (0, 5), done.stdout + done.stderr  # 5: nothing collected
    return [line for line in done.stdout.splitlines() if "::" in line]


def test_tests_are_marked_by_what_they_need_and_the_default_run_leaves_them_out() -> None:
    viewer_pages = "tests/viewer/test_viewer_browser.py"
    sciworld = "plugins/envs/sciworld/tests/test_sciworld_env.py"
    fuzz = "tests/service/test_schema_fuzz.py"
    by_default = collected(viewer_pages, sciworld, fuzz)
    browser = collected("-m", "browser", viewer_pages, sciworld, fuzz)
    jvm = collected("-m", "jvm", viewer_pages, sciworld, fuzz)
    slow = collected("-m", "slow", viewer_pages, sciworld, fuzz)
    everything = collected("-m", "", viewer_pages, sciworld, fuzz)
    assert browser and all(test.startswith(viewer_pages) for test in browser)
    assert jvm and all(test.startswith(sciworld) for test in jvm)
    assert slow and all(test.startswith(f"{fuzz}::test_every_phase") for test in slow)
    # The fuzz file's quick test stays in the default run; nothing marked does.
    assert by_default and not set(by_default) & set(browser + jvm + slow)
    assert sorted(everything) == sorted(by_default + browser + jvm + slow)
