"""``ssdqual emulated``: list and check emulated drive models; ``ssdqual identify emu:MODEL``.

Offline and without root: nothing here builds a drive (``emulator`` does that in a pytest run).

    ssdqual emulated list [--emu-models DIR]     every model: identity, controller/NAND, caps
    ssdqual emulated check FILE|DIR ...          validate model files (exit 4 on an error)
    ssdqual identify emu:MODEL[@SPEED]           what a run would see, without building it
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from pytest_ssdqual.drive.spec import DriveSpec, parse_emu_ref
from pytest_ssdqual.emulate.model import DriveModel
from pytest_ssdqual.emulate.model_file import available_models, find_model, load_model
from pytest_ssdqual.emulate.resolve import model_folders
from pytest_ssdqual.thresholds.profile import DriveFacts

__all__ = ["add_parser", "describe_model", "identify", "run_command"]


def add_parser(sub: Any) -> None:
    """Register ``emulated`` on the ``ssdqual`` subcommand parser."""
    p = sub.add_parser("emulated", help="list or check emulated drive models (--drive=emu:MODEL)")
    actions = p.add_subparsers(dest="emu_action", required=True)
    p_list = actions.add_parser("list", help="the models emu:NAME finds")
    p_list.add_argument("--emu-models", action="append", default=[], metavar="DIR",
                        help="model folder, searched before ./emulated (repeatable)")
    p_check = actions.add_parser("check", help="validate model files")
    p_check.add_argument("paths", nargs="*", default=["emulated"],
                         help="model files or folders (default: emulated)")
    p.set_defaults(ssdqual_handler=run_command)


def describe_model(model: DriveModel) -> list[str]:
    """A few lines about a model: identity, what the thresholds match, caps and behaviours."""
    lines = [
        f"{model.name}: {model.model}, firmware {model.firmware}, S/N {model.serial}, "
        f"{model.capacity_bytes / 1e9:.1f} GB ({model.file})",
        f"  controller {model.controller} / NAND {model.nand}",
        f"  fresh caps: {model.caps.describe()}",
    ]
    for name, curves, unit in (("transfer_caps", model.transfer_caps, "MB/s"),
                               ("qd_iops", model.qd_iops, "IOPS")):
        for direction, curve in curves.items():
            points = ", ".join(f"{_x(x, name)}: {v:,g}" for x, v in curve.points)
            lines.append(f"  {name} {direction} ({unit}): {points}")
    if model.slc_cache is not None:
        slc = model.slc_cache
        size = (f"{slc.size_pct:g} % of the image" if slc.size_pct is not None
                else f"{slc.size_bytes:,} bytes")
        lines.append(f"  SLC cache {size}, then {slc.caps.describe()}; "
                     f"emptied at {slc.idle_flush_mbps:g} MB/s while idle")
    if model.dirty is not None:
        dirty = model.dirty
        after = (f"{dirty.after_write_pct:g} % of the image" if dirty.after_write_pct is not None
                 else f"{dirty.after_write_bytes:,} bytes")
        what = f"{after} of random writes" if dirty.random_writes_only else f"{after} written"
        lines.append(f"  dirty after {what}: {dirty.caps.describe()}")
    if model.recovers:
        lines.append("  recovery: " + model.recovery_text())
    if model.fragmentation is not None:
        lines.append("  " + model.fragmentation.describe())
    if model.copy is not None:
        lines.append(f"  reading and writing at once: every cap x{model.copy.concurrent_factor:g}")
    if model.power_loss is not None:
        lines.append("  " + model.power_loss.describe())
    lines += _h3_lines(model)
    return lines


def _x(x: float, curve: str) -> str:
    """A curve's x as the model file writes it: ``4k`` / ``8m`` for a transfer size, else the
    queue depth."""
    if curve != "transfer_caps":
        return f"{x:g}"
    for unit, size in (("m", 2**20), ("k", 2**10)):
        if x >= size and x % size == 0:
            return f"{int(x // size)}{unit}"
    return f"{x:g}"


def _h3_lines(model: DriveModel) -> list[str]:
    """figures_scale and the NVMe facts of an emulated NVMe twin."""
    lines = []
    if model.figures_scale is not None:
        lines.append(f"  figures x{model.figures_scale.factor:g} of the real drive's "
                     f"(figures_scale: {model.figures_scale.why}); rate limits scaled alike")
    nvme = model.nvme
    if nvme is not None and nvme.power_states:
        states = ", ".join(
            f"PS{i} {ps.max_power_w:g} W"
            + (f" idle {ps.entry_latency_us:,}/{ps.exit_latency_us:,} us" if ps.non_operational
               else "") for i, ps in enumerate(nvme.power_states))
        lines.append(f"  NVMe power states (reported, not emulated): {states}; APST "
                     f"{'supported' if nvme.apst_supported else 'not supported'}")
    if nvme is not None and nvme.warning_temperature_c is not None:
        lines.append(f"  WCTEMP {nvme.warning_temperature_c:g} °C, CCTEMP "
                     f"{nvme.critical_temperature_c:g} °C")
    return lines


def _files(paths: list[str]) -> list[Path]:
    files: list[Path] = []
    for name in paths:
        path = Path(name)
        if path.is_dir():
            files += sorted([*path.glob("*.yaml"), *path.glob("*.yml")])
        else:
            files.append(path)
    return files


def run_command(args: argparse.Namespace) -> int:
    """``ssdqual emulated list|check``. Raises ConfigError (exit 4) for a bad model file."""
    if args.emu_action == "check":
        files = _files(args.paths)
        for path in files:
            load_model(path)
        print(f"ok: {len(files)} model file(s)")
        return 0
    folders = model_folders(Path.cwd(), [Path(d) for d in args.emu_models])
    models = available_models(folders)
    if not models:
        print(f"no models in {', '.join(str(f) for f in folders)}")
    for path in models.values():
        for line in describe_model(load_model(path)):
            print(line)
    return 0


def model_facts(spec: DriveSpec, *, folders: list[Path] | None = None) -> DriveFacts:
    """What threshold profiles match for ``emu:MODEL[@SPEED]``, from its model file (as the
    run's identity and assignment give them: controller / NAND of the model, kind ``emu``,
    the model's ``figures_scale``). Raises ``ConfigError`` for an unknown or bad model."""
    ref = parse_emu_ref(spec.raw.split(":", 1)[1])
    path = find_model(ref.model, folders if folders is not None else model_folders(Path.cwd()))
    model = load_model(path)
    return DriveFacts(
        controller=model.controller, nand=model.nand, firmware=model.firmware, model=model.model,
        serial=model.serial, capacity_bytes=model.capacity_bytes, transport="emulated",
        kind="emu",
        figures_scale=model.figures_scale.factor if model.figures_scale is not None else None)


def identify(spec: DriveSpec, *, folders: list[Path] | None = None) -> int:
    """``ssdqual identify emu:MODEL[@SPEED]``: the identity a run would give the drive."""
    ref = parse_emu_ref(spec.raw.split(":", 1)[1])
    path = find_model(ref.model, folders if folders is not None else model_folders(Path.cwd()))
    model = load_model(path).with_speed(ref.speed)
    print(f"{'drive':15} {spec.raw}" + (f" (every cap x{ref.speed:g})" if ref.speed != 1 else ""))
    for line in describe_model(model):
        print(line)
    print("  kind emu, transport emulated; the image is scaled down to the run profile's scratch "
          "size (or emulated_capacity_bytes); writes allowed (the plugin creates the drive); "
          "needs root")
    return 0
