"""Every Allure call of the project lives here (STYLE.md row 11).

Labels: parent suite = drive, feature = methodology family, story = workload, severity from the
family (integrity and health are critical); controller, NAND and firmware as tags. Parameters:
``drive identity`` (the serial, else the path) is part of the history id, so two drives running
the same test are two tests with a history each (never "retries" of one another); the drive
path, serial and firmware are parameters with ``excluded=True``, so a drive's history follows
it across firmware builds and /dev names. Measured numbers are never parameters. A label the
test sets with an ``@allure`` decorator is not set again (Allure would show it twice).

A test whose pytest-xdist worker died, or that SIGINT/SIGTERM stopped, is *broken*, never passed
(``write_crashed_result``, ``mark_current_broken``).

Steps: ``phase(name)`` around each phase (purge, precondition, rounds, idle, measure, judge).
Attachments: the drive's facts, the verdict table (HTML and JSON), the metrics, PNG charts
(``plots`` via ``chart_data``), the fio job, fio's output and per-second logs (CSV). The names
of what summaries read back are in ``stored_results``. Without ``--alluredir`` allure-pytest
registers no listener: these calls do nothing and no chart is drawn.

Session files (``environment.properties``, ``categories.json``, ``executor.json``, the global
attachments) are written once, by the controller, at session end (``session_report``), so
``--clean-alluredir`` under pytest-xdist cannot wipe them.
"""

from __future__ import annotations

import html
import json
import os
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import allure

from pytest_ssdqual.errors import FioError
from pytest_ssdqual.methodology.figure_state import AS_FOUND_NOTE, figure_states, read_as_found, verdict_word
from pytest_ssdqual.methodology.curves import curves_to_json
from pytest_ssdqual.results.stored import ATTACH_DRIVE, ATTACH_VERDICTS_JSON, LOG_CSV_HEADER, VerdictRecord

if TYPE_CHECKING:
    from pytest_ssdqual.fio.job import JobPlan
    from pytest_ssdqual.fio.runner import FioRun
    from pytest_ssdqual.methodology.base import MethodologyOutcome
    from pytest_ssdqual.qualify.session import DriveContext, WorkloadOutcome
    from pytest_ssdqual.catalog.workloads import Workload


#: Methodology families whose failure is critical (data integrity, drive health); every
#: other family is ``normal``. A suite can still set ``@allure.severity`` itself.
CRITICAL_FAMILIES: frozenset[str] = frozenset({"integrity", "health"})

#: Labels this module sets dynamically (a decorator on the test wins: never both).
DYNAMIC_LABELS: tuple[str, ...] = ("parentSuite", "feature", "story", "severity", "tag")


def severity_for(family: str) -> str:
    """Allure severity of a methodology family: ``critical`` for integrity and health,
    ``normal`` otherwise."""
    return "critical" if family in CRITICAL_FAMILIES else "normal"


#: The parameter that carries the drive into Allure's history id.
DRIVE_IDENTITY_PARAM = "drive identity"


def drive_identity(facts: Mapping[str, str]) -> str:
    """What tells one drive from another across runs: its serial, else its path (a scratch
    file, a device that reports no serial). ``facts``: ``DriveContext.describe()``."""
    serial = str(facts.get("serial") or "").strip()
    return serial if serial and serial not in ("?", "unknown") else str(facts.get("drive", ""))


def drive_parameters(ctx: DriveContext) -> None:
    """Record the drive's parameters: ``drive identity`` (serial, else path; *not* excluded, so
    each drive has its own history id) and the drive parametrization ``ssd_drive`` (the path,
    excluded: /dev names move between boots).

    Must run during the test's set-up (an autouse fixture): allure-pytest adds pytest's own
    parameters after set-up only when they are not there yet, and its history id
    (``md5(fullName, non-excluded parameter values)``) skips excluded parameters.
    """
    allure.dynamic.parameter(DRIVE_IDENTITY_PARAM, drive_identity(ctx.describe()))
    allure.dynamic.parameter("ssd_drive", ctx.target.spec.raw, excluded=True)


