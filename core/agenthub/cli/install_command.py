"""``agenthub install NAME...`` / ``agenthub uninstall NAME...``: pip, in this interpreter, with short names.

``env-sciworld`` is the distribution ``agenthub-env-sciworld``; a bare first-party name
(``sciworld``) is looked up in the catalogue below; a local path is installed as is. In a
source checkout, first-party plugins install from its ``plugins/`` folder.
"""

from __future__ import annotations

import argparse
import re
import shlex
import subprocess
import sys
from pathlib import Path

import agenthub
from agenthub.errors import ConfigError

KINDS = ("env", "agent", "trainer")
FIRST_PARTY: dict[str, str] = {
    "textcraft": "env",
    "babyai": "env",
    "sciworld": "env",
    "textworld": "env",
    "maze": "env",
    "wordle": "env",
    "openai": "agent",
    "hf": "agent",
    "trl": "trainer",
    "verl": "trainer",
    "openrlhf": "trainer",
    "areal": "trainer",
    "swift": "trainer",
}
"""Plugins maintained in this repository, so that ``agenthub install sciworld`` needs no kind."""

_SHORT = re.compile(r"^(env|agent|trainer)-([A-Za-z0-9][A-Za-z0-9._-]*)(\[[^\]]*\])?(.*)$")
_BARE = re.compile(r"^([a-z][a-z0-9_-]*)(\[[^\]]*\])?(.*)$")


def _checkout_plugins() -> Path | None:
    """``plugins/`` of the source checkout this agenthub runs from, if it does."""
    root = Path(agenthub.__file__).resolve().parents[2]
    plugins = root / "plugins"
    return plugins if (root / "pyproject.toml").is_file() and plugins.is_dir() else None


def _known() -> str:
    return ", ".join(f"{kind}-{name}" for name, kind in FIRST_PARTY.items())


def requirement(name: str) -> str:
    """What pip is given for ``name``: a path, or a distribution with any extras and version."""
    if "/" in name or name.startswith(".") or Path(name).exists():
        path = Path(name)
        if not (path / "pyproject.toml").is_file() and not (path / "setup.py").is_file():
            raise ConfigError(f"{name} is not a Python project (no pyproject.toml or setup.py there)")
        return str(path.resolve())
    if name.startswith("agenthub-"):
        return name
    kind: str | None
    if short := _SHORT.match(name):
        kind, plugin, extras, version = short.group(1), short.group(2), short.group(3) or "", short.group(4)
    elif (bare := _BARE.match(name)) and bare.group(1) in FIRST_PARTY:
        plugin, extras, version = bare.group(1), bare.group(2) or "", bare.group(3)
        kind = FIRST_PARTY[plugin]
    else:
        raise ConfigError(
            f"unknown plugin {name!r}: say its kind (env-NAME, agent-NAME or trainer-NAME, installed as "
            f"agenthub-env-NAME ...), give a local path, or choose a known one: {_known()}"
        )
    checkout = _checkout_plugins()
    local = checkout / f"{kind}s" / plugin if checkout else None
    if local is not None and (local / "pyproject.toml").is_file() and not version:
        return f"{local}{extras}"
    return f"agenthub-{kind}-{plugin}{extras}{version}"


def distribution(name: str) -> str:
    """The installed distribution's name for ``name`` (what ``pip uninstall`` needs)."""
    if "/" in name or name.startswith(".") or Path(name).exists():
        import tomllib

        try:
            return str(tomllib.loads((Path(name) / "pyproject.toml").read_text())["project"]["name"])
        except (OSError, KeyError) as exc:
            raise ConfigError(f"cannot read the project name of {name} ({exc}); uninstall it by name") from None
    base = re.split(r"[\[<>=!~ ;]", name, maxsplit=1)[0]
    if base.startswith("agenthub-"):
        return base
    if short := _SHORT.match(base):
        return f"agenthub-{short.group(1)}-{short.group(2)}"
    if base in FIRST_PARTY:
        return f"agenthub-{FIRST_PARTY[base]}-{base}"
    raise ConfigError(f"unknown plugin {name!r}: give its distribution (agenthub-env-NAME), env-NAME, or a path")


def _pip(args: list[str], *, dry_run: bool) -> int:
    command = [sys.executable, "-m", "pip", *args]
    print("$ " + shlex.join(command), flush=True)
    if dry_run:
        return 0
    return subprocess.call(command)


def run_install(args: argparse.Namespace) -> int:
    requirements = [requirement(n) for n in args.names]
    pip_args = ["install", *(["-e"] if args.editable else []), *requirements, *shlex.split(args.pip_args)]
    code = _pip(pip_args, dry_run=args.dry_run)
    if code != 0:
        print(
            f"agenthub install: pip could not install {', '.join(requirements)} (exit {code}). Check the name "
            f"(known plugins: {_known()}), the package index, or give a local path.",
            file=sys.stderr,
        )
        return code
    if not args.dry_run:
        print("installed; `agenthub plugins` lists what they register")
    return 0


def run_uninstall(args: argparse.Namespace) -> int:
    return _pip(["uninstall", "-y", *(distribution(n) for n in args.names)], dry_run=args.dry_run)
