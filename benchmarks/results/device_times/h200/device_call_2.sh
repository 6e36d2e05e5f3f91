#!/bin/bash
# Second device call: the maze recipe on the GPU with GRPO in fp32 (bf16 autocast crashed sampling at step 16
# in the first call), and a warmup-stable-decay sweep of benchmarks/trl_seeds.py on the CPU cores.
set -u
T0=$(date +%s)
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site PATH=/tmp/site/bin:$PATH PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1
W=/tmp/work; mkdir -p $W
echo "install $(( $(date +%s)-T0 )) s"
( s=$(date +%s); timeout 265 python3 examples/agentgym_recipe/run.py seed=0 runs_dir=$W/gpu_recipe grpo.trl.bf16=false > $W/gpu_recipe.log 2>&1; echo "rc=$? recipe_wall=$(( $(date +%s)-s ))" >> $W/gpu_recipe.log ) &
CUDA_VISIBLE_DEVICES= timeout 265 python3 benchmarks/trl_seeds.py --seeds 0 1 2 3 4 5 6 7 8 9 10 11 --parallel 12 --threads 1 --out $W/sweep_wsd trl.lr_scheduler_type=warmup_stable_decay trl.lr_scheduler_kwargs.num_decay_steps=24 trl.lr_scheduler_kwargs.decay_type=linear > $W/sweep_wsd.log 2>&1 &
wait
echo "all done at $(( $(date +%s)-T0 )) s"
cd $W && find . -name "*.json" -size -2M | grep -v checkpoint | grep -v tiny-model | grep -v "/model/" | tar czf $OUT/results.tgz -T - *.log
for f in $W/*.log; do echo "== $f"; tail -n 4 "$f"; done
