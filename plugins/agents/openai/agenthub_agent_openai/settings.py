"""The agent's settings: validated at construction, so a typo fails before any episode runs.

``agenthub eval agent=openai agent.temperature=0.7`` passes ``temperature=0.7``
here. The API key is never a setting: ``api_key_env`` names the environment
variable that holds it, and neither the key nor its variable's value appears
in an error, a log line or the run's provenance.
"""

from __future__ import annotations

import difflib
import re
from typing import Any, Literal

from agenthub import ConfigError
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

ActionFormat = Literal["auto", "tool_call", "react", "raw"]

DEFAULT_REACT_INSTRUCTIONS = (
    "Think before each action. Reply in this format, with the action written exactly as the task requires:\n"
    "Thought: <your reasoning>\nAction: <one action>"
)

_ENV_VAR_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_SECRET_FIELDS = {"api_key_env", "extra_headers"}  # their values are never echoed in an error


class OpenAISettings(BaseModel):
    """Everything ``agent.KEY=VALUE`` can set; see the plugin's README for the table."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    # -- the server -------------------------------------------------------------------
    base_url: str = "http://localhost:8000/v1"
    """The API root, ending in ``/v1`` for vLLM, SGLang, llama.cpp and OpenAI."""
    api_key_env: str | None = "OPENAI_API_KEY"
    """Name of the environment variable holding the key; unset or empty sends no key."""
    api_key_header: str = "Authorization"
    """``Authorization`` sends ``Bearer <key>``; any other header (Azure's ``api-key``) sends the bare key."""
    extra_headers: dict[str, str] = Field(default_factory=dict)
    model: str | None = None
    """The served model's name; unset asks ``GET /models`` and uses the one model served there."""

    # -- sampling -----------------------------------------------------------------------
    temperature: float | None = Field(default=None, ge=0)
    top_p: float | None = Field(default=None, gt=0, le=1)
    max_tokens: int | None = Field(default=None, ge=1)
    stop: list[str] | None = None
    seed: int | None = None
    extra_body: dict[str, Any] = Field(default_factory=dict)
    """Merged into every request body last, e.g. ``{"top_k": 20, "chat_template_kwargs": {...}}``."""

    # -- the conversation ---------------------------------------------------------------
    action_format: ActionFormat = "auto"
    """``auto``: ``tool_call`` for envs whose action_format is tool_call, else ``react``."""
    system_prompt: str | None = None
    """Replaces the env's instructions (``EnvInfo.instructions``) as the system message."""
    react_instructions: str = DEFAULT_REACT_INSTRUCTIONS
    """Appended to the system prompt in ``react`` mode unless it already asks for ``Action:``."""
    tool_choice: str | dict[str, Any] = "auto"
    max_history_turns: int | None = Field(default=None, ge=1)
    """Send only the last N turns (plus the system prompt and the first observation)."""

    # -- tokens for trainers --------------------------------------------------------------
    logprobs: bool = False
    """Ask for per-token logprobs (and, with ``return_token_ids``, token ids) and keep them."""
    return_token_ids: bool | None = None
    """vLLM's ``return_token_ids``; unset follows ``logprobs``. Set false for servers that reject it."""

    # -- transport ------------------------------------------------------------------------
    max_concurrency: int = Field(default=64, ge=1)
    """Requests in flight at once, across every episode this agent plays."""
    max_retries: int = Field(default=5, ge=0)
    """Retries after a 408, 429 or 5xx answer, a timeout or a connection error."""
    backoff_s: float = Field(default=0.5, gt=0)
    backoff_max_s: float = Field(default=30.0, gt=0)
    retry_after_max_s: float = Field(default=120.0, ge=0)
    """The longest ``Retry-After`` that is honoured; longer ones are cut to this."""
    timeout_s: float = Field(default=600.0, gt=0)
    connect_timeout_s: float = Field(default=10.0, gt=0)

    @field_validator("base_url")
    @classmethod
    def _api_root(cls, value: str) -> str:
        value = value.strip().rstrip("/")
        if not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://, for example http://localhost:8000/v1")
        return value.removesuffix("/chat/completions")

    @field_validator("api_key_env")
    @classmethod
    def _env_var_name(cls, value: str | None) -> str | None:
        if value and not _ENV_VAR_NAME.match(value):
            raise ValueError(
                "must be the NAME of an environment variable (such as OPENAI_API_KEY), not the key itself; "
                "export the key in that variable and pass api_key_env=NAME"
            )
        return value or None

    @field_validator("stop", mode="before")
    @classmethod
    def _one_or_many(cls, value: Any) -> Any:
        return [value] if isinstance(value, str) else value

    @model_validator(mode="after")
    def _no_key_in_headers(self) -> OpenAISettings:
        for name in self.extra_headers:
            if name.lower() in ("authorization", self.api_key_header.lower()):
                raise ValueError(
                    f"extra_headers must not carry {name!r}: keep the key out of config files, "
                    "export it in an environment variable and name it with api_key_env"
                )
        return self

    def sampling(self) -> dict[str, Any]:
        """The sampling fields that are set, as they go into a request body."""
        fields = ("temperature", "top_p", "max_tokens", "stop", "seed")
        return {name: getattr(self, name) for name in fields if getattr(self, name) is not None}


def load_settings(settings: OpenAISettings | None = None, **overrides: Any) -> OpenAISettings:
    """``settings`` (or the defaults) with ``overrides`` applied; a bad value raises ``ConfigError``."""
    data = {**(settings.model_dump(exclude_unset=True) if settings else {}), **overrides}
    try:
        return OpenAISettings.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(describe_errors(exc)) from None


def describe_errors(exc: ValidationError) -> str:
    """One line per problem, naming the setting and what to do; never echoing a secret."""
    known = sorted(OpenAISettings.model_fields)
    lines = []
    for error in exc.errors():
        key = ".".join(str(part) for part in error["loc"]) or "(settings)"
        top = str(error["loc"][0]) if error["loc"] else ""
        message = error["msg"].removeprefix("Value error, ")
        if error["type"] == "extra_forbidden":
            match = difflib.get_close_matches(key, known, n=1)
            hint = f"did you mean {match[0]!r}? " if match else ""
            lines.append(f"unknown setting {key!r}; {hint}the openai agent's settings are: {', '.join(known)}")
        elif top in _SECRET_FIELDS or not error["loc"]:
            lines.append(f"{key}: {message}")
        else:
            lines.append(f"{key}: {message} (got {error.get('input')!r})")
    return "invalid settings for the openai agent:\n  " + "\n  ".join(lines)


def describe_settings(settings: OpenAISettings) -> dict[str, Any]:
    """What provenance records: every setting, with header values and the key left out."""
    data = settings.model_dump(mode="json")
    data["extra_headers"] = sorted(settings.extra_headers)
    return data
