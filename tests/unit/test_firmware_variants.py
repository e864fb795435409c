"""``firmware_variants`` in emulated model files: parsing, errors, and the model a variant
makes; the emulated firmware image format."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import pytest

from pytest_ssdqual.emulate.firmware import EmulatedFirmwareUpdater, read_emulated_image
from pytest_ssdqual.emulate.firmware_variants import variant_model
from pytest_ssdqual.emulate.model_file import load_model
from pytest_ssdqual.errors import ConfigErrors, DeviceError

REPO = Path(__file__).resolve().parents[2]
BASE = """\
version: 1
identity:
  model: EMU VARIANTS
  serial: EMU-VAR-1
  firmware: V1
  capacity_bytes: 64GB
  controller: EMU-TEST
  nand: demo
caps: {read_bw_mbps: 400, write_bw_mbps: 200, write_iops: 9000}
transfer_caps:
  write: {4k: 50, 128k: 200}
slc_cache: {size_bytes: 64MiB, write_bw_mbps: 100}
"""


def _model(tmp_path: Path, variants: str):
    path = tmp_path / "m.yaml"
    path.write_text(BASE + variants)
    return load_model(path)


def test_the_demo_model_lists_its_four_builds() -> None:
    model = load_model(REPO / "emulated" / "demo-firmware.yaml")
    assert {k: v.describe() for k, v in model.firmware_variants.items()} == {
        "DEMO2": "DEMO2: same behaviour",
        "DEMO2-SLOWSEQW": "DEMO2-SLOWSEQW: write_bw_mbps x0.9",
        "DEMO2-NOACT": "DEMO2-NOACT: fails to activate (image signature rejected by the boot "
                       "loader (Invalid Firmware Image))",
        "DEMO2-CORRUPT": "DEMO2-CORRUPT: corrupts 4096 bytes at offset 67108864",
    }
    assert variant_model(model, "DEMO2-SLOWSEQW").caps.describe() == (
        "read 200 MB/s, write 135 MB/s, read 3,000 IOPS, write 2,500 IOPS")


def test_a_speed_factor_scales_every_cap_of_its_dimension(tmp_path: Path) -> None:
    model = _model(tmp_path, """\
firmware_variants:
  V2: {speed: {write_bw_mbps: 0.5}, caps: {read_iops: 7000}}
  V3:
    corrupts_data: true
""")
    v2 = variant_model(model, "V2")
    assert v2.firmware == "V2"
    assert (v2.caps.write_bw_mbps, v2.caps.read_bw_mbps, v2.caps.read_iops,
            v2.caps.write_iops) == (100, 400, 7000, 9000)
    assert v2.transfer_caps["write"].points == ((4096, 25), (131072, 100))
    assert v2.slc_cache is not None and v2.slc_cache.write_bw_mbps == 50
    assert variant_model(model, "V1") is model
    assert model.firmware_variants["V3"].corrupts_at_bytes == 1 << 20
    with pytest.raises(KeyError, match="m has no firmware 'V9'; known: V1, V2, V3"):
        variant_model(model, "V9")


def test_bad_variants_are_reported_with_file_line_and_key(tmp_path: Path) -> None:
    with pytest.raises(ConfigErrors) as errors:
        _model(tmp_path, """\
firmware_variants:
  V1: {note: the shipped one}
  V2: {speed: {write_mbps: 0.9}}
  V3: {fails_to_activate: "bad signature", caps: {read_iops: 10}}
  V4: {corrupts_data: lots}
""")
    text = str(errors.value)
    assert "unknown key 'write_mbps'" in text and "firmware_variants.V2.speed" in text
    assert "'lots' is not a size" in text or "lots" in text
    with pytest.raises(ConfigErrors) as errors:
        _model(tmp_path, """\
firmware_variants:
  V1: {note: the shipped one}
  V3: {fails_to_activate: "bad signature", caps: {read_iops: 10}}
""")
    text = str(errors.value)
    assert "variant 'V1' is the firmware the model ships with" in text
    assert "variant 'V3' fails to activate, so its other keys never act" in text
    assert f"{tmp_path / 'm.yaml'}:14" in text  # the V1 line


def test_emulated_images_and_what_the_drive_refuses(tmp_path: Path) -> None:
    model = load_model(REPO / "emulated" / "demo-firmware.yaml")
    image = tmp_path / "fw.img"
    image.write_text("ssdqual_emulated_firmware: 1\nfirmware: DEMO2\n")
    assert read_emulated_image(image) == {"firmware": "DEMO2", "model": ""}
    updater = EmulatedFirmwareUpdater(SimpleNamespace(model=model))  # type: ignore[arg-type]
    updater.download(image)
    assert updater.commit(2, 1) == "controller"
    assert updater.firmware_log()["slots"] == [(1, "DEMO1", False), (2, "DEMO2", False),
                                               (3, None, False)]
    image.write_text("ssdqual_emulated_firmware: 1\nfirmware: DEMO9\n")
    with pytest.raises(DeviceError, match="demo-firmware has no firmware 'DEMO9'; known: "
                       "DEMO1, DEMO2, DEMO2-SLOWSEQW, DEMO2-NOACT, DEMO2-CORRUPT"):
        updater.download(image)
    image.write_text("ssdqual_emulated_firmware: 1\nfirmware: DEMO2\nmodel: OTHER\n")
    with pytest.raises(DeviceError, match="is for 'OTHER', this drive is 'EMU DEMO FIRMWARE"):
        updater.download(image)
    image.write_bytes(b"\x7fELF\x00 a real image")
    with pytest.raises(DeviceError, match="is not an emulated firmware image"):
        updater.download(image)
    with pytest.raises(DeviceError, match="slot 4 does not exist"):
        updater.commit(4, 1)
