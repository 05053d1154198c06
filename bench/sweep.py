#!/usr/bin/python3
"""Parameter sweep: supervox-cli's speed per stage over sizes, noise and
compactness, on the CPU and CUDA backends, next to scikit-image's slic.

Volumes: skimage.data.binary_blobs(L, n_dim=3) with a fixed seed, as float32,
"plain" and "noisy" (plus Gaussian noise of sigma 0.25, fixed seed), written
as float32 TIFF. Each point (size L, noise, compactness C) runs

    supervox-cli slic IN -o OUT --backend B --json --compactness C
                 --n-segments L^3/1000 --max-num-iter 10

--repeat times per backend (median reported), reads the stage times from the
JSON's "seconds" object and measures the process's wall time. The label TIFFs
of the backends are compared with the CPU's, pixel for pixel. scikit-image's
slic() runs once per point on the same array, in this process, when the time
estimated from the next smaller size (scaled by voxel count) is under
--skimage-max-seconds.

Prints one table row per size x noise x compactness x backend as the points
finish; --json writes everything (with machine information) after every
point (--resume runs only the points it lacks), --plot draws time against
compactness per stage (needs matplotlib; --replot JSON draws the plot from a
JSON written elsewhere). Exits 1 when a backend failed or its labels differ
from the CPU's.

Runs with Debian 12's python3 (scikit-image 0.19) and with scikit-image 0.26.

  bench/sweep.py --cli build/app/cli/supervox-cli --quick
  bench/sweep.py --cli build-bench/app/cli/supervox-cli \\
      --json bench/results/sweep-cpu.json --plot bench/results/sweep-cpu.png
  bench/sweep.py --cli build/app/cli/supervox-cli --backends cpu,cuda \\
      --sizes 128,256,384,512 --json sweep-gpu.json --plot sweep-gpu.png
  bench/sweep.py --replot sweep-gpu.json --plot sweep-gpu.png
"""

import argparse
import datetime
import hashlib
import importlib
import importlib.util
import inspect
import json
import os
import platform
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import warnings

STAGES = ("load", "prepare", "iterate", "connect", "write", "total")
COMPACTNESS = (0.01, 0.03, 0.1, 0.3, 1.0, 10.0)
NOISE_SIGMA = 0.25
ITERATIONS = 10


def parse_list(text, kind):
    try:
        values = [kind(v) for v in text.split(",") if v.strip() != ""]
    except ValueError:
        raise argparse.ArgumentTypeError("expected a comma-separated list, got %r" % text)
    if not values:
        raise argparse.ArgumentTypeError("empty list")
    return values


def parse_args(argv):
    p = argparse.ArgumentParser(
        description="Sweep supervox-cli over sizes, noise and compactness, per stage, "
        "with scikit-image's slic beside it.")
    p.add_argument("--cli", help="supervox-cli to run (default: build/app/cli/supervox-cli)")
    p.add_argument("--backends", type=lambda s: parse_list(s, str), default=["cpu"],
                   help="comma-separated: cpu, cuda (default cpu)")
    p.add_argument("--sizes", type=lambda s: parse_list(s, int), default=None,
                   help="cube sides L (default 128,256)")
    p.add_argument("--compactness", type=lambda s: parse_list(s, float), default=None,
                   help="default 0.01,0.03,0.1,0.3,1,10")
    p.add_argument("--noise", type=lambda s: parse_list(s, str), default=["plain", "noisy"],
                   help="plain, noisy or both (default both)")
    p.add_argument("--cpu-max-size", type=int, default=None,
                   help="run the cpu backend only up to this side (the GPU sweep goes further)")
    p.add_argument("--repeat", type=int, default=1,
                   help="runs per point and backend; the median is reported (default 1)")
    p.add_argument("--threads", type=int, default=None,
                   help="--threads for supervox-cli (default: its own, all cores)")
    p.add_argument("--skimage-max-seconds", type=float, default=60.0,
                   help="skip scikit-image where its estimated time is above this (default 60)")
    p.add_argument("--no-skimage", action="store_true", help="do not run scikit-image")
    p.add_argument("--no-warmup", action="store_true",
                   help="skip the unrecorded first run of each backend")
    p.add_argument("--seed", type=int, default=0,
                   help="seed of binary_blobs; the noise uses seed + 1 (default 0)")
    p.add_argument("--quick", action="store_true",
                   help="smoke test: 64³, compactness 0.1 and 10, both volumes")
    p.add_argument("--work-dir", help="where the TIFFs go (default: a temporary folder)")
    p.add_argument("--keep-files", action="store_true",
                   help="keep the volumes and label TIFFs in --work-dir")
    p.add_argument("--json", dest="json_path", help="write the results here")
    p.add_argument("--resume", action="store_true",
                   help="keep the points already in --json and run only the others "
                        "(after a run was stopped, e.g. by a time limit)")
    p.add_argument("--plot", help="draw time against compactness into this PNG")
    p.add_argument("--replot", metavar="JSON",
                   help="only print the table of JSON and draw --plot from it")
    a = p.parse_args(argv)
    if a.quick:
        a.sizes = a.sizes or [64]
        a.compactness = a.compactness or [0.1, 10.0]
    a.sizes = a.sizes or [128, 256]
    a.compactness = a.compactness or list(COMPACTNESS)
    for b in a.backends:
        if b not in ("cpu", "cuda"):
            p.error("--backends: unknown backend %r (cpu, cuda)" % b)
    for n in a.noise:
        if n not in ("plain", "noisy"):
            p.error("--noise: unknown volume %r (plain, noisy)" % n)
    if any(s < 8 for s in a.sizes):
        p.error("--sizes: each side must be >= 8")
    if a.repeat < 1:
        p.error("--repeat must be >= 1")
    if a.resume and not a.json_path:
        p.error("--resume needs --json")
    return a


