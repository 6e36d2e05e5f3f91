"""The cpu install recipe brings every module the trainer imports: an incomplete install.toml fails CI here.

The tests are :func:`agenthub.training.prerequisite_tests`'s, over ``prerequisites.TRAINER_MODULES``, run in
the virtualenv ``agenthub install trainer-openrlhf[test] --variant cpu`` made.
"""

from __future__ import annotations

from agenthub.training import prerequisite_tests

from agenthub_trainer_openrlhf import prerequisites

TestPrerequisites = prerequisite_tests(prerequisites)
