"""Read a finished run back from its Allure results folder, with no I/O on any drive.

What each qualification test stores there (written by ``report.allure_attach``): the usual
``<uuid>-result.json`` (name, status, message, labels, parameters, attachments) plus these
attachments, whose names are the contract between the writer and this reader:

* ``drive`` (JSON) -- the drive's facts: path, model, serial, firmware, capacity, controller,
  NAND, threshold profiles, and the run profile (``DriveContext.describe()`` + ``profile``).
* ``metrics`` (JSON) -- measured figures by canonical metric name (``read.iops``, ...).
* ``verdicts (JSON)`` -- one ``record.LimitVerdict`` (``to_json``) per judged or measured
  metric; read back with ``LimitVerdict.from_json`` (older folders too).
* ``per-second log <file>`` (CSV) -- fio's per-second logs with a header line.
* ``regression (JSON)`` -- with ``--baseline``, the gate's comparisons (``GateResult.rows``).

Charts (``chart_data`` + ``plots``) and the one-page summary (``drive_summary``) are built from
these alone, so they can be regenerated long after the run.

A results folder may hold several runs (no ``--clean-alluredir``) or retries: for each drive and
test (Allure ``historyId``, which holds the drive's identity) only the latest result is kept.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any

from pytest_ssdqual.drive.identity import NO_SERIAL
from pytest_ssdqual.errors import ConfigError
from pytest_ssdqual.results.journal import INTERRUPTED_PREFIX, NOT_RERUN_PREFIX
from pytest_ssdqual.results.record import LimitVerdict, TestRecord
from pytest_ssdqual.results.stored_json import DamagedJson, read_stored_json

ATTACH_DRIVE = "drive"
ATTACH_METRICS = "metrics"
ATTACH_VERDICTS_HTML = "verdicts"
ATTACH_VERDICTS_JSON = "verdicts (JSON)"
ATTACH_LOG_PREFIX = "per-second log "
#: The regression gate's comparisons of a test (``GateResult.rows``: figure, baseline figure,
#: change, allowed change, baseline run and firmware), JSON.
ATTACH_REGRESSION_JSON = "regression (JSON)"

#: Allure label of a test skipped because it cannot apply to the drive (no SMART on a loop
#: device, no NVMe power states on a SATA drive); its value is the reason. Such a test leaves
#: the drive's qualification complete (``drive_summary``: ``NOT APPLICABLE``).
LABEL_NOT_APPLICABLE = "ssdqual_not_applicable"

#: Header line of the per-second log CSV attachments (fio's columns, fio HOWTO "Log File Formats").
LOG_CSV_HEADER = "time_ms,value,direction,bs,offset"


def drive_identity(facts: Mapping[str, str]) -> str:
    """What tells one drive from another across runs, from its facts (``drive`` attachment,
    ``DriveContext.describe()``): the identity key (``identity``: the serial, ``@SPEED`` of an
    emulated drive, the drive as given when another drive of the session shares the serial;
    ``qualify.drive_keys``); for facts of an older version without it, the serial, else the
    path (a scratch file, a device that reports no serial)."""
    key = str(facts.get("identity") or "").strip()
    if key:
        return key
    serial = str(facts.get("serial") or "").strip()
    return serial if serial not in NO_SERIAL else str(facts.get("drive", ""))


def _serial_shown(facts: Mapping[str, str]) -> str:
    """The serial, or the identity key where it says more than the serial."""
    serial = str(facts.get("serial") or "?")
    key = drive_identity(facts)
    return key if key.startswith(serial) else f"{serial}, {key}"


def drive_name(facts: Mapping[str, str]) -> str:
    """The drive's name without its firmware, the same all session long -- also after a
    firmware update changed ``facts['firmware']`` (the Allure parent suite,
    ``report.allure_labels.parent_suite``): ``Samsung 980 (S/N S64D...)``; the identity key
    where it says more than the serial (``S/N EMU-JMF612-43NM-64G@0.8``, ``S/N S123
    (/dev/nvme0n2)``, ``S/N unknown, /dev/sdb``)."""
    return f"{facts.get('model', 'unknown drive')} (S/N {_serial_shown(facts)})"


def drive_title(facts: Mapping[str, str]) -> str:
    """The drive's title with the firmware its facts name (summary page): ``Samsung 980 (fw
    1B4QFXO7, S/N S64D...)``; the serial as in ``drive_name``. Tests of one drive before and
    after a firmware update have different titles: group by ``drive_name`` or
    ``drive_identity``."""
    return (f"{facts.get('model', 'unknown drive')} (fw {facts.get('firmware', '?')}, "
            f"S/N {_serial_shown(facts)})")


@dataclass(frozen=True)
class StoredTest:
    """One test result read from ``<uuid>-result.json``.

    Attributes:
        uuid, name, full_name, history_id: Allure's fields (name = the title shown).
        status: ``passed``, ``failed``, ``broken``, ``skipped`` (or ``unknown``).
        message: ``statusDetails.message`` (failure lines, error, skip reason), ``""`` if none.
        start_ms, stop_ms: epoch milliseconds.
        labels: label name -> values in order (``tag`` has several).
        parameters: parameter name -> value as Allure stored it.
        attachments: attachment name -> file in the results folder (top level and steps).
        steps: (step name, duration in s) of the top-level steps, in order.
    """

    uuid: str
    name: str
    full_name: str
    history_id: str
    status: str
    message: str
    start_ms: int
    stop_ms: int
    labels: dict[str, list[str]]
    parameters: dict[str, str]
    attachments: dict[str, Path]
    steps: list[tuple[str, float]] = field(default_factory=list)

    def label(self, name: str) -> str:
        """The first value of label ``name``, ``""`` when absent."""
        values = self.labels.get(name)
        return values[0] if values else ""

    @property
    def workload(self) -> str:
        """The workload id (the ``story`` label)."""
        return self.label("story")

    @property
    def not_applicable(self) -> bool:
        """True for a skip because the test cannot apply to the drive (``LABEL_NOT_APPLICABLE``)."""
        return self.status == "skipped" and bool(self.label(LABEL_NOT_APPLICABLE))

    def json_attachment(self, name: str) -> Any:
        """The parsed JSON attachment ``name``, or None when the test has none.

        Raises:
            ConfigError: the attachment file is missing, not JSON or damaged (a damaged results
                folder: nested too deeply, a number beyond 2**128, NaN where no figure goes;
                ``stored_json``), naming the file and the key.
        """
        path = self.attachments.get(name)
        if path is None:
            return None
        try:
            return read_stored_json(path, require_object=False)
        except DamagedJson as exc:
            raise ConfigError(f"attachment {name!r} of {self.name!r} is unreadable: "
                              f"{exc.reason}", file=str(path), key=exc.key or None,
                              fix="regenerate the results") from None
        except OSError as exc:
            raise ConfigError(f"attachment {name!r} of {self.name!r} is unreadable: {exc}",
                              file=str(path), fix="regenerate the results") from None

    def text_attachment(self, name: str) -> str | None:
        path = self.attachments.get(name)
        return path.read_text(errors="replace") if path is not None and path.exists() else None

    @cached_property
    def drive(self) -> dict[str, str]:
        """The drive's facts (``drive`` attachment); at least ``{"drive": ...}`` from the
        parameters when the test broke before the drive was opened."""
        facts = self.json_attachment(ATTACH_DRIVE)
        if isinstance(facts, dict):
            return {str(k): str(v) for k, v in facts.items()}
        return {"drive": self.parameters.get("ssd_drive", "unknown drive")}

    @property
    def drive_key(self) -> str:
        """What identifies the drive across results: path and serial."""
        facts = self.drive
        return f"{facts.get('drive', '')}|{facts.get('serial', '')}"

    @cached_property
    def metrics(self) -> dict[str, float]:
        data = self.json_attachment(ATTACH_METRICS)
        return {str(k): float(v) for k, v in data.items()} if isinstance(data, dict) else {}

    @cached_property
    def verdicts(self) -> list[LimitVerdict]:
        """The test's verdicts (``verdicts (JSON)`` attachment), ``[]`` when it has none."""
        data = self.json_attachment(ATTACH_VERDICTS_JSON)
        if not isinstance(data, list):
            return []
        return [LimitVerdict.from_json(d, self.workload) for d in data if isinstance(d, dict)]

    @cached_property
    def gate_rows(self) -> list[dict[str, Any]]:
        """The regression gate's comparisons (``regression (JSON)``), ``[]`` without."""
        data = self.json_attachment(ATTACH_REGRESSION_JSON)
        return [dict(d) for d in data if isinstance(d, dict)] if isinstance(data, list) else []

    @cached_property
    def record(self) -> TestRecord:
        """The test as a ``record.TestRecord``: drive, workload, status (``interrupted`` for a
        test SIGINT/SIGTERM stopped: broken with an ``INTERRUPTED:`` message), reason (the
        Allure message), verdicts, metrics, the drive state per figure, the drive's facts."""
        status = self.status
        if status == "broken" and self.message.startswith(INTERRUPTED_PREFIX):
            status = "interrupted"
        verdicts = tuple(self.verdicts)
        return TestRecord(
            drive=self.drive.get("drive", ""), workload=self.workload, status=status,
            reason=self.message, verdicts=verdicts, metrics=self.metrics,
            states={v.metric: v.state for v in verdicts if v.state}, facts=self.drive,
            profile=self.drive.get("profile", ""))

    def logs(self) -> dict[str, str]:
        """fio log file name -> CSV text (header included), e.g. ``{"log_bw.1.log": ...}``."""
        out = {}
        for name, path in self.attachments.items():
            if name.startswith(ATTACH_LOG_PREFIX) and path.exists():
                out[name[len(ATTACH_LOG_PREFIX):]] = path.read_text()
        return out


