"""Configuration: an optional YAML file, then ``key=value`` overrides, validated by pydantic.

Overrides use dotted keys for nesting (``env_kwargs.heap_mb=512``) and YAML
for values (``rounds=[10,20,30]``, ``debug=true``). Validation errors name the
key and, for misspelt keys, suggest the closest valid one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any, Literal, TypeVar

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from agenthub.errors import ConfigError, did_you_mean
from agenthub.redaction import (
    REDACTED,
    fill_secrets,
    is_secret_name,
    redact_secrets,
    redacted_keys,
    write_private_text,
)

M = TypeVar("M", bound=BaseModel)


__all__ = [
    "REDACTED",
    "MultiPlayerConfig",
    "RolloutBackendConfig",
    "build_config",
    "check_rollout_backend",
    "deep_merge",
    "describe_validation_error",
    "fill_secrets",
    "is_secret_name",
    "load_yaml",
    "parse_overrides",
    "redact_secrets",
    "redacted_keys",
    "validate_config",
    "write_private_text",
]


class RolloutBackendConfig(BaseModel):
    """The keys that say where a run's env servers and episodes go, for every command and trainer
    that drives the hub executor (``agenthub eval``; ``agenthub run`` with a trainer whose rollout the
    hub drives): inherit them, then call :func:`check_rollout_backend`."""

    model_config = ConfigDict(extra="forbid")

    backend: Literal["local", "ray"] = Field(
        default="local", description="where the episodes run: on this machine, or on a Ray cluster's nodes"
    )
    address: str | None = Field(
        default=None,
        description="backend=ray: auto, HOST:PORT or ray://HOST:PORT; default $RAY_ADDRESS, else Ray on this machine",
    )


def check_rollout_backend(config: RolloutBackendConfig, *, urls: object = None) -> None:
    """Refuse backend settings that do not go together, saying which do."""
    if config.backend == "ray" and urls:
        raise ConfigError(
            "url= names env servers for a local run; backend=ray starts env servers on every Ray node itself "
            "(leave url= out, or use backend=local with url=)"
        )
    if config.backend == "local" and config.address is not None:
        raise ConfigError(f"address={config.address!r} is a Ray cluster's address; add backend=ray to run on it")


class MultiPlayerConfig(BaseModel):
    """The keys that say who plays a multi-player env's seats, for every command and trainer that drives
    the hub executor: inherit them, then turn them into the executor's ``opponents`` and ``seats`` with
    :func:`agenthub.training.seating` (which refuses settings that do not fit the env).

    ``seat``: the seat(s) the policy plays and, in training, learns from (default: seat 0).
    ``opponent``: the agent of every other seat (``oracle``, ``random``, ...); without it the policy
    plays every seat (self-play) and only ``seat``'s trajectories are trained on.
    """

    model_config = ConfigDict(extra="forbid")

    seat: int | list[int] | None = Field(
        default=None,
        description="multi-player envs: the seat(s) the policy plays and learns from (seat=1, seat=[0,1]); default 0",
    )
    opponent: str | None = Field(
        default=None,
        description="multi-player envs: the agent of every other seat (oracle, random, ...); default: self-play",
    )
    opponent_kwargs: dict[str, Any] = Field(
        default_factory=dict, description="settings for the opponent (opponent.KEY=...)"
    )

    @field_validator("seat")
    @classmethod
    def _seats_once(cls, seat: int | list[int] | None) -> int | list[int] | None:
        seats = [seat] if isinstance(seat, int) else seat or []
        if any(s < 0 for s in seats):
            raise ValueError("seats are numbered from 0; use seat=0, seat=1, ...")
        if isinstance(seat, list) and (not seat or len(set(seat)) != len(seat)):
            raise ValueError("name each seat once, e.g. seat=[0,1]")
        return seat

    @property
    def seats(self) -> list[int] | None:
        """``seat`` as a list; None when not given."""
        if self.seat is None:
            return None
        return [self.seat] if isinstance(self.seat, int) else list(self.seat)


def parse_overrides(items: Iterable[str]) -> dict[str, Any]:
    """Turn ``["a=1", "b.c=x"]`` into ``{"a": 1, "b": {"c": "x"}}``."""
    result: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        key = key.strip()
        if not sep or not key:
            raise ConfigError(f"expected key=value, got {item!r} (for example: env=guess port=8000)")
        try:
            value = yaml.safe_load(raw) if raw.strip() else ""
        except yaml.YAMLError:
            value = raw  # not valid YAML: keep the raw string, validation decides
        _set_dotted(result, key, value, item)
    return result


def _set_dotted(target: dict[str, Any], key: str, value: Any, item: str) -> None:
    *parents, leaf = key.split(".")
    node = target
    for part in parents:
        child = node.setdefault(part, {})
        if not isinstance(child, dict):
            raise ConfigError(f"override {item!r}: {part!r} was already given a plain value")
        node = child
    node[leaf] = value


def deep_merge(base: Mapping[str, Any], override: Mapping[str, Any]) -> dict[str, Any]:
    """Merge ``override`` into ``base``; nested mappings are merged, anything else replaced."""
    merged = dict(base)
    for key, value in override.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def load_yaml(path: str | Path) -> dict[str, Any]:
    path = Path(path)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"config file {str(path)!r} does not exist") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"config file {str(path)!r} is not valid YAML: {exc}") from None
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError(f"config file {str(path)!r} must hold a mapping at the top level, got {type(data).__name__}")
    return data


def build_config(
    model: type[M],
    overrides: Iterable[str] = (),
    *,
    config_file: str | Path | None = None,
    defaults: Mapping[str, Any] | None = None,
) -> M:
    """Defaults, then the YAML file, then the overrides, validated as ``model``."""
    data: dict[str, Any] = dict(defaults or {})
    if config_file is not None:
        data = deep_merge(data, load_yaml(config_file))
    data = deep_merge(data, parse_overrides(overrides))
    return validate_config(model, data)


def validate_config(model: type[M], data: Mapping[str, Any]) -> M:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(describe_validation_error(model, exc)) from None


def describe_validation_error(model: type[BaseModel], exc: ValidationError) -> str:
    """One line per problem, each naming the key and saying what to do."""
    lines = []
    for error in exc.errors():
        key = ".".join(str(part) for part in error["loc"]) or "(top level)"
        if error["type"] == "extra_forbidden":
            known = _known_keys(model, error["loc"][:-1])
            hint = did_you_mean(str(error["loc"][-1]), known)
            lines.append(f"unknown key {key!r}; {hint}valid keys: {', '.join(sorted(known))}")
        elif error["type"] == "missing":
            lines.append(f"missing required key {key!r}; pass it as {key}=...")
        else:
            # A secret's value is never echoed: the message may end up in a log.
            given = error.get("input")
            if any(is_secret_name(str(part)) for part in error["loc"]):
                given = REDACTED
            elif isinstance(given, Mapping):
                given = redact_secrets(given)
            lines.append(f"{key}: {error['msg']} (got {given!r})")
    return "invalid configuration:\n  " + "\n  ".join(lines)


def _known_keys(model: type[BaseModel], loc: tuple[int | str, ...]) -> list[str]:
    current: Any = model
    for part in loc:
        field = getattr(current, "model_fields", {}).get(part)
        if field is None or not isinstance(field.annotation, type) or not issubclass(field.annotation, BaseModel):
            return []
        current = field.annotation
    return list(getattr(current, "model_fields", {}))