# ---------------------------------------------------------------- machine


def run_text(argv):
    """stdout of argv, stripped, or None when it cannot run."""
    try:
        out = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             text=True, timeout=30)
    except (OSError, subprocess.SubprocessError):
        return None
    if out.returncode != 0:
        return None
    return out.stdout.strip() or None


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or None


def build_type(cli):
    """The buildtype of the meson build directory that holds cli, if any."""
    d = os.path.dirname(os.path.abspath(cli))
    while True:
        info = os.path.join(d, "meson-info", "intro-buildoptions.json")
        if os.path.exists(info):
            try:
                with open(info) as f:
                    for opt in json.load(f):
                        if opt.get("name") == "buildtype":
                            return opt.get("value")
            except (OSError, ValueError):
                return None
            return None
        parent = os.path.dirname(d)
        if parent == d:
            return None
        d = parent


def machine_info(cli):
    import numpy
    import skimage
    import tifffile

    here = os.path.dirname(os.path.abspath(__file__))
    gpu = run_text(["nvidia-smi", "--query-gpu=name,driver_version,memory.total",
                    "--format=csv,noheader"])
    return {
        "hostname": socket.gethostname(),
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "gpu": gpu.splitlines() if gpu else None,
        "load_average_start": list(os.getloadavg()),
        "program_version": run_text([cli, "--version"]),
        "build_type": build_type(cli),
        "git_commit": run_text(["git", "-C", here, "describe", "--always", "--dirty"]),
        "skimage_version": skimage.__version__,
        "numpy_version": numpy.__version__,
        "tifffile_version": tifffile.__version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC"),
    }


# ---------------------------------------------------------------- volumes


def make_volume(size, noise, seed):
    """binary_blobs(size, n_dim=3) as float32 (0 and 1); "noisy" adds
    N(0, 0.25²). The seed keyword is `seed` up to scikit-image 0.20 and
    `rng` after."""
    import numpy as np
    from skimage.data import binary_blobs

    params = inspect.signature(binary_blobs).parameters
    key = "rng" if "rng" in params else "seed"
    vol = binary_blobs(size, n_dim=3, **{key: seed}).astype(np.float32)
    if noise == "noisy":
        rng = np.random.default_rng(seed + 1)
        vol += rng.normal(0.0, NOISE_SIGMA, vol.shape).astype(np.float32)
    return np.ascontiguousarray(vol)


# ---------------------------------------------------------------- runs


def skimage_keywords():
    """slic keywords for a 3D single-channel float volume: channel_axis and
    max_num_iter from 0.19 on, multichannel and max_iter before."""
    from skimage.segmentation import slic

    params = inspect.signature(slic).parameters
    kw = {"start_label": 1}
    if "channel_axis" in params:
        kw["channel_axis"] = None
    else:
        kw["multichannel"] = False
    kw["max_num_iter" if "max_num_iter" in params else "max_iter"] = ITERATIONS
    return kw


