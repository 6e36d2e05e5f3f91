"""What ms-swift imports for this plugin: importable module -> the pip requirement that provides it.

Plain data, read by the launch checks and ``tests/test_swift_prerequisites.py``. swift trains on a CPU:
``TRAINER_MODULES`` are the plug-in points (``swift.rollout``'s multi-turn scheduler registry,
``swift.rewards``' ORM registry, the request types) and the ``swift rlhf`` entry point
(``swift.cli.rlhf`` -> ``swift.pipelines``), installed by the ``cpu`` variant of ``install.toml``.
``GPU_MODULES``: vLLM, which ``swift rollout`` (server mode) and colocate ``use_vllm`` import.
"""

from __future__ import annotations

TRAINER_MODULES: dict[str, str] = {
    "swift": "ms-swift==4.6.0",
    "swift.rollout": "ms-swift==4.6.0",
    "swift.rewards": "ms-swift==4.6.0",
    "swift.infer_engine.protocol": "ms-swift==4.6.0",
    "swift.cli.rlhf": "ms-swift==4.6.0",
    "swift.pipelines": "ms-swift==4.6.0",
    "swift.rlhf_trainers": "ms-swift==4.6.0",
    "transformers": "transformers==5.19.0",
    "trl": "trl==0.29.1",
    "peft": "peft==0.20.0",
    "datasets": "datasets==4.8.4",
    "accelerate": "accelerate==1.15.0",
    "msgspec": "msgspec==0.22.0",  # swift's GRPO trainer imports it; ms-swift does not declare it
}

GPU_MODULES: dict[str, str] = {
    "vllm": "vllm==0.23.0",
    "swift.cli.rollout": "vllm==0.23.0",
}
