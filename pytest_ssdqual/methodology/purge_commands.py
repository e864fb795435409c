"""Running the purge tools: argv in, ``(returncode, output)`` out, never a terminal.

Every command of a purge (``nvme``, ``hdparm``, ``blkdiscard``) runs with LC_ALL=C and stdin from
``/dev/null``, so no tool can wait on or change its behaviour because of a terminal; the helpers
here also read a tool's "unknown option" answer (older nvme-cli and util-linux) and quote the
first line of its output in the purge record.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Callable, Sequence

__all__ = ["CommandRunner", "first_line", "run_command", "unknown_option"]

#: ``(argv, timeout_s) -> (returncode, stdout + stderr)``; replaced in tests.
CommandRunner = Callable[[Sequence[str], float], tuple[int, str]]


def run_command(argv: Sequence[str], timeout_s: float) -> tuple[int, str]:
    """Run ``argv`` with stdin from ``/dev/null`` (no tool may prompt, wait on or look at a
    terminal) and ``LC_ALL=C``; ``(returncode, stdout + stderr)``, 124 on a timeout, 127 when it
    cannot start."""
    env = dict(os.environ, LC_ALL="C")
    try:
        proc = subprocess.run(list(argv), capture_output=True, text=True, timeout=timeout_s,
                              env=env, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return 124, f"timed out after {timeout_s:.0f} s"
    except OSError as exc:
        return 127, str(exc)
    return proc.returncode, (proc.stdout + proc.stderr).strip()


def unknown_option(output: str, option: str) -> bool:
    """True when a tool's ``output`` says it does not know ``option`` (getopt_long's
    ``unrecognized option '--force'`` / ``invalid option -- 'f'``; nvme-cli's argconfig prints
    the former)."""
    text = output.lower()
    if option.startswith("--"):
        return f"unrecognized option '{option}'" in text or f"unrecognized option `{option}'" \
            in text or f"unknown option '{option}'" in text
    letter = option.lstrip("-")
    return f"invalid option -- '{letter}'" in text or f"invalid option -- {letter}" in text


def first_line(text: str) -> str:
    """The first non-blank line of a tool's output, stripped (``'no output'`` when none)."""
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return "no output"
