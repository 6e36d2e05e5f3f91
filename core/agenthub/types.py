"""Data models shared by the wire protocol, the executor and the trainers.

Wire payloads are pydantic models with ``extra="forbid"`` so that a misspelt
field is a 422 with a clear message rather than silently ignored.
"""

from __future__ import annotations

import enum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, StrictInt, model_validator

PROTOCOL_VERSION = 1

MAX_TASK_ID = 2**63 - 1
"""The largest integer task id: ids are 64-bit signed integers on the wire (orjson, SQLite and most
envs' RNGs hold no more), and never negative."""
MIN_SEED, MAX_SEED = -(2**63), 2**63 - 1
"""Seeds are 64-bit signed integers: a larger one cannot be encoded by orjson or handed to a C RNG."""


def _integral(value: Any) -> Any:
    """``7.0`` as ``7``: JSON Schema counts a number with a zero fraction as an integer, so the schema's
    ``integer`` fields take it; ``7.5``, ``true`` and ``"7"`` stay refused. Only below 2**53, where a float
    is exact: a larger one may be an integer that a JSON parser rounded (orjson reads one past 64 bits as
    a float), and it is refused rather than read as a neighbouring id."""
    if isinstance(value, float) and value.is_integer() and abs(value) < 2**53:
        return int(value)
    return value


def _task_id_in_range(value: Any) -> Any:
    """Refuse an integer task id outside 0..MAX_TASK_ID, naming the range (before pydantic's terser bound check)."""
    value = _integral(value)
    if isinstance(value, int) and not isinstance(value, bool) and not 0 <= value <= MAX_TASK_ID:
        raise ValueError(
            f"integer task ids are from 0 to 2**63-1 ({MAX_TASK_ID}), got {value}; "
            "send an id from the env's splits (GET /v1/tasks)"
        )
    return value


def _seed_in_range(value: Any) -> Any:
    value = _integral(value)
    if isinstance(value, int) and not isinstance(value, bool) and not MIN_SEED <= value <= MAX_SEED:
        raise ValueError(f"seeds are 64-bit integers, from -2**63 to 2**63-1 ({MAX_SEED}), got {value}")
    return value


# StrictInt: JSON's true/false and 1.5 are not task ids (pydantic's lax int would read false as task 0).
# The bounds are in the int branch too, so that the published schema states them.
TaskId = Annotated[
    Annotated[StrictInt, Field(ge=0, le=MAX_TASK_ID)] | str,
    BeforeValidator(_task_id_in_range),
    Field(description=f"An integer task id from 0 to {MAX_TASK_ID}, or a string task id."),
]
Seed = Annotated[
    int,
    Field(strict=True, ge=MIN_SEED, le=MAX_SEED, description="A 64-bit integer seed."),
    BeforeValidator(_seed_in_range),  # last: it runs first
]
Seat = Annotated[StrictInt, BeforeValidator(_integral)]
JSONDict = dict[str, Any]


class _Wire(BaseModel):
    model_config = ConfigDict(extra="forbid")


def _lone_surrogate(value: Any, where: str) -> str | None:
    """Where in ``value`` a string holds a lone surrogate (JSON's "\\ud800" escape), or None.

    Such a string is not Unicode text: it cannot be encoded as UTF-8, so an env that echoes it
    back would produce an answer that cannot be sent.
    """
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError as exc:
            return f"{where} has a lone surrogate {value[exc.start]!r} at character {exc.start}"
        return None
    if isinstance(value, dict):
        for key, item in value.items():
            found = _lone_surrogate(key, f"{where} key") or _lone_surrogate(item, f"{where}.{key}")
            if found:
                return found
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            found = _lone_surrogate(item, f"{where}[{i}]")
            if found:
                return found
    elif isinstance(value, BaseModel):
        for name in type(value).model_fields:
            found = _lone_surrogate(getattr(value, name), f"{where}.{name}")
            if found:
                return found
    return None


class _Request(_Wire):
    """A request body: its strings must be valid Unicode, checked before any env sees them."""

    @model_validator(mode="after")
    def _valid_unicode(self) -> _Request:
        for name in type(self).model_fields:
            found = _lone_surrogate(getattr(self, name), name)
            if found:
                raise ValueError(f"{found}, which is not valid Unicode text; send UTF-8 text")
        return self


class ToolCall(_Wire):
    """An action in OpenAI function-call form, for tool-calling environments."""

    name: str = Field(min_length=1)
    arguments: JSONDict = Field(default_factory=dict)


Action = str | ToolCall
"""What an agent sends to ``step``: plain text, or a tool call."""


class Outcome(enum.StrEnum):
    """How an episode ended. Only the first three are trained on."""

    SUCCESS = "success"
    FAILURE = "failure"
    TRUNCATED = "truncated"
    ENV_ERROR = "env_error"
    AGENT_ERROR = "agent_error"
    TIMEOUT = "timeout"

    @property
    def is_infra_failure(self) -> bool:
        """True for outcomes that say nothing about the policy and must not be trained on."""
        return self in (Outcome.ENV_ERROR, Outcome.AGENT_ERROR, Outcome.TIMEOUT)


