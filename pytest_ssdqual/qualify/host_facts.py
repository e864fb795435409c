"""Facts of the host a session runs on, for reports (the Allure environment, run.json)."""

from __future__ import annotations

import os
import platform
import socket

__all__ = ["host_facts"]


def host_facts() -> dict[str, str]:
    """Kernel, host name, machine and user id for reports: ``{"kernel": "6.1.0-...", "host":
    ..., "machine": "x86_64", "user": "0"}``."""
    return {
        "kernel": platform.release(),
        "host": socket.gethostname(),
        "machine": platform.machine(),
        "user": str(os.getuid()),
    }
