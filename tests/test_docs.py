"""Documentation keeps up with the code: every hook and public name."""

from __future__ import annotations

import inspect
import os
import re
from pathlib import Path

import agenthub
from agenthub import hookspecs

ROOT = Path(__file__).resolve().parents[1]


def hook_names() -> list[str]:
    return [name for name, fn in inspect.getmembers(hookspecs, inspect.isfunction) if name.startswith("agenthub_")]


def test_every_hook_is_documented_in_contributing() -> None:
    documented = set(re.findall(r"^### `(agenthub_\w+)\(register\)`", (ROOT / "CONTRIBUTING.md").read_text(), re.M))
    assert set(hook_names()) == documented


def test_every_hook_has_a_test() -> None:
    tests = "\n".join(p.read_text() for p in (ROOT / "tests").rglob("test_*.py"))
    for name in hook_names():
        assert f"def {name}(" in tests, f"no test plugin implements {name}"


def test_public_names_match_all() -> None:
    for name in agenthub.__all__:
        assert getattr(agenthub, name) is not None, name
    assert len(set(agenthub.__all__)) == len(agenthub.__all__)


def test_readme_commands_are_the_ones_ci_runs() -> None:
    readme = (ROOT / "README.md").read_text()
    ci = (ROOT / ".ci" / "run").read_text()
    install = "pip install torch==2.13.0 uv && uv pip install -r requirements-dev.txt"
    test_command = f"{install} && python -m pytest -n 4 --dist loadscope"
    assert test_command in readme and test_command in ci
    install = "pip install torch==2.13.0 -e . -e plugins/trainers/trl -e plugins/agents/hf"
    main_job = f"{install} && agenthub run trainer=trl env=trail"
    assert main_job in readme


# ---- links: every document stands alone in a clone of this repository ---------------------------

_SKIPPED_DIRS = {"node_modules", "build", "dist", "runs", "site-packages"}
_FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
_INLINE_CODE = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"!?\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)|^\s*\[[^\]\n]+\]:\s*<?(\S+?)>?\s*$", re.M)
# Team notes kept beside the repository, which a reader of a clone does not have.
_OUTSIDE_NOTES = re.compile(r"\.\./shared\b|\bDESIGN\.md\b|\bSTYLE\.md\b")


def markdown_files() -> list[Path]:
    """The repository's documents: README, CONTRIBUTING, CHANGELOG, docs/, every plugin's and example's README."""
    files = []
    for folder, dirs, names in os.walk(ROOT):
        # Pruned while walking: virtualenvs and caches inside the checkout hold hundreds of thousands of files.
        dirs[:] = sorted(d for d in dirs if not (d.startswith(".") or d in _SKIPPED_DIRS or d.endswith(".egg-info")))
        files += [Path(folder) / name for name in names if name.endswith(".md")]
    return sorted(files)


def _prose(text: str) -> str:
    """The text with code blocks and inline code removed: links there are examples, not links."""
    return _INLINE_CODE.sub("", _FENCE.sub("", text))


def heading_anchors(text: str) -> set[str]:
    """The anchors GitHub gives a document's headings (lower case, punctuation dropped, spaces to hyphens)."""
    anchors: set[str] = set()
    for heading in re.findall(r"^#{1,6}\s+(.+?)\s*#*\s*$", _FENCE.sub("", text), re.M):
        slug = re.sub(r"[^\w\- ]", "", heading.replace("`", "").strip().lower()).replace(" ", "-")
        anchor, n = slug, 0
        while anchor in anchors:
            n += 1
            anchor = f"{slug}-{n}"
        anchors.add(anchor)
    return anchors


def broken_links(path: Path) -> list[str]:
    """Each link of ``path`` that does not resolve to a file (and heading) inside the repository."""
    text = path.read_text()
    broken = []
    for match in _LINK.finditer(_prose(text)):
        target = match.group(1) or match.group(2)
        if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # http(s), mailto: not this test's business
            continue
        file_part, _, anchor = target.partition("#")
        resolved = (ROOT / file_part.lstrip("/")) if file_part.startswith("/") else (path.parent / file_part)
        resolved = resolved.resolve()
        where = f"{path.relative_to(ROOT)}: ({target})"
        if not resolved.is_relative_to(ROOT):
            broken.append(f"{where} points outside the repository")
        elif not resolved.exists():
            broken.append(f"{where} does not exist")
        elif anchor and resolved.suffix == ".md" and anchor not in heading_anchors(resolved.read_text()):
            broken.append(f"{where} names no heading of {resolved.relative_to(ROOT)}")
    return broken


