"""A lab's own tests, written with the fixture API (docs/qualifying.md: "Writing your own tests").

``fio_workload`` runs an fio pattern built from parameters on the drive under test
(``ssd_drive``, one per ``--drive``) and judges its figures against the limits of the
pattern's id (``fio:rand_read_4k_qd4``) in ``thresholds/`` -- the same way as the catalog
workloads of ``suites/``.
"""

from __future__ import annotations

import pytest


def test_random_read_qd4(fio_workload):
    """4 KiB random reads at queue depth 4: limits under ``fio:rand_read_4k_qd4``."""
    outcome = fio_workload(rw="randread", bs="4k", iodepth=4)
    assert outcome.metrics["read.iops"] > 0


def test_sequential_read_two_threads(fio_workload):
    """1 MiB sequential reads, QD8 on each of 2 threads: limits under
    ``fio:seq_read_1m_qd8_t2`` (figures are the sum of both threads)."""
    fio_workload(rw="read", bs="1m", iodepth=8, numjobs=2)


@pytest.mark.destructive
def test_mixed_30_percent_writes(fio_workload):
    """8 KiB random, 70 % reads / 30 % writes, QD16 (a database-like mix): limits under
    ``fio:rand_w30_8k_qd16``. It writes: marked ``destructive``, skipped on an unconfirmed
    drive."""
    fio_workload(rw="randrw", bs="8k", iodepth=16, write_pct=30)


def test_drive_facts(ssd_drive):
    """``ssd_drive`` is the drive context: identity, controller/NAND, limits."""
    assert ssd_drive.identity.capacity_bytes > 0
