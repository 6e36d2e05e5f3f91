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

from agenthub.config import build_config
from agenthub.viewer.report import DEFAULT_EPISODES, write_report


class ReportConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    episodes: int = Field(default=DEFAULT_EPISODES, ge=0, description="full episodes embedded per run")
    tokenizer: str | None = Field(default=None, description="a local tokenizer to show token text (default: found)")


def run(args: argparse.Namespace) -> int:
    config = build_config(ReportConfig, args.overrides)
    run_dir = Path(args.run_dir)
    output = Path(args.output) if args.output else run_dir / "report.html"
    written = write_report(run_dir, output, episodes=config.episodes, tokenizer=config.tokenizer)
    size = written["bytes"] / 1e6
    print(
        f"wrote {written['path']} ({size:.1f} MB): {written['runs']} run(s), {written['episodes']} episodes, "
        f"{written['embedded']} of them in full"
    )
    if written["embedded"] < written["episodes"]:
        print(f"  the rest open only in `agenthub view {run_dir}`; embed more with episodes=N")
    return 0
