"""PyTorch CUDA tensors (through their __cuda_array_interface__): a tensor
in, a tensor out on the same device, equal to the CPU reference. Skipped
without PyTorch or a CUDA device."""

import numpy as np
import pytest

import supervox
from common import smooth_volume

torch = pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def device():
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device for PyTorch")
    if not supervox.cuda_available():
        pytest.skip("libsupervox has no usable CUDA backend")


def test_tensor_in_tensor_out():
    image = smooth_volume((16, 30, 34), 1)
    kwargs = dict(n_segments=60, compactness=0.1, channel_axis=None)
    expected = supervox.slic(image, backend="cpu", **kwargs)
    tensor = torch.from_numpy(image).cuda()
    labels = supervox.slic(tensor, **kwargs)
    assert isinstance(labels, torch.Tensor)
    assert labels.device == tensor.device and labels.dtype == torch.int64
    assert np.array_equal(labels.cpu().numpy(), expected)


def test_tensor_on_a_side_stream():
    image = smooth_volume((12, 24, 24), 2)
    kwargs = dict(n_segments=30, compactness=0.1, channel_axis=None)
    expected = supervox.slic(image, backend="cpu", **kwargs)
    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        tensor = torch.zeros(image.shape, device="cuda")
        tensor += torch.from_numpy(image).cuda()
        labels = supervox.slic(tensor, **kwargs)
        same = bool((labels == torch.from_numpy(expected).cuda()).all())
    assert same
