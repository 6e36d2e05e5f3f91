"""What one entry of the agent-loop YAML says: which env to play and how.

verl builds an agent loop per sample with ``hydra.utils.instantiate``: every
key of the YAML entry besides ``name`` and ``_target_`` arrives as a keyword
argument. They are validated here, so a typo in the file fails on the first
episode with a message that names the key, not deep inside an episode.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from agenthub.config import MultiPlayerConfig
from pydantic import ConfigDict, Field, ValidationError, model_validator

AGENT_NAME = "agenthub"
"""The ``agent_name`` every dataset row carries and the YAML entry registers."""

LOOP_TARGET = "agenthub_trainer_verl.agent_loop.AgenthubAgentLoop"


class LoopSettings(MultiPlayerConfig):
    """The agent loop's settings, as written into the agent-loop YAML (``seat``, ``opponent``,
    ``opponent_kwargs``: who plays a multi-player env's seats; the worker builds the opponent)."""

    model_config = ConfigDict(extra="forbid")

    env: str = Field(description="the env's registered name (checked against the servers' /v1/info)")
    urls: list[str] | None = Field(default=None, description="env servers already running; default: start some")
    processes: int = Field(default=1, ge=1, description="local env servers each agent-loop worker starts")
    capacity: int = Field(default=64, ge=1, description="sessions one env server holds at once")
    token: str | None = None
    max_tokens: int = Field(default=256, ge=1, description="tokens per model turn")
    horizon: int | dict[str, Any] | None = Field(default=None, description="turn limit schedule; default env's")
    max_attempts: int = Field(default=3, ge=1, description="sessions an episode may use on infra failures")
    episode_timeout_s: float | None = Field(default=None, gt=0)
    unhealthy_wait_s: float = Field(
        default=60.0, gt=0, description="how long an episode waits for a failing env server before it gives up"
    )
    system_prompt: str | None = Field(default=None, description="default: the env's instructions")
    on_infra_failure: Literal["mask", "raise"] = Field(
        default="mask",
        description="mask: all-zero response_mask, reward 0; raise: fail the sample (verl V1 marks its group failed)",
    )

    @model_validator(mode="after")
    def _where(self) -> LoopSettings:
        if self.urls is not None and not self.urls:
            raise ValueError("urls is an empty list; give env server URLs, or drop urls to start local servers")
        return self

    @classmethod
    def from_kwargs(cls, kwargs: Mapping[str, Any]) -> LoopSettings:
        """Settings from the YAML entry's keys (hydra hands lists as ListConfig: made plain first)."""
        plain = {key: _plain(value) for key, value in kwargs.items()}
        try:
            return cls.model_validate(plain)
        except ValidationError as exc:
            raise ValueError(
                f"the agenthub entry of actor_rollout_ref.rollout.agent.agent_loop_config_path is invalid: {exc}; "
                f"write it with `agenthub run trainer=verl ... --dry-run` or fix the named keys"
            ) from None


def _plain(value: Any) -> Any:
    """OmegaConf containers as plain lists and dicts (without importing omegaconf here)."""
    if isinstance(value, str | bytes | int | float | bool) or value is None:
        return value
    if hasattr(value, "items"):
        return {str(k): _plain(v) for k, v in value.items()}
    if hasattr(value, "__iter__"):
        return [_plain(v) for v in value]
    return value
