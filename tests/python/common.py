"""Shared helpers of the Python tests: test images, the agreement
measures of the C conformance suite (tests/conformance), and the check for
a CUDA device that the GPU tests skip without."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from sv_test_data import (  # noqa: E402,F401
    ARI_MIN, FULL_RUN_MIN_AGREEMENT, adjusted_rand_index, enforce_connectivity_reference,
    float32_resolves_first_assignment, pieces_per_label, require_portable_numpy,
    skimage_float32_loop, skimage_lab, smooth_volume)


def skip_without_cuda_device(cp):
    """Skips the test unless CuPy sees a device and libsupervox can use it."""
    import pytest
    import supervox
    try:
        if cp.cuda.runtime.getDeviceCount() < 1:
            pytest.skip("no CUDA device")
    except cp.cuda.runtime.CUDARuntimeError as exc:
        pytest.skip("no CUDA device: %s" % exc)
    if not supervox.cuda_available():
        pytest.skip("libsupervox has no usable CUDA backend")
