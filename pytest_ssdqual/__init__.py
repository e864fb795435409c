"""pytest-ssdqual: qualify SSDs with fio and judge every figure against per-drive limits.

The domain modules (``workloads``, ``fio``, ``identity``, ``inventory``, ``drive``,
``thresholds``) are plain Python and never import pytest; ``plugin`` is the thin pytest glue.
"""

__version__ = "0.1.0"


def installed_version(distribution: str) -> str:
    """An installed distribution's version (``importlib.metadata``), ``"unknown"`` when it is
    not installed: for run records and messages that name the pytest / pytest-xdist in use."""
    from importlib import metadata

    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "unknown"
