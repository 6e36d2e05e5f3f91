"""GRPO with TRL's ``GRPOTrainer``, its rollout replaced by the hub executor.

One training step: ``tasks_per_step`` tasks of the env's split, each played
``num_generations`` times (the GRPO group) by the model being trained, with
the turn limit the horizon schedule gives for this step; then one optimizer
step on those episodes, env tokens masked out of the loss.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agenthub import ConfigError, EnvInfo, HorizonSchedule, Task, get_plugin_host
from agenthub.rollout import (
    ChatTemplateDeltas,
    EnvPool,
    FixedHorizon,
    GenerateFn,
    RunStore,
    SamplingParams,
    build_horizon,
)
from agenthub.training import Seating, open_env_pool, recorded_run, seating, split_task_ids

from agenthub_trainer_trl.checkpoints import WINDOW, CheckpointCallback, best_step, write_model_settings
from agenthub_trainer_trl.config import TrlConfig
from agenthub_trainer_trl.generate import ModelGenerator, VLLMGenerator
from agenthub_trainer_trl.heldout import score_test_split, summary_line
from agenthub_trainer_trl.kl import StartKL
from agenthub_trainer_trl.metrics import CURVE_FILE, MetricsCallback, curve_points, env_reward, plot_learning_curve
from agenthub_trainer_trl.rollout import HubRollout, task_prompt
from agenthub_trainer_trl.runs import (
    CHECKPOINTS_DIR,
    FINAL_MODEL_DIR,
    TENSORBOARD_DIR,
    TINY_MODEL_DIR,
    last_checkpoint,
    model_path,
    open_run,
)
from agenthub_trainer_trl.shared_settings import shared_settings
from agenthub_trainer_trl.tied_weights import tied_weights_load_quietly


def horizon_for(config: TrlConfig, info: EnvInfo) -> HorizonSchedule:
    """The configured schedule, or the env's own turn limit at every step."""
    if config.horizon is None:
        return FixedHorizon(turns=info.default_max_turns)
    return build_horizon(config.horizon, get_plugin_host().horizon)


def stop_token_ids(tokenizer: Any, model: Any) -> list[int]:
    """Where a model turn ends: the tokenizer's eos, the model's eos ids, and the template's end-of-turn token."""
    ids: set[int] = set()
    if tokenizer.eos_token_id is not None:
        ids.add(int(tokenizer.eos_token_id))
    configured = getattr(model.generation_config, "eos_token_id", None)
    if configured is not None:
        ids.update(int(i) for i in (configured if isinstance(configured, list) else [configured]))
    end_of_turn = ChatTemplateDeltas(tokenizer).assistant_close[0]
    if end_of_turn in set(tokenizer.all_special_ids):  # a plain token (e.g. a newline) would cut turns short
        ids.add(int(end_of_turn))
    return sorted(ids)


async def open_pool(config: TrlConfig) -> EnvPool:
    """The env servers: ``url=``, local processes, or (``backend=ray``) servers on a Ray cluster's nodes."""
    return await open_env_pool(config)


def grpo_settings(config: TrlConfig, output_dir: Path) -> dict[str, Any]:
    """``GRPOConfig``'s arguments for ``config``."""
    from trl import GRPOConfig

    return {
        "output_dir": str(output_dir),
        "max_steps": config.steps,
        "per_device_train_batch_size": config.episodes_per_step,
        "gradient_accumulation_steps": 1,
        "num_generations": config.num_generations,
        "learning_rate": config.learning_rate,
        # Constant: a linear decay to 0 was tried over 2 x 20 seeds and ended fewer runs at >= 0.95 (late
        # steps too small to sharpen a slow run); benchmarks/results/lr_schedule_sweeps/README.md.
        "lr_scheduler_type": "constant",
        "beta": config.beta,
        "scale_rewards": config.scale_rewards,
        "entropy_coef": config.entropy_coef,
        "temperature": config.temperature,
        "top_p": config.top_p,
        "top_k": 0,
        "max_completion_length": config.turn_tokens,
        **shared_settings(config, GRPOConfig),
        "use_vllm": config.use_vllm,
        "vllm_mode": config.vllm_mode,
        "disable_tqdm": True,
        **config.trl,
    }


def grpo_args(config: TrlConfig, output_dir: Path) -> Any:
    from trl import GRPOConfig

    try:
        return GRPOConfig(**grpo_settings(config, output_dir))
    except (TypeError, ValueError) as exc:
        raise ConfigError(f"TRL rejected the GRPO settings: {exc}; check the trl.* keys") from None


