#!/usr/bin/python3
"""Conformance of supervox-cli with scikit-image's SLIC, printed as TAP.

For each case (shape, parameters) the same float32 input is segmented by
skimage.segmentation.slic and by `supervox-cli slic`, and four checks run:

  first-assignment  max_num_iter=1, no connectivity: labels exactly equal
  full-run          default iterations, no connectivity: >= 99.5 % voxels equal
  connectivity      `supervox-cli connect --connectivity-rule legacy` vs
                    _enforce_label_connectivity_cython on the same input
                    labels: exactly equal; the default (connected) rule vs
                    that loop with scikit-image PR #8334's change: exactly
                    equal, every label one piece
  with-connectivity full pipeline, legacy rule: adjusted Rand index >= 0.99
  connected-run     full pipeline, default rule: the connectivity step of
                    PR #8334 on our own raw labels, exactly; one piece each

Lab cases (an RGB volume with --convert2lab, per file dtype and
compactness; docs/SLIC-SEMANTICS.md, "Lab") run two checks:

  lab first-assignment  exactly equal to scikit-image for float32 files; for
                        the dtypes scikit-image computes in float64, exactly
                        equal to its float32 loop on its float64 Lab rounded
                        to float32 (its own float64 loop is reported)
  lab streamed          the run streamed in slabs writes the in-memory
                        run's labels

Lab needs numpy's libm cbrt and power: meson test sets
NPY_DISABLE_CPU_FEATURES=AVX512_SKX.

Usage: test-skimage-slic.py PATH/TO/supervox-cli
"""

import json
import os
import subprocess
import sys
import tempfile
import warnings

import numpy as np
import tifffile
from skimage.segmentation import slic
from skimage.segmentation._slic import _enforce_label_connectivity_cython
from skimage.segmentation.slic_superpixels import _get_grid_centroids

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from sv_test_data import (  # noqa: E402
    ARI_MIN, FULL_RUN_MIN_AGREEMENT, adjusted_rand_index, enforce_connectivity_reference,
    numpy_math, pieces_per_label, skimage_float32_loop, skimage_lab, smooth_volume)

CHECKS_PER_CASE = 5


def phantom(cli, shape):
    """The cell phantom of `supervox-cli synth` (float32, blur and noise)."""
    with tempfile.TemporaryDirectory(prefix="sv-phantom-") as tmp:
        path = os.path.join(tmp, "phantom.tif")
        subprocess.run([cli, "synth", "-o", path, "--shape", ",".join(map(str, shape)),
                        "--cells", "12", "--nucleus-radius", "3", "--seed", "5"],
                       check=True, capture_output=True)
        return tifffile.imread(path).astype(np.float32)


def fmt_list(values):
    return ",".join(repr(float(v)) for v in values)


class Case:
    def __init__(self, name, image, rgb=False, n_segments=50, compactness=0.1,
                 spacing=None, sigma=0, slic_zero=False, convert2lab=None):
        self.name = name
        self.image = image
        self.rgb = rgb
        self.n_segments = n_segments
        self.compactness = compactness
        self.spacing = spacing
        self.sigma = sigma
        self.slic_zero = slic_zero
        self.convert2lab = convert2lab

    def skimage(self, max_num_iter, enforce):
        kwargs = dict(n_segments=self.n_segments, compactness=self.compactness,
                      max_num_iter=max_num_iter, enforce_connectivity=enforce,
                      sigma=self.sigma, slic_zero=self.slic_zero, start_label=1,
                      channel_axis=-1 if self.rgb else None)
        if self.spacing is not None:
            kwargs["spacing"] = np.asarray(self.spacing)
        if self.convert2lab is not None:
            kwargs["convert2lab"] = self.convert2lab
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return slic(self.image, **kwargs)

    def cli_args(self, max_num_iter, enforce):
        args = ["--n-segments", str(self.n_segments),
                "--compactness", repr(float(self.compactness)),
                "--max-num-iter", str(max_num_iter),
                "--start-label", "1", "--backend", "cpu",
                "--enforce-connectivity" if enforce else "--no-enforce-connectivity"]
        if self.spacing is not None:
            args += ["--spacing", fmt_list(self.spacing)]
        if np.isscalar(self.sigma):
            if self.sigma:
                args += ["--sigma", repr(float(self.sigma))]
        else:
            args += ["--sigma", fmt_list(self.sigma)]
        if self.slic_zero:
            args.append("--slic-zero")
        if self.convert2lab is True:
            args.append("--convert2lab")
        elif self.convert2lab is False:
            args.append("--no-convert2lab")
        return args

    def shape3(self):
        """The (z, y, x) shape scikit-image segments."""
        shape = self.image.shape[:-1] if self.rgb else self.image.shape
        return (1,) + tuple(shape) if len(shape) == 2 else tuple(shape)


