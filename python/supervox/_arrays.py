"""Array bookkeeping: NumPy arrays and arrays in device memory
(__cuda_array_interface__, or a CUDA DLPack capsule) described to the C API
as pointer, dtype, shape and byte strides, without copies."""

import ctypes

import numpy as np

from . import _dlpack, _lib


def is_device_array(obj):
    """In GPU memory: a __cuda_array_interface__, or a DLPack producer
    that says its tensor is on a CUDA device."""
    if isinstance(obj, np.ndarray):
        return False
    if hasattr(obj, "__cuda_array_interface__"):
        return True
    return _dlpack.is_producer(obj) and _dlpack.device_of(obj)[0] in _dlpack.DEVICE_TYPES


def host_array(obj):
    """A host array of obj: NumPy's view of it, through DLPack for a
    producer that offers nothing else."""
    if (not isinstance(obj, np.ndarray) and _dlpack.is_producer(obj)
            and not hasattr(obj, "__array__") and not hasattr(obj, "__array_interface__")):
        device_type, _ = _dlpack.device_of(obj)
        if device_type not in (_dlpack.CPU, _dlpack.CUDA_HOST):
            raise TypeError("a DLPack tensor on device type %d: slic takes host (CPU) and "
                            "CUDA arrays" % device_type)
        return np.from_dlpack(obj)
    return np.asarray(obj)


class View:
    """Shape, byte strides, dtype and address of an array, host or device."""

    def __init__(self, ptr, shape, strides, dtype, device, stream=None, owner=None):
        self.ptr = ptr
        self.shape = tuple(int(s) for s in shape)
        self.strides = tuple(int(s) for s in strides)
        self.dtype = dtype
        self.device = device
        self.stream = stream
        self.owner = owner  # keeps the memory alive while the view is used

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        return int(np.prod(self.shape, dtype=np.int64))

    def permuted(self, order):
        return View(self.ptr, [self.shape[a] for a in order], [self.strides[a] for a in order],
                    self.dtype, self.device, self.stream, self.owner)

    def as_c(self, shape4, strides4):
        """The SupervoxArray of this view with 4 axes z, y, x, c."""
        arr = _lib.SupervoxArray()
        arr.data = self.ptr
        arr.dtype = _lib.DTYPES[self.dtype.name]
        for a in range(4):
            arr.shape[a] = shape4[a]
            arr.strides[a] = strides4[a]
        return arr


def host_view(array):
    """A NumPy array (any strides, native byte order) as a View."""
    if not array.dtype.isnative:
        array = array.astype(array.dtype.newbyteorder("="))
    ptr = array.ctypes.data if array.size else None
    return View(ptr, array.shape, array.strides, array.dtype, device=False, owner=array)


def device_view(obj):
    """An array in GPU memory as a View: its __cuda_array_interface__, else
    the tensor of its DLPack capsule, exported for the stream the run will
    use (the capsule is kept with the view until the run is done)."""
    if not hasattr(obj, "__cuda_array_interface__"):
        stream = current_stream(obj, None)
        capsule = _dlpack.export(obj, stream)
        ptr, dtype, shape, strides, device_type, _ = _dlpack.describe(capsule)
        if device_type not in _dlpack.DEVICE_TYPES:
            raise TypeError("__dlpack__ gave a tensor on device type %d, not CUDA memory"
                            % device_type)
        return View(ptr, shape, strides, dtype, device=True, stream=stream,
                    owner=(obj, capsule))
    cai = obj.__cuda_array_interface__
    if cai.get("mask") is not None:
        raise ValueError("device arrays with a __cuda_array_interface__ mask are not supported")
    dtype = np.dtype(cai["typestr"])
    if not dtype.isnative:
        raise ValueError("device array has non-native byte order %s" % cai["typestr"])
    shape = tuple(cai["shape"])
    strides = cai.get("strides")
    if strides is None:
        strides, step = [], dtype.itemsize
        for size in reversed(shape):
            strides.insert(0, step)
            step *= max(size, 1)
    ptr = cai["data"][0] or None
    return View(ptr, shape, strides, dtype, device=True, stream=cai.get("stream"), owner=obj)


def _kind(obj):
    """Which library made a device array: "torch", "numba" or "cupy" (the
    default for other producers, whose results come back as CuPy)."""
    root = type(obj).__module__.split(".")[0]
    return root if root in ("torch", "numba") else "cupy"


def device_id(obj):
    """The CUDA device of a device array; None: the current one."""
    if _kind(obj) == "torch":
        return obj.device.index
    if _dlpack.is_producer(obj):
        return _dlpack.device_of(obj)[1]
    return getattr(getattr(obj, "device", None), "id", None)


def cupy_module(purpose):
    try:
        import cupy
    except ImportError:
        raise TypeError("%s needs CuPy, which is not installed" % purpose) from None
    return cupy


def device_empty(like, shape, dtype):
    """A C-contiguous device array on like's device, of like's kind (CuPy
    for producers other than CuPy, PyTorch and Numba)."""
    kind = _kind(like)
    if kind == "torch":
        import torch
        return torch.empty(shape, dtype=getattr(torch, np.dtype(dtype).name), device=like.device)
    if kind == "numba":
        from numba import cuda
        return cuda.device_array(shape, dtype=dtype)
    cupy = cupy_module("the labels of a %s (returned as a CuPy array)" % type(like).__name__)
    dev = device_id(like)
    if dev is None:
        return cupy.empty(shape, dtype=dtype)
    with cupy.cuda.Device(dev):
        return cupy.empty(shape, dtype=dtype)


def current_stream(like, cai_stream):
    """The stream to order the run on: the producing library's current
    stream (the one it will use for the result), else the one its
    interface names."""
    kind = _kind(like)
    if kind == "torch":
        import torch
        return torch.cuda.current_stream(like.device).cuda_stream
    if kind == "cupy":
        try:
            import cupy
        except ImportError:
            return cai_stream or 0
        dev = device_id(like)
        if dev is None:
            return cupy.cuda.get_current_stream().ptr
        with cupy.cuda.Device(dev):
            return cupy.cuda.get_current_stream().ptr
    return cai_stream or 0


def address(array):
    """Device address of an array we allocated."""
    return ctypes.c_void_p(array.__cuda_array_interface__["data"][0])
