"""Check ``agent.KEY=``, ``opponent.KEY=`` and ``env_kwargs.KEY=`` against what the plugin declares, before
anything starts: a misspelt setting is refused in one line with "did you mean", not as a ``TypeError`` from
inside an env server (retried, then lost in its log) or from an agent's constructor.

What a plugin declares: its spec's ``settings`` where it names them, else the factory's signature (a class:
its ``__init__``), plus an env's ``default_kwargs``. A factory that takes ``**kwargs`` takes anything, so it
is not checked. A factory given as ``"module:attr"`` is read from its source (``ast``) without importing it,
so that checking never imports a heavy package the command would not import anyway; where the source does
not tell (an inherited ``__init__``, a name built at run time), it is imported only if ``may_import`` says
the command imports it anyway, else left unchecked.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import inspect
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from agenthub.errors import ConfigError, PluginError, did_you_mean
from agenthub.plugins import ORACLE, PluginHost, get_plugin_host
from agenthub.specs import AgentSpec, EnvSpec, Factory, resolve_factory

HUMAN = "human"
"""``agenthub play``'s name for the person at the terminal, who takes no settings (play refuses them itself)."""


@dataclass(frozen=True)
class Settings:
    """The keyword settings a factory takes; ``open``: it takes ``**kwargs``, so any name goes."""

    names: frozenset[str]
    open: bool = False


class RunOptions(Protocol):
    """What eval's and play's configs share: who plays, and the settings of each."""

    # read-only, so that a config whose ``agent`` is a plain ``str`` fits too
    @property
    def agent(self) -> str | None: ...
    @property
    def agent_kwargs(self) -> Mapping[str, Any]: ...
    @property
    def opponent(self) -> str | None: ...
    @property
    def opponent_kwargs(self) -> Mapping[str, Any]: ...
    @property
    def env_kwargs(self) -> Mapping[str, Any]: ...


def option_aliases(overrides: list[str]) -> list[str]:
    """``agent.KEY=V`` is short for ``agent_kwargs.KEY=V``, ``opponent.KEY=V`` for ``opponent_kwargs.KEY=V``."""
    out = []
    for item in overrides:
        for short in ("agent", "opponent"):
            if item.startswith(f"{short}."):
                item = f"{short}_kwargs.{item[len(short) + 1 :]}"
        out.append(item)
    return out


# -- what a factory takes -------------------------------------------------------------------


def declared_settings(spec: EnvSpec | AgentSpec, *, may_import: bool) -> Settings | None:
    """The settings ``spec`` takes; None where that cannot be told without an import ``may_import`` forbids."""
    named = getattr(spec, "settings", None)
    if named is not None:
        found: Settings | None = Settings(frozenset(named))
    else:
        found = factory_settings(spec.factory, may_import=may_import)
    if found is None or not isinstance(spec, EnvSpec):
        return found
    return Settings(found.names | frozenset(spec.default_kwargs), found.open)


def factory_settings(factory: Factory, *, may_import: bool) -> Settings | None:
    """The keyword settings ``factory`` takes (see the module's docstring for how it is read)."""
    if callable(factory):
        return _from_signature(factory)
    module, _, attr = factory.partition(":")
    found = _from_source(module, attr)
    if found is None and may_import:
        try:
            return _from_signature(resolve_factory(factory, what=f"factory {factory!r}"))
        except PluginError:
            return None  # the command's own import reports a broken plugin in its words
    return found


def _from_signature(factory: Callable[..., Any]) -> Settings | None:
    try:
        signature = inspect.signature(factory)
    except (TypeError, ValueError):  # some builtins and C types have none
        return None
    names = frozenset(
        name
        for name, p in signature.parameters.items()
        if p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)
    )
    return Settings(names, any(p.kind is inspect.Parameter.VAR_KEYWORD for p in signature.parameters.values()))


@functools.lru_cache(maxsize=256)
def _from_source(module: str, attr: str, depth: int = 0) -> Settings | None:
    """``attr`` of ``module`` read from the module's source; None where the source does not say."""
    tree = _module_tree(module)
    if tree is None or depth > 3:
        return None
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name == attr:
            return _from_arguments(node.args, skip_first=False)
        if isinstance(node, ast.ClassDef) and node.name == attr:
            return _from_class(node)
        if isinstance(node, ast.ImportFrom):  # re-exported: follow it to where it is defined
            for alias in node.names:
                if (alias.asname or alias.name) == attr:
                    source = _absolute(module, node.module, node.level)
                    return _from_source(source, alias.name, depth + 1) if source else None
    return None  # assigned, or built at run time


