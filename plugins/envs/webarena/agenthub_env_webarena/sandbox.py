"""Run Chromium as an unprivileged user, so that its sandbox can start when the env server is root.

Chromium will not start its sandbox as root (``Running as root without --no-sandbox is not supported``),
and a root browser is the wrong thing to hand an agent anyway. When this process is root, the browser's
executable is a small launcher script written at start (in a root-only temporary folder): it gives the
profile folder Playwright made to the browser user, then ``setpriv`` drops to that user (no groups, no
capabilities, ``no_new_privs``) and execs Chromium with Playwright's arguments, in the same process, so
Playwright's pipe and the browser's death with the server are unchanged. Chromium then starts its
namespace sandbox (user and PID namespaces plus seccomp-bpf for renderers), which needs unprivileged user
namespaces: the kernel's default on Debian and most distributions, off under Docker's default seccomp
profile (run the container with ``--security-opt seccomp=unconfined`` or a profile allowing ``clone``
with ``CLONE_NEWUSER``, or ``sysctl kernel.unprivileged_userns_clone=1`` on kernels that have it).
"""

from __future__ import annotations

import atexit
import os
import pwd
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

SANDBOX_ENV_VAR = "AGENTHUB_BROWSER_SANDBOX"
"""``auto`` (default: sandbox, else launch without it and warn), ``require`` or ``off``."""

USER_ENV_VAR = "AGENTHUB_BROWSER_USER"
"""The user a root server runs Chromium as (default: ``agenthub-browser`` if it exists, else ``nobody``)."""

DEFAULT_USERS = ("agenthub-browser", "nobody")
SETPRIV = "/usr/bin/setpriv"


class SandboxError(RuntimeError):
    """The browser user or the launcher cannot be set up; the message says what to create or set."""


def sandbox_mode() -> str:
    mode = os.environ.get(SANDBOX_ENV_VAR, "auto").strip().lower() or "auto"
    if mode not in ("auto", "require", "off"):
        raise SandboxError(f"{SANDBOX_ENV_VAR}={mode!r} is not a mode; use auto (the default), require or off")
    return mode


def browser_user() -> pwd.struct_passwd:
    """The unprivileged user Chromium runs as when this process is root."""
    chosen = os.environ.get(USER_ENV_VAR, "").strip()
    for name in (chosen,) if chosen else DEFAULT_USERS:
        try:
            entry = pwd.getpwuid(int(name)) if name.isdigit() else pwd.getpwnam(name)
        except KeyError:
            continue
        if entry.pw_uid == 0:
            raise SandboxError(f"{USER_ENV_VAR}={name} is root; name an unprivileged user for the browser")
        return entry
    raise SandboxError(
        f"no user to run the browser as: {USER_ENV_VAR}={chosen!r} does not exist"
        if chosen
        else "no user to run the browser as: create one (useradd --system --no-create-home agenthub-browser) "
        f"or set {USER_ENV_VAR} to an unprivileged user"
    )


@dataclass
class Launcher:
    """What Playwright starts as "Chromium": Chromium itself, or (as root) the privilege-dropping script."""

    path: str
    user: str | None = None
    folder: Path | None = None

    @classmethod
    def for_this_process(cls, executable: str) -> Launcher:
        if os.geteuid() != 0:
            return cls(executable)
        user = browser_user()
        if not Path(SETPRIV).exists():
            raise SandboxError(
                f"the server runs as root and {SETPRIV} (util-linux) is missing, so the browser cannot be started as "
                f"{user.pw_name}: apt-get install util-linux, or run the server as an unprivileged user"
            )
        folder = Path(tempfile.mkdtemp(prefix="agenthub-chromium-"))
        folder.chmod(0o711)  # the browser user may pass through to its home, not list or read the script
        home = folder / "home"
        home.mkdir()
        os.chown(home, user.pw_uid, user.pw_gid)  # Chromium writes its crash database and NSS files there
        ids = f"{user.pw_uid}:{user.pw_gid}"
        script = folder / "chromium"
        script.write_text(
            "#!/bin/sh\n"
            f"# agenthub: run {executable} as {user.pw_name} so that Chromium's sandbox can start\n"
            'for arg in "$@"; do case "$arg" in --user-data-dir=*) '
            f'chown -R {ids} -- "${{arg#--user-data-dir=}}";; esac; done\n'
            f"export HOME={_quote(str(home))}\n"
            f"exec {SETPRIV} --reuid={user.pw_uid} --regid={user.pw_gid} --clear-groups --inh-caps=-all "
            f'--no-new-privs -- {_quote(executable)} "$@"\n',
            encoding="utf-8",
        )
        script.chmod(0o700)
        launcher = cls(str(script), user.pw_name, folder)
        atexit.register(launcher.remove)  # the shared host is never shut down explicitly (~56 KB a process)
        return launcher

    def how_to_sandbox(self) -> str:
        who = f"it runs as {self.user}" if self.user else "it runs as this process's user"
        return (
            f"{who}; Chromium's sandbox needs unprivileged user namespaces (check: unshare --user true as that user; "
            "under Docker run with --security-opt seccomp=unconfined or a profile that allows CLONE_NEWUSER; "
            f"sysctl kernel.unprivileged_userns_clone=1 where the kernel has it). Set {SANDBOX_ENV_VAR}=require to "
            "refuse to start without it"
        )

    def remove(self) -> None:
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)


def _quote(text: str) -> str:
    return "'" + text.replace("'", "'\\''") + "'"