def _walk_attachments(node: dict[str, Any], folder: Path, out: dict[str, Path]) -> None:
    for att in node.get("attachments") or []:
        if isinstance(att, dict) and "name" in att and "source" in att:
            out.setdefault(str(att["name"]), folder / str(att["source"]))
    for step in node.get("steps") or []:
        if isinstance(step, dict):
            _walk_attachments(step, folder, out)


def read_result(path: Path) -> StoredTest:
    """Read one ``*-result.json`` (through ``stored_json.read_stored_json``, strict: no NaN or
    Infinity anywhere, no number beyond 2**128, no nesting past 64 levels).

    Raises:
        ConfigError: unreadable, damaged (naming the key) or not an Allure result.
    """
    try:
        doc = read_stored_json(path, strict=True)
        if "uuid" not in doc:
            raise DamagedJson("no 'uuid': not an Allure test result")
        return _stored_test(path, doc)
    except DamagedJson as exc:
        raise ConfigError(f"unreadable Allure result: {exc.reason}", file=str(path),
                          key=exc.key or None,
                          fix="remove the damaged file or rerun the tests") from None
    except (OSError, ValueError) as exc:
        raise ConfigError(f"unreadable Allure result: {exc}", file=str(path),
                          fix="remove the damaged file or rerun the tests") from None


