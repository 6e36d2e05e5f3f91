"""``agenthub run --resume RUN_DIR`` with swift: what may change (checked by :mod:`agenthub.training.resumption`),
and the checkpoint swift continues from."""

from __future__ import annotations

from pathlib import Path

from agenthub import ConfigError

from agenthub_trainer_swift.launch import SWIFT_OUTPUT_DIR

RESUMABLE_CHANGES = frozenset({"steps", "resume", "backend", "address"})
"""Settings a resumed run may change; any other difference would make it a different run. ``backend`` and
``address`` only say where the env servers run: a resumed run starts its own and writes their URLs anew."""


def last_checkpoint(run_dir: Path) -> Path:
    """swift's latest ``checkpoint-N`` in the run's output directory, which ``--resume_from_checkpoint`` loads."""
    from transformers.trainer_utils import get_last_checkpoint

    output = run_dir / SWIFT_OUTPUT_DIR
    found = get_last_checkpoint(str(output)) if output.is_dir() else None
    if found is None:
        raise ConfigError(
            f"cannot resume {run_dir}: swift saved no checkpoint in {output} (on a CPU the plugin passes "
            "--save_strategy no; to make a run resumable pass swift.save_strategy=steps swift.save_steps=N). "
            "Start a new run instead"
        )
    return Path(found).absolute()
