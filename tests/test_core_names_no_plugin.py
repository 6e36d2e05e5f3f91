"""No core module knows a first-party plugin by name (CONTRIBUTING.md: core reads what it needs from specs).

Core's Python source is scanned with ``ast``: every string constant that is not a docstring, and every
identifier (names, attributes, arguments, imports). A string equal to a plugin's entry-point name
(``"webarena"``), naming a plugin's distribution or package (``agenthub-env-webarena``,
``agenthub_trainer_trl``) or keyed on it (``"trainer=trl"``), and an identifier equal to or built from such a
name fail the test with the file and line. Comments and docstrings are prose and are not scanned; an
example in an f-string or a help text is, so core's examples name the built-in envs and agents instead.
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORE = ROOT / "core/agenthub"
# (relative path, plugin name): where core may name a plugin, and why. Add one only with a reason.
ALLOWED = {
    # The built-in trail env's cpu_recipe is a measured fact, and says which trainer measured it
    # (benchmarks/results/trl_seeds.json); no code reads the name, it is shown to people.
    ("core/agenthub/builtin/plugin.py", "trl"),
}
# Plugin names that are also common words in identifiers, which are then not scanned (strings still are):
# ``re.search``, importlib's ``submodule_search_locations``; transformers' ``hf_logging`` (Hugging Face).
WORD_NAMES = {"search", "hf"}


def plugin_names() -> dict[str, str]:
    """Entry-point name -> distribution name, for every first-party plugin."""
    names = {}
    for pyproject in sorted(ROOT.glob("plugins/*/*/pyproject.toml")):
        project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
        for entry_point in project["entry-points"]["agenthub"]:
            names[entry_point] = project["name"]
    return names


def docstring_nodes(tree: ast.AST) -> set[int]:
    """``id`` of every docstring constant: a module's, class's or function's first statement, and the string
    right after an assignment (an attribute docstring)."""
    found = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if not isinstance(body, list):
            continue
        for index, statement in enumerate(body):
            is_string = isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)
            if not is_string or not isinstance(statement.value.value, str):
                continue
            follows_assignment = index > 0 and isinstance(body[index - 1], ast.Assign | ast.AnnAssign)
            if index == 0 or follows_assignment:
                found.add(id(statement.value))
    return found


def string_hits(text: str, names: dict[str, str]) -> list[str]:
    """The plugins a string constant names: equal to a plugin name, its distribution or package, ``kind=name``."""
    hits = []
    for name, distribution in names.items():
        package = distribution.replace("-", "_")
        short = distribution.removeprefix("agenthub-")
        keyed = re.compile(rf"\b(env|agent|trainer)={re.escape(name)}\b")
        if text in (name, short) or distribution in text or package in text or keyed.search(text):
            hits.append(name)
    return hits


def identifier_hits(identifier: str, names: dict[str, str]) -> list[str]:
    """The plugins an identifier is built from (``webarena_sites``, ``agenthub_env_webarena``)."""
    parts = set(identifier.lower().split("_"))
    return [name for name in names if name in parts and name not in WORD_NAMES]


def identifiers(node: ast.AST) -> list[str]:
    if isinstance(node, ast.Name):
        return [node.id]
    if isinstance(node, ast.Attribute):
        return [node.attr]
    if isinstance(node, ast.arg):
        return [node.arg]
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return [node.name]
    if isinstance(node, ast.alias):
        return [node.asname or node.name.split(".")[0], *node.name.split(".")]
    if isinstance(node, ast.ImportFrom) and node.module:
        return node.module.split(".")
    if isinstance(node, ast.keyword) and node.arg:
        return [node.arg]
    return []


def plugin_mentions(path: Path, names: dict[str, str]) -> list[tuple[int, str, str]]:
    """(line, plugin, what) for every place the module's code names a plugin."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = docstring_nodes(tree)
    found = []
    for node in ast.walk(tree):
        line = getattr(node, "lineno", 0)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings:
            found += [(line, name, f"string {node.value[:60]!r}") for name in string_hits(node.value, names)]
        for identifier in identifiers(node):
            found += [(line, name, f"identifier {identifier!r}") for name in identifier_hits(identifier, names)]
    return found


def test_the_scanner_sees_strings_and_identifiers_but_not_prose(tmp_path: Path) -> None:
    names = {"webarena": "agenthub-env-webarena", "trl": "agenthub-trainer-trl", "search": "agenthub-env-search"}
    module = tmp_path / "module.py"
    module.write_text(
        '"""Like webarena\'s sites, agenthub-env-webarena."""\n'
        "# trainer=trl in a comment\n"
        "CPU = ('trl',)\n"
        "x = 'agenthub_env_webarena.plugin'\n"
        "hint = f'pip install agenthub-trainer-trl or run trainer=trl {CPU}'\n"
        "webarena_sites = re.search('a', 'b')\n"
        "message = 'search the index'\n",
        encoding="utf-8",
    )
    found = sorted((line, name) for line, name, _ in plugin_mentions(module, names))
    assert found == [(3, "trl"), (4, "webarena"), (5, "trl"), (6, "webarena")]


def test_no_core_module_names_a_plugin() -> None:
    names = plugin_names()
    assert {"webarena", "trl", "openai"} <= set(names), "the first-party plugins were not found under plugins/"
    problems = []
    for path in sorted(CORE.rglob("*.py")):
        relative = path.relative_to(ROOT).as_posix()
        for line, name, what in plugin_mentions(path, names):
            if (relative, name) not in ALLOWED:
                problems.append(f"{relative}:{line}: {what} names the plugin {name!r}")
    assert not problems, (
        "core names plugins; read the knowledge from the plugin's spec (EnvSpec/AgentSpec/TrainerSpec) instead, "
        "or name a built-in env/agent in examples:\n" + "\n".join(problems)
    )
