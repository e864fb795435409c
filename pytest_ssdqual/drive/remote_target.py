"""The :class:`DriveTarget` of a drive on another host (``--drive=fio://HOST[:PORT]/dev/X``).

fio runs there through fio's own client/server mode (``fio --server`` on the host, ``fio
--client`` here: ``fio.client``). Everything else about the drive is read *on that host*,
over SSH (``drive.ssh``, the system ssh client with the engineer's keys and config): its
identity and every safety check (mounted, partitions, holders, system disk, signatures, busy)
by ``ssdqual identify --json`` run there -- the same code a local run uses, on the host's own
sysfs, smartctl and nvme-cli -- at open and again before every fio job (a reading at most
``_FRESH_S`` old); the drive lock on the
host (``drive.remote_lock``); its health (smartctl, nvme-cli) there too (:meth:`RemoteTarget.
run_tool`). Writes need ``--confirm-destroy`` for the serial, as locally.

Without SSH access the identity comes from a file made on the host with ``ssdqual identify
--json`` (``--remote-identity=FILE``), and the safety state is as the file says: writes then
need that file *and* ``--confirm-destroy`` for its serial; the report names the source. A run
that fails or is stopped (lost server, timeout, Ctrl-C) is followed by stopping every fio on
the host that still has the drive open (:meth:`RemoteTarget.stop_leftover_fio`, over SSH).

fio opens the drive's own ``/dev/disk/by-id`` link when its identity names one
(``drive.by_id``: a link made from the drive's serial or world-wide name, never a USB bridge's
or one that NVMe namespaces share), with ``allow_file_create=0``: another drive put in the
slot has another link, and fio fails to open this one rather than write that drive (or a file
of that name). With SSH, before every job the host's ``ssdqual identify`` must find the same
link still resolving to the device (:meth:`RemoteTarget.recheck_identity`). A file is taken
only for a host among its ``host_names`` (``drive.identity_match``).
"""

from __future__ import annotations

import re
import socket
import time
from collections.abc import Collection
from dataclasses import replace
from pathlib import Path

from pytest_ssdqual.drive.identity_file import RemoteIdentity, read_identity_document
from pytest_ssdqual.drive.identity_match import identity_file_for
from pytest_ssdqual.drive.lock import DriveLock
from pytest_ssdqual.drive.remote_lock import RemoteLock
from pytest_ssdqual.drive.remote_spec import host_label
from pytest_ssdqual.drive.safety import confirmation_reasons
from pytest_ssdqual.drive.spec import DriveSpec
from pytest_ssdqual.drive.ssh import RemoteAccess, SshRunner
from pytest_ssdqual.drive.target import DriveTarget
from pytest_ssdqual.drive.tool_runner import TOOL_TIMEOUT_S
from pytest_ssdqual.errors import DeviceError
from pytest_ssdqual.fio.client import FioServer

__all__ = ["RemoteTarget", "open_remote_target"]

#: A reading of the host younger than this serves both checks before one workload.
_FRESH_S = 2.0
_ENGINE = re.compile(r"^(\s*ioengine\s*=\s*)(\S+)[ \t]*$", re.MULTILINE)
_PROBED = ("io_uring", "libaio", "psync")  # FioRunner.ioengine's choices
#: Put before every job run on the host (:meth:`RemoteTarget.before_fio`).
_NO_FILE_CREATE = "[global]\nallow_file_create=0\n\n"

#: Shell run on the host: SIGTERM, then SIGKILL, every fio process with the device open, and
#: wait up to 10 s for them to be gone (a SIGKILLed process with direct I/O in flight lives on
#: until the I/O completes).
_STOP_SCRIPT = r"""dev=$(readlink -f {device}); found=
for p in /proc/[0-9]*; do
  [ "$(cat "$p/comm" 2>/dev/null)" = fio ] || continue
  for f in "$p"/fd/*; do
    [ "$(readlink "$f" 2>/dev/null)" = "$dev" ] && found="$found ${{p#/proc/}}" && break
  done
done
[ -n "$found" ] || exit 0
kill -TERM $found 2>/dev/null; sleep 1; kill -KILL $found 2>/dev/null; n=0
while [ $n -lt 100 ]; do
  alive=; for p in $found; do
    s=$(cut -d' ' -f3 "/proc/$p/stat" 2>/dev/null); [ -n "$s" ] && [ "$s" != Z ] && alive=1
  done
  [ -z "$alive" ] && break; sleep 0.1; n=$((n+1))
done
echo $found; [ -z "$alive" ] || echo "still running after SIGKILL: $alive" >&2
"""


