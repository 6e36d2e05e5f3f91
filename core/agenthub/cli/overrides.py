"""The ``key=value`` settings (and ``--config FILE``) that most commands take, declared once for all of them."""

from __future__ import annotations

import argparse


def add_overrides(parser: argparse.ArgumentParser, example: str) -> None:
    """``key=value ...`` settings and a ``--config`` YAML file under them; ``example`` shows a few keys."""
    parser.add_argument("overrides", nargs="*", metavar="key=value", help=f"settings, e.g. {example}")
    parser.add_argument(
        "--config", default=None, metavar="FILE", help="a YAML file of settings; key=value wins over it"
    )
