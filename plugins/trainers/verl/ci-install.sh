#!/usr/bin/env bash
# The verl plugin's test environment, from the repository root, in a fresh virtualenv.
# verl's full install pulls its GPU training stack (vllm/sglang, flash-attn, wandb, peft, ...);
# the tests need only what verl.experimental.agent_loop and verl's hydra config import,
# so verl comes in with --no-deps plus exactly those modules, pinned.
set -euo pipefail
# uv installs in seconds what pip takes minutes over (CI installs five of these); pip where uv is absent.
install() { if command -v uv >/dev/null 2>&1; then uv pip install "$@"; else pip install "$@"; fi; }

pip install torch==2.13.0  # the CPU build; an unpinned torch pulls CUDA wheels
install -e '.[dev]' \
    transformers==5.10.4 \
    ray==2.60.0 \
    hydra-core==1.3.2 \
    omegaconf==2.3.1 \
    tensordict==0.10.0 \
    datasets==5.2.0 \
    pyarrow==26.0.1 \
    pillow==13.0.0 \
    codetiming==1.4.0 \
    cachetools==8.0.1
install --no-deps verl==0.9.1
install --no-deps -e plugins/trainers/verl
