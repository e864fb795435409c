"""pytest-ssdqual: qualify SSDs with fio and judge every figure against per-drive limits.

The domain modules (``workloads``, ``fio``, ``identity``, ``inventory``, ``drive``,
``thresholds``) are plain Python and never import pytest; ``plugin`` is the thin pytest glue.
"""

__version__ = "0.1.0"
