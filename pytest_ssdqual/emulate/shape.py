"""Job shapes: what an emulated drive's controller is told about each fio job (pure logic).

A real drive sees the queue depth and the access pattern in its command stream; a blkio
throttle sees only bytes and I/O counts. So before every fio job on an emulated drive the
plugin parses the job file into one :class:`JobShape` per job section (``rw``, ``bs``,
``iodepth``, ``numjobs``, ``rwmixread``; ``[global]`` options inherited, a ``stonewall``
starting a new group of sections that run after the previous ones) and hands them to the
drive's controller daemon (``DriveTarget.before_fio`` -> ``EmulatedDrive.send_shape``), which
applies the caps for that shape (:mod:`pytest_ssdqual.emulate.state`) and acknowledges before
fio starts. This is the *job-shape channel*.

Sources: fio HOWTO, "Job file format" (ini sections, ``[global]``), options ``rw``,
``bs`` (``read,write`` pair), ``iodepth``, ``numjobs``, ``rwmixread`` / ``rwmixwrite``,
``stonewall``; size suffixes (``kb_base=1024`` default: ``4k`` = 4096 bytes).
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass

__all__ = ["JobShape", "parse_job_shapes", "shapes_from_json", "shapes_to_json"]

_SUFFIX = {"": 1, "k": 2**10, "m": 2**20, "g": 2**30, "t": 2**40}
_NUM = re.compile(r"\s*(\d+)\s*([kmgt])?(?:i?b)?\s*", re.IGNORECASE)


@dataclass(frozen=True)
class JobShape:
    """One fio job section as the controller sees it.

    Attributes:
        section: the section name. rw: fio ``rw=`` (``read``, ``randwrite``, ``randrw``, ...).
        bs_read, bs_write: transfer size in bytes per direction (fio ``bs=R,W``).
        iodepth, numjobs: fio's; outstanding I/Os of the section = ``iodepth * numjobs``.
        read_pct: share of reads in percent (100 for ``read``/``randread``, 0 for writes,
            ``rwmixread`` for a mixed section, default 50).
        group: index of the section's stonewall group (sections of one group run at once).
    """

    section: str
    rw: str
    bs_read: int
    bs_write: int
    iodepth: int
    numjobs: int
    read_pct: float
    group: int = 0

    @property
    def random(self) -> bool:
        return self.rw.startswith("rand")

    @property
    def outstanding(self) -> int:
        return max(1, self.iodepth) * max(1, self.numjobs)

    def does(self, direction: str) -> bool:
        """True when the section reads (``"read"``) / writes (``"write"``)."""
        return self.read_pct > 0 if direction == "read" else self.read_pct < 100

    def bs(self, direction: str) -> int:
        return self.bs_read if direction == "read" else self.bs_write


def _number(text: str, default: int) -> int:
    m = _NUM.fullmatch(text)
    if m is None:
        return default
    return int(m.group(1)) * _SUFFIX[(m.group(2) or "").lower()]


def _read_pct(rw: str, options: dict[str, str]) -> float:
    base = rw.split(":")[0]
    if base in ("read", "randread"):
        return 100.0
    if base in ("write", "randwrite", "trim", "randtrim", "trimwrite"):
        return 0.0
    if "rwmixread" in options:
        return float(_number(options["rwmixread"], 50))
    if "rwmixwrite" in options:
        return 100.0 - _number(options["rwmixwrite"], 50)
    return 50.0


def parse_job_shapes(job_text: str) -> tuple[JobShape, ...]:
    """The job sections of a fio job file, ``[global]`` options applied.

    Unknown or malformed values fall back to fio's defaults (``rw=read``, ``bs=4k``,
    ``iodepth=1``, ``numjobs=1``): the shape only steers caps, fio itself reports a bad job.
    """
    sections: list[tuple[str, dict[str, str]]] = []
    current: dict[str, str] | None = None
    glob: dict[str, str] = {}
    for raw in job_text.splitlines():
        line = raw.split(";", 1)[0].split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("[") and line.endswith("]"):
            name = line[1:-1].strip()
            current = glob if name == "global" else {}
            if name != "global":
                sections.append((name, current))
            continue
        if current is None:
            continue
        key, _, value = line.partition("=")
        current[key.strip().lower()] = value.strip()
    shapes: list[JobShape] = []
    group = 0
    for i, (name, own) in enumerate(sections):
        opts = {**glob, **own}
        if i > 0 and ("stonewall" in own or "wait_for_previous" in own):
            group += 1
        rw = opts.get("rw", opts.get("readwrite", "read")).lower()
        bs_text = opts.get("bs", opts.get("blocksize", "4k"))
        parts = [p for p in bs_text.split(",")]
        bs_r = _number(parts[0], 4096) if parts[0] else 4096
        bs_w = _number(parts[1], bs_r) if len(parts) > 1 and parts[1] else bs_r
        shapes.append(JobShape(
            section=name, rw=rw, bs_read=bs_r, bs_write=bs_w,
            iodepth=_number(opts.get("iodepth", "1"), 1),
            numjobs=_number(opts.get("numjobs", "1"), 1),
            read_pct=_read_pct(rw, opts), group=group,
        ))
    return tuple(shapes)


def shapes_to_json(seq: int, shapes: Sequence[JobShape]) -> str:
    """One line: ``{"seq": N, "jobs": [{...}, ...]}`` (what the daemon reads on stdin)."""
    return json.dumps({"seq": seq, "jobs": [asdict(s) for s in shapes]}, separators=(",", ":"))


def shapes_from_json(line: str) -> tuple[int, tuple[JobShape, ...]]:
    """Inverse of :func:`shapes_to_json`.

    Raises:
        ValueError: not such a line (bad JSON, missing fields).
    """
    try:
        data = json.loads(line)
        return int(data["seq"]), tuple(JobShape(**job) for job in data["jobs"])
    except (KeyError, TypeError, json.JSONDecodeError) as exc:
        raise ValueError(f"not a job-shape message: {line[:80]!r} ({exc})") from None
