"""A throwaway "lab" of remote drive hosts on this machine, for the remote-drive end-to-end tests
(``tests/e2e/test_remote_e2e.py``): ``fio --server`` on loopback addresses (127.0.0.2,
127.0.0.3, and ``::1`` when the kernel has IPv6 on ``lo``), each serving a RAM-backed loop
device, and an OpenSSH server on 127.0.0.1 on a free port with a host key and a client key made
here (ssh-keygen) and an ``ssh_config`` file that maps every "host" to it.

Everything is started by the tests and stopped and removed afterwards (servers' whole process
trees, sshd, loop devices, images). Needs root, fio, losetup, ``/usr/sbin/sshd`` (Debian's
``openssh-server``, installed by ``scripts/setup.sh``), ssh and ssh-keygen.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

SSHD = "/usr/sbin/sshd"
REPO = Path(__file__).resolve().parents[1]


def missing_tools() -> str:
    """Why the lab cannot be built here (``''`` when it can)."""
    if os.geteuid() != 0:
        return "needs root (loop devices, sshd)"
    for tool in ("fio", "losetup", "ssh", "ssh-keygen"):
        if shutil.which(tool) is None:
            return f"{tool} not installed"
    if not os.access(SSHD, os.X_OK):
        return f"{SSHD} not installed (apt-get install openssh-server; scripts/setup.sh does)"
    return ""


def ipv6_on_lo() -> bool:
    """True when ``::1`` can be bound (IPv6 enabled on ``lo``)."""
    try:
        with socket.socket(socket.AF_INET6, socket.SOCK_STREAM) as s:
            s.bind(("::1", 0))
        return True
    except OSError:
        return False


def free_port(host: str = "127.0.0.1") -> int:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.bind((host, 0))
        return int(s.getsockname()[1])


def wait_port(host: str, port: int, timeout_s: float = 10.0) -> None:
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            socket.create_connection((host, port), timeout=1).close()
            return
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def process_tree(root: int) -> list[int]:
    """``root`` and every process descending from it (``/proc/PID/stat`` ppid)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            ppid = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    tree, i = [root], 0
    while i < len(tree):
        tree += children.get(tree[i], [])
        i += 1
    return tree


def fio_holding(device: str) -> list[int]:
    """pids of fio processes that have ``device`` open (any host of this lab is this one)."""
    real = os.path.realpath(device)
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if Path(f"/proc/{entry}/comm").read_text().strip() != "fio":
                continue
            fds = os.listdir(f"/proc/{entry}/fd")
        except OSError:
            continue
        for fd in fds:
            try:
                if os.readlink(f"/proc/{entry}/fd/{fd}") == real:
                    found.append(int(entry))
                    break
            except OSError:
                continue
    return found


@dataclass
class FioServer:
    """One ``fio --server`` on ``address`` serving ``device`` (a loop device over ``image``)."""

    address: str
    port: int
    device: str
    image: Path
    proc: subprocess.Popen[bytes] | None = None

    @property
    def drive(self) -> str:
        host = f"[{self.address}]" if ":" in self.address else self.address
        return f"fio://{host}:{self.port}{self.device}"

    def start(self) -> None:
        kind = "ip6" if ":" in self.address else "ip"
        self.proc = subprocess.Popen(
            ["fio", f"--server={kind}:{self.address},{self.port}"], cwd=self.image.parent,
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True)
        wait_port(self.address, self.port)

    def kill(self, sig: int = signal.SIGKILL) -> list[int]:
        """Send ``sig`` to the server's whole process tree (listener, connection, backend,
        jobs); returns the pids."""
        if self.proc is None:
            return []
        tree = process_tree(self.proc.pid)
        for pid in tree:
            try:
                os.kill(pid, sig)
            except ProcessLookupError:
                pass
        if sig == signal.SIGKILL:
            self.proc.wait(timeout=10)
            self.proc = None
        return tree

    def restart(self) -> None:
        self.kill()
        self.start()


