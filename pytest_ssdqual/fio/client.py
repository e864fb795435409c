"""fio's client/server mode (fio HOWTO, "Client/Server"), client side: the command line, and
the client's output brought to the shape of a local run, so every reader of fio's output
(figures, tails, bytes written, verify, logs) reads a remote run as it reads a local one.

What differs in a client's output, and what is done about it (fio 3.33 measured here; fio 3.43
from a real two-client file described in ``../shared/cases/real/fio-logs/SOURCES.md``, BUGLOG
B30):

* jobs are listed under ``client_stats``, not ``jobs``; with more than one server an aggregate
  entry ``"All clients"`` is added (its ``job_runtime`` is the sum over the servers). The local
  shape keeps the entries of the one server asked and drops the aggregate.
* ``"global options"`` is an object in fio 3.33 (one server, no ``hostname``), a **list** of
  objects in fio 3.43, one per server, each with ``hostname`` and ``port`` (the same options
  duplicated). The local shape has the one object of the server asked, without those keys.
* each ``client_stats`` entry carries ``hostname``/``port``, but an entry may lack them
  (fio 3.33's global options; a reconstruction of older clients): an entry without a host
  name is taken as the one server's; an entry naming *another* server is refused.
* per-second logs (``write_bw_log`` and friends) are sent back by the server and written by
  the client in its working folder with the server's name appended (``log_bw.1.log.10.0.0.7``,
  ``..._bw.1.log.::1``); they are renamed to the local names (``log_bw.1.log``).
* ``--readonly`` must come *after* ``--client=``: fio 3.33 keeps options given before
  ``--client`` for the client itself, and a write job then ran on the server (measured).
* A client whose server failed to parse the job exits 0 with no JSON; one whose server
  vanished exits 1 printing ``client: host=... disconnected`` or ``timeout on SEND_ETA``:
  :func:`client_failure_note` says so in one line.
"""

from __future__ import annotations

import ipaddress
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_ssdqual.errors import FioError, FioOutputError
from pytest_ssdqual.fio.extract import extract_json_document

__all__ = ["CLIENT_SUFFIX", "FioServer", "client_address", "client_argv", "client_failure_note",
           "localise_client_output", "rename_client_logs", "settle_client_run"]

#: The client's own output file is kept beside the localised one as ``<name>.client.json``.
CLIENT_SUFFIX = ".client.json"

_AGGREGATE = "All clients"
_LOG = re.compile(r"^(?P<base>.+_(?:bw|iops|lat|clat|slat|hist)\.\d+\.log)\.(?P<host>.+)$")
_LOST = re.compile(r"(client: host=\S+ disconnected|timeout on \w+|failed to connect to \S+|"
                   r"connect: [^\n]+)")


def client_address(host: str, port: int) -> str:
    """fio's ``--client=`` value for a server (fio HOWTO, "Client/Server":
    ``[ip:|ip6:|sock:]hostname[,port]``): ``ip:10.0.0.7,8765``, ``ip6:fd00::7,8765`` (IPv6
    needs ``ip6:``), ``lab-07,8765`` for a host name."""
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return f"{host},{port}"
    return f"{'ip6' if address.version == 6 else 'ip'}:{address.compressed},{port}"


@dataclass(frozen=True)
class FioServer:
    """A ``fio --server`` a run goes to: ``host`` (IPv4, IPv6 without brackets, or a name) and
    ``port``; ``on_failure``: called when a run on it failed or was stopped (a lost server, a
    timeout), returns a note for the report -- a remote drive stops the jobs the server may
    still run there (``RemoteTarget.stop_leftover_fio``)."""

    host: str
    port: int
    on_failure: Callable[[], str] | None = field(default=None, compare=False, repr=False)

    def after_failure(self) -> str:
        """``on_failure()`` as a line for fio's stderr (``''`` when there is none); never
        raises: the error that led here must not be masked."""
        if self.on_failure is None:
            return ""
        try:
            note = self.on_failure()
        except Exception as exc:  # noqa: BLE001 - reported, never masks the run's own error
            note = f"stopping the run's fio on {self} failed: {exc}"
        return f"\n[pytest-ssdqual: {note}]" if note else ""

    @property
    def address(self) -> str:
        """The ``--client=`` value (:func:`client_address`)."""
        return client_address(self.host, self.port)

    def __str__(self) -> str:
        return f"[{self.host}]:{self.port}" if ":" in self.host else f"{self.host}:{self.port}"


def client_argv(fio: str, client: str, output_path: Path, *, readonly: bool,
                extra_args: tuple[str, ...] | list[str], job_path: Path) -> list[str]:
    """``fio --client=ADDR [--readonly] --output-format=json+ --output=FILE ... JOB``:
    ``--readonly`` right after ``--client`` so the server enforces it (module docstring)."""
    argv = [fio, f"--client={client}"]
    if readonly:
        argv.append("--readonly")
    return [*argv, "--output-format=json+", f"--output={output_path}", *extra_args,
            str(job_path)]


