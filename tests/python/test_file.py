"""supervox.slic_file: a TIFF in, a label TIFF out, in memory or streamed
slab by slab when memory is short, with the same bytes either way and the
labels of supervox.slic on the same volume; bad files raise and leave no
output; on a GPU machine the CUDA backend gives the CPU's files."""

import os

import numpy as np
import pytest
import tifffile

import supervox

SHAPE = (26, 40, 36)
# Below what the in-memory run of SHAPE needs, above what a slab needs.
SHORT = 300_000


def volume():
    z, y, x = np.mgrid[0:SHAPE[0], 0:SHAPE[1], 0:SHAPE[2]]
    rng = np.random.default_rng(3)
    v = 1000 + 400 * np.sin(z / 3.0) * np.cos(y / 5.0) + 250 * ((x // 7 + y // 6 + z // 5) % 3)
    return (v + 60 * rng.standard_normal(SHAPE)).astype(np.uint16)


def ball():
    z, y, x = np.mgrid[0:SHAPE[0], 0:SHAPE[1], 0:SHAPE[2]]
    return ((z - 13) ** 2 + (y - 20) ** 2 / 2 + (x - 18) ** 2 / 2 < 150).astype(np.uint8)


@pytest.fixture
def files(tmp_path):
    path = tmp_path / "in.tif"
    tifffile.imwrite(path, volume())
    mask = tmp_path / "mask.tif"
    tifffile.imwrite(mask, ball())
    return tmp_path, path, mask


def test_matches_slic_on_the_array(files):
    tmp, path, _ = files
    out = tmp / "labels.tif"
    info = supervox.slic_file(path, out, n_segments=60, compactness=0.1, backend="cpu")
    expected = supervox.slic(volume(), n_segments=60, compactness=0.1, channel_axis=None,
                             backend="cpu")
    labels = tifffile.imread(out)
    assert labels.dtype == np.uint32
    np.testing.assert_array_equal(labels, expected)
    assert info["streamed"] is False
    assert info["backend"] == "cpu"
    assert info["n_labels"] == len(np.unique(expected))
    assert info["iterations"] == 10


@pytest.mark.parametrize("params", [
    dict(n_segments=60, compactness=0.1),
    dict(n_segments=40, slic_zero=True, start_label=0, sigma=(1.0, 0.8, 0.8)),
    dict(n_segments=90, min_size_factor=0.05, max_size_factor=0.3, spacing=(2, 1, 1)),
])
def test_streams_when_memory_is_short(files, params):
    tmp, path, mask = files
    for use_mask in (False, True):
        m = mask if use_mask else None
        whole, slabs = tmp / "whole.tif", tmp / "slabs.tif"
        a = supervox.slic_file(path, whole, mask=m, backend="cpu", **params)
        b = supervox.slic_file(path, slabs, mask=m, backend="cpu", memory_limit=SHORT, **params)
        assert a["streamed"] is False and b["streamed"] is True
        assert whole.read_bytes() == slabs.read_bytes()
        assert a["n_labels"] == b["n_labels"]
        if use_mask:
            labels = tifffile.imread(slabs)
            assert np.all((labels == params.get("start_label", 1) - 1) == (ball() == 0))


def test_bad_files_raise_and_leave_nothing(files):
    tmp, path, mask = files
    out = tmp / "labels.tif"
    with pytest.raises(OSError, match="missing.tif"):
        supervox.slic_file(tmp / "missing.tif", out)
    assert not out.exists()
    # A truncated file: in memory and streamed.
    data = path.read_bytes()
    cut = tmp / "cut.tif"
    cut.write_bytes(data[: len(data) // 2])
    for limit in (0, SHORT):
        with pytest.raises((OSError, ValueError)):
            supervox.slic_file(cut, out, backend="cpu", memory_limit=limit)
        assert not out.exists()
    # A mask of another shape.
    small = tmp / "small-mask.tif"
    tifffile.imwrite(small, ball()[:-1])
    for limit in (0, SHORT):
        with pytest.raises(ValueError):
            supervox.slic_file(path, out, mask=small, backend="cpu", memory_limit=limit)
        assert not out.exists()
    # An output that cannot be written.
    with pytest.raises(OSError):
        supervox.slic_file(path, tmp / "no-such-dir" / "labels.tif", backend="cpu")
    with pytest.raises(ValueError, match="start_label"):
        supervox.slic_file(path, out, start_label=2)
    with pytest.raises(TypeError):
        supervox.slic_file(None, out)
    assert sorted(os.listdir(tmp)) == ["cut.tif", "in.tif", "mask.tif", "small-mask.tif"]


def test_gpu_gives_the_cpu_files(files):
    if not supervox.cuda_available():
        pytest.skip("libsupervox has no usable CUDA backend")
    tmp, path, mask = files
    cpu, gpu = tmp / "cpu.tif", tmp / "gpu.tif"
    for limit in (0, SHORT):
        for m in (None, mask):
            supervox.slic_file(path, cpu, mask=m, n_segments=50, slic_zero=True, backend="cpu")
            info = supervox.slic_file(path, gpu, mask=m, n_segments=50, slic_zero=True,
                                      backend="cuda", memory_limit=limit)
            assert info["backend"] == "cuda"
            assert info["streamed"] is (limit > 0)
            assert cpu.read_bytes() == gpu.read_bytes()


def test_label_file_carries_the_input_calibration(tmp_path):
    # An EM stack of 40 x 4 x 4 nm, run with the relative spacing 10, 1, 1:
    # the labels carry the stack's nanometres, in memory and streamed, and
    # are the bytes supervox-cli writes.
    path = tmp_path / "em.tif"
    tifffile.imwrite(path, volume(), imagej=True, resolution=(0.25, 0.25),
                     metadata={"spacing": 40.0, "unit": "nm", "axes": "ZYX"})
    whole, slabs = tmp_path / "whole.tif", tmp_path / "slabs.tif"
    params = dict(n_segments=60, compactness=0.1, spacing=(10, 1, 1), backend="cpu")
    assert supervox.slic_file(path, whole, **params)["streamed"] is False
    assert supervox.slic_file(path, slabs, memory_limit=SHORT, **params)["streamed"] is True
    assert whole.read_bytes() == slabs.read_bytes()
    with tifffile.TiffFile(whole) as tif:
        assert tif.imagej_metadata["unit"] == "nm"
        assert tif.imagej_metadata["spacing"] == 40.0
        assert tif.pages[0].tags["XResolution"].value == (1, 4)
    cli = os.environ.get("SUPERVOX_CLI")
    if cli:
        import subprocess
        subprocess.run([cli, "slic", str(path), "-o", str(tmp_path / "cli.tif"), "--n-segments",
                        "60", "--compactness", "0.1", "--spacing", "10,1,1", "--backend", "cpu"],
                       check=True, capture_output=True)
        assert (tmp_path / "cli.tif").read_bytes() == whole.read_bytes()
