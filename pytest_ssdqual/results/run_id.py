"""Run ids of the results store: chosen when pytest configures, before anything else of the
package is imported (``plugin.options.session_run_id``)."""

from __future__ import annotations

import datetime as dt
import secrets


def new_run_id(now: dt.datetime | None = None) -> str:
    """A new, sortable run id: UTC start with microseconds and 6 random hex digits
    (``20261130T101500.123456Z-3fa2c1``), so runs started in the same second still sort by
    start time."""
    moment = now or dt.datetime.now(dt.UTC)
    return f"{moment:%Y%m%dT%H%M%S.%fZ}-{secrets.token_hex(3)}"
