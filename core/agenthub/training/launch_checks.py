"""Checks before launch: the env and the policy's token limits, played for real on one task.

A trainer calls :func:`check_launch` before its framework starts (and on
``--dry-run``). It starts the env (or uses ``urls``), plays one episode of the
env's oracle on the first task of the split, and measures with the model's own
tokenizer:

* **the first prompt**: system prompt and first observation in the chat
  template, plus one model turn of ``max_tokens``, must fit the context
  (``max_context``; with verl's split budget, ``prompt_length`` and
  ``response_length``);
* **the actions**: the oracle's episode is played a second time with every
  action cut to ``max_tokens`` tokens, exactly what a model limited to that
  many tokens could say. If the cut episode scores less, ``max_tokens``
  cannot hold the env's actions (without an oracle, the longest of the env's
  ``available_actions`` is the measure);
* **the rewards**: every step's reward is a finite number, and a won episode
  earns a reward above zero, or there is nothing to learn from.

A multi-player env (``tictactoe``) is checked as a trainer plays it, one policy
on every seat: the oracle plays every seat, and the actions are measured seat by
seat, the cut oracle on one seat against the oracle on the others; a seat that
no longer finishes the game as well (win, draw, loss) or scores less refuses
``max_tokens``. Every reward must be a finite number (a seat's result comes from
its return, so there is no won game without a reward to check), and the longest
seat's side of the finished game is measured against the context.

A refusal names the setting to change and the value that would pass. What is
worth knowing but not fatal (a winning episode longer than the context, more
turns than the horizon allows) comes back as a warning.
"""

from __future__ import annotations

import asyncio
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agenthub.errors import ConfigError, EnvServerUnavailableError
from agenthub.protocols import Agent, AgentEpisode
from agenthub.rollout.episode_loop import play_episode
from agenthub.rollout.seated_play import SeatedEpisodePlay
from agenthub.rollout.token_assembly import ChatTemplateDeltas, TokenAssembler
from agenthub.service.client import EnvClient
from agenthub.types import AgentReply, EnvInfo, Observation, Outcome, Task, TaskId, TaskList, Trajectory

PROMPT_SAMPLE = 8
"""First prompts measured (the split's first tasks): prompt lengths vary from task to task."""
REACH_TIMEOUT_S = 15.0
CHECK_TIMEOUT_S = 300.0
"""The oracle's two episodes; an env slower than this is reported as not checked, never as refused."""


class LaunchRefused(ConfigError):
    """The run would not train: each problem names the setting to change."""

    def __init__(self, report: LaunchReport) -> None:
        self.report = report
        super().__init__(report.refusal())


@dataclass(frozen=True)
class TokenLimits:
    """A trainer's token limits and the names its users set them by.

    ``max_context`` bounds prompt plus every turn (TRL, the hub's executor);
    ``max_prompt``/``max_response`` are a split budget (verl's
    ``data.max_prompt_length`` and ``data.max_response_length``). Leave out
    what the trainer does not have.
    """

    max_tokens: int
    max_context: int | None = None
    max_prompt: int | None = None
    max_response: int | None = None
    max_tokens_key: str = "max_tokens"
    max_context_key: str = "max_context"
    max_prompt_key: str = "prompt_length"
    max_response_key: str = "response_length"


@dataclass(frozen=True)
class Finding:
    """One thing the checks found: the setting it concerns, what was measured and what to do."""

    key: str
    message: str
    refuse: bool


