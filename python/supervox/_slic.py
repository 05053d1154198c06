"""supervox.slic: scikit-image's slic (0.26 signature, validation, dtype)
over libsupervox. Validation and array bookkeeping happen here; the
computation runs in the C library with the GIL released."""

import ctypes
import os
import queue
import threading
import warnings
from collections.abc import Iterable

import numpy as np

from . import _arrays, _lib

_BACKENDS = {"auto": _lib.BACKEND_AUTO, "cpu": _lib.BACKEND_CPU, "cuda": _lib.BACKEND_CUDA}
_num_threads = None


class SupervoxError(RuntimeError):
    """A failure of the library that is not the caller's input (no CUDA
    device, a CUDA error)."""


def set_num_threads(n):
    """Worker threads of the CPU backend; 0 or None: all cores (or
    $SUPERVOX_NUM_THREADS when set)."""
    global _num_threads
    if n is not None and int(n) < 0:
        raise ValueError("number of threads must be >= 0, got %r" % (n,))
    _num_threads = None if n is None else int(n)


def get_num_threads():
    if _num_threads is not None:
        return _num_threads
    env = os.environ.get("SUPERVOX_NUM_THREADS", "")
    return int(env) if env.strip().isdigit() else 0


def _raise_for(status, message):
    if status == _lib.ERROR_NON_FINITE:
        # scikit-image's words first, the library's details after them.
        what = "NaN" if "NaN" in message else "infinite"
        raise ValueError("unmasked %s values in image are not supported (%s)" % (what, message))
    if status in (_lib.ERROR_INVALID_PARAM, _lib.ERROR_INVALID_DATA):
        raise ValueError(message)
    if status == _lib.ERROR_INVALID_ARGUMENT:
        raise TypeError(message)
    if status == _lib.ERROR_NO_MEMORY:
        raise MemoryError(message)
    if status == _lib.ERROR_IO:
        raise OSError(message)
    raise SupervoxError(message)


class _Job:
    """One C call handed to the runner thread, and how it ended. `guard`
    settles who has it: the runner marks it taken before running it, and a
    caller interrupted before that drops it, so that it never runs."""

    __slots__ = ("run", "guard", "taken", "dropped", "done", "result", "error")

    def __init__(self, run):
        self.run = run
        self.guard = threading.Lock()
        self.taken = self.dropped = False
        self.done = threading.Event()
        self.result = self.error = None


def _serve(jobs):
    while True:
        job = jobs.get()
        with job.guard:
            if job.dropped:
                continue
            job.taken = True
        try:
            job.result = job.run()
        except BaseException as exc:  # handed to the caller's thread
            job.error = exc
        job.done.set()


_runner_lock = threading.Lock()
_runner_jobs = None


def _forget_runner():
    # A forked child has no runner thread: it starts its own.
    global _runner_jobs
    _runner_jobs = None


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_runner)


def _submit(job):
    """Queues `job` for the long-lived runner thread (made on first use)."""
    global _runner_jobs
    with _runner_lock:
        if _runner_jobs is None:
            jobs = queue.SimpleQueue()
            threading.Thread(target=_serve, args=(jobs,), name="supervox-slic",
                             daemon=True).start()
            _runner_jobs = jobs
        _runner_jobs.put(job)


def _run_interruptibly(run, cancel):
    """`run` on the runner thread while this (main) thread waits in a lock
    that a signal interrupts. On Ctrl-C, wherever it lands: a job not yet
    taken never runs, a running one sees the cancel flag at its next
    iteration boundary and is waited for; then KeyboardInterrupt goes on."""
    job = _Job(run)
    try:
        _submit(job)
        # A timed wait: a signal that lands just before the thread blocks
        # in the lock would otherwise only be seen when the run is over.
        while not job.done.wait(0.05):
            pass
    except KeyboardInterrupt as exc:
        cancel.value = 1
        with job.guard:
            running = job.taken
            job.dropped = True
        while running:
            try:
                job.done.wait()
                running = False
            except KeyboardInterrupt:
                pass
        raise exc
    if job.error is not None:
        raise job.error
    return job.result


def _call(function, args, info_type=None):
    """Calls a C entry with the GIL released (ctypes releases it). From the
    main thread, the only one Python interrupts, it runs on the runner
    thread so that Ctrl-C can cancel it (nothing is leaked); other threads
    call directly."""
    cancel = ctypes.c_int32(0)
    control = _lib.SupervoxControl()
    control.cancel = ctypes.pointer(cancel)
    info = (info_type or _lib.SupervoxRunInfo)()

    def run():
        status = function(*args, ctypes.byref(control), ctypes.byref(info))
        # The message is per thread: read it on the thread that failed.
        return status, (_lib.last_error() if status != _lib.OK else "")

    if threading.current_thread() is threading.main_thread():
        status, message = _run_interruptibly(run, cancel)
    else:
        status, message = run()
    if status != _lib.OK:
        _raise_for(status, message)
    return info


