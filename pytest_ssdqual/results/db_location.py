"""``--results-db``: a PostgreSQL database shared by many hosts, one rule for the pytest run and
for the ``ssdqual`` commands (the option is declared with ``--results-dir``:
``location.add_results_dir_option``).

``--results-db URL`` given: URL; otherwise ``$SSDQUAL_RESULTS_DB``, else the ini value
``ssdqual_results_db``; none of them: no database (the embedded store: folder + SQLite). A URL
is a libpq connection string, either ``postgresql://user@host:5432/db`` (``postgres://`` too)
or ``host=db1 port=5432 dbname=ssdqual user=lab`` (PostgreSQL manual, "Connection Strings",
libpq section 34.1.1). A password is better kept out of it (``~/.pgpass`` or ``$PGPASSWORD``,
as every libpq client reads them); wherever the URL is printed it is shown without one
(``redact``).
"""

from __future__ import annotations

import os
import re
import urllib.parse
from collections.abc import Mapping
from typing import Any

from pytest_ssdqual.errors import ConfigError
from pytest_ssdqual.results.location import RESULTS_DB_ENV, RESULTS_DB_INI

__all__ = ["LAB_EXTRA_FIX", "RESULTS_DB_ENV", "RESULTS_DB_INI", "check_results_db",
           "option_results_db", "redact", "resolve_results_db"]

#: The fix when the optional driver (psycopg 3) is not installed.
LAB_EXTRA_FIX = "pip install 'pytest-ssdqual[lab]' (psycopg 3, the PostgreSQL driver)"

_URL = re.compile(r"^postgres(?:ql)?://", re.IGNORECASE)
_KEYWORD = re.compile(r"^\s*[A-Za-z_]+\s*=")
_PASSWORD_KV = re.compile(r"(?i)\bpassword\s*=\s*(?:'(?:[^'\\]|\\.)*'|\S+)\s*")


def option_results_db(config: Any) -> str | None:
    """``resolve_results_db`` of a pytest run (``config``: its ``pytest.Config``, read through
    ``getoption`` and ``getini``)."""
    return resolve_results_db(config.getoption("results_db"),
                              ini=str(config.getini(RESULTS_DB_INI) or ""))


def resolve_results_db(option: str | None, *, ini: str = "",
                       environ: Mapping[str, str] | None = None) -> str | None:
    """The database of the results store: ``option``, else ``$SSDQUAL_RESULTS_DB``, else
    ``ini``; None when none is set (the embedded store).

    Raises:
        ConfigError: the value is not a PostgreSQL URL nor a libpq key=value string.
    """
    env = (os.environ if environ is None else environ).get(RESULTS_DB_ENV, "")
    value = (option or env or ini or "").strip()
    if not value:
        return None
    source = ("--results-db" if option else f"${RESULTS_DB_ENV}" if env else
              f"ini {RESULTS_DB_INI}")
    check_results_db(value, source)
    return value


def check_results_db(value: str, source: str = "--results-db") -> None:
    """Refuse a value that names no PostgreSQL database.

    Raises:
        ConfigError: naming ``source``, the value (without a password) and the two forms.
    """
    if _URL.match(value) or (_KEYWORD.match(value) and "://" not in value):
        return
    raise ConfigError(
        f"{redact(value)!r} is not a PostgreSQL database", key=source,
        fix="give postgresql://USER@HOST:PORT/DBNAME or 'host=HOST dbname=DBNAME user=USER'; "
        "leave it out for the embedded store (a folder with an SQLite index: --results-dir)")


def redact(url: str) -> str:
    """``url`` without its password, for messages: ``postgresql://lab:s3cret@db1/q`` ->
    ``postgresql://lab@db1/q``; ``host=db1 password=s3cret dbname=q`` -> ``host=db1
    dbname=q``; a ``?password=`` query parameter is dropped too."""
    if _URL.match(url):
        try:
            parts = urllib.parse.urlsplit(url)
        except ValueError:
            return re.sub(r"(//[^:/@]*):[^@/]*@", r"\1@", url)
        netloc = parts.netloc
        if "@" in netloc:
            user, host = netloc.rsplit("@", 1)
            netloc = f"{user.split(':', 1)[0]}@{host}"
        query = urllib.parse.urlencode(
            [(k, v) for k, v in urllib.parse.parse_qsl(parts.query, keep_blank_values=True)
             if k.lower() != "password"])
        return urllib.parse.urlunsplit((parts.scheme, netloc, parts.path, query, ""))
    return _PASSWORD_KV.sub("", url).strip()
