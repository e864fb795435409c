"""Looking at a path that may not exist yet: one ``stat`` for the ``--drive`` parser, the file
target and the block-device lookup, each raising its own error for anything but "missing".

Sources: stat(2), lstat(2).
"""

from __future__ import annotations

import os
from collections.abc import Callable

__all__ = ["stat_or_none"]


def stat_or_none(
    path: str, *, error: Callable[[OSError], Exception], follow: bool = True
) -> os.stat_result | None:
    """``os.stat`` of ``path`` (``os.lstat`` when ``follow`` is False), or None when it does not
    exist.

    Args:
        path: the path.
        error: builds the exception for any other ``OSError`` (``EACCES``, ``ELOOP``, ...).
        follow: follow a final symlink (``stat``) or look at the link itself (``lstat``).

    Raises:
        Exception: ``error(exc)``, chained to the ``OSError``.
    """
    try:
        return os.stat(path) if follow else os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise error(exc) from exc
