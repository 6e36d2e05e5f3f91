"""swift's ``--external_plugins`` file: registers the ``agenthub`` scheduler, ``agenthub_env_reward`` and the
``agenthub_step`` callback (the training step, for horizon schedules).

swift imports this file by path (``agenthub run trainer=swift`` passes
``--external_plugins <this file>``); both names then work on the command line::

    swift rlhf --rlhf_type grpo --external_plugins $(python -m agenthub_trainer_swift.swift_plugin) \\
        --multi_turn_scheduler agenthub --reward_funcs agenthub_env_reward ...
"""

from __future__ import annotations

from pathlib import Path

from swift.callbacks import callbacks_map
from swift.rewards import orms
from swift.rollout import multi_turns

from agenthub_trainer_swift.reward import EnvReward
from agenthub_trainer_swift.scheduler import SCHEDULER_NAME, AgenthubScheduler
from agenthub_trainer_swift.step_callback import CALLBACK_NAME, TrainingStepCallback

REWARD_NAME = "agenthub_env_reward"

multi_turns[SCHEDULER_NAME] = AgenthubScheduler
orms[REWARD_NAME] = EnvReward
callbacks_map[CALLBACK_NAME] = TrainingStepCallback

if __name__ == "__main__":
    print(Path(__file__).resolve())
