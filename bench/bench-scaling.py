#!/usr/bin/python3
"""Scaling: one run divided over devices (--devices) and over MPI ranks
(mpirun -np N), file in and file out, against one device or one process.

Volumes: bench/make-volume.py's generator (smooth structure, steps and
NOISE·U(0, 1), uint8, one page per slice), one per size and noise. Each
point (size L, noise, compactness C) runs

    supervox-cli slic IN -o OUT --json --compactness C
                 --n-segments L^3/1000 --backend B [--devices LIST]
    mpirun -np R supervox-cli slic … (one GPU per rank with --backend cuda,
                 --threads T per rank on the CPU)

and times the whole process (wall), reads the stage times from --json and
checks that every label file is byte for byte the first run's (the single
device or single process). With --formats tif,zarr each point also writes
an OME-Zarr store (--zarr-compression), every file of it the first store's,
so that a TIFF and a store are timed side by side. scikit-image's slic() runs on the smallest size
(up to --skimage-max-size) in the same run, on the same array, for the
ratio against one process.

A second table gives, from the engine's timestamped debug lines of the
one process or one rank (G_MESSAGES_DEBUG), the steps that more devices
or ranks do not divide: the time before the run starts (process and CUDA
start), the first pass, a later pass, the final labels, the connectivity
on a device and the label file's appends in it, and release and exit
(JSON: each point's "steps").

mpirun runs with HWLOC_COMPONENTS=-opencl unless --hwloc-opencl is given
or the variable is set already: hwloc's OpenCL plugin starts every GPU's
driver in mpirun itself, which took 1.2-1.5 s of each launch on the
four-GPU machine (88 ms without it). The JSON records the variable.

Prints a table, --json writes every point with the machine, --plot draws
the speed-up over one device or one process against the ideal line (needs
matplotlib; --replot JSON draws it from a JSON written elsewhere). Exits 1
when a run failed or its labels differ.

  bench/bench-scaling.py --cli build/app/cli/supervox-cli --backend cpu \\
      --sizes 96 --ranks 1,2 --threads 1
  bench/bench-scaling.py --cli .devbundle/bin/supervox-cli --backend cuda \\
      --sizes 1024,2048 --devices '0;0,1;0,1,2,3' --ranks 1,2,4 \\
      --json scaling.json --plot scaling.png
"""

import argparse
import datetime
import json
import re
import os
import platform
import shutil
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def make_volume(path, n, noise):
    subprocess.run([sys.executable, os.path.join(HERE, "make-volume.py"), path, str(n), str(noise)],
                   check=True)


# The engine's timestamped steps (G_MESSAGES_DEBUG): "(supervox-cli
# slic:PID): sv-engine-DEBUG: HH:MM:SS.mmm: text", coloured under mpirun.
STEP = re.compile(r"slic:(\d+)\): sv-(?:engine|cuda)-DEBUG: (\d\d):(\d\d):(\d\d\.\d+): (.*)")
COLOUR = re.compile(r"\x1b\[[0-9;]*m")


