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
  offline on a dry run; the horizon's longest limit), both in :func:`check_launch_over_horizon`;
* :func:`gpu_framework_needs`: a GPU-only framework's needs, from its plugin's ``prerequisites`` module;
* :func:`prerequisite_tests`: the test class that checks a trainer's install recipe against its imports;
  :func:`check_cpu_flag`, its check that the plugin's pyproject and spec agree on training on a CPU;
* :func:`preflight`, :func:`print_dry_run_checks`, :func:`env_servers`, :func:`recorded_run`:
  the lifecycle around a framework: checks before it starts, env servers while it runs (here, or
  with ``backend=ray`` on a Ray cluster's nodes),
  the run's end status (finished, failed, interrupted) in the run store;
* :class:`FrameworkTrainer`, :func:`print_dry_run_head`, :func:`ray_env_servers`, :class:`EpisodeSteps`:
  what the trainers that launch a framework share (``run``'s order, a dry run's head, ``backend=ray``'s
  env servers, the step of an episode counted from the episodes started);
* :data:`DEFAULT_POLICY`, :func:`policy_field`: the policy a GPU trainer trains by default, its ``model`` setting;
* :func:`one_trained_seat`: the seating of a trainer whose framework takes one trajectory per prompt;
* :func:`worker_settings`: the settings a trainer hands on to its framework's workers, carried over from its own.
"""

from agenthub.training import resumption
from agenthub.training.default_policy import DEFAULT_POLICY, policy_field
from agenthub.training.dry_run_head import print_dry_run_head
from agenthub.training.env_pools import open_env_pool
from agenthub.training.env_urls import EnvUrls, env_url_list
from agenthub.training.episode_steps import EpisodeSteps
from agenthub.training.framework_trainer import FrameworkTrainer
from agenthub.training.gpu_frameworks import gpu_framework_needs
from agenthub.training.horizon_checks import check_launch_over_horizon
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
from agenthub.training.prerequisite_tests import check_cpu_flag, prerequisite_tests
from agenthub.training.prerequisites import (
    FrameworkMissing,
    FrameworkNeeds,
    check_framework,
    cpu_trainers,
    framework_problems,
    gpu_available,
)
from agenthub.training.ray_servers import ray_env_servers
from agenthub.training.seating import Seating, opponent_spec, seating
from agenthub.training.step_health import StepOutcomeLog, StepWarnings, step_warning
from agenthub.training.task_ids import split_task_ids
from agenthub.training.tokenizers import (
    LaunchSettings,
    check_launch_with_model,
    checks_with_tokenizer,
    policy_tokenizer,
)
from agenthub.training.trained_seat import one_trained_seat
from agenthub.training.turn_limits import most_turns
from agenthub.training.worker_settings import worker_settings

__all__ = [
    "DEFAULT_POLICY",
    "EnvUrls",
    "EpisodeSteps",
    "Finding",
    "FrameworkMissing",
    "FrameworkNeeds",
    "FrameworkTrainer",
    "LaunchRefused",
    "LaunchReport",
    "LaunchSettings",
    "RunEnd",
    "Seating",
    "ServerUrls",
    "StepOutcomeLog",
    "StepWarnings",
    "TokenLimits",
    "check_cpu_flag",
    "check_framework",
    "check_launch",
    "check_launch_over_horizon",
    "check_launch_with_model",
    "checks_with_tokenizer",
    "cpu_trainers",
    "env_servers",
    "env_url_list",
    "framework_problems",
    "gpu_available",
    "gpu_framework_needs",
    "most_turns",
    "one_trained_seat",
    "open_env_pool",
    "opponent_spec",
    "policy_field",
    "policy_tokenizer",
    "preflight",
    "prerequisite_tests",
    "print_checks",
    "print_dry_run_checks",
    "print_dry_run_head",
    "print_framework_problems",
    "ray_env_servers",
    "recorded_run",
    "resumption",
    "seating",
    "split_task_ids",
    "step_warning",
    "worker_settings",
]