def run_skimage(vol, n_segments, compactness):
    from skimage.segmentation import slic

    kw = skimage_keywords()
    cpu = time.process_time()
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        labels = slic(vol, n_segments=n_segments, compactness=compactness, **kw)
    seconds = time.perf_counter() - t
    return seconds, time.process_time() - cpu, int(labels.max())


def children_cpu_seconds():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_cli(cli, backend, vol_path, out_path, compactness, n_segments, threads):
    """One supervox-cli slic process: (its JSON, wall seconds, CPU seconds of
    all its threads) or raises."""
    argv = [cli, "slic", vol_path, "-o", out_path, "--backend", backend, "--json",
            "--compactness", repr(compactness), "--n-segments", str(n_segments),
            "--max-num-iter", str(ITERATIONS)]
    if threads is not None:
        argv += ["--threads", str(threads)]
    cpu = children_cpu_seconds()
    t = time.perf_counter()
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - t
    cpu = children_cpu_seconds() - cpu
    if proc.returncode != 0:
        raise RuntimeError("exit %d: %s" % (proc.returncode, proc.stderr.strip()))
    lines = [l for l in proc.stdout.splitlines() if l.startswith("{")]
    if not lines:
        raise RuntimeError("no JSON on stdout: %r" % proc.stdout[:200])
    return json.loads(lines[-1]), wall, cpu


def labels_identical(path_a, path_b):
    import numpy as np
    import tifffile

    a = tifffile.imread(path_a)
    b = tifffile.imread(path_b)
    return a.dtype == b.dtype and a.shape == b.shape and bool(np.array_equal(a, b))


def median(values):
    return statistics.median(values) if values else None


def skimage_estimate(results, size, noise, compactness):
    """Estimated scikit-image seconds at size from the largest smaller size
    with a time (measured or estimated) at the same noise and compactness,
    scaled by voxel count; None where there is none."""
    best = None
    for p in results["points"]:
        if p["noise"] == noise and p["compactness"] == compactness and p["size"] < size:
            s = p["skimage"]
            t = s.get("seconds") if s.get("seconds") is not None else s.get("estimate_seconds")
            if t is not None and (best is None or p["size"] > best[0]):
                best = (p["size"], t)
    if best is None:
        return None
    return best[1] * (size / best[0]) ** 3


# ---------------------------------------------------------------- table


def fmt_s(v):
    if v is None:
        return "-"
    if v < 10:
        return "%.3f" % v
    if v < 100:
        return "%.2f" % v
    return "%.1f" % v


COLUMNS = (("size", 5), ("volume", 6), ("compact", 7), ("backend", 7), ("load", 7),
           ("prepare", 7), ("iterate", 8), ("connect", 7), ("write", 7), ("total", 8),
           ("wall", 8), ("cpu", 8), ("n_labels", 8), ("skimage", 19), ("ratio", 7), ("same as cpu", 11),
           ("loadavg", 7))


def table_header():
    head = "  ".join(name.rjust(w) for name, w in COLUMNS)
    return head + "\n" + "-" * len(head)


def table_rows(point):
    s = point["skimage"]
    if s.get("seconds") is not None:
        sk = fmt_s(s["seconds"])
    elif s.get("estimate_seconds") is not None:
        sk = "skipped (est. %.0fs)" % s["estimate_seconds"]
    else:
        sk = s.get("status", "not run")
    lines = []
    for r in point["runs"]:
        if r.get("error"):
            cells = [str(point["size"]), point["noise"], "%g" % point["compactness"],
                     r["backend"]]
            lines.append("  ".join(c.rjust(w) for c, (_, w) in zip(cells, COLUMNS))
                         + "  failed: " + r["error"].splitlines()[0][:100])
            continue
        sec = r["seconds"]
        ratio = "-"
        if s.get("seconds") is not None and sec["total"]:
            ratio = "%.1fx" % (s["seconds"] / sec["total"])
        same = r.get("identical_to_cpu")
        same = {True: "yes", False: "NO", None: "-"}[same] if r["backend"] != "cpu" else (
            "(ref)" if len(point["runs"]) > 1 else "-")
        load = "%.1f" % point["load_average"][0] if point.get("load_average") else "-"
        cells = [str(point["size"]), point["noise"], "%g" % point["compactness"], r["backend"],
                 fmt_s(sec["load"]), fmt_s(sec["prepare"]), fmt_s(sec["iterate"]),
                 fmt_s(sec["connect"]), fmt_s(sec["write"]), fmt_s(sec["total"]),
                 fmt_s(r["wall"]), fmt_s(r.get("cpu_seconds")), str(r["n_labels"]), sk, ratio,
                 same, load]
        lines.append("  ".join(c.rjust(w) for c, (_, w) in zip(cells, COLUMNS)))
    return lines


