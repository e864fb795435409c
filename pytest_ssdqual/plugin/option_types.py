"""The value parsers (argparse ``type=``) of the plugin's options: ``--scratch-size``,
``--ssd-profile`` and ``--repeat``. A bad value is argparse's usage error naming the option."""

from __future__ import annotations

import argparse
import dataclasses
import math
import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pytest_ssdqual.catalog.workloads import RunProfile

__all__ = ["MIN_SCRATCH_BYTES", "parse_profile", "parse_repeat", "parse_size",
           "temperature_interval"]

#: Smallest ``--scratch-size``: 1 MiB.
MIN_SCRATCH_BYTES = 1024 * 1024


def parse_size(value: str) -> int:
    """``--scratch-size`` parser: ``512M``, ``4G``, ``1073741824`` -> bytes (binary units)."""
    m = re.fullmatch(r"\s*(\d+)\s*([KMGT]?)(i?B)?\s*", value, re.IGNORECASE)
    if not m:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not a size: write e.g. 512M, 4G or a byte count"
        )
    size = int(m.group(1)) * 1024 ** "_KMGT".index(m.group(2).upper() or "_")
    if size < MIN_SCRATCH_BYTES:
        raise argparse.ArgumentTypeError(
            f"{value!r} is {size} bytes: the scratch size must be at least 1M "
            f"({MIN_SCRATCH_BYTES} bytes)"
        )
    return size


def parse_profile(value: str) -> str:
    from pytest_ssdqual.catalog.workloads import PROFILES

    if value not in PROFILES:
        raise argparse.ArgumentTypeError(
            f"unknown profile {value!r}: choose one of {', '.join(PROFILES)}"
        )
    return value


def parse_repeat(value: str) -> int:
    """``--repeat`` parser: a whole number >= 1."""
    if not value.strip().isdigit() or int(value) < 1:
        raise argparse.ArgumentTypeError(
            f"{value!r} is not a repeat count: give a whole number >= 1, e.g. 3"
        )
    return int(value)


def temperature_interval(profile: RunProfile, ini: str) -> RunProfile:
    """``profile`` with ini ``ssdqual_temperature_interval_s`` as its temperature sampling
    interval (seconds; 0 turns sampling off); ``""``: the profile's own.

    Raises:
        ConfigError: not 0 nor a number of seconds >= 0.2 (key
            ``ssdqual_temperature_interval_s``).
    """
    if not str(ini).strip():
        return profile
    try:
        seconds = float(ini)
    except ValueError:
        seconds = math.nan
    if not (math.isfinite(seconds) and (seconds == 0 or seconds >= 0.2)):
        # below 0.2 s the sampler would run nvme-cli / smartctl back to back for the whole test
        from pytest_ssdqual.errors import ConfigError

        raise ConfigError(f"ssdqual_temperature_interval_s = {ini!r} is not a number of "
                          "seconds of 0.2 or more", key="ssdqual_temperature_interval_s",
                          fix="give seconds between two samples, e.g. 5 (at least 0.2; 0: off)")
    return dataclasses.replace(profile, temperature_interval_s=seconds)
