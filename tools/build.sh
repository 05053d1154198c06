#!/usr/bin/env bash
# Configures (once) and builds Supervox into build/.
set -euo pipefail
cd "$(dirname "$0")/.."

# nvcc lives outside PATH on a stock CUDA install; let meson find it.
if [ -z "${NVCC:-}" ] && ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  export NVCC=/usr/local/cuda/bin/nvcc
fi

if [ ! -f build/build.ninja ]; then
  meson setup build "$@"
fi
meson compile -C build
