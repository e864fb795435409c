"""The results store on a full disk. Killed writers, two writers and a corrupt
index are tested with the store itself (``test_store.py``); this adds the disk that fills up:
a real 4 MiB tmpfs (root), filled to the last block while a run is being written.

Every failed write is a ``StoreError`` naming what could not be stored (the test is broken, the
session goes on), no half-written file or folder is published, the earlier run stays complete
and indexed, and once space is freed the index is rebuilt from the folders.
"""

from __future__ import annotations

import contextlib
import errno
import os
from pathlib import Path

import pytest

from pytest_ssdqual.results.run_folder import RUN_FILE, StoredRun, StoreError
from pytest_ssdqual.results.store import ResultsStore

from ..conftest import small_tmpfs
from .test_store import _record, _run_ids, _write_run

EARLIER = "20261130T100000Z-00000a"
LATER = "20261130T110000Z-00000b"


def _fill(folder: Path) -> Path:
    """Write zeros into ``folder/filler`` until the filesystem is full."""
    filler = folder / "filler"
    chunk = b"\0" * 65536
    with open(filler, "wb") as fh:
        try:
            while True:
                fh.write(chunk)
                fh.flush()
        except OSError as exc:
            assert exc.errno == errno.ENOSPC
    # the last partial chunk may still fit a page: take it too
    with contextlib.suppress(OSError), open(filler, "ab") as fh:
        for _ in range(16):
            fh.write(b"\0" * 4096)
            fh.flush()
    return filler


def test_a_full_disk_fails_the_store_cleanly_and_keeps_the_earlier_run(tmp_path: Path) -> None:
    with small_tmpfs(tmp_path / "small", "4M") as small:
        root = small / "results"
        _write_run(str(root), EARLIER, ["/dev/sdb"], 400.0)
        store = ResultsStore(root)
        big = tmp_path / "job-output.json"  # outside the small filesystem
        big.write_bytes(b"x" * (1024 * 1024))
        filler = _fill(small)

        with pytest.raises(StoreError) as info:
            store.write_workload(LATER, _record("/dev/sdb", "seq_write_128k_qd32", 300.0),
                                 [{"fio-output.json": big}])
        assert "cannot store seq_write_128k_qd32 of /dev/sdb" in str(info.value)
        assert "No space left on device" in str(info.value)
        later = store.run_dir(LATER)
        assert list(later.rglob("record.json")) == []  # nothing half-written is published
        assert list(later.rglob(".tmp-*")) == []  # and the folder being assembled is gone

        with pytest.raises(StoreError, match=f"cannot write {later / RUN_FILE}.*No space left"):
            store.finish_run(LATER, {"run_id": LATER, "started_utc": LATER[:16],
                                     "passed": True})
        assert not (later / RUN_FILE).exists()
        assert [p.name for p in later.glob(".tmp-*")] == []

        # the earlier run is untouched: complete on disk, loadable as a baseline
        run = StoredRun.load(store.run_dir(EARLIER))
        assert run.passed and len(run.records) == 3
        # sqlite cannot even open the index (its -shm file needs space): a clear StoreError,
        # and the good index is not mistaken for a corrupt one and set aside
        with pytest.raises(StoreError, match="cannot read the index .*full"):
            _run_ids(store)
        assert list(root.glob("index.sqlite.corrupt-*")) == []

        filler.unlink()  # space again: the same index answers, and rebuilds from the folders
        assert _run_ids(store) == [EARLIER]
        assert store.rebuild_index() == 1
        assert _run_ids(store) == [EARLIER]
        with pytest.raises(StoreError, match=f"no run '{LATER}': not a run id"):
            store.load(LATER)  # the failed run never became a run
        assert os.statvfs(small).f_bfree > 0
