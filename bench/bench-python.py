#!/usr/bin/python3
"""Not a test: supervox.slic from Python against skimage.segmentation.slic on
the same arrays in the same run, and the Python layer's overhead over the C
call. With CuPy and a GPU, the CuPy path too (device array in, device
labels out, synchronised before the clock stops).

Usage (build tree):
  SUPERVOX_LIBRARY=build/lib/libsupervox.so.0 PYTHONPATH=python \\
    python3 bench/bench-python.py [--shape 128,128,128] [--repeat 3] [--no-skimage]
"""

import argparse
import ctypes
import time

import numpy as np
from scipy import ndimage as ndi

import supervox
from supervox import _lib


def volume(shape, seed=0):
    rng = np.random.default_rng(seed)
    vol = ndi.gaussian_filter(rng.random(shape), 2.0) + 0.05 * rng.random(shape)
    return vol.astype(np.float32)


def times_of(repeat, run):
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    return sorted(times)


def best_of(repeat, run):
    return times_of(repeat, run)[0]


def c_call_only(image, kwargs):
    """The bare C call on an already described contiguous float32 volume."""
    arr = _lib.SupervoxArray()
    arr.data = image.ctypes.data
    arr.dtype = _lib.DTYPES["float32"]
    for a in range(3):
        arr.shape[a] = image.shape[a]
        arr.strides[a] = image.strides[a]
    arr.shape[3], arr.strides[3] = 1, 0
    params = _lib.SupervoxParams()
    _lib.lib.supervox_params_init(ctypes.byref(params))
    params.n_segments = kwargs["n_segments"]
    params.compactness = kwargs["compactness"]
    labels = np.empty(image.shape, np.int64)
    status = _lib.lib.supervox_slic(ctypes.byref(arr), None, ctypes.byref(params),
                                    _lib.BACKEND_CPU, labels.ctypes.data, _lib.DTYPES["int64"],
                                    None, None)
    assert status == 0, _lib.last_error()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--shape", default="64,128,128")
    parser.add_argument("--n-segments", type=int, default=2000)
    parser.add_argument("--compactness", type=float, default=0.1)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-skimage", action="store_true")
    args = parser.parse_args()
    shape = tuple(int(s) for s in args.shape.split(","))
    image = volume(shape)
    kwargs = dict(n_segments=args.n_segments, compactness=args.compactness)

    rows = []
    t_py = best_of(args.repeat, lambda: supervox.slic(image, channel_axis=None, backend="cpu",
                                                      **kwargs))
    t_c = best_of(args.repeat, lambda: c_call_only(image, kwargs))
    rows.append(("supervox.slic, NumPy, cpu", t_py))
    rows.append(("supervox_slic C call, cpu", t_c))
    if supervox.cuda_available():
        rows.append(("supervox.slic, NumPy, cuda",
                     best_of(args.repeat, lambda: supervox.slic(image, channel_axis=None,
                                                                backend="cuda", **kwargs))))
        try:
            import cupy as cp
        except ImportError:
            cp = None
        if cp is not None:
            d_image = cp.asarray(image)

            def run_cupy():
                supervox.slic(d_image, channel_axis=None, **kwargs)
                cp.cuda.get_current_stream().synchronize()
            run_cupy()
            rows.append(("supervox.slic, CuPy", best_of(args.repeat, run_cupy)))
    if not args.no_skimage:
        from skimage.segmentation import slic
        rows.append(("skimage.segmentation.slic",
                     best_of(args.repeat, lambda: slic(image, channel_axis=None, **kwargs))))

    print("shape %s, n_segments %d, compactness %g, best of %d"
          % ("x".join(map(str, shape)), args.n_segments, args.compactness, args.repeat))
    print("| run | seconds |")
    print("|---|---|")
    for name, seconds in rows:
        print("| %s | %.4f |" % (name, seconds))
    # The layer's own cost, where the run itself is short enough not to hide
    # it: a tiny volume, median of many calls.
    tiny = volume((8, 8, 8), seed=1)
    tiny_kwargs = dict(n_segments=8, compactness=0.1)

    def median_of(n, run):
        return times_of(n, run)[n // 2]

    m_py = median_of(200, lambda: supervox.slic(tiny, channel_axis=None, backend="cpu",
                                                 **tiny_kwargs))
    m_c = median_of(200, lambda: c_call_only(tiny, tiny_kwargs))
    print("Python layer over the C call (8x8x8, median of 200): %.3f ms (%.3f ms vs %.3f ms)"
          % (1000 * (m_py - m_c), 1000 * m_py, 1000 * m_c))


if __name__ == "__main__":
    main()
