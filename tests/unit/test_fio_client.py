"""fio's client/server output brought to a local run's shape (``fio.client``), on real fio 3.33
client outputs (``tests/data/fio_client/README.md``) and fio 3.43's two-server shape (BUGLOG
B30)."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from pytest_ssdqual.errors import FioOutputError
from pytest_ssdqual.fio.client import (
    FioServer,
    client_argv,
    client_failure_note,
    localise_client_output,
    rename_client_logs,
    settle_client_run,
)
from pytest_ssdqual.fio.extract import extract_json_document
from pytest_ssdqual.fio.logs import find_logs
from pytest_ssdqual.fio.parse import parse_fio_output, written_bytes

DATA = Path(__file__).resolve().parents[1] / "data" / "fio_client"
IP4 = DATA / "fio-3.33_client_ip4_randrw70_4k_qd8_jsonplus.json"
IP6 = DATA / "fio-3.33_client_ip6_randread_4k_qd8_jsonplus.json"


def test_one_server_output_reads_as_a_local_run() -> None:
    text = IP4.read_text()
    raw = json.loads(text)
    entry = raw["client_stats"][0]
    assert "hostname" not in raw["global options"] and entry["hostname"] == "127.0.0.2"
    local = localise_client_output(text, host="127.0.0.2", port=18765, source=str(IP4))
    doc = json.loads(local)
    assert "client_stats" not in doc and len(doc["jobs"]) == 1
    assert "hostname" not in doc["jobs"][0] and doc["jobs"][0]["jobname"] == "rw"
    assert doc["global options"]["filename"] == raw["global options"]["filename"]
    result = parse_fio_output(local, source="localised")
    read, write = result.directions["read"], result.directions["write"]
    assert read.total_ios == entry["read"]["total_ios"] > 0
    assert write.io_bytes == entry["write"]["io_bytes"] == written_bytes(local)
    assert read.iops == pytest.approx(entry["read"]["iops"])
    # the tails come from json+'s bins, as for a local run
    assert read.histogram is not None and read.lat_p99_us is not None
    assert read.lat_p99_us == pytest.approx(
        entry["read"]["clat_ns"]["percentile"]["99.000000"] / 1000, rel=0.02)


def test_ipv6_server_name_matches_without_brackets() -> None:
    text = IP6.read_text()
    assert json.loads(text)["client_stats"][0]["hostname"] == "::1"
    doc = json.loads(localise_client_output(text, host="::1", port=18766, source="ip6"))
    assert [j["jobname"] for j in doc["jobs"]] == ["rw"]
    assert parse_fio_output(json.dumps(doc)).directions["read"].total_ios > 0


def _fio_343_two_servers() -> str:
    """fio 3.43's shape (SOURCES.md, B30): global options a list, one object per server with
    hostname/port; an "All clients" aggregate; built from the real ip4 file."""
    raw = json.loads(IP4.read_text())
    ours = raw["client_stats"][0]
    theirs = copy.deepcopy(ours)
    theirs.update(hostname="127.0.0.3", port=18802)
    theirs["read"]["total_ios"] = 1
    aggregate = copy.deepcopy(ours)
    aggregate["jobname"] = "All clients"
    for key in ("hostname", "port"):
        aggregate.pop(key)
    raw["global options"] = [{"hostname": "127.0.0.3", "port": 18802, **raw["global options"]},
                             {"hostname": "127.0.0.2", "port": 18765, **raw["global options"]}]
    raw["client_stats"] = [theirs, ours, aggregate]
    return "\n" + json.dumps(raw, indent=2)


def test_fio_343_duplicated_global_options_and_aggregate() -> None:
    text = _fio_343_two_servers()
    doc = json.loads(localise_client_output(text, host="127.0.0.2", port=18765, source="343"))
    assert "hostname" not in doc["global options"] and "filename" in doc["global options"]
    assert len(doc["jobs"]) == 1
    ours = json.loads(IP4.read_text())["client_stats"][0]
    assert doc["jobs"][0]["read"]["total_ios"] == ours["read"]["total_ios"]
    # an output with only another server's job is refused, not taken for ours
    only_theirs = json.loads(text)
    only_theirs["client_stats"] = only_theirs["client_stats"][:1]
    with pytest.raises(FioOutputError, match=r"ran on \('127.0.0.3', 18802\), not on the "
                                             r"server asked \(127.0.0.2, port 18765\)"):
        localise_client_output(json.dumps(only_theirs), host="127.0.0.2", port=18765,
                               source="343")


def test_entry_without_a_host_name_is_the_one_servers() -> None:
    raw = json.loads(IP4.read_text())
    for key in ("hostname", "port"):
        raw["client_stats"][0].pop(key)
    doc = json.loads(localise_client_output(json.dumps(raw), host="lab-07", port=8765,
                                            source="nohost"))
    assert doc["jobs"][0]["read"]["total_ios"] == raw["client_stats"][0]["read"]["total_ios"]


def test_failed_clients_say_why() -> None:
    killed = (DATA / "fio-3.33_client_server_killed_mid_run.json").read_text()
    local = localise_client_output(killed, host="127.0.0.2", port=18765, source="k")
    before, doc, _after = extract_json_document(local)
    assert before.strip() == "client: host=127.0.0.2 disconnected" and doc["jobs"] == []
    with pytest.raises(FioOutputError, match="lists no jobs"):
        parse_fio_output(local)
    note = client_failure_note(killed, "client: host=127.0.0.2 disconnected\n",
                               server="127.0.0.2:18765")
    assert note == ("fio server 127.0.0.2:18765: connection lost or refused "
                    "(client: host=127.0.0.2 disconnected)")
    refused = (DATA / "fio-3.33_client_connection_refused.json").read_text()
    assert localise_client_output(refused, host="::1", port=18766, source="r") == refused
    assert "failed to connect to ::1:18766" in client_failure_note(refused, "", server="x")
    readonly = (DATA / "fio-3.33_client_ip6_readonly_write_refused.json").read_text()
    assert client_failure_note(readonly, "", server="x") == ""
    with pytest.raises(FioOutputError):
        parse_fio_output(readonly)


def test_readonly_goes_after_client() -> None:
    argv = client_argv("/usr/bin/fio", "ip6:::1,8765", Path("/w/j.json"), readonly=True,
                       extra_args=[], job_path=Path("/w/j.fio"))
    assert argv == ["/usr/bin/fio", "--client=ip6:::1,8765", "--readonly",
                    "--output-format=json+", "--output=/w/j.json", "/w/j.fio"]
    assert FioServer("::1", 8765).address == "ip6:::1,8765"
    assert str(FioServer("::1", 8765)) == "[::1]:8765"


def test_logs_renamed_and_output_settled(tmp_path: Path) -> None:
    (tmp_path / "log_bw.1.log.127.0.0.2").write_text("1000, 5000, 1, 0, 0\n")
    (tmp_path / "log_bw.1.log.::1").write_text("1000, 6000, 1, 0, 0\n")
    (tmp_path / "log_bw.2.log.lab-07.example").write_text("1000, 7000, 1, 0, 0\n")
    (tmp_path / "other.txt").write_text("x")
    out = tmp_path / "rw.json"
    out.write_text(IP4.read_text())
    stderr = settle_client_run(tmp_path, out, FioServer("127.0.0.2", 18765), 0, "")
    assert stderr == ""
    assert json.loads(out.read_text())["jobs"][0]["jobname"] == "rw"
    assert (tmp_path / "rw.client.json").read_text() == IP4.read_text()
    assert [p.name for p in find_logs(tmp_path, "bw")] == ["log_bw.1.log", "log_bw.2.log"]
    assert rename_client_logs(tmp_path) == []
