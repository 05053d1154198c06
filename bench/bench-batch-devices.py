#!/usr/bin/python3
"""A batch of volumes over several GPUs: one supervox-cli process given F
files, on one device, on every listed device a file at a time (the
batch's lanes), and on every listed device for each file in turn
(SV_BATCH_LANES=0), file in and file out; with --ranks, also under
mpirun, where the ranks share the files (one GPU a rank), and the ranks
each on every file (SV_BATCH_LANES=0). With --backend cpu there are no
devices: one process (its --threads) against the ranks (--threads each).

Volumes: bench/make-volume.py's generator, F of them per size and noise
(the noise of file i raised by 0.001·i, so that no two are the same).
Each point (size L, noise, compactness C, devices D, mode) runs

    supervox-cli slic IN_0 … IN_F-1 -o DIR/ --json --compactness C
                 --n-segments L^3/1000 --backend B [--devices D] [--threads T]

and times the whole process (wall), and checks that every label file is
byte for byte the one-device batch's. scikit-image's slic() runs one of
the files of the smallest size (up to --skimage-max-size) in the same
run, for the ratio per file.

Prints a table (wall, files per second, speed-up over one device), --json
writes every point with the machine, --plot draws the speed-up against
the ideal line (needs matplotlib). Exits 1 when a run failed or its labels
differ.

  bench/bench-batch-devices.py --cli .devbundle/bin/supervox-cli --sizes 512,1024 \\
      --files 4 --devices '0;0,1;0,1,2,3' --json batch.json --plot batch.png
  bench/bench-batch-devices.py --cli build-bench/app/cli/supervox-cli --backend cpu \\
      --sizes 96 --ranks 2 --threads 1 --skimage-max-size 96
"""

import argparse
import filecmp
import json
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


def run_timed(cmd, env):
    t0 = time.monotonic()
    p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return time.monotonic() - t0, p.returncode, p.stdout


def skimage_seconds(path, n_segments, compactness):
    """One file through scikit-image's slic() (read outside the clock)."""
    import numpy as np
    import skimage.segmentation
    import tifffile

    image = tifffile.imread(path).astype(np.float32) / 255
    t0 = time.monotonic()
    skimage.segmentation.slic(image, n_segments=n_segments, compactness=compactness,
                              channel_axis=None, start_label=1)
    return time.monotonic() - t0