def _channel_last(view, channel_axis):
    """The view with its channel axis last, as np.moveaxis would (and with
    numpy's errors for an axis out of range)."""
    if not np.isscalar(channel_axis):
        if len(channel_axis) > 1:
            raise ValueError("only a single channel axis is currently supported")
        channel_axis = channel_axis[0]
    probe = np.broadcast_to(np.zeros((), np.uint8), view.shape)
    np.moveaxis(probe, channel_axis, -1)
    axis = int(channel_axis) % view.ndim
    order = [a for a in range(view.ndim) if a != axis] + [axis]
    return view.permuted(order)


def _spacing3(spacing, is_2d, dtype):
    if spacing is None:
        return [1.0, 1.0, 1.0]
    if not isinstance(spacing, Iterable):
        raise TypeError("spacing must be None or iterable.")
    values = np.asarray(spacing, dtype=dtype).ravel()
    if is_2d:
        if values.size == 2:
            return [1.0] + [float(v) for v in values]
        if values.size == 3:
            warnings.warn("Input image is 2D: spacing number of elements must be 2. In the "
                          "future, a ValueError will be raised.", FutureWarning, stacklevel=3)
            return [float(v) for v in values]
        raise ValueError(f"Input image is 2D, but spacing has {values.size} elements "
                         "(expected 2).")
    if values.size != 3:
        raise ValueError(f"Input image is 3D, but spacing has {values.size} elements "
                         "(expected 3).")
    return [float(v) for v in values]


def _sigma3(sigma, is_2d, dtype):
    """(sigma z, y, x, per_axis): a scalar is divided by the spacing in the
    library, as scikit-image does; a list is taken per axis."""
    if np.isscalar(sigma) or (isinstance(sigma, np.ndarray) and sigma.ndim == 0):
        return [float(sigma)] * 3, False
    if not isinstance(sigma, Iterable):
        raise TypeError("sigma must be a number or an iterable of numbers.")
    values = np.asarray(sigma, dtype=dtype).ravel()
    if is_2d:
        if values.size == 2:
            return [0.0] + [float(v) for v in values], True
        # scikit-image checks spacing's size here, which is 3 for a 2D
        # image by then: it warns and goes on.
        warnings.warn("Input image is 2D: sigma number of elements must be 2. In the future, "
                      "a ValueError will be raised.", FutureWarning, stacklevel=3)
        if values.size != 3:
            raise ValueError(f"Input image is 2D, but sigma has {values.size} elements "
                             "(expected 2).")
        return [float(v) for v in values], True
    if values.size != 3:
        raise ValueError(f"Input image is 3D, but sigma has {values.size} elements "
                         "(expected 3).")
    return [float(v) for v in values], True


def _mask_view(mask, image_on_device, zyx):
    if _arrays.is_device_array(mask):
        if not image_on_device:
            raise TypeError("mask is in device memory but image is in host memory; "
                            "pass both on the same side")
        view = _arrays.device_view(mask)
        if view.dtype.name not in ("bool", "uint8", "int8"):
            # Any other dtype is compared with zero on the device first.
            if not hasattr(mask, "__cuda_array_interface__"):
                mask = _arrays.cupy_module("a DLPack mask of dtype %s" % view.dtype) \
                    .from_dlpack(mask)
            mask = mask != 0
            view = _arrays.device_view(mask)
    else:
        if image_on_device:
            raise TypeError("image is in device memory but mask is in host memory; "
                            "pass both on the same side")
        mask = np.ascontiguousarray(_arrays.host_array(mask), dtype=bool)
        view = _arrays.host_view(mask)
    shape = view.shape
    strides = view.strides
    if len(shape) == 2:
        shape, strides = (1,) + shape, (0,) + strides
    if tuple(shape) != tuple(zyx):
        raise ValueError("image and mask should have the same shape.")
    return view, list(shape) + [1], list(strides) + [0]


def _connectivity_rule(rule):
    if rule not in _lib.CONNECTIVITY_RULES:
        raise ValueError("connectivity_rule must be 'connected' or 'legacy', got %r" % (rule,))
    return _lib.CONNECTIVITY_RULES[rule]