def build_trainer(
    config: TrlConfig, store: RunStore, runner: asyncio.Runner, pool: EnvPool, *, key_suffix: str = ""
) -> tuple[Any, HubRollout]:
    """A ``GRPOTrainer`` whose rollout plays the env's episodes through ``pool``, and that rollout."""
    from datasets import Dataset
    from torch.utils.tensorboard import SummaryWriter
    from transformers import AutoModelForCausalLM, AutoTokenizer, PrinterCallback
    from transformers.integrations import TensorBoardCallback
    from trl import GRPOTrainer

    path = model_path(config, store.path)
    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModelForCausalLM.from_pretrained(path)
    info = runner.run(pool.info())
    if config.split not in info.splits:
        raise ConfigError(f"env {info.name!r} has no split {config.split!r}; it has: {', '.join(info.splits)}")
    ids = split_task_ids(runner.run(pool.endpoints[0].client.tasks(config.split)))
    seated = seats_of(config, info)
    dataset = Dataset.from_dict(
        {"prompt": [task_prompt(Task(env=info.name, task_id=i, split=config.split)) for i in ids]}
    )
    stops = stop_token_ids(tokenizer, model)
    pad = int(tokenizer.pad_token_id if tokenizer.pad_token_id is not None else stops[0])

    def make_generate(trainer: Any) -> GenerateFn:
        if config.use_vllm:
            return VLLMGenerator(trainer, stop_token_ids=stops)
        return ModelGenerator(
            lambda: trainer.accelerator.unwrap_model(trainer.model), pad_token_id=pad, stop_token_ids=stops
        )

    rollout = HubRollout(
        runner=runner,
        pool=pool,
        tokenizer=tokenizer,
        make_generate=make_generate,
        horizon=horizon_for(config, info),
        sampling=SamplingParams(temperature=config.temperature, top_p=config.top_p, max_tokens=config.turn_tokens),
        max_context=config.max_context,
        system_prompt=None,  # the env's instructions, as served in /v1/info
        store=store,
        concurrency=config.concurrency,
        max_attempts=config.max_attempts,
        episode_timeout_s=config.episode_timeout_s,
        key_suffix=key_suffix,
        provenance={
            "trainer": "trl",
            "run_id": store.run_id,
            "model": config.model or TINY_MODEL_DIR,
            **seated.provenance(),
        },
        opponents=seated.opponents,
        seats=seated.seats,
    )
    trainer = GRPOTrainer(
        model=model,
        reward_funcs=[env_reward],
        args=grpo_args(config, store.path / CHECKPOINTS_DIR),
        train_dataset=dataset,
        processing_class=tokenizer,
        rollout_func=rollout,
        callbacks=[
            MetricsCallback(store),
            CheckpointCallback(config, store),
            TensorBoardCallback(SummaryWriter(log_dir=str(store.path / TENSORBOARD_DIR))),
        ],
    )
    trainer.remove_callback(PrinterCallback)  # MetricsCallback prints a shorter line
    tied_weights_load_quietly(trainer)
    if config.beta == 0 and config.kl_metric:
        start = AutoModelForCausalLM.from_pretrained(path).to(trainer.accelerator.device)
        rollout.start_kl = StartKL(start, temperature=config.temperature, pad_token_id=pad)
    return trainer, rollout


def seats_of(config: TrlConfig, info: EnvInfo, *, make_opponent: bool = True) -> Seating:
    """Who plays which seat of a multi-player env (``seat=``, ``opponent=``); GRPO trains one seat."""
    seated = seating(config, info, make_opponent=make_opponent)
    seated.require_one_trajectory("TRL's GRPO")
    return seated


TrainerHook = Callable[[Any], None]


def run_grpo(config: TrlConfig, *, on_trainer: TrainerHook | None = None) -> int:
    """Train; ``on_trainer(trainer)`` may inspect or extend the ``GRPOTrainer`` before it starts."""
    os.environ.setdefault("TRL_EXPERIMENTAL_SILENCE", "1")  # rollout_func is experimental in TRL 1.x; we know
    if config.url is None:
        # an unknown env, or seat=/opponent= that do not fit it, fail here, with suggestions, before a run is made
        seats_of(config, get_plugin_host().env(config.env).info(), make_opponent=False)
    store, key_suffix = open_run(config)
    print(f"run directory: {store.path}", file=sys.stderr, flush=True)
    started = time.monotonic()
    rollout: HubRollout | None = None
    checkpoint = last_checkpoint(store.path) if config.resume else None
    summary: dict[str, Any] = {}

    def sum_up() -> dict[str, Any]:  # also when the run fails or is interrupted: what it did so far
        summary.update(summarize(store, rollout_history(rollout), time.monotonic() - started))
        return summary

    with recorded_run(store, sum_up), asyncio.Runner() as runner:
        pool = runner.run(open_pool(config))
        runner.run(pool.__aenter__())
        try:
            trainer, rollout = build_trainer(config, store, runner, pool, key_suffix=key_suffix)
            if on_trainer is not None:
                on_trainer(trainer)
            trainer.train(resume_from_checkpoint=checkpoint)
            final = store.path / FINAL_MODEL_DIR
            trainer.save_model(str(final))
            trainer.processing_class.save_pretrained(str(final))
            write_model_settings(final, config, run_dir=store.path, step=int(trainer.state.global_step))
            summary["checkpoints"] = kept_models(trainer.state, store.path)
            if config.test_episodes:
                print(f"scoring the final model on {config.test_episodes} tasks of the test split", file=sys.stderr)
                executor = rollout.executor_for(trainer)
                summary["test"] = score_test_split(runner, pool, executor, config.test_episodes)
        finally:
            runner.run(pool.close())
    report(store, summary, resumed=checkpoint is not None)
    return 0


