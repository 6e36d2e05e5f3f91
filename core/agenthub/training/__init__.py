"""What every trainer plugin shares before and during a run, whatever its framework.

* :func:`check_framework`: the framework's prerequisites on this machine (a GPU, the
  modules its trainer imports), all missing pieces in one message;
* :func:`check_launch`: the env and the policy's token limits, played for real on one
  task, refused with the setting to change;
* :func:`step_warning`: a warning for a step whose episodes mostly ended truncated or
  in an infra outcome;
* :func:`open_env_pool`: the env servers of a trainer's rollout, from its ``url=``, ``processes=``,
  ``backend=local|ray`` and ``address=`` settings;
* :func:`seating`: who plays a multi-player env's seats, from a trainer's ``seat=``, ``opponent=`` and
  ``opponent.KEY=`` settings (:class:`agenthub.config.MultiPlayerConfig`): the executor's ``opponents``
  and ``seats``;
* :mod:`resumption`: what ``--resume RUN_DIR`` may change and how a run reopens;
* :func:`preflight`, :func:`print_dry_run_checks`, :func:`env_servers`, :func:`recorded_run`:
  the lifecycle around a framework: checks before it starts, env servers while it runs (here, or
  with ``backend=ray`` on a Ray cluster's nodes),
  the run's end status (finished, failed, interrupted) in the run store.
"""

from agenthub.training import resumption
from agenthub.training.env_pools import open_env_pool
from agenthub.training.launch_checks import Finding, LaunchRefused, LaunchReport, TokenLimits, check_launch
from agenthub.training.lifecycle import (
    RunEnd,
    ServerUrls,
    env_servers,
    preflight,
    print_checks,
    print_dry_run_checks,
    print_framework_problems,
    recorded_run,
)
from agenthub.training.prerequisites import (
    CPU_TRAINERS,
    FrameworkMissing,
    FrameworkNeeds,
    check_framework,
    framework_problems,
    gpu_available,
)
from agenthub.training.seating import Seating, opponent_spec, seating
from agenthub.training.step_health import StepOutcomeLog, StepWarnings, step_warning

__all__ = [
    "CPU_TRAINERS",
    "Finding",
    "FrameworkMissing",
    "FrameworkNeeds",
    "LaunchRefused",
    "LaunchReport",
    "RunEnd",
    "Seating",
    "ServerUrls",
    "StepOutcomeLog",
    "StepWarnings",
    "TokenLimits",
    "check_framework",
    "check_launch",
    "env_servers",
    "framework_problems",
    "gpu_available",
    "open_env_pool",
    "opponent_spec",
    "preflight",
    "print_checks",
    "print_dry_run_checks",
    "print_framework_problems",
    "recorded_run",
    "resumption",
    "seating",
    "step_warning",
]
