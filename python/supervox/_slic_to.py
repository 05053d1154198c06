"""supervox.slic_to: slic on an array larger than memory (a zarr.Array, a
Dask array, or anything with .shape, .dtype and slicing along its first
axis), written to a label file. The library's streamed run pulls z-slabs
through a callback, ``np.asarray(image[z0:z1])``, so the array is never
loaded whole nor copied."""

import ctypes
import os

import numpy as np

from . import _lib
from ._slic import _BACKENDS, _call, _params, _path, _sigma3, _spacing3

# The sample types the streamed run reads; float16 is served as float32,
# which slic takes the same way (floats are used as they are).
_SERVED = {"uint8", "uint16", "uint32", "int8", "int16", "int32", "float32", "float64"}


def _layout(shape, dtype, channel_axis):
    """(nz, ny, nx, channels, is_2d) of an image slic_to can read a z-slab
    at a time, with slic's errors for the rest."""
    ndim = len(shape)
    if ndim == 2 and channel_axis is not None:
        raise ValueError(
            f"channel_axis={channel_axis} indicates multichannel, which is not "
            "supported for a two-dimensional image; use channel_axis=None if "
            "the image is grayscale")
    if channel_axis is not None:
        if not -ndim <= channel_axis < ndim:
            raise ValueError("channel_axis %d is out of bounds for an image of %d dimensions"
                             % (channel_axis, ndim))
        if channel_axis % ndim != ndim - 1:
            raise ValueError("slic_to reads the image in slabs along its first axis: the "
                             "channel axis must be the last one (channel_axis=-1), or None")
        spatial, n_channels = tuple(shape[:-1]), int(shape[-1])
    else:
        spatial, n_channels = tuple(shape), 1
    if len(spatial) not in (2, 3):
        raise ValueError(
            f"image has {ndim} dimensions; slic takes a 2D or 3D image, plus a channel "
            f"axis when channel_axis is not None (got channel_axis={channel_axis})")
    if np.prod(shape) == 0:
        raise ValueError("zero-size array to reduction operation minimum which has no identity")
    if dtype.name not in _SERVED and dtype.name != "float16":
        raise ValueError("slic_to reads uint8, uint16, uint32, int8, int16, int32, float16, "
                         "float32 or float64 images, not %s; convert it (for a Dask array, "
                         "image.astype(...)) first" % dtype)
    is_2d = len(spatial) == 2
    zyx = ((1,) + spatial) if is_2d else spatial
    return zyx[0], zyx[1], zyx[2], n_channels, is_2d


class _Reader:
    """The C read function: slices [z0, z1) of `image` into the library's
    buffer. An exception is kept for the caller and ends the run."""

    def __init__(self, image, served, zyxc, is_2d):
        self.image = image
        self.served = served
        self.zyxc = zyxc
        self.is_2d = is_2d
        self.error = None
        # Kept here, and so alive as long as the run that calls it.
        self.function = _lib.SLAB_READ_FUNC(self._read)

    def _read(self, z0, z1, samples, user_data, message, message_size):
        try:
            block = self.image[:, :] if self.is_2d else self.image[z0:z1]
            block = np.asarray(block).astype(self.served, copy=False)
            shape = (z1 - z0,) + self.zyxc[1:]
            if block.size != int(np.prod(shape)):
                raise ValueError("image[%d:%d] gave a block of shape %s, not %s"
                                 % (z0, z1, block.shape, shape))
            n = block.size * self.served.itemsize
            out = np.frombuffer((ctypes.c_char * n).from_address(samples), dtype=self.served)
            out[...] = block.reshape(-1)
            return 0
        except BaseException as exc:  # raised again in the caller's thread
            if self.error is None:
                self.error = exc
            text = ("%s: %s" % (type(exc).__name__, exc)).encode("utf-8", "replace")
            text = text[:max(int(message_size) - 1, 0)]
            ctypes.memmove(message, text + b"\0", len(text) + 1)
            return 1


