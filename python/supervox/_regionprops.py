"""regionprops_table: per-supervoxel statistics from libsupervox, under
scikit-image's key names."""

import ctypes

import numpy as np

from . import _lib
from ._arrays import host_view
from ._slic import _raise_for, get_num_threads


class _Table:
    """The engine's table of `labels` (and of `intensity_image`), checked
    and converted as regionprops_table documents, freed on leaving a
    ``with`` block. ndim, spacing (per axis of `labels`) and channels
    (None without a channel axis) are the caller's view of it."""

    def __init__(self, labels, intensity_image, spacing, adjacency=False):
        labels = np.asarray(labels)
        if labels.ndim not in (2, 3):
            raise TypeError("labels must be 2D or 3D, got %d dimensions" % labels.ndim)
        if labels.dtype.kind not in "iub":
            raise TypeError("labels must be an integer array, got %s" % labels.dtype)
        ndim = labels.ndim
        if spacing is None:
            spacing = np.ones(ndim)
        spacing = np.asarray(spacing, dtype=np.float64).reshape(-1)
        if spacing.shape != (ndim,) or not np.all(spacing > 0):
            raise ValueError("spacing must hold %d positive values, got %r" % (ndim, spacing))

        lab = labels[None] if ndim == 2 else labels
        lab_view = host_view(lab)
        c_labels = lab_view.as_c(lab.shape + (1,), lab_view.strides + (0,))

        c_image = None
        channels = None
        if intensity_image is not None:
            image = np.asarray(intensity_image)
            if image.shape[:ndim] != labels.shape or image.ndim not in (ndim, ndim + 1):
                raise ValueError("intensity_image has shape %r, labels %r: they must match"
                                 % (image.shape, labels.shape))
            if image.dtype == np.float16:
                image = image.astype(np.float32)
            if image.ndim == ndim + 1:
                channels = image.shape[-1]
            else:
                image = image[..., None]
            if ndim == 2:
                image = image[None]
            image_view = host_view(image)
            c_image = image_view.as_c(image.shape, image_view.strides)

        options = _lib.SupervoxTableOptions()
        _lib.lib.supervox_table_options_init(ctypes.byref(options))
        options.n_threads = get_num_threads()
        options.adjacency = int(adjacency)
        # A 2D image is one slice of unit depth.
        options.spacing[3 - ndim:] = spacing.tolist()
        self.handle = ctypes.c_void_p()
        status = _lib.lib.supervox_table_new(ctypes.byref(c_labels),
                                             ctypes.byref(c_image) if c_image is not None
                                             else None,
                                             ctypes.byref(options), ctypes.byref(self.handle))
        if status != _lib.OK:
            _raise_for(status, _lib.last_error())
        self.label_dtype = labels.dtype if labels.dtype.kind != "b" else np.dtype(np.int64)
        self.ndim = ndim
        self.spacing = spacing
        self.has_image = c_image is not None
        self.channels = channels

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _lib.lib.supervox_table_free(self.handle)

    def _read(self, function, name, n):
        out = np.empty(n, dtype=np.float64)
        status = function(self.handle, name.encode(), out.ctypes.data)
        if status != _lib.OK:
            _raise_for(status, _lib.last_error())
        return out

    def column(self, name, n):
        return self._read(_lib.lib.supervox_table_column, name, n)

    def pair_column(self, name, n):
        return self._read(_lib.lib.supervox_table_pair_column, name, n)

    def channel_keys(self, name):
        """(key, channel) per channel: `name` alone without a channel axis,
        `name-C` with one, as regionprops_table names them."""
        if self.channels is None:
            return [(name, 0)]
        return [("%s-%d" % (name, c), c) for c in range(self.channels)]


def regionprops_table(labels, intensity_image=None, spacing=None):
    """Per-label statistics of a 2D or 3D integer label image, as
    scikit-image's ``skimage.measure.regionprops_table`` names them, in one
    pass on all cores (``set_num_threads``). Label 0 is background.

    Returns a dict of NumPy arrays, one entry per label in increasing order:
    ``label``, ``area`` (voxels times the voxel size from ``spacing``),
    ``num_pixels``, ``bbox-0`` … (min then max per axis, half-open),
    ``centroid-0`` … (times ``spacing``), and with ``intensity_image``
    (same shape, optionally a last channel axis) ``intensity_mean``,
    ``intensity_std`` (ddof 0), ``intensity_min``, ``intensity_max`` in the
    image's own values, with ``-C`` after each per channel C when the image
    has a channel axis.
    """
    with _Table(labels, intensity_image, spacing) as table:
        spacing = table.spacing
        n = int(_lib.lib.supervox_table_n_rows(table.handle))
        axes = range(3 - table.ndim, 3)  # the z axis of a 2D image is left out
        voxels = table.column("voxels", n).astype(np.int64)
        out = {"label": table.column("label", n).astype(table.label_dtype)}
        out["area"] = voxels * float(np.prod(spacing)) if np.any(spacing != 1) else voxels
        out["num_pixels"] = voxels
        bbox = [table.column("bbox-%d" % a, n) for a in axes]
        bbox += [table.column("bbox-%d" % (a + 3), n) for a in axes]
        for i, column in enumerate(bbox):
            out["bbox-%d" % i] = column.astype(np.int64)
        for i, a in enumerate(axes):
            out["centroid-%d" % i] = table.column("centroid-%d" % a, n) * spacing[i]
        if table.has_image:
            for stat in ("mean", "std", "min", "max"):
                for key, c in table.channel_keys("intensity_" + stat):
                    out[key] = table.column("intensity_%s-%d" % (stat, c), n)
        return out