class TaskSplit(_Wire):
    """The task ids of one split: a half-open integer range or an explicit list."""

    start: int | None = Field(default=None, ge=0, le=MAX_TASK_ID + 1)
    stop: int | None = Field(default=None, ge=0, le=MAX_TASK_ID + 1)
    ids: list[TaskId] | None = None

    @model_validator(mode="after")
    def _one_form(self) -> TaskSplit:
        has_range = self.start is not None or self.stop is not None
        if has_range == (self.ids is not None):
            raise ValueError("a TaskSplit has either start and stop, or ids; not both and not neither")
        if has_range and (self.start is None or self.stop is None or self.stop < self.start):
            raise ValueError(f"a task range needs 0 <= start <= stop, got start={self.start} stop={self.stop}")
        return self

    @classmethod
    def range(cls, start: int, stop: int) -> TaskSplit:
        return cls(start=start, stop=stop)

    @classmethod
    def of(cls, ids: list[TaskId]) -> TaskSplit:
        return cls(ids=list(ids))

    @property
    def count(self) -> int:
        if self.ids is not None:
            return len(self.ids)
        assert self.start is not None and self.stop is not None
        return self.stop - self.start

    def __contains__(self, task_id: object) -> bool:
        if self.ids is not None:
            return task_id in self.ids
        assert self.start is not None and self.stop is not None
        return isinstance(task_id, int) and self.start <= task_id < self.stop

    def first(self, n: int) -> list[TaskId]:
        """The first ``n`` ids of the split, in order."""
        if self.ids is not None:
            return list(self.ids[:n])
        assert self.start is not None and self.stop is not None
        return list(range(self.start, min(self.stop, self.start + n)))


class Task(_Wire):
    """One episode to run: which env, which task, which seed, how many turns."""

    env: str
    task_id: TaskId | None = None
    split: str | None = None
    seed: int | None = None
    max_turns: int | None = Field(default=None, ge=1)
    options: JSONDict = Field(default_factory=dict)


class Observation(_Wire):
    """What an agent sees after a reset or a step."""

    text: str
    info: JSONDict = Field(default_factory=dict)

    @property
    def available_actions(self) -> list[str] | None:
        actions = self.info.get("available_actions")
        return list(actions) if isinstance(actions, list) else None


# ---- wire protocol v1: requests -------------------------------------------------


class CreateSessionRequest(_Request):
    # Examples valid for every env (schemathesis' examples phase sends them to each server).
    model_config = ConfigDict(json_schema_extra={"examples": [{"seed": 7}, {}]})

    task_id: TaskId | None = None
    split: str | None = None
    seed: Seed | None = None
    options: JSONDict = Field(default_factory=dict)


class ResetRequest(_Request):
    model_config = ConfigDict(json_schema_extra={"examples": [{"seed": 7}, {}]})

    task_id: TaskId | None = None
    seed: Seed | None = None
    options: JSONDict = Field(default_factory=dict)


class StepRequest(_Request):
    model_config = ConfigDict(json_schema_extra={"examples": [{"action": "look", "request_id": "a1b2c3"}]})

    action: Action
    request_id: str | None = Field(
        default=None,
        max_length=128,
        description="Retrying a step with the same request_id returns the stored result "
        "instead of applying the action again.",
    )
    # Each server's own document bounds it to its seats, requires it on a multi-player env and leaves it
    # out on a single-player one (server._document_seats); the service checks the same before the env
    # sees the step (seats.check_seat: 422 unknown_seat naming the env's seats).
    seat: Seat | None = Field(
        default=None,
        description="The seat that acts (multi-player envs only, where it is required): "
        "the seat named on turn by the last answer.",
    )


# ---- wire protocol v1: answers --------------------------------------------------


class EnvInfo(_Wire):
    name: str
    version: str
    protocol: StrictInt = PROTOCOL_VERSION
    action_format: Literal["text", "tool_call"] = "text"
    default_max_turns: StrictInt = Field(ge=1)
    splits: list[str]
    description: str = ""
    tools: list[JSONDict] | None = None
    instructions: str | None = None
    """The env's system prompt for a model: the game's rules and the action format."""
    players: StrictInt = Field(default=1, ge=1)
    """Seats in one session: 1 for a single-player env; more makes a multi-player env, whose
    answers name the seat on turn and whose steps name the seat that acts."""
    seats: list[str] | None = None
    """The seats' names (``players`` of them), e.g. ``["X", "O"]``; seats are numbered from 0."""
    max_action_chars: StrictInt | None = Field(default=None, ge=1)
    """The longest action the env takes, in characters; a longer one is answered as an invalid action
    and never reaches the env. None: the server did not say."""

    @model_validator(mode="after")
    def _seat_names(self) -> EnvInfo:
        if self.seats is not None and len(self.seats) != self.players:
            raise ValueError(f"seats names {len(self.seats)} seats but players is {self.players}; name each seat once")
        return self

    @property
    def multi_player(self) -> bool:
        return self.players > 1


