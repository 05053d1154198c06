"""supervox.adjacency_table against pairs counted here with NumPy, and
against the CSV of supervox-cli stats --adjacency."""

import csv
import os
import subprocess

import numpy as np
import pytest
from scipy import ndimage

import supervox


def adjacency_reference(labels, image=None, spacing=None):
    """Every pair of face neighbours (one step along one axis) with two
    different labels, neither 0: faces per pair, their area (the product
    of the other axes' spacing), and sum(I(p) + I(q)) / (2 * faces)."""
    ndim = labels.ndim
    spacing = np.ones(ndim) if spacing is None else np.asarray(spacing, dtype=np.float64)
    if image is not None and image.ndim == ndim:
        image = image[..., None]
    lo, hi, area, sums = [], [], [], []
    for axis in range(ndim):
        before = [slice(None)] * ndim
        after = [slice(None)] * ndim
        before[axis] = slice(None, -1)
        after[axis] = slice(1, None)
        p, q = labels[tuple(before)], labels[tuple(after)]
        face = (p != q) & (p != 0) & (q != 0)
        lo.append(np.minimum(p, q)[face].astype(np.int64))
        hi.append(np.maximum(p, q)[face].astype(np.int64))
        area.append(np.full(face.sum(), np.prod(np.delete(spacing, axis))))
        if image is not None:
            values = image.astype(np.float64)
            sums.append((values[tuple(before)] + values[tuple(after)])[face])
    lo, hi, area = np.concatenate(lo), np.concatenate(hi), np.concatenate(area)
    pairs, index = np.unique(np.stack([lo, hi], axis=1), axis=0, return_inverse=True)
    index = index.reshape(-1)
    faces = np.bincount(index, minlength=len(pairs))
    out = {"label-a": pairs[:, 0], "label-b": pairs[:, 1], "num_faces": faces,
           "face_area": np.bincount(index, weights=area, minlength=len(pairs))}
    if image is not None:
        sums = np.concatenate(sums)
        out["boundary_mean"] = np.stack(
            [np.bincount(index, weights=sums[:, c], minlength=len(pairs)) / (2.0 * faces)
             for c in range(image.shape[-1])], axis=1)
    return out


def assert_matches_reference(ours, ref, channels=None):
    np.testing.assert_array_equal(ours["label-a"], ref["label-a"])
    np.testing.assert_array_equal(ours["label-b"], ref["label-b"])
    np.testing.assert_array_equal(ours["num_faces"], ref["num_faces"])
    np.testing.assert_allclose(ours["face_area"], ref["face_area"], rtol=1e-13, atol=0)
    if "boundary_mean" not in ref:
        assert not any(key.startswith("boundary") for key in ours)
        return
    keys = (["boundary_intensity_mean"] if channels is None
            else ["boundary_intensity_mean-%d" % c for c in range(channels)])
    assert [key for key in ours if key.startswith("boundary")] == keys
    for c, key in enumerate(keys):
        np.testing.assert_allclose(ours[key], ref["boundary_mean"][:, c], rtol=1e-12, atol=0,
                                   err_msg=key)


def segmented_volume():
    rng = np.random.default_rng(11)
    base = ndimage.gaussian_filter(rng.random((10, 24, 22)), 2.0)
    image = (base / base.max() * 40000 + rng.integers(0, 9000, base.shape)).astype(np.uint16)
    labels = supervox.slic(image, n_segments=40, compactness=0.1, channel_axis=None,
                           start_label=1)
    labels[:2, :5, :] = 0  # some background
    return labels, image


def test_random_labels_two_channels():
    rng = np.random.default_rng(7)
    labels = rng.integers(0, 6, (5, 7, 6)).astype(np.int32)
    image = rng.random((5, 7, 6, 2))
    ours = supervox.adjacency_table(labels, intensity_image=image)
    ref = adjacency_reference(labels, image)
    assert len(ref["label-a"]) == 10  # every pair of 1 … 5 touches
    assert_matches_reference(ours, ref, channels=2)
    small = supervox.adjacency_table(labels.astype(np.uint8), intensity_image=image)
    assert small["label-a"].dtype == np.uint8
    np.testing.assert_array_equal(small["label-b"], ours["label-b"])