@dataclass
class LaunchReport:
    """What the checks measured on one task, and what they found."""

    env: str
    task_id: TaskId | None = None
    played_with: str | None = None
    prompt_tokens: int | None = None
    prompt_task: TaskId | None = None
    action_tokens: int | None = None
    longest_action: str | None = None
    episode_tokens: int | None = None
    oracle_turns: int | None = None
    oracle_outcome: str | None = None
    cut_outcome: str | None = None
    findings: list[Finding] = field(default_factory=list)
    skipped: str | None = None
    multi_player: bool = False
    """The env has seats: the oracle played every seat, and ``oracle_turns`` counts the game's steps."""

    @property
    def problems(self) -> list[Finding]:
        return [f for f in self.findings if f.refuse]

    @property
    def warnings(self) -> list[Finding]:
        return [f for f in self.findings if not f.refuse]

    def refusal(self) -> str:
        lines = [f"refused before launch ({self._where()}):"]
        lines += [f"  - {f.key}: {f.message}" for f in self.problems]
        lines.append("Change the settings named above and run again (--dry-run repeats these checks).")
        return "\n".join(lines)

    def summary(self) -> str:
        """One line for the console: what was measured, or why nothing was."""
        if self.skipped:
            return f"checks before launch: not run ({self.skipped})"
        verdict = "refused" if self.problems else "passed"
        measured = [f"longest first prompt {self.prompt_tokens} tokens (task {self.prompt_task})"]
        if self.action_tokens is not None:
            measured.append(f"longest action {self.action_tokens} tokens")
        if self.episode_tokens is not None:
            episode = "a seat's side of a finished game" if self.multi_player else "a winning episode"
            measured.append(f"{episode} {self.episode_tokens} tokens in {self.oracle_turns} turns")
        return f"checks before launch {verdict} ({self._where()}: {', '.join(measured)})"

    def _where(self) -> str:
        played = f", played with {self.played_with}" if self.played_with else ""
        return f"env {self.env!r}, task {self.task_id}{played}"

    def raise_if_refused(self) -> None:
        if self.problems:
            raise LaunchRefused(self)


def check_launch(
    env: str,
    tokenizer: Any,
    limits: TokenLimits,
    *,
    split: str = "train",
    urls: Sequence[str] = (),
    token: str | None = None,
    server_overrides: Mapping[str, Any] | None = None,
    system_prompt: str | None = None,
    max_turns: int | None = None,
    dry_run: bool = False,
    timeout_s: float = CHECK_TIMEOUT_S,
) -> LaunchReport:
    """Play one task of ``env`` and measure it against ``limits``; the caller decides when to refuse.

    ``tokenizer`` is the policy's Hugging Face tokenizer (``encode``, ``decode``
    and ``apply_chat_template``). ``max_turns`` is the most turns the run's
    horizon ever allows (default: the env's own limit). Without ``urls``, a
    local server of ``env`` is started for the checks and stopped after them. Env servers at ``urls`` that
    do not answer are refused, except in a ``dry_run``, which may be planning for servers not up yet.
    """
    if urls:
        try:
            check = _check(urls[0], env, tokenizer, limits, split, token, system_prompt, max_turns)
            return _run(check, timeout_s, env)
        except EnvServerUnavailableError as exc:
            if dry_run:
                return LaunchReport(env=env, skipped=f"the env server at {urls[0]} did not answer")
            raise ConfigError(f"the env server at {urls[0]} did not answer ({exc}); start it, or fix url=") from None
    from agenthub.plugins import get_plugin_host
    from agenthub.service.launcher import LocalServer

    get_plugin_host().env(env)  # an unknown env is refused here, in words, not by a server that exits
    settings = {**(server_overrides or {}), **({"token": token} if token else {})}
    with LocalServer(env, overrides=settings) as server:
        check = _check(server.url, env, tokenizer, limits, split, token, system_prompt, max_turns)
        return _run(check, timeout_s, env)


def _run(check: Any, timeout_s: float, env: str) -> LaunchReport:
    async def bounded() -> LaunchReport:
        try:
            async with asyncio.timeout(timeout_s):
                return await check  # type: ignore[no-any-return]
        except TimeoutError:
            return LaunchReport(env=env, skipped=f"the env took longer than {timeout_s:g}s to play one task")

    return asyncio.run(bounded())


