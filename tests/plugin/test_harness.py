"""The project's own test harness (``tests/conftest.py``): what its inner pytest sessions load."""

from __future__ import annotations

import pytest


def test_inner_sessions_load_the_plugin_and_not_hypothesis(pytester: pytest.Pytester) -> None:
    """pytester's runs keep every installed plugin a lab's run has (pytest-ssdqual, Allure,
    xdist) but Hypothesis', which only the project's own property tests use."""
    pytester.makepyfile("def test_a():\n    pass\n")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    result.assert_outcomes(passed=1)
    [plugins] = [line for line in result.outlines if line.startswith("plugins:")]
    assert "ssdqual-" in plugins and "allure-pytest-" in plugins, plugins
    assert "hypothesis" not in plugins, plugins
