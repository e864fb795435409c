"""A workload built from fio parameters (``rw``, ``bs``, ``iodepth``, ``numjobs``, write mix) for
the ``fio_workload`` fixture: validated by ``methodology.params.FioParams``, named by its id
(``rand_read_4k_qd4``), the catalog workload when the id is one.

Plain Python (no pytest).
"""

from __future__ import annotations

import re

from pytest_ssdqual.catalog.parametric import find_workload, parametric_workload
from pytest_ssdqual.catalog.workloads import Workload
from pytest_ssdqual.methodology.params import FioParams

_BS = re.compile(r"\s*(\d+)\s*([kKmM]?)\s*")


def parse_bs(bs: int | str) -> int:
    """Transfer size in bytes from ``4096``, ``"4k"``, ``"128K"``, ``"1m"`` (binary units, as
    fio's ``bs=``).

    Raises:
        ValueError: not a size, naming the value.
    """
    if isinstance(bs, int):
        return bs
    m = _BS.fullmatch(str(bs))
    if m is None:
        raise ValueError(f"bs={bs!r} is not a transfer size: write e.g. 4096, '4k' or '1m'")
    return int(m.group(1)) * {"": 1, "k": 1024, "m": 1024 * 1024}[m.group(2).lower()]


def pattern_workload(rw: str, bs: int | str = "4k", iodepth: int = 1, numjobs: int = 1,
                     write_pct: int | None = None) -> Workload:
    """The workload of an fio pattern: the catalog one of the same id, else a plain fio
    workload of that id (limits are written under the id, like a catalog workload's).

    Raises:
        ValueError: a bad parameter (``FioParams``), naming it, its value and what is allowed.
    """
    params = FioParams(rw, parse_bs(bs), iodepth, numjobs, write_pct)
    found = find_workload(params.id)
    if found is not None and found.is_methodology:
        raise ValueError(f"{params.id} is a methodology test, not an fio pattern")
    workload = found or parametric_workload(params.id, title=params.title)
    assert workload is not None, params.id  # every FioParams id parses
    return workload
