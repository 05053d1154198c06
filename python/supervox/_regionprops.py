"""regionprops_table: per-supervoxel statistics from libsupervox, under
scikit-image's key names."""

import ctypes

import numpy as np

from . import _lib
from ._arrays import host_view
from ._slic import _raise_for, get_num_threads


def _column(table, name, n):
    out = np.empty(n, dtype=np.float64)
    status = _lib.lib.supervox_table_column(table, name.encode(), out.ctypes.data)
    if status != _lib.OK:
        _raise_for(status, _lib.last_error())
    return out


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
    table = ctypes.c_void_p()
    status = _lib.lib.supervox_table_new(ctypes.byref(c_labels),
                                         ctypes.byref(c_image) if c_image is not None else None,
                                         ctypes.byref(options), ctypes.byref(table))
    if status != _lib.OK:
        _raise_for(status, _lib.last_error())
    try:
        n = int(_lib.lib.supervox_table_n_rows(table))
        axes = range(3 - ndim, 3)  # the z axis of a 2D image is left out
        voxels = _column(table, "voxels", n).astype(np.int64)
        out = {"label": _column(table, "label", n).astype(labels.dtype if labels.dtype.kind != "b"
                                                          else np.int64)}
        out["area"] = voxels * float(np.prod(spacing)) if np.any(spacing != 1) else voxels
        out["num_pixels"] = voxels
        bbox = [_column(table, "bbox-%d" % a, n) for a in axes]
        bbox += [_column(table, "bbox-%d" % (a + 3), n) for a in axes]
        for i, column in enumerate(bbox):
            out["bbox-%d" % i] = column.astype(np.int64)
        for i, a in enumerate(axes):
            out["centroid-%d" % i] = _column(table, "centroid-%d" % a, n) * spacing[i]
        if c_image is not None:
            for stat in ("mean", "std", "min", "max"):
                for c in range(channels or 1):
                    key = "intensity_%s" % stat + ("" if channels is None else "-%d" % c)
                    out[key] = _column(table, "intensity_%s-%d" % (stat, c), n)
        return out
    finally:
        _lib.lib.supervox_table_free(table)
