"""The Python side of the device path without a GPU: an object with
__cuda_array_interface__ (host memory standing in for device memory) is
described to supervox_slic_device as pointer, shape, byte strides and
stream, and the labels come back as an array of the input's kind."""

import ctypes

import numpy as np
import pytest

import supervox
from supervox import _arrays, _lib


class FakeDeviceArray:
    """Host memory behind a __cuda_array_interface__, as a stand-in."""

    def __init__(self, array, stream=None):
        self.array = array
        self.stream = stream

    @property
    def __cuda_array_interface__(self):
        return {"shape": self.array.shape, "typestr": self.array.dtype.str,
                "data": (self.array.ctypes.data, False), "strides": self.array.strides,
                "version": 3, "stream": self.stream}

    @property
    def ndim(self):
        return self.array.ndim

    def reshape(self, shape):
        return FakeDeviceArray(self.array.reshape(shape))


@pytest.fixture
def fake_device(monkeypatch):
    calls = []

    def device_empty(like, shape, dtype):
        return FakeDeviceArray(np.zeros(shape, dtype))

    def slic_device(image, mask, params, labels, label_dtype, stream, control, info):
        image = image._obj
        mask = mask._obj if mask is not None else None
        params = params._obj
        calls.append(dict(
            shape=tuple(image.shape), strides=tuple(image.strides), dtype=image.dtype,
            data=image.data, mask_shape=tuple(mask.shape) if mask is not None else None,
            mask_strides=tuple(mask.strides) if mask is not None else None,
            stream=stream.value, label_dtype=label_dtype, n_segments=params.n_segments,
            convert2lab=params.convert2lab))
        n = image.shape[0] * image.shape[1] * image.shape[2]
        out = (ctypes.c_int64 * n).from_address(labels.value)
        for i in range(n):
            out[i] = i + 1
        return _lib.OK

    monkeypatch.setattr(_arrays, "device_empty", device_empty)
    monkeypatch.setattr(_arrays, "current_stream", lambda like, cai_stream: cai_stream or 0)
    monkeypatch.setattr(_lib.lib, "supervox_slic_device", slic_device)
    return calls


def test_grey_3d_descriptor(fake_device):
    host = np.zeros((4, 5, 6), np.uint16)
    labels = supervox.slic(FakeDeviceArray(host, stream=7), n_segments=9, channel_axis=None)
    call = fake_device[-1]
    assert call["shape"] == (4, 5, 6, 1)
    assert call["strides"] == (60, 12, 2, 0)
    assert call["dtype"] == _lib.DTYPES["uint16"]
    assert call["data"] == host.ctypes.data
    assert call["stream"] == 7
    assert call["label_dtype"] == _lib.DTYPES["int64"]
    assert call["n_segments"] == 9
    assert isinstance(labels, FakeDeviceArray)
    assert labels.array.shape == (4, 5, 6)
    assert np.array_equal(labels.array.ravel(), np.arange(1, 121))


def test_channels_moved_last_without_copy(fake_device):
    host = np.zeros((3, 8, 9), np.float32)  # channel axis first
    labels = supervox.slic(FakeDeviceArray(host), channel_axis=0)
    call = fake_device[-1]
    assert call["shape"] == (1, 8, 9, 3)
    assert call["strides"] == (0, 36, 4, 288)
    assert call["convert2lab"] == _lib.CONVERT2LAB_YES
    assert call["data"] == host.ctypes.data
    assert labels.array.shape == (8, 9)


def test_strided_view_and_mask(fake_device):
    base = np.zeros((10, 12), np.float64)
    view = base[::2, ::-3]
    mask = np.ones(view.shape, np.uint8)
    supervox.slic(FakeDeviceArray(view), mask=FakeDeviceArray(mask), channel_axis=None)
    call = fake_device[-1]
    assert call["shape"] == (1, 5, 4, 1)
    assert call["strides"] == (0, 192, -24, 0)
    assert call["data"] == view.ctypes.data
    assert call["mask_shape"] == (1, 5, 4, 1)
    assert call["mask_strides"] == (0, 4, 1, 0)


def test_device_validation_happens_before_the_call(fake_device):
    img = FakeDeviceArray(np.zeros((6, 7), np.float32))
    with pytest.raises(ValueError, match="start_label"):
        supervox.slic(img, start_label=3, channel_axis=None)
    with pytest.raises(TypeError, match="mask is in host memory"):
        supervox.slic(img, mask=np.ones((6, 7), bool), channel_axis=None)
    with pytest.raises(ValueError, match="backend='cpu'"):
        supervox.slic(img, channel_axis=None, backend="cpu")
    assert fake_device == []


class FakeDLPackOnly:
    """A NumPy array's DLPack capsule (host memory standing in for device
    memory) behind a producer that says it is on CUDA device 0."""

    def __init__(self, array):
        self.array = array
        self.streams = []

    def __dlpack__(self, stream=None):
        self.streams.append(stream)
        return self.array.__dlpack__()

    def __dlpack_device__(self):
        return (2, 0)


def test_dlpack_capsule_descriptor(fake_device, monkeypatch):
    from supervox import _dlpack
    # The capsule really says CPU: let it pass for CUDA here.
    monkeypatch.setattr(_dlpack, "DEVICE_TYPES", _dlpack.DEVICE_TYPES | {_dlpack.CPU})
    base = np.zeros((6, 10, 12), np.float32)
    view = base.transpose(2, 0, 1)[1:, :, ::2]
    producer = FakeDLPackOnly(view)
    labels = supervox.slic(producer, n_segments=5, channel_axis=None)
    call = fake_device[-1]
    assert call["shape"] == (11, 6, 5, 1)
    assert call["strides"] == (4, 480, 96, 0)
    assert call["dtype"] == _lib.DTYPES["float32"]
    assert call["data"] == view.ctypes.data
    # The legacy default stream (0 here) is DLPack's 1.
    assert producer.streams == [1]
    assert not call["stream"]
    assert labels.array.shape == (11, 6, 5)


def test_dlpack_capsule_dtypes():
    from supervox import _dlpack
    # (NumPy exports no bool before 1.25.)
    for dtype in ("uint8", "int16", "uint32", "int64", "float16", "float64"):
        array = np.zeros((3, 8), dtype)[:, ::2]
        ptr, got, shape, strides, device_type, device_id = _dlpack.describe(array.__dlpack__())
        assert got == np.dtype(dtype) and shape == (3, 4), dtype
        assert strides == array.strides and ptr == array.ctypes.data, dtype
        assert (device_type, device_id) == (_dlpack.CPU, 0)
