"""``ssdqual report RESULTS -o DIR``: a static single-file HTML report, built offline.

Uses the Allure 3 command-line tool (npm package ``allure``, TypeScript on Node.js, no Java),
which ``scripts/setup.sh`` installs into the project's ``tools/`` folder
(``tools/node_modules/.bin/allure``, version pinned in ``tools/package.json``). Nothing is
fetched when a report is built.

How it is called (Allure 3.18; see ``allure awesome --help``)::

    allure awesome RESULTS -o DIR --single-file --history-path DIR/history.jsonl \\
        --name TITLE -c allurerc.json

* ``awesome``, not ``generate``: only it has ``--single-file`` and ``--history-path``.
* Allure does not clean its output folder: ``DIR`` is removed first -- only when it is empty or
  holds a report this command built (marker file ``.ssdqual-report``), never anything else.
* The categories (``allure_session.CATEGORIES``) go into the config file: Allure 3's report
  ignores ``categories.json`` in the results.
* History: Allure appends one line per build to the history file; the report folder keeps it as
  ``DIR/history.jsonl`` so the next build can continue it (``--history DIR_OF_PREVIOUS_REPORT``
  or ``--history FILE``) and trends show across runs (firmware over firmware).
* The page embeds an analytics script that cannot load offline; it is stripped.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from pytest_ssdqual.bounds import load_json
from pytest_ssdqual.errors import ConfigError, SsdQualError
from pytest_ssdqual.report.allure_session import CATEGORIES
from pytest_ssdqual.results.stored import load_results

#: The Allure 3 release the project pins (tools/package.json).
ALLURE_VERSION = "3.18.0"

#: Marker file in a report folder this module built (allows removing the folder next time).
MARKER = ".ssdqual-report"

#: File name of the history inside a report folder.
HISTORY_FILE = "history.jsonl"

TOOLS_DIR = Path(__file__).resolve().parents[2] / "tools"

_FIX = (
    "run scripts/setup.sh (./run.sh and ./test.sh run it on first use): it installs Node.js "
    f"when missing and allure@{ALLURE_VERSION} into tools/ -- or set SSDQUAL_ALLURE to an "
    "Allure 3 executable"
)


class ReportToolMissing(SsdQualError):
    """Node.js or the Allure 3 command-line tool is not installed; the message names the fix."""


@dataclass(frozen=True)
class ReportBuild:
    """A built report: ``index`` (the single HTML file), ``history`` (its history file),
    ``tests`` (results in the folder), ``duration_s`` (Allure's run time)."""

    index: Path
    history: Path
    tests: int
    duration_s: float


def find_allure(explicit: str | None = None, env: Mapping[str, str] | None = None) -> Path:
    """The Allure 3 executable: ``explicit``, else ``$SSDQUAL_ALLURE``, else the project's
    ``tools/node_modules/.bin/allure``.

    Raises:
        ReportToolMissing: Node.js is not on ``PATH``, or no Allure executable is found.
    """
    env = os.environ if env is None else env
    if shutil.which("node", path=env.get("PATH")) is None:
        raise ReportToolMissing(f"Node.js (node) is not installed: {_FIX}")
    candidates = [c for c in (explicit, env.get("SSDQUAL_ALLURE")) if c]
    for candidate in candidates:
        path = Path(candidate)
        if path.is_file() and os.access(path, os.X_OK):
            return path
        raise ReportToolMissing(f"Allure executable {candidate} not found: {_FIX}")
    local = TOOLS_DIR / "node_modules" / ".bin" / "allure"
    if local.is_file():
        return local
    raise ReportToolMissing(f"the Allure 3 command-line tool is not installed ({local}): {_FIX}")


def strip_analytics(page: str) -> str:
    """Remove the analytics scripts Allure embeds (an external ``<script src=https://...>``
    and the inline ``gtag`` set-up): they cannot load offline and phone home online."""
    page = re.sub(r"<script\b[^>]*\bsrc=[\"']https?://[^\"']*[\"'][^>]*>\s*</script>", "", page)
    return re.sub(
        r"<script\b[^>]*>(?:(?!</script>).)*?\bgtag\((?:(?!</script>).)*</script>", "", page,
        flags=re.S,
    )


def _prepare_output(out: Path, results: Path) -> None:
    """Remove ``out`` when it is safe: missing, empty, or a report built here.

    Raises:
        ConfigError: ``out`` is or contains the results folder, is a file, or holds other data.
    """
    out_r, res_r = out.resolve(), results.resolve()
    if out_r == res_r or out_r in res_r.parents:
        raise ConfigError(f"output folder {out} would contain the results {results}",
                          key="-o", fix="choose another output folder, e.g. report/")
    if not out.exists():
        return
    if not out.is_dir():
        raise ConfigError(f"{out} is a file, not a folder", key="-o",
                          fix="choose another output folder")
    if any(out.iterdir()) and not (out / MARKER).exists():
        raise ConfigError(
            f"{out} is not empty and is not a report built by ssdqual (no {MARKER}): not "
            "removing it", key="-o", fix="choose a new or empty output folder")
    shutil.rmtree(out)


def _read_history(history: Path | None) -> bytes:
    """The history lines to continue: ``history`` itself (a file), or ``history.jsonl`` of a
    previous report folder; empty when there is none yet."""
    if history is None:
        return b""
    source = history / HISTORY_FILE if history.is_dir() else history
    if not source.exists():
        if history.is_dir():
            raise ConfigError(f"{history} holds no {HISTORY_FILE}", key="--history",
                              fix="give a report folder built by ssdqual report, or a file")
        return b""
    data = source.read_bytes()
    for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), start=1):
        if line.strip():
            try:
                load_json(line)  # nested too deeply, a number too long: not JSON either
            except ValueError:
                raise ConfigError("not an Allure history file (each line must be JSON)",
                                  file=str(source), line=number, key="--history",
                                  fix="give the history.jsonl of a previous report") from None
    return data