def parent_suite(facts: Mapping[str, str]) -> str:
    """The parent suite of a drive's tests: ``Samsung 980 (fw 1B4QFXO7, S/N S64D...)``."""
    return (f"{facts.get('model', 'unknown drive')} (fw {facts.get('firmware', '?')}, "
            f"S/N {facts.get('serial', '?')})")


def label_test(
    ctx: DriveContext,
    workload: Workload,
    *,
    family: str | None = None,
    decorated: frozenset[str] = frozenset(),
    profile: str = "",
) -> None:
    """Title, suite hierarchy, severity, tags and excluded parameters for one workload test,
    and the drive's facts as the ``drive`` JSON attachment (read back by summaries).

    Args:
        family: methodology family (``@pytest.mark.ssdqual_family``); default the workload's.
        decorated: label names the test already sets with an ``@allure`` decorator (those are
            not set again: Allure would show them twice).
        profile: the run profile's name, stored with the drive's facts.

    Title example: ``4 KiB random read, QD32 — PS5012-E12 / BiCS3 / ECFM11.0``.
    """
    ident = ctx.identity
    controller = ctx.assignment.controller or "unknown controller"
    nand = ctx.assignment.nand or "unknown NAND"
    family = family or workload.family
    allure.dynamic.title(f"{workload.title} — {controller} / {nand} / {ident.firmware}")
    if "parentSuite" not in decorated:
        allure.dynamic.parent_suite(parent_suite(ctx.describe()))
    if "feature" not in decorated:
        allure.dynamic.feature(family)
    if "story" not in decorated:
        allure.dynamic.story(workload.id)
    if "severity" not in decorated:
        allure.dynamic.severity(allure.severity_level(severity_for(family)))
    allure.dynamic.tag(f"controller:{controller}", f"nand:{nand}", f"firmware:{ident.firmware}")
    allure.dynamic.parameter("drive serial", ident.serial, excluded=True)
    allure.dynamic.parameter("firmware", ident.firmware, excluded=True)
    facts = dict(ctx.describe(), profile=profile)
    allure.attach(json.dumps(facts, indent=2, sort_keys=True), name=ATTACH_DRIVE,
                  attachment_type=allure.attachment_type.JSON)


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
            LOG_CSV_HEADER + "\n" + log.read_text(),
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


def _running_result() -> Any | None:
    """allure-pytest's ``TestResult`` of the test running in this process (None without
    ``--alluredir`` or between tests)."""
    import allure_commons
    from allure_pytest.listener import AllureListener

    for plugin in allure_commons.plugin_manager.get_plugins():
        if isinstance(plugin, AllureListener):
            try:
                return plugin.allure_logger.get_test(None)
            except (KeyError, IndexError, AttributeError):
                return None
    return None


def snapshot_current_test(original_values: Mapping[str, Any]) -> dict[str, Any] | None:
    """The running test's Allure result as it stands, as the JSON Allure would write (uuid,
    name, fullName, labels, parameters, attachments and steps so far), with the ``historyId``
    allure-pytest will give it (``md5(fullName, non-excluded parameter values)``, computed at
    teardown, which a dying process never reaches). Kept by the worker's journal so the
    controller can write the test's result if the worker dies.

    Args:
        original_values: the test's pytest parameters (``item.callspec.params``): allure-pytest
            hashes their original values, not their ``repr``.

    Returns:
        The result as a dict, or None without ``--alluredir``.
    """
    from allure_pytest.utils import get_history_id
    from attr import asdict

    result = _running_result()
    if result is None or not getattr(result, "fullName", None):
        return None
    data = asdict(result, filter=lambda _, v: v or v is False)
    data["historyId"] = get_history_id(result.fullName, result.parameters,
                                       original_values=dict(original_values))
    return data


def mark_current_broken(message: str) -> None:
    """Make the running test *broken* with ``message`` (a test stopped by SIGINT/SIGTERM:
    allure-pytest would otherwise write it with its set-up status, ``passed``). Does nothing
    without ``--alluredir``."""
    from allure_commons.model2 import Status, StatusDetails

    result = _running_result()
    if result is not None:
        result.status = Status.BROKEN
        result.statusDetails = StatusDetails(message=message)