class TaskList(_Wire):
    split: str
    count: StrictInt
    start: StrictInt | None = None
    stop: StrictInt | None = None
    ids: list[TaskId] | None = None


class ResetResult(_Wire):
    observation: str
    info: JSONDict = Field(default_factory=dict)
    seat: StrictInt | None = None
    """Multi-player envs: the seat on turn, to whom ``observation`` is addressed; absent otherwise."""


class SessionCreated(ResetResult):
    session_id: str
    task_id: TaskId | None = Field(description="The task the session plays: the one asked for, or the one chosen.")


class StepResult(_Wire):
    observation: str
    reward: float
    terminated: bool
    truncated: bool
    info: JSONDict = Field(default_factory=dict)
    seat: StrictInt | None = None
    """Multi-player envs: the seat on turn next, to whom ``observation`` is addressed; once the
    episode has ended, the seat that acted last. Absent for a single-player env."""
    rewards: dict[str, float] | None = None
    """Multi-player envs: every seat's reward for this step, keyed by seat number (``"0"``, ``"1"``);
    ``reward`` is the acting seat's. A seat's return is the sum over the episode's steps."""
    observations: dict[str, str] | None = None
    """Multi-player envs, on the step that ends the episode: every seat's final observation, keyed
    by seat number, so that each seat sees how the game ended."""

    def seat_reward(self, seat: int) -> float:
        """``seat``'s reward for this step (``reward`` for a single-player env)."""
        if self.rewards is None:
            return self.reward
        return self.rewards.get(str(seat), 0.0)

    @property
    def done(self) -> bool:
        return self.terminated or self.truncated


class SessionState(_Wire):
    session_id: str
    task_id: TaskId | None
    turns: StrictInt
    done: bool
    created_at: float
    last_used_at: float
    seat: StrictInt | None = None
    """Multi-player envs: the seat on turn (the last to act once the episode has ended)."""


class ErrorDetail(_Wire):
    code: str
    message: str


class ErrorBody(_Wire):
    error: ErrorDetail


# ---- episodes -------------------------------------------------------------------


class Turn(_Wire):
    """One agent action and what the environment answered."""

    action: Action
    observation: str
    reward: float
    terminated: bool
    truncated: bool
    info: JSONDict = Field(default_factory=dict)
    text: str | None = None
    """The agent's raw reply, when it differs from the action (e.g. a ReAct thought)."""
    token_ids: list[int] | None = None
    logprobs: list[float] | None = None


class TokenTrace(_Wire):
    """A token-level episode exactly as the policy sampled it, for trainers.

    ``response_ids`` are the sampled tokens (never decoded and re-encoded)
    interleaved with the env's turns rendered by the tokenizer's own chat
    template; ``response_mask`` is 1 on sampled tokens and 0 elsewhere;
    ``logprobs`` is aligned to ``response_ids`` (0.0 where the mask is 0).
    """

    prompt_ids: list[int]
    response_ids: list[int] = Field(default_factory=list)
    response_mask: list[int] = Field(default_factory=list)
    logprobs: list[float] = Field(default_factory=list)

    @model_validator(mode="after")
    def _aligned(self) -> TokenTrace:
        n = len(self.response_ids)
        if len(self.response_mask) != n or len(self.logprobs) != n:
            raise ValueError(
                f"response_ids ({n}), response_mask ({len(self.response_mask)}) and logprobs "
                f"({len(self.logprobs)}) must have the same length"
            )
        return self

    def __len__(self) -> int:
        return len(self.prompt_ids) + len(self.response_ids)


class Trajectory(_Wire):
    """A whole episode as the store keeps it and trainers read it."""

    task: Task
    first_observation: str
    turns: list[Turn] = Field(default_factory=list)
    reward: float = 0.0
    outcome: Outcome
    error: str | None = None
    provenance: JSONDict = Field(default_factory=dict)
    key: str | None = None
    """Unique within a run (``"<task index>/<sample>"``); what ``--resume`` skips."""
    tokens: TokenTrace | None = None
    attempts: int = Field(default=1, ge=1)
    """Sessions used: infra failures are retried on a fresh session."""
    duration_s: float | None = None
    seat: int | None = Field(default=None, ge=0)
    """Multi-player envs: the seat this trajectory played; its turns, reward, outcome and tokens are
    that seat's own. One trajectory is stored per seat of an episode. None for a single-player env."""
    seat_result: Literal["win", "draw", "loss"] | None = None
    """Multi-player envs, when the env ended the episode: how this seat finished. The single highest
    return wins, a shared highest draws, any other loses; ``outcome`` is ``success`` only for a win."""

    @property
    def trainable(self) -> bool:
        return not self.outcome.is_infra_failure


class AgentReply(_Wire):
    """What an agent returns for one turn: the action, the raw text it came from and,
    when the model server reports them (vLLM can), the sampled token ids and logprobs."""

    action: Action
    text: str | None = None
    token_ids: list[int] | None = None
    logprobs: list[float] | None = None