class RemoteTarget(DriveTarget):
    """A drive on another host (module docstring). Built by :func:`open_remote_target`.

    Extra attributes: ``fio_server`` (where fio runs), ``ssh`` (None without SSH access),
    ``identity_source`` (one line for reports: over SSH, or which file; also the last of the
    identity's ``sources``, so records, Allure and summaries name it).
    """

    def __init__(self, spec: DriveSpec, doc: RemoteIdentity, *, ssh: SshRunner | None,
                 confirmed_serials: Collection[str], identity_source: str,
                 file_refusals: tuple[str, ...] = ()) -> None:
        label = host_label(spec.host, spec.port)
        identity = replace(doc.identity, sources=(*doc.identity.sources,
                                                  f"identity source: {identity_source}"))
        super().__init__(
            spec=spec, identity=identity, fio_filename=doc.by_id or doc.fio_filename,
            size_bytes=doc.size_bytes, write_refusals=(), created_file=False,
            name=f"{label}-{doc.lock_key}", state=None, confirmed_serials=confirmed_serials,
            identity_fn=lambda *_a, **_k: self._doc.identity, sysfs=Path("/sys"),
            mountinfo=Path("/proc/self/mountinfo"), swaps=Path("/proc/swaps"), root_dev=None)
        self.ssh = ssh
        self.host_label = label
        self.identity_source = identity_source
        self._doc = doc
        self._by_id = doc.by_id  #: the link fio opens (re-checked over SSH: recheck_identity)
        self._read_at = time.monotonic()
        self._engine = doc.ioengine
        self.fio_server = FioServer(spec.host, spec.port, on_failure=self.stop_leftover_fio)
        self._doc_refusals = file_refusals
        self.report_facts = (("remote host", f"{label} (fio server port {spec.port})"),
                             ("identity source", identity_source),
                             ("drive re-check",
                              drive_recheck_note(doc, label, ssh=ssh is not None)))
        self.write_refusals = self._refusals()

    @property
    def device(self) -> str:
        """The drive in messages: ``fio://HOST/dev/X`` as given."""
        return self.spec.raw

    def _refusals(self) -> tuple[str, ...]:
        doc = self._doc
        where = f" on {self.host_label}"
        reasons = [r + where if not r.endswith(where) else r for r in doc.refusals]
        reasons += confirmation_reasons(doc.fio_filename, doc.identity.serial, self._confirmed)
        return tuple(dict.fromkeys([*self._sticky, *self._doc_refusals, *reasons]))

    def _read_host(self) -> RemoteIdentity:
        """The host's reading now (over SSH), or the file's when there is no SSH."""
        if self.ssh is None:
            return self._doc
        if time.monotonic() - self._read_at > _FRESH_S:
            self._doc = query_identity(self.ssh, self.spec)
            self._read_at = time.monotonic()
        return self._doc

    def refresh(self) -> tuple[str, ...]:
        """Read the drive's state on the host again (over SSH) and recompute
        ``write_refusals``; without SSH the file's reading stands.

        Raises:
            DeviceError: ssh or ``ssdqual identify`` failed on the host (the device gone).
        """
        before = self._doc.lock_key
        doc = self._read_host()
        if doc.lock_key != before:
            self._refuse(f"{self.device} is now {doc.lock_key} on {self.host_label}, was "
                         f"{before} at start: the device was replaced; refusing to continue")
        self.write_refusals = self._refusals()
        return self.write_refusals

    def recheck_identity(self) -> None:
        """Identify the drive on the host again (over SSH; nothing to re-read without it):
        the same serial, and -- when fio opens a by-id link -- the host's ``ssdqual identify``
        finds that same link for the device (it resolves there, ``os.path.realpath`` on the
        host, and is still the drive's own: ``drive.by_id``).

        Raises:
            DeviceError: the serial or the by-id link changed, or the host could not be read.
        """
        before = self.identity.serial
        try:
            doc = self._read_host()
        except DeviceError as exc:
            self._refuse(f"{self.device} could not be identified again ({exc}): refusing writes")
            raise
        after = doc.identity.serial
        message = ""
        if after != before:
            message = (f"{self.device} now has serial {after or '(none)'}, was "
                       f"{before or '(none)'} at start: refusing to continue")
        elif self.ssh is not None and self._by_id and doc.by_id != self._by_id:
            message = (f"{self._by_id}, which fio opens, is no longer {doc.device}'s own by-id "
                       f"link on {self.host_label} (ssdqual identify there finds "
                       f"{doc.by_id or 'none'}): udev moved it or the drive changed; refusing "
                       "to continue")
        if message:
            self._refuse(message)
            raise DeviceError(message)

    def before_fio(self, job_text: str) -> str:
        """The job with the host's own best fio engine (probed there at open) in place of the
        one probed here (``io_uring``, ``libaio``, ``psync``: ``FioRunner.ioengine``): the job
        runs on the host's kernel and fio. An engine a job names for itself (``sync``,
        ``sg``, ...) is kept. A ``[global]`` section with ``allow_file_create=0`` comes first
        (fio HOWTO: fio then "will error out if the files it needs to use don't already
        exist"; several ``[global]`` sections each apply to the jobs after them): a drive
        gone from the host, its by-id link with it, makes fio fail instead of creating a
        regular file of that name in the host's ``/dev`` (a RAM file system) and measuring
        that -- measured with fio 3.33: a missing ``filename`` was created and written."""
        text = job_text if not self._engine else _ENGINE.sub(
            lambda m: m.group(1) + str(self._engine) if m.group(2) in _PROBED else m.group(0),
            job_text)
        return _NO_FILE_CREATE + text

    def stop_leftover_fio(self) -> str:
        """Stop every fio process on the host that still has the drive open (SIGTERM, then
        SIGKILL 1 s later), over SSH: after a lost connection, a timeout or Ctrl-C the server
        may run the job on. We hold the drive's lock there, so any fio on it is ours.
        Returns a note for the report (``''`` when none was running).
        """
        if self.ssh is None:
            return (f"no SSH access to {self.host_label}: a fio job the server may still run on "
                    f"{self.fio_filename} there cannot be stopped from here (it ends with its "
                    "runtime; check with ps on the host)")
        script = _STOP_SCRIPT.format(device=_quote(self.fio_filename))
        try:
            result = self.ssh.run(script, timeout_s=30)
        except DeviceError as exc:
            return f"could not stop fio on {self.host_label}: {exc}"
        pids = result.stdout.split()
        if result.returncode != 0:
            return (f"could not stop fio on {self.host_label} (ssh exit status "
                    f"{result.returncode}: {result.stderr.strip()[:200]})")
        if not pids:
            return ""
        return (f"stopped fio pid {', '.join(pids)} on {self.host_label}, still running on "
                f"{self.fio_filename} after the run ended")

    def run_tool(self, argv: list[str]) -> tuple[int, str]:
        """A ``drive.tool_runner.Runner`` that runs ``argv`` (smartctl, nvme-cli) on the host,
        over SSH, with ``LC_ALL=C``: the drive's health is read there.

        Raises:
            FileNotFoundError: no SSH access, or the tool is not installed on the host (the
                shell's status 127), as a local runner raises it for a missing program.
        """
        if self.ssh is None:
            raise FileNotFoundError(f"{argv[0]} on {self.host_label} (no SSH access)")
        result = self.ssh.run(["env", "LC_ALL=C", *argv], timeout_s=TOOL_TIMEOUT_S + 15)
        if result.returncode == 127:
            raise FileNotFoundError(f"{argv[0]} on {self.host_label}")
        return result.returncode, result.stdout

    def make_lock(self, session: str) -> DriveLock:
        """The drive lock: on the host over SSH; without SSH a lock on this machine keyed by
        host and device (two runs from here exclude each other, runs from elsewhere cannot be
        seen)."""
        if self.ssh is not None:
            return RemoteLock(self.ssh, self._doc.lock_key, label=self.device, session=session)
        return DriveLock(self.lock_key, label=self.device, session=session)