def print_table(results):
    print(table_header())
    for p in results["points"]:
        for line in table_rows(p):
            print(line)


# ---------------------------------------------------------------- plot


def plot(results, path):
    """Seconds against compactness (both log), one panel per size x volume,
    one colour per stage (and the process's CPU time), one line style per
    backend; scikit-image in black."""
    try:
        import matplotlib
    except ImportError:
        print("sweep: matplotlib is not installed for %s: no plot written. Copy the "
              "--json file to a machine with matplotlib and run "
              "'bench/sweep.py --replot FILE.json --plot %s'." % (sys.executable, path),
              file=sys.stderr)
        return False
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    points = results["points"]
    sizes = sorted({p["size"] for p in points})
    noises = [n for n in ("plain", "noisy") if any(p["noise"] == n for p in points)]
    backends = []
    for p in points:
        for r in p["runs"]:
            if r["backend"] not in backends:
                backends.append(r["backend"])
    colours = dict(zip(STAGES, ("tab:gray", "tab:orange", "tab:blue", "tab:green",
                                "tab:purple", "tab:red")))
    styles = {"cpu": "-", "cuda": "--"}
    markers = {"cpu": "o", "cuda": "s"}

    fig, axes = plt.subplots(len(sizes), len(noises), squeeze=False, sharex=True,
                             figsize=(5.5 * len(noises) + 3.0, 3.8 * len(sizes) + 0.6))
    for i, size in enumerate(sizes):
        for j, noise in enumerate(noises):
            ax = axes[i][j]
            here = sorted((p for p in points if p["size"] == size and p["noise"] == noise),
                          key=lambda p: p["compactness"])
            for b in backends:
                for stage in STAGES:
                    xs, ys = [], []
                    for p in here:
                        for r in p["runs"]:
                            if r["backend"] == b and not r.get("error"):
                                v = r["seconds"][stage]
                                if v is not None and v > 0:
                                    xs.append(p["compactness"])
                                    ys.append(v)
                    if xs:
                        ax.plot(xs, ys, styles.get(b, ":"), marker=markers.get(b, "^"),
                                color=colours[stage], markersize=3.5,
                                linewidth=2.0 if stage == "total" else 1.2,
                                label="%s %s" % (b, stage))
                # The process's CPU time: on a busy machine wall times grow
                # with the load, this much less.
                xs = [p["compactness"] for p in here for r in p["runs"]
                      if r["backend"] == b and r.get("cpu_seconds")]
                ys = [r["cpu_seconds"] for p in here for r in p["runs"]
                      if r["backend"] == b and r.get("cpu_seconds")]
                if xs:
                    ax.plot(xs, ys, styles.get(b, ":"), marker=markers.get(b, "^"),
                            color="tab:brown", markersize=3, linewidth=0.8, alpha=0.7,
                            label="%s process CPU time (all threads)" % b)
            xs = [p["compactness"] for p in here if p["skimage"].get("seconds")]
            ys = [p["skimage"]["seconds"] for p in here if p["skimage"].get("seconds")]
            if xs:
                ax.plot(xs, ys, ":", marker="x", color="black", label="scikit-image slic")
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.grid(True, which="major", alpha=0.3)
            ax.set_title("%d³, %s, %d segments" % (size, noise, size ** 3 // 1000))
            if i == len(sizes) - 1:
                ax.set_xlabel("compactness")
            if j == 0:
                ax.set_ylabel("seconds")
    handles, labels = [], []
    for row in axes:
        for ax in row:
            for h, l in zip(*ax.get_legend_handles_labels()):
                if l not in labels:
                    handles.append(h)
                    labels.append(l)
    m = results.get("machine", {})
    fig.suptitle("supervox-cli slic per stage, %d iterations (%s; %s; %s)"
                 % (ITERATIONS, m.get("program_version") or "?", m.get("cpu_model") or "?",
                    m.get("date") or "?"), fontsize=9)
    fig.legend(handles, labels, loc="center right", fontsize=8)
    width = fig.get_size_inches()[0]
    fig.tight_layout(rect=(0, 0, 1.0 - 3.0 / width, 0.97))
    fig.savefig(path, dpi=110)
    plt.close(fig)
    print("sweep: plot written to %s" % path, file=sys.stderr)
    return True


# ---------------------------------------------------------------- main


def write_json(results, path):
    if not path:
        return
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(results, f, indent=1)
        f.write("\n")
    os.replace(tmp, path)


def sweep(args):
    import tifffile

    cli = args.cli or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                   "build", "app", "cli", "supervox-cli")
    if not os.access(cli, os.X_OK):
        sys.exit("sweep: %s is not an executable supervox-cli (give --cli PATH)" % cli)
    cli = os.path.abspath(cli)
    if args.plot and importlib.util.find_spec("matplotlib") is None:
        print("sweep: matplotlib is not installed: the sweep runs and --json is written, "
              "but no plot; draw it elsewhere with --replot", file=sys.stderr)

    results = {
        "machine": machine_info(cli),
        "config": {
            "cli": cli, "backends": args.backends, "sizes": args.sizes,
            "cpu_max_size": args.cpu_max_size,
            "noise": args.noise, "noise_sigma": NOISE_SIGMA,
            "compactness": args.compactness, "repeat": args.repeat, "threads": args.threads,
            "iterations": ITERATIONS, "n_segments": "L^3 // 1000", "seed": args.seed,
            "volume": "skimage.data.binary_blobs(L, n_dim=3, seed) as float32; noisy: "
                      "+ numpy default_rng(seed + 1).normal(0, 0.25)",
            "skimage_max_seconds": None if args.no_skimage else args.skimage_max_seconds,
            "skimage_keywords": {k: v for k, v in skimage_keywords().items()},
            "statistic": "median over repeats, per stage",
        },
        "volumes": [],
        "points": [],
    }
    if args.resume and os.path.exists(args.json_path):
        with open(args.json_path) as f:
            old = json.load(f)
        done = [p for p in old["points"]
                if sorted(r["backend"] for r in p["runs"])
                == sorted(backends_for(args, p["size"]))]
        results["points"] = done
        results["volumes"] = old.get("volumes", [])
        results["machine"]["resumed_from"] = old.get("machine")
        print("sweep: resuming %s: %d points kept" % (args.json_path, len(done)),
              file=sys.stderr)
    m = results["machine"]
    print("sweep: %s, %s (%s cores), skimage %s, %s"
          % (m["program_version"], m["cpu_model"], m["cpu_count"], m["skimage_version"],
             m["date"]), file=sys.stderr)
    if m["gpu"]:
        print("sweep: GPU %s" % "; ".join(m["gpu"]), file=sys.stderr)

    work = args.work_dir or tempfile.mkdtemp(prefix="sv-sweep-")
    os.makedirs(work, exist_ok=True)
    warmed = set()
    try:
        print_table(results)
        sys.stdout.flush()
        for size in sorted(args.sizes):
            n_segments = size ** 3 // 1000
            for noise in args.noise:
                todo = [c for c in args.compactness
                        if not any(p["size"] == size and p["noise"] == noise
                                   and p["compactness"] == c for p in results["points"])]
                if not todo:
                    continue
                t = time.perf_counter()
                vol = make_volume(size, noise, args.seed)
                vol_path = os.path.join(work, "blobs-%d-%s.tif" % (size, noise))
                tifffile.imwrite(vol_path, vol, photometric="minisblack")
                results["volumes"] = [v for v in results["volumes"]
                                      if (v["size"], v["noise"]) != (size, noise)]
                results["volumes"].append({
                    "size": size, "noise": noise, "path": vol_path,
                    "sha1": hashlib.sha1(vol.tobytes()).hexdigest(),
                    "mean": float(vol.mean()), "generate_seconds": time.perf_counter() - t})
                for c in todo:
                    point = {"size": size, "noise": noise, "compactness": c,
                             "n_segments": n_segments, "runs": [], "skimage": {}}
                    outs = {}
                    for b in backends_for(args, size):
                        out = os.path.join(work, "labels-%d-%s-%g-%s.tif" % (size, noise, c, b))
                        run = {"backend": b}
                        try:
                            if b not in warmed and not args.no_warmup:
                                run_cli(cli, b, vol_path, out, c, n_segments, args.threads)
                                warmed.add(b)
                            reps = [run_cli(cli, b, vol_path, out, c, n_segments, args.threads)
                                    for _ in range(args.repeat)]
                        except RuntimeError as e:
                            run["error"] = str(e)
                            print("sweep: %d³ %s c=%g %s failed: %s"
                                  % (size, noise, c, b, e), file=sys.stderr)
                            point["runs"].append(run)
                            continue
                        outs[b] = out
                        run["seconds"] = {s: median([r[0]["seconds"][s] for r in reps])
                                          for s in STAGES}
                        run["wall"] = median([r[1] for r in reps])
                        run["cpu_seconds"] = median([r[2] for r in reps])
                        run["n_labels"] = reps[-1][0]["n_labels"]
                        run["n_clusters"] = reps[-1][0].get("n_clusters")
                        run["backend_used"] = reps[-1][0].get("backend")
                        run["threads"] = reps[-1][0].get("threads")
                        run["all_seconds"] = [r[0]["seconds"] for r in reps]
                        run["all_wall"] = [r[1] for r in reps]
                        run["all_cpu_seconds"] = [r[2] for r in reps]
                        point["runs"].append(run)
                    for run in point["runs"]:
                        if run["backend"] != "cpu" and "cpu" in outs and run["backend"] in outs:
                            run["identical_to_cpu"] = labels_identical(outs["cpu"],
                                                                       outs[run["backend"]])
                    if not args.keep_files:
                        for out in outs.values():
                            for f in (out, out[:-4] + ".json"):
                                if os.path.exists(f):
                                    os.remove(f)

                    if args.no_skimage:
                        point["skimage"] = {"status": "not run"}
                    else:
                        est = skimage_estimate(results, size, noise, c)
                        if est is not None and est > args.skimage_max_seconds:
                            point["skimage"] = {"estimate_seconds": est, "seconds": None}
                        else:
                            sec, cpu, n = run_skimage(vol, n_segments, c)
                            point["skimage"] = {"seconds": sec, "cpu_seconds": cpu,
                                                "n_labels": n, "estimate_seconds": est}
                    point["load_average"] = list(os.getloadavg())
                    results["points"].append(point)
                    results["machine"]["load_average_end"] = point["load_average"]
                    write_json(results, args.json_path)
                    for line in table_rows(point):
                        print(line)
                    sys.stdout.flush()
                del vol
                if not args.keep_files:
                    os.remove(vol_path)
    finally:
        if not args.keep_files and not args.work_dir:
            shutil.rmtree(work, ignore_errors=True)

    results["machine"]["date_end"] = datetime.datetime.now(datetime.timezone.utc).strftime(
        "%Y-%m-%d %H:%M:%S UTC")
    write_json(results, args.json_path)
    if args.json_path:
        print("sweep: results written to %s" % args.json_path, file=sys.stderr)
    if args.plot:
        plot(results, args.plot)
    bad = [(p["size"], p["noise"], p["compactness"], r["backend"])
           for p in results["points"] for r in p["runs"]
           if r.get("identical_to_cpu") is False or r.get("error")]
    if bad:
        print("sweep: failed or different from the CPU labels: %s" % bad, file=sys.stderr)
        return 1
    return 0


def backends_for(args, size):
    """The backends that run at this side (--cpu-max-size drops the CPU)."""
    return [b for b in args.backends
            if not (b == "cpu" and args.cpu_max_size is not None and size > args.cpu_max_size)]


def run_with_debian_python(argv, why):
    """Hands over to Debian's python3 (which has numpy, scikit-image,
    tifffile and matplotlib) when this one lacks a module, e.g. a pyenv or
    venv python3 first on PATH; returns when that is not possible."""
    debian = "/usr/bin/python3"
    if (os.path.exists(debian) and os.path.realpath(sys.executable) != os.path.realpath(debian)
            and not os.environ.get("SV_SWEEP_REEXEC")):
        print("sweep: %s for %s; running with %s" % (why, sys.executable, debian),
              file=sys.stderr)
        os.environ["SV_SWEEP_REEXEC"] = "1"
        os.execv(debian, [debian, os.path.abspath(__file__)] + argv)


def main(argv):
    args = parse_args(argv)
    if args.replot:
        if args.plot and importlib.util.find_spec("matplotlib") is None:
            run_with_debian_python(argv, "no matplotlib")
        with open(args.replot) as f:
            results = json.load(f)
        print_table(results)
        if args.plot and not plot(results, args.plot):
            return 1
        return 0
    try:
        for name in ("numpy", "skimage", "tifffile"):
            importlib.import_module(name)
    except ImportError as e:
        run_with_debian_python(argv, str(e))
        sys.exit("sweep: %s for %s; it needs numpy, scikit-image and tifffile (on Debian: "
                 "/usr/bin/python3 bench/sweep.py ...)" % (e, sys.executable))
    return sweep(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
