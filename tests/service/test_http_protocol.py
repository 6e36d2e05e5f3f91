"""The one-write HTTP protocol leans on uvicorn's private ``HttpToolsProtocol``: the pin, and the fallback.

A different uvicorn cannot be installed here, so the fallback tests break the installed one the
way a future release or another platform could, in a child process: httptools made
unimportable (so the private class cannot load), or a private method the subclass calls
removed. The server must still answer, on uvicorn's own protocol, after one warning.
"""

from __future__ import annotations

import json
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement

from agenthub.service.http_protocol import TESTED_UVICORN, http_protocol

ROOT = Path(__file__).resolve().parents[2]

# Run in a child: break uvicorn as BREAK says, ask for the protocol twice, serve the guess env
# with it and report what happened.
CHILD = """
import json, sys, warnings
{breakage}
from agenthub import ThreadedServer, get_plugin_host
from agenthub.service.http_protocol import http_protocol
import httpx

with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    first, second = http_protocol(), http_protocol()
    with ThreadedServer(get_plugin_host().env("guess")) as server:
        health = httpx.get(server.url + "/healthz").status_code
print(json.dumps({{
    "protocols": [p if isinstance(p, str) else p.__name__ for p in (first, second)],
    "warnings": [f"{{w.category.__name__}}: {{w.message}}" for w in caught if "uvicorn" in str(w.message)],
    "health": health,
}}))
"""


def run_child(breakage: str) -> dict[str, object]:
    code = CHILD.format(breakage=breakage)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def test_the_installed_uvicorn_is_in_the_pinned_range_and_gets_the_one_write_protocol() -> None:
    from importlib.metadata import version

    assert Requirement(TESTED_UVICORN).specifier.contains(version("uvicorn"))
    assert not isinstance(http_protocol(), str)


def test_pyproject_pins_the_range_the_protocol_was_tested_with() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    uvicorn = [Requirement(r) for r in project["dependencies"] if Requirement(r).name == "uvicorn"]
    assert [str(r) for r in uvicorn] == [str(Requirement(TESTED_UVICORN))]
    assert any(spec.operator == "<" for spec in uvicorn[0].specifier)  # an upper bound


@pytest.mark.parametrize(
    ("breakage", "said"),
    [
        # No httptools (PyPy, or a failed build): the private class cannot load; uvicorn picks h11.
        ('sys.modules["httptools"] = None', "ModuleNotFoundError: import of httptools halted"),
        (
            "import uvicorn.protocols.http.httptools_impl as impl\ndel impl.HttpToolsProtocol._should_upgrade",
            "HttpToolsProtocol._should_upgrade is missing",
        ),
    ],
    ids=["private-class-cannot-load", "private-method-gone"],
)
def test_without_the_private_class_the_plain_protocol_serves_after_one_warning(breakage: str, said: str) -> None:
    result = run_child(breakage)
    assert result["protocols"] == ["auto", "auto"]
    assert result["health"] == 200
    warned = result["warnings"]
    assert isinstance(warned, list) and len(warned) == 1
    assert warned[0].startswith(
        "CoalescingUnavailableWarning: agenthub's one-write HTTP protocol cannot run on uvicorn"
    )
    assert said in warned[0] and f"pip install httptools '{TESTED_UVICORN}'" in warned[0]


def test_an_intact_uvicorn_serves_with_the_one_write_protocol_and_no_warning() -> None:
    result = run_child("")
    assert result == {
        "protocols": ["CoalescingHttpToolsProtocol", "CoalescingHttpToolsProtocol"],
        "warnings": [],
        "health": 200,
    }