def test_slic_labels_with_spacing():
    labels, image = segmented_volume()
    spacing = (2.0, 0.5, 0.3)
    ours = supervox.adjacency_table(labels, intensity_image=image, spacing=spacing)
    ref = adjacency_reference(labels, image, spacing)
    assert len(ref["label-a"]) > 40
    assert_matches_reference(ours, ref)
    plain = supervox.adjacency_table(labels)
    assert_matches_reference(plain, adjacency_reference(labels))
    np.testing.assert_array_equal(plain["face_area"], plain["num_faces"])


def test_image_2d():
    rng = np.random.default_rng(2)
    labels = rng.integers(0, 4, (9, 11)).astype(np.int64)
    image = rng.integers(0, 255, (9, 11)).astype(np.uint8)
    ours = supervox.adjacency_table(labels, intensity_image=image, spacing=(0.5, 3.0))
    assert_matches_reference(ours, adjacency_reference(labels, image, (0.5, 3.0)))


CLI = os.environ.get("SUPERVOX_CLI")


@pytest.mark.skipif(not CLI, reason="SUPERVOX_CLI not set")
@pytest.mark.parametrize("channels", [None, 3])
def test_same_pairs_as_cli_csv(tmp_path, channels):
    import tifffile
    labels, image = segmented_volume()
    # Calibrated as ImageJ writes it: z 2 µm, y 0.5 µm, x 0.25 µm.
    tifffile.imwrite(tmp_path / "labels.tif", labels.astype(np.uint16), imagej=True,
                     resolution=(4.0, 2.0),
                     metadata={"spacing": 2.0, "unit": "micron", "axes": "ZYX"})
    if channels is None:
        tifffile.imwrite(tmp_path / "image.tif", image, photometric="minisblack")
        means = ["boundary_mean"]
    else:
        image = np.stack([image >> 8, image & 255, image >> 4 & 255], axis=-1).astype(np.uint8)
        tifffile.imwrite(tmp_path / "image.tif", image, photometric="rgb")
        means = ["boundary_mean_c%d" % c for c in range(channels)]
    subprocess.run([CLI, "stats", str(tmp_path / "labels.tif"), "--image",
                    str(tmp_path / "image.tif"), "-o", str(tmp_path / "table.csv"),
                    "--adjacency", str(tmp_path / "pairs.csv")], check=True, capture_output=True)
    with open(tmp_path / "pairs.csv", newline="") as f:
        rows = list(csv.reader(f))
    assert rows[0] == ["a", "b", "faces", "area_um2"] + means
    cli = np.array(rows[1:], dtype=np.float64)

    ours = supervox.adjacency_table(labels, intensity_image=image, spacing=(2.0, 0.5, 0.25))
    assert len(ours["label-a"]) == len(cli) > 40
    np.testing.assert_array_equal(ours["label-a"], cli[:, 0])
    np.testing.assert_array_equal(ours["label-b"], cli[:, 1])
    np.testing.assert_array_equal(ours["num_faces"], cli[:, 2])
    # The CSV holds 12 significant digits.
    np.testing.assert_allclose(ours["face_area"], cli[:, 3], rtol=1e-11, atol=0)
    keys = (["boundary_intensity_mean"] if channels is None
            else ["boundary_intensity_mean-%d" % c for c in range(channels)])
    for c, key in enumerate(keys):
        np.testing.assert_allclose(ours[key], cli[:, 4 + c], rtol=1e-11, atol=0, err_msg=key)


def test_errors():
    labels, image = segmented_volume()
    with pytest.raises(ValueError, match="shape"):
        supervox.adjacency_table(labels, intensity_image=image[:, :-1])
    with pytest.raises(TypeError, match="integer"):
        supervox.adjacency_table(labels.astype(np.float32))
    with pytest.raises(TypeError, match="2D or 3D"):
        supervox.adjacency_table(labels[None])
    with pytest.raises(ValueError, match="spacing"):
        supervox.adjacency_table(labels, spacing=(1.0, 0.0, 1.0))
    with pytest.raises(ValueError, match="int32"):
        supervox.adjacency_table(labels.astype(np.int64) + 2**33)
