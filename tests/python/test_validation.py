"""supervox.slic's signature and errors against the installed scikit-image,
and bad input: a clear exception and nothing left behind."""

import inspect
import signal
import threading
import warnings

import numpy as np
import pytest
from skimage.segmentation import slic as skimage_slic

import supervox
from supervox import _lib, _slic

try:
    from numpy.exceptions import AxisError
except ImportError:  # numpy < 1.25
    AxisError = np.AxisError

GREY = np.linspace(0, 1, 12 * 14, dtype=np.float32).reshape(12, 14)
RGB = np.stack([GREY, GREY[::-1], GREY * 0.5], axis=-1)


def skimage_version():
    import skimage
    return tuple(int(p) for p in skimage.__version__.split(".")[:2])


def test_signature_matches_skimage():
    ours = inspect.signature(supervox.slic).parameters
    theirs = inspect.signature(skimage_slic).parameters
    shared = [name for name in theirs if name in ours]
    assert "image" in shared and "channel_axis" in shared and "mask" in shared
    for name in shared:
        assert ours[name].default == theirs[name].default, name
    assert theirs["channel_axis"].kind is inspect.Parameter.KEYWORD_ONLY
    # 0.26's exact signature (0.19 still has multichannel between spacing
    # and convert2lab): the order, then backend and connectivity_rule as
    # the additions, keyword-only.
    assert list(ours) == ["image", "n_segments", "compactness", "max_num_iter", "sigma",
                          "spacing", "convert2lab", "enforce_connectivity", "min_size_factor",
                          "max_size_factor", "slic_zero", "start_label", "mask",
                          "channel_axis", "backend", "connectivity_rule"]
    assert ours["channel_axis"].kind is inspect.Parameter.KEYWORD_ONLY
    assert ours["backend"].default == "auto"
    assert ours["connectivity_rule"].kind is inspect.Parameter.KEYWORD_ONLY
    assert ours["connectivity_rule"].default == "connected"


def test_label_dtype_is_intp():
    assert supervox.slic(GREY, channel_axis=None).dtype == np.intp
    assert skimage_slic(GREY, channel_axis=None).dtype == np.intp


def same_error(call_ours, call_theirs, exc_type):
    with pytest.raises(exc_type) as ours:
        call_ours()
    with pytest.raises(exc_type) as theirs:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            call_theirs()
    return str(ours.value), str(theirs.value)


@pytest.mark.parametrize("kwargs, exc_type", [
    (dict(start_label=2), ValueError),
    (dict(start_label=-1), ValueError),
    (dict(spacing=[1, 2, 3, 4]), ValueError),
    (dict(spacing=5), TypeError),
    (dict(sigma=[1, 2, 3, 4]), ValueError),
])
def test_errors_match_skimage_3d(kwargs, exc_type):
    vol = np.random.default_rng(0).random((6, 8, 9)).astype(np.float32)
    ours, theirs = same_error(lambda: supervox.slic(vol, channel_axis=None, **kwargs),
                              lambda: skimage_slic(vol, channel_axis=None, **kwargs), exc_type)
    assert ours == theirs


def test_lab_error_matches_skimage():
    four = np.zeros((10, 12, 4))
    ours, theirs = same_error(lambda: supervox.slic(four, convert2lab=True),
                              lambda: skimage_slic(four, convert2lab=True), ValueError)
    assert ours == theirs == "Lab colorspace conversion requires a RGB image."


def test_2d_spacing_errors_match_skimage():
    ours, theirs = same_error(lambda: supervox.slic(GREY, spacing=[1], channel_axis=None),
                              lambda: skimage_slic(GREY, spacing=[1], channel_axis=None),
                              ValueError)
    assert ours == theirs
    with pytest.warns(FutureWarning, match="spacing number of elements must be 2"):
        supervox.slic(GREY, spacing=[1, 1, 2], channel_axis=None)


