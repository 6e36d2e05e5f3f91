"""The entropy bonus of a step, scaled by the share of its episodes that failed (``entropy_schedule=by_failure``).

The bonus (TRL's ``entropy_coef``) is there for the steps in which GRPO has nothing to learn from: every
group scored evenly (a policy collapsed onto one reply, or one that makes the same mistake in every episode of
a task), and spreading the reply is the only way to sample, and so score, the others. Once most episodes
win, the bonus has no such job, yet a constant one keeps pushing the reply apart while fewer and fewer
groups push back: on trail, two runs of 20 that had learned by step 40 (success 0.97) drifted from about
0.2 to 0.5-0.85 nats of entropy and ended at 0.74 over their last 5 steps
(benchmarks/results/trl_seeds_sweeps). Scaled by the step's failures, it is the full coefficient while
the policy is still searching (no episode wins in a random model's first steps) and fades as the policy is
learned (5% of it at success 0.95).
"""

from __future__ import annotations

from collections.abc import Callable

from agenthub_trainer_trl.rollout import StepStats

EntropySchedule = Callable[[StepStats], float]


def entropy_by_failure(coefficient: float) -> EntropySchedule:
    """``coefficient`` times the share of the step's scored episodes that did not succeed."""

    def for_step(stats: StepStats) -> float:
        if stats.success_rate is None:  # nothing scored (every episode an infrastructure failure): as configured
            return coefficient
        return coefficient * (1.0 - stats.success_rate)

    return for_step