def result_uuids(alluredir: Path) -> set[str]:
    """The ``uuid`` of every ``*-result.json`` in ``alluredir`` (unreadable files skipped)."""
    out = set()
    for path in alluredir.glob("*-result.json"):
        try:
            out.add(str(json.loads(path.read_text(encoding="utf-8")).get("uuid", "")))
        except (OSError, ValueError, AttributeError):
            continue
    return out


def write_crashed_result(
    alluredir: Path,
    nodeid: str,
    message: str,
    trace: str = "",
    *,
    snapshot: Mapping[str, Any] | None = None,
    drive_facts: Mapping[str, str] | None = None,
    fio_job: tuple[str, str] | None = None,
) -> Path:
    """Write a *broken* Allure result for a test whose process never wrote one: its
    pytest-xdist worker crashed, or the run was stopped (SIGTERM) while it ran.

    Called on the controller. With the worker's ``snapshot`` (``snapshot_current_test``, kept
    in its journal) the result is the test's own -- same uuid, title, parent suite (the drive),
    parameters, history id and the attachments written so far (the ``drive`` facts) -- so it
    lands on the right drive and in the test's history; the steps still open are closed as
    broken. Without one, name, full name, suite and history id follow allure-pytest's scheme
    for the node id (the ``@group`` suffix pytest-xdist's loadgroup adds is dropped) and
    ``drive_facts``, when known, give the parent suite and the ``drive`` attachment.

    Args:
        alluredir: the ``--alluredir`` folder.
        nodeid: the test's node id, e.g. ``suites/test_x.py::test_y[loop0]@loop0``.
        message: why the result is broken (``worker 'gw0' crashed while running ...``).
        trace: longer text (the crash report), if any.
        snapshot: the test's Allure result as it stood, or None.
        drive_facts: the drive's facts (``DriveContext.describe()``), or None.
        fio_job: (path, text) of the last fio job the test started, attached as
            ``fio job (running when the test stopped)``.

    Returns:
        The written ``*-result.json`` file.
    """
    from allure_commons.model2 import Label, Status, StatusDetails, TestResult
    from allure_commons.utils import md5, now, uuid4
    from allure_pytest.utils import ParsedPytestNodeId
    from attr import asdict

    alluredir.mkdir(parents=True, exist_ok=True)
    stamp = now()
    if snapshot:
        data: dict[str, Any] = json.loads(json.dumps(snapshot, default=str))
        data["status"] = Status.BROKEN
        data["statusDetails"] = {"message": message, **({"trace": trace} if trace else {})}
        data["stop"] = stamp
        _close_steps(data.get("steps") or [], stamp)
        labels = data.setdefault("labels", [])
        names = {lab.get("name") for lab in labels}
        if "suite" not in names:
            labels.append({"name": "suite",
                           "value": ParsedPytestNodeId(nodeid.split("@", 1)[0]).module})
        if "framework" not in names:
            labels.append({"name": "framework", "value": "pytest"})
    else:
        clean = nodeid.split("@", 1)[0]
        parsed = ParsedPytestNodeId(clean)
        class_part = ("." + ".".join(parsed.class_names)) if parsed.class_names else ""
        full_name = f"{parsed.package}{class_part}#{parsed.test_function}"
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
        if drive_facts:
            data["labels"].append({"name": "parentSuite", "value": parent_suite(drive_facts)})
            data["parameters"] = [
                {"name": DRIVE_IDENTITY_PARAM, "value": drive_identity(drive_facts)},
                {"name": "ssd_drive", "value": str(drive_facts.get("drive", "")),
                 "excluded": True},
            ]
    attachments = data.setdefault("attachments", [])
    if drive_facts and not any(a.get("name") == ATTACH_DRIVE for a in attachments):
        attachments.append(_write_attachment(
            alluredir, ATTACH_DRIVE, json.dumps(dict(drive_facts), indent=2, sort_keys=True),
            "application/json", "json"))
    if fio_job is not None:
        job_path, job_text = fio_job
        attachments.append(_write_attachment(
            alluredir, "fio job (running when the test stopped)",
            f"# {job_path}\n{job_text}", "text/plain", "fio"))
    path = alluredir / f"{uuid.uuid4()}-result.json"
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
    os.replace(tmp, path)
    return path


