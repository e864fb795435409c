"""Running a drive tool (smartctl, nvme-cli) and reading its JSON, for identity and health.

A tool runs with ``LC_ALL=C`` (locale-free numbers), no stdin and a ``TOOL_TIMEOUT_S`` timeout;
a missing tool, a timeout or output without JSON is a note in the caller's ``sources``, never an
error: sysfs alone still identifies a drive.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable, Sequence

from pytest_ssdqual.bounds import load_json

__all__ = ["TOOL_TIMEOUT_S", "Runner", "default_run", "run_tool", "run_with_stderr"]

#: ``argv -> (returncode, stdout)``; raises ``FileNotFoundError`` when the program is missing.
Runner = Callable[[list[str]], tuple[int, str]]

#: Seconds a helper tool (smartctl, nvme) may take before it is abandoned.
TOOL_TIMEOUT_S = 30


def default_run(argv: list[str]) -> tuple[int, str]:
    """Run a helper tool with ``LC_ALL=C`` (locale-free numbers), no stdin, a 30 s timeout."""
    code, out, _err = run_with_stderr(argv)
    return code, out


def run_with_stderr(argv: Sequence[str]) -> tuple[int, str, str]:
    """:func:`default_run` that also returns stderr: ``(returncode, stdout, stderr)``.

    Raises:
        OSError: the program cannot start. subprocess.TimeoutExpired: it ran past
            ``TOOL_TIMEOUT_S``.
    """
    proc = subprocess.run(
        list(argv),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        errors="replace",
        timeout=TOOL_TIMEOUT_S,
        env={**os.environ, "LC_ALL": "C"},
        check=False,
    )
    return proc.returncode, proc.stdout, proc.stderr


def _json_document(text: str) -> dict[str, object] | None:
    """The JSON object in a tool's stdout (tolerating warning lines before the ``{``); None
    when there is none or it cannot be read (invalid, nested too deeply, a number too long)."""
    start = text.find("{")
    if start < 0:
        return None
    try:
        doc = load_json(text[start:])
    except json.JSONDecodeError:
        return None
    return doc if isinstance(doc, dict) else None


def run_tool(
    run: Runner, argv: list[str], tool: str, notes: list[str]
) -> dict[str, object] | None:
    """Run ``argv``; return its JSON document, or None after noting why there is none."""
    try:
        returncode, stdout = run(argv)
    except FileNotFoundError:
        notes.append(f"{tool} (not installed)")
        return None
    except subprocess.TimeoutExpired:
        notes.append(f"{tool} (timed out after {TOOL_TIMEOUT_S} s)")
        return None
    except OSError as exc:
        notes.append(f"{tool} (could not run: {exc.strerror or exc})")
        return None
    doc = _json_document(stdout)
    if doc is None:
        notes.append(f"{tool} (exit {returncode}, no JSON output)")
    return doc
