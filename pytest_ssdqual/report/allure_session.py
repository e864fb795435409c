"""Allure session files, written once by the controller at session end (``session_report``),
so ``--clean-alluredir`` under pytest-xdist cannot wipe them: ``environment.properties``,
``categories.json`` (``CATEGORIES``), ``executor.json`` and the global attachments. Plain file
writing: no Allure API call.
"""

from __future__ import annotations

import json
import os
import time
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "CATEGORIES",
    "write_categories",
    "write_environment",
    "write_executor",
    "write_global_attachments",
]


def write_environment(
    alluredir: Path,
    *,
    drives: dict[str, dict[str, str]],
    profile: str,
    fio_version: str,
    host: dict[str, str],
) -> Path:
    """Write ``environment.properties``: identity, controller, NAND, firmware of every drive,
    fio version, kernel, profile and host. Returns the file's path."""
    props: dict[str, str] = {"profile": profile, "fio": fio_version}
    props.update(host)
    for i, (drive, facts) in enumerate(sorted(drives.items())):
        prefix = "drive" if len(drives) == 1 else f"drive{i + 1}"
        props[prefix] = drive
        for key, value in facts.items():
            if key != "drive":
                props[f"{prefix}.{key}"] = value
    alluredir.mkdir(parents=True, exist_ok=True)
    path = alluredir / "environment.properties"
    path.write_text("".join(f"{_escape(k)}={_escape(v)}\n" for k, v in props.items()))
    return path


def _escape(text: str) -> str:
    """Java .properties escaping for keys/values (backslash, separators, newlines)."""
    out = text.replace("\\", "\\\\").replace("\n", "\\n")
    for ch in "=:#!":
        out = out.replace(ch, "\\" + ch)
    return out.replace(" ", "\\ ") if out.startswith(" ") else out


#: Allure categories (``categories.json``; the same list goes into the Allure 3 report config).
#: A result goes in every category that matches (none: Allure's own *Product defects* /
#: *Test defects*), so the patterns are disjoint. Regexes must match the whole message in
#: Allure 2 (Java ``Pattern.compile(regex, DOTALL).matcher(message).matches()``) and are
#: searched in Allure 3 (JavaScript ``test``), so they are anchored and use ``[\s\S]*``. The
#: message is the one allure-pytest stores: a test failed with ``pytest.fail`` reads
#: ``Failed: <text>``.
CATEGORIES: list[dict[str, Any]] = [
    {"name": "Regression vs baseline", "matchedStatuses": ["failed"],
     "messageRegex": r"^(?:Failed: )?REGRESSION:[\s\S]*"},
    {"name": "Drive health failing", "matchedStatuses": ["failed"],
     "messageRegex": r"^[^\n]*drive health fails[\s\S]*"},
    {"name": "Limit violated", "matchedStatuses": ["failed"],
     "messageRegex": r"^[\s\S]*limit\(s\) violated[\s\S]*"},
    {"name": "Interrupted (SIGINT/SIGTERM)", "matchedStatuses": ["broken"],
     "messageRegex": r"^INTERRUPTED:[\s\S]*"},
    {"name": "Worker crashed", "matchedStatuses": ["broken"],
     "messageRegex": r"^worker '[^']*' crashed[\s\S]*"},
    {"name": "Device or fio error", "matchedStatuses": ["broken"],  # every other broken one
     "messageRegex": r"^(?!INTERRUPTED:|worker '[^']*' crashed)[\s\S]*"},
    {"name": "Refused for safety", "matchedStatuses": ["skipped"],
     "messageRegex": r"^(?!(?:Skipped: )?UNDECIDED:)[\s\S]*refused[\s\S]*"},
    {"name": "Undecided vs baseline (too few runs for the noise)", "matchedStatuses": ["skipped"],
     "messageRegex": r"^(?:Skipped: )?UNDECIDED:[\s\S]*"},
]


def write_categories(alluredir: Path) -> Path:
    """Write ``categories.json`` (``CATEGORIES``). Returns the file's path."""
    alluredir.mkdir(parents=True, exist_ok=True)
    path = alluredir / "categories.json"
    path.write_text(json.dumps(CATEGORIES, indent=2) + "\n")
    return path


def write_executor(alluredir: Path, *, host: str, started_s: float, profile: str,
                   env: Mapping[str, str] | None = None) -> Path:
    """Write ``executor.json``: who ran the session. A CI run (GitHub Actions, GitLab CI,
    Jenkins variables) names its build and URL; otherwise the host and start time.

    Args:
        host: host name. started_s: session start, epoch seconds. profile: run profile.
        env: environment variables to read CI facts from (default ``os.environ``).
    """
    env = os.environ if env is None else env
    stamp = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(started_s))
    executor: dict[str, Any] = {
        "name": "pytest-ssdqual", "type": "pytest",
        "buildOrder": int(started_s),
        "buildName": f"{host} {stamp} ({profile})",
        "reportName": f"SSD qualification {stamp}",
    }
    if env.get("GITHUB_RUN_ID"):
        server = env.get("GITHUB_SERVER_URL", "")
        repo = env.get("GITHUB_REPOSITORY", "")
        executor.update(name="GitHub Actions", type="github",
                        buildName=f"{env.get('GITHUB_WORKFLOW', 'workflow')} "
                                  f"#{env.get('GITHUB_RUN_NUMBER', env['GITHUB_RUN_ID'])}",
                        buildUrl=f"{server}/{repo}/actions/runs/{env['GITHUB_RUN_ID']}")
    elif env.get("CI_PIPELINE_ID"):
        executor.update(name="GitLab CI", type="gitlab",
                        buildName=f"pipeline #{env['CI_PIPELINE_ID']}",
                        buildUrl=env.get("CI_PIPELINE_URL", ""))
    elif env.get("BUILD_URL"):
        executor.update(name="Jenkins", type="jenkins",
                        buildName=env.get("BUILD_TAG", executor["buildName"]),
                        buildUrl=env["BUILD_URL"])
    alluredir.mkdir(parents=True, exist_ok=True)
    path = alluredir / "executor.json"
    path.write_text(json.dumps(executor, indent=2) + "\n")
    return path


def write_global_attachments(
    alluredir: Path, attachments: Sequence[tuple[str, bytes, str, str]]
) -> Path:
    """Write session-wide attachments (Allure 3 shows them under "Global Attachments"; Allure 2
    ignores them): the drive summaries and their charts.

    Args:
        attachments: (name, content, MIME type, file extension) each, e.g.
            ``("summary: Phison E12 (fw ECFM11.0, S/N 123)", b"<html>...", "text/html", "html")``.

    Returns:
        The written ``<uuid>-globals.json``.
    """
    alluredir.mkdir(parents=True, exist_ok=True)
    stamp = int(time.time() * 1000)
    entries = []
    for name, content, mime, ext in attachments:
        source = f"{uuid.uuid4()}-attachment.{ext}"
        (alluredir / source).write_bytes(content)
        entries.append({"name": name, "source": source, "type": mime, "timestamp": stamp})
    path = alluredir / f"{uuid.uuid4()}-globals.json"
    path.write_text(json.dumps({"attachments": entries, "errors": []}, indent=1) + "\n")
    return path