def _stored_test(path: Path, doc: dict[str, Any]) -> StoredTest:
    labels: dict[str, list[str]] = {}
    for lab in doc.get("labels") or []:
        labels.setdefault(str(lab.get("name")), []).append(str(lab.get("value")))
    attachments: dict[str, Path] = {}
    _walk_attachments(doc, path.parent, attachments)
    steps = [
        (str(s.get("name", "")), max(0, int(s.get("stop", 0)) - int(s.get("start", 0))) / 1000)
        for s in doc.get("steps") or [] if isinstance(s, dict)
    ]
    details = doc.get("statusDetails") or {}
    return StoredTest(
        uuid=str(doc["uuid"]),
        name=str(doc.get("name", "")),
        full_name=str(doc.get("fullName", "")),
        history_id=str(doc.get("historyId", "")),
        status=str(doc.get("status", "unknown")),
        message=str(details.get("message") or ""),
        start_ms=int(doc.get("start") or 0),
        stop_ms=int(doc.get("stop") or 0),
        labels=labels,
        parameters={str(p.get("name")): str(p.get("value")) for p in doc.get("parameters") or []},
        attachments=attachments,
        steps=steps,
    )


def load_results(folder: Path) -> list[StoredTest]:
    """Every test in an Allure results folder: the latest result per drive and test, ordered by
    start time.

    Raises:
        ConfigError: the folder does not exist or holds no ``*-result.json``.
    """
    if not folder.is_dir():
        raise ConfigError(f"results folder {folder} does not exist",
                          fix="give the folder passed to --alluredir")
    paths = sorted(folder.glob("*-result.json"))
    if not paths:
        raise ConfigError(f"{folder} holds no Allure results (*-result.json)",
                          fix="run the suites with --alluredir=FOLDER first")
    return latest_per_test(read_result(p) for p in paths)


def latest_per_test(tests: Iterable[StoredTest]) -> list[StoredTest]:
    """Keep the latest (by stop time) result per (drive, history id); order by start time.

    A ``NOT RERUN`` skip (a test a worker crashed in, not run again) never replaces the test's
    other result (its broken crash result)."""
    latest: dict[tuple[str, str], StoredTest] = {}
    for t in tests:
        key = (t.drive_key, t.history_id or t.uuid)
        if key not in latest or (_rank(t), t.stop_ms) > (_rank(latest[key]), latest[key].stop_ms):
            latest[key] = t
    return sorted(latest.values(), key=lambda t: (t.start_ms, t.name))


def _rank(t: StoredTest) -> int:
    return 0 if t.status == "skipped" and NOT_RERUN_PREFIX in t.message else 1


def group_by_drive(tests: Iterable[StoredTest]) -> dict[str, list[StoredTest]]:
    """drive key -> its tests, in the order given."""
    out: dict[str, list[StoredTest]] = {}
    for t in tests:
        out.setdefault(t.drive_key, []).append(t)
    return out
