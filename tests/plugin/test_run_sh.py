"""``./run.sh``, the README's main command: its arguments go to pytest, and a suite file given
selects that file instead of every suite (it used to be added to ``suites/``: with
``--confirm-destroy`` every destructive suite would have run on top of the one asked for)."""

from __future__ import annotations

import re
import subprocess

import pytest

from ..conftest import REPO


def _collected(*args: str) -> int:
    out = subprocess.run([str(REPO / "run.sh"), *args, "--collect-only", "-q"], cwd=REPO,
                         capture_output=True, text=True, timeout=300)
    match = re.search(r"^(\d+)(?:/\d+)? tests? collected", out.stdout, re.M)
    assert match, out.stdout[-2000:] + out.stderr[-2000:]
    return int(match[1])


@pytest.mark.parametrize("selection, expected", [
    (["suites/test_sequential.py"], 3),
    (["suites/test_sequential.py", "suites/test_random.py"], 8),
    (["suites/test_sequential.py::test_sequential_read"], 2),
])
def test_a_suite_file_given_selects_that_file_only(selection: list[str], expected: int) -> None:
    assert _collected(*selection) == expected


def test_without_a_test_path_every_suite_runs() -> None:
    every = _collected()
    assert every == _collected("suites/") > 8
    assert _collected("-k", "test_sequential") == 3  # an option's value is no test path
