"""``agenthub plugins [--json]``."""

from __future__ import annotations

import argparse
import importlib.metadata
import json
from typing import Any

from agenthub._version import __version__
from agenthub.plugins import get_plugin_host
from agenthub.specs import CommandSpec

# Importers serve another package's envs by name prefix, built on request rather than registered.
IMPORTERS = (
    ("gymnasium", "gymnasium", "gym:ID", "agenthub (a core dependency)"),
    ("reasoning-gym", "reasoning-gym", "reasoning_gym:NAME", "pip install 'agenthub[reasoning-gym]'"),
    ("textarena", "textarena", "textarena:NAME", "pip install 'agenthub[textarena]'"),
)


def importer_records() -> list[dict[str, Any]]:
    """One record per importer, shaped like a plugin's, with the version of the package it imports."""
    out: list[dict[str, Any]] = []
    for name, distribution, pattern, install in IMPORTERS:
        try:
            version: str | None = importlib.metadata.version(distribution)
        except importlib.metadata.PackageNotFoundError:
            version = None
        out.append(
            {
                "name": name,
                "distribution": distribution,
                "version": version,
                "builtin": True,
                "importer": True,
                "hooks": [],
                "registered": {"env": [pattern]},
                "errors": [],
                "status": "ok" if version else f"not installed: {install}",
            }
        )
    return out


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def run(args: argparse.Namespace) -> int:
    from rich.table import Table  # imported here, not for `agenthub --help`
    from rich.text import Text

    from agenthub.cli.closed_pipe import console

    host = get_plugin_host()
    records = sorted(host.records.values(), key=lambda r: (not r.builtin, r.name))
    importers = importer_records()
    if args.json:
        print(json.dumps([r.as_dict() for r in records] + importers, indent=2))
        return 0
    table = Table(title="agenthub plugins")
    for column in ("plugin", "distribution", "version", "registers", "status"):
        table.add_column(column, overflow="fold")  # a narrow terminal folds names rather than cutting them
    # Every cell is Text, never markup: names, errors and install hints like 'agenthub[textarena]' come
    # from packages, and rich would take their brackets for style tags and drop them.
    for r in records:
        registers = "; ".join(f"{kind}: {', '.join(names)}" for kind, names in sorted(r.registered.items()))
        status = Text(" | ".join(r.errors), style="red") if r.errors else Text("ok")
        table.add_row(
            *map(Text, (r.name, r.distribution or ("(built in)" if r.builtin else "-"), r.version or "-", registers)),
            status,
        )
    for i in importers:
        status = Text("importer") if i["version"] else Text("not installed", style="yellow")
        cells = (i["name"], i["distribution"], i["version"] or "-", f"env: {i['registered']['env'][0]}")
        table.add_row(*map(Text, cells), status)
    console(soft_wrap=True).print(table)
    for i in importers:
        if not i["version"]:  # the install command on a line of its own, unwrapped, to copy and paste
            print(f"{i['name']}: {i['status']}")
    return 0


COMMANDS = (
    CommandSpec(
        "plugins", "List installed plugins, their versions and what each registers.", configure, run, __version__
    ),
)