def test_the_link_checker_finds_what_it_should(tmp_path: Path) -> None:
    text = "[ok](docs/protocol.md#errors) [gone](docs/nowhere.md) [out](../outside.md) ![x](README.md#no-such)\n"
    text += (
        "`[code](skipped.md)` [web](https://example.org/x.md)\n```\n[fenced](skipped.md)\n```\n[ref]: CHANGELOG.md\n"
    )
    probe = ROOT / f".link-probe-{tmp_path.name}.md"
    probe.write_text(text)
    try:
        found = broken_links(probe)
    finally:
        probe.unlink()
    assert [entry.split(": ", 1)[1] for entry in found] == [
        "(docs/nowhere.md) does not exist",
        "(../outside.md) points outside the repository",
        "(README.md#no-such) names no heading of README.md",
    ]


def test_every_link_in_the_docs_resolves_inside_the_repository() -> None:
    files = markdown_files()
    assert ROOT / "README.md" in files and ROOT / "docs" / "protocol.md" in files
    assert any("plugins" in path.parts for path in files)
    broken = [entry for path in files for entry in broken_links(path)]
    assert not broken, "links that do not resolve in a clone:\n" + "\n".join(broken)


def test_no_document_points_at_notes_outside_the_repository() -> None:
    sources = [
        *markdown_files(),
        ROOT / ".ci" / "run",
        *ROOT.glob("pyproject.toml"),
        *ROOT.glob("plugins/*/*/pyproject.toml"),
        *ROOT.glob("examples/*/pyproject.toml"),
    ]
    hits = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()}"
        for path in sources
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if _OUTSIDE_NOTES.search(line)
    ]
    assert not hits, "the repository's docs must stand alone; write it down in docs/ instead:\n" + "\n".join(hits)


def test_repository_docs_cover_design_protocol_style_and_releases() -> None:
    contributing = (ROOT / "CONTRIBUTING.md").read_text()
    readme = (ROOT / "README.md").read_text()
    for page in ("architecture.md", "protocol.md", "style.md", "releasing.md"):
        assert (ROOT / "docs" / page).is_file(), f"docs/{page} is missing"
        assert f"docs/{page}" in readme + contributing, f"neither README nor CONTRIBUTING links docs/{page}"
    architecture = (ROOT / "docs" / "architecture.md").read_text()
    for section in ("## The flow of one episode", "## Outcomes", "## Token fidelity", "## Trainer adapters"):
        assert section in architecture
    for trainer in sorted(
        p.name for p in (ROOT / "plugins" / "trainers").iterdir() if (p / "pyproject.toml").is_file()
    ):
        assert f"`trainer-{trainer}`" in architecture, f"docs/architecture.md's adapter table lacks {trainer}"


def test_protocol_doc_lists_every_route_and_error_code() -> None:
    from agenthub.plugins import get_plugin_host
    from agenthub.service.server import create_app

    protocol = (ROOT / "docs" / "protocol.md").read_text()
    app = create_app(get_plugin_host().env("guess"))
    for path, operations in app.openapi()["paths"].items():
        for method in operations:
            route = f"{method.upper()} {path.replace('{session_id}', '{id}')}"
            assert f"`{route}" in protocol, f"docs/protocol.md does not document {route}"
    raised = re.compile(r"(?:ServiceError|error|send_error)\(\s*(?:send,\s*)?(\d{3}),\s*\"([a-z_]+)\"")
    codes = {
        (status, code)
        for source in (ROOT / "core" / "agenthub" / "service").glob("*.py")
        for status, code in raised.findall(source.read_text())
    }
    assert len(codes) >= 10
    for status, code in sorted(codes):
        row = next((line for line in protocol.splitlines() if f"`{code}`" in line), None)
        assert row is not None, f"docs/protocol.md's error table lacks {status} {code}"
        assert row.startswith(f"| {status} |"), f"docs/protocol.md lists {code} under another status than {status}"
