"""What verl's trainer imports for the configuration this plugin writes: importable module -> pip requirement.

Plain data, read by the launch checks (``checks.py``) and ``tests/test_verl_prerequisites.py``. The
configuration is ``launch.py``'s: ``python -m verl.trainer.main_ppo`` with verl 0.9.1's default V1
trainer (``trainer.use_v1``: ``TaskRunnerV1`` imports ``transfer_queue`` and ``verl.trainer.ppo.v1``),
FSDP engine workers, the async agent loop, GRPO, the console logger. ``TRAINER_MODULES`` work on a
CPU and are what the ``cpu`` variant of ``install.toml`` installs; ``GPU_MODULES`` are the ``gpu``
variant's (verl's rollout servers import vLLM or SGLang; the FSDP actor uses flash-attn on CUDA).
"""

from __future__ import annotations

TRAINER_MODULES: dict[str, str] = {
    # verl's own modules on the run's path: entry point, V1 trainer, engine workers, agent loop, reward loop
    "verl.trainer.main_ppo": "verl==0.9.1",
    "verl.trainer.ppo.v1": "verl==0.9.1",
    "verl.trainer.ppo.ray_trainer": "verl==0.9.1",
    "verl.workers.engine_workers": "verl==0.9.1",
    "verl.workers.engine.fsdp": "verl==0.9.1",
    "verl.experimental.agent_loop": "verl==0.9.1",
    "verl.experimental.reward_loop": "verl==0.9.1",
    "verl.workers.rollout.replica": "verl==0.9.1",
    "verl.utils.dataset.rl_dataset": "verl==0.9.1",
    # verl's V1 trainer and TransferQueue (verl declares it only in its `verl-core` extra)
    "transfer_queue": "transferqueue==0.1.11",
    "zmq": "pyzmq==27.3.0",
    "msgspec": "msgspec==0.22.0",
    "psutil": "psutil==7.2.2",
    # what those import
    "transformers": "transformers==5.10.4",
    "ray": "ray==2.60.0",
    "hydra": "hydra-core==1.3.2",
    "omegaconf": "omegaconf==2.3.1",
    "tensordict": "tensordict==0.10.0",
    "datasets": "datasets==5.2.0",
    "pyarrow": "pyarrow==26.0.1",
    "PIL": "pillow==13.0.0",
    "codetiming": "codetiming==1.4.0",
    "cachetools": "cachetools==8.0.1",
    "torchdata": "torchdata==0.11.0",
    "peft": "peft==0.20.0",
    "accelerate": "accelerate==1.15.0",
    "einops": "einops==0.8.2",  # verl.utils.attention_utils' fallback where flash-attn is absent
}

GPU_MODULES: dict[str, str] = {
    "vllm": "verl[vllm]==0.9.1",
    "sglang": "verl[sglang]==0.9.1",
    "flash_attn": "flash-attn==2.8.3",
    "verl.workers.rollout.vllm_rollout.vllm_async_server": "verl[vllm]==0.9.1",
}
