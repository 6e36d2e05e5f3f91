"""What both of AReaL's engine doubles answer alike: ready at once, and a weight version to read and set."""

from __future__ import annotations

from areal.api.engine_api import InferenceEngine


class VersionedEngine(InferenceEngine):  # type: ignore[misc]
    """The part of AReaL's ``InferenceEngine`` its workflows ask besides ``agenerate``.

    The GPU engine it stands in for is initialised by then, and the workflow stamps each token with the
    weight version it reads here; a subclass (a dataclass) declares ``version`` as a field of its own.
    """

    version: int

    def initialized(self) -> bool:
        return True

    def get_version(self) -> int:
        return self.version

    def set_version(self, version: int) -> None:
        self.version = version
