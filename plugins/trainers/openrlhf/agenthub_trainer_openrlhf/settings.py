"""What the agent module needs to know inside OpenRLHF's vLLM actors, and how it gets there.

OpenRLHF builds the agent executor with no arguments (``AgentExecutor()``), in
every vLLM actor, possibly on other nodes. ``agenthub run`` therefore writes
these settings to ``agent.json`` in the run directory and names that file in
the environment variable :data:`SETTINGS_ENV`; the variable may also hold the
JSON itself (handy with ``ray job submit --runtime-env-json``, where no shared
file system is needed).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from agenthub import ConfigError
from agenthub.config import MultiPlayerConfig, describe_validation_error
from pydantic import ConfigDict, Field, ValidationError

SETTINGS_ENV = "AGENTHUB_OPENRLHF_SETTINGS"


class AgentSettings(MultiPlayerConfig):
    """The agent module's settings: where the env servers are and how episodes run (``seat``,
    ``opponent``, ``opponent_kwargs``: who plays a multi-player env's seats, each actor building the opponent)."""

    model_config = ConfigDict(extra="forbid")

    env: str = Field(description="the env's name, as its servers report it in /v1/info")
    urls: list[str] = Field(min_length=1, description="env servers reachable from every vLLM actor")
    token: str | None = None
    max_tokens: int | None = Field(
        default=None, ge=1, description="tokens per model turn; default: OpenRLHF's --rollout.max_new_tokens"
    )
    system_prompt: str | None = Field(default=None, description="default: the env's instructions from /v1/info")
    max_attempts: int = Field(default=3, ge=1, description="sessions tried per episode on infra failures")
    episode_timeout_s: float | None = Field(default=None, gt=0)
    capacity: int = Field(default=256, ge=1, description="sessions one vLLM actor holds at once per env server")
    unhealthy_wait_s: float = Field(
        default=60.0, gt=0, description="how long an episode waits for an env server to come back before failing"
    )
    store: str | None = Field(default=None, description="run directory whose trajectories.jsonl gets every episode")
    horizon: int | dict[str, Any] | None = Field(
        default=None,
        description="turn limit: N, or {kind: stepwise, rounds: [...], every: K} read at the counted step "
        "(see agenthub_trainer_openrlhf.horizon); default: the task's, else the env's",
    )
    episodes_per_step: int = Field(
        default=64,
        ge=1,
        description="episodes one vLLM actor plays per rollout: its step count for the horizon and the window "
        "its step warnings judge",
    )
    provenance: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def from_environment(cls) -> AgentSettings:
        """The settings named by :data:`SETTINGS_ENV` (a JSON file's path, or the JSON itself)."""
        value = os.environ.get(SETTINGS_ENV, "").strip()
        if not value:
            raise ConfigError(
                f"the agenthub OpenRLHF agent found no settings: set {SETTINGS_ENV} to the agent.json that "
                "`agenthub run trainer=openrlhf` wrote (or to its JSON); on a Ray cluster pass it with "
                "`ray job submit --runtime-env-json '{\"env_vars\": {...}}'`"
            )
        where = "the JSON in " + SETTINGS_ENV
        if not value.startswith("{"):
            where = value
            try:
                value = Path(value).read_text(encoding="utf-8")
            except OSError as exc:
                raise ConfigError(
                    f"{SETTINGS_ENV}={where} cannot be read ({exc}); on a multi-node cluster put the run directory "
                    f"on storage every node mounts, or set {SETTINGS_ENV} to the file's JSON"
                ) from None
        try:
            return cls.model_validate(json.loads(value))
        except ValidationError as exc:
            problems = describe_validation_error(cls, exc)
        except ValueError as exc:
            problems = f"not JSON ({exc})"
        raise ConfigError(
            f"{where} is not valid agent settings: {problems}; rewrite it with `agenthub run trainer=openrlhf`"
        )
