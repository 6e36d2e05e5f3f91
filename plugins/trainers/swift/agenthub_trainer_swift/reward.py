"""``agenthub_env_reward``: the env's episode reward, as a swift reward function (``--reward_funcs``).

The scheduler puts each episode's summed env reward and whether it may be
trained on in ``rollout_infos``. An infra failure gets the mean reward of the
trainable episodes of its prompt group in the batch: the group's mean, hence
every other episode's advantage, stays what it would be without it, and its
own advantage is zero (its loss mask is all zero as well).
"""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Any

from swift.rewards import ORM


def env_rewards(infos: Sequence[dict[str, Any]], groups: Sequence[Any]) -> list[float]:
    """Rewards for rows with these ``rollout_infos`` and prompt ids."""
    for info in infos:
        if "agenthub_reward" not in info:
            raise ValueError(
                "agenthub_env_reward found no agenthub_reward in rollout_infos; it needs the agenthub scheduler "
                "(--multi_turn_scheduler agenthub, on the rollout server in server mode)"
            )
    trainable: dict[Any, list[float]] = {}
    for info, group in zip(infos, groups, strict=True):
        if info.get("agenthub_trainable", True):
            trainable.setdefault(group, []).append(float(info["agenthub_reward"]))
    rewards = []
    for info, group in zip(infos, groups, strict=True):
        if info.get("agenthub_trainable", True):
            rewards.append(float(info["agenthub_reward"]))
        else:
            peers = trainable.get(group)
            rewards.append(statistics.fmean(peers) if peers else 0.0)
    return rewards


class EnvReward(ORM):  # type: ignore[misc]
    """Registered as ``agenthub_env_reward`` by :mod:`agenthub_trainer_swift.swift_plugin`."""

    def __call__(self, completions: list[Any], **kwargs: Any) -> list[float]:
        infos = kwargs.get("rollout_infos") or [{} for _ in completions]
        groups = kwargs.get("prompt_id") or list(range(len(completions)))
        return env_rewards(infos, groups)
