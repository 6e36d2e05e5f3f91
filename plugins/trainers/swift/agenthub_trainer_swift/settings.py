"""What the scheduler inside swift needs to reach the envs: a JSON file named by ``AGENTHUB_SWIFT_CONFIG``.

``agenthub run trainer=swift`` writes it into the run directory; a hand-written
``swift rlhf`` / ``swift rollout`` launch sets the variable to a file like::

    {"env": "trail", "urls": ["http://10.0.0.5:8000"], "max_tokens": 64, "max_context": 2048}
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

SETTINGS_ENV_VAR = "AGENTHUB_SWIFT_CONFIG"
SETTINGS_FILE = "agenthub_swift.json"


class SettingsError(RuntimeError):
    """The scheduler's settings file is missing or wrong."""


class SchedulerSettings(BaseModel):
    """Env servers, per-turn limits and retries of the ``agenthub`` multi-turn scheduler."""

    model_config = ConfigDict(extra="forbid")

    env: str = Field(description="the env the servers serve (checked against their /v1/info)")
    urls: list[str] = Field(min_length=1, description="env servers, e.g. http://127.0.0.1:8000")
    token: str | None = None
    max_turns: int | None = Field(default=None, ge=1, description="turn limit; default: swift's --max_turns or env's")
    horizon: int | dict[str, Any] | None = Field(
        default=None,
        description="turn limit by step: N, or {kind: stepwise, rounds: [...], every: K} (see .horizon); "
        "overrides max_turns",
    )
    max_tokens: int = Field(default=256, ge=1, description="tokens per model turn (server mode)")
    max_context: int = Field(default=4096, ge=16, description="prompt plus every turn, in tokens (server mode)")
    system_prompt: str | None = Field(default=None, description="default: the env's instructions from /v1/info")
    capacity: int = Field(default=64, ge=1, description="sessions in flight per env server")
    max_attempts: int = Field(default=3, ge=1, description="tries per episode on infra failures")
    episode_timeout_s: float | None = Field(default=None, gt=0)
    store: str | None = Field(default=None, description="an agenthub run directory; every episode is written there")
    episodes_per_step: int = Field(default=64, ge=1, description="episodes a step plays: what step warnings judge")

    @classmethod
    def load(cls, path: str | os.PathLike[str] | None = None) -> SchedulerSettings:
        """The settings in ``path``, else in the file named by ``AGENTHUB_SWIFT_CONFIG``."""
        where = path if path is not None else os.environ.get(SETTINGS_ENV_VAR)
        if not where:
            raise SettingsError(
                f"the agenthub scheduler needs its settings: set {SETTINGS_ENV_VAR} to the {SETTINGS_FILE} that "
                "`agenthub run trainer=swift` writes into its run directory (or write one: see the plugin's README)"
            )
        file = Path(where)
        try:
            return cls.model_validate_json(file.read_text())
        except FileNotFoundError:
            raise SettingsError(f"{SETTINGS_ENV_VAR}={file} does not exist; point it at an {SETTINGS_FILE}") from None
        except ValidationError as exc:
            raise SettingsError(f"{file} is not valid agenthub scheduler settings: {exc}") from None
