"""ctypes bindings to libsupervox's C API (supervox/supervox.h).

The library is found, in this order, at $SUPERVOX_LIBRARY, beside the
package as a wheel built by meson-python places it, in build/ of the source
checkout the package is imported from, and on the system's library path.
"""

import ctypes
import ctypes.util
import glob
import os

API_VERSION_MAJOR = 0
# The oldest minor version with every function bound below.
API_VERSION_MINOR = 8

OK = 0
ERROR_INVALID_ARGUMENT = -1
ERROR_INVALID_PARAM = -2
ERROR_INVALID_DATA = -3
ERROR_NON_FINITE = -4
ERROR_NO_MEMORY = -5
ERROR_BACKEND = -6
ERROR_CANCELLED = -7
ERROR_IO = -8

BACKEND_AUTO, BACKEND_CPU, BACKEND_CUDA = 0, 1, 2
CONVERT2LAB_AUTO, CONVERT2LAB_NO, CONVERT2LAB_YES = -1, 0, 1
# SupervoxConnectivityRule, by the name supervox.slic takes.
CONNECTIVITY_RULES = {"connected": 0, "legacy": 1}

# SupervoxDtype codes by NumPy dtype name.
DTYPES = {
    "bool": 0, "uint8": 1, "uint16": 2, "uint32": 3, "uint64": 4,
    "int8": 5, "int16": 6, "int32": 7, "int64": 8,
    "float16": 9, "float32": 10, "float64": 11,
}


class SupervoxArray(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("dtype", ctypes.c_int),
        ("shape", ctypes.c_int64 * 4),
        ("strides", ctypes.c_int64 * 4),
    ]


class SupervoxParams(ctypes.Structure):
    _fields_ = [
        ("n_segments", ctypes.c_int64),
        ("compactness", ctypes.c_double),
        ("max_num_iter", ctypes.c_int32),
        ("sigma", ctypes.c_double * 3),
        ("sigma_per_axis", ctypes.c_int32),
        ("spacing", ctypes.c_double * 3),
        ("convert2lab", ctypes.c_int),
        ("enforce_connectivity", ctypes.c_int32),
        ("min_size_factor", ctypes.c_double),
        ("max_size_factor", ctypes.c_double),
        ("slic_zero", ctypes.c_int32),
        ("start_label", ctypes.c_int32),
        ("n_threads", ctypes.c_int32),
        ("connectivity_rule", ctypes.c_int),
    ]


PROGRESS_FUNC = ctypes.CFUNCTYPE(None, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_void_p)


class SupervoxControl(ctypes.Structure):
    _fields_ = [
        ("progress", PROGRESS_FUNC),
        ("user_data", ctypes.c_void_p),
        ("cancel", ctypes.POINTER(ctypes.c_int32)),
    ]


class SupervoxRunInfo(ctypes.Structure):
    _fields_ = [
        ("n_clusters", ctypes.c_int64),
        ("n_labels", ctypes.c_int64),
        ("iterations", ctypes.c_int32),
        ("backend", ctypes.c_int),
    ]


class SupervoxFileInfo(ctypes.Structure):
    _fields_ = [
        ("n_clusters", ctypes.c_int64),
        ("n_labels", ctypes.c_int64),
        ("iterations", ctypes.c_int32),
        ("backend", ctypes.c_int),
        ("streamed", ctypes.c_int32),
    ]


def _candidates():
    env = os.environ.get("SUPERVOX_LIBRARY")
    if env:
        yield env
        return
    here = os.path.dirname(os.path.abspath(__file__))
    # meson-python puts the library of a wheel in .<project>.mesonpy.libs.
    for path in sorted(glob.glob(os.path.join(here, "..", ".supervox.mesonpy.libs",
                                              "libsupervox.so*"))):
        yield path
    # A source checkout built into build/ (tools/build.sh), used in place.
    in_tree = os.path.join(here, "..", "..", "build", "lib", "libsupervox.so.%d"
                           % API_VERSION_MAJOR)
    if os.path.exists(in_tree):
        yield in_tree
    yield "libsupervox.so.%d" % API_VERSION_MAJOR
    found = ctypes.util.find_library("supervox")
    if found:
        yield found


def _load():
    errors = []
    for path in _candidates():
        try:
            lib = ctypes.CDLL(path)
        except OSError as exc:
            errors.append(str(exc))
            continue
        return lib
    raise ImportError("libsupervox could not be loaded (set SUPERVOX_LIBRARY to its path): "
                      + "; ".join(errors))


lib = _load()