def test_mask_shape_error():
    """0.19's message; 0.26 indexes the image with the mask first and
    raises numpy's IndexError, so only ours is checked word for word."""
    mask = np.ones((5, 5), bool)
    with pytest.raises(ValueError) as ours:
        supervox.slic(GREY, mask=mask, channel_axis=None)
    assert str(ours.value) == "image and mask should have the same shape."
    with pytest.raises((ValueError, IndexError)):
        skimage_slic(GREY, mask=mask, channel_axis=None)


def test_bad_channel_axis_is_numpys_error():
    with pytest.raises(AxisError) as ours:
        supervox.slic(RGB, channel_axis=3)
    with pytest.raises(AxisError) as theirs:
        skimage_slic(RGB, channel_axis=3)
    assert str(ours.value) == str(theirs.value)


def test_2d_image_with_channel_axis_is_an_error():
    """scikit-image 0.26 rejects a 2D image with a channel axis (0.19 read
    it as grey); supervox.slic has 0.26's behaviour and message."""
    with pytest.raises(ValueError) as ours:
        supervox.slic(GREY)
    message = ("channel_axis=-1 indicates multichannel, which is not supported for a "
               "two-dimensional image; use channel_axis=None if the image is grayscale")
    assert str(ours.value) == message
    if skimage_version() >= (0, 26):
        with pytest.raises(ValueError) as theirs:
            skimage_slic(GREY)
        assert str(theirs.value) == message


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_raises_and_mask_hides_it(bad):
    img = np.zeros((4, 5), dtype=float)
    img[2, 3] = bad
    word = "NaN" if np.isnan(bad) else "infinite"
    with pytest.raises(ValueError, match="unmasked %s values in image are not supported" % word) \
            as info:
        supervox.slic(img, channel_axis=None)
    # The library's details follow: where the first bad voxel is.
    assert "z=0, y=2, x=3" in str(info.value)
    labels = supervox.slic(img, mask=np.isfinite(img), channel_axis=None)
    assert labels[2, 3] == 0 and (labels[np.isfinite(img)] >= 1).all()


@pytest.mark.parametrize("shape, channel_axis", [((5,), None), ((2, 3, 4, 5), None),
                                                  ((2, 3, 4, 5, 3), -1), ((4,), -1)])
def test_wrong_ndim_is_a_clear_error(shape, channel_axis):
    with pytest.raises(ValueError, match="slic takes a 2D or 3D image"):
        supervox.slic(np.zeros(shape, np.float32), channel_axis=channel_axis)


def test_empty_and_unsupported_inputs():
    with pytest.raises(ValueError, match="zero-size array"):
        supervox.slic(np.zeros((0, 5), np.float32), channel_axis=None)
    with pytest.raises(ValueError, match="Cannot convert from complex128"):
        supervox.slic(np.zeros((4, 5), complex), channel_axis=None)
    with pytest.raises(ValueError, match="backend must be"):
        supervox.slic(GREY, channel_axis=None, backend="gpu")


def test_library_parameter_errors_carry_its_message():
    with pytest.raises(ValueError, match="compactness"):
        supervox.slic(GREY, compactness=-1, channel_axis=None)
    with pytest.raises(ValueError, match="n_segments"):
        supervox.slic(GREY, n_segments=0, channel_axis=None)


def test_failure_leaves_no_state_behind():
    ok = supervox.slic(GREY, n_segments=10, channel_axis=None)
    bad = GREY.astype(np.float64)
    bad[1, 1] = np.nan
    for _ in range(3):
        with pytest.raises(ValueError):
            supervox.slic(bad, n_segments=10, channel_axis=None)
        assert np.array_equal(supervox.slic(GREY, n_segments=10, channel_axis=None), ok)


def test_input_is_not_modified():
    img = (GREY * 1000).astype(np.float64)
    before = img.copy()
    supervox.slic(img, channel_axis=None, sigma=1)
    assert np.array_equal(img, before)


