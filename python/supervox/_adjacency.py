"""adjacency_table: the pairs of touching supervoxels from libsupervox, the
numbers of ``supervox-cli stats --adjacency``."""

import numpy as np

from . import _lib
from ._regionprops import _Table


def adjacency_table(labels, intensity_image=None, spacing=None):
    """The pairs of touching labels of a 2D or 3D integer label image, in
    one pass on all cores (``set_num_threads``). Two labels touch where
    voxels of theirs share a face (6-neighbourhood in 3D, 4 in 2D). Label 0
    is background and touches nothing. Arguments as for
    ``regionprops_table``.

    Returns a dict of NumPy arrays, one entry per pair in increasing
    (``label-a``, ``label-b``) order:
    ``label-a`` < ``label-b``, ``num_faces`` (voxel faces they share),
    ``face_area`` (those faces' physical area from ``spacing``: in 3D a face
    across axis 0 counts ``spacing[1] * spacing[2]``, and so on; in 2D a
    face across axis 0 counts ``spacing[1]``; without ``spacing`` the face
    count), and with ``intensity_image`` ``boundary_intensity_mean``: over
    every shared face the mean of the two voxels' values, so
    sum(I(p) + I(q)) / (2 * num_faces), in the image's own values, with
    ``-C`` after it per channel C when the image has a channel axis.
    """
    with _Table(labels, intensity_image, spacing, adjacency=True) as table:
        n = int(_lib.lib.supervox_table_n_pairs(table.handle))
        out = {"label-a": table.pair_column("label-a", n).astype(table.label_dtype),
               "label-b": table.pair_column("label-b", n).astype(table.label_dtype),
               "num_faces": table.pair_column("faces", n).astype(np.int64),
               "face_area": table.pair_column("face_area", n)}
        if table.has_image:
            for key, c in table.channel_keys("boundary_intensity_mean"):
                out[key] = table.pair_column("boundary_mean-%d" % c, n)
        return out
