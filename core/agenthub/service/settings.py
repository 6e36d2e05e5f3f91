"""Settings of one environment server, shared by ``create_app`` and ``agenthub serve``."""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from agenthub.errors import PluginError

TOKEN_ENV_VAR = "AGENTHUB_TOKEN"
ADVERTISE_ENV_VAR = "AGENTHUB_ADVERTISE_URL"


class ServiceSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    host: str = Field(default="127.0.0.1", description="Address to bind; 127.0.0.1 unless you mean to expose it.")
    port: int = Field(default=8000, ge=0, le=65535, description="0 picks a free port.")
    max_sessions: int = Field(default=256, ge=1, description="Sessions held at once; past that, 503.")
    ttl: float = Field(default=600.0, gt=0, description="Idle seconds after which a session expires.")
    token: str | None = Field(
        default_factory=lambda: os.environ.get(TOKEN_ENV_VAR) or None,
        description=f"Bearer token required on every route except /healthz (default: ${TOKEN_ENV_VAR}).",
    )
    advertise_url: str | None = Field(
        default_factory=lambda: os.environ.get(ADVERTISE_ENV_VAR) or None,
        pattern=r"^https?://[^/?#\s]+/?$",
        description="This server's own address as its clients reach it, e.g. http://POD_IP:8000 for one replica "
        "behind a Kubernetes Service: each created session's 201 answer then carries "
        "Location: ADVERTISE_URL/v1/sessions/ID, and EnvClient sends that session's calls there, to the replica "
        f"that holds it (default: ${ADVERTISE_ENV_VAR}; unset: no Location).",
    )
    max_body_bytes: int = Field(default=1 << 20, ge=1024, description="Larger request bodies get 413.")
    threads: int = Field(default=32, ge=1, description="Threads that run environment code.")
    step_timeout: float | None = Field(
        default=300.0, gt=0, description="Seconds; a slower reset or step fails the session."
    )
    lean_routes: bool = Field(
        default=True,
        description="Answer create, step and delete through a lean ASGI path (a fraction of FastAPI's CPU per "
        "request); false sends them through FastAPI like every other route. Answers are the same either way.",
    )
    inline_calls: bool | None = Field(
        default=None,
        description="Run reset, step and close on the event loop, without a thread hop; "
        "None follows the env's EnvSpec.inline_calls. Only for pure-Python envs whose calls take microseconds.",
    )
    inline_budget_ms: float = Field(
        default=5.0,
        gt=0,
        description="When inline calls of one kind take longer than this on average, "
        "that kind of call goes to the thread pool for good.",
    )
    idle_envs: int = Field(default=4, ge=0, description="Closed sessions' env instances kept for reuse.")
    remembered_replies: int = Field(default=16, ge=1, description="Step answers kept per session for retries.")
    env_kwargs: dict[str, Any] = Field(default_factory=dict, description="Keyword arguments for the env factory.")


def apply_env_defaults(settings: ServiceSettings, defaults: Mapping[str, Any], *, env_name: str) -> ServiceSettings:
    """Settings with an env's ``service_defaults`` filled in wherever the user did not set a value."""
    if not defaults:
        return settings
    unknown = sorted(set(defaults) - set(ServiceSettings.model_fields))
    if unknown:
        raise PluginError(
            f"env {env_name!r}: service_defaults has unknown setting(s) {', '.join(unknown)}; "
            f"valid settings are {', '.join(ServiceSettings.model_fields)}"
        )
    chosen = settings.model_dump(include=settings.model_fields_set)
    return ServiceSettings.model_validate({**defaults, **chosen})
