#!/usr/bin/env bash
# The same uint8 volume as TIFF and as OME-Zarr (64³ chunks, zstd:3), read,
# segmented and written by supervox-cli slic in each format; prints the
# median of REPEATS runs' load, total and wall seconds of each.
#   bench/bench-zarr.sh SUPERVOX-CLI OUTDIR [N] [REPEATS] [-- slic options]
set -euo pipefail
cli=$1 out=$2 n=${3:-256} reps=${4:-3}
shift $(( $# < 4 ? $# : 4 ))
[ "${1:-}" = "--" ] && shift
mkdir -p "$out"
here=$(dirname "$0")
/usr/bin/python3 "$here/make-volume.py" "$out/vol.tif" "$n" 0.1
/usr/bin/python3 - "$out/vol.tif" "$out/vol.zarr" <<'PY'
import sys, numcodecs, tifffile, zarr
v = tifffile.imread(sys.argv[1])
g = zarr.open_group(sys.argv[2], mode="w")
g.create_dataset("0", data=v, chunks=(64, 64, 64), compressor=numcodecs.Zstd(level=3))
g.attrs["multiscales"] = [{"version": "0.4",
    "axes": [{"name": a, "type": "space", "unit": "micrometer"} for a in "zyx"],
    "datasets": [{"path": "0", "coordinateTransformations": [
        {"type": "scale", "scale": [1.0, 1.0, 1.0]}]}]}]
PY
run() {
  local tag=$1 i=$2 t0 t1
  shift 2
  t0=$(date +%s.%N)
  "$cli" slic "$@" --json > "$out/$tag-$i.json"
  t1=$(date +%s.%N)
  echo "$tag $(echo "$t1 - $t0" | bc)" >> "$out/wall.txt"
}
rm -f "$out/wall.txt"
# Alternated, so that a busy spell of a shared machine falls on both.
for i in $(seq "$reps"); do
  run tiff "$i" "$out/vol.tif" -o "$out/labels.tif" --compression zstd:3 "$@"
  run zarr "$i" "$out/vol.zarr" -o "$out/labels.zarr" --compression zstd:3 "$@"
done
/usr/bin/python3 - "$out" "$reps" <<'PY'
import json, statistics, sys
out, reps = sys.argv[1], int(sys.argv[2])
wall = {}
for line in open(out + "/wall.txt"):
    tag, s = line.split()
    wall.setdefault(tag, []).append(float(s))
for tag in ("tiff", "zarr"):
    runs = [json.load(open("%s/%s-%d.json" % (out, tag, i + 1))) for i in range(reps)]
    sec = lambda k: statistics.median(r["seconds"][k] for r in runs)
    print("%s: load %.3f s, write %.3f s, total %.3f s, wall %.3f s" % (
        tag, sec("load"), sec("write"), sec("total"), statistics.median(wall[tag])))
a, b = ([json.load(open("%s/%s-%d.json" % (out, t, i + 1))) for i in range(reps)]
        for t in ("tiff", "zarr"))
for k in ("load", "write", "total"):
    print("zarr/tiff %s: %.2f" % (k, statistics.median(y["seconds"][k] / x["seconds"][k]
                                                      for x, y in zip(a, b))))
PY