def _params(n_segments, compactness, max_num_iter, sigma3, per_axis, spacing3,
            enforce_connectivity, min_size_factor, max_size_factor, slic_zero, start_label,
            connectivity_rule):
    """The C API's parameters (convert2lab left at AUTO)."""
    params = _lib.SupervoxParams()
    _lib.lib.supervox_params_init(ctypes.byref(params))
    params.n_segments = int(n_segments)
    params.compactness = float(compactness)
    params.max_num_iter = int(max_num_iter)
    params.sigma_per_axis = int(per_axis)
    for a in range(3):
        params.sigma[a] = sigma3[a]
        params.spacing[a] = spacing3[a]
    params.enforce_connectivity = int(bool(enforce_connectivity))
    params.min_size_factor = float(min_size_factor)
    params.max_size_factor = float(max_size_factor)
    params.slic_zero = int(bool(slic_zero))
    params.start_label = int(start_label)
    params.n_threads = get_num_threads()
    params.connectivity_rule = _connectivity_rule(connectivity_rule)
    return params


def slic(image, n_segments=100, compactness=10.0, max_num_iter=10, sigma=0, spacing=None,
         convert2lab=None, enforce_connectivity=True, min_size_factor=0.5, max_size_factor=3,
         slic_zero=False, start_label=1, mask=None, *, channel_axis=-1, backend="auto",
         connectivity_rule="connected"):
    """Segments image using k-means clustering in Color-(x,y,z) space.

    scikit-image's ``skimage.segmentation.slic`` (same parameters, defaults,
    errors and label dtype ``np.intp``), computed by libsupervox. A NumPy
    array gives a NumPy array; an array in GPU memory (CuPy, or any object
    with ``__cuda_array_interface__``) runs on the CUDA backend from its
    device buffer and gives an array of the same kind on the same device.

    backend : {"auto", "cpu", "cuda"}
        "cpu" never touches a GPU; "cuda" fails without one; "auto" runs host
        arrays on the GPU when there is one (the labels are the same).
    connectivity_rule : {"connected", "legacy"}
        With ``enforce_connectivity``, what becomes of a piece below the
        minimum size that touches no relabelled voxel (as with a mask):
        "connected" gives it a label of its own, so every label is one
        connected piece (scikit-image PR #8334); "legacy" reproduces
        scikit-image <= 0.26 bit for bit, where that piece and the next one,
        wherever it lies, share a label (scikit-image issue #8295).
    """
    return _slic_run(image, n_segments, compactness, max_num_iter, sigma, spacing,
                     convert2lab, enforce_connectivity, min_size_factor, max_size_factor,
                     slic_zero, start_label, mask, channel_axis, backend, connectivity_rule)[0]


def _slic_run(image, n_segments, compactness, max_num_iter, sigma, spacing, convert2lab,
              enforce_connectivity, min_size_factor, max_size_factor, slic_zero, start_label,
              mask, channel_axis, backend, connectivity_rule):
    """slic's work: (labels, the C API's SupervoxRunInfo)."""
    if backend not in _BACKENDS:
        raise ValueError("backend must be 'auto', 'cpu' or 'cuda', got %r" % (backend,))
    on_device = _arrays.is_device_array(image)
    if on_device:
        if backend == "cpu":
            raise ValueError("backend='cpu' was asked for an array in device memory; "
                             "copy it to the host first or use backend='auto'")
        view = _arrays.device_view(image)
    else:
        image = _arrays.host_array(image)
        view = _arrays.host_view(image)
    ndim = view.ndim

    if ndim == 2 and channel_axis is not None:
        raise ValueError(
            f"channel_axis={channel_axis} indicates multichannel, which is not "
            "supported for a two-dimensional image; use channel_axis=None if "
            "the image is grayscale")
    if view.dtype.name not in _lib.DTYPES:
        raise ValueError(f"Cannot convert from {view.dtype} to float64.")
    if view.size == 0:
        raise ValueError("zero-size array to reduction operation minimum which has no identity")

    multichannel = channel_axis is not None
    if multichannel:
        view = _channel_last(view, channel_axis)
        spatial, n_channels = view.shape[:-1], view.shape[-1]
        spatial_strides, channel_stride = view.strides[:-1], view.strides[-1]
    else:
        spatial, n_channels = view.shape, 1
        spatial_strides, channel_stride = view.strides, 0
    if len(spatial) not in (2, 3):
        raise ValueError(
            f"image has {ndim} dimensions; slic takes a 2D or 3D image, plus a channel "
            f"axis when channel_axis is not None (got channel_axis={channel_axis})")
    is_2d = len(spatial) == 2
    zyx = ((1,) + tuple(spatial)) if is_2d else tuple(spatial)
    zyx_strides = ((0,) + tuple(spatial_strides)) if is_2d else tuple(spatial_strides)

    lab = _lib.CONVERT2LAB_NO
    if multichannel and (convert2lab or convert2lab is None):
        if n_channels != 3 and convert2lab:
            raise ValueError("Lab colorspace conversion requires a RGB image.")
        if n_channels == 3:
            lab = _lib.CONVERT2LAB_YES
    if start_label not in [0, 1]:
        raise ValueError("start_label should be 0 or 1.")

    mask_view = mask_c = None
    if mask is not None:
        mask_view, mask_shape, mask_strides = _mask_view(mask, on_device, zyx)
        mask_c = mask_view.as_c(mask_shape, mask_strides)

    # scikit-image works in float32 for float32/float16 input, else float64.
    float_dtype = np.float32 if view.dtype.name in ("float16", "float32") else np.float64
    spacing3 = _spacing3(spacing, is_2d, float_dtype)
    sigma3, per_axis = _sigma3(sigma, is_2d, float_dtype)

    params = _params(n_segments, compactness, max_num_iter, sigma3, per_axis, spacing3,
                     enforce_connectivity, min_size_factor, max_size_factor, slic_zero,
                     start_label, connectivity_rule)
    params.convert2lab = lab

    image_c = view.as_c(list(zyx) + [n_channels], list(zyx_strides) + [channel_stride])
    mask_p = ctypes.byref(mask_c) if mask_c is not None else None
    out_shape = zyx[1:] if is_2d else zyx
    if on_device:
        labels = _arrays.device_empty(image, zyx, np.int64)
        stream = _arrays.current_stream(image, view.stream)
        info = _call(_lib.lib.supervox_slic_device,
                     (ctypes.byref(image_c), mask_p, ctypes.byref(params),
                      _arrays.address(labels), _lib.DTYPES["int64"], ctypes.c_void_p(stream)))
        return labels.reshape(out_shape), info
    labels = np.empty(zyx, dtype=np.intp)
    info = _call(_lib.lib.supervox_slic,
                 (ctypes.byref(image_c), mask_p, ctypes.byref(params), _BACKENDS[backend],
                  labels.ctypes.data_as(ctypes.c_void_p), _lib.DTYPES[np.dtype(np.intp).name]))
    return labels.reshape(out_shape), info


