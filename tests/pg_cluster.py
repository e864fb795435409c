"""A throwaway PostgreSQL cluster for the shared results store's tests.

The server binaries are found in ``$SSDQUAL_PG_BIN``, on ``PATH`` (``/usr/local/bin``), or in
Debian's ``/usr/lib/postgresql/<version>/bin`` (``apt-get install postgresql``, as
``scripts/setup.sh`` does), newest version first. ``initdb`` refuses to run as root, so as root
the cluster is made and run as ``nobody`` (``subprocess``'s ``user=``, no ``su``) in a folder of
its own under ``/tmp`` (pytest's own temp folders are 0700 root). It listens on a unix socket
in that folder and on 127.0.0.1 at a free port, trusts local connections (user ``ssdqual``),
and is stopped (``pg_ctl stop -m immediate``) and removed at the end.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

NEEDED = ("initdb", "pg_ctl", "postgres")
USER = "ssdqual"


def pg_bin() -> Path | None:
    """The folder holding initdb, pg_ctl and postgres, or None."""
    candidates = [os.environ.get("SSDQUAL_PG_BIN", "")]
    found = shutil.which("initdb")
    if found:
        candidates.append(str(Path(found).resolve().parent))
    candidates += sorted(glob.glob("/usr/lib/postgresql/*/bin"),
                         key=lambda p: int(Path(p).parent.name) if Path(p).parent.name.isdigit()
                         else 0, reverse=True)
    for folder in filter(None, candidates):
        if all(os.access(Path(folder) / tool, os.X_OK) for tool in NEEDED):
            return Path(folder)
    return None


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class PgCluster:
    """A running cluster: ``url(dbname)`` (TCP), ``socket_url(dbname)`` (libpq keywords),
    ``createdb(name)``."""

    def __init__(self, folder: Path, port: int) -> None:
        self.folder = folder
        self.port = port

    def url(self, dbname: str, password: str | None = None) -> str:
        secret = f":{password}" if password else ""
        return f"postgresql://{USER}{secret}@127.0.0.1:{self.port}/{dbname}"

    def socket_url(self, dbname: str) -> str:
        return f"host={self.folder} port={self.port} dbname={dbname} user={USER}"

    def createdb(self, name: str) -> str:
        """Create database ``name``; return its URL."""
        import psycopg

        with psycopg.connect(self.socket_url("postgres"), autocommit=True) as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)


@contextmanager
def pg_cluster(bin_dir: Path) -> Iterator[PgCluster]:
    """Start a cluster with the binaries of ``bin_dir``; stop and remove it on leaving."""
    folder = Path(tempfile.mkdtemp(prefix="ssdqual-pg-", dir="/tmp"))
    as_root = os.geteuid() == 0
    run_as: dict[str, object] = {"user": "nobody", "group": "nogroup", "extra_groups": []} \
        if as_root else {}
    if as_root:
        shutil.chown(folder, "nobody", "nogroup")
    data, log = folder / "data", folder / "server.log"
    port = free_port()
    env = dict(os.environ, LC_ALL="C", LANG="C")
    subprocess.run([str(bin_dir / "initdb"), "-D", str(data), "-U", USER, "--auth=trust",
                    "--no-sync", "-E", "UTF8"], check=True, capture_output=True, cwd=folder,
                   env=env, timeout=120, **run_as)  # type: ignore[call-overload]
    options = (f"-k {folder} -p {port} -c listen_addresses=127.0.0.1 -c fsync=off "
               "-c max_connections=60 -c shared_buffers=16MB")
    subprocess.run([str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(log), "-o", options,
                    "-w", "-t", "60", "start"], check=True, capture_output=True, cwd=folder,
                   env=env, timeout=90, **run_as)  # type: ignore[call-overload]
    try:
        yield PgCluster(folder, port)
    finally:
        subprocess.run([str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w",
                        "stop"], capture_output=True, cwd=folder, env=env, timeout=60,
                       **run_as)  # type: ignore[call-overload]
        shutil.rmtree(folder, ignore_errors=True)
