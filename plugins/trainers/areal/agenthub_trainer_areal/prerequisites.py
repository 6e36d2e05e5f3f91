"""What AReaL imports for this plugin: importable module -> the pip requirement that provides it.

Plain data, read by the launch checks and ``tests/test_areal_prerequisites.py``. ``TRAINER_MODULES`` is
what the ``cpu`` variant of ``install.toml`` installs: the modules the plugin's workflow and entry
script import (``areal.api.*``; ``import areal`` loads ``areal.infra``). The run's trainer,
``areal.PPOTrainer`` (imported by the entry script when training starts), also imports the dataset and
experiment-tracking packages below, and its engines SGLang and flash-attn: ``GPU_MODULES``, what the
``gpu`` variant (``areal[cuda]``) brings where training runs.
"""

from __future__ import annotations

TRAINER_MODULES: dict[str, str] = {
    "areal": "areal==1.0.4",
    "areal.api.workflow_api": "areal==1.0.4",
    "areal.api.io_struct": "areal==1.0.4",
    "areal.api.cli_args": "areal==1.0.4",
    "areal.utils.hf_utils": "areal==1.0.4",
    "areal.infra": "areal==1.0.4",
    "transformers": "transformers==5.3.0",
    "tokenizers": "tokenizers==0.22.2",
    "hydra": "hydra-core==1.4.0.dev1",
    "omegaconf": "omegaconf==2.4.0.dev2",
    "ray": "ray==2.60.0",
    "aiofiles": "aiofiles==25.1.0",
    "aiohttp": "aiohttp==3.14.5",
    "colorlog": "colorlog==6.12.0",
    "einops": "einops==0.8.2",
    "flask": "flask==3.1.3",
    "lark": "lark==1.3.1",
    "numba": "numba==0.68.1",
    "openai": "openai==3.54.0",
    "PIL": "pillow==13.0.0",
    "tenacity": "tenacity==9.2.1",
    "torchdata": "torchdata==0.11.0",
}

GPU_MODULES: dict[str, str] = {
    "sglang": "areal[cuda]==1.0.4",
    "flash_attn": "flash-attn==2.8.3",
    # areal.PPOTrainer's module-level imports beyond the workflow API (found by importing it on a CPU)
    "datasets": "areal[cuda]==1.0.4",
    "wandb": "areal[cuda]==1.0.4",
    "swanlab": "areal[cuda]==1.0.4",
    "trackio": "areal[cuda]==1.0.4",
    "tensorboardX": "areal[cuda]==1.0.4",
    "tabulate": "areal[cuda]==1.0.4",
    "pybase64": "areal[cuda]==1.0.4",
    "areal.trainer.rl_trainer": "areal[cuda]==1.0.4",
}