@dataclass
class RemoteLab:
    """sshd + fio servers + loop devices (module docstring). ``servers`` by address; ``local``
    a loop device of the same size for the local drive of a mixed session."""

    folder: Path
    servers: dict[str, FioServer] = field(default_factory=dict)
    local: str = ""
    local_image: Path | None = None
    sshd: subprocess.Popen[bytes] | None = None
    ssh_port: int = 0
    #: every (loop device, image) attached, recorded as soon as it is: stop() detaches them
    attached: list[tuple[str, Path]] = field(default_factory=list)
    losetup: str = "losetup"

    @property
    def ssh_config(self) -> Path:
        return self.folder / "ssh_config"

    def env(self, **extra: str) -> dict[str, str]:
        """The environment of a pytest run using the lab: its ssh config, and ssdqual run on
        the "hosts" by this interpreter from this checkout."""
        env = dict(os.environ)
        # this checkout's plugin in the pytest runs too (they start in a temporary folder)
        env["PYTHONPATH"] = os.pathsep.join(p for p in (str(REPO), env.get("PYTHONPATH")) if p)
        env["SSDQUAL_SSH_CONFIG"] = str(self.ssh_config)
        env["SSDQUAL_REMOTE_SSDQUAL"] = f"env PYTHONPATH={REPO} {sys.executable} -m " \
                                        "pytest_ssdqual.cli"
        env.update(extra)
        return env

    def attach_image(self, n: int, image_bytes: int) -> tuple[str, Path]:
        """A RAM-backed image (``/dev/shm``) of ``image_bytes`` on a new loop device; both
        recorded in ``attached`` for stop(). When the image cannot be filled or losetup fails
        the image is removed before the error goes on (nothing left in ``/dev/shm``)."""
        shm = Path("/dev/shm") if Path("/dev/shm").is_dir() else self.folder
        image = Path(tempfile.mkstemp(prefix=f"ssdqual-remote-{n}-", suffix=".img",
                                      dir=shm)[1])
        try:
            with open(image, "wb") as fh:
                os.posix_fallocate(fh.fileno(), 0, image_bytes)
            dev = subprocess.run([self.losetup, "-f", "--show", "--direct-io=on", str(image)],
                                 check=True, capture_output=True, text=True).stdout.strip()
        except BaseException:
            image.unlink(missing_ok=True)
            raise
        self.attached.append((dev, image))
        return dev, image

    def start(self, addresses: list[str], image_bytes: int) -> None:
        self._start_sshd(addresses)
        for n, address in enumerate([*addresses, "local"]):
            dev, image = self.attach_image(n, image_bytes)
            if address == "local":
                self.local, self.local_image = dev, image
                continue
            server = FioServer(address, free_port(address), dev, image)
            self.servers[address] = server
            server.start()

    def _start_sshd(self, addresses: list[str]) -> None:
        f = self.folder
        for key in ("host_key", "client_key"):
            subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(f / key)],
                           check=True)
        shutil.copy(f / "client_key.pub", f / "authorized_keys")
        Path("/run/sshd").mkdir(exist_ok=True)  # sshd's privilege separation folder
        self.ssh_port = free_port()
        (f / "sshd_config").write_text(
            f"ListenAddress 127.0.0.1\nHostKey {f}/host_key\nPidFile {f}/sshd.pid\n"
            f"AuthorizedKeysFile {f}/authorized_keys\nPermitRootLogin prohibit-password\n"
            "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n"
            "StrictModes no\n")
        host_key = (f / "host_key.pub").read_text().split()
        (f / "known_hosts").write_text(f"ssdqual-lab {host_key[0]} {host_key[1]}\n")
        self.ssh_config.write_text(
            f"Host {' '.join(addresses)}\n  HostName 127.0.0.1\n  Port {self.ssh_port}\n"
            f"  User root\n  IdentityFile {f}/client_key\n  IdentitiesOnly yes\n"
            f"  UserKnownHostsFile {f}/known_hosts\n  HostKeyAlias ssdqual-lab\n"
            "  StrictHostKeyChecking yes\n")
        with open(f / "sshd.log", "wb") as log:  # sshd keeps its own copy of the descriptor
            self.sshd = subprocess.Popen(
                [SSHD, "-D", "-e", "-f", str(f / "sshd_config"), "-p", str(self.ssh_port)],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log,
                start_new_session=True)
        wait_port("127.0.0.1", self.ssh_port)

    def stop(self) -> list[str]:
        """Stop everything; returns what was left behind (fio still holding a device)."""
        left = []
        for server in self.servers.values():
            server.kill()
        if self.sshd is not None:
            for pid in process_tree(self.sshd.pid):
                try:
                    os.kill(pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
            self.sshd.wait(timeout=10)
        for dev, image in self.attached:
            holders = fio_holding(dev)
            if holders:
                left.append(f"fio pid {holders} still holds {dev}")
            subprocess.run(["losetup", "-d", dev], capture_output=True, check=False)
            image.unlink(missing_ok=True)
        return left
