#!/usr/bin/env bash
# Builds supervox-cli (CPU only) and runs the CPU benchmark against
# scikit-image. Extra arguments go to bench-cpu.py (e.g. --sizes 128).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${SV_BENCH_BUILD:-build-bench}
if [ ! -f "$build/build.ninja" ]; then
  meson setup "$build" -Dcuda=disabled -Dgui=disabled -Dbuildtype=release
fi
meson compile -C "$build" supervox-cli
exec /usr/bin/python3 bench/bench-cpu.py --cli "$build/app/cli/supervox-cli" "$@"
