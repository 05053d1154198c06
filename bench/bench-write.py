#!/usr/bin/python3
"""Label file write time: codecs x threads x writer, in memory and in slabs.

For each size N, makes SLIC labels of an N^3 cell phantom once
(`supervox-cli synth`, then `supervox-cli slic` with about 1000 voxels per
segment; kept in the work folder) and runs `bench-write` on them, which
times writing the labels as supervox-cli does (temporary file, fsync,
rename) for each codec and thread count, with both writers:

  strips   the strip writer: every thread compresses strips and writes them
           at their offsets (prefix sum of the compressed sizes)
  libtiff  libtiff's in-order writer (SV_TIFF_WRITER=libtiff): the same
           compression threads, one thread handing strips to libtiff

both in memory (one call) and slab by slab (the streamed run's writer).
Every file of a codec is checked to hold the same bytes.

Prints a table (median wall and CPU seconds, MB/s of uncompressed labels,
the speed-up of each thread count over one thread, strips over libtiff),
writes the numbers as JSON and plots seconds against threads, one panel per
size (matplotlib; without it, --replot JSON draws the plot elsewhere).

Usage: bench-write.py --build BUILD [--sizes 256,512] [--codecs none,deflate,zstd]
                      [--threads 1,2] [--repeats 3] [--slab-depth 32]
                      [--workdir DIR] [--json-out FILE] [--plot FILE]
       bench-write.py --replot FILE.json [--plot FILE]
"""

import argparse
import importlib.util
import json
import os
import platform
import subprocess
import sys

# As in bench-cpu.py: about 1000 voxels per supervoxel.
SEGMENTS = {128: 2000, 256: 16000, 512: 128000, 1024: 1000000}


def run(argv, capture=False):
    proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if proc.returncode != 0:
        raise RuntimeError("%s failed (%d): %s" % (" ".join(argv[:3]), proc.returncode,
                                                   proc.stderr.strip()))
    return proc.stdout


