#!/usr/bin/python3
"""`supervox-cli stats` against scikit-image's regionprops_table and a
brute-force NumPy adjacency, printed as TAP.

  table            labels from `slic` on a phantom with a uint16 image:
                   label, voxels, bbox and centroid equal to regionprops_table;
                   mean, min, max within 1e-6 relative, std against
                   scipy.ndimage; physical columns from the ImageJ spacing
  channels         a 3-channel uint16 image: mean/min/max per channel
  adjacency        pairs, face counts, physical area and boundary_mean
                   against a brute-force NumPy computation
  threads-slabs    the same bytes for --threads 1, 3, 8 and slabs of 1, 5,
                   all slices
  slic-stats       `slic --stats` (labels in memory, and streamed) writes the
                   bytes that `stats` writes from the label file
  background       the sidecar's start_label decides the background
  errors           shapes that differ, an unreadable or cut file, float labels: exit
                   1, one line naming the file, and no file left behind

Usage: test-stats.py PATH/TO/supervox-cli
"""

import csv
import io
import os
import subprocess
import sys
import tempfile

import warnings

import numpy as np
import tifffile
from scipy import ndimage
from skimage.measure import regionprops_table

SPACING = (2.0, 0.5, 0.25)  # z, y, x in micron
n_test = 0


def ok(cond, name, detail=""):
    global n_test
    n_test += 1
    print("%s %d - %s%s" % ("ok" if cond else "not ok", n_test, name,
                            "" if cond or not detail else " # " + detail))
    sys.stdout.flush()


def run(cli, *args):
    return subprocess.run([cli, *args], capture_output=True, text=True)


def read_csv(path):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    header, body = rows[0], rows[1:]
    return {name: np.array([float(r[i]) for r in body]) for i, name in enumerate(header)}, header


def rel_close(a, b, tol=1e-6):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return a.shape == b.shape and bool(np.all(np.abs(a - b) <= tol * np.maximum(np.abs(b), 1e-300)))


def brute_adjacency(lab, img):
    """Every face between two different non-zero labels: (a, b) -> faces,
    faces per axis, sum of both voxels' values per channel."""
    out = {}
    for axis in range(3):
        n = lab.shape[axis]
        p = np.take(lab, range(n - 1), axis=axis).ravel()
        q = np.take(lab, range(1, n), axis=axis).ravel()
        vp = np.take(img, range(n - 1), axis=axis).reshape(-1, img.shape[-1]).astype(float)
        vq = np.take(img, range(1, n), axis=axis).reshape(-1, img.shape[-1]).astype(float)
        m = (p != q) & (p != 0) & (q != 0)
        a, b = np.minimum(p[m], q[m]), np.maximum(p[m], q[m])
        s = vp[m] + vq[m]
        for i in range(len(a)):
            e = out.setdefault((int(a[i]), int(b[i])), [np.zeros(3), np.zeros(img.shape[-1])])
            e[0][axis] += 1
            e[1] += s[i]
    return out


