"""``agenthub eval agent=NAME env=NAME [split=test n=... k=...] [backend=ray] [opponent=NAME seat=N]``: score a
policy, save the run.

``backend=local`` (the default) runs the episodes here, against env servers it starts (``processes``) or
is given (``url``); ``backend=ray`` runs them on a Ray cluster's nodes (:mod:`agenthub.rollout.ray`),
each node with its own env servers and agent, into the same run store.

The steps, in order: :func:`resolve_config` (the settings, or a stopped run's with ``--resume``),
:func:`choose_split` and :func:`select_tasks` (which tasks), :func:`open_store` (the run directory),
:func:`run_episodes` (k samples of each task), :func:`score` (Avg@k, Pass@k, pass@k) and
:func:`write_results` (``eval.json``, the metrics, the run's end), then :func:`print_report`.
This module is imported to build ``agenthub --help``: what only the steps need is imported in them.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import random
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ConfigDict, Field

from agenthub._version import __version__
from agenthub.cli.overrides import add_overrides
from agenthub.config import (
    MultiPlayerConfig,
    RolloutBackendConfig,
    build_config,
    check_rollout_backend,
    fill_secrets,
    validate_config,
)
from agenthub.errors import ConfigError
from agenthub.plugins import get_plugin_host
from agenthub.specs import CommandSpec, EnvSpec
from agenthub.types import EnvInfo, Task, TaskId, TaskList

if TYPE_CHECKING:
    from rich.table import Table

    from agenthub.evaluation import EvalReport
    from agenthub.rollout.collect import EpisodeSource
    from agenthub.rollout.progress import RunSummary
    from agenthub.rollout.store import RunStore

SHOWN_TASKS = 20
RESULTS_FILE = "eval.json"
"""What the run directory holds of the scores: overall, warnings, per task, the run's summary (and Ray's nodes)."""


class EvalConfig(RolloutBackendConfig, MultiPlayerConfig):
    """``seat``, ``opponent``, ``opponent.KEY``: multi-player envs (:class:`MultiPlayerConfig`); without
    ``opponent`` the agent plays every seat and every seat is scored."""

    model_config = ConfigDict(extra="forbid")

    env: str
    agent: str = Field(default="oracle", description="a registered agent; 'oracle' is the env's own")
    agent_kwargs: dict[str, Any] = Field(default_factory=dict, description="settings for the agent (agent.KEY=...)")
    env_kwargs: dict[str, Any] = Field(
        default_factory=dict, description="settings for the env servers this run starts (not used with url=)"
    )
    split: str | None = Field(default=None, description="default: 'test' if the env has it, else its first split")
    n: int | None = Field(
        default=None,
        ge=1,
        description="tasks, one from each of n equal stretches of the split; default: all; more than it has is refused",
    )
    k: int = Field(default=1, ge=1, description="samples per task")
    max_turns: int | None = Field(default=None, ge=1, description="default: the env's")
    seed: int = 0
    concurrency: int = Field(default=32, ge=1, description="episodes at once (per node with backend=ray)")
    processes: int = Field(default=1, ge=1, description="env server processes (per node with backend=ray)")
    url: list[str] | str | None = Field(default=None, description="env servers already running; default: start some")
    token: str | None = Field(
        default_factory=lambda: os.environ.get("AGENTHUB_TOKEN") or None,
        description="the env servers' bearer token; default $AGENTHUB_TOKEN. Never stored: --resume needs it again",
    )
    max_attempts: int = Field(default=3, ge=1)
    episode_timeout_s: float | None = Field(default=None, gt=0)
    runs_dir: str = "runs"
    run_id: str | None = None
    progress: bool | None = Field(default=None, description="default: only on a terminal")


RESUMABLE = frozenset({"concurrency", "processes", "progress", "url", "token", "max_attempts", "backend", "address"})
"""What ``--resume`` may change: how the run reaches its servers and how fast, never what it measures."""


def configure(parser: argparse.ArgumentParser) -> None:
    add_overrides(parser, "env=NAME agent=NAME agent.model=MODEL split=test n=100 k=8 concurrency=64")
    parser.add_argument(
        "--resume",
        default=None,
        metavar="RUN_DIR",
        help="finish an interrupted run; secrets are not stored, so give token=... again (or set $AGENTHUB_TOKEN)",
    )


def run(args: argparse.Namespace) -> int:
    import asyncio

    from agenthub.option_checks import check_run_options
    from agenthub.training.lifecycle import terminate_as_interrupt

    config = resolve_config(args.overrides, config_file=args.config, resume=args.resume)
    check_rollout_backend(config, urls=config.url)
    host = get_plugin_host()
    spec = host.env(config.env)
    agent_spec = host.agent_for(spec, config.agent)
    agent_name = agent_spec.name
    check_run_options(spec, config, import_agents=config.backend == "local")  # before a server starts
    # On Ray each node builds its own agent from the name and settings; here only for a local run.
    agent = agent_spec.make(**config.agent_kwargs) if config.backend == "local" else None
    opponents, players, opponents_by_name = _opponents(config, spec)
    resume = Path(args.resume) if args.resume else None
    with terminate_as_interrupt():  # `kill` ends an eval as Ctrl-C does: run.json says interrupted
        report, run_dir = asyncio.run(_evaluate(config, agent, agent_name, resume, opponents, opponents_by_name))
    print_report(report, config, agent_name, run_dir, players)
    return 0 if report.scored else 1


COMMANDS = (
    CommandSpec(
        "eval",
        "Score an agent on an env's tasks: Avg@k, Pass@k and unbiased pass@k; saves the run.",
        configure,
        run,
        __version__,
    ),
)


# -- the steps -----------------------------------------------------------------------------------------


def resolve_config(overrides: list[str], *, config_file: str | None, resume: str | None) -> EvalConfig:
    """The settings: ``config_file`` then ``overrides``; with ``resume``, the stopped run's stored config then
    ``overrides``, refusing any change to what it measures (:data:`RESUMABLE`)."""
    from agenthub.option_checks import option_aliases

    if not resume:
        return build_config(EvalConfig, option_aliases(overrides), config_file=config_file)
    from agenthub.rollout.store import RunStore
    from agenthub.training.resumption import check_resumable

    stored = RunStore.existing(resume).config()
    config = build_config(EvalConfig, option_aliases(overrides), config_file=config_file, defaults=stored)
    # Secrets are stored redacted: given again now, the token also from $AGENTHUB_TOKEN, else refused.
    config = validate_config(EvalConfig, fill_secrets(config.model_dump(), run_dir=resume, command="agenthub eval"))
    check_resumable(config, resume, RESUMABLE)
    return config


def choose_split(info: EnvInfo, split: str | None) -> str:
    """``split``, or by default ``test`` where the env has it, else its first split; refused if the env lacks it."""
    chosen = split or ("test" if "test" in info.splits else info.splits[0])
    if chosen not in info.splits:
        raise ConfigError(f"env {info.name!r} has no split {chosen!r}; it has: {', '.join(info.splits)}")
    return chosen


def select_tasks(config: EvalConfig, info: EnvInfo, split: str, listing: TaskList) -> list[Task]:
    """The tasks to score: ``n`` of ``split``'s (as ``listing`` names them), spread over it (all without
    ``n``), each with the run's seed and turn limit. An ``n`` beyond the split's size is refused, not cut."""
    from agenthub.training import split_task_ids

    every = split_task_ids(listing)
    if config.n is not None and config.n > len(every):
        raise ConfigError(
            f"n={config.n}, but split {split!r} of env {info.name!r} has {len(every)} tasks; "
            f"use n={len(every)} or leave n out for all of them (k=... samples each task more than once)"
        )
    return [
        Task(env=info.name, task_id=task_id, split=split, seed=config.seed, max_turns=config.max_turns)
        for task_id in spread(every, config.n)
    ]


def spread(ids: list[TaskId], n: int | None) -> list[TaskId]:
    """``n`` ids, one from each of ``n`` equal stretches of the split, at a fixed pseudo-random place in each
    (all of them when n is None or too large); the same ``ids`` and ``n`` always give the same tasks.

    Not evenly spaced: many envs cycle through variants along their ids (babyai's task ``i`` is level
    ``i % 40``), and every 200th of babyai's 40,000 train ids is one level, so an even stride can score
    one variant only.
    """
    if n is None or n >= len(ids):
        return ids
    place = random.Random(f"agenthub eval n={n} of {len(ids)}")
    stretches = [(i * len(ids) // n, (i + 1) * len(ids) // n) for i in range(n)]
    return [ids[start + int(place.random() * (stop - start))] for start, stop in stretches]


def open_store(config: EvalConfig, resume: Path | None) -> RunStore:
    """A new run directory for ``config``, or the stopped run ``resume`` reopened where it stopped."""
    if resume is not None:
        from agenthub.training.resumption import reopen

        return reopen(config, str(resume), RESUMABLE)
    from agenthub.rollout.store import RunStore

    return RunStore.create(config.model_dump(mode="json"), root=config.runs_dir, run_id=config.run_id)


async def run_episodes(
    source: EpisodeSource, tasks: list[Task], config: EvalConfig, store: RunStore, players: list[Any]
) -> RunSummary:
    """``config.k`` episodes of each task into ``store``, skipping those a resumed run already holds. On an
    interrupt or a failure the run is marked so (and an interrupt says how to resume); ``players`` (the
    agent and opponents built here) are closed either way."""
    import asyncio

    from agenthub.failure_reasons import EnvErrorEcho
    from agenthub.rollout.collect import collect
    from agenthub.rollout.executor import episode_requests

    try:
        return await collect(
            source,
            episode_requests(tasks, config.k),
            store=store,
            progress=config.progress,
            on_trajectory=EnvErrorEcho(),
        )
    except (KeyboardInterrupt, asyncio.CancelledError):
        store.finish(status="interrupted")
        print(
            f"interrupted: run saved in {store.path}; resume with: agenthub eval --resume {store.path}",
            file=sys.stderr,
        )
        raise
    except BaseException:
        store.finish(status="failed")
        raise
    finally:
        for player in {id(p): p for p in players}.values():
            aclose = getattr(player, "aclose", None)  # agents holding connections (an HTTP client) close them
            if callable(aclose):
                await aclose()


def score(store: RunStore, k: int) -> EvalReport:
    """Avg@k, Pass@k and unbiased pass@k of the run's stored trajectories (a resumed run's earlier ones too)."""
    from agenthub.evaluation import evaluate

    return evaluate(store.trajectories(), k=k)


def eval_results(report: EvalReport, summary: RunSummary, nodes: list[dict[str, Any]] | None) -> dict[str, Any]:
    """What ``eval.json`` holds: the scores, their warnings, per task, the run's summary, and on Ray which node
    ran how many episodes and which nodes were lost on the way."""
    result: dict[str, Any] = {
        "overall": report.overall(),
        "warnings": report.warnings(),
        "per_task": report.per_task(),
        "run": summary.as_dict(),
    }
    if nodes is not None:
        result["ray_nodes"] = nodes
    return result


def write_results(store: RunStore, report: EvalReport, summary: RunSummary, nodes: list[dict[str, Any]] | None) -> None:
    """``eval.json``, the overall scores as a metrics record, and the run's end (finished, with its summary)."""
    store.write_json(RESULTS_FILE, eval_results(report, summary, nodes))
    store.log_metrics({"eval": report.overall(), **({"ray_nodes": nodes} if nodes is not None else {})})
    store.finish(summary.as_dict())


