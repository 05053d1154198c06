"""CuPy in, CuPy out: the device entry computes from the device buffer.
Skipped without CuPy or without a CUDA device."""

import numpy as np
import pytest

import supervox
from common import skip_without_cuda_device, smooth_volume

cp = pytest.importorskip("cupy")


@pytest.fixture(autouse=True)
def device():
    skip_without_cuda_device(cp)


@pytest.fixture(autouse=True, scope="module")
def release_pools():
    """CuPy keeps freed blocks in its pools until exit; hand them back so that
    compute-sanitizer's leak check sees only what the library kept."""
    yield
    cp.get_default_memory_pool().free_all_blocks()
    cp.get_default_pinned_memory_pool().free_all_blocks()


def forbid_host_copies(context):
    """Inside `context`, any Python-level way to bring a device array to the
    host raises: cupy.asnumpy, and numpy.asarray of a device array (host
    arguments such as a spacing list still convert; CuPy refuses implicit
    conversion itself)."""
    original_asarray = np.asarray

    def forbid(*args, **kwargs):
        raise AssertionError("a device array was copied to the host")

    def asarray(a, *args, **kwargs):
        if hasattr(a, "__cuda_array_interface__"):
            forbid()
        return original_asarray(a, *args, **kwargs)

    context.setattr(cp, "asnumpy", forbid)
    context.setattr(np, "asarray", asarray)


