#!/usr/bin/python3
"""Batch throughput: `supervox-cli slic` on many files in one process
against one process per file.

Writes N phantoms of SIZE³ float32 (`supervox-cli synth --seed i`, each
different), then times, for the chosen backend:

  batch     one `supervox-cli slic f1.tif … fN.tif -o DIR/ --json`: one
            backend (one CUDA context), the next file read and the previous
            one written while the current one computes
  separate  N `supervox-cli slic fi.tif -o DIR/fi.tif --json`, one after the
            other, as a shell loop would run them

and reports files per second (N / wall time of all of it), the speed-up,
the per-file stages from --json (mean seconds), the peak resident memory of
the batch process and of the largest single process (ru_maxrss from wait4),
and whether both modes wrote the same label files byte for byte.

Prints a table and writes the same numbers as JSON (--json-out).

Usage: bench-batch.py --cli PATH/supervox-cli [--backend cpu|cuda|auto]
                      [--size 256] [--files 20] [--n-segments N]
                      [--compactness 10] [--threads N] [--repeats 1]
                      [--workdir DIR] [--json-out FILE]
"""

import argparse
import hashlib
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

# As in bench-cpu.py: about 1000 voxels per supervoxel.
SEGMENTS = {64: 250, 128: 2000, 256: 16000, 512: 128000}
STAGES = ("load", "prepare", "iterate", "connect", "write", "total")


def run(argv):
    """Runs a setup step (not measured)."""
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (" ".join(argv[:4]), proc.returncode,
                                                   proc.stderr.strip()))


