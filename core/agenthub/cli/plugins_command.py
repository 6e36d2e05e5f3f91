"""``agenthub plugins [--json]``."""

from __future__ import annotations

import argparse
import importlib.metadata
import json
from typing import Any

from rich.console import Console
from rich.table import Table

from agenthub.plugins import get_plugin_host

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


def run(args: argparse.Namespace) -> int:
    host = get_plugin_host()
    records = sorted(host.records.values(), key=lambda r: (not r.builtin, r.name))
    importers = importer_records()
    if args.json:
        print(json.dumps([r.as_dict() for r in records] + importers, indent=2))
        return 0
    table = Table(title="agenthub plugins")
    for column in ("plugin", "distribution", "version", "registers", "status"):
        table.add_column(column)
    for r in records:
        registers = "; ".join(f"{kind}: {', '.join(names)}" for kind, names in sorted(r.registered.items()))
        status = "[red]" + " | ".join(r.errors) + "[/red]" if r.errors else "ok"
        table.add_row(
            r.name, r.distribution or ("(built in)" if r.builtin else "-"), r.version or "-", registers, status
        )
    for i in importers:
        status = "importer" if i["version"] else f"[yellow]{i['status']}[/yellow]"
        table.add_row(i["name"], i["distribution"], i["version"] or "-", f"env: {i['registered']['env'][0]}", status)
    Console(soft_wrap=True).print(table)
    return 0
