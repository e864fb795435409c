"""Every Allure call of the project lives here (STYLE.md row 11).

Labels: parent suite = drive, feature = methodology family, story = workload; controller, NAND
and firmware as tags; drive serial and firmware as parameters with ``excluded=True`` so history
follows the test across drives. Measured numbers are never parameters. Without ``--alluredir``
allure-pytest registers no listener and these calls do nothing.

Session files (``environment.properties``) are written once, by the controller, at session end,
so ``--clean-alluredir`` under pytest-xdist cannot wipe them.
"""

from __future__ import annotations

import html
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING

import allure

from .errors import FioError

if TYPE_CHECKING:
    from .fio.job import JobPlan
    from .fio.runner import FioRun
    from .session import DriveContext, WorkloadOutcome
    from .workloads import Workload


def label_test(ctx: DriveContext, workload: Workload) -> None:
    """Title, suite hierarchy, tags and excluded parameters for one workload test."""
    ident = ctx.identity
    controller = ctx.assignment.controller or "unknown controller"
    nand = ctx.assignment.nand or "unknown NAND"
    allure.dynamic.title(f"{workload.title} — {controller} / {nand} / {ident.firmware}")
    allure.dynamic.parent_suite(f"{ident.model} (fw {ident.firmware}, S/N {ident.serial})")
    allure.dynamic.feature(workload.family)
    allure.dynamic.story(workload.id)
    allure.dynamic.tag(f"controller:{controller}", f"nand:{nand}", f"firmware:{ident.firmware}")
    allure.dynamic.parameter("drive serial", ident.serial, excluded=True)
    allure.dynamic.parameter("firmware", ident.firmware, excluded=True)


def attach_run(plan: JobPlan, run: FioRun | None) -> None:
    """Attach the fio job file, fio's raw output and the per-second logs as CSV."""
    allure.attach(plan.text, name="fio job", attachment_type=allure.attachment_type.TEXT,
                  extension="fio")
    if run is None:
        return
    if run.raw_output:
        allure.attach(run.raw_output, name="fio output (JSON)",
                      attachment_type=allure.attachment_type.JSON)
    if run.stderr.strip():
        allure.attach(run.stderr, name="fio stderr", attachment_type=allure.attachment_type.TEXT)
    for log in sorted(run.job_path.parent.glob("log_*.log")):
        allure.attach(
            "time_ms,value,direction,bs,offset\n" + log.read_text(),
            name=f"per-second log {log.name}",
            attachment_type=allure.attachment_type.CSV,
        )


def attach_failure_output(exc: FioError) -> None:
    """Attach what fio printed when it failed (the test is broken with the error); when it
    printed nothing (killed, not installed) the attachment says so, with the reason."""
    text = exc.raw_output if exc.raw_output and exc.raw_output.strip() else (
        f"(fio printed nothing: {exc})"
    )
    allure.attach(text, name="fio raw output (failed run)",
                  attachment_type=allure.attachment_type.TEXT)


def write_crashed_result(alluredir: Path, nodeid: str, message: str, trace: str = "") -> Path:
    """Write a *broken* Allure result for a test whose pytest-xdist worker crashed.

    The worker died inside the test, so allure-pytest never wrote its result: without this the
    test would be a hole in the report. Called on the controller (``pytest_handlecrashitem``).
    Name, full name and suite follow allure-pytest's scheme for the node id (the ``@group``
    suffix pytest-xdist's loadgroup adds is dropped), so the test lands where it belongs.

    Args:
        alluredir: the ``--alluredir`` folder.
        nodeid: the crashed test's node id, e.g. ``suites/test_x.py::test_y[loop0]@loop0``.
        message: why the result is broken (``worker 'gw0' crashed while running ...``).
        trace: longer text (the crash report), if any.

    Returns:
        The written ``*-result.json`` file.
    """
    from allure_commons.model2 import Label, Status, StatusDetails, TestResult
    from allure_commons.utils import md5, now, uuid4
    from allure_pytest.utils import ParsedPytestNodeId
    from attr import asdict

    clean = nodeid.split("@", 1)[0]
    parsed = ParsedPytestNodeId(clean)
    class_part = ("." + ".".join(parsed.class_names)) if parsed.class_names else ""
    full_name = f"{parsed.package}{class_part}#{parsed.test_function}"
    stamp = now()
    result = TestResult(
        uuid=uuid4(),
        name=clean.rsplit("::", 1)[-1],
        fullName=full_name,
        historyId=md5(clean),
        testCaseId=md5(full_name),
        status=Status.BROKEN,
        statusDetails=StatusDetails(message=message, trace=trace or None),
        start=stamp,
        stop=stamp,
        labels=[
            Label(name="suite", value=parsed.module),
            Label(name="framework", value="pytest"),
        ],
    )
    data = asdict(result, filter=lambda _, v: v or v is False)  # as AllureFileLogger does
    alluredir.mkdir(parents=True, exist_ok=True)
    path = alluredir / f"{result.uuid}-result.json"
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, path)
    return path


def attach_verdicts(outcome: WorkloadOutcome) -> None:
    """Attach the verdict table (HTML) and the metrics (JSON)."""
    rows = []
    for v in outcome.verdicts:
        limit = v.limit
        rows.append(
            "<tr>"
            + "".join(
                f"<td>{html.escape(cell)}</td>"
                for cell in (
                    v.metric,
                    "-" if v.measured is None else f"{v.measured:.6g}",
                    str(limit) if limit else "-",
                    "-" if v.margin_pct is None else f"{v.margin_pct:+.1f} %",
                    v.status.upper(),
                    str(limit.provenance) if limit else "",
                )
            )
            + "</tr>"
        )
    table = (
        "<table border='1' cellpadding='4' style='border-collapse:collapse'>"
        "<tr><th>metric</th><th>measured</th><th>limit</th><th>margin</th><th>verdict</th>"
        "<th>provenance</th></tr>" + "".join(rows) + "</table>"
    )
    allure.attach(table, name="verdicts", attachment_type=allure.attachment_type.HTML)
    allure.attach(json.dumps(outcome.metrics, indent=2, sort_keys=True), name="metrics",
                  attachment_type=allure.attachment_type.JSON)


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