def _path(value, what):
    if not isinstance(value, (str, bytes, os.PathLike)):
        raise TypeError("%s must be a path, got %r" % (what, value))
    return os.fsencode(value)


def slic_file(input, output, n_segments=100, compactness=10.0, max_num_iter=10, sigma=0,
              spacing=None, enforce_connectivity=True, min_size_factor=0.5, max_size_factor=3,
              slic_zero=False, start_label=1, mask=None, *, backend="auto", memory_limit=0,
              connectivity_rule="connected"):
    """SLIC from a TIFF file into a label TIFF, as ``supervox-cli slic``.

    The volume (a TIFF of pages: uint8, uint16, uint32 or float) is held in
    memory when its run fits in ``memory_limit`` bytes (0: what the machine
    has free) and, with a GPU, in the GPU's free memory; otherwise it
    streams slab by slab, never held whole, so volumes larger than memory
    work. The label file (uint32, or int32 when a label is -1) holds the
    same bytes either way, and the labels are ``slic`` 's on the same
    volume with ``channel_axis=None``.

    mask : path of a TIFF of the volume's shape (nonzero = in), or None.
    sigma, spacing : a number or (z, y, x); ``spacing`` weighs the distances
        only: the label file carries the input's calibration (its ImageJ or
        OME spacing and unit) when it has one, else this spacing with no
        unit, as ``supervox-cli slic`` writes it.
    backend : {"auto", "cpu", "cuda"} as for ``slic``.
    connectivity_rule : {"connected", "legacy"} as for ``slic``.

    Returns a dict: ``n_labels``, ``n_clusters``, ``iterations``,
    ``backend`` ("cpu" or "cuda") and ``streamed`` (bool). A failed or
    interrupted run leaves no output file; an unreadable input raises
    OSError.
    """
    if backend not in _BACKENDS:
        raise ValueError("backend must be 'auto', 'cpu' or 'cuda', got %r" % (backend,))
    if start_label not in [0, 1]:
        raise ValueError("start_label should be 0 or 1.")
    if int(memory_limit) < 0:
        raise ValueError("memory_limit must be >= 0 bytes, got %r" % (memory_limit,))
    sigma3, per_axis = _sigma3(sigma, False, np.float64)
    spacing3 = _spacing3(spacing, False, np.float64)

    params = _params(n_segments, compactness, max_num_iter, sigma3, per_axis, spacing3,
                     enforce_connectivity, min_size_factor, max_size_factor, slic_zero,
                     start_label, connectivity_rule)

    info = _call(_lib.lib.supervox_slic_file,
                 (_path(input, "input"), _path(output, "output"),
                  _path(mask, "mask") if mask is not None else None, ctypes.byref(params),
                  _BACKENDS[backend], ctypes.c_uint64(int(memory_limit))),
                 _lib.SupervoxFileInfo)
    return {"n_labels": int(info.n_labels), "n_clusters": int(info.n_clusters),
            "iterations": int(info.iterations),
            "backend": "cuda" if info.backend == _lib.BACKEND_CUDA else "cpu",
            "streamed": bool(info.streamed)}
