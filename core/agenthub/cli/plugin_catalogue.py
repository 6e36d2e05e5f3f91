"""The plugins ``agenthub install NAME`` knows by their short name, learnt from distributions, never listed.

A plugin is a distribution named ``agenthub-KIND-NAME`` (KIND: env, agent or trainer), so its name says its
kind. They are found, first source first:

1. a source checkout's ``plugins/KINDs/NAME/pyproject.toml`` (its ``project.name``);
2. the wheels and source archives in ``--find-links`` folders (their file names);
3. the distributions installed in this interpreter (so ``agenthub uninstall NAME`` and reinstalls work anywhere);
4. ``first_party_plugins.toml``, package data written from the checkout's ``plugins/`` when core is built, so
   ``pip install agenthub && agenthub install sciworld`` needs no kind where nothing else names sciworld (a test
   holds it equal to ``plugins/``; regenerate it with ``python -m agenthub.cli.plugin_catalogue``).

A short name two kinds share (``agenthub-env-foo`` and ``agenthub-agent-foo``) is left out: it needs its kind.
"""

from __future__ import annotations

import re
import sys
import tomllib
from collections.abc import Callable, Iterable, Iterator, Mapping
from importlib import metadata, resources
from pathlib import Path

KINDS = ("env", "agent", "trainer")
_DISTRIBUTION = re.compile(r"^agenthub-(env|agent|trainer)-([a-z0-9][a-z0-9-]*)$")
_ARCHIVES = ("*.whl", "*.tar.gz", "*.zip")
SHIPPED = "first_party_plugins.toml"
"""The package data of :mod:`agenthub.cli` listing the first-party plugins, short name -> kind."""
REGENERATE = f"python -m agenthub.cli.plugin_catalogue plugins > core/agenthub/cli/{SHIPPED}"
"""The command, run at the checkout's root, that rewrites :data:`SHIPPED` from ``plugins/``."""


def normalize(name: str) -> str:
    """A distribution name as the package index compares them (PEP 503): lower case, runs of ``-_.`` as ``-``."""
    return re.sub(r"[-_.]+", "-", name).lower()


def plugin_of(distribution: str) -> tuple[str, str] | None:
    """``(kind, short name)`` of a plugin distribution (``agenthub_env_sciworld`` -> env, sciworld), else None."""
    match = _DISTRIBUTION.match(normalize(distribution))
    return (match.group(1), match.group(2)) if match else None


def _project_name(pyproject: Path) -> str | None:
    try:
        name = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("project", {}).get("name")
    except (OSError, tomllib.TOMLDecodeError):
        return None  # not a project we can read: it is no plugin of the catalogue
    return name if isinstance(name, str) else None


def in_checkout(plugins: Path) -> Iterator[tuple[str, str]]:
    """``(short name, kind)`` of each project under ``plugins/envs``, ``plugins/agents`` and ``plugins/trainers``
    whose distribution is that folder's kind."""
    for kind in KINDS:
        folder = plugins / f"{kind}s"
        for pyproject in sorted(folder.glob("*/pyproject.toml")) if folder.is_dir() else []:
            found = plugin_of(_project_name(pyproject) or "")
            if found is not None and found[0] == kind:
                yield found[1], kind


def _archive_distribution(file: Path) -> str:
    """The distribution of ``NAME-VERSION...whl`` / ``NAME-VERSION.tar.gz``: wheels write ``-`` in names as ``_``,
    so the name is the text before the first ``-``; an sdist's is before the last one."""
    if file.suffix == ".whl":
        return file.name.split("-", 1)[0]
    stem = file.name.removesuffix(".tar.gz").removesuffix(".zip")
    return stem.rsplit("-", 1)[0]


def in_wheelhouses(places: Iterable[str]) -> Iterator[tuple[str, str]]:
    """``(short name, kind)`` of each plugin archive in the local folders among ``--find-links`` places
    (a URL is skipped: only pip reads it)."""
    for place in places:
        folder = Path(place.removeprefix("file://"))
        if "://" in place.removeprefix("file://") or not folder.is_dir():
            continue
        for pattern in _ARCHIVES:
            for file in sorted(folder.glob(pattern)):
                if (found := plugin_of(_archive_distribution(file))) is not None:
                    yield found[1], found[0]


