#!/usr/bin/env bash
# CI install for agenthub-trainer-areal, run from the repository root inside a fresh virtualenv.
#
# AReaL's full install needs CUDA (SGLang/vLLM, flash-attn, megatron) and pins torch<2.11, so it is
# installed with --no-deps, plus exactly the modules that its workflow API, request/response types,
# config parser and GroupedRolloutWorkflow import (`import areal` loads areal.infra: hence the list).
# The test tools are named here rather than agenthub[dev], which also brings Ray and pyarrow.
set -euo pipefail
# uv installs in seconds what pip takes minutes over (CI installs five of these); pip where uv is absent.
install() { if command -v uv >/dev/null 2>&1; then uv pip install "$@"; else pip install "$@"; fi; }

pip install torch==2.13.0   # the CPU build; an unpinned torch pulls CUDA wheels
install -e . \
    transformers==5.3.0 tokenizers==0.22.2 jinja2==3.1.6 \
    pytest==9.2.0 pytest-timeout==2.4.0 psutil==7.2.2 mypy==2.4.1 types-PyYAML==6.0.12.20261113 \
    aiofiles==25.1.0 aiohttp==3.14.5 colorlog==6.12.0 einops==0.8.2 flask==3.1.3 \
    hydra-core==1.4.0.dev1 omegaconf==2.4.0.dev2 lark==1.3.1 numba==0.68.1 openai==3.54.0 \
    pillow==13.0.0 ray==2.60.0 tenacity==9.2.1 torchdata==0.11.0
# --no-deps: areal's own requirements (CUDA torch<2.11, sglang, ...) must not be resolved here.
install --no-deps areal==1.0.4 -e plugins/trainers/areal
