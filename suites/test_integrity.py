"""Data integrity: 128 KiB sequential and 4 KiB random writes with CRC32C checksums over the
span, each read back in a separate fio run that checks every block (fio verify). Any bad block
fails the test with the first bad offset; a run that did not verify every written byte fails
too. Both are implicit requirements no threshold profile can waive."""

import pytest

#: run order (plugin.ordering): state
pytestmark = pytest.mark.ssdqual_phase("state")


@pytest.mark.destructive
def test_data_integrity(run_methodology):
    run_methodology("data_integrity")
