"""supervox.regionprops_table against scikit-image's regionprops_table."""

import numpy as np
import pytest
from scipy import ndimage
from skimage.measure import regionprops_table as skimage_table

import supervox

PROPERTIES = ["label", "area", "bbox", "centroid", "intensity_mean", "intensity_min",
              "intensity_max"]


def segmented_volume():
    rng = np.random.default_rng(3)
    base = ndimage.gaussian_filter(rng.random((12, 30, 28)), 2.0)
    image = (base / base.max() * 40000 + rng.integers(0, 9000, base.shape)).astype(np.uint16)
    labels = supervox.slic(image, n_segments=80, compactness=0.1, channel_axis=None,
                           start_label=1)
    labels[:2, :5, :] = 0  # some background
    return labels, image


def assert_matches(ours, ref, keys):
    for key in keys:
        if key.startswith(("label", "area", "bbox")):
            np.testing.assert_array_equal(ours[key], ref[key], err_msg=key)
        elif key.startswith("centroid"):
            np.testing.assert_allclose(ours[key], ref[key], rtol=0, atol=1e-9, err_msg=key)
        else:
            np.testing.assert_allclose(ours[key], ref[key], rtol=1e-6, atol=0, err_msg=key)


def test_volume_matches_skimage():
    labels, image = segmented_volume()
    ours = supervox.regionprops_table(labels, intensity_image=image)
    ref = skimage_table(labels, intensity_image=image, properties=PROPERTIES)
    assert_matches(ours, ref, ref.keys())
    assert 0 not in ours["label"]
    std = ndimage.standard_deviation(image.astype(float), labels, ref["label"])
    np.testing.assert_allclose(ours["intensity_std"], std, rtol=1e-6)


def test_image_2d_with_channels():
    rng = np.random.default_rng(5)
    labels = (np.arange(40)[:, None] // 7 * 10 + np.arange(35)[None, :] // 6).astype(np.int64)
    image = rng.random((40, 35, 3)).astype(np.float32)
    ours = supervox.regionprops_table(labels, intensity_image=image)
    ref = skimage_table(labels, intensity_image=image, properties=PROPERTIES)
    assert set(ref) <= set(ours)
    assert "bbox-4" not in ours and "centroid-2" not in ours
    assert_matches(ours, ref, ref.keys())


def test_spacing_scales_area_and_centroid():
    labels, _ = segmented_volume()
    plain = supervox.regionprops_table(labels)
    scaled = supervox.regionprops_table(labels, spacing=(2.0, 0.5, 0.25))
    np.testing.assert_allclose(scaled["area"], plain["area"] * 0.25)
    np.testing.assert_array_equal(scaled["num_pixels"], plain["area"])
    np.testing.assert_allclose(scaled["centroid-0"], plain["centroid-0"] * 2.0)
    np.testing.assert_allclose(scaled["centroid-2"], plain["centroid-2"] * 0.25)
    np.testing.assert_array_equal(scaled["bbox-5"], plain["bbox-5"])
    assert "intensity_mean" not in plain


def test_same_numbers_for_any_thread_count():
    labels, image = segmented_volume()
    image = image.astype(np.float64) / 7.0  # sums that round
    before = supervox.get_num_threads()
    try:
        supervox.set_num_threads(1)
        one = supervox.regionprops_table(labels, intensity_image=image)
        supervox.set_num_threads(5)
        five = supervox.regionprops_table(labels, intensity_image=image)
    finally:
        supervox.set_num_threads(before)
    for key in one:
        assert one[key].tobytes() == five[key].tobytes(), key


def test_errors():
    labels, image = segmented_volume()
    with pytest.raises(ValueError, match="shape"):
        supervox.regionprops_table(labels, intensity_image=image[:, :-1])
    with pytest.raises(TypeError, match="integer"):
        supervox.regionprops_table(labels.astype(np.float32))
    with pytest.raises(ValueError, match="int32"):
        supervox.regionprops_table(labels.astype(np.int64) + 2**33)
