"""The settings a model was trained with, kept in ``agenthub.json`` beside its weights.

A model trained by an agenthub trainer (``trl`` writes it into ``model/`` and every checkpoint) plays
best as it was trained: with one token a turn, a model trained so replies in one token; given 256 it
writes on past its word, each turn costs 256 forward passes and its moves are read out of noise. So
``agent=hf`` takes these settings from the directory unless ``agent.KEY=VALUE`` names them.

Why a file of our own rather than ``generation_config.json``'s ``max_new_tokens``: :func:`load_model`
drops a checkpoint's generation defaults on purpose (they must not change what a caller asked for
unseen), and the episode's token budget (``max_context``) has no place there. The chat template needs
nothing here: the trainer saves the tokenizer, template included, with the weights, and the agent
renders every turn with it.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from agenthub_agent_hf.loading import ModelLoadError

MODEL_SETTINGS_FILE = "agenthub.json"

CARRIED = ("max_tokens", "max_context", "temperature", "top_p", "top_k", "system_prompt")
"""The ``agent.*`` settings a model directory may carry: how a turn is sampled and how long an episode runs."""


def trained_settings(model_dir: str | Path) -> dict[str, Any]:
    """The ``agent`` settings in ``model_dir/agenthub.json`` that this agent takes (none without the file)."""
    file = Path(model_dir).expanduser() / MODEL_SETTINGS_FILE
    if not file.is_file():
        return {}
    try:
        data = json.loads(file.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ModelLoadError(
            f"agent hf: {file} is not readable JSON ({exc}); it holds the settings the model was trained with: "
            "fix it, or delete it and give agent.max_tokens= (and the other settings) yourself"
        ) from exc
    agent = data.get("agent") if isinstance(data, dict) else None
    if not isinstance(agent, dict):
        raise ModelLoadError(
            f'agent hf: {file} has no "agent" object of settings; write {{"agent": {{"max_tokens": N, ...}}}} '
            "or delete the file"
        )
    return {key: value for key, value in agent.items() if key in CARRIED and value is not None}


def fill_in(settings: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """``settings`` with what the model directory carries filled in where they do not name it; and what was taken."""
    model = settings.get("model")
    if not isinstance(model, str | Path):
        return dict(settings), {}
    taken = {key: value for key, value in trained_settings(model).items() if key not in settings}
    return {**taken, **settings}, taken


def taken_line(model: str | Path, taken: Mapping[str, Any]) -> str:
    """The console line that says which settings came from the model directory."""
    shown = ", ".join(
        f"{key}={value!r}" if isinstance(value, str) else f"{key}={value}" for key, value in taken.items()
    )
    return f"agent hf: as trained ({Path(model) / MODEL_SETTINGS_FILE}): {shown}; agent.KEY=VALUE overrides any of them"