def steps(output, started):
    """Seconds of the steps that more devices or ranks do not divide, from
    the debug lines of the first process that speaks (one rank under
    mpirun): before the run (process and CUDA start), the first pass, a
    later pass (the median), the final labels, the connectivity on a device
    and the label file's appends in it, and release and exit."""
    day = datetime.datetime.fromtimestamp(started).replace(hour=0, minute=0, second=0,
                                                           microsecond=0).timestamp()
    out, passes, first_stamp, last_stamp, pid = {}, [], None, None, None
    for line in COLOUR.sub("", output).splitlines():
        m = STEP.search(line)
        if not m or (pid is not None and m.group(1) != pid):
            continue
        pid = m.group(1)
        stamp = day + int(m.group(2)) * 3600 + int(m.group(3)) * 60 + float(m.group(4))
        text = m.group(5)
        if first_stamp is None and text.startswith("run: opening the devices"):
            first_stamp = stamp
        if text.startswith("streamed run: released"):
            last_stamp = stamp
        if text.startswith("first pass:") and "first_pass" not in out:
            out["first_pass"] = float(text.split()[2])
        elif text.startswith("iteration: slab pass"):
            passes.append(float(text.split()[3]) / 1e3)
        elif text.startswith("streamed run: labels made") and "final_labels" not in out:
            out["final_labels"] = float(re.search(r"in ([0-9.]+) s", text).group(1))
        elif text.startswith("connectivity on") and "of it" in text:
            # One device ("on the device:") or shared ("on 2 devices:").
            nums = re.findall(r"([0-9.]+) s", text)
            out["connect_device"], out["file_appends"] = float(nums[0]), float(nums[1])
    if first_stamp is not None:
        out["before_run"] = first_stamp - started
    if len(passes) > 1:
        later = sorted(passes[1:])
        out["later_pass"] = later[len(later) // 2]
    return out, last_stamp


def run_timed(cmd, env=None):
    """(wall seconds, the --json object or None, stderr, the engine's
    steps)."""
    env = dict(env or os.environ, G_MESSAGES_DEBUG="sv-engine,sv-cuda")
    started = time.time()
    t0 = time.monotonic()
    done = subprocess.run(cmd, capture_output=True, text=True, env=env)
    wall = time.monotonic() - t0
    result = None
    if done.returncode == 0:
        for line in done.stdout.splitlines():
            line = line.strip()
            if line.startswith("{"):
                result = json.loads(line)
                break
    found, released = steps(done.stdout + "\n" + done.stderr, started)
    if released is not None:
        found["release_exit"] = started + wall - released
    return wall, result, done.stderr.strip() if done.returncode != 0 else "", found


def same_tree(a, b):
    """Two stores (folders) with the same files, byte for byte."""
    names_a = sorted(os.path.relpath(os.path.join(d, f), a)
                     for d, _, fs in os.walk(a) for f in fs)
    names_b = sorted(os.path.relpath(os.path.join(d, f), b)
                     for d, _, fs in os.walk(b) for f in fs)
    return names_a == names_b and all(same_bytes(os.path.join(a, n), os.path.join(b, n))
                                      for n in names_a)


def remove_output(path):
    if os.path.isdir(path):
        # The store's own folder, with its sidecar.
        shutil.rmtree(os.path.dirname(path))
    else:
        os.remove(path)


def same_bytes(a, b):
    if os.path.isdir(a):
        return same_tree(a, b)
    if os.path.getsize(a) != os.path.getsize(b):
        return False
    with open(a, "rb") as fa, open(b, "rb") as fb:
        while True:
            x, y = fa.read(1 << 24), fb.read(1 << 24)
            if x != y:
                return False
            if not x:
                return True


def skimage_seconds(path, n_segments, compactness):
    """scikit-image's slic on the same array, or None without it."""
    try:
        import numpy as np
        import tifffile
        from skimage.segmentation import slic
    except ImportError:
        return None
    image = tifffile.imread(path).astype(np.float32) / 255.0
    kwargs = {"channel_axis": None}
    t0 = time.monotonic()
    slic(image, n_segments=n_segments, compactness=compactness, max_num_iter=10,
         start_label=1, **kwargs)
    return time.monotonic() - t0


def points(args):
    """The configurations of one size: ("devices", "0,1") or ("ranks", 2)."""
    out = []
    if args.backend == "cuda":
        for lst in args.devices.split(";"):
            out.append(("devices", lst))
    else:
        out.append(("devices", None))
    for r in args.ranks:
        if r > 1:
            out.append(("ranks", r))
    return out


def command(args, how, what, vol, out, c, n_segments):
    zarr = out.endswith(".zarr")
    cmd = [args.cli, "slic", vol, "-o", out, "--json", "--compactness", repr(c),
           "--n-segments", str(n_segments), "--backend", args.backend,
           "--compression", args.zarr_compression if zarr else args.compression]
    if zarr and args.zarr_chunks:
        cmd += ["--zarr-chunks", args.zarr_chunks]
    if args.backend == "cpu":
        cmd += ["--threads", str(args.threads)]
    if how == "devices" and what is not None:
        cmd += ["--devices", what]
    if how == "ranks":
        mpirun = [args.mpirun, "--oversubscribe", "-np", str(what)]
        if os.geteuid() == 0:
            mpirun.insert(1, "--allow-run-as-root")
        cmd = mpirun + cmd
    return cmd


def label(how, what):
    if how == "ranks":
        return "%d ranks" % what
    if what is None:
        return "1 process"
    return "%d device%s" % (len(what.split(",")), "" if what.count(",") == 0 else "s")


def width(how, what):
    if how == "ranks":
        return what
    return 1 if what is None else len(what.split(","))


def plot(data, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6, 4.5))
    groups = {}
    for p in data["points"]:
        key = "%d³ C=%g %s%s" % (p["size"], p["compactness"], p["how"],
                                 " Zarr" if p.get("format") == "zarr" else "")
        groups.setdefault(key, []).append((p["width"], p["speedup"]))
    top = 1
    for key, values in sorted(groups.items()):
        # Every speed-up is over the one device or one process of its point.
        if all(w != 1 for w, _ in values):
            values.append((1, 1.0))
        values.sort()
        xs, ys = zip(*values)
        top = max(top, max(xs))
        ax.plot(xs, ys, "o-", label=key)
    ax.plot([1, top], [1, top], "k--", label="ideal")
    ax.set_xlabel("devices or ranks")
    ax.set_ylabel("speed-up over one (wall, file in → file out)")
    ax.set_title("Supervox scaling (%s, %s)" % (data["backend"], data["machine"]["host"]))
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def print_steps(data):
    """The steps' table: what more devices or ranks do not divide."""
    keys = ("before_run", "first_pass", "later_pass", "final_labels", "connect_device",
            "file_appends", "release_exit")
    print("\nsteps, s (the one process, or one rank): " + ", ".join(keys))
    for p in data["points"]:
        st = p.get("steps", {})
        print("%-6d %-5g %-7g %-4s %-10s " % (p["size"], p["noise"], p["compactness"],
                                              p.get("format", "tif"), label(p["how"], p["what"]))
              + " ".join("%8s" % ("%.3f" % st[k] if k in st else "-") for k in keys))


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cli", help="supervox-cli")
    ap.add_argument("--mpirun", default=shutil.which("mpirun") or "mpirun")
    ap.add_argument("--backend", default="cpu", choices=("cpu", "cuda"))
    ap.add_argument("--sizes", default="96")
    ap.add_argument("--noise", default="0.05,0.3")
    ap.add_argument("--compactness", default="0.01,0.1,1,10")
    ap.add_argument("--devices", default="0;0,1", help="lists of --devices, ';' between them")
    ap.add_argument("--ranks", default="1,2")
    ap.add_argument("--threads", type=int, default=1, help="--threads a process (CPU)")
    ap.add_argument("--hwloc-opencl", action="store_true",
                    help="leave hwloc's OpenCL plugin on for mpirun (slow on GPU machines)")
    ap.add_argument("--compression", default="deflate:runs", help="the TIFF's codec")
    ap.add_argument("--formats", default="tif", help="tif, zarr or tif,zarr: the label output")
    ap.add_argument("--zarr-compression", default="blosc:zstd:1", help="the store's codec")
    ap.add_argument("--zarr-chunks", help="the store's chunk shape Z,Y,X (default the writer's)")
    ap.add_argument("--skimage-max-size", type=int, default=256,
                    help="scikit-image runs on the smallest size when it is at most this")
    ap.add_argument("--workdir")
    ap.add_argument("--json")
    ap.add_argument("--plot")
    ap.add_argument("--replot")
    args = ap.parse_args()
    if args.replot:
        with open(args.replot) as f:
            plot(json.load(f), args.plot)
        return 0
    args.ranks = [int(r) for r in args.ranks.split(",")]
    sizes = [int(s) for s in args.sizes.split(",")]
    noises = [float(x) for x in args.noise.split(",")]
    compactness = [float(x) for x in args.compactness.split(",")]
    formats = args.formats.split(",")
    mpirun_env = dict(os.environ)
    if not args.hwloc_opencl:
        mpirun_env.setdefault("HWLOC_COMPONENTS", "-opencl")
    work = args.workdir or tempfile.mkdtemp(prefix="sv-scaling-")
    os.makedirs(work, exist_ok=True)
    data = {
        "date": datetime.datetime.now().isoformat(timespec="seconds"),
        "backend": args.backend,
        "command": " ".join(sys.argv),
        "machine": {"host": socket.gethostname(), "cpus": os.cpu_count(),
                    "platform": platform.platform()},
        "hwloc_components": mpirun_env.get("HWLOC_COMPONENTS"),
        "points": [],
        "skimage": [],
    }
    failed = False
    print("%-6s %-5s %-7s %-4s %-10s %8s %8s %8s %8s %8s %8s %s" % (
        "size", "noise", "C", "out", "run", "wall s", "prepare", "iterate", "connect", "total",
        "speed-up", "same"))
    for n in sizes:
        for noise in noises:
            vol = os.path.join(work, "v%d-%g.tif" % (n, noise))
            if not os.path.exists(vol):
                make_volume(vol, n, noise)
            n_segments = max(n ** 3 // 1000, 1)
            for c in compactness:
                for fmt in formats:
                    first = None
                    base_wall = None
                    for i, (how, what) in enumerate(points(args)):
                        stem = "o-%d-%g-%g-%d-%s-%s" % (n, noise, c, i, how,
                                                        str(what).replace(",", "_"))
                        # A store's metadata names it: one name, a folder each.
                        out = (os.path.join(work, stem, "labels.zarr") if fmt == "zarr"
                               else os.path.join(work, stem + ".tif"))
                        if fmt == "zarr":
                            os.makedirs(os.path.dirname(out), exist_ok=True)
                        wall, result, err, found = run_timed(command(args, how, what, vol, out, c,
                                                                     n_segments), mpirun_env)
                        if result is None:
                            print("%d³ C=%g %s %s failed: %s" % (n, c, fmt, label(how, what),
                                                                 err))
                            failed = True
                            continue
                        same = True
                        if first is None:
                            first, base_wall = out, wall
                        else:
                            same = same_bytes(first, out)
                            failed = failed or not same
                            remove_output(out)
                        s = result.get("seconds", {})
                        point = {"size": n, "noise": noise, "compactness": c, "how": how,
                                 "what": what, "width": width(how, what), "wall": wall,
                                 "format": fmt, "seconds": s, "speedup": base_wall / wall,
                                 "same": same, "devices": result.get("devices"),
                                 "mode": result.get("mode"), "labels": result.get("n_labels"),
                                 "steps": found}
                        data["points"].append(point)
                        print(("%-6d %-5g %-7g %-4s %-10s %8.2f %8.2f %8.2f %8.2f %8.2f %7.2fx"
                               " %s") % (
                            n, noise, c, fmt, label(how, what), wall, s.get("prepare", 0),
                            s.get("iterate", 0), s.get("connect", 0), s.get("total", 0),
                            point["speedup"], "yes" if same else "NO"))
                    if first is not None:
                        remove_output(first)
                    if (n == min(sizes) and n <= args.skimage_max_size and noise == noises[0]
                            and fmt == formats[0]):
                        sk = skimage_seconds(vol, n_segments, c)
                        if sk is not None and base_wall:
                            data["skimage"].append({"size": n, "compactness": c, "seconds": sk,
                                                    "ratio_to_one": sk / base_wall})
                            print("%-6d %-5g %-7g %-4s %-10s %8.2f %37s %7.2fx (one run is that "
                                  "much faster)" % (n, noise, c, "", "scikit-image", sk, "",
                                                    sk / base_wall))
                if args.json:
                    with open(args.json, "w") as f:
                        json.dump(data, f, indent=1)
    print_steps(data)
    if args.plot:
        plot(data, args.plot)
    if not args.workdir:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
