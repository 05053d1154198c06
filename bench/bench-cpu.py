#!/usr/bin/python3
"""CPU benchmark: supervox-cli (CPU backend) against scikit-image's slic.

Both run on the same float32 phantom (written by `supervox-cli synth`), each
in its own child process so that its peak memory (ru_maxrss from wait4) is
its own. Prints a table and one JSON line per size.

  seconds ours      median wall time of `supervox-cli slic ... --threads N`
                    (whole process: load, prepare, iterate, connect, write)
  compute s         median of our prepare + iterate + connect stages (--json),
                    the work that skimage's slic() call does
  seconds skimage   median time of the slic() call alone (import and TIFF
                    reading excluded), in a child python3
  agreement         fraction of equal voxels without connectivity
  ARI               adjusted Rand index with connectivity (the timed runs)
  peak MiB          ru_maxrss of the child
  assign s          our assignment steps' seconds, summed (one more run with
                    SV_CPU_ASSIGN_COUNT set, which prints each step's counts)
  eval/floor        distances the assignment computed (vector lanes) over
                    those the exact rule needs: per voxel, the clusters whose
                    spatial term alone is under the voxel's best distance (or
                    equal, with a lower index), and the winner
  steps             assignment steps run (a pass stops early once its
                    clusters come back unchanged from an update)

Volumes (--volume): "phantom" (supervox-cli synth, the default), "noisy"
(skimage.data.binary_blobs(N, n_dim=3, seed 0) as float32 plus N(0, 0.25²)
noise from numpy's default_rng(1), bench/sweep.py's noisy volume) or
"plain" (the blobs alone).

Usage: bench-cpu.py --cli build/app/cli/supervox-cli [--sizes 128,256]
                    [--volume noisy] [--compactness 0.01,0.1,1,10]
                    [--threads N] [--repeats 3] [--skimage-repeats-large 1]
"""

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import tifffile

SEGMENTS = {64: 250, 128: 2000, 256: 16000}

SKIMAGE_CHILD = r"""
import sys, time, warnings, json
import numpy as np, tifffile
from skimage.segmentation import slic
vol = tifffile.imread(sys.argv[1]).astype(np.float32)
n, c, it, enforce = int(sys.argv[3]), float(sys.argv[4]), int(sys.argv[5]), sys.argv[6] == '1'
t = time.perf_counter()
with warnings.catch_warnings():
    warnings.simplefilter('ignore')
    labels = slic(vol, n_segments=n, compactness=c, max_num_iter=it,
                  enforce_connectivity=enforce, channel_axis=None, start_label=1)
seconds = time.perf_counter() - t
np.save(sys.argv[2], labels.astype(np.int32))
print(json.dumps({'seconds': seconds}))
"""


def run_child(argv):
    """Runs argv (setup steps, not measured); returns (wall seconds, stdout, stderr)."""
    t = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out, err = proc.communicate()
    wall = time.perf_counter() - t
    if proc.returncode != 0:
        raise RuntimeError("%s failed: %s" % (" ".join(argv), err.strip()))
    return wall, out, err


def run_child_rusage(argv):
    """Runs argv; returns (wall seconds, stdout, peak RSS in MiB). wait4 gives
    this child's own ru_maxrss (RUSAGE_CHILDREN would be the maximum over all
    children so far)."""
    t = time.perf_counter()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        proc = subprocess.Popen(argv, stdout=out, stderr=err, text=True)
        _, status, usage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - t
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if proc.returncode != 0:
        raise RuntimeError("%s failed: %s" % (" ".join(argv), stderr.strip()))
    return wall, stdout, usage.ru_maxrss / 1024.0


def make_blobs(path, size, noisy):
    """bench/sweep.py's volumes: binary_blobs as float32, plus noise."""
    import inspect
    from skimage.data import binary_blobs
    params = inspect.signature(binary_blobs).parameters
    key = "rng" if "rng" in params else "seed"
    vol = binary_blobs(size, n_dim=3, **{key: 0}).astype(np.float32)
    if noisy:
        rng = np.random.default_rng(1)
        vol += rng.normal(0.0, 0.25, vol.shape).astype(np.float32)
    tifffile.imwrite(path, np.ascontiguousarray(vol))