async def _check(
    url: str,
    env: str,
    tokenizer: Any,
    limits: TokenLimits,
    split: str,
    token: str | None,
    system_prompt: str | None,
    max_turns: int | None,
) -> LaunchReport:
    async with EnvClient(url, token=token) as client:
        try:
            async with asyncio.timeout(REACH_TIMEOUT_S):
                info = await client.info()
        except TimeoutError:
            raise EnvServerUnavailableError(f"no answer from {url} within {REACH_TIMEOUT_S:g}s") from None
        if split not in info.splits:
            raise ConfigError(f"env {info.name!r} has no split {split!r}; it has: {', '.join(info.splits)} (key split)")
        ids = _first_tasks(await client.tasks(split))
        task = Task(env=info.name, task_id=ids[0], split=split)
        report = LaunchReport(env=info.name, task_id=task.task_id)
        deltas = ChatTemplateDeltas(tokenizer, system_prompt or info.instructions)
        listed: Any = None
        for task_id in ids:
            async with await client.create_session(task_id, split=split) as session:
                tokens = len(deltas.prompt(session.observation))
                listed = session.info.get("available_actions") if listed is None else listed
            if report.prompt_tokens is None or tokens > report.prompt_tokens:
                report.prompt_tokens, report.prompt_task = tokens, task_id
        _check_prompt(report, limits, deltas)
        oracle = _oracle(info.name)
        if oracle is None:
            _check_listed_actions(report, limits, tokenizer, listed)
            return report
        name, agent = oracle
        report.played_with = f"the oracle {name!r}"
        if info.multi_player:
            report.multi_player = True
            report.played_with += f" on all {info.players} seats"
            await _check_seats(client, info, task, agent, report, limits, deltas, tokenizer, max_turns)
            return report
        full = await play_episode(client, agent, task, env_info=info)
        cut = await play_episode(client, _CutActions(agent, tokenizer, limits.max_tokens), task, env_info=info)
        _check_actions(report, limits, tokenizer, full, cut)
        _check_rewards(report, full, info)
        _check_episode(report, limits, deltas, tokenizer, full, max_turns or info.default_max_turns)
        return report


def _first_tasks(listing: TaskList) -> list[TaskId]:
    if listing.ids:
        return list(listing.ids[:PROMPT_SAMPLE])
    if listing.start is not None and listing.stop is not None and listing.stop > listing.start:
        return list(range(listing.start, min(listing.stop, listing.start + PROMPT_SAMPLE)))
    raise ConfigError(f"split {listing.split!r} has no tasks; choose another split (key split)")


def _oracle(env: str) -> tuple[str, Agent] | None:
    """The env's registered oracle, built; None when the env has none installed here."""
    from agenthub.plugins import get_plugin_host

    host = get_plugin_host()
    if env not in host.envs.names():
        return None
    name = host.env(env).oracle
    if name is None or name not in host.agents.names():
        return None
    return name, host.agent(name).make()


def _encode(tokenizer: Any, text: str) -> list[int]:
    return [int(i) for i in tokenizer.encode(text, add_special_tokens=False)]


def _check_prompt(report: LaunchReport, limits: TokenLimits, deltas: ChatTemplateDeltas) -> None:
    prompt = report.prompt_tokens or 0
    close = len(deltas.assistant_close)
    what = (
        f"the first prompt of task {report.prompt_task} (system prompt and first observation in the model's chat "
        f"template) is {prompt} tokens"
    )
    if limits.max_context is not None and prompt + limits.max_tokens + close > limits.max_context:
        need = prompt + limits.max_tokens + close
        report.findings.append(
            Finding(
                limits.max_context_key,
                f"{what}; with one model turn of {limits.max_tokens_key}={limits.max_tokens} it needs {need}, more "
                f"than {limits.max_context_key}={limits.max_context}, so every episode would end before its first "
                f"turn. Set {limits.max_context_key}>={need} (a few turns: several times that)",
                refuse=True,
            )
        )
    if limits.max_prompt is not None and prompt > limits.max_prompt:
        report.findings.append(
            Finding(
                limits.max_prompt_key,
                f"{what}, more than {limits.max_prompt_key}={limits.max_prompt}. Set {limits.max_prompt_key}>={prompt}",
                refuse=True,
            )
        )
    if limits.max_response is not None and limits.max_tokens + close > limits.max_response:
        report.findings.append(
            Finding(
                limits.max_response_key,
                f"one model turn of {limits.max_tokens_key}={limits.max_tokens} does not fit "
                f"{limits.max_response_key}={limits.max_response}. Set {limits.max_response_key}>="
                f"{limits.max_tokens + close} (a few turns: several times that), or lower {limits.max_tokens_key}",
                refuse=True,
            )
        )


def _action_text(action: Any) -> str | None:
    return action if isinstance(action, str) else None


