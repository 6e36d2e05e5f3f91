"""``agenthub plugins [--json]``."""

from __future__ import annotations

import argparse
import json

from rich.console import Console
from rich.table import Table

from agenthub.plugins import get_plugin_host


def run(args: argparse.Namespace) -> int:
    host = get_plugin_host()
    records = sorted(host.records.values(), key=lambda r: (not r.builtin, r.name))
    if args.json:
        print(json.dumps([r.as_dict() for r in records], indent=2))
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
    Console(soft_wrap=True).print(table)
    return 0
