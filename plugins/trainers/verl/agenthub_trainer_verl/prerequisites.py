"""What verl's trainer imports for the configuration this plugin writes: module -> the pip requirement.

``agenthub install trainer-verl`` installs them; ``agenthub run trainer=verl`` checks them before launch.
"""

TRAINER_MODULES: dict[str, str] = {
    "verl.trainer.main_ppo": "verl==0.9.1",
    "verl.experimental.agent_loop": "verl==0.9.1",
    "ray": "ray==2.60.0",
    "hydra": "hydra-core==1.3.2",
    "tensordict": "tensordict==0.10.0",
}

GPU_MODULES: dict[str, str] = {
    "vllm": "vllm",
    "sglang": "sglang",
    "flash_attn": "flash-attn",
}
