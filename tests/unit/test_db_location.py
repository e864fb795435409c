"""``--results-db``: which database, how it is named in messages (``results.db_location``)."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from pytest_ssdqual.cli.options import results_store
from pytest_ssdqual.errors import ConfigError
from pytest_ssdqual.results.db_location import redact, resolve_results_db


@pytest.mark.parametrize(("url", "shown"), [
    ("postgresql://lab:s3cret@db1.lab:5432/ssdqual", "postgresql://lab@db1.lab:5432/ssdqual"),
    ("postgres://lab@db1/ssdqual?password=s3cret&sslmode=require",
     "postgres://lab@db1/ssdqual?sslmode=require"),
    ("postgresql://[::1]:5433/q", "postgresql://[::1]:5433/q"),
    ("host=db1 password=s3cret dbname=ssdqual", "host=db1 dbname=ssdqual"),
    ("host=db1 password='s3 cr\\'et' dbname=q user=lab", "host=db1 dbname=q user=lab"),
])
def test_a_url_is_shown_without_its_password(url: str, shown: str) -> None:
    assert redact(url) == shown


def test_the_option_then_the_environment_then_the_ini_value() -> None:
    env = {"SSDQUAL_RESULTS_DB": "postgresql://env@h/d"}
    assert resolve_results_db("host=opt dbname=d", ini="postgresql://ini@h/d",
                              environ=env) == "host=opt dbname=d"
    assert resolve_results_db(None, ini="postgresql://ini@h/d", environ=env) == (
        "postgresql://env@h/d")
    assert resolve_results_db(None, ini="postgresql://ini@h/d", environ={}) == (
        "postgresql://ini@h/d")
    assert resolve_results_db(None, ini="", environ={}) is None


@pytest.mark.parametrize("value", ["mysql://x@y/z", "ssdqual-results", "sqlite:///x.db"])
def test_a_value_that_names_no_postgresql_database_is_refused_with_both_forms(value: str
                                                                             ) -> None:
    with pytest.raises(ConfigError) as err:
        resolve_results_db(None, environ={"SSDQUAL_RESULTS_DB": f"{value}"})
    text = str(err.value)
    assert "$SSDQUAL_RESULTS_DB" in text and "is not a PostgreSQL database" in text
    assert "postgresql://USER@HOST:PORT/DBNAME" in text and "'host=HOST dbname=DBNAME" in text


def test_the_commands_read_the_ini_value_pytest_reads(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pytest.ini").write_text("[pytest]\nssdqual_results_db = mysql://lab@db1/q\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("SSDQUAL_RESULTS_DB", raising=False)
    with pytest.raises(ConfigError) as err:
        results_store(argparse.Namespace(results_dir=None, results_db=None))
    assert "ini ssdqual_results_db: 'mysql://lab@db1/q' is not a PostgreSQL database" in str(
        err.value)
    with pytest.raises(ConfigError):  # with --results-dir too: the database is another option
        results_store(argparse.Namespace(results_dir="here", results_db=None))
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    store = results_store(argparse.Namespace(results_dir="here", results_db=None))
    assert store.where == str(tmp_path / "here")  # no database: the embedded store
