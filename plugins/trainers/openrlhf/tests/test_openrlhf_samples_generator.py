"""OpenRLHF's own rollout (``SamplesGenerator.generate_samples``) on Ray, with the agent in the engine actors.

Everything is real except generation: OpenRLHF dispatches prompts to its
engine actors with ``generate_responses.remote``, turns the answers into
``Experience`` objects and applies dynamic filtering. The engine actor is
:class:`StandInRolloutActor` (OpenRLHF's ``RolloutRayActor`` needs vLLM and a
GPU); like the real one it runs ``n_samples_per_prompt`` ``execute`` calls of
the agent it loaded from ``--train.agent_func_path``, concurrently.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import sys
from argparse import Namespace
from collections import Counter, defaultdict
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from agenthub import Task
from agenthub.rollout import RunStore

from agenthub_trainer_openrlhf.launch import agent_func_path, prompt_rows
from agenthub_trainer_openrlhf.settings import SETTINGS_ENV, AgentSettings

ray = pytest.importorskip("ray")

N = 2  # samples per prompt: one group each
MAX_LEN = 200


class StandInRolloutActor:
    """Stands in for OpenRLHF's vLLM engine actor (``RolloutRayActor``), which needs vLLM and a GPU.

    It loads the agent module by path with the settings in its environment,
    as the real actor does, and answers ``generate_responses`` the same way:
    ``num_samples`` concurrent ``execute`` calls with itself as ``llm_engine``.
    Its ``generate`` is the tests' stand-in engine; for tasks in
    ``failing_tasks`` the engine's second call (one sample of the group) raises.
    """

    def __init__(self, settings_json: str, engine_class: Any, failing_tasks: list[int]) -> None:
        os.environ[SETTINGS_ENV] = settings_json
        spec = importlib.util.spec_from_file_location("agent_module", agent_func_path())
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        self.executor = module.AgentExecutor()
        self.engine_class = engine_class
        self.failing_tasks = set(failing_tasks)

    async def generate_responses(
        self,
        prompt: str,
        label: str,
        sampling_params: Any,
        max_length: int,
        hf_tokenizer: Any,
        num_samples: int = 1,
        images: Any = None,
    ) -> list[dict[str, Any]]:
        task_id = Task.model_validate_json(prompt).task_id
        fail = [1] if task_id in self.failing_tasks else []
        engine = self.engine_class(hf_tokenizer, seed=task_id, fail_calls=fail)
        calls = [
            self.executor.execute(
                prompt=prompt,
                label=label,
                sampling_params=sampling_params,
                max_length=max_length,
                hf_tokenizer=hf_tokenizer,
                llm_engine=engine,
                images=images,
            )
            for _ in range(num_samples)
        ]
        return list(await asyncio.gather(*calls))

    def get_num_unfinished_requests(self) -> int:
        return 0


@pytest.fixture(scope="module")
def ray_session() -> Iterator[Any]:
    shims = str(Path(__file__).parent / "shims")  # the vLLM import shim, for the pickled SamplingParams
    os.environ.setdefault("RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO", "0")  # Ray 2.55 warns without it (no GPUs here)
    ray.init(
        address="local",  # a new Ray of its own: never a cluster another job on this machine started
        num_cpus=2,
        include_dashboard=False,
        log_to_driver=False,
        runtime_env={"env_vars": {"PYTHONPATH": os.pathsep.join([shims, *sys.path])}},
    )
    yield ray
    ray.shutdown()


def openrlhf_args(**flags: Any) -> Any:
    """train_ppo_ray's args as OpenRLHF shapes them (``hierarchize`` of its dotted flag names)."""
    from openrlhf.utils.config import hierarchize

    defaults = {
        "rollout.batch_size": 3,
        "rollout.n_samples_per_prompt": N,
        "rollout.vllm_generate_batch_size": None,
        "vllm.enable_sleep": False,
        "algo.dynamic_filtering_enable": True,
        "algo.dynamic_filtering_range": (-1e9, 1e9),  # what `agenthub run` passes by default
        "algo.advantage.is_correction_level": "token",  # vLLM logprobs requested
    }
    return hierarchize(Namespace(**{**defaults, **flags}))


def test_openrlhf_drops_every_group_with_an_infra_failure_and_trains_the_rest(
    tmp_path: Path, ray_session: Any, tokenizer: Any, trail_url: str, engine_class: Any
) -> None:
    from openrlhf.trainer.ppo_utils.samples_generator import SamplesGenerator

    for module in {engine_class.__module__, __name__}:  # test modules are not importable in Ray workers
        ray.cloudpickle.register_pickle_by_value(sys.modules[module])
    settings = AgentSettings(env="trail", urls=[trail_url], max_tokens=4, store=str(tmp_path))
    actor = ray.remote(StandInRolloutActor).remote(settings.model_dump_json(), engine_class, [1])
    # task "nowhere": the env refuses it at reset (env_error, both samples; trail's ids are integers, and a
    # negative one is refused before it reaches the env); task 1: the engine fails once (agent_error)
    rows = prompt_rows("trail", "train", [0, "nowhere", 1, 2, 3], None)
    batches = [(["default"], [row["input"]], [""], [None]) for row in rows]  # PromptDataset.collate_fn's shape
    generator = SamplesGenerator(SimpleNamespace(args=openrlhf_args()), batches, None, tokenizer, [actor])

    experiences, pass_rate, consumed, _ = generator.generate_samples(
        max_len=MAX_LEN, max_new_tokens=64, temperature=1.0, top_p=1.0, n_samples_per_prompt=N
    )

    episodes = list(RunStore(tmp_path).trajectories())
    by_task: dict[Any, list[Any]] = defaultdict(list)
    for episode in episodes:
        by_task[episode.task.task_id].append(episode)
    assert {t: len(g) for t, g in by_task.items()} == {0: N, "nowhere": N, 1: N, 2: N, 3: N}
    assert {e.outcome.value for e in by_task["nowhere"]} == {"env_error"}
    assert Counter(e.outcome.value for e in by_task[1])["agent_error"] == 1

    accepted = Counter(Task.model_validate_json(e.prompts[0]).task_id for e in experiences)
    assert accepted == {0: N, 2: N, 3: N}  # the two groups with a failure were redrawn from the prompts
    assert consumed == 5 and pass_rate is not None  # 3 of 5 groups passed the filter
    # Samples of one group may sample the same tokens (with other logprobs): match on everything.
    candidates: dict[tuple[int, ...], list[Any]] = defaultdict(list)
    for episode in episodes:
        if episode.trainable and episode.tokens is not None:
            candidates[tuple(episode.tokens.prompt_ids + episode.tokens.response_ids)].append(episode)
    for experience in experiences:
        same_tokens = candidates[tuple(experience.sequences[0].tolist())]  # exactly an episode's tokens
        assert same_tokens

        def matches(episode: Any, experience: Any = experience) -> bool:
            prompt = [0] * len(episode.tokens.prompt_ids)
            mask = (prompt + episode.tokens.response_mask)[1:]
            logprobs = ([0.0] * len(prompt) + episode.tokens.logprobs)[1:]
            return bool(
                experience.action_mask[0].tolist() == mask
                and experience.rollout_log_probs[0].tolist() == pytest.approx(logprobs)
                and experience.rewards.tolist() == pytest.approx([episode.reward])
            )

        matching = [e for e in same_tokens if matches(e)]
        assert matching, "no stored episode has this experience's mask, logprobs and reward"
        same_tokens.remove(matching[0])  # each episode is one experience
        assert experience.info["agenthub_infra_failure"].tolist() == [0.0]