def plot(data, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(6.4, 4.4))
    top = 1
    for key in sorted({(p["size"], p["noise"], p["compactness"], p["mode"]) for p in data["points"]
                       if p["mode"] != "one"}):
        pts = sorted((p["n_devices"], p["speedup"]) for p in data["points"]
                     if (p["size"], p["noise"], p["compactness"], p["mode"]) == key
                     and p.get("speedup"))
        if not pts:
            continue
        xs, ys = zip(*([(1, 1.0)] + pts))
        top = max(top, max(xs))
        ax.plot(xs, ys, {"lanes": "o-", "ranks": "^-", "split": "s--"}.get(key[3], "v:"),
                label=f"{key[0]}³ noise {key[1]} C {key[2]}, {key[3]}")
    ax.plot([1, top], [1, top], ":", color="grey", label="ideal")
    ax.set_xlabel("GPUs" if data.get("backend", "cuda") == "cuda" else "ranks")
    ax.set_ylabel("speed-up of the batch over one GPU or process")
    ax.set_title(f"{data['files']} files a batch, "
                 f"{data['gpu'] if data.get('backend', 'cuda') == 'cuda' else 'CPU'}")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--cli", required=True)
    ap.add_argument("--sizes", default="512,1024")
    ap.add_argument("--files", type=int, default=4)
    ap.add_argument("--noise", default="0.05,0.3")
    ap.add_argument("--compactness", default="0.01,0.1,1,10")
    ap.add_argument("--backend", choices=("cuda", "cpu"), default="cuda")
    ap.add_argument("--threads", type=int, default=0,
                    help="--threads for every process or rank (0: supervox-cli's default)")
    ap.add_argument("--devices", default="0;0,1;0,1,2,3",
                    help="device lists separated by ';' (the first is the baseline)")
    ap.add_argument("--ranks", default="",
                    help="MPI rank counts, e.g. 2,4 (one GPU a rank; mpirun from PATH)")
    ap.add_argument("--skimage-max-size", type=int, default=0)
    ap.add_argument("--workdir")
    ap.add_argument("--json")
    ap.add_argument("--plot")
    args = ap.parse_args()

    sizes = [int(s) for s in args.sizes.split(",")]
    noises = [float(s) for s in args.noise.split(",")]
    cs = [float(s) for s in args.compactness.split(",")]
    lists = args.devices.split(";")
    work = args.workdir or tempfile.mkdtemp(prefix="sv-bench-batch-")
    os.makedirs(work, exist_ok=True)
    try:
        gpu = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                             capture_output=True, text=True).stdout.splitlines()[0]
    except (OSError, IndexError):
        gpu = "no GPU"
    data = {"host": socket.gethostname(), "machine": platform.machine(), "gpu": gpu,
            "backend": args.backend, "threads": args.threads,
            "cores": os.cpu_count(), "files": args.files, "cli": args.cli, "points": []}
    failed = False
    print(f"{'size':>5} {'noise':>5} {'C':>5} {'devices':<9} {'mode':<6} {'wall s':>8} "
          f"{'files/s':>8} {'speed-up':>8}  labels")
    for n in sizes:
        for noise in noises:
            inputs = []
            for i in range(args.files):
                path = os.path.join(work, f"v{n}-{noise}-{i}.tif")
                if not os.path.exists(path):
                    make_volume(path, n, round(noise + 0.001 * i, 4))
                inputs.append(path)
            for c in cs:
                segments = max(n ** 3 // 1000, 1)
                base = None
                cpu = args.backend == "cpu"
                runs = [("cpu" if cpu else lists[0], "one")]
                for dl in [] if cpu else lists[1:]:
                    runs += [(dl, "lanes"), (dl, "split")]
                for r in [int(x) for x in args.ranks.split(",") if x]:
                    runs += [(f"np{r}", "ranks"), (f"np{r}", "ranks-split")]
                for dl, mode in runs:
                    out = os.path.join(work, f"out-{mode}-{dl.replace(',', '_')}")
                    shutil.rmtree(out, ignore_errors=True)
                    os.makedirs(out)
                    env = dict(os.environ)
                    if mode in ("split", "ranks-split"):
                        env["SV_BATCH_LANES"] = "0"
                    cmd = [args.cli, "slic", *inputs, "-o", out + "/", "--json",
                           "--compactness", str(c), "--n-segments", str(segments),
                           "--backend", args.backend]
                    if args.threads > 0:
                        cmd += ["--threads", str(args.threads)]
                    if mode.startswith("ranks"):
                        # hwloc's OpenCL plugin starts every GPU inside mpirun.
                        env.setdefault("HWLOC_COMPONENTS", "-opencl")
                        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
                        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
                        cmd = ["mpirun", "--oversubscribe", "-np", dl[2:]] + cmd
                    elif not cpu:
                        cmd += ["--devices", dl]
                    subprocess.run(["sync"])
                    wall, rc, text = run_timed(cmd, env)
                    same = rc == 0
                    if rc == 0 and base is not None:
                        for name in sorted(os.listdir(base)):
                            if name.endswith(".tif") and not filecmp.cmp(
                                    os.path.join(base, name), os.path.join(out, name),
                                    shallow=False):
                                same = False
                    if rc != 0:
                        print(text[-2000:], file=sys.stderr)
                    failed = failed or not same
                    if base is None and rc == 0:
                        base = out
                        base_wall = wall
                    point = {"size": n, "noise": noise, "compactness": c, "devices": dl,
                             "n_devices": int(dl[2:]) if dl.startswith("np")
                             else 1 if cpu else len(set(dl.split(","))), "mode": mode,
                             "wall": round(wall, 3), "files_per_second":
                             round(args.files / wall, 3), "rc": rc, "same_labels": same}
                    if base is not None:
                        point["speedup"] = round(base_wall / wall, 3)
                    data["points"].append(point)
                    print(f"{n:>5} {noise:>5} {c:>5} {dl:<9} {mode:<6} {wall:>8.2f} "
                          f"{args.files / wall:>8.3f} {point.get('speedup', 0):>7.2f}×  "
                          f"{'same' if same else 'DIFFER' if rc == 0 else 'FAILED'}")
                if n == min(sizes) and n <= args.skimage_max_size:
                    sk = skimage_seconds(inputs[0], segments, c)
                    one = base_wall / args.files
                    data["points"].append({"size": n, "noise": noise, "compactness": c,
                                           "mode": "skimage", "seconds_per_file": round(sk, 3)})
                    print(f"  scikit-image: {sk:.2f} s a file; the one-{'process' if cpu else 'GPU'} batch {one:.2f} s a "
                          f"file ({sk / one:.1f}×)")
                for name in os.listdir(work):
                    if name.startswith("out-") and os.path.join(work, name) != base:
                        shutil.rmtree(os.path.join(work, name), ignore_errors=True)
                shutil.rmtree(base, ignore_errors=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(data, f, indent=1)
    if args.plot:
        plot(data, args.plot)
    if not args.workdir:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
