"""Supervox as a scikit-image dispatch backend (skimage.util._backends).

scikit-image finds this module through the `skimage_backends` entry point
and info() through `skimage_backend_infos`; for each call of a function
that info() lists it asks can_has() and, when that says yes, calls what
get_implementation() returns.
"""

import os

import numpy as np

SLIC = "skimage.segmentation:slic"

_SUPPORTED_DTYPES = frozenset((
    "bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "int32", "int64",
    "float16", "float32", "float64"))


def info():
    """The backend's description for scikit-image (imported lazily: the
    module exists in scikit-image 0.26 and later)."""
    from skimage.util._backends import BackendInformation
    return BackendInformation([SLIC])


def _dtype_name(image):
    if isinstance(image, np.ndarray):
        return image.dtype.name
    cai = getattr(image, "__cuda_array_interface__", None)
    if cai is None:
        return None
    try:
        return np.dtype(cai["typestr"]).name
    except TypeError:
        return None


_PARAMETERS = ("image", "n_segments", "compactness", "max_num_iter", "sigma", "spacing",
               "convert2lab", "enforce_connectivity", "min_size_factor", "max_size_factor",
               "slic_zero", "start_label", "mask")


def can_has(name, *args, **kwargs):
    """Whether Supervox takes this call. Cheap: looks at attributes only,
    converts nothing.

    Arrays in device memory (CuPy, __cuda_array_interface__) are taken:
    scikit-image itself cannot compute on them. NumPy arrays stay with
    scikit-image unless $SUPERVOX_DISPATCH_NUMPY is 1, because its labels
    are the reference there and ours agree with them closely but not bit
    for bit (see SLIC semantics in the documentation)."""
    if name != SLIC:
        return False
    if len(args) > len(_PARAMETERS) or any(
            k not in _PARAMETERS[len(args):] and k != "channel_axis" for k in kwargs):
        return False
    image = args[0] if args else kwargs.get("image")
    if image is None or not hasattr(image, "ndim"):
        return False
    if isinstance(image, np.ndarray):
        if os.environ.get("SUPERVOX_DISPATCH_NUMPY") != "1":
            return False
    elif not hasattr(image, "__cuda_array_interface__"):
        return False
    return 2 <= image.ndim <= 4 and _dtype_name(image) in _SUPPORTED_DTYPES


def get_implementation(name):
    if name != SLIC:
        raise LookupError("Supervox implements %s only, not %s" % (SLIC, name))
    from . import slic
    return slic