def run_measured(argv):
    """Runs argv with wait4; returns (wall seconds, stdout, peak RSS MiB)."""
    with tempfile.TemporaryFile("w+") as out_file, tempfile.TemporaryFile("w+") as err_file:
        t = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out_file, stderr=err_file, text=True)
        _, status, rusage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - t
        proc.returncode = os.waitstatus_to_exitcode(status)
        out_file.seek(0)
        err_file.seek(0)
        out, err = out_file.read(), err_file.read()
    if proc.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (" ".join(argv[:4]), proc.returncode, err.strip()))
    return wall, out, rusage.ru_maxrss / 1024.0


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def stage_means(results):
    return {s: statistics.mean(r["seconds"][s] for r in results) for s in STAGES}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cli", required=True, help="path of supervox-cli")
    ap.add_argument("--backend", default="cpu", choices=("cpu", "cuda", "auto"))
    ap.add_argument("--size", type=int, default=256, help="volumes are SIZE³ (default 256)")
    ap.add_argument("--files", type=int, default=20)
    ap.add_argument("--n-segments", type=int, default=None,
                    help="default: about 1000 voxels per supervoxel")
    ap.add_argument("--compactness", default="10")
    ap.add_argument("--threads", type=int, default=None, help="default: all cores")
    ap.add_argument("--repeats", type=int, default=1, help="timed runs per mode; the median counts")
    ap.add_argument("--workdir", default=None, help="default: a temporary folder, removed after")
    ap.add_argument("--json-out", default=None,
                    help="default: bench-batch-BACKEND-SIZE.json in the current folder")
    args = ap.parse_args()

    cli = os.path.abspath(args.cli)
    n = args.size
    segments = args.n_segments or SEGMENTS.get(n, max(1, n ** 3 // 1000))
    json_out = args.json_out or "bench-batch-%s-%d.json" % (args.backend, n)
    params = ["--n-segments", str(segments), "--compactness", args.compactness,
              "--backend", args.backend]
    if args.threads:
        params += ["--threads", str(args.threads)]

    owned = args.workdir is None
    work = tempfile.mkdtemp(prefix="sv-bench-batch-") if owned else args.workdir
    os.makedirs(work, exist_ok=True)
    inputs = [os.path.join(work, "vol%02d.tif" % i) for i in range(args.files)]
    t = time.perf_counter()
    for i, path in enumerate(inputs):
        if not os.path.exists(path):
            run([cli, "synth", "-o", path, "--shape", "%d,%d,%d" % (n, n, n), "--seed", str(i + 1)])
    print("# %d inputs of %d³ float32 in %s (%.1f s to write)" % (args.files, n, work,
                                                                  time.perf_counter() - t),
          file=sys.stderr)

    batch_dir = os.path.join(work, "batch")
    sep_dir = os.path.join(work, "separate")
    os.makedirs(sep_dir, exist_ok=True)
    batch_walls, sep_walls = [], []
    batch_rss, sep_rss = 0.0, 0.0
    batch_results, sep_results = [], []
    totals = None

    for rep in range(args.repeats):
        # Alternate the order so that neither mode always runs on a warmer cache.
        for mode in (("batch", "separate") if rep % 2 == 0 else ("separate", "batch")):
            if mode == "batch":
                print("# batch run %d" % (rep + 1), file=sys.stderr)
                wall, out, rss = run_measured([cli, "slic", *inputs, "-o", batch_dir + "/",
                                               "--json", *params])
                lines = [json.loads(line) for line in out.splitlines()]
                batch_results = [x for x in lines if "batch" not in x]
                totals = lines[-1]["batch"]
                batch_walls.append(wall)
                batch_rss = max(batch_rss, rss)
            else:
                print("# separate runs %d" % (rep + 1), file=sys.stderr)
                results = []
                t = time.perf_counter()
                for path in inputs:
                    out_path = os.path.join(sep_dir, os.path.basename(path))
                    _, out, rss = run_measured([cli, "slic", path, "-o", out_path, "--json",
                                                *params])
                    results.append(json.loads(out))
                    sep_rss = max(sep_rss, rss)
                sep_walls.append(time.perf_counter() - t)
                sep_results = results

    same = all(digest(os.path.join(batch_dir, os.path.basename(p)))
               == digest(os.path.join(sep_dir, os.path.basename(p))) for p in inputs)
    batch_wall = statistics.median(batch_walls)
    sep_wall = statistics.median(sep_walls)
    report = {
        "size": n,
        "files": args.files,
        "n_segments": segments,
        "compactness": float(args.compactness),
        "backend_asked": args.backend,
        "backend_used": sorted({r["backend"] for r in batch_results + sep_results}),
        "threads": batch_results[0]["threads"],
        "repeats": args.repeats,
        "host": platform.node(),
        "cores": os.cpu_count(),
        "batch": {
            "wall_seconds": batch_walls,
            "files_per_second": args.files / batch_wall,
            "peak_rss_mib": round(batch_rss, 1),
            "stage_mean_seconds": stage_means(batch_results),
            "cli_totals": totals,
        },
        "separate": {
            "wall_seconds": sep_walls,
            "files_per_second": args.files / sep_wall,
            "peak_rss_mib": round(sep_rss, 1),
            "stage_mean_seconds": stage_means(sep_results),
        },
        "speedup": sep_wall / batch_wall,
        "labels_identical": same,
    }

    print("%d files of %d³, %d segments, compactness %s, backend %s (%s), %s threads"
          % (args.files, n, segments, args.compactness, args.backend,
             ",".join(report["backend_used"]), report["threads"]))
    print("%-9s %8s %8s %8s   %s" % ("mode", "wall s", "files/s", "peak MiB",
                                     "mean per file s: " + " ".join("%7s" % s for s in STAGES)))
    for mode, wall in (("batch", batch_wall), ("separate", sep_wall)):
        r = report[mode]
        print("%-9s %8.2f %8.3f %8.0f   %s" % (mode, wall, r["files_per_second"], r["peak_rss_mib"],
                                              " " * 17 + " ".join("%7.3f" % r["stage_mean_seconds"][s]
                                                                  for s in STAGES)))
    print("speed-up %.2fx; labels identical byte for byte: %s" % (report["speedup"],
                                                                  "yes" if same else "NO"))
    with open(json_out, "w") as f:
        json.dump(report, f, indent=1)
        f.write("\n")
    print("# JSON: %s" % json_out, file=sys.stderr)

    if owned:
        for root, dirs, files in os.walk(work, topdown=False):
            for name in files:
                os.unlink(os.path.join(root, name))
            for name in dirs:
                os.rmdir(os.path.join(root, name))
        os.rmdir(work)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
