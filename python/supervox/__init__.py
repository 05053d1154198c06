"""Supervox: SLIC superpixels and supervoxels, scikit-image's slic on the
CPU and on CUDA GPUs.

    >>> import numpy as np, supervox
    >>> labels = supervox.slic(volume, n_segments=5000, compactness=0.1, channel_axis=None)

NumPy in, NumPy out; CuPy in, CuPy out (computed from the device buffer);
PyTorch CUDA tensors in, tensors out; Numba device arrays in, Numba out;
other CUDA arrays (DLPack producers) in, CuPy out.

    >>> supervox.slic_file("em-2048.tif", "labels.tif", n_segments=8_000_000)

reads a TIFF and writes a label TIFF, streaming it slab by slab when it
does not fit in memory (the same labels as in memory), and

    >>> supervox.slic_to(zarr.open("em.zarr/0"), "labels.zarr", n_segments=8_000_000,
    ...                  channel_axis=None)

runs slic on a zarr or Dask array larger than memory, pulling it slab by
slab, into an OME-Zarr store (or a TIFF).

    >>> table = supervox.regionprops_table(labels, intensity_image=volume)

gives scikit-image's regionprops_table numbers (label, area, bbox,
centroid, intensity_mean, ...) computed on all cores, and

    >>> pairs = supervox.adjacency_table(labels, intensity_image=volume)

the pairs of touching supervoxels (label-a < label-b, face_area,
boundary_intensity_mean), as `supervox-cli stats --adjacency` gives them.
The package is also a scikit-image dispatch backend (supervox.skimage_backend).
"""

from . import _lib
from ._adjacency import adjacency_table
from ._regionprops import regionprops_table
from ._slic import SupervoxError, get_num_threads, set_num_threads, slic, slic_file
from ._slic_to import slic_to

__version__ = _lib.version()


def cuda_available():
    """True when libsupervox was built with CUDA and a device is usable."""
    return bool(_lib.lib.supervox_cuda_available())


def cuda_release_cache():
    """Frees the GPU memory the library keeps between CUDA runs: the buffers
    of the last volume shape on each device (about 40 bytes per voxel),
    kept so that the next run of that shape allocates nothing."""
    _lib.lib.supervox_cuda_release_cache()


__all__ = ["slic", "slic_file", "slic_to", "regionprops_table", "adjacency_table", "set_num_threads", "get_num_threads", "cuda_available",
           "cuda_release_cache", "SupervoxError", "__version__"]