def _check_actions(
    report: LaunchReport, limits: TokenLimits, tokenizer: Any, full: Trajectory, cut: Trajectory
) -> None:
    lengths = [(len(_encode(tokenizer, text)), text) for t in full.turns if (text := _action_text(t.action))]
    if not lengths:
        return
    report.action_tokens, report.longest_action = max(lengths)
    report.oracle_outcome, report.cut_outcome = full.outcome.value, cut.outcome.value
    if cut.reward >= full.reward and (cut.outcome is Outcome.SUCCESS or full.outcome is not Outcome.SUCCESS):
        return  # what a model limited to max_tokens can say is enough for what the oracle did
    report.findings.append(
        Finding(
            limits.max_tokens_key,
            f"{limits.max_tokens_key}={limits.max_tokens} cannot hold the env's actions: the oracle's actions take up "
            f"to {report.action_tokens} tokens ({report.longest_action!r}) with this model's tokenizer, and cut to "
            f"{limits.max_tokens} token(s) the oracle's episode ends {cut.outcome.value} with reward {cut.reward:g} "
            f"instead of {full.outcome.value} with {full.reward:g}. Set {limits.max_tokens_key}>="
            f"{report.action_tokens} (more if the model thinks before it acts)",
            refuse=True,
        )
    )


def _check_listed_actions(report: LaunchReport, limits: TokenLimits, tokenizer: Any, listed: Any) -> None:
    actions = [a for a in listed if isinstance(a, str)] if isinstance(listed, list) else []
    if not actions:
        report.findings.append(
            Finding(
                limits.max_tokens_key,
                "not measured: the env has no oracle installed here and lists no available_actions",
                refuse=False,
            )
        )
        return
    report.action_tokens, report.longest_action = max((len(_encode(tokenizer, a)), a) for a in actions)
    if report.action_tokens > limits.max_tokens:
        report.findings.append(
            Finding(
                limits.max_tokens_key,
                f"{limits.max_tokens_key}={limits.max_tokens} cannot hold the env's actions: its available actions "
                f"take up to {report.action_tokens} tokens ({report.longest_action!r}) with this model's tokenizer. "
                f"Set {limits.max_tokens_key}>={report.action_tokens}",
                refuse=True,
            )
        )


def _check_rewards(report: LaunchReport, full: Trajectory, info: EnvInfo) -> None:
    bad = [t.reward for t in full.turns if not math.isfinite(t.reward)]
    if bad:
        report.findings.append(
            Finding(
                "env",
                f"env {info.name!r} answered rewards that are not finite numbers ({bad[:3]}); training needs a "
                "number at every step. Fix the env (or its env_kwargs) before training on it",
                refuse=True,
            )
        )
    elif full.outcome is Outcome.SUCCESS and full.reward <= 0:
        report.findings.append(
            Finding(
                "env",
                f"the oracle won task {report.task_id} of env {info.name!r} and earned a total reward of "
                f"{full.reward:g}: rewards are missing, so every episode would score alike and there is nothing to "
                "learn. Use env settings (env_kwargs) that reward success, or another env",
                refuse=True,
            )
        )


def _check_episode(
    report: LaunchReport,
    limits: TokenLimits,
    deltas: ChatTemplateDeltas,
    tokenizer: Any,
    full: Trajectory,
    max_turns: int,
) -> None:
    """How long the oracle's episode is in tokens and turns: a warning when the run's limits cut it short."""
    if full.outcome is not Outcome.SUCCESS:
        return
    _measure_episode(
        report, limits, deltas, tokenizer, full, len(full.turns), max_turns, "the oracle's winning episode", "won"
    )


def _measure_episode(
    report: LaunchReport,
    limits: TokenLimits,
    deltas: ChatTemplateDeltas,
    tokenizer: Any,
    full: Trajectory,
    turns: int,
    max_turns: int,
    what: str,
    end: str,
) -> None:
    """``full``'s tokens (as one policy's context holds them) and ``turns`` against the run's limits: warnings."""
    if not all(isinstance(t.action, str) for t in full.turns):
        return
    report.episode_tokens, response = _episode_tokens(deltas, tokenizer, full)
    report.oracle_turns = turns
    if limits.max_context is not None and report.episode_tokens > limits.max_context:
        report.findings.append(
            Finding(
                limits.max_context_key,
                f"{what} takes {report.episode_tokens} tokens over {len(full.turns)} "
                f"turns, more than {limits.max_context_key}={limits.max_context}: episodes like it end truncated. "
                f"Consider {limits.max_context_key}>={report.episode_tokens}",
                refuse=False,
            )
        )
    if limits.max_response is not None and response > limits.max_response:
        report.findings.append(
            Finding(
                limits.max_response_key,
                f"{what} takes {response} tokens after the prompt, more than "
                f"{limits.max_response_key}={limits.max_response}: episodes like it end truncated. "
                f"Consider {limits.max_response_key}>={response}",
                refuse=False,
            )
        )
    if turns > max_turns:
        report.findings.append(
            Finding(
                "horizon",
                f"the oracle needs {turns} turns on task {report.task_id} but the run allows at most "
                f"{max_turns}: such tasks cannot be {end}. Raise the horizon if that is not intended",
                refuse=False,
            )
        )