def assign_counts(argv):
    """Runs argv with SV_CPU_ASSIGN_COUNT set; sums its assignment lines."""
    env = dict(os.environ, SV_CPU_ASSIGN_COUNT="1")
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          env=env)
    if proc.returncode != 0:
        raise RuntimeError("%s failed: %s" % (" ".join(argv), proc.stderr.strip()))
    total = {"steps": 0, "evaluated": 0, "needed": 0, "seconds": 0.0, "cpu_seconds": 0.0}
    for m in re.finditer(r"assign counts: voxels \d+ evaluated (\d+) needed (\d+) ratio \S+ "
                         r"seconds (\S+) cpu (\S+)", proc.stderr):
        total["steps"] += 1
        total["evaluated"] += int(m.group(1))
        total["needed"] += int(m.group(2))
        total["seconds"] += float(m.group(3))
        total["cpu_seconds"] += float(m.group(4))
    return total


def adjusted_rand_index(a, b):
    a = np.asarray(a).ravel()
    b = np.asarray(b).ravel()
    n = a.size
    _, ai = np.unique(a, return_inverse=True)
    _, bi = np.unique(b, return_inverse=True)
    _, nij = np.unique(ai.astype(np.int64) * (int(bi.max()) + 1) + bi, return_counts=True)

    def comb2(x):
        x = np.asarray(x, dtype=np.float64)
        return float((x * (x - 1) / 2).sum())

    sum_ij, sum_a, sum_b = comb2(nij), comb2(np.bincount(ai)), comb2(np.bincount(bi))
    total = n * (n - 1) / 2
    expected = sum_a * sum_b / total
    maximum = (sum_a + sum_b) / 2
    return 1.0 if maximum == expected else (sum_ij - expected) / (maximum - expected)


