"""The public API that plugins live on (CONTRIBUTING.md, "The public API").

Five modules are public: ``agenthub``, ``agenthub.rollout``, ``agenthub.training``,
``agenthub.config`` and ``agenthub.testing``; a name is public when it is in one of their
``__all__``. Every in-tree plugin and example is held to it, so that the modules behind
them can move without breaking a plugin.
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PUBLIC_MODULES = (
    "agenthub",
    "agenthub.rollout",
    "agenthub.training",
    "agenthub.config",
    "agenthub.testing",
    "agenthub.service",
)
SKIPPED_DIRS = {".venv", "build", "dist", "node_modules", "__pycache__"}


@dataclass(frozen=True)
class AgenthubImport:
    path: str
    line: int
    module: str
    names: tuple[str, ...]


def plugin_sources() -> Iterator[Path]:
    for top in ("plugins", "examples"):
        for path in sorted((ROOT / top).rglob("*.py")):
            if not SKIPPED_DIRS.intersection(path.relative_to(ROOT).parts):
                yield path


def agenthub_imports(path: Path) -> Iterator[AgenthubImport]:
    where = path.relative_to(ROOT).as_posix()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=where)):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module == "agenthub" or node.module.startswith("agenthub."):
                yield AgenthubImport(where, node.lineno, node.module, tuple(a.name for a in node.names))
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("agenthub."):
                    yield AgenthubImport(where, node.lineno, alias.name, ())


def private_uses(imports: list[AgenthubImport]) -> list[str]:
    """Each import of a private module or of a name outside its module's ``__all__``, in words."""
    public = {name: set(importlib.import_module(name).__all__) for name in PUBLIC_MODULES}
    problems = []
    for use in imports:
        if use.module not in public:
            homes = sorted({m for name in use.names for m in PUBLIC_MODULES if name in public[m]})
            hint = f"import it from {' or '.join(homes)}" if homes else "export what it needs from a public module"
            problems.append(f"{use.path}:{use.line} imports the private module {use.module}; {hint}")
            continue
        for name in use.names:
            if name not in public[use.module]:
                problems.append(
                    f"{use.path}:{use.line} imports {name} from {use.module}, which does not list it in __all__; "
                    "add it there if plugins need it"
                )
    return problems


@pytest.mark.parametrize("module", PUBLIC_MODULES)
def test_every_public_name_resolves_and_is_listed_once(module: str) -> None:
    loaded = importlib.import_module(module)
    assert len(set(loaded.__all__)) == len(loaded.__all__)
    missing = [name for name in loaded.__all__ if not hasattr(loaded, name)]
    assert missing == []


def test_plugins_and_examples_import_only_public_names() -> None:
    imports = [use for path in plugin_sources() for use in agenthub_imports(path)]
    assert len(imports) > 100  # the scan sees the plugins' imports
    assert private_uses(imports) == []


def test_the_scan_names_a_private_import_and_where_its_name_is_public() -> None:
    uses = [
        AgenthubImport("plugins/x/a.py", 3, "agenthub.rollout.store", ("RunStore",)),
        AgenthubImport("plugins/x/a.py", 4, "agenthub.types", ("Task",)),
        AgenthubImport("plugins/x/a.py", 5, "agenthub.rollout", ("TokenAssembler",)),
        AgenthubImport("plugins/x/a.py", 6, "agenthub", ("HorizonSpec", "hookimpl")),
    ]
    assert private_uses(uses) == [
        "plugins/x/a.py:3 imports the private module agenthub.rollout.store; import it from agenthub.rollout",
        "plugins/x/a.py:4 imports the private module agenthub.types; import it from agenthub",
        "plugins/x/a.py:5 imports TokenAssembler from agenthub.rollout, which does not list it in __all__; "
        "add it there if plugins need it",
    ]


def test_what_each_hook_needs_is_public() -> None:
    import agenthub

    for name in ("EnvSpec", "AgentSpec", "TrainerSpec", "CommandSpec", "HorizonSpec", "HorizonSchedule", "hookimpl"):
        assert name in agenthub.__all__


def test_importing_agenthub_and_its_facades_stays_light() -> None:
    heavy = ("fastapi", "uvicorn", "httpx", "gymnasium", "torch", "transformers")
    code = (
        "import sys, agenthub, agenthub.rollout, agenthub.testing, agenthub.gymnasium\n"
        f"print(','.join(m for m in {heavy!r} if m in sys.modules))"
    )
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == ""


def test_the_gymnasium_bridge_does_not_import_the_client() -> None:
    """The bridge (hub -> gymnasium) and the client used to import each other."""
    code = "import sys, agenthub.gymnasium.remote_env\nprint('agenthub.service.client' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "False"


def test_an_unknown_name_is_an_attribute_error_naming_the_module() -> None:
    import agenthub.rollout

    with pytest.raises(AttributeError, match=r"module 'agenthub\.rollout' has no attribute 'Nope'"):
        _ = agenthub.rollout.Nope
