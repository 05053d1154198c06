"""Every case of the installed scikit-image's own test_slic.py, run against
supervox.slic (the module's `slic` rebound for the test)."""

import importlib

import numpy as np
import pytest
from skimage.segmentation import slic as skimage_slic

import supervox

try:
    SUITE = importlib.import_module("skimage.segmentation.tests.test_slic")
except ImportError:  # scikit-image >= 0.26 does not ship its tests
    SUITE = None

# Cases of scikit-image 0.19's suite about its deprecated arguments:
# scikit-image 0.26's signature, which supervox.slic has, dropped them.
NOT_IN_026 = {
    "test_max_iter_kwarg_deprecation": "max_iter was removed in scikit-image 0.26",
    "test_gray_2d_deprecated_multichannel": "multichannel was removed in scikit-image 0.26",
    # Its float64 image with compactness 1e-4 ties differently in float32,
    # where Supervox computes (scikit-image gives our labels for the
    # float32 copy): test_conformance.py::test_float64_input_is_computed_in_float32.
    "test_enforce_connectivity": "float64 arithmetic in the expected labels",
}

# maskSLIC cases whose expected numbers follow scikit-image's random seeds:
# Supervox places mask seeds its own way (SLIC semantics: mask mode need not
# be equal), so these compare the segmentation up to the label numbering.
MASK_NUMBERING = {"test_color_2d_mask", "test_multichannel_2d_mask"}


def slic_as_0_19_calls_it(image, *args, **kwargs):
    """0.19's suite passes 2D grey images with the default channel_axis,
    which 0.19 read as grey and 0.26 rejects; 0.26's suite says None."""
    if np.ndim(image) == 2 and "channel_axis" not in kwargs:
        kwargs["channel_axis"] = None
    return supervox.slic(image, *args, **kwargs)


def slic_numbered_as_skimage(image, *args, **kwargs):
    """supervox.slic's segments, renumbered as scikit-image numbers them;
    fails unless the two segmentations match one to one."""
    ours = slic_as_0_19_calls_it(image, *args, **kwargs)
    ref = skimage_slic(image, *args, **kwargs)
    mapping = {}
    for label in np.unique(ours):
        values, counts = np.unique(ref[ours == label], return_counts=True)
        mapping[label] = values[np.argmax(counts)]
    assert len(set(mapping.values())) == len(mapping), "segments do not match one to one"
    return np.vectorize(mapping.get, otypes=[ours.dtype])(ours)


def _cases():
    if SUITE is None:
        return [pytest.param(None, None, marks=pytest.mark.skip(
            reason="the installed scikit-image does not ship skimage.segmentation.tests"))]
    cases = []
    for name in sorted(vars(SUITE)):
        func = getattr(SUITE, name)
        if not name.startswith("test_") or not callable(func):
            continue
        marks = [m for m in getattr(func, "pytestmark", []) if m.name == "parametrize"]
        if marks:
            argname, values = marks[0].args[0], marks[0].args[1]
            for value in values:
                cases.append(pytest.param(name, {argname: value}, id="%s[%s]" % (name, value)))
        else:
            cases.append(pytest.param(name, {}, id=name))
    return cases


@pytest.mark.parametrize("name, kwargs", _cases())
def test_skimage_case(name, kwargs, monkeypatch):
    if name in NOT_IN_026:
        pytest.skip(NOT_IN_026[name])
    slic = slic_numbered_as_skimage if name in MASK_NUMBERING else slic_as_0_19_calls_it
    monkeypatch.setattr(SUITE, "slic", slic)
    getattr(SUITE, name)(**kwargs)
