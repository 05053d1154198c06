#!/usr/bin/env python3
"""Table and plot of the assignment's time in bench-cuda JSON files (not a test).

    python3 bench/plot-assign.py OUT.png LABEL=bench.json [LABEL=bench.json ...]

Prints, for every size and compactness, each file's assignment milliseconds
per iteration and end-to-end milliseconds, with the change against the first
file, and checks that the label counts agree (the kernels are exact, so a
difference means the files were not taken on the same volume and
parameters). Plots the assignment's time against compactness, one panel per
size, one line per file.
"""
import json
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(arg):
    label, _, path = arg.partition("=")
    if not path:
        sys.exit(f"want LABEL=FILE, got {arg}")
    with open(path) as f:
        runs = json.load(f)
    rows = {(r["side"], r.get("compactness", 0.1)): r for r in runs["rows"]}
    device = runs.get("issue_rate", {}).get("device", "?")
    return label, device, rows


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out = sys.argv[1]
    files = [load(a) for a in sys.argv[2:]]
    keys = sorted(set.intersection(*(set(rows) for _, _, rows in files)))
    first = files[0][2]
    bad = 0
    head = ["side", "C", "labels"]
    head += [f"{label} ({device}) assign/it ms" for label, device, _ in files]
    head += [f"{label} e2e ms" for label, _, _ in files]
    print("| " + " | ".join(head) + " |")
    print("|" + "---:|" * len(head))
    for key in keys:
        cells = [str(key[0]), f"{key[1]:g}", str(first[key]["n_labels"])]
        for _, _, rows in files:
            a = rows[key]["assign_ms_per_iter"]
            change = a / first[key]["assign_ms_per_iter"] - 1
            cells.append(f"{a:.3f}" if rows is first else f"{a:.3f} ({change:+.0%})")
            if rows[key]["n_labels"] != first[key]["n_labels"]:
                bad += 1
        cells += [f"{rows[key]['e2e_ms']:.1f}" for _, _, rows in files]
        print("| " + " | ".join(cells) + " |")
    if bad:
        print(f"{bad} rows' label counts differ between the files", file=sys.stderr)

    sides = sorted({k[0] for k in keys})
    fig, axes = plt.subplots(1, len(sides), figsize=(4.2 * len(sides), 3.6), squeeze=False)
    for ax, side in zip(axes[0], sides):
        cs = sorted(k[1] for k in keys if k[0] == side)
        for label, device, rows in files:
            ax.plot(cs, [rows[(side, c)]["assign_ms_per_iter"] for c in cs], "o-",
                    label=f"{label} ({device})")
        ax.set_xscale("log")
        ax.set_xlabel("compactness")
        ax.set_ylabel("assignment, ms per iteration")
        ax.set_title(f"{side}³")
        ax.set_ylim(bottom=0)
    axes[0][0].legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