def _quote(text: str) -> str:
    import shlex

    return shlex.quote(text)


def query_identity(ssh: SshRunner, spec: DriveSpec, *, engine: bool = False) -> RemoteIdentity:
    """``ssdqual identify --json [--engine] DEVICE`` on the host, read back.

    Raises:
        DeviceError: ssh failed, ``ssdqual`` is not there, or it refused the device (its
            message, e.g. the device does not exist or is a partition).
    """
    words = ssh.ssdqual("identify", "--json", *(("--engine",) if engine else ()), spec.path)
    result = ssh.run(words, timeout_s=120)
    where = f"ssdqual identify --json on {host_label(spec.host, spec.port)}"
    if result.returncode == 127:
        raise DeviceError(f"{where}: ssdqual is not installed there ({result.stderr.strip()}): "
                          "install pytest-ssdqual on the host, or give the command that runs "
                          "it with --remote-ssdqual")
    if result.returncode != 0:
        detail = result.stderr.strip().splitlines()
        raise DeviceError(f"{where} failed (exit status {result.returncode}): "
                          f"{detail[-1] if detail else 'no message'}")
    return read_identity_document(result.stdout, where)


def drive_recheck_note(doc: RemoteIdentity, label: str, *, ssh: bool) -> str:
    """The report fact saying what makes sure fio opens the drive that was identified: its
    by-id link, made from its serial or world-wide name (another drive in the slot has another
    link: fio fails to open this one), or nothing but the path (a loop device, zram, a file, a
    drive with only links of its slot -- a USB bridge's -- or shared by NVMe namespaces, or a
    legacy identity file); with SSH the serial, and the link, are also read again over SSH
    before every fio job."""
    if doc.by_id:
        again = ("; its serial is read again over SSH before every fio job, and the link must "
                 "still resolve to the device there" if ssh else
                 "; without SSH nothing else re-checks which drive it is")
        return (f"fio opens {doc.by_id} on {label}, the drive's own by-id link (made from its "
                f"serial or world-wide name): another drive in its place has another link and "
                f"fio fails to open this one{again}")
    again = ("; its serial is read again over SSH before every fio job" if ssh else
             "; without SSH nothing else re-checks which drive it is")
    why = ("the identity file is of an older ssdqual and records no by-id link" if doc.legacy
           else f"{doc.device} has no by-id link of its own on {label} (a loop device, zram, "
           "a file, no udev, or only links of its slot -- a USB bridge's -- or shared by "
           "NVMe namespaces)")
    return f"not re-checkable by fio: {why}, so fio opens {doc.fio_filename} by path{again}"