async def _evaluate(
    config: EvalConfig,
    agent: Any,
    agent_name: str,
    resume: Path | None,
    opponents: dict[int, Any] | None = None,
    opponents_by_name: dict[int, tuple[str, dict[str, Any]]] | None = None,
) -> tuple[EvalReport, Path]:
    runner = (
        _ray_runner(config, agent_name, opponents_by_name or {})
        if config.backend == "ray"
        else _local_runner(config, agent, agent_name, opponents or {}, opponents_by_name or {})
    )
    async with runner as ran:
        split = choose_split(ran.info, config.split)
        tasks = select_tasks(config, ran.info, split, await ran.tasks(split))
        store = open_store(config, resume)
        summary = await run_episodes(ran.source, tasks, config, store, [agent, *(opponents or {}).values()])
        report = score(store, config.k)
        write_results(store, report, summary, ran.stats())
        return report, store.path


# -- who plays, and where ------------------------------------------------------------------------------


def _opponents(
    config: EvalConfig, spec: EnvSpec
) -> tuple[dict[int, Any], dict[int, str], dict[int, tuple[str, dict[str, Any]]]]:
    """The agents of the seats ``agent`` does not play, who plays each seat (by name, for the report),
    and each opponent seat's agent name and settings (what Ray's nodes build their opponents from)."""
    from agenthub.training.seating import seating

    names = list(spec.seats or (f"seat {s}" for s in range(spec.players)))
    if spec.players == 1 and (config.seats not in (None, [0]) or config.opponent_kwargs):
        seating(config, spec.info(), make_opponent=False)  # refuses them in a single-player env's words
    if config.opponent is None:
        # self-play: every seat is scored; an old run's stored seat=0 (the former default) means the same
        if config.seats not in (None, [0]) or config.opponent_kwargs:
            raise ConfigError("seat= and opponent.KEY= go with opponent=NAME, the agent of the other seats")
        return {}, {s: f"{names[s]}: {config.agent}" for s in range(spec.players)}, {}
    # On Ray each node builds the opponent from its name and settings; here it is only checked.
    seated = seating(config, spec.info(), make_opponent=config.backend == "local")
    assert seated.seats is not None and seated.opponent is not None
    by_name = {s: (seated.opponent, dict(config.opponent_kwargs)) for s in range(spec.players) if s not in seated.seats}
    players = {s: f"{names[s]}: {by_name[s][0] if s in by_name else config.agent}" for s in range(spec.players)}
    return seated.opponents, players, by_name


