"""Drive health before and after: SMART / NVMe health read
before the drive's first test and after its last, judged against the limits of workload
``health`` (findings as 0/1 flags, values, and changes such as
``health: {media_errors: {max_delta: 0}}``), on top of the built-in limits
(``pytest_ssdqual/drive/health_checks.py``: DISK FAILING always fails). Read-only: it never writes.
Skipped with the reason on targets without SMART (loop, zram, scratch file)."""

import pytest


@pytest.mark.ssdqual_family("health")
@pytest.mark.ssdqual_phase("first")
def test_health_at_start(drive_health):
    drive_health.check_start()


@pytest.mark.ssdqual_family("health")
@pytest.mark.ssdqual_last
def test_health_at_session_end(drive_health):
    drive_health.check_session_end()
