"""``agenthub init env|agent|trainer NAME [--dir DIR]``: scaffold a plugin package."""

from __future__ import annotations

import argparse
from pathlib import Path

from agenthub.scaffold.render import PluginNames, render_plugin


def run(args: argparse.Namespace) -> int:
    names = PluginNames.of(args.kind, args.name)
    destination = Path(args.dir) if args.dir else Path(names.dist)
    written = render_plugin(names, destination, force=args.force)
    print(f"made {names.dist} in {destination} ({len(written)} files): {names.kind} {names.name!r}, "
          f"import {names.module}")  # fmt: skip
    print("next:")
    print(f"  cd {destination} && pip install -e '.[test]'")
    print("  agenthub plugins            # it is listed")
    print("  python -m pytest            # its tests pass as generated")
    print("  see CONTRIBUTING.md in the agenthub repository for testing, versioning and publishing")
    return 0
