"""The settings a trainer hands on to its framework's workers, carried over from the trainer's own.

Every trainer writes its rollout's settings (the env, who plays which seat, the turn and token limits, the
retries) into a file its framework's workers read; each of those is a setting of the trainer's by the same
name, passed on unchanged, except where the run decides it (the env servers it started, their token).
"""

from __future__ import annotations

from typing import Any, TypeVar

from pydantic import BaseModel

SettingsT = TypeVar("SettingsT", bound=BaseModel)


def worker_settings(config: BaseModel, settings_type: type[SettingsT], **decided: Any) -> SettingsT:
    """``settings_type`` from ``config``: each of its fields that ``config`` has by the same name, carried
    over unchanged, then ``decided`` (what the run sets itself, or settings named otherwise), validated."""
    own = type(config).model_fields
    carried = {name: getattr(config, name) for name in settings_type.model_fields if name in own}
    return settings_type(**{**carried, **decided})