CASES = {
    "grey-3d": (smooth_volume((24, 40, 44), 1), dict(n_segments=200, compactness=0.1,
                                                     channel_axis=None)),
    "grey-2d": (smooth_volume((60, 70), 2), dict(n_segments=80, compactness=0.1,
                                                 channel_axis=None)),
    "spacing-sigma": (smooth_volume((16, 24, 24), 3), dict(n_segments=80, compactness=0.1,
                                                           sigma=1.0, spacing=[2, 1, 1],
                                                           channel_axis=None)),
    "slic-zero": (smooth_volume((16, 24, 24), 4), dict(n_segments=80, slic_zero=True,
                                                       channel_axis=None)),
    "channels-2": (smooth_volume((10, 20, 20), 5, channels=2), dict(n_segments=50,
                                                                    compactness=0.1)),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_cupy_in_cupy_out_equal_to_cpu(name, monkeypatch):
    """The labels are a CuPy array on the input's device, bit for bit the
    CPU reference's; the call never copies the array to the host."""
    image, kwargs = CASES[name]
    expected = supervox.slic(image, backend="cpu", **kwargs)
    d_image = cp.asarray(image)
    with monkeypatch.context() as context:
        forbid_host_copies(context)
        labels = supervox.slic(d_image, **kwargs)
    assert isinstance(labels, cp.ndarray)
    assert labels.device.id == d_image.device.id
    assert labels.dtype == np.intp and labels.shape == expected.shape
    assert bool((labels == cp.asarray(expected)).all())


VIEWS = {
    "contiguous": lambda a: a,
    "transposed": lambda a: a.transpose(2, 0, 1),
    "strided": lambda a: a[::2, :, ::-1],
}


@pytest.mark.parametrize("dtype", ["uint8", "uint16", "int16", "float16", "float64", "bool"])
def test_cupy_dtypes_and_strides(dtype):
    """Conversion and strides on the device give the host path's labels."""
    base = smooth_volume((20, 30, 34), 6)
    if dtype == "bool":
        image = base > 0.5
    elif np.dtype(dtype).kind in "ui":
        image = (base * np.iinfo(dtype).max).astype(dtype)
    else:
        image = base.astype(dtype)
    kwargs = dict(n_segments=60, compactness=0.1, channel_axis=None)
    d_image = cp.asarray(image)
    for name, take in VIEWS.items():
        expected = supervox.slic(take(image), backend="cpu", **kwargs)
        labels = supervox.slic(take(d_image), **kwargs)
        assert bool((labels == cp.asarray(expected)).all()), name


def test_cupy_mask_and_rgb_lab():
    image = smooth_volume((40, 50), 7)
    mask = np.zeros(image.shape, bool)
    mask[4:36, 5:45] = True
    kwargs = dict(n_segments=30, compactness=0.1, channel_axis=None)
    expected = supervox.slic(image, mask=mask, backend="cpu", **kwargs)
    labels = supervox.slic(cp.asarray(image), mask=cp.asarray(mask), **kwargs)
    assert bool((labels == cp.asarray(expected)).all())
    rgb = smooth_volume((30, 40), 8, channels=3)
    expected = supervox.slic(rgb, backend="cpu", n_segments=30)
    assert bool((supervox.slic(cp.asarray(rgb), n_segments=30) == cp.asarray(expected)).all())


@pytest.mark.parametrize("dtype", ["uint8", "uint16", "float32", "float64"])
def test_cupy_rgb_lab_dtypes(dtype):
    """Lab runs in the float type of the device array's dtype, as on the
    host: at a compactness where it decides the labels."""
    base = 0.1 + 0.8 * smooth_volume((30, 40), 9, channels=3)
    if np.dtype(dtype).kind == "u":
        image = np.round(base * np.iinfo(dtype).max).astype(dtype)
    else:
        image = base.astype(dtype)
    kwargs = dict(n_segments=40, compactness=0.01, max_num_iter=3)
    expected = supervox.slic(image, backend="cpu", **kwargs)
    labels = supervox.slic(cp.asarray(image), **kwargs)
    assert bool((labels == cp.asarray(expected)).all())


def test_cupy_errors():
    bad = cp.zeros((4, 5), cp.float32)
    bad[2, 3] = cp.nan
    with pytest.raises(ValueError, match="unmasked NaN values"):
        supervox.slic(bad, channel_axis=None)
    with pytest.raises(ValueError, match="backend='cpu'"):
        supervox.slic(bad, channel_axis=None, backend="cpu")
    with pytest.raises(TypeError, match="mask is in host memory"):
        supervox.slic(bad, channel_axis=None, mask=np.ones((4, 5), bool))


def test_cupy_stream_is_respected():
    """Work queued on a non-default stream before the call is seen by the
    run, and the labels are ready for work queued after it."""
    image = smooth_volume((16, 30, 30), 9)
    expected = supervox.slic(image, backend="cpu", n_segments=40, channel_axis=None)
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        d = cp.zeros(image.shape, cp.float32)
        d += cp.asarray(image)
        labels = supervox.slic(d, n_segments=40, channel_axis=None)
        same = (labels == cp.asarray(expected)).all()
    stream.synchronize()
    assert bool(same)


def test_cupy_memory_is_stable_over_many_calls():
    image = cp.asarray(smooth_volume((16, 32, 32), 10))
    supervox.slic(image, n_segments=50, channel_axis=None)
    cp.cuda.Device().synchronize()
    free_before = cp.cuda.runtime.memGetInfo()[0]
    pool = cp.get_default_memory_pool()
    for _ in range(200):
        supervox.slic(image, n_segments=50, channel_axis=None)
    cp.cuda.Device().synchronize()
    pool.free_all_blocks()
    free_after = cp.cuda.runtime.memGetInfo()[0]
    # The library's kept backend (made by the first call) is reused by
    # every later one; the pool's own blocks are returned above, so free
    # memory is back where it was (to 1 MiB).
    assert free_before - free_after < (1 << 20)


def test_release_cache_gives_the_kept_memory_back():
    """A run keeps its backend's device buffers for the next run of the
    shape (about 40 bytes per voxel); cuda_release_cache frees them."""
    image = cp.asarray(smooth_volume((32, 64, 64), 11))
    pool = cp.get_default_memory_pool()
    supervox.cuda_release_cache()
    cp.cuda.Device().synchronize()
    free_start = cp.cuda.runtime.memGetInfo()[0]
    first = supervox.slic(image, n_segments=60, channel_axis=None)
    again = supervox.slic(image, n_segments=60, channel_axis=None)
    assert bool((first == again).all())
    del first, again
    cp.cuda.Device().synchronize()
    pool.free_all_blocks()
    kept = free_start - cp.cuda.runtime.memGetInfo()[0]
    supervox.cuda_release_cache()
    released = free_start - cp.cuda.runtime.memGetInfo()[0]
    assert kept >= 32 * 64 * 64 * 16
    assert released < (1 << 20)
