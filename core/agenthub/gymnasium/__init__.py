"""Both bridges between gymnasium and agenthub, each loading gymnasium on first use.

* gymnasium -> hub (:mod:`.importer`): ``env=gym:ID`` serves any registered gymnasium env
  with text observations as an agenthub env (:class:`GymTextEnv`, :func:`gym_env_spec`).
* hub -> gymnasium (:mod:`.remote_env`): :class:`RemoteGymEnv` is a ``gymnasium.Env`` over
  an env server's session (``agenthub.make``, ``EnvClient.as_gym()``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from agenthub.lazy_exports import lazy_exports

if TYPE_CHECKING:
    from agenthub.gymnasium.importer import GymTextEnv, gym_env_spec
    from agenthub.gymnasium.remote_env import GymSessionClient, RemoteGymEnv

__getattr__ = lazy_exports(
    __name__,
    {
        "GymTextEnv": ".importer",
        "gym_env_spec": ".importer",
        "GymSessionClient": ".remote_env",
        "RemoteGymEnv": ".remote_env",
    },
)

__all__ = ["GymSessionClient", "GymTextEnv", "RemoteGymEnv", "gym_env_spec"]
