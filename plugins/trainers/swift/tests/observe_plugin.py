"""A second ``--external_plugins`` file for the training test: records what swift's GRPO trainer encodes.

It wraps ``encode_sample`` in swift's GRPO trainer module and appends each
sample's ``input_ids`` and ``labels`` (label -100: out of the loss) to the
JSONL file named by ``AGENTHUB_SWIFT_TEST_ENCODED``. The real function does
the work; this only watches.
"""

from __future__ import annotations

import json
import os
from typing import Any

from swift.rlhf_trainers import grpo_trainer

_encode = grpo_trainer.encode_sample


def _watched(sample: Any, template: Any, **kwargs: Any) -> Any:
    encoded = _encode(sample, template, **kwargs)
    with open(os.environ["AGENTHUB_SWIFT_TEST_ENCODED"], "a") as f:
        row = {"input_ids": list(encoded["input_ids"]), "labels": list(encoded["labels"])}
        row["key"] = (sample.rollout_infos or {}).get("agenthub_key")
        f.write(json.dumps(row) + "\n")
    return encoded


grpo_trainer.encode_sample = _watched