lib.supervox_version.restype = ctypes.c_char_p
lib.supervox_version.argtypes = []
lib.supervox_api_version.restype = ctypes.c_int
lib.supervox_api_version.argtypes = []
lib.supervox_params_init.restype = None
lib.supervox_params_init.argtypes = [ctypes.POINTER(SupervoxParams)]
lib.supervox_cuda_available.restype = ctypes.c_int
lib.supervox_cuda_available.argtypes = []
lib.supervox_last_error.restype = ctypes.c_char_p
lib.supervox_last_error.argtypes = []
lib.supervox_status_name.restype = ctypes.c_char_p
lib.supervox_status_name.argtypes = [ctypes.c_int]
lib.supervox_slic.restype = ctypes.c_int
lib.supervox_slic.argtypes = [
    ctypes.POINTER(SupervoxArray), ctypes.POINTER(SupervoxArray),
    ctypes.POINTER(SupervoxParams), ctypes.c_int, ctypes.c_void_p, ctypes.c_int,
    ctypes.POINTER(SupervoxControl), ctypes.POINTER(SupervoxRunInfo)]
lib.supervox_slic_device.restype = ctypes.c_int
lib.supervox_slic_device.argtypes = [
    ctypes.POINTER(SupervoxArray), ctypes.POINTER(SupervoxArray),
    ctypes.POINTER(SupervoxParams), ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p,
    ctypes.POINTER(SupervoxControl), ctypes.POINTER(SupervoxRunInfo)]

lib.supervox_slic_file.restype = ctypes.c_int
lib.supervox_slic_file.argtypes = [
    ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(SupervoxParams),
    ctypes.c_int, ctypes.c_uint64, ctypes.POINTER(SupervoxControl),
    ctypes.POINTER(SupervoxFileInfo)]



class SupervoxTableOptions(ctypes.Structure):
    _fields_ = [
        ("has_background", ctypes.c_int32),
        ("background", ctypes.c_int64),
        ("n_threads", ctypes.c_int32),
        ("adjacency", ctypes.c_int32),
        ("spacing", ctypes.c_double * 3),
    ]


if (lib.supervox_api_version() // 1000 != API_VERSION_MAJOR
        or lib.supervox_api_version() % 1000 < API_VERSION_MINOR):
    raise ImportError("libsupervox API version %d does not match this package (%d.%d or a later "
                      "minor)" % (lib.supervox_api_version(), API_VERSION_MAJOR,
                                  API_VERSION_MINOR))

# int read(z0, z1, samples, user_data, message, message_size)
SLAB_READ_FUNC = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p,
                                  ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)


class SupervoxSlabSource(ctypes.Structure):
    _fields_ = [
        ("dtype", ctypes.c_int),
        ("shape", ctypes.c_int64 * 4),
        ("spacing", ctypes.c_double * 3),
        ("unit", ctypes.c_char_p),
        ("name", ctypes.c_char_p),
        ("read", SLAB_READ_FUNC),
        ("user_data", ctypes.c_void_p),
    ]


lib.supervox_slab_source_init.restype = None
lib.supervox_slab_source_init.argtypes = [ctypes.POINTER(SupervoxSlabSource)]
lib.supervox_slic_source.restype = ctypes.c_int
lib.supervox_slic_source.argtypes = [
    ctypes.POINTER(SupervoxSlabSource), ctypes.c_char_p, ctypes.c_char_p,
    ctypes.POINTER(SupervoxParams), ctypes.c_int, ctypes.c_uint64,
    ctypes.POINTER(SupervoxControl), ctypes.POINTER(SupervoxFileInfo)]
lib.supervox_slic_sources.restype = ctypes.c_int
lib.supervox_slic_sources.argtypes = [
    ctypes.POINTER(SupervoxSlabSource), ctypes.POINTER(SupervoxSlabSource), ctypes.c_char_p,
    ctypes.POINTER(SupervoxParams), ctypes.c_int, ctypes.c_uint64,
    ctypes.POINTER(SupervoxControl), ctypes.POINTER(SupervoxFileInfo)]

lib.supervox_table_options_init.restype = None
lib.supervox_table_options_init.argtypes = [ctypes.POINTER(SupervoxTableOptions)]
lib.supervox_table_new.restype = ctypes.c_int
lib.supervox_table_new.argtypes = [
    ctypes.POINTER(SupervoxArray), ctypes.POINTER(SupervoxArray),
    ctypes.POINTER(SupervoxTableOptions), ctypes.POINTER(ctypes.c_void_p)]
lib.supervox_table_free.restype = None
lib.supervox_table_free.argtypes = [ctypes.c_void_p]
lib.supervox_table_n_rows.restype = ctypes.c_int64
lib.supervox_table_n_rows.argtypes = [ctypes.c_void_p]
lib.supervox_table_column.restype = ctypes.c_int
lib.supervox_table_column.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
lib.supervox_table_n_pairs.restype = ctypes.c_int64
lib.supervox_table_n_pairs.argtypes = [ctypes.c_void_p]
lib.supervox_table_pair_column.restype = ctypes.c_int
lib.supervox_table_pair_column.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]

lib.supervox_cuda_release_cache.restype = None
lib.supervox_cuda_release_cache.argtypes = []


def version():
    return lib.supervox_version().decode()


def last_error():
    return lib.supervox_last_error().decode("utf-8", "replace")