class Runner:
    def __init__(self, cli, tmp):
        self.cli = cli
        self.tmp = tmp
        self.count = 0

    def path(self, stem):
        self.count += 1
        return os.path.join(self.tmp, "%s-%d.tif" % (stem, self.count))

    def run(self, args):
        proc = subprocess.run([self.cli] + args, capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError("supervox-cli %s failed (%d): %s"
                               % (" ".join(args), proc.returncode, proc.stderr.strip()))
        return proc.stdout

    def slic(self, case, input_path, max_num_iter, enforce, extra=()):
        out = self.path("labels")
        stdout = self.run(["slic", input_path, "-o", out, "--json"]
                          + case.cli_args(max_num_iter, enforce) + list(extra))
        result = json.loads(stdout)
        labels = tifffile.imread(out).astype(np.int64)
        return labels.reshape(case.shape3()), result


def lab_image(dtype):
    """A smooth random RGB volume in [0.1, 0.9] as `dtype` (floats hold
    float32 values), so that the rescale has work to do."""
    base = (0.1 + 0.8 * smooth_volume((19, 28, 31), 24, channels=3)).astype(np.float32)
    if np.dtype(dtype).kind == "f":
        return base.astype(dtype)
    return np.round(base * np.iinfo(dtype).max).astype(dtype)


def check_lab(runner, report, name, dtype, compactness):
    """The Lab checks of one file dtype and compactness (two reports)."""
    image = lab_image(dtype)
    case = Case(name, image, rgb=True, n_segments=180, compactness=compactness,
                convert2lab=True)
    input_path = runner.path("input-" + name)
    tifffile.imwrite(input_path, image, photometric="rgb")
    shape3 = case.shape3()

    ours, _ = runner.slic(case, input_path, 1, False)
    own = case.skimage(1, False).reshape(shape3)
    if dtype == "float32":
        ref, what = own, "scikit-image"
    else:
        ref = skimage_float32_loop(skimage_lab(image).astype(np.float32), 180, compactness, 1)
        what = "scikit-image's float32 loop on its float64 Lab"
    diff = int((ref != ours).sum())
    math = numpy_math()
    report(diff == 0 and math == "libm",
           "%s lab first-assignment: %d of %d voxels differ from %s (%.2f%% equal to "
           "scikit-image's own; numpy cbrt/power: %s)"
           % (name, diff, ours.size, what, 100 * float((own == ours).mean()), math))

    memory, _ = runner.slic(case, input_path, 10, False)
    streamed, result = runner.slic(case, input_path, 10, False, ["--slab-depth", "4"])
    diff = int((memory != streamed).sum())
    report(diff == 0 and result["mode"] == "streaming",
           "%s lab streamed (%s): %d voxels differ from the in-memory run"
           % (name, result["mode"], diff))


def main():
    if len(sys.argv) != 2:
        print("usage: test-skimage-slic.py SUPERVOX-CLI", file=sys.stderr)
        return 2
    cli = sys.argv[1]

    cases = [
        Case("odd-17x23x29", smooth_volume((17, 23, 29), 1), n_segments=60),
        Case("cube-32-n200", smooth_volume((32, 32, 32), 2), n_segments=200, compactness=0.1),
        Case("phantom-24x48x48", phantom(cli, (24, 48, 48)), n_segments=300, compactness=0.1),
        Case("thin-64x1x1", smooth_volume((64, 1, 1), 3), n_segments=8),
        Case("single-1x1x1", smooth_volume((1, 1, 1), 4), n_segments=1),
        Case("flat-2x10x10", smooth_volume((2, 10, 10), 5), n_segments=12),
        Case("gray-2d-50x70", smooth_volume((50, 70), 6), n_segments=80),
        Case("rgb-2d-40x60", smooth_volume((40, 60), 7, channels=3), rgb=True,
             n_segments=60, compactness=10.0),
        Case("rgb-2d-no-lab", smooth_volume((30, 44), 14, channels=3), rgb=True,
             n_segments=40, compactness=0.1, convert2lab=False),
        Case("spacing-20x32x32", smooth_volume((20, 32, 32), 8), n_segments=100,
             spacing=(2.0, 1.0, 0.5)),
        Case("sigma-scalar-spacing", smooth_volume((16, 24, 24), 9), n_segments=80,
             sigma=1.0, spacing=(2.0, 1.0, 1.0)),
        Case("sigma-list", smooth_volume((16, 24, 24), 10), n_segments=80,
             sigma=[0.5, 1.0, 1.5]),
        Case("sigma-list-2d", smooth_volume((40, 50), 11), n_segments=60, sigma=[1.0, 2.0]),
        Case("slic-zero", smooth_volume((16, 24, 24), 12), n_segments=80, slic_zero=True),
        Case("gray-2d-spacing", smooth_volume((40, 50), 13), n_segments=60, spacing=(1.0, 2.0)),
    ]

    lab_cases = [(dtype, compactness) for dtype in ("float32", "float64", "uint8", "uint16")
                 for compactness in (0.01, 0.03, 0.1)]

    print("TAP version 13")
    print("1..%d" % (CHECKS_PER_CASE * len(cases) + 2 * len(lab_cases) + 1))
    failures = 0
    test_no = 0

    def report(ok, description):
        nonlocal failures, test_no
        test_no += 1
        if not ok:
            failures += 1
        print("%s %d - %s" % ("ok" if ok else "not ok", test_no, description))
        sys.stdout.flush()

    with tempfile.TemporaryDirectory(prefix="sv-conformance-") as tmp:
        runner = Runner(cli, tmp)
        for case in cases:
            input_path = runner.path("input-" + case.name)
            tifffile.imwrite(input_path, case.image,
                             photometric="rgb" if case.rgb else "minisblack")
            shape3 = case.shape3()
            n_vox = int(np.prod(shape3))
            try:
                # (1) the first assignment from the grid
                ref = case.skimage(1, False).reshape(shape3)
                ours, _ = runner.slic(case, input_path, 1, False)
                diff = int((ref != ours).sum())
                report(diff == 0, "%s first-assignment: %d of %d voxels differ"
                       % (case.name, diff, n_vox))

                # (2) full runs without connectivity
                ref_raw = case.skimage(10, False).reshape(shape3)
                ours_raw, _ = runner.slic(case, input_path, 10, False)
                agree = float((ref_raw == ours_raw).mean())
                report(agree >= FULL_RUN_MIN_AGREEMENT,
                       "%s full-run: %.4f%% voxels equal (need >= %.1f%%)"
                       % (case.name, 100 * agree, 100 * FULL_RUN_MIN_AGREEMENT))

                # (3) the connectivity step alone, on scikit-image's raw labels
                centroids, _ = _get_grid_centroids(np.empty(shape3 + (1,)), case.n_segments)
                segment_size = n_vox / centroids.shape[0]
                min_size = int(0.5 * segment_size)
                max_size = int(3.0 * segment_size)
                raw_path = runner.path("raw")
                tifffile.imwrite(raw_path, ref_raw.astype(np.uint32), photometric="minisblack")

                def connect(rule):
                    con_path = runner.path("connected")
                    runner.run(["connect", raw_path, "-o", con_path, "--min-size", str(min_size),
                                "--max-size", str(max_size), "--start-label", "1"]
                               + (["--connectivity-rule", rule] if rule else []))
                    return tifffile.imread(con_path).astype(np.int64).reshape(shape3)

                raw_intp = np.ascontiguousarray(ref_raw, dtype=np.intp)
                ref_con = np.asarray(_enforce_label_connectivity_cython(
                    raw_intp, min_size, max_size, start_label=1))
                diff_legacy = int((ref_con != connect("legacy")).sum())
                ref_fixed = enforce_connectivity_reference(raw_intp, min_size, max_size, 1)
                ours_fixed = connect(None)
                diff = int((ref_fixed != ours_fixed).sum())
                split = sum(1 for n in pieces_per_label(ours_fixed, 0).values() if n > 1)
                report(diff_legacy == 0 and diff == 0 and split == 0,
                       "%s connectivity (min %d, max %d): legacy %d, connected %d of %d voxels "
                       "differ, %d labels in pieces"
                       % (case.name, min_size, max_size, diff_legacy, diff, n_vox, split))

                # (4) the whole pipeline with connectivity, scikit-image's rule
                ref_full = case.skimage(10, True).reshape(shape3)
                ours_full, result = runner.slic(case, input_path, 10, True,
                                                 ["--connectivity-rule", "legacy"])
                ari = adjusted_rand_index(ref_full, ours_full)
                n_ours = len(np.unique(ours_full))
                n_ref = len(np.unique(ref_full))
                report(ari >= ARI_MIN and result["n_labels"] == n_ours,
                       "%s with-connectivity: ARI %.5f (need >= %.2f), %d labels (scikit-image %d)"
                       % (case.name, ari, ARI_MIN, n_ours, n_ref))

                # (5) the whole pipeline with the default rule: PR #8334's
                # step on our own raw labels
                ours_fixed_full, result = runner.slic(case, input_path, 10, True)
                want = enforce_connectivity_reference(
                    np.ascontiguousarray(ours_raw, dtype=np.intp), min_size, max_size, 1)
                diff = int((want != ours_fixed_full).sum())
                split = sum(1 for n in pieces_per_label(ours_fixed_full, 0).values() if n > 1)
                report(diff == 0 and split == 0
                       and result["n_labels"] == len(np.unique(ours_fixed_full)),
                       "%s connected-run: %d of %d voxels differ from PR #8334's rule, "
                       "%d labels in pieces" % (case.name, diff, n_vox, split))
            except Exception as exc:  # one broken case must not hide the others
                while test_no < CHECKS_PER_CASE * (cases.index(case) + 1):
                    report(False, "%s: %s" % (case.name, str(exc).replace("\n", " ")))
        for dtype, compactness in lab_cases:
            name = "lab-%s-c%g" % (dtype, compactness)
            first = test_no + 1
            try:
                check_lab(runner, report, name, dtype, compactness)
            except Exception as exc:  # one broken case must not hide the others
                while test_no < first + 1:
                    report(False, "%s: %s" % (name, str(exc).replace("\n", " ")))
        # The label file as napari (tifffile) and Fiji (ImageJ metadata) see it.
        try:
            vol = smooth_volume((5, 12, 14), 20)
            input_path = runner.path("input-readers")
            tifffile.imwrite(input_path, vol, photometric="minisblack")
            out = runner.path("labels-readers")
            runner.run(["slic", input_path, "-o", out, "--n-segments", "20",
                        "--spacing", "2,1,0.5"])
            with tifffile.TiffFile(out) as tif:
                series = tif.series[0]
                meta = tif.imagej_metadata or {}
                xres = tif.pages[0].tags["XResolution"].value
                problems = []
                if series.shape != (5, 12, 14):
                    problems.append("shape %s" % (series.shape,))
                if series.dtype != np.uint32:
                    problems.append("dtype %s" % series.dtype)
                if not tif.is_imagej:
                    problems.append("no ImageJ metadata")
                if abs(float(meta.get("spacing", 0)) - 2.0) > 1e-6:
                    problems.append("ImageJ spacing %r" % meta.get("spacing"))
                if abs(xres[0] / xres[1] - 2.0) > 1e-3:
                    problems.append("XResolution %r" % (xres,))
                labels = series.asarray()
            if labels.min() < 1:
                problems.append("labels start at %d" % labels.min())
            report(not problems, "label TIFF for tifffile/napari and Fiji: %s"
                   % ("; ".join(problems) if problems else
                      "uint32 5×12×14, ImageJ spacing 2, x resolution 2 px/unit"))
        except Exception as exc:
            report(False, "label TIFF for tifffile/napari and Fiji: %s" % exc)
    print("# %d of %d checks failed" % (failures, test_no))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
