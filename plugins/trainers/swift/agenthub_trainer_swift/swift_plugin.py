"""swift's ``--external_plugins`` file: registers the ``agenthub`` scheduler and ``agenthub_env_reward``.

swift imports this file by path (``agenthub run trainer=swift`` passes
``--external_plugins <this file>``); both names then work on the command line::

    swift rlhf --rlhf_type grpo --external_plugins $(python -m agenthub_trainer_swift.swift_plugin) \\
        --multi_turn_scheduler agenthub --reward_funcs agenthub_env_reward ...
"""

from __future__ import annotations

from pathlib import Path

from swift.rewards import orms
from swift.rollout import multi_turns

from agenthub_trainer_swift.reward import EnvReward
from agenthub_trainer_swift.scheduler import SCHEDULER_NAME, AgenthubScheduler

REWARD_NAME = "agenthub_env_reward"

multi_turns[SCHEDULER_NAME] = AgenthubScheduler
orms[REWARD_NAME] = EnvReward

if __name__ == "__main__":
    print(Path(__file__).resolve())
