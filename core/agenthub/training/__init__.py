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
* :mod:`resumption`: what ``--resume RUN_DIR`` may change, how a run opens or reopens
  (:func:`resumption.open_run`), and what a resumed run drops of the stopped one (:func:`resumption.rewind`);
* :func:`split_task_ids`: the task ids of a split, as its ``/v1/tasks`` listing names them;
* :data:`EnvUrls`, :func:`env_url_list`: ``url=`` (one URL or a list) as a list;
* :func:`check_launch_with_model` (and under it :func:`policy_tokenizer`, :func:`checks_with_tokenizer`),
  :func:`most_turns`: what a trainer's launch checks load and play against (the model's tokenizer,
  offline on a dry run; the horizon's longest limit);
* :func:`prerequisite_tests`: the test class that checks a trainer's install recipe against its imports;
* :func:`preflight`, :func:`print_dry_run_checks`, :func:`env_servers`, :func:`recorded_run`:
  the lifecycle around a framework: checks before it starts, env servers while it runs (here, or
  with ``backend=ray`` on a Ray cluster's nodes),
  the run's end status (finished, failed, interrupted) in the run store.
"""

from agenthub.training import resumption
from agenthub.training.env_pools import open_env_pool
from agenthub.training.env_urls import EnvUrls, env_url_list
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
from agenthub.training.prerequisite_tests import prerequisite_tests
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
from agenthub.training.task_ids import split_task_ids
from agenthub.training.tokenizers import (
    LaunchSettings,
    check_launch_with_model,
    checks_with_tokenizer,
    policy_tokenizer,
)
from agenthub.training.turn_limits import most_turns

__all__ = [
    "CPU_TRAINERS",
    "EnvUrls",
    "Finding",
    "FrameworkMissing",
    "FrameworkNeeds",
    "LaunchRefused",
    "LaunchReport",
    "LaunchSettings",
    "RunEnd",
    "Seating",
    "ServerUrls",
    "StepOutcomeLog",
    "StepWarnings",
    "TokenLimits",
    "check_framework",
    "check_launch",
    "check_launch_with_model",
    "checks_with_tokenizer",
    "env_servers",
    "env_url_list",
    "framework_problems",
    "gpu_available",
    "most_turns",
    "open_env_pool",
    "opponent_spec",
    "policy_tokenizer",
    "preflight",
    "prerequisite_tests",
    "print_checks",
    "print_dry_run_checks",
    "print_framework_problems",
    "recorded_run",
    "resumption",
    "seating",
    "split_task_ids",
    "step_warning",
]
