"""``./test.sh`` routes test paths and -m to its tiers (e2e-twin beside unit+plugin -n 3, e2e
-n 4, e2e-solo one at a time), collecting only (``--collect-only``): what each tier would run
is what it prints."""

from __future__ import annotations

import os
import subprocess

from ..conftest import REPO


def _test_sh(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["./test.sh", *args, "--collect-only", "-q", "-p", "no:cacheprovider"],
                          cwd=REPO, capture_output=True, text=True, timeout=300, check=False)


def _collected(out: str) -> list[str]:
    """The ``N/M tests collected`` / ``N tests collected`` lines, in tier order."""
    return [line.split(" in ")[0] for line in out.splitlines() if " collected" in line]


def test_an_e2e_path_goes_to_both_e2e_tiers_split_by_the_solo_mark() -> None:
    proc = _test_sh("tests/e2e/test_power_loss_e2e.py::"
                    "test_an_emulated_cut_kills_the_running_fio_and_the_device_stops_answering")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # the test is e2e_solo: the parallel tier selects none, the solo tier runs it
    assert "no test selected in the e2e-twin tier" in proc.stderr
    assert "no test selected in the e2e tier" in proc.stderr
    assert _collected(proc.stdout) == ["no tests collected (1 deselected)",
                                       "no tests collected (1 deselected)",
                                       "1 test collected"], proc.stdout
    assert "test_an_emulated_cut_kills_the_running_fio" in proc.stdout
    assert "unit+plugin" not in proc.stderr


def test_a_users_mark_is_combined_with_each_e2e_tiers_own() -> None:
    proc = _test_sh("tests/e2e/test_power_loss_e2e.py", "-m", "not e2e_solo")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # the parallel tier keeps the file's other tests; the solo tier's own mark and the user's
    # exclude each other, so it selects nothing (not a failure)
    assert "no test selected in the e2e-solo tier" in proc.stderr
    assert "test_an_emulated_cut_kills_the_running_fio" not in proc.stdout  # e2e_solo
    assert "test_refusals_skip_before_the_switch_is_touched" in proc.stdout


def test_a_unit_path_runs_in_the_unit_tier_only() -> None:
    proc = _test_sh("tests/unit/test_layout.py", "-mnot e2e")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "test_layout.py" in proc.stdout and "tests/e2e" not in proc.stdout
    assert "e2e" not in proc.stderr


def test_the_twin_tier_runs_beside_the_unit_tier_and_its_output_follows() -> None:
    """With unit and e2e paths, the e2e-twin tier runs in the background beside the unit+plugin
    tier (reniced to 19), and its output is printed after it, under its name; the twin test is
    in no other tier."""
    proc = _test_sh("tests/unit/test_layout.py", "tests/e2e/test_twins_e2e.py",
                    "tests/e2e/test_power_loss_e2e.py")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    unit_end = proc.stdout.index("test_layout.py")
    twin_head = proc.stdout.index("test.sh: the e2e-twin tier (it ran beside the unit+plugin tier)")
    assert unit_end < twin_head
    twin_part = proc.stdout[twin_head:]
    twin_ids = [line for line in proc.stdout.splitlines()
                if "test_a_seed_twin_passes_every_limit" in line]
    assert len(twin_ids) == 1 and twin_ids[0] in twin_part, twin_ids
    assert "test_an_emulated_cut_kills_the_running_fio" in proc.stdout


def test_python_keeps_its_bytecode_caches_where_the_environment_says_not_to() -> None:
    """``PYTHONDONTWRITEBYTECODE=1`` (set on some CI hosts) would make each of the tests' many
    Python processes compile the package again and pytest rewrite every test module's asserts
    in each worker: ``./test.sh`` unsets it, so the rewritten test module is cached."""
    cache = REPO / "tests" / "unit" / "__pycache__"
    pattern = "test_dio_align.cpython-*-pytest-*.pyc"
    for old in cache.glob(pattern):
        old.unlink()
    proc = subprocess.run(
        ["./test.sh", "tests/unit/test_dio_align.py", "--collect-only", "-q",
         "-p", "no:cacheprovider"],
        cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
        env={**os.environ, "PYTHONDONTWRITEBYTECODE": "1"})
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "test_dio_align.py" in proc.stdout
    assert list(cache.glob(pattern)), sorted(p.name for p in cache.glob("*.pyc"))[:5]
