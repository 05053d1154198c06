"""Shared helpers of the Python tests: test images and the agreement
measures of the C conformance suite (tests/conformance)."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from sv_test_data import (  # noqa: E402,F401
    ARI_MIN, FULL_RUN_MIN_AGREEMENT, adjusted_rand_index, smooth_volume)
