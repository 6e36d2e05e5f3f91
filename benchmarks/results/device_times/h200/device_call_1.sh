#!/bin/bash
# One device call: the README main job and the maze recipe on the GPU (timed), and two LR-schedule
# sweeps of benchmarks/trl_seeds.py on the device's CPU cores (CUDA hidden) for the default's reliability.
set -u
T0=$(date +%s)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site PATH=/tmp/site/bin:$PATH PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
W=/tmp/work; mkdir -p $W
python3 -c "import agenthub.cli, agenthub_trainer_trl.trainer, agenthub_trainer_trl.grpo, agenthub_agent_hf.agent, agenthub_env_maze, trl, datasets, fastapi, uvicorn" || exit 3
echo "install $(( $(date +%s)-T0 )) s"; nproc; nvidia-smi --query-gpu=name --format=csv,noheader
python3 -c "import torch,transformers,trl;print(torch.__version__,transformers.__version__,trl.__version__,torch.cuda.is_available())"
(
  s=$(date +%s); timeout 240 python3 -m agenthub run trainer=trl env=trail runs_dir=$W/gpu_main > $W/gpu_main.log 2>&1; echo "rc=$? main_wall=$(( $(date +%s)-s ))" >> $W/gpu_main.log
  s=$(date +%s); timeout $(( 520 - ($(date +%s)-T0) )) python3 examples/agentgym_recipe/run.py seed=0 runs_dir=$W/gpu_recipe > $W/gpu_recipe.log 2>&1; echo "rc=$? recipe_wall=$(( $(date +%s)-s ))" >> $W/gpu_recipe.log
) &
G=$!
for sched in cosine linear; do
  CUDA_VISIBLE_DEVICES= timeout 480 python3 benchmarks/trl_seeds.py --seeds 0 1 2 3 4 5 6 7 8 9 10 11 --parallel 6 --threads 1 --out $W/sweep_$sched trl.lr_scheduler_type=$sched > $W/sweep_$sched.log 2>&1 &
done
wait $G; wait
echo "all done at $(( $(date +%s)-T0 )) s"
cd $W && find . -name "*.json" -size -2M | grep -v checkpoint | grep -v tiny-model | grep -v "/model/" | tar czf $OUT/results.tgz -T - *.log
for f in $W/*.log; do echo "== $f"; tail -n 6 "$f"; done
