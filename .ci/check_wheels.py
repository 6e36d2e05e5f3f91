"""Check the wheelhouse: one wheel per distribution of this repository, each carrying every file of its
package (modules and package data: prompts, install.toml, py.typed, shipped data) and complete metadata
(the README as description, the licence and its text, the project URLs, the `agenthub` range of the
protocol line). Run as `python .ci/check_wheels.py WHEELHOUSE`; exits 1 listing every problem found.
"""

from __future__ import annotations

import ast
import re
import sys
import tomllib
import zipfile
from email.message import Message
from email.parser import Parser
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
URL_LABELS = ("Homepage", "Documentation", "Repository", "Issues", "Changelog")


def distribution_dirs(root: Path = ROOT) -> list[Path]:
    """Every directory of this repository that builds a distribution: core, the plugins, the example plugin."""
    candidates = [root, *sorted(root.glob("plugins/*/*")), root / "examples" / "third_party_env"]
    return [path for path in candidates if (path / "pyproject.toml").is_file()]


def core_range(root: Path = ROOT) -> tuple[str, str]:
    """The `agenthub` range a plugin declares: the core line it was built against (docs/releasing.md).

    While core is 0.x its minor number is the compatibility line (0.1.x); from 1.0 on, its major.
    """
    version = source_version(root / "core" / "agenthub" / "_version.py")
    major, minor = (int(part) for part in version.split(".")[:2])
    upper = f"{major}.{minor + 1}" if major == 0 else f"{major + 1}"
    return f"{major}.{minor}", upper


def source_version(path: Path) -> str:
    """`__version__ = "..."` read from a module without importing it."""
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "__version__" for target in node.targets
        ):
            value = node.value
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                return value.value
    raise SystemExit(f'{path}: no `__version__ = "..."` literal; the distribution\'s version is read from it')


def package_dir(dist_dir: Path, project: dict[str, object]) -> Path:
    name = str(project["name"])
    if name == "agenthub":
        return dist_dir / "core" / "agenthub"
    return dist_dir / name.replace("-", "_")


def expected_files(pkg: Path) -> set[str]:
    """Every file a wheel must hold from the package directory (tests and caches aside)."""
    files = set()
    for path in pkg.rglob("*"):
        if not path.is_file() or "__pycache__" in path.parts or path.suffix == ".pyc":
            continue
        files.add(f"{pkg.name}/{path.relative_to(pkg).as_posix()}")
    return files


def _some(items: list[str], shown: int = 5) -> str:
    """The first few of a long list, and how many more: a message a person can read."""
    more = f" and {len(items) - shown} more" if len(items) > shown else ""
    return ", ".join(items[:shown]) + more


def check_distribution(dist_dir: Path, wheelhouse: Path) -> list[str]:
    pyproject = tomllib.loads((dist_dir / "pyproject.toml").read_text())
    project = pyproject["project"]
    name = project["name"]
    where = dist_dir.relative_to(ROOT).as_posix() or "."
    wheels = sorted(wheelhouse.glob(f"{name.replace('-', '_')}-*.whl"))
    if len(wheels) != 1:
        return [
            f"{name} ({where}): expected one wheel in {wheelhouse}, found {[w.name for w in wheels]}; "
            f"build it with `pip wheel --no-deps -w {wheelhouse} {where}`"
        ]
    wheel = wheels[0]
    problems: list[str] = []

    def problem(text: str) -> None:
        problems.append(f"{wheel.name}: {text}")

    pkg = package_dir(dist_dir, project)
    version = source_version(pkg / ("_version.py" if name == "agenthub" else "__init__.py"))
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        dist_info = f"{name.replace('-', '_')}-{version}.dist-info"
        if f"{dist_info}/METADATA" not in names:
            problem(f"no {dist_info}/METADATA: the wheel's version is not the package's __version__ {version}")
            return problems
        metadata: Message = Parser().parsestr(archive.read(f"{dist_info}/METADATA").decode())
        entry_points = (
            archive.read(f"{dist_info}/entry_points.txt").decode() if f"{dist_info}/entry_points.txt" in names else ""
        )

    missing = sorted(expected_files(pkg) - names)
    if missing:
        problem(
            f"lacks {len(missing)} file(s) of its package ({_some(missing)}): list data files in "
            f"[tool.setuptools.package-data] of {where}/pyproject.toml"
            " (modules: [tool.setuptools.packages.find])"
        )

    if metadata.get("Description-Content-Type") != "text/markdown":
        problem('the description is not the README as markdown: set `readme = "README.md"`')
    readme = (dist_dir / "README.md").read_text().strip()
    if str(metadata.get_payload()).strip() != readme:
        problem(f"the description is not {where}/README.md")
    if metadata.get("License-Expression") != "Apache-2.0":
        problem('no `License-Expression: Apache-2.0`: set `license = "Apache-2.0"`')
    if f"{dist_info}/licenses/LICENSE" not in names:
        problem(f'does not carry the licence text: add {where}/LICENSE and `license-files = ["LICENSE"]`')
    urls = {value.split(",", 1)[0].strip() for value in metadata.get_all("Project-URL") or []}
    if missing_urls := [label for label in URL_LABELS if label not in urls]:
        problem(f"no project URL {missing_urls} in [project.urls]")
    if not metadata.get("Summary"):
        problem("no summary: set `description`")
    if not metadata.get("Requires-Python"):
        problem("no Requires-Python")

    if name != "agenthub":
        lower, upper = core_range()
        requires = [
            value
            for value in metadata.get_all("Requires-Dist") or []
            if re.match(r"agenthub\s*[<>=!~;]", value) or value == "agenthub"
        ]
        plain = [value for value in requires if "extra ==" not in value]
        wanted = {f">={lower}", f"<{upper}"}
        if len(plain) != 1 or set(plain[0].removeprefix("agenthub").replace(" ", "").split(",")) != wanted:
            problem(
                f"requires {plain or 'no agenthub'}, not agenthub>={lower},<{upper} "
                "(the protocol line; docs/releasing.md)"
            )
        if "[agenthub]" not in entry_points:
            problem("no entry point in the group `agenthub`: agenthub would not find the plugin")
    return problems


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print("usage: python .ci/check_wheels.py WHEELHOUSE", file=sys.stderr)
        return 2
    wheelhouse = Path(argv[1])
    dists = distribution_dirs()
    problems = [text for dist in dists for text in check_distribution(dist, wheelhouse)]
    for text in problems:
        print(f"check_wheels: {text}", file=sys.stderr)
    if problems:
        return 1
    print(f"check_wheels: {len(dists)} wheels carry their package files and complete metadata")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