def default_title(results: Path) -> str:
    """``SSD qualification: <model> (fw X, S/N Y)[, ...]`` from the stored results."""
    titles: list[str] = []
    for t in load_results(results):
        f = t.drive
        title = f"{f.get('model', f.get('drive', '?'))} (fw {f.get('firmware', '?')})"
        if title not in titles:
            titles.append(title)
    return "SSD qualification: " + ", ".join(titles)


def build_report(
    results: Path,
    out: Path,
    *,
    history: Path | None = None,
    name: str | None = None,
    allure: str | None = None,
    timeout_s: float = 600.0,
) -> ReportBuild:
    """Build the single-file HTML report of ``results`` into ``out`` (``out/index.html``).

    Args:
        results: an Allure results folder (``--alluredir``).
        out: the report folder; replaced when it holds a previous ssdqual report.
        history: a previous report folder (its ``history.jsonl``) or a history file; the new
            run is appended (a file is updated in place, and copied into ``out``).
        name: report title; default from the drives in the results.
        allure: the Allure 3 executable (default: ``find_allure``).

    Raises:
        ConfigError: no results, an unsafe output folder, an unreadable history file.
        ReportToolMissing: Node.js or Allure not installed.
        SsdQualError: Allure failed (its output is in the message).
    """
    tests = len(load_results(results))  # ConfigError when missing or empty
    exe = find_allure(allure)
    previous = _read_history(history)
    title = name or default_title(results)
    _prepare_output(out, results)
    out.mkdir(parents=True)
    (out / MARKER).write_text(f"built by ssdqual report from {results.resolve()}\n")
    history_path = out / HISTORY_FILE
    history_path.write_bytes(previous)
    with tempfile.TemporaryDirectory(prefix="ssdqual-allurerc-") as tmp:
        config = Path(tmp) / "allurerc.json"
        config.write_text(json.dumps({"name": title, "categories": CATEGORIES}, indent=1))
        argv = [str(exe), "awesome", str(results.resolve()), "-o", str(out.resolve()),
                "--single-file", "--history-path", str(history_path.resolve()),
                "--name", title, "-c", str(config)]
        env = dict(os.environ, NO_COLOR="1", FORCE_COLOR="0", ALLURE_NO_ANALYTICS="true")
        start = time.monotonic()
        try:
            proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout_s,
                                  env=env, cwd=tmp)
        except subprocess.TimeoutExpired:
            raise SsdQualError(
                f"allure ran longer than {timeout_s:.0f} s and was stopped") from None
        duration = time.monotonic() - start
    index = out / "index.html"
    if proc.returncode != 0 or not index.exists():
        detail = "\n".join((proc.stderr or proc.stdout).strip().splitlines()[:15])
        raise SsdQualError(f"allure failed (exit status {proc.returncode}):\n{detail}")
    index.write_text(strip_analytics(index.read_text()))
    if history is not None and not history.is_dir() and history.resolve() != history_path.resolve():
        history.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(history_path, history)
    return ReportBuild(index, history_path, tests, duration)
