"""Supervox as a scikit-image dispatch backend: the can_has /
get_implementation / info trio here, and scikit-image's real dispatcher
(skimage.util._backends, scikit-image >= 0.26) when it is installed."""

import importlib
import importlib.metadata
import os
import warnings

import numpy as np
import pytest

import supervox
from supervox import skimage_backend

SLIC = "skimage.segmentation:slic"
GREY = np.linspace(0, 1, 20 * 24, dtype=np.float32).reshape(20, 24)


class DeviceLike:
    """Only what can_has may look at: ndim and the interface's typestr."""

    def __init__(self, ndim, typestr):
        self.ndim = ndim
        self.__cuda_array_interface__ = {"typestr": typestr, "shape": (2,) * ndim}


def test_can_has_takes_device_arrays_only_by_default(monkeypatch):
    monkeypatch.delenv("SUPERVOX_DISPATCH_NUMPY", raising=False)
    assert skimage_backend.can_has(SLIC, DeviceLike(3, "<f4"))
    assert skimage_backend.can_has(SLIC, image=DeviceLike(2, "|u1"), n_segments=5)
    assert not skimage_backend.can_has(SLIC, GREY)
    monkeypatch.setenv("SUPERVOX_DISPATCH_NUMPY", "1")
    assert skimage_backend.can_has(SLIC, GREY, channel_axis=None)


@pytest.mark.parametrize("args, kwargs", [
    ((DeviceLike(5, "<f4"),), {}),
    ((DeviceLike(3, "<c8"),), {}),
    ((DeviceLike(3, "<f4"),), {"multichannel": True}),
    ((DeviceLike(3, "<f4"),) + (0,) * 13, {}),
    (([[1, 2], [3, 4]],), {}),
    ((), {}),
])
def test_can_has_declines_what_it_cannot_run(args, kwargs):
    assert not skimage_backend.can_has(SLIC, *args, **kwargs)


def test_can_has_declines_other_functions():
    assert not skimage_backend.can_has("skimage.segmentation:felzenszwalb",
                                       DeviceLike(2, "<f4"))


def test_get_implementation():
    assert skimage_backend.get_implementation(SLIC) is supervox.slic
    with pytest.raises(LookupError):
        skimage_backend.get_implementation("skimage.filters:gaussian")


def test_entry_points_are_declared():
    """pyproject.toml names the two entry points scikit-image looks up."""
    tomllib = pytest.importorskip("tomllib")
    root = os.environ.get("SV_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
    with open(os.path.join(root, "pyproject.toml"), "rb") as f:
        project = tomllib.load(f)["project"]
    points = project["entry-points"]
    assert points["skimage_backends"] == {"supervox": "supervox.skimage_backend"}
    assert points["skimage_backend_infos"] == {"supervox": "supervox.skimage_backend:info"}


# --- scikit-image's real dispatcher -------------------------------------

@pytest.fixture
def backends(monkeypatch, tmp_path):
    """skimage.util._backends with Supervox's entry points visible: the
    installed package's, or else a dist-info made here from pyproject.toml
    (the build tree is not installed)."""
    module = pytest.importorskip(
        "skimage.util._backends", reason="scikit-image < 0.26 has no dispatch mechanism")
    group = importlib.metadata.entry_points(group="skimage_backends")
    if "supervox" not in group.names:
        dist = tmp_path / ("supervox-%s.dist-info" % supervox.__version__)
        dist.mkdir()
        (dist / "METADATA").write_text(
            "Metadata-Version: 2.1\nName: supervox\nVersion: %s\n" % supervox.__version__)
        (dist / "entry_points.txt").write_text(
            "[skimage_backends]\nsupervox = supervox.skimage_backend\n\n"
            "[skimage_backend_infos]\nsupervox = supervox.skimage_backend:info\n")
        monkeypatch.syspath_prepend(str(tmp_path))
        importlib.invalidate_caches()
    monkeypatch.delenv("SKIMAGE_NO_DISPATCHING", raising=False)
    module.all_backends.cache_clear()
    yield module
    module.all_backends.cache_clear()


def dispatchable_slic(module):
    """scikit-image's own slic, marked dispatchable as upstream will mark it
    (around its channel_as_last_axis wrapper)."""
    import skimage.segmentation
    original = skimage.segmentation.slic
    assert module.public_api_module(original) == "skimage.segmentation"
    return module.dispatchable(original), original


def test_real_dispatch_info(backends):
    found = backends.all_backends()
    assert "supervox" in found
    info = found["supervox"]["info"]
    assert isinstance(info, backends.BackendInformation)
    assert info.supported_functions == [SLIC]


def test_real_dispatch_numpy_follows_can_has(backends, monkeypatch):
    dispatched, original = dispatchable_slic(backends)
    assert dispatched is not original
    monkeypatch.delenv("SUPERVOX_DISPATCH_NUMPY", raising=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error", backends.DispatchNotification)
        kept = dispatched(GREY, n_segments=10, channel_axis=None)
    assert np.array_equal(kept, original(GREY, n_segments=10, channel_axis=None))

    monkeypatch.setenv("SUPERVOX_DISPATCH_NUMPY", "1")
    with pytest.warns(backends.DispatchNotification, match="'supervox' backend"):
        routed = dispatched(GREY, n_segments=10, channel_axis=None)
    assert np.array_equal(routed, supervox.slic(GREY, n_segments=10, channel_axis=None))


def test_real_dispatch_cupy_goes_to_supervox(backends):
    cp = pytest.importorskip("cupy")
    if not supervox.cuda_available():
        pytest.skip("libsupervox has no usable CUDA backend")
    dispatched, _ = dispatchable_slic(backends)
    volume = np.random.default_rng(0).random((12, 30, 30)).astype(np.float32)
    with pytest.warns(backends.DispatchNotification, match="'supervox' backend"):
        labels = dispatched(cp.asarray(volume), n_segments=60, compactness=0.1,
                            channel_axis=None)
    assert isinstance(labels, cp.ndarray)
    expected = supervox.slic(volume, n_segments=60, compactness=0.1, channel_axis=None,
                             backend="cpu")
    assert bool((labels == cp.asarray(expected)).all())


def test_real_dispatch_can_be_switched_off(backends, monkeypatch):
    monkeypatch.setenv("SKIMAGE_NO_DISPATCHING", "1")
    backends.all_backends.cache_clear()
    _, original = dispatchable_slic(backends)
    assert backends.dispatchable(original) is original
