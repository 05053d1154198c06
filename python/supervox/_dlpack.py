"""DLPack producers without __cuda_array_interface__: the tensor a
__dlpack__ capsule describes (data pointer, dtype, shape, strides, byte
offset), read with ctypes and borrowed, not taken: the capsule keeps its
name, so its own destructor hands the tensor back to the producer once the
capsule is collected (after the run, which holds a reference to it)."""

import ctypes

import numpy as np

# DLDeviceType values (dlpack.h).
CPU = 1
CUDA = 2
CUDA_HOST = 3
CUDA_MANAGED = 13
DEVICE_TYPES = {CUDA, CUDA_MANAGED}

# DLDataTypeCode values and the NumPy kind each one is.
_KINDS = {0: "i", 1: "u", 2: "f", 6: "b"}


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p), ("flags", ctypes.c_uint64),
                ("dl_tensor", DLTensor)]


_capsule_name = ctypes.pythonapi.PyCapsule_GetName
_capsule_name.restype = ctypes.c_char_p
_capsule_name.argtypes = [ctypes.py_object]
_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]


def is_producer(obj):
    return hasattr(obj, "__dlpack__") and hasattr(obj, "__dlpack_device__")


def device_of(obj):
    """(device type, device id) as the producer reports them."""
    device_type, device_id = obj.__dlpack_device__()
    return int(device_type), int(device_id)


def _dtype(code, bits, lanes):
    if lanes != 1 or code not in _KINDS:
        raise ValueError("DLPack dtype (code %d, %d bits, %d lanes) is not supported: "
                         "slic takes bool, integers and floats" % (code, bits, lanes))
    if code == 6:
        if bits != 8:
            raise ValueError("DLPack bool of %d bits is not supported" % bits)
        return np.dtype(bool)
    return np.dtype("%s%d" % (_KINDS[code], bits // 8))


def export(obj, stream):
    """The capsule of obj.__dlpack__ for work on `stream` (a cudaStream_t
    as an int; 0, the legacy default stream, is spelled 1 in DLPack). The
    producer orders its pending work before that stream's."""
    try:
        return obj.__dlpack__(stream=stream if stream else 1)
    except TypeError:
        # Producers older than the stream argument.
        return obj.__dlpack__()


def describe(capsule):
    """(data address, dtype, shape, byte strides, device type, device id) of
    the tensor in a "dltensor" or "dltensor_versioned" capsule."""
    name = _capsule_name(capsule)
    if name == b"dltensor":
        managed = DLManagedTensor.from_address(_capsule_pointer(capsule, name))
    elif name == b"dltensor_versioned":
        managed = DLManagedTensorVersioned.from_address(_capsule_pointer(capsule, name))
        if managed.version.major != 1:
            raise ValueError("DLPack version %d.%d is not supported"
                             % (managed.version.major, managed.version.minor))
    else:
        raise ValueError("__dlpack__ returned a capsule named %r, not an unused DLPack tensor"
                         % (name,))
    t = managed.dl_tensor
    dtype = _dtype(t.dtype.code, t.dtype.bits, t.dtype.lanes)
    shape = tuple(t.shape[a] for a in range(t.ndim))
    if t.strides:
        strides = tuple(t.strides[a] * dtype.itemsize for a in range(t.ndim))
    else:
        # No strides: compact and row-major.
        strides, step = [], dtype.itemsize
        for size in reversed(shape):
            strides.insert(0, step)
            step *= max(size, 1)
        strides = tuple(strides)
    data = (t.data or 0) + t.byte_offset
    return data or None, dtype, shape, strides, t.device.device_type, t.device.device_id