def bench_size(cli, size, threads, repeats, sk_repeats, compactness, iterations, tmp, log,
               volume="phantom"):
    n_segments = SEGMENTS.get(size, max(1, size ** 3 // 1000))
    vol = os.path.join(tmp, "%s-%d.tif" % (volume, size))
    if volume != "phantom":
        if not os.path.exists(vol):  # made once for all compactness values
            make_blobs(vol, size, volume == "noisy")
    else:
        # Cells scale with the volume so that the phantom looks alike at each size.
        cells = max(8, int(60 * size ** 3 / (64 * 128 * 128)))
        run_child([cli, "synth", "-o", vol, "--shape", "%d,%d,%d" % (size, size, size),
                   "--cells", str(cells), "--seed", "1"])

    common = ["--n-segments", str(n_segments), "--compactness", repr(compactness),
              "--max-num-iter", str(iterations), "--backend", "cpu", "--threads", str(threads)]
    ours_out = os.path.join(tmp, "ours-%d.tif" % size)
    ours_times, ours_compute, ours_mem, stages = [], [], [], None
    for r in range(repeats):
        wall, stdout, mem = run_child_rusage([cli, "slic", vol, "-o", ours_out, "--json"] + common)
        ours_times.append(wall)
        ours_mem.append(mem)
        stages = json.loads(stdout)["seconds"]
        ours_compute.append(stages["prepare"] + stages["iterate"] + stages["connect"])
        log("  ours    %d³ run %d: %.2f s" % (size, r + 1, wall))
    ours = tifffile.imread(ours_out).astype(np.int64).reshape(size, size, size)
    counts = assign_counts([cli, "slic", vol, "-o", ours_out] + common)

    sk_out = os.path.join(tmp, "skimage-%d.npy" % size)
    sk_times, sk_mem = [], []
    for r in range(sk_repeats):
        _, stdout, mem = run_child_rusage([sys.executable, "-c", SKIMAGE_CHILD, vol, sk_out,
                                           str(n_segments), repr(compactness), str(iterations),
                                           "1"])
        sk_times.append(json.loads(stdout)["seconds"])
        sk_mem.append(mem)
        log("  skimage %d³ run %d: %.2f s" % (size, r + 1, sk_times[-1]))
    ref = np.load(sk_out).astype(np.int64)
    ari = adjusted_rand_index(ref, ours)

    # Agreement before connectivity (one more run of each).
    raw_out = os.path.join(tmp, "ours-raw-%d.tif" % size)
    run_child([cli, "slic", vol, "-o", raw_out, "--no-enforce-connectivity"] + common)
    ours_raw = tifffile.imread(raw_out).astype(np.int64).reshape(size, size, size)
    sk_raw = os.path.join(tmp, "skimage-raw-%d.npy" % size)
    run_child([sys.executable, "-c", SKIMAGE_CHILD, vol, sk_raw, str(n_segments),
               repr(compactness), str(iterations), "0"])
    agreement = float((np.load(sk_raw).astype(np.int64) == ours_raw).mean())

    ours_s = statistics.median(ours_times)
    compute_s = statistics.median(ours_compute)
    sk_s = statistics.median(sk_times)
    return {
        "volume": volume,
        "assign_steps": counts["steps"],
        "assign_seconds": counts["seconds"],
        "assign_cpu_seconds": counts["cpu_seconds"],
        "assign_evaluated": counts["evaluated"],
        "assign_needed": counts["needed"],
        "assign_eval_per_floor": counts["evaluated"] / max(counts["needed"], 1),
        "size": [size, size, size],
        "n_segments": n_segments,
        "compactness": compactness,
        "max_num_iter": iterations,
        "threads": threads,
        "seconds_ours": ours_s,
        "seconds_ours_runs": ours_times,
        "seconds_ours_stages": stages,
        "seconds_ours_compute": compute_s,
        "ratio_compute": sk_s / compute_s,
        "seconds_skimage": sk_s,
        "seconds_skimage_runs": sk_times,
        "ratio": sk_s / ours_s,
        "agreement_no_connectivity": agreement,
        "ari_with_connectivity": ari,
        "n_labels_ours": int(len(np.unique(ours))),
        "n_labels_skimage": int(len(np.unique(ref))),
        "peak_mib_ours": max(ours_mem),
        "peak_mib_skimage": max(sk_mem),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cli", required=True, help="path to supervox-cli")
    parser.add_argument("--sizes", default="128,256", help="cube edges, comma-separated")
    parser.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--skimage-repeats", type=int, default=3)
    parser.add_argument("--skimage-repeats-large", type=int, default=1,
                        help="scikit-image runs for sizes above 128 (it is slow)")
    parser.add_argument("--compactness", default="0.1",
                        help="one value or several, comma-separated")
    parser.add_argument("--volume", choices=("phantom", "noisy", "plain"), default="phantom")
    parser.add_argument("--max-num-iter", type=int, default=10)
    args = parser.parse_args()

    def log(text):
        print(text, file=sys.stderr, flush=True)

    import skimage
    results = []
    with tempfile.TemporaryDirectory(prefix="sv-bench-") as tmp:
        for size in [int(s) for s in args.sizes.split(",") if s]:
            for compactness in [float(c) for c in args.compactness.split(",") if c]:
                sk_repeats = args.skimage_repeats if size <= 128 else args.skimage_repeats_large
                results.append(bench_size(args.cli, size, args.threads, args.repeats, sk_repeats,
                                          compactness, args.max_num_iter, tmp, log, args.volume))

    print("scikit-image %s, %d threads for supervox-cli, %d cores online"
          % (skimage.__version__, args.threads, os.cpu_count() or 1))
    print("volume: %s" % args.volume)
    header = ("%-6s %7s %8s %8s %10s %10s %7s %9s %9s %10s %5s %10s %7s %9s %12s"
              % ("size", "C", "segments", "ours s", "compute s", "skimage s", "ratio", "ratio cmp",
                 "assign s", "eval/floor", "steps", "agree raw", "ARI", "ours MiB",
                 "skimage MiB"))
    print(header)
    print("-" * len(header))
    for r in results:
        print("%-6s %7g %8d %8.3f %10.3f %10.3f %6.1fx %8.1fx %9.3f %9.2fx %5d %9.2f%% %7.4f %9.0f "
              "%12.0f"
              % ("%d³" % r["size"][0], r["compactness"], r["n_segments"], r["seconds_ours"],
                 r["seconds_ours_compute"], r["seconds_skimage"], r["ratio"],
                 r["ratio_compute"], r["assign_seconds"], r["assign_eval_per_floor"],
                 r["assign_steps"], 100 * r["agreement_no_connectivity"],
                 r["ari_with_connectivity"], r["peak_mib_ours"], r["peak_mib_skimage"]))
    for r in results:
        r["skimage_version"] = skimage.__version__
        print(json.dumps(r))
    return 0


if __name__ == "__main__":
    sys.exit(main())