def slic_to(image, out, n_segments=100, compactness=10.0, max_num_iter=10, sigma=0, spacing=None,
            convert2lab=None, enforce_connectivity=True, min_size_factor=0.5, max_size_factor=3,
            slic_zero=False, start_label=1, mask=None, *, channel_axis=-1, backend="auto",
            memory_limit=0, connectivity_rule="connected"):
    """``slic`` on an array that need not fit in memory, into a label file.

    image : a ``zarr.Array``, a ``dask.array.Array``, a NumPy array or
        anything with ``.shape``, ``.dtype`` and slicing along the first
        axis. The library streams it slab by slab, asking for
        ``np.asarray(image[z0:z1])`` (a Dask array computes only those
        slices), and never holds it whole: memory stays within
        ``memory_limit`` bytes (0: what the machine has free) plus one slab
        of the array's own. Temporary files go beside ``out``.
    out : path of the labels: an OME-Zarr store (Zarr v2, the labels at
        ``"0"``: ``zarr.open_group(out)["0"]``) when it ends in ``.zarr``,
        else a TIFF, as ``supervox-cli slic -o`` writes them (uint32, int32
        when a label is -1).
    mask : None, the path of a TIFF or OME-Zarr mask of the volume's
        shape, or an array of that shape (a NumPy, zarr or Dask array, of
        bool or any integer or float type): nonzero = in. It is read slab
        by slab as well, never whole.

    The other parameters are ``slic`` 's; the channel axis, when there is
    one, must be the last. The labels are ``slic`` 's on the same array,
    voxel for voxel. Returns ``out`` (a str). An exception raised while
    reading the image (by zarr, Dask, or the array) ends the run and is
    raised again here, and no output is left behind.
    """
    if backend not in _BACKENDS:
        raise ValueError("backend must be 'auto', 'cpu' or 'cuda', got %r" % (backend,))
    if start_label not in [0, 1]:
        raise ValueError("start_label should be 0 or 1.")
    if int(memory_limit) < 0:
        raise ValueError("memory_limit must be >= 0 bytes, got %r" % (memory_limit,))
    mask_is_path = isinstance(mask, (str, bytes, os.PathLike))
    if mask is not None and not mask_is_path and not (hasattr(mask, "shape")
                                                      and hasattr(mask, "dtype")):
        raise TypeError("slic_to takes a mask as an array or as the path of a TIFF or "
                        "OME-Zarr mask, got %r" % (type(mask),))
    output = _path(out, "out")
    dtype = np.dtype(image.dtype)
    nz, ny, nx, n_channels, is_2d = _layout(tuple(int(n) for n in image.shape), dtype,
                                            channel_axis)
    served = np.dtype(np.float32) if dtype.name == "float16" else dtype

    lab = _lib.CONVERT2LAB_NO
    if channel_axis is not None and (convert2lab or convert2lab is None):
        if n_channels != 3 and convert2lab:
            raise ValueError("Lab colorspace conversion requires a RGB image.")
        if n_channels == 3:
            lab = _lib.CONVERT2LAB_YES
    float_dtype = np.float32 if dtype.name in ("float16", "float32") else np.float64
    spacing3 = _spacing3(spacing, is_2d, float_dtype)
    sigma3, per_axis = _sigma3(sigma, is_2d, float_dtype)
    params = _params(n_segments, compactness, max_num_iter, sigma3, per_axis, spacing3,
                     enforce_connectivity, min_size_factor, max_size_factor, slic_zero,
                     start_label, connectivity_rule)
    params.convert2lab = lab

    reader = _Reader(image, served, (nz, ny, nx, n_channels), is_2d)
    source = _source(image, reader, served, (nz, ny, nx, n_channels))
    readers = [reader]
    try:
        if mask is None or mask_is_path:
            _call(_lib.lib.supervox_slic_source,
                  (ctypes.byref(source), output,
                   _path(mask, "mask") if mask is not None else None, ctypes.byref(params),
                   _BACKENDS[backend], ctypes.c_uint64(int(memory_limit))),
                  _lib.SupervoxFileInfo)
        else:
            mask_served = _mask_served(mask, (nz, ny, nx), is_2d)
            mask_reader = _Reader(mask, mask_served, (nz, ny, nx, 1), is_2d)
            readers.append(mask_reader)
            mask_source = _source(mask, mask_reader, mask_served, (nz, ny, nx, 1), "mask ")
            _call(_lib.lib.supervox_slic_sources,
                  (ctypes.byref(source), ctypes.byref(mask_source), output,
                   ctypes.byref(params), _BACKENDS[backend],
                   ctypes.c_uint64(int(memory_limit))),
                  _lib.SupervoxFileInfo)
    except OSError as failure:
        for r in readers:
            if r.error is not None:
                raise r.error from failure
        raise
    return os.fsdecode(output)


def _source(array, reader, served, zyxc, what=""):
    """The C slab source that `reader` fills from `array`, named in
    messages by `what` and the array's type."""
    source = _lib.SupervoxSlabSource()
    _lib.lib.supervox_slab_source_init(ctypes.byref(source))
    source.dtype = _lib.DTYPES[served.name]
    source.shape[:] = list(zyxc)
    source.name = ("%s%s.%s" % (what, type(array).__module__.split(".")[0],
                                   type(array).__name__)).encode()
    source.read = reader.function
    return source


def _mask_served(mask, zyx, is_2d):
    """The type a mask array is served in (its own where the library reads
    it; bool as uint8; 64-bit and float16 as float64, exact for "nonzero"),
    after slic's check of its shape."""
    shape = tuple(int(n) for n in mask.shape)
    expected = zyx[1:] if is_2d else zyx
    if shape != expected:
        raise ValueError("image and mask should have the same shape: image is %s, mask is %s"
                         % ("×".join(map(str, expected)), "×".join(map(str, shape))))
    dtype = np.dtype(mask.dtype)
    if dtype == np.bool_:
        return np.dtype(np.uint8)
    if dtype.name in _SERVED:
        return dtype
    if dtype.kind in "iufb":
        return np.dtype(np.float64)
    raise ValueError("a mask array holds bool, integer or float values, not %s" % dtype)
