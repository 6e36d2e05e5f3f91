"""``agenthub init env|agent|trainer NAME [--dir DIR]``: scaffold a plugin package."""

from __future__ import annotations

import argparse
from pathlib import Path

from agenthub._version import __version__
from agenthub.scaffold.render import PluginNames, render_plugin
from agenthub.specs import CommandSpec


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("kind", choices=["env", "agent", "trainer"], help="what the plugin registers")
    parser.add_argument("name", help="the plugin's name, e.g. word-game (env=word-game)")
    parser.add_argument("--dir", default=None, help="where to write it (default: ./agenthub-KIND-NAME)")
    parser.add_argument("--force", action="store_true", help="write into a directory that is not empty")


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


COMMANDS = (
    CommandSpec(
        "init",
        "Make a new env, agent or trainer plugin package that installs and passes its own tests.",
        configure,
        run,
        __version__,
    ),
)