def _host_of(entry: dict[str, Any]) -> tuple[str, int | None] | None:
    name = entry.get("hostname")
    if not isinstance(name, str) or not name:
        return None
    port = entry.get("port")
    return name, port if isinstance(port, int) else None


def _ours(entry: dict[str, Any], host: str, port: int) -> bool:
    """True for an entry of the server asked, or one that does not name its server."""
    named = _host_of(entry)
    if named is None:
        return True
    name, their_port = named
    return name.strip("[]").lower() == host.lower() and their_port in (None, port)


def localise_client_output(text: str, *, host: str, port: int, source: str) -> str:
    """A client's output text -> the same run in the shape of a local run's output.

    Args:
        text: what ``fio --client`` wrote to ``--output`` (maybe with text around the JSON).
        host, port: the server asked (``DriveSpec.host``/``port``).
        source: the file, for messages.

    Returns:
        ``text`` with its JSON document replaced by one with ``jobs`` (this server's
        ``client_stats`` entries, no aggregate and no other server's) and ``global
        options`` (this server's object, without ``hostname``/``port``); text before and
        after the document is kept. ``text`` unchanged when it holds no fio document (fio's
        own error then speaks).

    Raises:
        FioOutputError: every job entry names a server other than ``host``:``port``.
    """
    try:
        before, doc, after = extract_json_document(text, source=source)
    except FioError:
        return text
    stats = doc.get("client_stats")
    if not isinstance(stats, list):
        return text
    entries = [e for e in stats if isinstance(e, dict) and e.get("jobname") != _AGGREGATE]
    jobs = [{k: v for k, v in e.items() if k not in ("hostname", "port")}
            for e in entries if _ours(e, host, port)]
    if entries and not jobs:
        named = _host_of(entries[0])
        raise FioOutputError(
            f"{source}: job {entries[0].get('jobname')!r} ran on {named}, not on the server "
            f"asked ({host}, port {port})", raw_output=text)
    local = {k: v for k, v in doc.items() if k not in ("client_stats", "global options")}
    local["global options"] = _global_options(doc.get("global options"), host, port)
    local["jobs"] = jobs
    return before + json.dumps(local, indent=2) + "\n" + after


def _global_options(raw: Any, host: str, port: int) -> dict[str, Any]:
    """fio 3.33's one object, or fio 3.43's list (one per server): this server's options."""
    candidates = raw if isinstance(raw, list) else [raw]
    objects = [c for c in candidates if isinstance(c, dict)]
    chosen = next((c for c in objects if _host_of(c) and _ours(c, host, port)), None)
    if chosen is None:
        chosen = next((c for c in objects if _host_of(c) is None), objects[0] if objects else {})
    return {k: v for k, v in chosen.items() if k not in ("hostname", "port")}


def rename_client_logs(workdir: Path) -> list[Path]:
    """Rename the per-second logs a client wrote (``<name>.log.<server>``) to the names a
    local run gives them (``<name>.log``), so ``fio.logs`` finds them. Returns the new paths.

    A log of an earlier run in the same folder under that name is replaced, as a local fio run
    overwrites it.
    """
    renamed = []
    for path in sorted(workdir.iterdir()):
        match = _LOG.match(path.name)
        if not match:
            continue
        target = workdir / match.group("base")
        os.replace(path, target)
        renamed.append(target)
    return renamed


def client_failure_note(output: str, stderr: str, *, server: str) -> str:
    """One line on a client that lost its server (``fio server 10.0.0.7:8765: connection
    lost (client: host=10.0.0.7 disconnected)``), or ``''`` when fio printed no such line."""
    found = _LOST.findall(stderr + "\n" + output)
    if not found:
        return ""
    reasons = "; ".join(dict.fromkeys(f.strip() for f in found))
    return f"fio server {server}: connection lost or refused ({reasons})"


def settle_client_run(workdir: Path, output_path: Path, server: FioServer, returncode: int,
                      stderr: str) -> str:
    """After ``fio --client`` ended: keep its output as ``<name>.client.json``, write the
    local shape (:func:`localise_client_output`) to ``output_path``, rename its logs
    (:func:`rename_client_logs`). Returns ``stderr``, led by :func:`client_failure_note` when
    the client lost its server, with ``server.after_failure()``'s note when it failed.

    Raises:
        FioOutputError: the output names a server other than ``server``.
    """
    try:
        text = output_path.read_bytes().decode("utf-8", errors="replace")
    except FileNotFoundError:
        text = None
    if text is not None:
        output_path.with_name(output_path.stem + CLIENT_SUFFIX).write_text(text)
        output_path.write_text(localise_client_output(
            text, host=server.host, port=server.port, source=str(output_path)))
    rename_client_logs(workdir)
    note = client_failure_note(text or "", stderr, server=str(server))
    if returncode != 0:
        stderr += server.after_failure()
    return f"{note}\n{stderr}" if note else stderr
