#!/usr/bin/python3
"""Not a test: supervox.slic from Python against the bare C calls and
skimage.segmentation.slic on the same arrays in the same run, and the Python
layer's own cost.

The volume and parameters are bench-cuda's (its make_volume: sines and
hashed noise; n_segments = voxels / 1000, compactness 0.1, 10 iterations,
connectivity on), so that `--shape 256,256,256` times what
`bench-cuda --sizes 256` times. Each row is the median of --repeat runs
after a warm-up run:
  - "supervox.slic, NumPy, cpu|cuda": host array in, host labels out.
  - "supervox_slic C call, cpu": the same through ctypes, no Python layer.
  - "supervox.slic, CuPy": device array in, CuPy labels out, the stream
    synchronised before the clock stops (the device gather, the run, the
    int64 labels written on the device).
  - "supervox_slic_device C call": the same device call without the layer.
  - "…, a new backend per call": the CuPy row with the library's kept
    backend released before each call (stream and device buffers made and
    freed per call).
  - "skimage.segmentation.slic": once only when a run takes over 20 s.
bench-cuda's "run" column is sv_backend_run alone on a resident volume;
its "e2e" adds the host upload and the labels' download.

Usage (build tree):
  SUPERVOX_LIBRARY=build/lib/libsupervox.so.0 PYTHONPATH=python \\
    python3 bench/bench-python.py [--shape 128,128,128] [--repeat 5] [--no-skimage]
"""

import argparse
import ctypes
import math
import time

import numpy as np

import supervox
from supervox import _lib


