"""Renders ``templates/<kind>/`` into a new plugin package.

Templates are ``string.Template`` files (``${name}``; ``$$`` is a literal dollar) so core
needs no template engine. In paths, ``__module__`` becomes the import package and
``__name__`` the plugin's name in snake case; ``.tmpl`` is dropped.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from importlib.resources import files
from importlib.resources.abc import Traversable
from pathlib import Path
from string import Template

from agenthub._version import __version__
from agenthub.errors import ConfigError

KINDS = ("env", "agent", "trainer")
_NAME = re.compile(r"^[a-z][a-z0-9]*(?:[-_][a-z0-9]+)*$")


@dataclass(frozen=True)
class PluginNames:
    """Every spelling of one plugin's name: ``init env word-game`` gives these."""

    kind: str
    name: str  # word-game: what users type (env=word-game)
    dist: str  # agenthub-env-word-game: the distribution on PyPI
    module: str  # agenthub_env_word_game: the import package
    title: str  # WordGame: the class-name prefix

    @classmethod
    def of(cls, kind: str, name: str) -> PluginNames:
        if kind not in KINDS:
            raise ConfigError(f"cannot make a plugin of kind {kind!r}; choose one of: {', '.join(KINDS)}")
        if not _NAME.match(name):
            raise ConfigError(
                f"plugin name {name!r} must be lower-case letters and digits, words joined by '-' or '_', "
                "starting with a letter, e.g. word-game"
            )
        parts = re.split(r"[-_]", name)
        return cls(
            kind=kind,
            name=name,
            dist=f"agenthub-{kind}-{'-'.join(parts)}",
            module=f"agenthub_{kind}_{'_'.join(parts)}",
            title="".join(p.capitalize() for p in parts),
        )

    def variables(self) -> dict[str, str]:
        major, minor, *_ = __version__.split(".")
        return {
            "name": self.name,
            "dist": self.dist,
            "module": self.module,
            "title": self.title,
            "class_name": f"{self.title}Env",
            "agenthub_minor": f"{major}.{minor}",
        }


def _walk(directory: Traversable, prefix: str = "") -> list[tuple[str, Traversable]]:
    found: list[tuple[str, Traversable]] = []
    for entry in sorted(directory.iterdir(), key=lambda e: e.name):
        if entry.is_dir():
            if entry.name != "__pycache__":
                found.extend(_walk(entry, f"{prefix}{entry.name}/"))
        elif entry.name.endswith(".tmpl"):
            found.append((prefix + entry.name, entry))
    return found


def render_plugin(names: PluginNames, destination: Path, *, force: bool = False) -> list[Path]:
    """Write the package into ``destination``; returns the files written."""
    if destination.exists() and any(destination.iterdir()) and not force:
        raise ConfigError(f"{destination} exists and is not empty; choose another --dir or pass --force")
    variables = names.variables()
    snake = names.name.replace("-", "_")
    written: list[Path] = []
    for relative, template in _walk(files("agenthub.scaffold").joinpath("templates", names.kind)):
        target = relative.removesuffix(".tmpl").replace("__module__", names.module).replace("__name__", snake)
        path = destination / target
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(Template(template.read_text(encoding="utf-8")).substitute(variables), encoding="utf-8")
        written.append(path)
    return written