def main():
    cli = sys.argv[1]
    warnings.simplefilter("ignore", RuntimeWarning)
    print("1..16")
    rng = np.random.default_rng(7)
    with tempfile.TemporaryDirectory(prefix="sv-stats-") as tmp:
        def p(name):
            return os.path.join(tmp, name)

        shape = (14, 40, 36)
        base = ndimage.gaussian_filter(rng.random(shape), 2.0)
        img = (base / base.max() * 50000 + rng.integers(0, 5000, shape)).astype(np.uint16)
        tifffile.imwrite(p("img.tif"), img, imagej=True, resolution=(1 / SPACING[2], 1 / SPACING[1]),
                         metadata={"spacing": SPACING[0], "unit": "micron"})
        r = run(cli, "slic", p("img.tif"), "-o", p("lab.tif"), "--n-segments", "60",
                "--compactness", "0.1", "--spacing", "file", "--stats", p("slic-table.csv"))
        if r.returncode != 0:
            print("Bail out! slic failed: " + r.stderr.strip())
            return
        lab = tifffile.imread(p("lab.tif")).astype(np.int32)

        # table
        r = run(cli, "stats", p("lab.tif"), "--image", p("img.tif"), "-o", p("t.csv"),
                "--adjacency", p("pairs.csv"))
        ok(r.returncode == 0, "stats runs", r.stderr.strip())
        t, header = read_csv(p("t.csv"))
        ref = regionprops_table(lab, intensity_image=img, properties=[
            "label", "area", "bbox", "centroid", "intensity_mean", "intensity_min",
            "intensity_max"])
        same = (np.array_equal(t["label"], ref["label"]) and np.array_equal(t["voxels"], ref["area"])
                and all(np.array_equal(t[c], ref["bbox-%d" % i]) for i, c in enumerate(
                    ["bbox_min_z", "bbox_min_y", "bbox_min_x", "bbox_max_z", "bbox_max_y",
                     "bbox_max_x"]))
                and all(np.allclose(t["centroid_" + a], ref["centroid-%d" % i], rtol=0, atol=1e-9)
                        for i, a in enumerate("zyx")))
        ok(same, "table: labels, voxels, bbox, centroid equal regionprops_table")
        std = ndimage.standard_deviation(img.astype(float), lab, ref["label"])
        ok(rel_close(t["mean"], ref["intensity_mean"]) and np.array_equal(t["min"], ref["intensity_min"])
           and np.array_equal(t["max"], ref["intensity_max"]) and rel_close(t["std"], std),
           "table: mean/std/min/max in the image's own values")
        vol = np.prod(SPACING)
        ok("volume_um3" in header and rel_close(t["volume_um3"], t["voxels"] * vol)
           and rel_close(t["centroid_x_um"], t["centroid_x"] * SPACING[2] + 1e-300)
           and rel_close(t["centroid_z_um"], t["centroid_z"] * SPACING[0] + 1e-300),
           "table: physical columns from the ImageJ calibration", ",".join(header[:9]))

        # channels
        img3 = rng.integers(0, 65535, shape + (3,)).astype(np.uint16)
        tifffile.imwrite(p("img3.tif"), img3, photometric="rgb")
        r = run(cli, "stats", p("lab.tif"), "--image", p("img3.tif"), "-o", p("t3.csv"))
        t3, _ = read_csv(p("t3.csv")) if r.returncode == 0 else ({}, [])
        ref3 = regionprops_table(lab, intensity_image=img3, properties=[
            "label", "intensity_mean", "intensity_min", "intensity_max"])
        ok(r.returncode == 0 and all(
            rel_close(t3["mean_c%d" % c], ref3["intensity_mean-%d" % c])
            and np.array_equal(t3["min_c%d" % c], ref3["intensity_min-%d" % c])
            and np.array_equal(t3["max_c%d" % c], ref3["intensity_max-%d" % c]) for c in range(3)),
           "channels: per-channel mean/min/max equal regionprops_table", r.stderr.strip())

        # adjacency
        pa, _ = read_csv(p("pairs.csv"))
        brute = brute_adjacency(lab, img[..., None])
        keys = sorted(brute)
        face_area = np.array([SPACING[1] * SPACING[2], SPACING[0] * SPACING[2],
                              SPACING[0] * SPACING[1]])
        ok(len(keys) == len(pa["a"]) and [tuple(map(int, k)) for k in zip(pa["a"], pa["b"])] == keys
           and np.array_equal(pa["faces"], [brute[k][0].sum() for k in keys])
           and rel_close(pa["area_um2"], [brute[k][0] @ face_area for k in keys])
           and rel_close(pa["boundary_mean"], [brute[k][1][0] / (2 * brute[k][0].sum()) for k in keys]),
           "adjacency: pairs, faces, area and boundary_mean equal brute force")

        # threads-slabs
        want = open(p("t.csv"), "rb").read() + open(p("pairs.csv"), "rb").read()
        same = True
        for extra in (["--threads", "1"], ["--threads", "3"], ["--threads", "8"],
                      ["--slab-depth", "1"], ["--slab-depth", "5", "--threads", "2"],
                      ["--slab-depth", "14"]):
            r = run(cli, "stats", p("lab.tif"), "--image", p("img.tif"), "-o", p("u.csv"),
                    "--adjacency", p("upairs.csv"), *extra)
            got = (open(p("u.csv"), "rb").read() + open(p("upairs.csv"), "rb").read()
                   if r.returncode == 0 else b"")
            if got != want:
                same = False
                print("# differs with " + " ".join(extra))
        ok(same, "threads-slabs: the same bytes for any thread count and slab depth")

        # slic-stats
        ok(os.path.exists(p("slic-table.csv"))
           and open(p("slic-table.csv"), "rb").read() == open(p("t.csv"), "rb").read(),
           "slic-stats: slic --stats writes what stats writes from the file")

        r = run(cli, "slic", p("img.tif"), "-o", p("lab-s.tif"), "--n-segments", "60",
                "--compactness", "0.1", "--spacing", "file", "--slab-depth", "4",
                "--stats", p("slic-s.csv"))
        ok(r.returncode == 0 and open(p("slic-s.csv"), "rb").read() == open(p("t.csv"), "rb").read(),
           "slic-stats: a streamed slic --stats writes the same table", r.stderr.strip())

        # background
        r = run(cli, "slic", p("img.tif"), "-o", p("lab0.tif"), "--n-segments", "30",
                "--start-label", "0")
        r2 = run(cli, "stats", p("lab0.tif"), "-o", p("t0.csv"))
        t0, h0 = read_csv(p("t0.csv")) if r2.returncode == 0 else ({"label": []}, [])
        lab0 = tifffile.imread(p("lab0.tif"))
        ok(r.returncode == 0 and r2.returncode == 0 and len(t0["label"]) > 0 and t0["label"][0] == 0
           and len(t0["label"]) == len(np.unique(lab0)) and "mean" not in h0,
           "background: start_label 0 in the sidecar keeps label 0; no image, no intensity columns",
           r2.stderr.strip())
        r = run(cli, "stats", p("lab.tif"), "--background", "1", "-o", p("tb.csv"))
        tb, _ = read_csv(p("tb.csv")) if r.returncode == 0 else ({"label": [1]}, [])
        ok(r.returncode == 0 and 1 not in tb["label"] and len(tb["label"]) == len(ref["label"]) - 1,
           "background: --background leaves that label out")

        # errors
        def clean_failure(args, needle):
            before = set(os.listdir(tmp))
            r = run(cli, "stats", *args, "-o", p("bad.csv"), "--adjacency", p("badpairs.csv"))
            after = set(os.listdir(tmp))
            line = r.stderr.strip()
            good = (r.returncode == 1 and after == before and "\n" not in line and needle in line)
            return good, line

        tifffile.imwrite(p("short.tif"), img[:-1])
        good, line = clean_failure([p("lab.tif"), "--image", p("short.tif")], "short.tif")
        ok(good and "same shape" in line, "errors: shapes that differ leave no output", line)
        with open(p("broken.tif"), "wb") as f:
            f.write(b"II*\0garbage, not a TIFF")
        good, line = clean_failure([p("broken.tif")], "broken.tif")
        ok(good, "errors: an unreadable label file leaves no output", line)
        tifffile.imwrite(p("cut.tif"), img)
        size = os.path.getsize(p("cut.tif"))
        with open(p("cut.tif"), "r+b") as f:
            f.truncate(size - 3000)
        good, line = clean_failure([p("lab.tif"), "--image", p("cut.tif"), "--slab-depth", "2"],
                                   "cut.tif")
        ok(good, "errors: an image cut short fails late, and leaves no output", line)
        tifffile.imwrite(p("float.tif"), lab.astype(np.float32))
        good, line = clean_failure([p("float.tif")], "float.tif")
        ok(good, "errors: float labels are refused, no output", line)
        r = run(cli, "stats", p("lab.tif"), "-o", p("missing/t.csv"), "--adjacency",
                p("pairs-new.csv"))
        ok(r.returncode == 1 and "missing" in r.stderr and not os.path.exists(p("pairs-new.csv")),
           "errors: a folder that does not exist is refused before anything is written",
           r.stderr.strip())


if __name__ == "__main__":
    main()
