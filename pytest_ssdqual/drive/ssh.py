"""Every command run on another host goes through here: the system ``ssh`` client, as the
engineer already uses it (keys, agent, ``~/.ssh/config``), never asking anything.

``ssh -o BatchMode=yes -o ConnectTimeout=N [-F CONFIG] [-p PORT] HOST -- COMMAND``: BatchMode
makes a missing key or an unknown host key fail at once instead of prompting (ssh_config(5)
``BatchMode``); ``-F`` takes ``--ssh-config`` / ``$SSDQUAL_SSH_CONFIG`` when given (a lab's
own file, or a test's), else ssh reads ``~/.ssh/config`` as usual. The command is one shell
line run by the remote user's shell (ssh(1): the remote command is passed to the shell);
arguments are quoted with :func:`shlex.quote`.

Sources: ssh(1), ssh_config(5) (OpenSSH 9.2).
"""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pytest_ssdqual.errors import ConfigError, DeviceError

__all__ = ["SSH_CONNECT_TIMEOUT_S", "RemoteAccess", "SshResult", "SshRunner"]

#: Seconds ssh may take to connect (ssh_config ``ConnectTimeout``).
SSH_CONNECT_TIMEOUT_S = 10

#: ssh's exit status when the connection itself failed (ssh(1): "exits with 255 if an error
#: occurred").
SSH_FAILED = 255


@dataclass(frozen=True)
class RemoteAccess:
    """How remote drives' hosts are reached, from the options.

    Attributes:
        ssh_config: ``ssh -F`` file (``--ssh-config``, ``$SSDQUAL_SSH_CONFIG``); None: ssh's
            own (``~/.ssh/config``).
        ssdqual_command: the command that runs ``ssdqual`` on the hosts
            (``--remote-ssdqual``, default ``ssdqual``), as shell words.
        identity_files: ``--remote-identity`` files (``ssdqual identify --json`` made on a
            host), used when a host has no SSH access.
        ssh_bin: the ssh client.
    """

    ssh_config: str | None = None
    ssdqual_command: str = "ssdqual"
    identity_files: tuple[str, ...] = field(default=())
    ssh_bin: str = "ssh"


@dataclass(frozen=True)
class SshResult:
    """One remote command: ``returncode`` (255: ssh itself failed), ``stdout``, ``stderr``."""

    returncode: int
    stdout: str
    stderr: str

    @property
    def connection_failed(self) -> bool:
        """True when ssh could not run the command at all (status 255)."""
        return self.returncode == SSH_FAILED


class SshRunner:
    """Runs commands on one host over SSH.

    Args:
        host: the host as the drive names it (an IP address or a name ``~/.ssh/config`` may
            map); an IPv6 address is passed to ssh as is (ssh takes it without brackets).
        access: :class:`RemoteAccess`.
    """

    def __init__(self, host: str, access: RemoteAccess) -> None:
        self.host = host
        self.access = access

    def argv(self, command: str, *, tty: bool = False) -> list[str]:
        """The ssh argument list for one remote shell line ``command``."""
        ssh = shutil.which(self.access.ssh_bin) or self.access.ssh_bin
        argv = [ssh, "-o", "BatchMode=yes", "-o", f"ConnectTimeout={SSH_CONNECT_TIMEOUT_S}",
                "-o", "LogLevel=ERROR"]
        if self.access.ssh_config:
            argv += ["-F", self.access.ssh_config]
        if not tty:
            argv.append("-T")
        return [*argv, self.host, "--", command]

    def run(self, words: Sequence[str] | str, *, timeout_s: float = 60.0,
            stdin: str | None = None) -> SshResult:
        """Run ``words`` (quoted one by one) or a ready shell line on the host.

        Raises:
            DeviceError: ssh missing, or the command outlived ``timeout_s`` (ssh is killed).
        """
        command = words if isinstance(words, str) else shlex.join(words)
        try:
            if stdin is None:
                proc = subprocess.run(self.argv(command), stdin=subprocess.DEVNULL,
                                      capture_output=True, text=True, timeout=timeout_s,
                                      check=False)
            else:
                proc = subprocess.run(self.argv(command), input=stdin, capture_output=True,
                                      text=True, timeout=timeout_s, check=False)
        except FileNotFoundError:
            raise DeviceError(f"ssh client {self.access.ssh_bin!r} not found: install "
                              "openssh-client to reach remote drives' hosts") from None
        except subprocess.TimeoutExpired:
            raise DeviceError(f"ssh {self.host}: {command!r} took longer than "
                              f"{timeout_s:g} s and was stopped") from None
        return SshResult(proc.returncode, proc.stdout, proc.stderr)

    def reachable(self) -> tuple[bool, str]:
        """``(True, "")`` when a trivial command runs on the host, else ``(False, why)``
        (ssh's own first line: no route, refused, permission denied, host key unknown)."""
        try:
            result = self.run("true", timeout_s=SSH_CONNECT_TIMEOUT_S + 5)
        except DeviceError as exc:
            return False, str(exc)
        if result.returncode == 0:
            return True, ""
        why = next((ln.strip() for ln in result.stderr.splitlines() if ln.strip()),
                   f"ssh exit status {result.returncode}")
        return False, why

    def ssdqual(self, *args: str) -> list[str]:
        """``ssdqual ARGS`` as the host runs it (``RemoteAccess.ssdqual_command``), as words."""
        return [*shlex.split(self.access.ssdqual_command), *args]


def remote_access(*, ssh_config: str | None, ssdqual_command: str | None,
                  identity_files: Sequence[str] = (),
                  environ: Mapping[str, str] | None = None) -> RemoteAccess:
    """How the hosts of ``fio://`` drives are reached: ``--ssh-config`` (else
    ``$SSDQUAL_SSH_CONFIG``, else ssh's own ``~/.ssh/config``), ``--remote-ssdqual`` (else
    ``$SSDQUAL_REMOTE_SSDQUAL``, else ``ssdqual``) and the ``--remote-identity`` files.

    Raises:
        ConfigError: the ssh config file does not exist (naming the option or variable).
    """
    env = os.environ if environ is None else environ
    config = ssh_config or env.get("SSDQUAL_SSH_CONFIG") or None
    key = "--ssh-config" if ssh_config else "SSDQUAL_SSH_CONFIG"
    if config and not Path(config).is_file():
        raise ConfigError(f"ssh config file {config} does not exist", key=key,
                          fix="give an ssh_config(5) file, or leave it out to use ~/.ssh/config")
    return RemoteAccess(
        ssh_config=os.path.abspath(config) if config else None,
        ssdqual_command=ssdqual_command or env.get("SSDQUAL_REMOTE_SSDQUAL") or "ssdqual",
        identity_files=tuple(identity_files))
