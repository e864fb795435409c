"""fio's own ``rate=`` on an emulated drive's jobs: the job-shape caps held from the first I/O.

blk-throttle, which sets the emulated drive's pace, lets a new job run unthrottled for its first
slice: measured on kernel 6.18, a 32 MiB sequential read under a 556 MB/s cap ran at
1,240-3,050 MB/s (the transfer-size sweep's smoke points: 32 MiB each), and waits are quantised
to 100 ms slices (a 16 MiB read under a 129 MB/s rule took 108 ms). A real drive has no such
first slice. So each job section of an emulated drive also gets fio's ``rate=R,W`` (bytes/s per
job thread: fio docs, "rate"): the fresh caps for its shape (``transfer_caps`` / ``qd_iops`` /
``caps``, the copy factor where a group reads and writes at once), shared among the group's
threads that go that direction; a section that reads and writes (``rwmixread``) splits one
I/O budget between them (:func:`_mixed`). The drive's state (SLC cache full, dirty,
fragmented) still lowers the throttle below it; fio's rate only keeps a short job from
outrunning the drive.

A section that sets ``rate``, ``rate_iops`` or ``rate_min`` itself keeps its own. Plain logic,
no I/O.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from pytest_ssdqual.emulate.model import DriveModel
from pytest_ssdqual.emulate.shape import JobShape, parse_job_shapes
from pytest_ssdqual.emulate.state import ThrottleController

__all__ = ["pace_job", "section_rates"]

_OWN = ("rate", "rate_iops", "rate_min", "rate_iops_min")


def section_rates(model: DriveModel, shapes: Sequence[JobShape], image_bytes: int | None,
                  start_delays: dict[str, str] | None = None
                  ) -> dict[str, tuple[int | None, int | None]]:
    """Section name -> (read, write) bytes/s per job thread of that section (None: no cap).

    Per stonewall group the caps of a fresh drive for the group's shape
    (:meth:`ThrottleController.set_shape`), each direction's bandwidth the tighter of its
    MB/s cap and its IOPS cap x the section's transfer size, split among the group's threads
    that go that direction (``numjobs`` each) and start with it (``start_delays``: section ->
    its ``startdelay`` text; sections with another delay are taken to run at another time).
    """
    out: dict[str, tuple[int | None, int | None]] = {}
    delays = start_delays or {}
    for group in sorted({s.group for s in shapes}):
        members = [s for s in shapes if s.group == group]
        caps = ThrottleController(model, image_bytes).set_shape(members)
        per_thread: dict[str, dict[str, int | None]] = {s.section: {} for s in members}
        for direction in ("read", "write"):
            doers = [s for s in members if s.does(direction)]
            bw, iops = caps.get(f"{direction}_bw_mbps"), caps.get(f"{direction}_iops")
            for s in doers:
                # sections of a group that start together share; a later startdelay (the
                # burst suite's staggered bursts) is taken to run on its own
                threads = sum(max(1, o.numjobs) for o in doers
                              if delays.get(o.section, "") == delays.get(s.section, ""))
                limits = [v for v in (bw * 1e6 if bw is not None else None,
                                      iops * s.bs(direction) if iops is not None else None)
                          if v is not None]
                # a mixed section's direction gets the whole cap, as the throttle gives it
                per_thread[s.section][direction] = (
                    max(1, int(min(limits) / threads)) if limits else None)
        for s in members:
            read, write = per_thread[s.section].get("read"), per_thread[s.section].get("write")
            if read is not None and write is not None and 0 < s.read_pct < 100:
                read, write = _mixed(s, read, write)
            out[s.section] = (read, write)
    return out


def _mixed(shape: JobShape, read_bps: int, write_bps: int) -> tuple[int, int]:
    """A section that reads and writes (``rwmixread``) shares one drive: each I/O takes the
    time it takes alone, so at read share p the section does T = 1 / (p / R + (1 - p) / W)
    I/Os per second (R, W: the I/O rates of reading and of writing alone), p x T of them reads.
    Without this a 90/10 mix would get the whole read cap plus the write cap (blk-throttle caps
    each direction apart), more than either alone. Returns (read, write) bytes/s."""
    p = shape.read_pct / 100
    r_iops, w_iops = read_bps / shape.bs_read, write_bps / shape.bs_write
    total = 1 / (p / r_iops + (1 - p) / w_iops)
    return (max(1, int(p * total * shape.bs_read)),
            max(1, int((1 - p) * total * shape.bs_write)))


def pace_job(job_text: str, model: DriveModel, image_bytes: int | None) -> str:
    """``job_text`` with ``rate=R,W`` added to each job section (after its header) that does
    not pace itself; the ``[global]`` section and unknown shapes unchanged."""
    shapes = parse_job_shapes(job_text)
    rates = section_rates(model, shapes, image_bytes, _option_by_section(job_text, "startdelay"))
    own = _sections_with_own_rate(job_text)
    lines: list[str] = []
    for raw in job_text.splitlines(keepends=True):
        lines.append(raw)
        text = raw.split(";", 1)[0].split("#", 1)[0].strip()
        if not (text.startswith("[") and text.endswith("]")):
            continue
        name = text[1:-1].strip()
        read, write = rates.get(name, (None, None))
        if name == "global" or name in own or (read is None and write is None):
            continue
        value = f"{read or ''},{write or ''}"
        lines.append(f"rate={value}\n" if raw.endswith("\n") else f"\nrate={value}")
    return "".join(lines)


def _section_lines(job_text: str) -> Iterator[tuple[str, str | None, str, str]]:
    """``(kind, section, key, value)`` per line of a fio job file, comments cut: kind
    ``"section"`` for a ``[name]`` header (section = the name), ``"option"`` for a line inside a
    section (key lower-cased, value stripped)."""
    current = None
    for raw in job_text.splitlines():
        text = raw.split(";", 1)[0].split("#", 1)[0].strip()
        if text.startswith("[") and text.endswith("]"):
            current = text[1:-1].strip()
            yield "section", current, "", ""
        elif current is not None:
            key, _, value = text.partition("=")
            yield "option", current, key.strip().lower(), value.strip()


def _option_by_section(job_text: str, option: str) -> dict[str, str]:
    """Section -> the value of ``option`` it sets (``[global]``'s for sections that do not)."""
    values: dict[str, str] = {}
    names: list[str] = []
    for kind, section, key, value in _section_lines(job_text):
        if kind == "section":
            names.append(section or "")
        elif key == option:
            values[section or ""] = value
    default = values.get("global", "")
    return {n: values.get(n, default) for n in names if n != "global"}


def _sections_with_own_rate(job_text: str) -> set[str]:
    """Sections (``global`` included) that set a rate option themselves; a ``global`` one
    counts for every section."""
    found: set[str] = set()
    names: list[str] = []
    for kind, section, key, _ in _section_lines(job_text):
        if kind == "section":
            names.append(section or "")
        elif key in _OWN:
            found.add(section or "")
    return set(names) if "global" in found else found
