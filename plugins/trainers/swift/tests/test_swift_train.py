"""A real 2-step GRPO run on a CPU: ``agenthub run trainer=swift env=trail`` with a tiny local model.

Nothing is a double here: ``swift rlhf`` samples with its transformers engine,
the scheduler's per-turn hooks drive a real ``trail`` server, and an observer
plugin records what the trainer encodes, to check that env tokens are out of
the loss and sampled tokens are in it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from agenthub.rollout import RunStore
from transformers import AutoTokenizer

from agenthub_trainer_swift.launch import plugin_file

OBSERVER = Path(__file__).with_name("observe_plugin.py")


def expected_trained(trajectory: Any, suffix: list[int]) -> list[int]:
    """Every sampled token; after a turn cut at max_tokens (but the last) also the template's end of turn,
    which swift trains by design (its "dynamic EOS": a masked span that starts with the template suffix)."""
    out: list[int] = []
    for number, turn in enumerate(trajectory.turns, 1):
        ids = list(turn.token_ids or [])
        closed = (ids and ids[-1] == suffix[0]) or number == len(trajectory.turns)
        out += ids if closed else ids + suffix
    return out


def test_two_grpo_steps_on_a_cpu(tmp_path: Path) -> None:
    encoded_file = tmp_path / "encoded.jsonl"
    env = {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "USE_HF": "1",  # swift asks the hub for kernels otherwise; offline, the HF path fails fast
        "AGENTHUB_SWIFT_TEST_ENCODED": str(encoded_file),
        "TRL_EXPERIMENTAL_SILENCE": "1",
    }
    plugins = json.dumps([str(plugin_file()), str(OBSERVER)])
    command = [
        sys.executable, "-m", "agenthub", "run", "trainer=swift", "env=trail",
        "steps=2", "tasks_per_step=2", "num_generations=2", "max_tokens=4",
        f"runs_dir={tmp_path}", "run_id=cpu", f"swift.external_plugins={plugins}",
    ]  # fmt: skip
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=600, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-6000:]

    run = tmp_path / "cpu"
    assert RunStore.existing(run).meta()["status"] == "finished"
    logged = [json.loads(line) for line in (run / "swift" / "logging.jsonl").read_text().splitlines()]
    steps = [r for r in logged if "loss" in r and "global_step/max_steps" in r]
    assert [r["global_step/max_steps"] for r in steps] == ["1/2", "2/2"]
    assert all(r["grad_norm"] > 0 for r in steps)  # each step computed a gradient
    assert "rewards/EnvReward/mean" in steps[0] and "num_turns" in steps[0]

    trajectories = {t.key: t for t in RunStore.existing(run).trajectories()}
    assert len(trajectories) == 8  # 2 steps x 2 tasks x 2 episodes
    tokenizer = AutoTokenizer.from_pretrained(run / "tiny-model")
    suffix = tokenizer.encode("<|im_end|>\n", add_special_tokens=False)
    rows = [json.loads(line) for line in encoded_file.read_text().splitlines()]
    assert rows, "the trainer encoded nothing"
    checked = 0
    for row in rows:
        trajectory = trajectories[row["key"]]
        ids, labels = row["input_ids"], row["labels"]
        trained = [t for t, label in zip(ids, labels, strict=True) if label != -100]
        assert trained == expected_trained(trajectory, suffix)
        untrained = tokenizer.decode([t for t, label in zip(ids, labels, strict=True) if label == -100])
        assert trajectory.first_observation in untrained
        for turn in trajectory.turns[:-1]:  # every env answer the model saw is out of the loss
            assert turn.observation in untrained
            checked += 1
    assert checked > 0, "no episode had an env answer between two model turns"
