"""The end of a GRPO run: the trained model scored on the env's ``test`` split.

Training success is measured on the tasks the model learns from, one noisy step at a time; the test
split says what the model does on tasks it never saw. The episodes are played by the same executor and
policy as the training rollouts (the trained model, sampled as in training, the env's own turn limit),
one per task, and are not stored with the training trajectories (a resumed run or ``agenthub export``
must not take them for training episodes). ``agenthub eval ... agent=hf agent.model=RUN/model`` plays
the saved model the same way (it reads the settings from the model's ``agenthub.json``).
"""

from __future__ import annotations

import asyncio
from typing import Any

from agenthub import EnvInfo, Outcome, Task
from agenthub.rollout import EnvPool, Executor, episode_requests
from agenthub.training import split_task_ids

TEST_SPLIT = "test"


def first_tasks(info: EnvInfo, ids: list[Any], episodes: int) -> list[Task]:
    """The first ``episodes`` tasks of the test split (fixed: runs are compared on the same tasks)."""
    return [Task(env=info.name, task_id=i, split=TEST_SPLIT) for i in ids[:episodes]]


def score(trajectories: list[Any]) -> dict[str, Any]:
    """Success over the scored episodes; infra failures (never the model's doing) are counted apart."""
    scored = [t for t in trajectories if not t.outcome.is_infra_failure]
    won = sum(t.outcome is Outcome.SUCCESS for t in scored)
    return {
        "split": TEST_SPLIT,
        "episodes": len(trajectories),
        "success": round(won / len(scored), 4) if scored else None,
        "mean_reward": round(sum(t.reward for t in scored) / len(scored), 4) if scored else None,
        "infra_failures": len(trajectories) - len(scored),
    }


def score_test_split(runner: asyncio.Runner, pool: EnvPool, executor: Executor, episodes: int) -> dict[str, Any]:
    """The summary's ``test`` entry: ``episodes`` test tasks played once each by ``executor``'s policy."""
    info = runner.run(pool.info())
    if TEST_SPLIT not in info.splits:
        return {
            "split": TEST_SPLIT,
            "skipped": f"env {info.name!r} has no test split (it has {', '.join(info.splits)})",
        }
    ids = split_task_ids(runner.run(pool.endpoints[0].client.tasks(TEST_SPLIT)))
    trajectories = runner.run(executor.run(episode_requests(first_tasks(info, ids, episodes))))
    return score(trajectories)


def summary_line(test: dict[str, Any]) -> str:
    """The summary's line for the test split."""
    if "skipped" in test:
        return f"test split: not scored: {test['skipped']}"
    success = "n/a" if test["success"] is None else f"{test['success']:.2f}"
    failed = f", {test['infra_failures']} infra failures not counted" if test["infra_failures"] else ""
    how = f"final model, sampled as in training{failed}"
    return f"test split: success {success} over {test['episodes']} episodes ({how})"