@dataclass
class _Runner:
    """What runs the episodes of one eval, and what it knows of the env."""

    source: EpisodeSource
    info: EnvInfo
    tasks: Callable[[str], Awaitable[TaskList]]
    stats: Callable[[], list[dict[str, Any]] | None]
    """One row per Ray node (where it ran, its episodes, its deaths); None for a local run."""


@contextlib.asynccontextmanager
async def _local_runner(
    config: EvalConfig,
    agent: Any,
    agent_name: str,
    opponents: dict[int, Any],
    opponents_by_name: dict[int, tuple[str, dict[str, Any]]],
) -> AsyncIterator[_Runner]:
    from agenthub.agent_fit import refuse_unfit_agents
    from agenthub.rollout.executor import Executor
    from agenthub.rollout.pool import EnvPool
    from agenthub.training.env_urls import env_url_list

    urls = env_url_list(config.url)
    if urls:
        if config.env_kwargs:
            raise ConfigError("env_kwargs configure servers this run starts; with url= set them on those servers")
        pool = EnvPool.from_urls(urls, token=config.token, capacity=max(1, config.concurrency // len(urls) + 1))
    else:
        pool = await EnvPool.launch(config.env, processes=config.processes, overrides=_server_overrides(config))
    async with pool:
        await refuse_unfit_agents(pool.endpoints[0].client, config, agent_name, agent, opponents)
        executor = Executor(
            pool,
            agent,
            concurrency=config.concurrency,
            max_attempts=config.max_attempts,
            episode_timeout_s=config.episode_timeout_s,
            provenance=_provenance(config, agent_name),
            opponents=opponents,
            opponent_provenance=_opponent_provenance(opponents_by_name),
        )
        yield _Runner(executor, await pool.info(), pool.endpoints[0].client.tasks, lambda: None)


def _opponent_provenance(by_name: dict[int, tuple[str, dict[str, Any]]]) -> dict[int, dict[str, Any]]:
    """What an opponent seat's trajectories record of who played it (its own name and settings, not the agent's)."""
    return {seat: {"agent": name, "agent_kwargs": _public(kwargs)} for seat, (name, kwargs) in by_name.items()}


def _provenance(config: EvalConfig, agent_name: str) -> dict[str, Any]:
    provenance: dict[str, Any] = {"agent": agent_name, "agent_kwargs": _public(config.agent_kwargs)}
    if config.opponent is not None:
        provenance |= {"opponent": config.opponent, "opponent_kwargs": _public(config.opponent_kwargs)}
        provenance["agent_seat"] = config.seat if config.seat is not None else 0
    return provenance


@contextlib.asynccontextmanager
async def _ray_runner(
    config: EvalConfig, agent_name: str, opponents_by_name: dict[int, tuple[str, dict[str, Any]]]
) -> AsyncIterator[_Runner]:
    from agenthub.rollout.ray import RayRollout

    rollout = RayRollout(
        config.env,
        agent_name,
        agent_kwargs=config.agent_kwargs,
        processes_per_node=config.processes,
        concurrency_per_node=config.concurrency,
        address=config.address,
        env_overrides=_server_overrides(config),
        executor_options={
            "max_attempts": config.max_attempts,
            "episode_timeout_s": config.episode_timeout_s,
            "provenance": _provenance(config, agent_name),
            "opponent_provenance": _opponent_provenance(opponents_by_name),
        },
        opponents=opponents_by_name,
    )
    async with rollout:
        yield _Runner(rollout, rollout.env_info(), rollout.tasks, rollout.stats)


def _server_overrides(config: EvalConfig) -> dict[str, Any]:
    overrides: dict[str, Any] = {"token": config.token} if config.token else {}
    if config.env_kwargs:
        overrides["env_kwargs"] = config.env_kwargs
    return overrides


def _public(settings: dict[str, Any]) -> dict[str, Any]:
    """Agent settings fit for provenance: anything that looks like a secret is left out."""
    return {k: v for k, v in settings.items() if not any(s in k.lower() for s in ("key", "token", "secret"))}


def print_report(
    report: EvalReport, config: EvalConfig, agent_name: str, run_dir: Path, players: dict[int, str] | None = None
) -> None:
    from rich.table import Table

    from agenthub.cli.closed_pipe import console as pipe_console
    from agenthub.failure_reasons import print_failure_reasons

    console = pipe_console(markup=False)  # env and agent names, task ids and paths are text, not rich markup
    overall = report.overall()
    pass_columns = [f"pass@{k}" for k in report.ks]
    against = f" · opponent {config.opponent} (not scored)" if config.opponent is not None else ""
    table = Table(title=f"{config.env} · agent {agent_name}{against} · k={config.k}")
    for column in ("task", "n", "successes", f"Avg@{config.k}", f"Pass@{config.k}", *pass_columns):
        table.add_column(column, justify="right")
    rows = report.per_task()
    for row in rows[:SHOWN_TASKS]:
        table.add_row(
            str(row["task_id"]),
            str(row["n"]),
            str(row["successes"]),
            f"{row['avg']:.3f}",
            "yes" if row["pass"] else "no",
            *(("—" if row[c] is None else f"{row[c]:.3f}") for c in pass_columns),
        )
    if len(rows) > SHOWN_TASKS:
        table.add_row(f"… {len(rows) - SHOWN_TASKS} more in eval.json", *[""] * (4 + len(pass_columns)))
    table.add_section()
    table.add_row(
        "overall",
        str(overall["samples"]),
        "",
        f"{overall['avg_at_k']:.3f}",
        f"{overall['pass_at_k']:.3f}",
        *(f"{overall[c]:.3f}" for c in pass_columns),
    )
    console.print(table)
    if "seats" in overall:
        console.print(_seats_table(overall["seats"], players or {}, "the agent's seats (scored)"))
    if "opponent_seats" in overall:
        title = f"the opponent's seats ({config.opponent}: stored, not scored)"
        console.print(_seats_table(overall["opponent_seats"], players or {}, title))
    if overall.get("self_play"):
        every = "both seats are" if len(overall["seats"]) == 2 else f"all {len(overall['seats'])} seats are"
        console.print(f"self-play: {every} the agent's, so every seat's trajectory is scored", soft_wrap=True)
    elif "opponent_seats" in overall:
        console.print(
            f"scored: the agent's seats only; the opponent's {overall['opponent_trajectories_not_scored']} "
            "trajectories are stored (provenance role=opponent) and left out of every score",
            soft_wrap=True,
        )
    console.print(
        f"score: avg@{config.k} {overall['avg_at_k']:.3f}, pass@{config.k} {overall['pass_at_k']:.3f} over "
        f"{overall['samples']} scored samples; env_error: {overall['env_errors']} of {overall['episodes']} "
        f"episodes ({overall['env_error_share']:.1%}), not scored",
        soft_wrap=True,  # one line, whatever the terminal's width, for whoever greps the log
    )
    excluded = overall["excluded_infra_failures"]
    if excluded:
        console.print(f"{excluded} samples ended in env_error/timeout and were left out of the scores", style="yellow")
    for warning in report.warnings():
        console.print(f"warning: {warning}", style="bold yellow", soft_wrap=True)
    console.print(f"outcomes: {overall['outcomes']}")
    print_failure_reasons(console, run_dir)
    # soft_wrap: a long path stays on one line, so that the command copies and pastes whole
    console.print(f"run saved in {run_dir}  (resume with: agenthub eval --resume {run_dir})", soft_wrap=True)


def _seats_table(seats: dict[str, dict[str, Any]], players: dict[int, str], whose: str) -> Table:
    """Win/draw/loss per seat of a multi-player env, of the seats ``whose`` names."""
    from rich.table import Table

    table = Table(title=f"win/draw/loss per seat: {whose}", caption="rates over the games the env ended")
    for column in ("seat", "games", "win", "draw", "loss", "win rate", "draw rate", "loss rate", "unfinished"):
        table.add_column(column, justify="right")
    for seat, row in seats.items():
        table.add_row(
            players.get(int(seat), f"seat {seat}"),
            str(row["games"]),
            *(str(row[name]) for name in ("win", "draw", "loss")),
            *(f"{row[f'{name}_rate']:.3f}" for name in ("win", "draw", "loss")),
            str(row["unfinished"]),
        )
    return table
