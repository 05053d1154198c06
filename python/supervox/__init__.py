"""Supervox: SLIC superpixels and supervoxels, scikit-image's slic on the
CPU and on CUDA GPUs.

    >>> import numpy as np, supervox
    >>> labels = supervox.slic(volume, n_segments=5000, compactness=0.1, channel_axis=None)

NumPy in, NumPy out; CuPy in, CuPy out (computed from the device buffer).
The package is also a scikit-image dispatch backend (supervox.skimage_backend).
"""

from . import _lib
from ._slic import SupervoxError, get_num_threads, set_num_threads, slic

__version__ = _lib.version()


def cuda_available():
    """True when libsupervox was built with CUDA and a device is usable."""
    return bool(_lib.lib.supervox_cuda_available())


__all__ = ["slic", "set_num_threads", "get_num_threads", "cuda_available", "SupervoxError",
           "__version__"]
