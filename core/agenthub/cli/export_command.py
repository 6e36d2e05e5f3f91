"""``agenthub export sft RUN_DIR [--only-success]``: a run's trajectories as chat JSONL for SFT.

Each line is one episode as a conversation, the form SFT trainers read
(TRL's ``SFTTrainer``, ``agenthub run trainer=trl mode=sft``)::

    {"messages": [{"role": "system", "content": <the env's instructions>},
                  {"role": "user", "content": <first observation>},
                  {"role": "assistant", "content": <the agent's reply>},
                  {"role": "user", "content": <the env's answer>}, ...],
     "env": ..., "task_id": ..., "outcome": ..., "reward": ...}

The conversation ends with the agent's last reply. Episodes that ended in an
infrastructure failure (env_error, agent_error, timeout) are never exported.
``agenthub export parquet RUN_DIR`` writes the raw trajectories as Parquet.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from agenthub._version import __version__
from agenthub.errors import ConfigError, UnknownNameError
from agenthub.plugins import get_plugin_host
from agenthub.specs import CommandSpec
from agenthub.types import Outcome, Trajectory, Turn


def reply_text(turn: Turn) -> str:
    """What the agent said: its raw reply when recorded, else the action itself."""
    if turn.text is not None:
        return turn.text
    if isinstance(turn.action, str):
        return turn.action
    return json.dumps({"name": turn.action.name, "arguments": turn.action.arguments})


def conversation(trajectory: Trajectory, system_prompt: str | None) -> list[dict[str, str]]:
    """One episode as chat messages, ending with the agent's last reply."""
    messages = [{"role": "system", "content": system_prompt}] if system_prompt else []
    messages.append({"role": "user", "content": trajectory.first_observation})
    for i, turn in enumerate(trajectory.turns):
        messages.append({"role": "assistant", "content": reply_text(turn)})
        if i + 1 < len(trajectory.turns):
            messages.append({"role": "user", "content": turn.observation})
    return messages


def sft_records(
    trajectories: Iterable[Trajectory], *, only_success: bool, system_prompts: dict[str, str | None]
) -> Iterator[dict[str, Any]]:
    """Chat records of the episodes worth imitating; ``system_prompts`` maps env name to its prompt."""
    for trajectory in trajectories:
        if not trajectory.trainable or not trajectory.turns:
            continue
        if only_success and trajectory.outcome is not Outcome.SUCCESS:
            continue
        env = trajectory.task.env
        yield {
            "messages": conversation(trajectory, system_prompts.get(env)),
            "env": env,
            "task_id": trajectory.task.task_id,
            "outcome": trajectory.outcome.value,
            "reward": trajectory.reward,
        }


def _env_instructions(env: str) -> str | None:
    try:
        return get_plugin_host().env(env).instructions
    except UnknownNameError as exc:
        raise ConfigError(
            f"the run's env {env!r} is not installed here, so its instructions (the system prompt) are unknown; "
            f"install it, or give --system-prompt TEXT (or --system-prompt '' for none). {exc}"
        ) from None


def export_sft(
    run_dir: str | Path, output: str | Path, *, only_success: bool = False, system_prompt: str | None = None
) -> int:
    """Write the chat JSONL; returns the number of conversations written."""
    from agenthub.rollout.store import RunStore

    store = RunStore.existing(run_dir)
    trajectories = list(store.trajectories())
    if system_prompt is not None:
        prompts = {t.task.env: system_prompt or None for t in trajectories}
    else:
        prompts = {env: _env_instructions(env) for env in {t.task.env for t in trajectories}}
    written = 0
    with Path(output).open("w", encoding="utf-8") as file:
        for record in sft_records(trajectories, only_success=only_success, system_prompts=prompts):
            file.write(json.dumps(record, ensure_ascii=False) + "\n")
            written += 1
    return written


def configure(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("format", choices=["sft", "parquet"], help="sft: chat JSONL; parquet: raw trajectories")
    parser.add_argument("run_dir", metavar="RUN_DIR", help="a run directory, e.g. runs/20250101-120000-abc123")
    parser.add_argument("--only-success", action="store_true", help="only episodes whose outcome is success")
    parser.add_argument("-o", "--output", default=None, metavar="FILE", help="default: RUN_DIR/sft.jsonl")
    parser.add_argument(
        "--system-prompt", default=None, metavar="TEXT", help="default: the env's instructions; '' for none"
    )


def run(args: argparse.Namespace) -> int:
    run_dir = Path(args.run_dir)
    if args.format == "parquet":
        if args.only_success or args.system_prompt is not None:
            raise ConfigError("--only-success and --system-prompt apply to `export sft`, not `export parquet`")
        from agenthub.rollout.store import RunStore

        out = RunStore.existing(run_dir).export_parquet(args.output)
        print(f"wrote {out}")
        return 0
    output = Path(args.output) if args.output else run_dir / ("sft-success.jsonl" if args.only_success else "sft.jsonl")
    written = export_sft(run_dir, output, only_success=args.only_success, system_prompt=args.system_prompt)
    print(f"wrote {written} conversations to {output}")
    if written == 0:
        which = "successful episodes" if args.only_success else "trainable episodes with at least one turn"
        print(f"agenthub export: warning: {run_dir} has no {which}; the file is empty", file=sys.stderr)
        return 1
    return 0


COMMANDS = (
    CommandSpec(
        "export",
        "Export a run's trajectories: chat JSONL for SFT (--only-success) or Parquet.",
        configure,
        run,
        __version__,
    ),
)
