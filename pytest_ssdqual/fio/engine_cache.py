"""Remember which fio I/O engine works on this host (and fio's version), so a pytest run does
not probe for them.

``FioRunner.ioengine`` finds the engine by running fio (``io_uring``, else ``libaio``, else
``psync``): about 0.28 s for fio 3.33 on Linux 6.18, most of it fio's own start-up (it waits
100 ms for its job processes, then reaps them in 10 ms steps: ``strace -f -tt``), paid by every
pytest process (each xdist worker too) before its first workload. The answer depends only on
the fio binary and on what the kernel lets this process do, so it is kept, with the version
``fio --version`` printed (another 25 ms before the first workload), in a small JSON file in
the user's cache folder (XDG Base Directory Specification: ``$XDG_CACHE_HOME``, else
``~/.cache``)::

    ~/.cache/pytest-ssdqual/fio-engine.json
    {"version": 2, "entries": {"/usr/bin/fio": {"key": {...}, "engine": "io_uring",
                                                "reason": "", "fio_version": "fio-3.33",
                                                "probed_at": 1796515200.0}}}

An entry is used only when its whole ``key`` (``host_key``: the fio binary's real path,
mtime, size and inode; the kernel release and build; ``kernel.io_uring_disabled`` and
``kernel.io_uring_group``; this process's user, group, supplementary groups and effective
capabilities, on which io_uring depends when ``io_uring_disabled`` is 1; its seccomp mode and
filter count; its locked-memory limit, which io_uring needed before Linux 5.12) equals
the one read now, its engine is one of the three, its version reads as
fio's and it is less than ``MAX_AGE_S`` old. Anything else -- a missing, unreadable, corrupt
or foreign file, another fio, another kernel, an old entry -- is a miss and fio is probed
again: the cache never answers for a host it was not written on. Only a working engine is
stored, and a fallback (libaio, psync) only when io_uring (and libaio, for psync) failed for a
lasting reason (``lasting_failure``: EPERM, ENOSYS, an engine fio does not have), with that
reason; a passing one (ENOMEM, a probe killed or timed out) is not kept, so the next run tries
io_uring again. A probe that finds no engine raises its error every time, in the same words. A
cache folder that cannot be written costs only the probe; ``forget_probe`` drops an entry a job
proved wrong.
"""

from __future__ import annotations

import json
import os
import re
import resource
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

__all__ = ["ENGINES", "MAX_AGE_S", "ProbeAnswer", "cached_probe", "default_cache_file",
           "forget_probe", "host_key", "lasting_failure", "store_probe"]

#: The engines ``FioRunner.ioengine`` chooses between, best first.
ENGINES = ("io_uring", "libaio", "psync")
#: An entry older than this (seconds) is probed again: a week.
MAX_AGE_S = 7 * 86400.0
_VERSION = 2  # 2: the reason of a fallback engine
_FIO_VERSION = re.compile(r"fio-\d+\.\d+\S*")
#: What fio or the kernel says when io_uring can never work for this process on this host:
#: EPERM (``io_uring_disabled``, seccomp, ``io_uring_group``), ENOSYS (not built into the
#: kernel), an engine fio was built without.
_LASTING = re.compile(r"Operation not permitted|Function not implemented|not loadable|"
                      r"[Uu]nknown ioengine|err=(1|38)/", re.IGNORECASE)


class ProbeAnswer(NamedTuple):
    """What the probe found: ``engine`` (one of ``ENGINES``) and ``fio_version``, the text
    ``fio --version`` printed (``'fio-3.33'``), checked against ``MIN_FIO_VERSION``;
    ``reason``: why io_uring was not taken (a fallback engine's lasting reason, e.g.
    ``'io_uring: ... Operation not permitted'``), ``""`` for io_uring."""

    engine: str
    fio_version: str
    reason: str = ""


def lasting_failure(text: str) -> bool:
    """Whether an io_uring probe's failure (fio's stderr, or the error text) says io_uring
    will fail again for this process on this host (EPERM, ENOSYS, unknown or unloadable
    engine) rather than now only (ENOMEM, killed, timed out, anything else)."""
    return _LASTING.search(text) is not None


def default_cache_file() -> Path:
    """``$XDG_CACHE_HOME/pytest-ssdqual/fio-engine.json``; ``~/.cache`` when the variable is
    unset, empty or not an absolute path (the XDG Base Directory Specification's rule)."""
    base = os.environ.get("XDG_CACHE_HOME", "")
    root = Path(base) if os.path.isabs(base) else Path.home() / ".cache"
    return root / "pytest-ssdqual" / "fio-engine.json"


def _read_text(path: str) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            return fh.read()
    except OSError:
        return ""


