"""GPU arrays that only speak DLPack (no __cuda_array_interface__), Numba
device arrays, and arrays that only have a __cuda_array_interface__: each
runs in place on the CUDA backend and gives the CPU reference's labels.
Skipped without CuPy or without a CUDA device."""

import numpy as np
import pytest

import supervox
from common import skip_without_cuda_device, smooth_volume

cp = pytest.importorskip("cupy")


@pytest.fixture(autouse=True)
def device():
    skip_without_cuda_device(cp)


class DLPackOnly:
    """Real device memory (a CuPy array or a PyTorch tensor) behind nothing
    but __dlpack__ and __dlpack_device__; remembers the streams asked for."""

    def __init__(self, array):
        self.array = array
        self.streams = []

    def __dlpack__(self, stream=None):
        self.streams.append(stream)
        return self.array.__dlpack__(stream=stream)

    def __dlpack_device__(self):
        return self.array.__dlpack_device__()

    @property
    def ndim(self):
        return self.array.ndim


class InterfaceOnly:
    """Device memory behind nothing but __cuda_array_interface__."""

    def __init__(self, array):
        self.array = array
        self.__cuda_array_interface__ = array.__cuda_array_interface__

    @property
    def ndim(self):
        return self.array.ndim


KWARGS = dict(n_segments=60, compactness=0.1, channel_axis=None)


def reference(image, **kwargs):
    return supervox.slic(image, backend="cpu", **dict(KWARGS, **kwargs))


@pytest.mark.parametrize("view", ["contiguous", "transposed", "strided"])
@pytest.mark.parametrize("dtype", ["float32", "uint16", "float64"])
def test_dlpack_only_cupy_memory(view, dtype):
    """Strides and dtype come from the capsule; the labels are CuPy's (the
    wrapper is neither CuPy nor PyTorch), on the stream the run used."""
    base = smooth_volume((18, 28, 30), 1)
    image = (base * 65535).astype(dtype) if dtype == "uint16" else base.astype(dtype)
    take = {"contiguous": lambda a: a, "transposed": lambda a: a.transpose(2, 0, 1),
            "strided": lambda a: a[::2, 3:, ::2]}[view]
    expected = reference(take(image))
    wrapped = DLPackOnly(take(cp.asarray(image)))
    labels = supervox.slic(wrapped, **KWARGS)
    assert isinstance(labels, cp.ndarray)
    assert labels.dtype == np.intp and labels.shape == expected.shape
    assert bool((labels == cp.asarray(expected)).all())
    # The legacy default stream is 1 in DLPack (0 is not allowed).
    assert wrapped.streams == [cp.cuda.get_current_stream().ptr or 1]


def test_dlpack_only_on_a_side_stream():
    image = smooth_volume((14, 26, 26), 2)
    expected = reference(image)
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        d = cp.zeros(image.shape, cp.float32)
        d += cp.asarray(image)
        wrapped = DLPackOnly(d)
        labels = supervox.slic(wrapped, **KWARGS)
        same = (labels == cp.asarray(expected)).all()
    stream.synchronize()
    assert wrapped.streams == [stream.ptr]
    assert bool(same)


def test_dlpack_only_torch_memory_with_mask():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device for PyTorch")
    image = smooth_volume((12, 30, 32), 3)
    mask = np.zeros(image.shape, bool)
    mask[2:10, 4:26, 3:29] = True
    expected = reference(image, mask=mask)
    labels = supervox.slic(DLPackOnly(torch.from_numpy(image).cuda()),
                           mask=DLPackOnly(torch.from_numpy(mask).cuda()), **KWARGS)
    assert isinstance(labels, cp.ndarray)
    assert bool((labels == cp.asarray(expected)).all())


def test_interface_only_cupy_memory():
    image = smooth_volume((16, 24, 28), 4)
    expected = reference(image)
    labels = supervox.slic(InterfaceOnly(cp.asarray(image)), **KWARGS)
    assert isinstance(labels, cp.ndarray)
    assert bool((labels == cp.asarray(expected)).all())


def test_numba_device_array_in_numba_out():
    numba_cuda = pytest.importorskip("numba.cuda")
    if not numba_cuda.is_available():
        pytest.skip("Numba sees no CUDA device")
    image = smooth_volume((16, 24, 28), 5)
    expected = reference(image)
    labels = supervox.slic(numba_cuda.to_device(image), **KWARGS)
    assert numba_cuda.is_cuda_array(labels) and not isinstance(labels, cp.ndarray)
    assert np.array_equal(labels.copy_to_host(), expected)