NO_DEVICE_CHECK = """
import numpy as np, supervox
grey = np.linspace(0, 1, 12 * 14, dtype=np.float32).reshape(12, 14)
assert not supervox.cuda_available()
try:
    supervox.slic(grey, channel_axis=None, backend="cuda")
    raise SystemExit("cuda without a device ran")
except supervox.SupervoxError as e:
    assert "CUDA" in str(e), str(e)
assert np.array_equal(supervox.slic(grey, channel_axis=None, backend="auto"),
                      supervox.slic(grey, channel_axis=None, backend="cpu"))
print("ok")
"""


def test_cuda_backend_without_device_is_an_error():
    # A process that sees no device, also on a machine with GPUs: cuda is
    # an error naming CUDA, auto falls back to the CPU reference.
    import os
    import subprocess
    import sys

    env = dict(os.environ, CUDA_VISIBLE_DEVICES="")
    done = subprocess.run([sys.executable, "-c", NO_DEVICE_CHECK], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stdout + done.stderr


def test_threads_setting_keeps_labels():
    vol = np.random.default_rng(1).random((12, 30, 30)).astype(np.float32)
    ref = supervox.slic(vol, n_segments=50, channel_axis=None)
    try:
        for n in (1, 2):
            supervox.set_num_threads(n)
            assert supervox.get_num_threads() == n
            assert np.array_equal(supervox.slic(vol, n_segments=50, channel_axis=None), ref)
    finally:
        supervox.set_num_threads(None)


def test_ctrl_c_cancels_the_run(monkeypatch):
    """A real SIGINT to the main thread while the library runs: the waiting
    main thread raises the cancel flag, the run stops with
    SUPERVOX_ERROR_CANCELLED, KeyboardInterrupt reaches the caller once it
    has returned, and the next call works."""
    real_slic = _lib.lib.supervox_slic
    started = threading.Event()
    statuses = []

    def slic_after_interrupt(*args):
        # The C run starts once the main thread has taken the signal, so
        # that the test does not depend on which thread is faster; the
        # bound only keeps a broken build from hanging.
        started.set()
        control = args[-2]._obj
        for _ in range(20000):
            if control.cancel.contents.value:
                break
            threading.Event().wait(0.001)
        statuses.append(real_slic(*args))
        return statuses[-1]

    def interrupt_main():
        started.wait()
        signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)

    # Python's own handler, whatever an imported extension installed.
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    monkeypatch.setattr(_lib.lib, "supervox_slic", slic_after_interrupt)
    sender = threading.Thread(target=interrupt_main)
    sender.start()
    with pytest.raises(KeyboardInterrupt):
        supervox.slic(GREY, n_segments=10, channel_axis=None)
    sender.join()
    signal.signal(signal.SIGINT, previous)
    assert statuses == [_lib.ERROR_CANCELLED]
    monkeypatch.undo()
    assert supervox.slic(GREY, n_segments=10, channel_axis=None).min() == 1


def test_threads_at_once_get_their_own_labels():
    """Several Python threads and the main thread run at once (the GIL is
    released in the library); each gets the labels of a run on its own."""
    rng = np.random.default_rng(5)
    volumes = [rng.random((10, 24, 26)).astype(np.float32) for _ in range(5)]
    kwargs = dict(n_segments=40, compactness=0.1, channel_axis=None, backend="cpu")
    expected = [supervox.slic(v, **kwargs) for v in volumes]
    results = [None] * len(volumes)
    errors = []
    barrier = threading.Barrier(len(volumes))

    def work(i):
        try:
            barrier.wait()
            for _ in range(3):
                results[i] = supervox.slic(volumes[i], **kwargs)
                assert np.array_equal(results[i], expected[i])
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(1, len(volumes))]
    for t in threads:
        t.start()
    work(0)
    for t in threads:
        t.join()
    assert errors == []
    for got, want in zip(results, expected):
        assert np.array_equal(got, want)


def test_cancelled_without_interrupt_is_the_librarys_error():
    with pytest.raises(supervox.SupervoxError):
        _slic._raise_for(_lib.ERROR_CANCELLED, "cancelled")


def test_connectivity_rule_checked():
    with pytest.raises(ValueError, match="connectivity_rule must be 'connected' or 'legacy'"):
        supervox.slic(GREY, channel_axis=None, connectivity_rule="skimage")
