#!/usr/bin/env python3
"""Table and plot of bench-stream.sh's JSON files (not a test).

    python3 bench/plot-stream.py DIR [PNG]

Prints one row per run (size, noise, compactness, backend or device limit, the
in-memory and streamed totals, their ratio, where the labels and the
connectivity ran, scikit-image's time where it ran) and draws the streamed
and in-memory totals against compactness, one panel per size.
"""
import glob
import json
import os
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

# The last field: the CUDA run's device limit in MiB, or "cpu".
NAME = re.compile(r"stream-(\d+)-noise([0-9.]+)-c([0-9.e-]+)-(\d+|cpu)\.json$")


def load(folder):
    rows = []
    for path in glob.glob(os.path.join(folder, "stream-*.json")):
        m = NAME.search(os.path.basename(path))
        if m is None:
            continue
        n, noise, c, limit = int(m[1]), float(m[2]), float(m[3]), m[4]
        with open(path) as f:
            run = json.load(f)
        sk_path = os.path.join(folder, f"skimage-{n}-noise{m[2]}-c{m[3]}.json")
        skimage = None
        if os.path.exists(sk_path):
            with open(sk_path) as f:
                skimage = json.load(f)
        rows.append((n, noise, c, limit, run, skimage))
    rows.sort(key=lambda r: r[:4])
    return rows


def main():
    folder = sys.argv[1]
    png = sys.argv[2] if len(sys.argv) > 2 else os.path.join(folder, "stream-sweep.png")
    rows = load(folder)
    if not rows:
        sys.exit(f"no stream-*.json in {folder}")
    print("| size | noise | compactness | backend, device limit MiB | in-memory s | streamed s | "
          "streamed / in-memory | labels identical | last assignment | connectivity | "
          "scikit-image s |")
    print("|---:|---:|---:|---:|---:|---:|---:|---|---|---|---:|")
    for n, noise, c, limit, run, sk in rows:
        s = run["streamed"]
        sk_text = "–"
        if sk is not None:
            agree = "same labels" if sk["identical"] else "labels differ"
            if "agree" in sk:
                agree = f"{100 * sk['agree']:.3f} % equal"
            sk_text = f"{sk['seconds']:.2f} ({agree})"
        where = "CPU" if limit == "cpu" else f"CUDA, {limit}"
        print(f"| {n}³ | {noise:g} | {c:g} | {where} | {run['in_memory']['total']:.2f} | "
              f"{s['total']:.2f} | {run['ratio']:.2f}× | {'yes' if run['identical'] else 'NO'} | "
              f"{'device' if s.get('labels_on_device') else 'host'} | "
              f"{'device' if s.get('connect_on_device') else 'host'} | {sk_text} |")

    sizes = sorted({r[0] for r in rows})
    fig, axes = plt.subplots(1, len(sizes), figsize=(4.5 * len(sizes), 3.6), squeeze=False)
    for ax, n in zip(axes[0], sizes):
        for noise in sorted({r[1] for r in rows if r[0] == n}):
            for limit in sorted({r[3] for r in rows if r[0] == n and r[1] == noise}):
                pts = [r for r in rows if r[0] == n and r[1] == noise and r[3] == limit]
                cs = [r[2] for r in pts]
                tag = f"noise {noise:g}" + (", CPU" if limit == "cpu" else
                                            f", {limit} MiB" if limit != "0" else "")
                ax.plot(cs, [r[4]["streamed"]["total"] for r in pts], "o-",
                        label=f"streamed, {tag}")
                ax.plot(cs, [r[4]["in_memory"]["total"] for r in pts], "s--",
                        label=f"in memory, {tag}")
                # scikit-image once per noise level, beside the first backend.
                sk = [(r[2], r[5]["seconds"]) for r in pts if r[5] is not None and limit == "0"]
                if sk:
                    ax.plot([p[0] for p in sk], [p[1] for p in sk], "^:",
                            label=f"scikit-image, {tag}")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("compactness")
        ax.set_ylabel("seconds, file in to file out")
        ax.set_title(f"{n}³ uint8")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(png, dpi=110)
    print(f"plot: {png}")


if __name__ == "__main__":
    main()
