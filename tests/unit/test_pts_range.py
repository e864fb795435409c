"""The SNIA PTS active range: parsing and its byte area."""

import pytest

from pytest_ssdqual.errors import ConfigError
from pytest_ssdqual.methodology.pts_range import ActiveRange

MIB = 2**20


def test_the_default_is_every_lba():
    assert ActiveRange().area(100 * MIB, 4096) == (0, 100 * MIB)
    assert ActiveRange().text == "0:100"


@pytest.mark.parametrize("text", ["25:75", "25%:75%", "(25:75)"])
def test_a_window_not_at_lba_0(text):
    r = ActiveRange.parse(text, source="--pts-active-range")
    assert (r.start_pct, r.end_pct, r.size_pct) == (25, 75, 50)
    assert r.area(100 * MIB, 128 * 1024) == (25 * MIB, 50 * MIB)


def test_the_area_is_rounded_down_to_whole_blocks():
    # 10 % of 1,000,000 bytes is 100,000: 24 whole 4 KiB blocks (98,304 bytes); 20 % is 48
    assert ActiveRange(10, 20).area(1_000_000, 4096) == (98_304, 98_304)


@pytest.mark.parametrize("text", ["50", "75:25", "0:101", "a:b", "-5:50", "1:2:3"])
def test_a_bad_range_names_the_option_and_the_fix(text):
    with pytest.raises(ConfigError) as e:
        ActiveRange.parse(text, source="--pts-active-range")
    assert "--pts-active-range" in str(e.value) and "START:END" in str(e.value)


def test_a_window_smaller_than_one_block_is_refused():
    with pytest.raises(ValueError, match="no whole 1048576-byte block"):
        ActiveRange(0, 1).area(50 * MIB, MIB)