def _close_steps(steps: list[dict[str, Any]], stamp: int) -> None:
    """Steps a dead process left open (no ``stop``) become broken, stopped at ``stamp``."""
    for step in steps:
        if not step.get("stop"):
            step["stop"] = stamp
            step["status"] = "broken"
        _close_steps(step.get("steps") or [], stamp)


def _write_attachment(alluredir: Path, name: str, text: str, mime: str, ext: str
                      ) -> dict[str, str]:
    source = f"{uuid.uuid4()}-attachment.{ext}"
    (alluredir / source).write_text(text, encoding="utf-8")
    return {"name": name, "source": source, "type": mime}


def attach_verdicts(outcome: WorkloadOutcome | MethodologyOutcome) -> None:
    """Attach the verdict table (HTML, with the drive state of each figure; a read limit
    passed on media as found reads ``PASS (as found)``) and the metrics (JSON)."""
    states = figure_states(outcome)
    rows = []
    for v in outcome.verdicts:
        limit = v.limit
        state = states.get(v.metric, "")
        rows.append(
            "<tr>"
            + "".join(
                f"<td>{html.escape(cell)}</td>"
                for cell in (
                    v.metric,
                    "-" if v.measured is None else f"{v.measured:.6g}",
                    str(limit) if limit else "-",
                    "-" if v.margin_pct is None else f"{v.margin_pct:+.1f} %",
                    verdict_word(v.status.upper(), state),
                    state,
                    str(limit.provenance) if limit else "",
                )
            )
            + "</tr>"
        )
    table = (
        "<table border='1' cellpadding='4' style='border-collapse:collapse'>"
        "<tr><th>metric</th><th>measured</th><th>limit</th><th>margin</th><th>verdict</th>"
        "<th>drive state</th><th>provenance</th></tr>" + "".join(rows) + "</table>"
        + (f"<p>{html.escape(AS_FOUND_NOTE)}</p>"
           if any(read_as_found(s) for s in states.values()) else "")
    )
    allure.attach(table, name="verdicts", attachment_type=allure.attachment_type.HTML)
    allure.attach(json.dumps(outcome.metrics, indent=2, sort_keys=True), name="metrics",
                  attachment_type=allure.attachment_type.JSON)
    records = [VerdictRecord.from_verdict(v, states.get(v.metric, "")).as_dict()
               for v in outcome.verdicts]
    allure.attach(json.dumps(records, indent=1), name=ATTACH_VERDICTS_JSON,
                  attachment_type=allure.attachment_type.JSON)


def attach_png(name: str, png: bytes) -> None:
    """Attach one PNG chart (``plots`` functions return PNG bytes), e.g. a steady-state chart
    a methodology test draws with ``plots.steady_state_chart``."""
    allure.attach(png, name=name, attachment_type=allure.attachment_type.PNG)


def recording() -> bool:
    """True when Allure results are being written (``--alluredir``: allure-pytest registered
    its listener). Charts are drawn only then."""
    import allure_commons
    from allure_pytest.listener import AllureListener

    return any(isinstance(p, AllureListener) for p in allure_commons.plugin_manager.get_plugins())


def attach_workload_charts(outcome: WorkloadOutcome, *, title: str) -> list[str]:
    """Draw and attach the charts of one fio workload run: bandwidth/IOPS per second with the
    limits (from fio's logs next to the job file), latency percentiles with the latency
    limits, IOPS per phase. Returns the attachment names, in order (none without
    ``--alluredir``)."""
    if not recording():
        return []
    from pytest_ssdqual.report.chart_data import charts_for_test  # matplotlib: imported when a chart is drawn

    logs = {p.name: p.read_text() for p in sorted(outcome.run.job_path.parent.glob("log_*.log"))}
    charts = charts_for_test(
        title=title, logs=logs, metrics=outcome.metrics,
        verdicts=[VerdictRecord.from_verdict(v) for v in outcome.verdicts],
    )
    for name, png in charts.items():
        attach_png(name, png)
    return list(charts)


