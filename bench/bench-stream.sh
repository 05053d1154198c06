#!/usr/bin/env bash
# Streaming against in-memory on one GPU, end to end (file in, file out),
# at 512³ and 1024³ uint8 with ~1000-voxel supervoxels; prints bench-stream's
# tables and writes one JSON file per size into OUTDIR (not a test).
#
#   bench/bench-stream.sh BENCH-STREAM-BINARY OUTDIR [SIZES]
#
# The volumes are made with numpy and tifffile (smooth structure, steps and
# noise, uint8, one page per slice) in OUTDIR; 1024³ takes 1 GiB on disk and
# its two label files 4 GiB each.
set -euo pipefail
bin=$1
out=$2
sizes=${3:-512 1024}
mkdir -p "$out"
for n in $sizes; do
  vol="$out/vol-$n.tif"
  python3 - "$vol" "$n" <<'PY'
import sys
import numpy as np
import tifffile
path, n = sys.argv[1], int(sys.argv[2])
s = np.sin(np.arange(n) * 0.11).astype(np.float32)
yy = s[(np.arange(n) * 7) % n][:, None]
xx = s[(np.arange(n) * 3) % n][None, :]
rng = np.random.default_rng(1)
def pages():
    for z in range(n):
        cell = ((z // 37 + np.arange(n)[:, None] // 41 + np.arange(n)[None, :] // 43) % 3)
        v = 0.5 + 0.3 * s[z] * yy * xx + 0.15 * cell + 0.05 * rng.random((n, n), dtype=np.float32)
        yield (v * 255 / 1.05).astype(np.uint8)
tifffile.imwrite(path, pages(), shape=(n, n, n), dtype=np.uint8, bigtiff=True)
PY
  segments=$(( n * n * n / 1000 ))
  depth=$(( n / 8 ))
  echo "== ${n}³ uint8, $segments segments, slabs of $depth slices"
  "$bin" "$vol" --n-segments "$segments" --slab-depth "$depth" --reps "${REPS:-2}" \
    --json "$out/stream-$n.json"
  rm -f "$vol"
done
