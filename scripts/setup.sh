#!/usr/bin/env bash
# Idempotent set-up for a fresh Debian machine with Python 3.11: OS tools (fio, smartmontools,
# nvme-cli, hdparm, util-linux's wipefs) when missing, then a virtual environment in .venv with the
# package and its dependencies. Sourced by ./run.sh and ./test.sh; safe to run again.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

need_apt=()
command -v fio >/dev/null 2>&1 || need_apt+=(fio)
command -v smartctl >/dev/null 2>&1 || need_apt+=(smartmontools)
command -v nvme >/dev/null 2>&1 || need_apt+=(nvme-cli)
# hdparm: a SATA drive's ATA security state (a password set makes its purge not FOB; unread, too)
{ command -v hdparm || command -v /usr/sbin/hdparm || command -v /sbin/hdparm; } >/dev/null 2>&1 \
  || need_apt+=(hdparm)
command -v losetup >/dev/null 2>&1 || need_apt+=(mount)
# wipefs / blkid: a block device's own partition-table and file-system signatures are read
# before any write; without them writes are refused (an unchecked drive is not blank)
{ command -v wipefs || command -v /usr/sbin/wipefs || command -v /sbin/wipefs; } >/dev/null 2>&1 \
  || need_apt+=(util-linux)
# PostgreSQL server binaries (initdb, pg_ctl, postgres): the shared results store's tests
# (tests/plugin/test_shared_store.py) start a throwaway cluster of their own
{ command -v initdb || ls /usr/lib/postgresql/*/bin/initdb; } >/dev/null 2>&1 \
  || need_apt+=(postgresql)
# OpenSSH server and client: the remote-drive tests (tests/e2e/test_remote_e2e.py) start their
# own sshd on a loopback port (where systemd runs, the one the package starts is disabled below)
[ -x /usr/sbin/sshd ] && command -v ssh >/dev/null 2>&1 || need_apt+=(openssh-server openssh-client)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "setup: installing OS packages: ${need_apt[*]}" >&2
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need_apt[@]}" >/dev/null \
    || { $SUDO apt-get update -q >/dev/null && \
         $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need_apt[@]}" >/dev/null; }
  # installed here only for the tests' own sshd: the system one the package starts where
  # systemd runs (port 22, for every user) is stopped and disabled again
  if [[ " ${need_apt[*]} " == *" openssh-server "* ]] && [ -d /run/systemd/system ]; then
    $SUDO systemctl disable --now ssh.service ssh.socket >/dev/null 2>&1 || true
  fi
  # likewise the PostgreSQL cluster Debian's package creates and starts (port 5432): the tests
  # start throwaway clusters of their own
  if [[ " ${need_apt[*]} " == *" postgresql "* ]] && [ -d /run/systemd/system ]; then
    $SUDO systemctl disable --now postgresql.service >/dev/null 2>&1 || true
  fi
fi

# Reports (`ssdqual report`): Node.js and the Allure 3 command-line tool in tools/ (pinned by
# tools/package-lock.json; no Java), and headless Chromium for the report's end-to-end test
# (measured here: about 25 s to install chromium, 10 s for npm ci, once). Not fatal: without
# them the qualification still runs; `ssdqual report` then says what is missing.
need_web=()
{ command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1; } || need_web+=(nodejs npm)
command -v chromium >/dev/null 2>&1 || need_web+=(chromium)
if [ ${#need_web[@]} -gt 0 ]; then
  echo "setup: installing OS packages for reports: ${need_web[*]}" >&2
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  apt_web() { $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
                --no-install-recommends "${need_web[@]}" >/dev/null; }
  apt_web || { $SUDO apt-get update -q >/dev/null && apt_web; } \
    || echo "setup: WARNING: could not install ${need_web[*]}: reports need them" >&2
fi
if command -v npm >/dev/null 2>&1 && { [ ! -x tools/node_modules/.bin/allure ] || \
     [ tools/package-lock.json -nt tools/node_modules/.package-lock.json ]; }; then
  echo "setup: installing the Allure 3 report tool into tools/ (npm ci)" >&2
  (cd tools && npm ci --no-audit --no-fund --loglevel=error >/dev/null) \
    || echo "setup: WARNING: npm ci in tools/ failed: ssdqual report will not work" >&2
fi

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv" >&2
  "$PYTHON" -m venv .venv
fi
# The install is redone only when pyproject.toml's content changed since the last one (its hash
# in the stamp; a checkout or a touch alone changes the file's time, never its hash), or when
# the editable install points at another checkout (a .venv copied or moved).
stamp=.venv/.ssdqual-installed
want="$(sha256sum pyproject.toml | cut -d' ' -f1) $PWD"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "setup: installing pytest-ssdqual and its dependencies into .venv" >&2
  .venv/bin/python -m pip install -q --disable-pip-version-check -e ".[dev]"
  echo "$want" > "$stamp"
fi
