"""Test data and agreement measures shared by the conformance suite
(tests/conformance) and the Python package's tests (tests/python)."""

import numpy as np
from scipy import ndimage as ndi

FULL_RUN_MIN_AGREEMENT = 0.995
ARI_MIN = 0.99


def adjusted_rand_index(a, b):
    """ARI from the contingency table (as sklearn's adjusted_rand_score)."""
    a = np.asarray(a).ravel()
    b = np.asarray(b).ravel()
    n = a.size
    if n < 2:
        return 1.0
    _, ai = np.unique(a, return_inverse=True)
    _, bi = np.unique(b, return_inverse=True)
    pairs = ai.astype(np.int64) * (bi.max() + 1) + bi
    _, nij = np.unique(pairs, return_counts=True)

    def comb2(x):
        x = np.asarray(x, dtype=np.float64)
        return (x * (x - 1) / 2).sum()

    sum_ij = comb2(nij)
    sum_a = comb2(np.bincount(ai))
    sum_b = comb2(np.bincount(bi))
    total = n * (n - 1) / 2
    expected = sum_a * sum_b / total
    maximum = (sum_a + sum_b) / 2
    if maximum == expected:
        return 1.0
    return (sum_ij - expected) / (maximum - expected)


def smooth_volume(shape, seed, channels=None):
    """Smooth random float32 data with structure at a few scales."""
    rng = np.random.default_rng(seed)
    full = tuple(shape) + ((channels,) if channels else ())
    noise = rng.random(full)
    sig = [max(0.0, min(3.0, s / 6.0)) for s in shape] + ([0] if channels else [])
    vol = ndi.gaussian_filter(noise, sig) + 0.05 * rng.random(full)
    vol -= vol.min()
    vol /= max(vol.max(), 1e-12)
    return vol.astype(np.float32)


def enforce_connectivity_reference(segments, min_size, max_size, start_label=1,
                                   rule="connected", counts=None):
    """scikit-image's _enforce_label_connectivity_cython, step by step in
    Python, for small volumes (z, y, x). rule "legacy" is scikit-image
    <= 0.26; "connected" adds the change of scikit-image PR #8334: a piece
    below min_size that sees no relabelled voxel keeps its new label and
    the counter moves on. counts (a dict) receives "orphans": how many
    pieces were such a piece (where the two rules part)."""
    segments = np.asarray(segments)
    depth, height, width = segments.shape
    seg = segments.tolist()
    mask_label = start_label - 1
    out = [[[mask_label] * width for _ in range(height)] for _ in range(depth)]
    steps = ((0, 0, 1), (0, 0, -1), (0, 1, 0), (0, -1, 0), (1, 0, 0), (-1, 0, 0))
    current = start_label
    orphans = 0
    for z in range(depth):
        for y in range(height):
            for x in range(width):
                if seg[z][y][x] == mask_label or out[z][y][x] > mask_label:
                    continue
                adjacent = current
                label = seg[z][y][x]
                out[z][y][x] = current
                queue = [(z, y, x)]
                visited = 0
                while visited < len(queue) < max_size:
                    qz, qy, qx = queue[visited]
                    for dz, dy, dx in steps:
                        zz, yy, xx = qz + dz, qy + dy, qx + dx
                        if not (0 <= xx < width and 0 <= yy < height and 0 <= zz < depth):
                            continue
                        o = out[zz][yy][xx]
                        if seg[zz][yy][xx] == label and o == mask_label:
                            out[zz][yy][xx] = current
                            queue.append((zz, yy, xx))
                            if len(queue) >= max_size:
                                break
                        elif o > mask_label and o != current:
                            adjacent = o
                    visited += 1
                orphans += len(queue) < min_size and adjacent == current
                if len(queue) < min_size and (rule == "legacy" or adjacent != current):
                    for qz, qy, qx in queue:
                        out[qz][qy][qx] = adjacent
                else:
                    current += 1
    if counts is not None:
        counts["orphans"] = orphans
    return np.array(out, dtype=np.intp).reshape(segments.shape)


def pieces_per_label(labels, background):
    """For each label (background excluded), the number of 6-connected
    (4 in 2D) pieces it is made of: {label: pieces}."""
    labels = np.asarray(labels)
    structure = ndi.generate_binary_structure(labels.ndim, 1)
    found = {}
    objects = ndi.find_objects(np.where(labels == background, 0, labels - background))
    for i, box in enumerate(objects):
        if box is None:
            continue
        label = i + 1 + background
        _, n = ndi.label(labels[box] == label, structure=structure)
        found[label] = n
    return found


