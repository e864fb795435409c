"""Workloads built from parameters, found by id: the inverse of ``methodology.params.FioParams.id``.

A lab test runs any fio pattern (``fio_workload(rw="randread", bs="4k", iodepth=4)``), and its
limits are written in a threshold file under ``fio:`` + the pattern's id
(``fio:rand_read_4k_qd4: {read.iops: {min: 60000}}``; ``threshold_workload``): the prefix names
a pattern on purpose, so a mistyped catalog id (``seq_write_128k_qd23``) is still an error.
``find_workload(id)`` gives the catalog workload of that id, else the parametric one the id
names, else None.

Id grammar (docs/qualifying.md, "Writing your own tests"):
``{seq|rand}_{read|write|wNN}_{bs}_qd{N}[_t{T}]``:
``wNN`` a mix with NN % writes (fio ``rwmixread`` = 100 - NN), ``bs`` in bytes or ``k``/``m``
(binary units, as fio's ``bs=4k``), ``_tT`` with T >= 2 threads (``numjobs``).
"""

from __future__ import annotations

import re

from pytest_ssdqual.catalog.workloads import CATALOG, Workload, get_workload

_ID = re.compile(r"(?P<kind>seq|rand)_(?:(?P<dir>read|write)|w(?P<w>\d{1,3}))_(?P<bs>\d+)"
                 r"(?P<unit>[km]?)_qd(?P<qd>[1-9]\d*)(?:_t(?P<t>[1-9]\d*))?")
_UNIT = {"": 1, "k": 1024, "m": 1024 * 1024}
#: fio ``rw=`` of an id's kind and direction (``w`` stands for a mix).
_RW = {("seq", "read"): "read", ("seq", "write"): "write", ("rand", "read"): "randread",
       ("rand", "write"): "randwrite", ("seq", "w"): "rw", ("rand", "w"): "randrw"}


def parametric_workload(workload_id: str, title: str | None = None) -> Workload | None:
    """The plain fio workload ``workload_id`` names (``rand_w30_4k_qd4``), or None when it is
    no such id (a transfer size that is no whole number of 512-byte sectors, a write share
    over 100 %, ``_t1``). ``title`` defaults to the id."""
    m = _ID.fullmatch(workload_id)
    if m is None:
        return None
    bs_bytes = int(m["bs"]) * _UNIT[m["unit"]]
    write_pct = None if m["w"] is None else int(m["w"])
    numjobs = int(m["t"] or 1)
    if bs_bytes < 512 or bs_bytes % 512 or (write_pct or 0) > 100 or m["t"] == "1":
        return None
    family = "mixed" if write_pct is not None else (
        "sequential" if m["kind"] == "seq" else "random")
    return Workload(workload_id, title or workload_id, _RW[m["kind"], m["dir"] or "w"],
                    bs_bytes, int(m["qd"]), numjobs,
                    rwmixread_pct=None if write_pct is None else 100 - write_pct, family=family)


def find_workload(workload_id: str) -> Workload | None:
    """The catalog workload ``workload_id``, else the parametric one it names, else None."""
    return CATALOG.get(workload_id) or parametric_workload(workload_id)


#: Prefix of an fio pattern's id as a threshold-file key (``fio:rand_read_4k_qd4``).
PATTERN_PREFIX = "fio:"


def threshold_workload(key: str) -> Workload | None:
    """The workload a threshold file's limits key names: a catalog id, or ``fio:`` and an fio
    pattern's id (the pattern's workload, or the catalog's when the id is a catalog one)."""
    if key.startswith(PATTERN_PREFIX):
        return find_workload(key.removeprefix(PATTERN_PREFIX))
    return CATALOG.get(key)


def workload_by_id(workload_id: str) -> Workload:
    """``find_workload``, or ``KeyError`` naming the known catalog ids."""
    return find_workload(workload_id) or get_workload(workload_id)