def _episode_tokens(deltas: ChatTemplateDeltas, tokenizer: Any, full: Trajectory) -> tuple[int, int]:
    """``full`` as one policy's context holds it: all its tokens, and those after the first prompt."""
    assembler = TokenAssembler(deltas, full.first_observation, max_context=1 << 40)
    for i, turn in enumerate(full.turns):
        if i:
            assembler.add_env_turn(full.turns[i - 1].observation)
        assembler.add_model_turn([*_encode(tokenizer, str(turn.action)), deltas.assistant_close[0]], None)
    return len(assembler.trace), len(assembler.trace.response_ids)


# -- multi-player envs -----------------------------------------------------------------

RESULT_RANK = {"win": 2, "draw": 1, "loss": 0}
"""How well a seat finished; a game that did not finish (truncated, failed) ranks below a loss."""


async def _play_seats(client: EnvClient, agents: Mapping[int, Agent], task: Task, info: EnvInfo) -> SeatedEpisodePlay:
    play = SeatedEpisodePlay(agents, task, info)
    await play.play(client)
    return play


def _seat_trajectories(play: SeatedEpisodePlay, client: EnvClient) -> list[Trajectory]:
    return play.trajectories(endpoint=client.base_url, provenance={}, key="launch-check")


def _how(trajectory: Trajectory) -> str:
    return trajectory.seat_result or trajectory.outcome.value


async def _check_seats(
    client: EnvClient,
    info: EnvInfo,
    task: Task,
    oracle: Agent,
    report: LaunchReport,
    limits: TokenLimits,
    deltas: ChatTemplateDeltas,
    tokenizer: Any,
    max_turns: int | None,
) -> None:
    """The oracle on every seat; then, seat by seat, the cut oracle on it against the oracle on the others."""
    seats = range(info.players)
    names = info.seats or [f"seat {s}" for s in seats]
    full_play = await _play_seats(client, dict.fromkeys(seats, oracle), task, info)
    full = _seat_trajectories(full_play, client)
    report.oracle_outcome = ", ".join(f"{names[t.seat or 0]} {_how(t)}" for t in full)
    cut_oracle = _CutActions(oracle, tokenizer, limits.max_tokens)
    lengths = [
        (len(_encode(tokenizer, text)), text) for t in full for turn in t.turns if (text := _action_text(turn.action))
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
        report.findings.append(
            Finding(
                "env",
                f"env {info.name!r} answered rewards that are not finite numbers ({bad[:3]}); training needs a "
                "number at every step. Fix the env (or its env_kwargs) before training on it",
                refuse=True,
            )
        )
    if full_play.ended:
        # Each seat's model holds its own side of the game; the horizon counts the game's steps, all seats.
        longest = max(full, key=lambda t: _episode_tokens(deltas, tokenizer, t)[0])
        _measure_episode(
            report,
            limits,
            deltas,
            tokenizer,
            longest,
            full_play.steps,
            max_turns or info.default_max_turns,
            f"seat {longest.seat} ({names[longest.seat or 0]})'s side of the oracle's finished game",
            "finished",
        )


class _CutActions:
    """The oracle, with every action cut to what a model limited to ``max_tokens`` tokens could say."""

    def __init__(self, agent: Agent, tokenizer: Any, max_tokens: int) -> None:
        self.agent = agent
        self.tokenizer = tokenizer
        self.max_tokens = max_tokens

    def start_episode(self, task: Task, env: EnvInfo) -> AgentEpisode:
        return _CutEpisode(self.agent.start_episode(task, env), self)


class _CutEpisode:
    def __init__(self, episode: AgentEpisode, cut: _CutActions) -> None:
        self.episode = episode
        self.cut = cut

    async def act(self, observation: Observation) -> AgentReply:
        reply = await self.episode.act(observation)
        if not isinstance(reply.action, str):
            return reply  # a tool call is not text the model samples token by token here
        ids = _encode(self.cut.tokenizer, reply.action)[: self.cut.max_tokens]
        # A model's reply goes through the same strip that TokenPolicy applies before the env sees it.
        text = self.cut.tokenizer.decode(ids, skip_special_tokens=True).strip()
        return AgentReply(action=text, text=text)
