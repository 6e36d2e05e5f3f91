#!/usr/bin/env bash
# CI install for the swift trainer plugin, run from the repository root inside a fresh virtualenv.
# ms-swift 4.6.0 installs with its own dependencies on a CPU; ci-constraints.txt pins every
# package to the versions the tests were run with (torch first: unpinned, pip pulls CUDA wheels).
set -euo pipefail
# uv installs in seconds what pip takes minutes over (CI installs five of these); pip where uv is absent.
install() { if command -v uv >/dev/null 2>&1; then uv pip install "$@"; else pip install "$@"; fi; }
here=plugins/trainers/swift
pip install torch==2.13.0
# msgspec: swift's GRPO trainer imports it, ms-swift 4.6.0 does not declare it (vLLM usually brings it).
install -c "$here/ci-constraints.txt" -e '.[dev]' -e "$here[test]" \
    ms-swift==4.6.0 transformers==5.19.0 trl==0.29.1 peft==0.20.0 datasets==4.8.4 accelerate==1.15.0 msgspec==0.22.0
