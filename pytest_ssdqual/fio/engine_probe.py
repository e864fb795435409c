"""One run of fio's I/O-engine probe (``FioRunner.ioengine``) and how a job's failure to set
up its engine reads (``FioRunner.engine_failed``). Sources: fio 3.33's messages
(``ioengines.c``: ``io engine %s init failed``, ``engine %s not loadable``,
``failed to init engine data``; ``engines/io_uring.c``: ``td_verror(..., "io_queue_init")``).
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from pytest_ssdqual.errors import FioError
from pytest_ssdqual.fio.parse import parse_fio_output

__all__ = ["PROBE_TIMEOUT_S", "engine_setup_failed", "probe_engine"]

#: Seconds one engine probe may run (it reads 64 KiB) before it is killed.
PROBE_TIMEOUT_S = 60.0
_SETUP_FAILED = re.compile(r"io engine \S+ init failed|engine \S+ not loadable|"
                           r"failed to init engine|func=io_queue_init")


def probe_engine(fio: str, engine: str, probe_file: Path, env: dict[str, str]) -> str | None:
    """Read ``probe_file`` (64 KiB, 4 KiB buffered reads, ``--readonly``) with fio at ``fio``
    and ``engine``.

    Returns:
        None when it works; else why not: fio's stderr (all of it: ``lasting_failure`` reads
        it), ``exit status N``, the JSON error, or that the probe timed out.
    """
    argv = [fio, "--name=probe", f"--ioengine={engine}", f"--filename={probe_file}",
            "--size=64k", "--bs=4k", "--rw=read", "--readonly", "--output-format=json"]
    try:
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S,
                              env=env)
    except subprocess.TimeoutExpired:
        return f"the probe ran longer than {PROBE_TIMEOUT_S:.0f} s and was killed"
    if proc.returncode != 0:
        return proc.stderr.strip() or f"exit status {proc.returncode}"
    try:
        parse_fio_output(proc.stdout, source=f"fio {engine} probe")
    except FioError as exc:
        return str(exc)
    return None


def engine_setup_failed(stderr: str) -> bool:
    """Whether a job's fio ``stderr`` says it could not set up its I/O engine."""
    return _SETUP_FAILED.search(stderr) is not None
