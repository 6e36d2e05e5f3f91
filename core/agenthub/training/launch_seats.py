"""The checks before launch of a multi-player env, as a trainer plays it: one policy on every seat.

The oracle plays every seat; then, seat by seat, the cut oracle (every action cut
to ``max_tokens`` tokens) plays one seat against the oracle on the others. A seat
that no longer finishes the game as well (win, draw, loss) or scores less refuses
``max_tokens``. Every reward must be a finite number (a seat's result comes from
its return, so there is no won game without a reward to check), and the longest
seat's side of the finished game is measured against the context and the
horizon, which counts the game's steps, all seats (:mod:`launch_fit`).
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from agenthub.protocols import Agent
from agenthub.rollout.episode_loop import EpisodePlay
from agenthub.service.client import EnvClient
from agenthub.training.launch_fit import PlayedEpisode, check_fit
from agenthub.training.launch_measure import CutActions, action_text, encode, episode_fit
from agenthub.training.launch_report import Finding
from agenthub.training.launch_single import not_finite
from agenthub.training.oracle_play import OraclePlay
from agenthub.types import EnvInfo, Task, Trajectory

RESULT_RANK = {"win": 2, "draw": 1, "loss": 0}
"""How well a seat finished; a game that did not finish (truncated, failed) ranks below a loss."""


async def _play_seats(client: EnvClient, agents: Mapping[int, Agent], task: Task, info: EnvInfo) -> EpisodePlay:
    play = EpisodePlay(agents, task, info)
    await play.play(client)
    return play


def _seat_trajectories(play: EpisodePlay, client: EnvClient) -> list[Trajectory]:
    return play.trajectories(endpoint=client.base_url, provenance={}, key="launch-check")


def _how(trajectory: Trajectory) -> str:
    return trajectory.seat_result or trajectory.outcome.value


async def check_seats(play: OraclePlay) -> None:
    """The oracle on every seat; then, seat by seat, the cut oracle on it against the oracle on the others."""
    client, info, task, oracle, report = play.client, play.info, play.task, play.oracle, play.report
    limits, deltas, tokenizer = play.limits, play.deltas, play.tokenizer
    seats = range(info.players)
    names = info.seats or [f"seat {s}" for s in seats]
    full_play = await _play_seats(client, dict.fromkeys(seats, oracle), task, info)
    full = _seat_trajectories(full_play, client)
    report.oracle_outcome = ", ".join(f"{names[t.seat or 0]} {_how(t)}" for t in full)
    cut_oracle = CutActions(oracle, tokenizer, limits.max_tokens)
    lengths = [
        (len(encode(tokenizer, text)), text) for t in full for turn in t.turns if (text := action_text(turn.action))
    ]
    if lengths:
        report.action_tokens, report.longest_action = max(lengths)
        worse: list[str] = []
        cut_how: list[str] = []
        for seat in seats:
            agents: dict[int, Agent] = {s: cut_oracle if s == seat else oracle for s in seats}
            cut = _seat_trajectories(await _play_seats(client, agents, task, info), client)[seat]
            cut_how.append(f"{names[seat]} {_how(cut)}")
            kept = RESULT_RANK.get(cut.seat_result or "", -1) >= RESULT_RANK.get(full[seat].seat_result or "", -1)
            if not kept or cut.reward < full[seat].reward:
                worse.append(
                    f"seat {seat} ({names[seat]}) ends {_how(cut)} with return {cut.reward:g} instead of "
                    f"{_how(full[seat])} with {full[seat].reward:g}"
                )
        report.cut_outcome = ", ".join(cut_how)
        if worse:
            report.findings.append(
                Finding(
                    limits.max_tokens_key,
                    f"{limits.max_tokens_key}={limits.max_tokens} cannot hold the env's actions: the oracle's actions "
                    f"take up to {report.action_tokens} tokens ({report.longest_action!r}) with this model's "
                    f"tokenizer, and with each action cut to {limits.max_tokens} token(s), the oracle playing one seat "
                    f"against the oracle on the others: {'; '.join(worse)}. Set {limits.max_tokens_key}>="
                    f"{report.action_tokens} (more if the model thinks before it acts)",
                    refuse=True,
                )
            )
    bad = [turn.reward for t in full for turn in t.turns if not math.isfinite(turn.reward)]
    if bad:
        report.findings.append(not_finite(info, bad))
    finished: list[PlayedEpisode] = []
    side = "the oracle's finished game"
    if full_play.ended and all(isinstance(turn.action, str) for t in full for turn in t.turns):
        # Each seat's model holds its own side of the game; the horizon counts the game's steps, all seats.
        longest = max(full, key=lambda t: episode_fit(deltas, tokenizer, t).context)
        # A seat's result comes from its return at the game's end: the horizon must reach the end to score.
        fit = episode_fit(deltas, tokenizer, longest)
        finished.append(PlayedEpisode(task.task_id, fit, full_play.steps, full_play.steps))
        side = f"seat {longest.seat} ({names[longest.seat or 0]})'s side of the oracle's finished game"
    check_fit(report, limits, deltas, finished, play.max_turns, what=side, end="finished")