def _module_tree(module: str) -> ast.Module | None:
    parent = module.rpartition(".")[0]
    if parent and parent not in sys.modules:
        return None  # find_spec would import the parent package, which may be heavy
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.origin or not spec.origin.endswith(".py"):
        return None
    try:
        return ast.parse(Path(spec.origin).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return None


def _absolute(module: str, target: str | None, level: int) -> str | None:
    if level == 0:
        return target
    base = module.split(".")[:-level]  # a module's package is its name less one part per leading dot
    if not base:
        return None
    return ".".join([*base, target] if target else base)


def _from_class(node: ast.ClassDef) -> Settings | None:
    for item in node.body:
        if isinstance(item, ast.FunctionDef) and item.name == "__init__":
            return _from_arguments(item.args, skip_first=True)
        if isinstance(item, ast.FunctionDef) and item.name == "__new__":
            return None
    plain = all(isinstance(b, ast.Name) and b.id == "object" for b in node.bases) and not node.keywords
    if not plain:
        return None  # __init__ inherited (pydantic, a base class): only an import tells
    if any(_is_dataclass(d) for d in node.decorator_list):
        fields = [
            item.target.id
            for item in node.body
            if isinstance(item, ast.AnnAssign)
            and isinstance(item.target, ast.Name)
            and "ClassVar" not in ast.unparse(item.annotation)
        ]
        return Settings(frozenset(fields))
    if node.decorator_list:
        return None  # a decorator may replace the class
    return Settings(frozenset())  # object's __init__: no settings


def _is_dataclass(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
    return name == "dataclass"


def _from_arguments(args: ast.arguments, *, skip_first: bool) -> Settings:
    # posonlyargs cannot be given by name; a method's self is the first of them, else the first of args
    positional = args.args[1:] if skip_first and not args.posonlyargs else args.args
    names = frozenset(a.arg for a in [*positional, *args.kwonlyargs])
    return Settings(names, args.kwarg is not None)


# -- the checks ----------------------------------------------------------------------------


def check_settings(
    given: Mapping[str, Any], spec: EnvSpec | AgentSpec, *, what: str, prefix: str, may_import: bool
) -> None:
    """Refuse a setting ``spec`` does not take, naming the closest one and all it takes."""
    if not given:
        return
    declared = declared_settings(spec, may_import=may_import)
    if declared is None or declared.open:
        return
    unknown = sorted(key for key in given if key not in declared.names)
    if not unknown:
        return
    key = unknown[0]
    known = sorted(declared.names)
    takes = f"its settings: {', '.join(known)}" if known else "it takes: (none)"
    more = f" (nor {', '.join(repr(k) for k in unknown[1:])})" if len(unknown) > 1 else ""
    raise ConfigError(
        f"{what} has no setting {key!r}{more}; {did_you_mean(key, known)}{takes}; fix or drop {prefix}.{key}="
    )


def check_env_kwargs(spec: EnvSpec, env_kwargs: Mapping[str, Any], *, may_import: bool) -> None:
    """``env_kwargs.KEY=``: refused unless the env's factory takes ``KEY``."""
    check_settings(env_kwargs, spec, what=f"env {spec.name!r}", prefix="env_kwargs", may_import=may_import)


def check_agent_kwargs(
    env: EnvSpec,
    called: str | None,
    kwargs: Mapping[str, Any],
    *,
    role: str = "agent",
    may_import: bool,
    host: PluginHost | None = None,
) -> None:
    """``agent.KEY=`` (``role="opponent"``: ``opponent.KEY=``) for the agent the user called ``called``.

    A name no plugin registers is left to the command's own lookup, which says so in its words."""
    if not kwargs or called == HUMAN:
        return
    host = host or get_plugin_host()
    if called is not None and called != ORACLE and called not in host.agents:
        return
    if (called is None or called == ORACLE) and env.oracle is None:
        return
    spec = host.agent_for(env, called)
    shown = called or ORACLE
    what = f"{role} {shown!r}" + (f" ({spec.name})" if shown != spec.name else "")
    check_settings(kwargs, spec, what=what, prefix=role, may_import=may_import)


def check_run_options(
    env: EnvSpec, options: RunOptions, *, import_agents: bool, import_env: bool = False, host: PluginHost | None = None
) -> None:
    """Every setting of a run (its env's, its agent's, its opponent's), before a server starts or an agent
    is built. ``import_agents``/``import_env``: whether the command imports those factories anyway."""
    check_env_kwargs(env, options.env_kwargs, may_import=import_env)
    check_agent_kwargs(env, options.agent, options.agent_kwargs, may_import=import_agents, host=host)
    if options.opponent is not None:
        check_agent_kwargs(
            env, options.opponent, options.opponent_kwargs, role="opponent", may_import=import_agents, host=host
        )