# ---- Lab as scikit-image computes it ---------------------------------------

# numpy dispatches cbrt and power to Intel's SVML on CPUs with AVX512_SKX;
# Supervox's Lab reproduces numpy's portable path (libm), which this turns
# on everywhere (meson test sets it; see docs/SLIC-SEMANTICS.md).
PORTABLE_NUMPY_ENV = {"NPY_DISABLE_CPU_FEATURES": "AVX512_SKX"}


def numpy_math():
    """"libm" when numpy computes float32 cbrt with libm's cbrtf, as
    Supervox's Lab does; "svml" when it uses SVML instead."""
    import ctypes
    libm = ctypes.CDLL("libm.so.6")
    libm.cbrtf.restype = ctypes.c_float
    libm.cbrtf.argtypes = [ctypes.c_float]
    x = np.linspace(0.01, 1.0, 4001, dtype=np.float32)
    ref = np.array([libm.cbrtf(float(v)) for v in x], dtype=np.float32)
    return "libm" if np.array_equal(np.cbrt(x), ref) else "svml"


def require_portable_numpy():
    """Fails with the fix when numpy does not take libm's cbrt and power;
    skips where even the fix leaves numpy on other routines (a numpy built
    otherwise than Debian's 1.24, whose libm path the promise is about)."""
    import os
    if numpy_math() == "libm":
        return
    if "AVX512_SKX" in os.environ.get("NPY_DISABLE_CPU_FEATURES", ""):
        import pytest
        pytest.skip("numpy %s computes cbrt with its own SIMD routines even with "
                    "NPY_DISABLE_CPU_FEATURES=AVX512_SKX" % np.__version__)
    raise AssertionError(
        "numpy computes cbrt and power with SVML on this CPU; run the test with "
        "NPY_DISABLE_CPU_FEATURES=AVX512_SKX (meson test sets it)")


def skimage_lab(image):
    """scikit-image's slic image after the rescale and Lab (RGB last), in
    the float type it computes in: float32 for float32 input, else float64."""
    from skimage import img_as_float
    from skimage.color import rgb2lab
    image = img_as_float(image)
    image = image.astype(np.float32 if image.dtype == np.float32 else np.float64, copy=True)
    image -= image.min()
    imax = image.max()
    if imax != 0:
        image /= imax
    return rgb2lab(image)


def skimage_float32_loop(prepared, n_segments, compactness, max_num_iter):
    """scikit-image's SLIC iterations (no mask, unit spacing, start label
    1) in float32 on a prepared 3D image (z, y, x, channels)."""
    from skimage.segmentation._slic import _slic_cython
    from skimage.segmentation.slic_superpixels import _get_grid_centroids
    image = np.asarray(prepared, dtype=np.float32)
    centroids, steps = _get_grid_centroids(image, n_segments)
    segments = np.ascontiguousarray(np.concatenate(
        [centroids, np.zeros((centroids.shape[0], image.shape[3]))], axis=-1), dtype=np.float32)
    image = np.ascontiguousarray(image * (1.0 / compactness), dtype=np.float32)
    return np.asarray(_slic_cython(image, None, segments, max(steps), max_num_iter,
                                   np.ones(3, np.float32), False, ignore_color=False,
                                   start_label=1))


def float32_resolves_first_assignment(prepared, n_segments, compactness):
    """True when float32 keeps one spatial step under the largest colour
    term of the first assignment (unit spacing): ulp(max Σ (I / c)² + 12)
    < 1 / (2 S²), half a step for the spatial term's own rounding. Every
    centre's colour is zero then, so a voxel's colour term is the same for
    all its centres and float32 picks the spatially nearest one, as float64
    does."""
    from skimage.segmentation.slic_superpixels import _get_grid_centroids
    image = np.asarray(prepared, dtype=np.float64)
    _, steps = _get_grid_centroids(image, n_segments)
    colour = ((image / compactness) ** 2).sum(axis=-1).max()
    # 12 bounds the spatial term: three axes of 2 steps, over S².
    return float(np.spacing(np.float32(colour + 12.0))) < 0.5 / float(max(steps)) ** 2
