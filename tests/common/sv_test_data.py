"""Test data and agreement measures shared by the conformance suite
(tests/conformance) and the Python package's tests (tests/python)."""

import numpy as np
from scipy import ndimage as ndi

FULL_RUN_MIN_AGREEMENT = 0.995
ARI_MIN = 0.99


def adjusted_rand_index(a, b):
    """ARI from the contingency table (as sklearn's adjusted_rand_score)."""
    a = np.asarray(a).ravel()
    b = np.asarray(b).ravel()
    n = a.size
    if n < 2:
        return 1.0
    _, ai = np.unique(a, return_inverse=True)
    _, bi = np.unique(b, return_inverse=True)
    pairs = ai.astype(np.int64) * (bi.max() + 1) + bi
    _, nij = np.unique(pairs, return_counts=True)

    def comb2(x):
        x = np.asarray(x, dtype=np.float64)
        return (x * (x - 1) / 2).sum()

    sum_ij = comb2(nij)
    sum_a = comb2(np.bincount(ai))
    sum_b = comb2(np.bincount(bi))
    total = n * (n - 1) / 2
    expected = sum_a * sum_b / total
    maximum = (sum_a + sum_b) / 2
    if maximum == expected:
        return 1.0
    return (sum_ij - expected) / (maximum - expected)


def smooth_volume(shape, seed, channels=None):
    """Smooth random float32 data with structure at a few scales."""
    rng = np.random.default_rng(seed)
    full = tuple(shape) + ((channels,) if channels else ())
    noise = rng.random(full)
    sig = [max(0.0, min(3.0, s / 6.0)) for s in shape] + ([0] if channels else [])
    vol = ndi.gaussian_filter(noise, sig) + 0.05 * rng.random(full)
    vol -= vol.min()
    vol /= max(vol.max(), 1e-12)
    return vol.astype(np.float32)
