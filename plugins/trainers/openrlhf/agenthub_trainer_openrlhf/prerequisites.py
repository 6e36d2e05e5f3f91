"""What OpenRLHF imports for this plugin: importable module -> the pip requirement that provides it.

Plain data, read by the launch checks and by ``tests/test_openrlhf_prerequisites.py``. ``TRAINER_MODULES`` is
what the ``cpu`` variant of ``install.toml`` installs and imports on a CPU: the agent plug-in point
(``openrlhf.utils.agent``, loaded by each vLLM actor) and the rollout code around it.
``openrlhf.cli.train_ppo_ray`` itself imports vLLM, DeepSpeed and flash-attn at module level
(``openrlhf.models.ring_attn_utils``), so it and they are ``GPU_MODULES``: the ``gpu`` variant's.
"""

from __future__ import annotations

TRAINER_MODULES: dict[str, str] = {
    "openrlhf": "openrlhf==0.11.2",
    "openrlhf.utils.agent": "openrlhf==0.11.2",
    "openrlhf.utils": "openrlhf==0.11.2",
    "openrlhf.datasets": "openrlhf==0.11.2",
    "transformers": "transformers==5.15.0",
    "ray": "ray==2.55.0",
    "aiohttp": "aiohttp==3.14.5",
    "sympy": "sympy==1.14.0",
    "pylatexenc": "pylatexenc==2.11",
    "datasets": "datasets==5.2.0",
    "tqdm": "tqdm==4.70.1",
}

GPU_MODULES: dict[str, str] = {
    "vllm": "vllm==0.29.0",
    "deepspeed": "deepspeed==0.19.6",
    "flash_attn": "flash-attn==2.8.3",
    "peft": "openrlhf[vllm]==0.11.2",
    "torchdata": "openrlhf[vllm]==0.11.2",
    "openrlhf.cli.train_ppo_ray": "openrlhf[vllm]==0.11.2",
}