def installed() -> Iterator[tuple[str, str]]:
    """``(short name, kind)`` of each plugin distribution installed in this interpreter."""
    for dist in metadata.distributions():
        if (found := plugin_of(dist.metadata["Name"] or "")) is not None:
            yield found[1], found[0]


def shipped() -> Iterator[tuple[str, str]]:
    """``(short name, kind)`` of each first-party plugin :data:`SHIPPED` lists (none if this core lacks it)."""
    try:
        listed = tomllib.loads(resources.files("agenthub.cli").joinpath(SHIPPED).read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return  # a core built without it knows the other sources' plugins only, as before it existed
    for name, kind in listed.items():
        if kind in KINDS:
            yield name, kind


CPU_TABLE = "trains_on_cpu"
"""The table of :data:`SHIPPED` naming the first-party trainers that train on a CPU (``[tool.agenthub]
trains-on-cpu = true`` in their pyproject, which the trainer's own tests hold equal to its
``TrainerSpec.trains_on_cpu``): what a refusal on a machine without a GPU suggests when no installed
trainer trains on a CPU."""


def _trains_on_cpu(pyproject: Path) -> bool:
    try:
        tool = tomllib.loads(pyproject.read_text(encoding="utf-8")).get("tool", {}).get("agenthub", {})
    except (OSError, tomllib.TOMLDecodeError):
        return False
    return tool.get("trains-on-cpu") is True


def cpu_trainers_in_checkout(plugins: Path) -> list[str]:
    """The trainers under ``plugins/trainers`` whose pyproject says they train on a CPU."""
    folder = plugins / "trainers"
    return [p.parent.name for p in sorted(folder.glob("*/pyproject.toml")) if _trains_on_cpu(p)]


def shipped_cpu_trainers() -> list[str]:
    """The first-party trainers :data:`SHIPPED` lists as training on a CPU (none if this core lacks it)."""
    try:
        listed = tomllib.loads(resources.files("agenthub.cli").joinpath(SHIPPED).read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError):
        return []
    table = listed.get(CPU_TABLE, {})
    return sorted(name for name, cpu in table.items() if cpu is True) if isinstance(table, dict) else []


def render(plugins: Path) -> str:
    """The text of :data:`SHIPPED` for a checkout's ``plugins/`` folder."""
    lines = [
        "# The first-party plugins, short name -> kind: what `agenthub install NAME` falls back on when no",
        "# checkout, --find-links folder or installed distribution names NAME (core installed from the index).",
        "# Written from plugins/ (tests/cli/test_install_first_party.py fails while they differ); at the",
        "# checkout's root, regenerate it with:",
        f"#   {REGENERATE}",
    ]
    entries = [f'{name} = "{kind}"' for name, kind in sorted(in_checkout(plugins))]
    cpu = [f"{name} = true" for name in cpu_trainers_in_checkout(plugins)]
    return "\n".join([*lines, *entries, "", f"[{CPU_TABLE}]", *cpu]) + "\n"


def catalogue(plugins: Path | None, find_links: Iterable[str] = ()) -> dict[str, str]:
    """Short name -> kind of every plugin the sources above name; the first source to name one decides,
    and a name one source gives two kinds is left out."""
    known: dict[str, str] = {}
    decided: set[str] = set()
    sources = [in_checkout(plugins) if plugins else iter(()), in_wheelhouses(find_links), installed(), shipped()]
    for source in sources:
        found: dict[str, set[str]] = {}
        for name, kind in source:
            found.setdefault(name, set()).add(kind)
        for name, kinds in found.items():
            if name not in decided and len(kinds) == 1:
                known[name] = next(iter(kinds))
        decided |= found.keys()
    return dict(sorted(known.items()))


class LazyCatalogue(Mapping[str, str]):
    """:func:`catalogue` read on first use (listing installed distributions takes a moment), then kept."""

    def __init__(self, plugins: Callable[[], Path | None]) -> None:
        self._plugins = plugins
        self._known: dict[str, str] | None = None

    def _load(self) -> dict[str, str]:
        if self._known is None:
            self._known = catalogue(self._plugins())
        return self._known

    def __getitem__(self, name: str) -> str:
        return self._load()[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._load())

    def __len__(self) -> int:
        return len(self._load())


if __name__ == "__main__":  # REGENERATE: print SHIPPED's text for the plugins folder given (default ./plugins)
    sys.stdout.write(render(Path(sys.argv[1] if len(sys.argv) > 1 else "plugins")))
