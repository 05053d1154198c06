#!/usr/bin/python3
"""`supervox-cli stats` against skimage.measure.regionprops_table on the
same labels and image: N³ voxels, labels on a jittered grid of cells of
CELL voxels a side (512, 11: about 100 000 labels), a uint16 image.

Usage: bench/bench-stats.py PATH/TO/supervox-cli [N [CELL]]
Times: our whole process (TIFF reads included, --adjacency off and on);
scikit-image's call alone (arrays already in memory)."""

import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import tifffile
from skimage.measure import regionprops_table


def main():
    cli = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 512
    cell = int(sys.argv[3]) if len(sys.argv) > 3 else 11
    rng = np.random.default_rng(0)
    g = np.arange(n)
    cells = -(-n // cell)
    zz = (g[:, None, None] + rng.integers(0, 2, (n, 1, 1))) // cell
    yy = (g[None, :, None] + rng.integers(0, 2, (1, n, 1))) // cell
    xx = (g[None, None, :] + rng.integers(0, 2, (1, 1, n))) // cell
    labels = ((zz * (cells + 1) + yy) * (cells + 1) + xx + 1).astype(np.uint32)
    image = rng.integers(0, 65535, (n, n, n), dtype=np.uint16)
    n_labels = len(np.unique(labels))
    with tempfile.TemporaryDirectory(prefix="sv-bench-stats-") as tmp:
        lab, img = os.path.join(tmp, "labels.tif"), os.path.join(tmp, "image.tif")
        tifffile.imwrite(lab, labels)
        tifffile.imwrite(img, image)
        times = {}
        for name, extra in (("ours", []), ("ours+adjacency",
                                           ["--adjacency", os.path.join(tmp, "p.csv")])):
            t = time.perf_counter()
            subprocess.run([cli, "stats", lab, "--image", img, "-o", os.path.join(tmp, "t.csv"),
                            *extra], check=True, capture_output=True)
            times[name] = time.perf_counter() - t
        t = time.perf_counter()
        regionprops_table(labels, intensity_image=image, properties=[
            "label", "area", "bbox", "centroid", "intensity_mean", "intensity_min",
            "intensity_max"])
        times["skimage"] = time.perf_counter() - t
    print("%d³, %d labels, %d cores: ours %.2f s (with adjacency %.2f s), scikit-image %.2f s, "
          "ratio %.1f×" % (n, n_labels, os.cpu_count(), times["ours"], times["ours+adjacency"],
                           times["skimage"], times["skimage"] / times["ours"]))


if __name__ == "__main__":
    main()
