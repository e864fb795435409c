#!/usr/bin/env bash
# The harness's benchmarks (BENCHMARKS.md): ./benchmarks/run.sh [PART ...] [--runs N]
# Run as root (loop devices, /dev/zram0, blkio caps); heavy parts take /tmp/ssdqual-heavy.lock.
set -euo pipefail
cd "$(dirname "$0")/.."
exec .venv/bin/python -m benchmarks "$@"