def host_key(executable: str) -> dict[str, object]:
    """What the engine probe's answer depends on, for fio at ``executable``.

    Returns:
        a JSON-able dict: ``fio`` (real path), ``mtime_ns``, ``size``, ``inode``; ``kernel``
        (``uname`` release and version); ``io_uring_disabled`` and ``io_uring_group`` (the
        sysctls' text, ``""`` before Linux 6.6); ``euid``, ``egid``, ``groups`` (sorted
        supplementary group ids) and ``cap_eff`` (the ``CapEff`` line of
        ``/proc/self/status``): with ``io_uring_disabled`` 1 only CAP_SYS_ADMIN or the
        ``io_uring_group`` may use io_uring; ``seccomp`` (this process's ``Seccomp`` and
        ``Seccomp_filters`` lines); ``memlock`` (``RLIMIT_MEMLOCK`` soft, hard).

    Raises:
        OSError: ``executable`` cannot be stat'ed.
    """
    real = os.path.realpath(executable)
    st = os.stat(real)
    uname = os.uname()
    status = _read_text("/proc/self/status").splitlines()
    return {
        "fio": real, "mtime_ns": st.st_mtime_ns, "size": st.st_size, "inode": st.st_ino,
        "kernel": f"{uname.release} {uname.version}",
        "io_uring_disabled": _read_text("/proc/sys/kernel/io_uring_disabled").strip(),
        "io_uring_group": _read_text("/proc/sys/kernel/io_uring_group").strip(),
        "euid": os.geteuid(), "egid": os.getegid(), "groups": sorted(set(os.getgroups())),
        "cap_eff": [line.strip() for line in status if line.startswith("CapEff")],
        "seccomp": [line.strip() for line in status if line.startswith("Seccomp")],
        "memlock": list(resource.getrlimit(resource.RLIMIT_MEMLOCK)),
    }


def _entries(cache_file: Path) -> dict[str, object]:
    """The file's entries, or ``{}`` when it is missing, unreadable, not JSON or not ours."""
    try:
        doc = json.loads(cache_file.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if not isinstance(doc, dict) or doc.get("version") != _VERSION:
        return {}
    entries = doc.get("entries")
    return entries if isinstance(entries, dict) else {}


def cached_probe(cache_file: Path, key: dict[str, object], *,
                 now: float | None = None) -> ProbeAnswer | None:
    """The answer stored for ``key`` (``host_key``), or None: no such entry, another key, an
    entry older than ``MAX_AGE_S`` or from the future, an unknown engine, a version that is not
    fio's, a corrupt file."""
    entry = _entries(cache_file).get(str(key.get("fio")))
    if not isinstance(entry, dict) or entry.get("key") != key:
        return None
    engine, version = entry.get("engine"), entry.get("fio_version")
    probed_at, reason = entry.get("probed_at"), entry.get("reason", "")
    if (engine not in ENGINES or not isinstance(version, str)
            or not _FIO_VERSION.fullmatch(version) or not isinstance(probed_at, (int, float))
            or not isinstance(reason, str)):
        return None
    age = (time.time() if now is None else now) - probed_at
    return ProbeAnswer(str(engine), version, reason) if 0 <= age < MAX_AGE_S else None


def forget_probe(cache_file: Path, fio: str) -> bool:
    """Drop the entry of the fio at real path ``fio`` (``host_key``'s ``fio``), e.g. after a
    job failed to set up the cached engine. Returns True when an entry was removed and the
    file rewritten; False otherwise (nothing raised)."""
    entries = _entries(cache_file)
    if entries.pop(fio, None) is None:
        return False
    return _write(cache_file, entries)


def store_probe(cache_file: Path, key: dict[str, object], answer: ProbeAnswer) -> bool:
    """Keep ``answer`` for ``key`` in ``cache_file`` (other fio binaries' entries kept),
    written to a temporary file and renamed over it, so a reader never sees half a file.

    Returns:
        True when written; False when the folder or file cannot be written (nothing raised:
        the next run probes again).

    Raises:
        ValueError: the engine is not one of ``ENGINES``, or the version not fio's.
    """
    if answer.engine not in ENGINES or not _FIO_VERSION.fullmatch(answer.fio_version):
        raise ValueError(f"not a probe's answer: {answer!r} (engine one of {', '.join(ENGINES)}, "
                         "version as 'fio-3.33')")
    entries = _entries(cache_file)
    entries[str(key["fio"])] = {"key": key, "engine": answer.engine, "reason": answer.reason,
                                "fio_version": answer.fio_version, "probed_at": time.time()}
    return _write(cache_file, entries)


def _write(cache_file: Path, entries: dict[str, object]) -> bool:
    """Write ``entries`` to ``cache_file`` atomically; False when it cannot be written."""
    text = json.dumps({"version": _VERSION, "entries": entries}, indent=1, sort_keys=True)
    try:
        cache_file.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".fio-engine-", dir=cache_file.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(text)
            os.replace(tmp, cache_file)
        except BaseException:
            os.unlink(tmp)
            raise
    except OSError:
        return False
    return True