def open_remote_target(spec: DriveSpec, access: RemoteAccess,
                       confirmed_serials: Collection[str]) -> RemoteTarget:
    """Open a remote drive: check its fio server answers, reach its host over SSH and read
    the drive there (``ssdqual identify --json --engine``); without SSH, take its
    ``--remote-identity`` file.

    Raises:
        DeviceError: no fio server listening on HOST:PORT; no SSH access and no identity file
            for the device (the message names both fixes); the host's ``ssdqual identify``
            failed.
        ConfigError: an identity file is unreadable or not an identity document.
    """
    label = host_label(spec.host, spec.port)
    try:
        socket.create_connection((spec.host, spec.port), timeout=10).close()
    except OSError as exc:
        raise DeviceError(f"{spec.raw}: no fio server answers on {label} port {spec.port} "
                          f"({exc.strerror or exc}): start one on the host (fio --server, or "
                          f"fio --server=ip:ADDRESS,{spec.port}) and check the firewall") from None
    ssh = SshRunner(spec.host, access)
    reachable, why = ssh.reachable()
    if reachable:
        doc = query_identity(ssh, spec, engine=True)
        source = (f"read on {label} over SSH (ssdqual identify --json) at open and before "
                  "every workload")
        return RemoteTarget(spec, doc, ssh=ssh, confirmed_serials=confirmed_serials,
                            identity_source=source)
    if not access.identity_files:
        raise DeviceError(
            f"{spec.raw}: no SSH access to {spec.host} ({why}), so its identity and safety "
            "cannot be read there: set up key access (ssh -o BatchMode=yes "
            f"{spec.host} true must work; --ssh-config for a config file), or make an "
            f"identity file on the host (ssdqual identify --json {spec.path} > FILE) and "
            "give --remote-identity=FILE (read only unless --confirm-destroy names its serial)")
    path, doc, refusals = identity_file_for(spec, access.identity_files)
    source = (f"file {path} made on {doc.host or '?'} at {doc.made_at or '?'} (no SSH access: "
              f"{why}; the drive's state on the host is not re-checked)")
    return RemoteTarget(spec, doc, ssh=None, confirmed_serials=confirmed_serials,
                        identity_source=source, file_refusals=refusals)
