#!/usr/bin/python3
"""Lab agreement with scikit-image: supervox.slic against
skimage.segmentation.slic on smooth random RGB volumes converted to Lab,
per input dtype and compactness, for the first assignment (max_num_iter=1)
and full runs (10 iterations), both without connectivity.

numpy computes cbrt and power (in rgb2lab) with Intel's SVML on CPUs with
AVX512_SKX and with libm elsewhere or under
NPY_DISABLE_CPU_FEATURES=AVX512_SKX; the two differ in the last bit (see
docs/SLIC-SEMANTICS.md). Each mode runs in a process of its own: the table
has a column pair per mode ("libm" always; "svml" where the CPU has it).

  PYTHONPATH=python SUPERVOX_LIBRARY=build/lib/libsupervox.so \\
      /usr/bin/python3 bench/lab-agreement.py --seeds 0,1,2
"""

import argparse
import ctypes
import json
import os
import subprocess
import sys
import warnings

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "common"))
DISABLE_SVML = "AVX512_SKX"


def numpy_math():
    """"svml" when numpy's float32 cbrt is not libm's cbrtf, else "libm"."""
    libm = ctypes.CDLL("libm.so.6")
    libm.cbrtf.restype = ctypes.c_float
    libm.cbrtf.argtypes = [ctypes.c_float]
    x = np.linspace(0.01, 1.0, 4001, dtype=np.float32)
    ref = np.array([libm.cbrtf(float(v)) for v in x], dtype=np.float32)
    return "libm" if np.array_equal(np.cbrt(x), ref) else "svml"


def as_dtype(base, dtype):
    if np.dtype(dtype).kind == "f":
        return base.astype(dtype)
    return (base * np.iinfo(dtype).max).astype(dtype)


def measure(args):
    from sv_test_data import smooth_volume
    from skimage.segmentation import slic
    import supervox

    shape = tuple(int(s) for s in args.shape.split(","))
    rows = []
    for seed in (int(s) for s in args.seeds.split(",")):
        base = smooth_volume(shape, seed, channels=3)
        for dtype in args.dtypes.split(","):
            image = as_dtype(base, dtype)
            for compactness in (float(c) for c in args.compactness.split(",")):
                for iters in (1, 10):
                    kwargs = dict(n_segments=args.n_segments, compactness=compactness,
                                  max_num_iter=iters, enforce_connectivity=False,
                                  convert2lab=True, channel_axis=-1)
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        ref = slic(image, **kwargs)
                    ours = supervox.slic(image, backend=args.backend, **kwargs)
                    rows.append(dict(seed=seed, dtype=dtype, compactness=compactness,
                                     iters=iters, agree=float((ref == ours).mean())))
    return rows


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shape", default="19,28,31", help="z,y,x (default 19,28,31)")
    parser.add_argument("--n-segments", type=int, default=180)
    parser.add_argument("--seeds", default="0", help="comma-separated volume seeds")
    parser.add_argument("--dtypes", default="float32,float64,uint8,uint16")
    parser.add_argument("--compactness", default="0.01,0.03,0.1")
    parser.add_argument("--backend", default="cpu", choices=["cpu", "cuda", "auto"])
    parser.add_argument("--json", help="also write the rows here")
    parser.add_argument("--one-mode", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.one_mode:
        json.dump({"math": numpy_math(), "rows": measure(args)}, sys.stdout)
        return 0

    modes = {}
    for disable in (None, DISABLE_SVML):
        env = dict(os.environ)
        env.pop("NPY_DISABLE_CPU_FEATURES", None)
        if disable:
            env["NPY_DISABLE_CPU_FEATURES"] = disable
        out = subprocess.run([sys.executable, os.path.abspath(__file__), "--one-mode"]
                             + sys.argv[1:], env=env, check=True, capture_output=True,
                             text=True).stdout
        result = json.loads(out)
        modes.setdefault(result["math"], result["rows"])
    names = sorted(modes, key=lambda m: m != "libm")

    # Minimum and mean over the seeds, per mode.
    table = {}
    for mode in names:
        for row in modes[mode]:
            key = (row["dtype"], row["compactness"])
            table.setdefault(key, {}).setdefault((mode, row["iters"]), []).append(row["agree"])
    header = "| dtype | compactness |" + "".join(
        " first (%s) | full (%s) |" % (m, m) for m in names)
    print(header)
    print("|---|---|" + "---|---|" * len(names))
    for (dtype, compactness), cells in table.items():
        line = "| %s | %g |" % (dtype, compactness)
        for mode in names:
            for iters in (1, 10):
                values = cells[(mode, iters)]
                if len(values) == 1:
                    line += " %.2f %% |" % (100 * values[0])
                else:
                    line += " %.2f %% (min %.2f) |" % (100 * np.mean(values), 100 * min(values))
        print(line)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(modes, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