def volume(shape):
    """bench-cuda's make_volume, in float32 with its operation order; for a
    cube of side n it is that volume bit for bit."""
    nz, ny, nx = shape

    def table(n, step):
        # float32 sin(i · 0.11) at i = (a · step) mod n, as the C code indexes it.
        return np.array([math.sin(((a * step) % n) * 0.11) for a in range(n)], np.float32)

    sz, sy, sx = table(nz, 1)[:, None, None], table(ny, 7)[None, :, None], \
        table(nx, 3)[None, None, :]
    z = np.arange(nz, dtype=np.uint32)[:, None, None]
    y = np.arange(ny, dtype=np.uint32)[None, :, None]
    x = np.arange(nx, dtype=np.uint32)[None, None, :]
    cell = (z // 37 + y // 41) % 3
    idx = (np.arange(nz * ny * nx, dtype=np.uint64) & 0xFFFFFFFF).astype(np.uint32)
    h = idx * np.uint32(2654435761)
    h ^= h >> np.uint32(15)
    noise = (h & np.uint32(1023)).astype(np.float32).reshape(shape)
    szy = sz * sy
    v = np.float32(0.5) + np.float32(0.3) * szy * sx
    v = v + np.float32(0.15) * ((cell + x // 43) % 3).astype(np.float32)
    v = v + np.float32(0.05) * noise / np.float32(1024.0)
    return np.ascontiguousarray(v, dtype=np.float32)


def median_of(repeat, run, warm_up=True):
    if warm_up:
        run()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    return float(np.median(times))


def c_params(kwargs, n_threads=0):
    params = _lib.SupervoxParams()
    _lib.lib.supervox_params_init(ctypes.byref(params))
    params.n_segments = kwargs["n_segments"]
    params.compactness = kwargs["compactness"]
    params.n_threads = n_threads
    return params


def c_array(ptr, shape, strides):
    """A float32 z, y, x volume as the C API's array."""
    arr = _lib.SupervoxArray()
    arr.data = ptr
    arr.dtype = _lib.DTYPES["float32"]
    for a in range(3):
        arr.shape[a] = shape[a]
        arr.strides[a] = strides[a]
    arr.shape[3], arr.strides[3] = 1, 0
    return arr


def c_call(image, params):
    """The bare host C call on an already described contiguous volume."""
    arr = c_array(image.ctypes.data, image.shape, image.strides)
    labels = np.empty(image.shape, np.int64)
    status = _lib.lib.supervox_slic(ctypes.byref(arr), None, ctypes.byref(params),
                                    _lib.BACKEND_CPU, labels.ctypes.data, _lib.DTYPES["int64"],
                                    None, None)
    assert status == 0, _lib.last_error()


def c_device_call(cp, d_image, d_labels, params):
    """The bare device C call on CuPy's buffers, on CuPy's current stream."""
    stream = cp.cuda.get_current_stream()
    arr = c_array(d_image.data.ptr, d_image.shape, d_image.strides)
    status = _lib.lib.supervox_slic_device(ctypes.byref(arr), None, ctypes.byref(params),
                                           ctypes.c_void_p(d_labels.data.ptr),
                                           _lib.DTYPES["int64"], ctypes.c_void_p(stream.ptr),
                                           None, None)
    assert status == 0, _lib.last_error()
    stream.synchronize()


def layer_overhead(cp):
    """The layer's own cost where the run is too short to hide it: an 8³
    volume, one CPU thread, Python and C calls alternating so that the
    machine's load weighs on both alike; medians of 200."""
    tiny = volume((8, 8, 8))
    kwargs = dict(n_segments=8, compactness=0.1)
    params = c_params(kwargs, n_threads=1)
    supervox.set_num_threads(1)
    rows = []
    try:
        pairs = [("host, cpu",
                  lambda: supervox.slic(tiny, channel_axis=None, backend="cpu", **kwargs),
                  lambda: c_call(tiny, params))]
        if cp is not None:
            d_tiny = cp.asarray(tiny)
            d_labels = cp.empty(tiny.shape, cp.int64)

            def py_device():
                supervox.slic(d_tiny, channel_axis=None, **kwargs)
                cp.cuda.get_current_stream().synchronize()
            pairs.append(("CuPy, cuda", py_device,
                          lambda: c_device_call(cp, d_tiny, d_labels, params)))
        for name, py, c in pairs:
            py()
            c()
            t_py, t_c = [], []
            for _ in range(200):
                t0 = time.perf_counter()
                py()
                t1 = time.perf_counter()
                c()
                t2 = time.perf_counter()
                t_py.append(t1 - t0)
                t_c.append(t2 - t1)
            rows.append((name, float(np.median(t_py)), float(np.median(t_c))))
    finally:
        supervox.set_num_threads(None)
    return rows


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--shape", default="64,128,128")
    parser.add_argument("--n-segments", type=int, default=0,
                        help="default: voxels / 1000, as bench-cuda")
    parser.add_argument("--compactness", type=float, default=0.1)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-skimage", action="store_true")
    args = parser.parse_args()
    shape = tuple(int(s) for s in args.shape.split(","))
    image = volume(shape)
    n_segments = args.n_segments or max(1, image.size // 1000)
    kwargs = dict(n_segments=n_segments, compactness=args.compactness)
    params = c_params(kwargs)

    rows = []
    rows.append(("supervox.slic, NumPy, cpu",
                 median_of(args.repeat, lambda: supervox.slic(image, channel_axis=None,
                                                               backend="cpu", **kwargs))))
    rows.append(("supervox_slic C call, cpu", median_of(args.repeat,
                                                        lambda: c_call(image, params))))
    cp = None
    n_labels = None
    if supervox.cuda_available():
        rows.append(("supervox.slic, NumPy, cuda",
                     median_of(args.repeat, lambda: supervox.slic(image, channel_axis=None,
                                                                  backend="cuda", **kwargs))))
        try:
            import cupy as cp
        except ImportError:
            cp = None
        if cp is not None:
            d_image = cp.asarray(image)
            d_labels = cp.empty(image.shape, cp.int64)

            def run_cupy():
                supervox.slic(d_image, channel_axis=None, **kwargs)
                cp.cuda.get_current_stream().synchronize()
            rows.append(("supervox.slic, CuPy", median_of(args.repeat, run_cupy)))

            def run_cupy_fresh():
                # Without the kept backend: a new one (stream, device
                # buffers) per call, as the library did before keeping one.
                supervox.cuda_release_cache()
                run_cupy()
            rows.append(("supervox.slic, CuPy, a new backend per call",
                         median_of(args.repeat, run_cupy_fresh)))
            rows.append(("supervox_slic_device C call",
                         median_of(args.repeat,
                                   lambda: c_device_call(cp, d_image, d_labels, params))))
            labels = supervox.slic(d_image, channel_axis=None, **kwargs)
            n_labels = int(cp.unique(labels).size)
    if not args.no_skimage:
        from skimage.segmentation import slic
        t0 = time.perf_counter()
        slic(image, channel_axis=None, **kwargs)
        once = time.perf_counter() - t0
        rows.append(("skimage.segmentation.slic",
                     once if once > 20 else median_of(args.repeat, lambda: slic(
                         image, channel_axis=None, **kwargs), warm_up=False)))

    print("shape %s, n_segments %d, compactness %g, median of %d after a warm-up%s"
          % ("x".join(map(str, shape)), n_segments, args.compactness, args.repeat,
             "" if n_labels is None else ", CuPy labels %d" % n_labels))
    print("| run | ms |")
    print("|---|---:|")
    for name, seconds in rows:
        print("| %s | %.1f |" % (name, 1000 * seconds))
    for name, t_py, t_c in layer_overhead(cp):
        print("Python layer over the C call, %s (8x8x8, 1 thread, median of 200): %.3f ms "
              "(%.3f ms vs %.3f ms)" % (name, 1000 * (t_py - t_c), 1000 * t_py, 1000 * t_c))


if __name__ == "__main__":
    main()