def make_labels(cli, workdir, n, threads):
    """SLIC labels of an n^3 phantom, made once."""
    labels = os.path.join(workdir, "labels-%d.tif" % n)
    if os.path.exists(labels):
        return labels
    volume = os.path.join(workdir, "phantom-%d.tif" % n)
    print("# making %d^3 labels (once) ..." % n, file=sys.stderr)
    run([cli, "synth", "--shape", "%d,%d,%d" % (n, n, n), "-o", volume, "--compression", "none"])
    segments = SEGMENTS.get(n, n ** 3 // 1000)
    run([cli, "slic", volume, "-o", labels, "--n-segments", str(segments), "--threads",
         str(threads), "--compression", "none"])
    os.unlink(volume)
    return labels


def table(results):
    lines = ["| size | codec | mode | writer | threads | s | CPU s | MB/s | vs 1 thread | "
             "strips / libtiff | MiB |",
             "|---:|---|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for size in results["sizes"]:
        rows = size["rows"]
        raw = 4 * size["shape"][0] * size["shape"][1] * size["shape"][2]

        def find(codec, mode, writer, threads):
            for r in rows:
                if (r["codec"], r["mode"], r["writer"], r["threads"]) == (codec, mode, writer,
                                                                          threads):
                    return r
            return None

        for r in rows:
            one = find(r["codec"], r["mode"], r["writer"], 1)
            other = find(r["codec"], r["mode"], "libtiff", r["threads"])
            speedup = "%.2fx" % (one["seconds"] / r["seconds"]) if one else "-"
            vs = ("%.2fx" % (other["seconds"] / r["seconds"])
                  if other and r["writer"] == "strips" else "-")
            lines.append("| %d³ | %s | %s | %s | %d | %.3f | %.3f | %.0f | %s | %s | %.1f |" % (
                size["n"], r["codec"], r["mode"], r["writer"], r["threads"], r["seconds"],
                r.get("cpu_seconds", float("nan")), raw / r["seconds"] / 1e6, speedup, vs,
                r["file_bytes"] / 2 ** 20))
    return "\n".join(lines)


def plot(results, path):
    """Seconds against threads (both log), a column per size and a row per
    mode; a colour per codec, solid for the strip writer, dotted for
    libtiff's."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = results["sizes"]
    modes = ("memory", "slabs")
    fig, axes = plt.subplots(len(modes), len(sizes), squeeze=False, sharex=True,
                             figsize=(5.2 * len(sizes) + 1.0, 3.4 * len(modes) + 0.8))
    colours = {"none": "tab:gray", "deflate": "tab:blue", "zstd": "tab:orange",
               "lzw": "tab:green"}
    styles = {"strips": "-", "libtiff": ":"}
    for j, size in enumerate(sizes):
        for i, mode in enumerate(modes):
            ax = axes[i][j]
            keys = []
            for r in size["rows"]:
                if r["mode"] == mode and (r["codec"], r["writer"]) not in keys:
                    keys.append((r["codec"], r["writer"]))
            for codec, writer in keys:
                here = sorted((r for r in size["rows"] if r["mode"] == mode
                               and (r["codec"], r["writer"]) == (codec, writer)),
                              key=lambda r: r["threads"])
                ax.plot([r["threads"] for r in here], [r["seconds"] for r in here],
                        styles.get(writer, "--"), marker="o", markersize=4,
                        color=colours.get(codec.split(":")[0], "black"),
                        label="%s, %s" % (codec, writer))
            threads = sorted({r["threads"] for r in size["rows"]})
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xticks(threads)
            ax.set_xticklabels([str(t) for t in threads])
            ax.set_title("%d³ uint32 labels (%.0f MiB), %s" % (
                size["n"], 4 * size["n"] ** 3 / 2 ** 20,
                "in memory" if mode == "memory" else "slab by slab"), fontsize=10)
            ax.set_ylabel("write s (median)")
            ax.grid(alpha=0.3, which="both")
            if i == len(modes) - 1:
                ax.set_xlabel("threads")
    axes[0][-1].legend(fontsize=7, loc="upper right")
    fig.suptitle("Label file write: strip writer (solid) and libtiff's in-order writer "
                 "(dotted), %s" % results["machine"], fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=110)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", help="meson build folder")
    ap.add_argument("--replot", metavar="JSON", help="table and plot of an earlier run")
    ap.add_argument("--sizes", default="256,512")
    ap.add_argument("--codecs", default="none,deflate,zstd")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--slab-depth", type=int, default=32)
    ap.add_argument("--workdir", default="/tmp/sv-bench-write",
                    help="labels are kept here between runs")
    ap.add_argument("--dir", default="/dev/shm" if os.path.isdir("/dev/shm") else None,
                    help="folder the label files are written to (default /dev/shm: no disk)")
    ap.add_argument("--json-out", default="bench-write.json")
    ap.add_argument("--plot", default="bench-write.png")
    args = ap.parse_args()
    if args.replot:
        with open(args.replot) as f:
            results = json.load(f)
        print(table(results))
        plot(results, args.plot)
        print("# plot: %s" % args.plot, file=sys.stderr)
        return
    if not args.build:
        ap.error("--build or --replot is needed")

    cli = os.path.join(args.build, "app", "cli", "supervox-cli")
    bench = os.path.join(args.build, "bench", "bench-write")
    os.makedirs(args.workdir, exist_ok=True)
    threads = [int(t) for t in args.threads.split(",")]
    results = {"machine": "%s, %d cores" % (platform.machine(), os.cpu_count()),
               "command": " ".join(sys.argv), "sizes": []}
    for n in (int(s) for s in args.sizes.split(",")):
        labels = make_labels(cli, args.workdir, n, max(threads))
        argv = [bench, "--labels", labels, "--codecs", args.codecs, "--threads", args.threads,
                "--repeats", str(args.repeats), "--slab-depth", str(args.slab_depth)]
        if args.dir:
            argv += ["--dir", args.dir]
        print("# %s" % " ".join(argv), file=sys.stderr)
        size = json.loads(run(argv))
        size["n"] = n
        results["sizes"].append(size)

    print(table(results))
    with open(args.json_out, "w") as f:
        json.dump(results, f, indent=1)
    print("# JSON: %s" % args.json_out, file=sys.stderr)
    if importlib.util.find_spec("matplotlib") is None:
        print("# matplotlib is not installed for %s: no plot; run bench-write.py --replot %s "
              "where it is" % (sys.executable, args.json_out), file=sys.stderr)
        return
    plot(results, args.plot)
    print("# plot: %s" % args.plot, file=sys.stderr)


if __name__ == "__main__":
    main()