@contextmanager
def phase(name: str) -> Iterator[None]:
    """An Allure step around one phase of a test: purge, precondition, a round, idle, measure,
    judge. Allure shows each step with its start and duration, and marks it failed or broken
    when the block raises. Without ``--alluredir`` it does nothing.

    Example::

        with allure_report.phase("precondition: 2x span, sequential 128 KiB writes"):
            ...
    """
    with allure.step(name):
        yield


def attach_methodology(outcome: MethodologyOutcome) -> None:
    """Attach a methodology test's record: notes (purge method, steady-state verdict, SLC cliff,
    recovery), the per-round table and the per-second log (CSV), the drive state of every
    metric (JSON), each distinct fio job file, then the verdicts and metrics."""
    result = outcome.result
    allure.attach("\n".join(result.notes) + "\n", name="methodology notes",
                  attachment_type=allure.attachment_type.TEXT)
    allure.attach(result.rounds_csv(), name="rounds", attachment_type=allure.attachment_type.CSV)
    allure.attach(result.per_second_csv(), name="per-second log",
                  attachment_type=allure.attachment_type.CSV)
    allure.attach(json.dumps(result.states, indent=2, sort_keys=True),
                  name="drive state of each metric", attachment_type=allure.attachment_type.JSON)
    if result.curves:
        allure.attach(curves_to_json(result.curves), name="curves",
                      attachment_type=allure.attachment_type.JSON)
    seen: set[str] = set()
    for step in result.steps:
        if step.job.name in seen:
            continue
        seen.add(step.job.name)
        allure.attach(step.job_run.job_text, name=f"fio job {step.job.name}",
                      attachment_type=allure.attachment_type.TEXT, extension="fio")
    attach_verdicts(outcome)
    attach_methodology_charts(outcome)


def attach_methodology_charts(outcome: MethodologyOutcome) -> list[str]:
    """Draw and attach a methodology test's charts from its stored tables (the ``rounds`` and
    ``per-second log`` CSV): bandwidth/IOPS over the test per phase with the limits, the
    steady-state window with its fit line, bandwidth by fill state, IOPS per phase. Returns
    the attachment names (none without ``--alluredir``)."""
    if not recording():
        return []
    from pytest_ssdqual.report.chart_data import curve_charts, methodology_charts  # matplotlib: imported here

    result = outcome.result
    charts = methodology_charts(
        title=result.workload.title, rounds_csv=result.rounds_csv(),
        per_second_csv=result.per_second_csv(), metrics=result.metrics,
        verdicts=[VerdictRecord.from_verdict(v) for v in outcome.verdicts],
    )
    charts.update(curve_charts(result.curves, title=result.workload.title))  # swept axes
    for name, png in charts.items():
        attach_png(name, png)
    return list(charts)


def attach_regression(lines: list[str]) -> None:
    """Attach the regression gate's comparisons (one line per gated metric, with its status:
    regressed, inconclusive, improved, within limit, ...) as text."""
    if lines:
        allure.attach("\n".join(lines) + "\n", name="regression vs baseline",
                      attachment_type=allure.attachment_type.TEXT)


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
#: First match wins. Regexes must match the whole message in Allure 2 (Java ``matches``) and
#: are searched in Allure 3 (JavaScript ``test``), so they are anchored and use ``[\s\S]*``.
CATEGORIES: list[dict[str, Any]] = [
    {"name": "Regression vs baseline", "matchedStatuses": ["failed"],
     "messageRegex": r"^REGRESSION:[\s\S]*"},
    {"name": "Drive health failing", "matchedStatuses": ["failed"],
     "messageRegex": r"^[^\n]*drive health fails[\s\S]*"},
    {"name": "Limit violated", "matchedStatuses": ["failed"],
     "messageRegex": r"^[\s\S]*limit\(s\) violated[\s\S]*"},
    {"name": "Interrupted (SIGINT/SIGTERM)", "matchedStatuses": ["broken"],
     "messageRegex": r"^INTERRUPTED:[\s\S]*"},
    {"name": "Worker crashed", "matchedStatuses": ["broken"],
     "messageRegex": r"^worker '[^']*' crashed[\s\S]*"},
    {"name": "Device or fio error", "matchedStatuses": ["broken"]},
    {"name": "Refused for safety", "matchedStatuses": ["skipped"],
     "messageRegex": r"^[\s\S]*refused[\s\S]*"},
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
