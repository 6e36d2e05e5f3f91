"""TRL trains on a CPU, and says so in its spec and in its pyproject (which core's first-party catalogue reads
to suggest it where a GPU-only trainer is refused)."""

from __future__ import annotations

from agenthub import get_plugin_host
from agenthub.training import check_cpu_flag

import agenthub_trainer_trl


def test_trl_trains_on_a_cpu_by_its_spec_and_its_pyproject() -> None:
    assert get_plugin_host().trainer("trl").trains_on_cpu
    check_cpu_flag(agenthub_trainer_trl)