def kept_models(state: Any, run_dir: Path) -> dict[str, Any]:
    """The summary's ``checkpoints``: the last model and the best checkpoint (by the mean success of its
    last steps), as paths in the run directory."""
    kept: dict[str, Any] = {"last": {"path": FINAL_MODEL_DIR, "step": int(state.global_step)}}
    if state.best_model_checkpoint and state.best_global_step:
        best = Path(state.best_model_checkpoint)
        path = str(best.relative_to(run_dir)) if best.is_relative_to(run_dir) else str(best)
        kept["best"] = {"path": path, "step": int(state.best_global_step), "success": round(state.best_metric, 4)}
    return kept


def rollout_history(rollout: HubRollout | None) -> list[dict[str, Any]]:
    if rollout is None:
        return []
    return [
        {"step": s.step, "success": s.success_rate, "turns": s.mean_turns, "max_turns": s.max_turns}
        for s in rollout.history
    ]


def summarize(store: RunStore, history: list[dict[str, Any]], elapsed_s: float) -> dict[str, Any]:
    """Summary for run.json; draws the learning curve when there is one."""
    records = store.metrics()
    summary: dict[str, Any] = {"elapsed_s": round(elapsed_s, 1), "rollouts": len(history)}
    if history:
        summary["first_step"] = history[0]
        summary["last_step"] = history[-1]
    steps, successes = curve_points(records, "success")  # the whole run, a resumed one's earlier steps too
    if steps:
        recent = successes[-WINDOW:]
        summary["last_steps_success"] = {"steps": steps[-len(recent) :], "mean": round(sum(recent) / len(recent), 4)}
        best = best_step(list(zip(steps, successes, strict=True)))
        assert best is not None
        summary["best_step"] = {"step": best[0], "success": round(best[1], 4)}
    if any("reward" in r for r in records):
        plot_learning_curve(records, store.path / CURVE_FILE, title=f"trl GRPO · run {store.path.name}")
        summary["learning_curve"] = CURVE_FILE
    return summary


def report(store: RunStore, summary: dict[str, Any], *, resumed: bool) -> None:
    first, last = summary.get("first_step"), summary.get("last_step")
    lines = [f"run saved in {store.path}"]
    if first and last:
        what = "since resuming" if resumed else "over the run"
        lines.append(
            f"success {_rate(first['success'])} at step {first['step']} -> {_rate(last['success'])} at step "
            f"{last['step']} ({what}; {summary['elapsed_s']:.0f}s)"
        )
    if recent := summary.get("last_steps_success"):
        best = summary["best_step"]
        first_of, last_of = recent["steps"][0], recent["steps"][-1]
        lines.append(
            f"success {_rate(recent['mean'])} over the last {len(recent['steps'])} steps ({first_of}-{last_of}); "
            f"best step {best['step']} ({_rate(best['success'])})"
        )
    if "test" in summary:
        lines.append(summary_line(summary["test"]))
    kept = summary.get("checkpoints", {})
    if best_kept := kept.get("best"):
        lines.append(
            f"best checkpoint: {store.path / best_kept['path']} (success {_rate(best_kept['success'])} over the "
            f"{WINDOW} steps up to step {best_kept['step']})"
        )
    if "learning_curve" in summary:
        lines.append(f"learning curve: {store.path / CURVE_FILE}")
    final = store.path / FINAL_MODEL_DIR
    lines.append(f"last model: {final} (step {kept['last']['step']})" if "last" in kept else f"model: {final}")
    lines.append(f"continue: agenthub run --resume {store.path} steps=N")
    lines.append(f"evaluate: agenthub eval env={_env(store)} split=test agent=hf agent.model={final} (plugin hf)")
    print("\n".join(lines))


def _env(store: RunStore) -> str:
    return str(store.config().get("env", "NAME"))


def _rate(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.2f}"
