"""Entry point of the ``agenthub`` command: builds the parser from registered commands."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from agenthub._version import __version__
from agenthub.cli.closed_pipe import closed_pipe
from agenthub.errors import AgenthubError, UnknownNameError
from agenthub.plugins import get_plugin_host


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="agenthub",
        description="Serve, check, evaluate and train on LLM-agent environments. "
        "Options are key=value pairs, e.g. `agenthub serve env=guess port=8000`.",
    )
    parser.add_argument("--version", action="version", version=f"agenthub {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for spec in get_plugin_host().commands:
        sub = commands.add_parser(spec.name, help=spec.help, description=spec.help)
        spec.configure(sub)
        sub.set_defaults(_run=spec.run, _parser=sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    argv = list(sys.argv[1:] if argv is None else argv)
    commands = get_plugin_host().commands
    if argv and not argv[0].startswith("-") and argv[0] not in commands:
        # argparse lists the choices but suggests none (before Python 3.14): the same helper as for envs
        parser.error(str(UnknownNameError("command", argv[0], commands.names(), hint="`agenthub --help` says more")))
    # argparse stops filling a positional list at the first option, so `run trainer=trl --dry-run
    # steps=3` would leave `steps=3` over; key=value items after options are overrides too.
    args, extra = parser.parse_known_args(argv)
    stray = [item for item in extra if item.startswith("-") or "=" not in item]
    if isinstance(getattr(args, "overrides", None), list) and not stray:
        args.overrides.extend(extra)
    elif extra:  # in the command's own usage, which lists the options it does take
        getattr(args, "_parser", parser).error(f"unrecognized arguments: {' '.join(extra)}")
    if getattr(args, "_run", None) is None:
        parser.print_help()
        return 2
    try:
        code = int(args._run(args))
        sys.stdout.flush()  # a closed pipe shows here, not at exit where Python can only print a traceback
        return code
    except AgenthubError as exc:
        print(f"agenthub {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return closed_pipe()


if __name__ == "__main__":
    sys.exit(main())
