#!/usr/bin/env bash
# One huge volume (default 4096³ uint8, 64 GiB) segmented on several GPUs
# in one process and on as many MPI ranks with a GPU each; prints each
# run's wall time, stages and timeline (the engine's debug lines) and
# whether the two label files are the same bytes. The volume is made once
# (bench/make-volume.py) and kept in OUTDIR.
#   bench/bench-huge.sh SUPERVOX-CLI OUTDIR [N] [DEVICES] [-- slic options]
# e.g. bench/bench-huge.sh build/app/cli/supervox-cli /scratch/huge 4096 4
# BACKEND=cpu runs the same on the CPU (one process, then DEVICES ranks).
set -uo pipefail
cli=$1 out=$2 n=${3:-4096} devices=${4:-4}
shift $(( $# < 4 ? $# : 4 ))
[ "${1:-}" = "--" ] && shift
here=$(dirname "$0")
mkdir -p "$out"
segments=$(( n * n * n / 1000 ))
list=$(seq -s, 0 $(( devices - 1 )))
if [ ! -s "$out/v$n.tif" ]; then
  t0=$(date +%s.%N)
  /usr/bin/python3 "$here/make-volume.py" "$out/v$n.tif" "$n" > /dev/null || exit 1
  echo "volume made in $(/usr/bin/python3 -c "print(round($(date +%s.%N) - $t0, 1))") s"
fi
run() {
  local tag=$1 t0 rc
  shift
  rm -f "$out/$tag.tif"
  t0=$(date +%s.%N)
  G_MESSAGES_DEBUG=sv-engine,sv-cuda "$@" --n-segments "$segments" --json \
    > "$out/$tag.out" 2> "$out/$tag.err"
  rc=$?
  echo "== $tag: exit $rc, wall $(/usr/bin/python3 -c "print(round($(date +%s.%N) - $t0, 2))") s"
  grep -v DEBUG "$out/$tag.err" | tail -2
  grep -o '"seconds":{[^}]*}' "$out/$tag.out" | tail -1
  grep -h DEBUG "$out/$tag.out" "$out/$tag.err" | sed 's/\x1b\[[0-9;]*m//g; s/.*DEBUG[^:]*: //' \
    > "$out/$tag-timeline.txt"
  grep -E "streamed|first pass|final labels|connectivity|label file" "$out/$tag-timeline.txt" \
    | awk '{ m = substr ($0, 15) } !seen[m]++' | head -24
}
backend=${BACKEND:-cuda}
if [ "$backend" = cuda ]; then
  run devices "$cli" slic "$out/v$n.tif" -o "$out/devices.tif" --backend cuda --devices "$list" "$@"
else
  run devices "$cli" slic "$out/v$n.tif" -o "$out/devices.tif" --backend "$backend" "$@"
fi
# hwloc's OpenCL plugin starts every GPU's driver inside mpirun (1.2-1.5 s
# a launch on the four-GPU machine); a value already set is kept.
export HWLOC_COMPONENTS=${HWLOC_COMPONENTS:--opencl}
run ranks mpirun --oversubscribe -np "$devices" -x LD_LIBRARY_PATH -x G_MESSAGES_DEBUG \
  "$cli" slic "$out/v$n.tif" -o "$out/ranks.tif" --backend "$backend" "$@"
if cmp -s "$out/devices.tif" "$out/ranks.tif"; then
  echo "the ranks' label file = the devices' (cmp)"
else
  echo "the label files differ (or one is missing)"
fi
