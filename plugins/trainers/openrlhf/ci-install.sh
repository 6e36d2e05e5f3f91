#!/usr/bin/env bash
# CI install of agenthub-trainer-openrlhf, run from the repository root inside a fresh virtualenv.
#
# OpenRLHF's full install needs CUDA (vllm, deepspeed, flash-attn), so openrlhf goes in with --no-deps,
# plus exactly what its agent plug-in point (openrlhf.utils.agent: aiohttp; openrlhf.utils: torch,
# transformers, sympy, pylatexenc) and the rollout code the tests run (openrlhf.trainer.ppo_utils
# .samples_generator: ray, tqdm; openrlhf.datasets: datasets) import. vllm itself is replaced in the
# tests by an import shim (tests/shims/vllm) that only provides the names those modules import.
set -euo pipefail
# uv installs in seconds what pip takes minutes over (CI installs five of these); pip where uv is absent.
# --compile-bytecode as pip does: compiled on import instead, openrlhf.utils.math_utils' "\%" raises a
# DeprecationWarning that the tests' filterwarnings=error turns into an error.
install() { if command -v uv >/dev/null 2>&1; then uv pip install --compile-bytecode "$@"; else pip install "$@"; fi; }

pip install torch==2.13.0  # the CPU build; unpinned, pip pulls CUDA wheels
# One resolve, so that core's test extra (ray>=2.40) and OpenRLHF's pins (ray 2.55.0, transformers 5.15.0) agree.
install -e '.[dev]' \
    transformers==5.15.0 ray==2.55.0 aiohttp==3.14.5 sympy==1.14.0 pylatexenc==2.11 datasets==5.2.0 tqdm==4.70.1
install --no-deps openrlhf==0.11.2
install --no-deps -e plugins/trainers/openrlhf
