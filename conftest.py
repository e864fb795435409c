"""Repository-level pytest configuration: the markers and paths of the project's own tests.

pytest loads this file for every run whose rootdir is this checkout, ``pytest suites/`` (a
qualification, ``./run.sh``) included, so it holds nothing a qualification run would feel:
marker names and which folders a bare ``pytest .`` collects. The options every run of the
checkout shares (``--strict-markers``, warnings as errors) stay in pyproject.toml's
``[tool.pytest.ini_options]``; the fixtures and hooks the tests share (pytester, the results
folder outside the repo, the real-input folder) in ``tests/conftest.py``, which only a run of
``tests/`` loads.
"""

from __future__ import annotations

import pytest

#: The project's own test markers (``--strict-markers``: an unregistered one is an error).
MARKERS = {
    "e2e": "end-to-end test on a real block device or file with the real fio (needs root for "
           "devices)",
    "e2e_twins_all": "a half of a twin's whole-profile run that ./test.sh runs only with "
                     "SSDQUAL_ALL_TWINS=1 (2-2.5 min each; ./test.sh and CI run one half of "
                     "one of the L85C 128 GB, the JMF612 and the E12 per commit, or both halves "
                     "of the SSDQUAL_TWIN names; every twin is in an ablation)",
    "e2e_beside_unit": "an e2e_solo test whose figures need CPU time promptly but not the "
                       "host's devices alone (a seed twin's profile half): ./test.sh runs it "
                       "beside the unit+plugin tier, which it runs at nice 19",
    "e2e_solo": "end-to-end test that needs the host to itself (timings, time-outs or the process "
                "table): ./test.sh runs these one at a time, after the other end-to-end tests ran "
                "four at a time",
}

#: Folders a bare ``pytest`` or ``pytest .`` here never collects: the qualification suites and
#: the lab example (they qualify a drive: run them by naming them, ``pytest suites/``, which
#: pytest then collects: an ignore applies only to folders below the paths given), and output
#: or tool folders that hold no tests of the project. The project's tests are ``tests/``
#: (``testpaths``).
collect_ignore = ["suites", "examples", "docs", "tools", "scripts", "site", "build",
                  "ssdqual-results", "allure-results", "report"]


def pytest_configure(config: pytest.Config) -> None:
    """Register ``MARKERS``."""
    for name, text in MARKERS.items():
        config.addinivalue_line("markers", f"{name}: {text}")
