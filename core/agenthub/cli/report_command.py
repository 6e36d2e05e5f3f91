"""``agenthub report RUN_DIR [-o report.html] [episodes=500 tokenizer=PATH]``: the viewer as one HTML file.

The file needs no server and no network: open it in a browser. It holds every
episode's summary (filters and paging work on all), the per-task table and the
learning curves, and up to ``episodes`` full episodes per run; see
:mod:`agenthub.viewer.report`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from agenthub._version import __version__
from agenthub.config import build_config
from agenthub.specs import CommandSpec


class ReportConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    episodes: int | None = Field(
        default=None, ge=0, description="full episodes embedded per run; default: the viewer's DEFAULT_EPISODES (500)"
    )
    tokenizer: str | None = Field(default=None, description="a local tokenizer to show token text (default: found)")


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("run_dir", metavar="RUN_DIR", help="a run directory (runs/<run-id>) or a runs/ root")
    parser.add_argument("overrides", nargs="*", metavar="key=value", help="settings, e.g. episodes=500 tokenizer=PATH")
    parser.add_argument("-o", "--output", default=None, metavar="FILE", help="default: RUN_DIR/report.html")


def run(args: argparse.Namespace) -> int:
    from agenthub.viewer.report import DEFAULT_EPISODES, write_report  # imported here, not for `agenthub --help`

    config = build_config(ReportConfig, args.overrides)
    run_dir = Path(args.run_dir)
    output = Path(args.output) if args.output else run_dir / "report.html"
    episodes = DEFAULT_EPISODES if config.episodes is None else config.episodes
    written = write_report(run_dir, output, episodes=episodes, tokenizer=config.tokenizer)
    size = written["bytes"] / 1e6
    print(
        f"wrote {written['path']} ({size:.1f} MB): {written['runs']} run(s), {written['episodes']} episodes, "
        f"{written['embedded']} of them in full"
    )
    if written["embedded"] < written["episodes"]:
        print(f"  the rest open only in `agenthub view {run_dir}`; embed more with episodes=N")
    return 0


COMMANDS = (
    CommandSpec(
        "report", "Write what `agenthub view` shows as one self-contained HTML file.", configure, run, __version__
    ),
)
