#!/usr/bin/env bash
# Idempotent set-up for a fresh Debian machine with Python 3.11: OS tools (fio, smartmontools,
# nvme-cli) when missing, then a virtual environment in .venv with the package and its
# dependencies. Sourced by ./run.sh and ./test.sh; safe to run again.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

need_apt=()
command -v fio >/dev/null 2>&1 || need_apt+=(fio)
command -v smartctl >/dev/null 2>&1 || need_apt+=(smartmontools)
command -v nvme >/dev/null 2>&1 || need_apt+=(nvme-cli)
command -v losetup >/dev/null 2>&1 || need_apt+=(mount)
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "setup: installing OS packages: ${need_apt[*]}" >&2
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need_apt[@]}" >/dev/null \
    || { $SUDO apt-get update -q >/dev/null && \
         $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need_apt[@]}" >/dev/null; }
fi

PYTHON=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating .venv" >&2
  "$PYTHON" -m venv .venv
fi
stamp=.venv/.ssdqual-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  echo "setup: installing pytest-ssdqual and its dependencies into .venv" >&2
  .venv/bin/python -m pip install -q --disable-pip-version-check -e ".[dev]"
  touch "$stamp"
fi
