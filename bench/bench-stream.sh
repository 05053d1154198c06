#!/usr/bin/env bash
# Streaming against in-memory on one GPU, end to end (file in, file out),
# over sizes, noise and compactness, uint8 with ~1000-voxel supervoxels;
# prints bench-stream's tables and writes one JSON file per run into OUTDIR
# (not a test). bench/plot-stream.py turns them into a table and a plot.
#
#   bench/bench-stream.sh BENCH-STREAM-BINARY OUTDIR [SIZES]
#
# SIZES default "512 1024". NOISE (default 0.05) and COMPACTNESS (default
# 10) are lists swept for every size; DEVICE_LIMITS (MiB, default 0: what
# the GPU has free) runs the streamed side once per limit on the same
# volume, e.g. "0 420" for a run that keeps every slab on the device and one
# that keeps two of eight. Sizes up to SKIMAGE_MAX (default 128) are also
# segmented by scikit-image (python3's) with the same parameters, timed,
# and compared with the streamed labels. BACKENDS (default "cuda") lists
# the backends, "cuda cpu" for both: the CPU rows (both sides on the CPU
# reference backend) go to stream-N-noiseX-cC-cpu.json.
#
# The volumes are made by bench/make-volume.py (numpy and tifffile: smooth
# structure, steps and noise, uint8, one page per slice, on every core) in
# OUTDIR and removed after; 1024³ takes 1 GiB on disk and its two label
# files 4 GiB each.
set -euo pipefail
bin=$1
out=$2
sizes=${3:-512 1024}
mkdir -p "$out"
for n in $sizes; do
  for noise in ${NOISE:-0.05}; do
    vol="$out/vol-$n.tif"
    python3 "$(dirname "$0")/make-volume.py" "$vol" "$n" "$noise"
    segments=$(( n * n * n / 1000 ))
    depth=$(( n / 8 ))
    for c in ${COMPACTNESS:-10}; do
      echo "== ${n}³ uint8, noise $noise, compactness $c, $segments segments, slabs of $depth slices"
      for backend in ${BACKENDS:-cuda}; do
        if [ "$backend" = cpu ]; then
          echo "-- CPU backend"
          "$bin" "$vol" --n-segments "$segments" --compactness "$c" --slab-depth "$depth" \
            --reps "${REPS:-2}" --backend cpu --keep-labels \
            --json "$out/stream-$n-noise$noise-c$c-cpu.json"
          continue
        fi
        for limit in ${DEVICE_LIMITS:-0}; do
          echo "-- device limit ${limit} MiB (0: what is free)"
          "$bin" "$vol" --n-segments "$segments" --compactness "$c" --slab-depth "$depth" \
            --reps "${REPS:-2}" --device-limit "$limit" --keep-labels \
            --json "$out/stream-$n-noise$noise-c$c-$limit.json"
        done
      done
      if [ "$n" -le "${SKIMAGE_MAX:-128}" ]; then
        python3 - "$vol" "$out/bench-stream-labels.tif" "$segments" "$c" \
          "$out/skimage-$n-noise$noise-c$c.json" <<'PY'
import json, sys, time
import numpy as np
import tifffile
from skimage.segmentation import slic
import skimage
vol, ours, segments, c, path = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
image = tifffile.imread(vol)
t0 = time.perf_counter()
labels = slic(image, n_segments=segments, compactness=c, channel_axis=None, start_label=1)
seconds = time.perf_counter() - t0
# The contract (SLIC-SEMANTICS.md): equal on >= 99.5 % of voxels; float32
# against scikit-image's float64 can tip near-ties at low compactness.
agree = float(np.mean(labels == tifffile.imread(ours)))
same = agree == 1.0
print(f"scikit-image {skimage.__version__}: {seconds:.2f} s; streamed labels equal on {100 * agree:.3f} % of voxels")
json.dump({"skimage": skimage.__version__, "seconds": seconds, "identical": same, "agree": agree},
          open(path, "w"))
PY
      fi
    done
    rm -f "$vol" "$out/bench-stream-labels.tif"
  done
done
