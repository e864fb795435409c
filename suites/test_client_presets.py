"""CrystalDiskMark-style client presets: SEQ1M Q8T1, SEQ1M Q1T1, RND4K Q32T16 and RND4K Q1T1,
read and write, at two test sizes (the size ratio shows a drive slowing on the larger test)."""

import pytest

#: run order (plugin.ordering): random
pytestmark = pytest.mark.ssdqual_phase("random")


@pytest.mark.destructive
def test_client_presets(run_methodology):
    run_methodology("client_presets")
