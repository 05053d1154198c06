"""Every case of scikit-image's own test_slic.py, run against supervox.slic
(the suite module's `slic` rebound for the test): the installed
scikit-image's suite when it ships one (0.19 does, 0.26 does not), and
always scikit-image 0.26.0's, vendored in skimage_0_26/, whose signature
and semantics supervox.slic has."""

import importlib
import importlib.util
import pathlib
import traceback

import numpy as np
import pytest
import skimage
from skimage.segmentation import slic as skimage_slic

import supervox

try:
    INSTALLED = importlib.import_module("skimage.segmentation.tests.test_slic")
except ImportError:  # scikit-image >= 0.26 does not ship its tests
    INSTALLED = None


def _load_vendored():
    path = pathlib.Path(__file__).parent / "skimage_0_26" / "slic_tests.py"
    spec = importlib.util.spec_from_file_location("skimage_0_26_slic_tests", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


VENDORED = _load_vendored()

# Cases of scikit-image 0.19's suite about its deprecated arguments:
# scikit-image 0.26's signature, which supervox.slic has, dropped them.
NOT_IN_026 = {
    "test_max_iter_kwarg_deprecation": "max_iter was removed in scikit-image 0.26",
    "test_gray_2d_deprecated_multichannel": "multichannel was removed in scikit-image 0.26",
}

# maskSLIC cases whose expected numbers follow scikit-image's random seeds:
# Supervox places mask seeds its own way (SLIC semantics: mask mode need not
# be equal), so these compare the segmentation up to the label numbering.
MASK_NUMBERING = {"test_color_2d_mask", "test_multichannel_2d_mask"}

# Cases where Supervox differs from scikit-image: each must fail at exactly
# this assertion (and is then reported as xfailed), so that any other
# failure, or the case passing, shows.
KNOWN_DIFFERENCES = {
    # Its float64 image with compactness 1e-4 ties differently in float32,
    # where Supervox computes: the two clusters swap regions (scikit-image
    # gives our labels for the float32 copy):
    # test_conformance.py::test_float64_input_is_computed_in_float32.
    "test_enforce_connectivity": (
        "assert_equal(segments_disconnected, result_disconnected)",
        "float64 arithmetic in the expected labels; Supervox computes in float32"),
}
KNOWN_DIFFERENCES_026 = {
    **KNOWN_DIFFERENCES,
    # Only 0.26 asserts that an offset of 1000 leaves the labels alone.
    # Supervox holds float64 samples as float32 before the rescale
    # (SLIC-SEMANTICS.md, "Float type and Lab"); near 1000 float32 steps by
    # 1/16384, and 11 of 32768 pixels move. scikit-image rescales in float64;
    # given the float32-rounded samples it makes our labels.
    "test_slic_consistency_across_image_magnitude": (
        "np.testing.assert_array_equal(seg4, seg5)",
        "float64 samples are rounded to float32 before the rescale, so an offset "
        "of 1000 changes 11 of 32768 labels"),
}


def slic_as_0_19_calls_it(image, *args, **kwargs):
    """0.19's suite passes 2D grey images with the default channel_axis,
    which 0.19 read as grey and 0.26 rejects; 0.26's suite says None."""
    if np.ndim(image) == 2 and "channel_axis" not in kwargs:
        kwargs["channel_axis"] = None
    return supervox.slic(image, *args, **kwargs)


def numbered_as_skimage(slic):
    """`slic`'s segments, renumbered as the installed scikit-image numbers
    them; fails unless the two segmentations match one to one."""
    def renumbered(image, *args, **kwargs):
        ours = slic(image, *args, **kwargs)
        ref = skimage_slic(image, *args, **kwargs)
        mapping = {}
        for label in np.unique(ours):
            values, counts = np.unique(ref[ours == label], return_counts=True)
            mapping[label] = values[np.argmax(counts)]
        assert len(set(mapping.values())) == len(mapping), "segments do not match one to one"
        return np.vectorize(mapping.get, otypes=[ours.dtype])(ours)
    return renumbered


# id prefix: (suite module, supervox.slic called as that suite calls it,
# the suite's known differences).
SUITES = {"vendored-0.26.0": (VENDORED, supervox.slic, KNOWN_DIFFERENCES_026)}
if INSTALLED is not None:
    SUITES["installed-" + skimage.__version__] = (INSTALLED, slic_as_0_19_calls_it,
                                                   KNOWN_DIFFERENCES)


def _cases():
    cases = []
    for prefix, (suite, _, _) in SUITES.items():
        for name in sorted(vars(suite)):
            func = getattr(suite, name)
            # Only the suite's own tests, not what it imports (0.19's test_parallel).
            if not name.startswith("test_") or getattr(func, "__module__", None) != suite.__name__:
                continue
            marks = [m for m in getattr(func, "pytestmark", []) if m.name == "parametrize"]
            if marks:
                argname, values = marks[0].args[0], marks[0].args[1]
                for value in values:
                    cases.append(pytest.param(prefix, name, {argname: value},
                                              id="%s/%s[%s]" % (prefix, name, value)))
            else:
                cases.append(pytest.param(prefix, name, {}, id="%s/%s" % (prefix, name)))
    return cases


@pytest.mark.parametrize("prefix, name, kwargs", _cases())
def test_skimage_case(prefix, name, kwargs, monkeypatch):
    suite, slic, known = SUITES[prefix]
    if name in NOT_IN_026:
        pytest.skip(NOT_IN_026[name])
    if name in MASK_NUMBERING:
        slic = numbered_as_skimage(slic)
    monkeypatch.setattr(suite, "slic", slic)
    case = getattr(suite, name)
    if name not in known:
        case(**kwargs)
        return
    statement, reason = known[name]
    with pytest.raises(AssertionError) as failure:
        case(**kwargs)
    frames = [f for f in traceback.extract_tb(failure.tb) if f.filename == suite.__file__]
    assert (frames[-1].name, frames[-1].line) == (name, statement), failure.getrepr()
    pytest.xfail(reason)
