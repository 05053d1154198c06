"""supervox.slic_to: a zarr or Dask array (or a NumPy one) streamed slab by
slab through the library's read callback into an OME-Zarr store or a TIFF
gives supervox.slic's labels on the in-memory array, and supervox-cli's on
the same volume as a file; it runs in a process whose address space could
not hold the volume; an exception raised while reading ends the run with
that exception and leaves no output."""

import os
import subprocess
import sys

import numpy as np
import pytest
import tifffile

import supervox

zarr = pytest.importorskip("zarr", reason="python3-zarr is not installed")

CLI = os.environ["SUPERVOX_CLI"]
SHAPE = (21, 34, 30)
PARAMS = dict(n_segments=40, compactness=0.2, backend="cpu", channel_axis=None)
# Small enough that the run takes several slabs.
SHORT = 120_000


def volume(shape=SHAPE, seed=5, dtype=np.uint16):
    z, y, x = np.mgrid[0:shape[0], 0:shape[1], 0:shape[2]]
    rng = np.random.default_rng(seed)
    v = 0.5 + 0.2 * np.sin(z / 3.0) * np.cos(y / 5.0) + 0.15 * ((x // 7 + y // 6 + z // 5) % 3)
    v = np.clip(v + 0.03 * rng.standard_normal(shape), 0, 1)
    if np.dtype(dtype).kind == "f":
        return v.astype(dtype)
    return (v * 60000).astype(dtype)


def zarr_array(path, data, chunks=(4, 16, 16), **options):
    a = zarr.open_array(str(path), mode="w", shape=data.shape, chunks=chunks, dtype=data.dtype,
                        **options)
    a[:] = data
    return zarr.open_array(str(path), mode="r")


def store_labels(path):
    return zarr.open_group(str(path), mode="r")["0"][:]


def test_zarr_array_into_a_store_matches_slic(tmp_path):
    data = volume()
    expected = supervox.slic(data, **PARAMS)
    out = supervox.slic_to(zarr_array(tmp_path / "in.zarr", data), tmp_path / "labels.zarr",
                           memory_limit=SHORT, **PARAMS)
    assert out == str(tmp_path / "labels.zarr")
    labels = store_labels(out)
    assert labels.dtype == np.uint32
    assert labels.shape == SHAPE
    np.testing.assert_array_equal(labels, expected)
    assert len(np.unique(expected)) > 10


def test_numpy_into_a_tiff_matches_slic_and_the_cli(tmp_path):
    data = volume(dtype=np.float32)
    params = dict(PARAMS, sigma=0.8, slic_zero=True, start_label=0)
    expected = supervox.slic(data, **params)
    out = supervox.slic_to(data, tmp_path / "labels.tif", memory_limit=SHORT, **params)
    np.testing.assert_array_equal(tifffile.imread(out), expected)

    tifffile.imwrite(tmp_path / "in.tif", data)
    subprocess.run([CLI, "slic", str(tmp_path / "in.tif"), "-o", str(tmp_path / "cli.tif"),
                    "--n-segments", "40", "--compactness", "0.2", "--sigma", "0.8",
                    "--slic-zero", "--start-label", "0", "--backend", "cpu"],
                   check=True, capture_output=True)
    np.testing.assert_array_equal(tifffile.imread(tmp_path / "cli.tif"), expected)


def test_channels_last_and_float16(tmp_path):
    data = np.stack([volume(), volume(seed=8)[::-1]], axis=-1)
    params = dict(PARAMS, channel_axis=-1)
    out = supervox.slic_to(zarr_array(tmp_path / "in.zarr", data, chunks=(5, 17, 30, 2)),
                           tmp_path / "labels.zarr", memory_limit=SHORT, **params)
    np.testing.assert_array_equal(store_labels(out), supervox.slic(data, **params))

    half = volume(dtype=np.float16)
    out = supervox.slic_to(half, tmp_path / "half.tif", **PARAMS)
    np.testing.assert_array_equal(tifffile.imread(out), supervox.slic(half, **PARAMS))


def test_dask_array_matches_slic(tmp_path):
    da = pytest.importorskip("dask.array", reason="python3-dask is not installed")
    data = volume(seed=11)
    lazy = da.from_array(data, chunks=(3, 34, 30)) * 1
    out = supervox.slic_to(lazy, tmp_path / "labels.zarr", memory_limit=SHORT, **PARAMS)
    np.testing.assert_array_equal(store_labels(out), supervox.slic(data, **PARAMS))


class Failing:
    """An array whose storage fails past slice 8."""

    def __init__(self, data):
        self.data, self.shape, self.dtype = data, data.shape, data.dtype

    def __getitem__(self, key):
        if key.stop > 8:
            raise KeyError("chunk 2.0.0 is missing")
        return self.data[key]


@pytest.mark.parametrize("name", ["labels.zarr", "labels.tif"])
def test_read_error_raises_and_leaves_nothing(tmp_path, name):
    with pytest.raises(KeyError, match="chunk 2.0.0 is missing") as caught:
        supervox.slic_to(Failing(volume()), tmp_path / name, memory_limit=SHORT, **PARAMS)
    assert isinstance(caught.value.__cause__, OSError)
    assert "could not be read: KeyError" in str(caught.value.__cause__)
    assert os.listdir(tmp_path) == []


def test_bad_layouts_are_refused(tmp_path):
    data = np.zeros((3, 8, 9, 2), np.uint8)
    with pytest.raises(ValueError, match="channel axis must be the last"):
        supervox.slic_to(data, tmp_path / "l.tif", channel_axis=0)
    with pytest.raises(ValueError, match="not bool"):
        supervox.slic_to(np.zeros((3, 8, 9), bool), tmp_path / "l.tif", channel_axis=None)
    assert os.listdir(tmp_path) == []


def ball_mask(shape=SHAPE):
    z, y, x = np.mgrid[0:shape[0], 0:shape[1], 0:shape[2]]
    return (z - 10) ** 2 + (y - 17) ** 2 + (x - 14) ** 2 < 140


@pytest.mark.parametrize("kind", ["bool", "zarr uint8", "float with -0.0 and NaN", "int64"])
def test_mask_arrays_match_slic(tmp_path, kind):
    """A mask array streams slab by slab beside the image: the labels are
    slic's with the same mask in memory (nonzero = in, as numpy's bool)."""
    data = volume()
    inside = ball_mask()
    if kind == "bool":
        mask = inside
    elif kind == "zarr uint8":
        mask = zarr_array(tmp_path / "mask.zarr", (inside * 7).astype(np.uint8))
    elif kind == "int64":
        mask = inside.astype(np.int64) * (1 << 40)
    else:
        mask = np.where(inside, np.nan, -0.0).astype(np.float32)
        mask[0, 0, :3] = 0.25
        inside = mask.astype(bool)
    expected = supervox.slic(data, mask=inside, **PARAMS)
    for name in ("labels.tif", "labels.zarr"):
        out = supervox.slic_to(data, tmp_path / name, mask=mask, memory_limit=SHORT, **PARAMS)
        labels = tifffile.imread(out) if name.endswith(".tif") else store_labels(out)
        np.testing.assert_array_equal(labels, expected)
    assert (expected[~inside] == 0).all() and len(np.unique(expected)) > 10


def test_mask_array_errors(tmp_path):
    data = volume()
    with pytest.raises(ValueError, match="same shape: image is 21×34×30, mask is 21×34×29"):
        supervox.slic_to(data, tmp_path / "l.tif", mask=np.ones((21, 34, 29), bool), **PARAMS)
    with pytest.raises(TypeError, match="as an array or as the path"):
        supervox.slic_to(data, tmp_path / "l.tif", mask=[[1]], **PARAMS)
    # A mask whose storage fails: its own exception, naming the mask, and
    # no output.
    with pytest.raises(KeyError, match="chunk 2.0.0 is missing") as caught:
        supervox.slic_to(data, tmp_path / "l.tif", mask=Failing(ball_mask()),
                         memory_limit=SHORT, **PARAMS)
    assert "mask __main__.Failing" in str(caught.value.__cause__) or \
        "mask test_slic_to.Failing" in str(caught.value.__cause__)
    assert os.listdir(tmp_path) == []


# Runs in a child: slic_to (or slic on the loaded array) on a store, then
# prints the process's peak address space.
CHILD = r"""
import faulthandler, sys, numpy as np, zarr, supervox
faulthandler.enable()
store, out, mode, memory_limit = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
supervox.set_num_threads(2)
image = zarr.open_array(store, mode="r")
params = dict(n_segments=300, compactness=0.2, backend="cpu", channel_axis=None)
if mode == "stream":
    supervox.slic_to(image, out, memory_limit=memory_limit, **params)
else:
    labels = supervox.slic(np.asarray(image[:]), **params)
peak = [l for l in open("/proc/self/status") if l.startswith("VmPeak")][0].split()[1]
print("\nVmPeak", int(peak) * 1024)
"""


def run_child(args, limit=None):
    env = dict(os.environ, MALLOC_ARENA_MAX="1", SUPERVOX_NUM_THREADS="2")
    # Thread stacks of 1 MiB (glibc sizes them from RLIMIT_STACK) and one
    # malloc arena, so that the address space counts what is allocated.
    command = ["prlimit", "--stack=%d" % 2**20] + [sys.executable, "-c", CHILD]
    command += [str(a) for a in args]
    if limit is not None:
        command[1:1] = ["--as=%d" % limit]
    return subprocess.run(command, capture_output=True, text=True, env=env)


def vm_peak(child):
    return int(child.stdout.split("VmPeak")[-1])


def test_runs_where_the_volume_does_not_fit(tmp_path):
    if not os.path.exists("/usr/bin/prlimit"):
        pytest.skip("prlimit (util-linux) is not installed")
    big = volume(shape=(192, 192, 192), seed=2, dtype=np.float64)
    # Stores without a codec: Blosc's decompressor does not check its
    # allocations, and crashed (SIGSEGV in zarr's _decode_chunk) where the
    # limit left it no room, instead of the MemoryError checked below.
    zarr_array(tmp_path / "big.zarr", big, chunks=(8, 64, 64), compressor=None)
    zarr_array(tmp_path / "small.zarr", volume(shape=(16, 192, 192), dtype=np.float64),
               chunks=(8, 64, 64), compressor=None)
    limit_slabs = big.nbytes // 16

    # The interpreter, numpy, zarr and the library's threads, with a
    # volume of 16 slices in the same slabs.
    small = run_child([tmp_path / "small.zarr", tmp_path / "small-labels.zarr", "stream",
                       limit_slabs])
    assert small.returncode == 0, small.stderr
    baseline = vm_peak(small)
    # Three quarters of the volume above that: loading it needs all of it
    # (and slic a float32 copy), streaming holds a few slabs and a row of
    # output chunks.
    limit = baseline + big.nbytes * 3 // 4

    # Loading the volume does not fit under the limit ...
    loaded = run_child([tmp_path / "big.zarr", tmp_path / "x.zarr", "load", 0], limit)
    # (numpy's MemoryError, or no room left for the stack of the thread
    # that runs slic)
    assert loaded.returncode != 0
    assert "MemoryError" in loaded.stderr or "can't start new thread" in loaded.stderr, \
        "exit status %d: %s" % (loaded.returncode, loaded.stderr)
    # ... streaming it does, and gives the in-memory labels.
    streamed = run_child([tmp_path / "big.zarr", tmp_path / "labels.zarr", "stream",
                          limit_slabs], limit)
    assert streamed.returncode == 0, streamed.stderr
    peak = vm_peak(streamed)
    print("baseline %.1f MiB, limit %.1f MiB, streamed peak %.1f MiB, volume %.1f MiB"
          % (baseline / 2**20, limit / 2**20, peak / 2**20, big.nbytes / 2**20))
    assert peak <= limit
    expected = supervox.slic(big, n_segments=300, compactness=0.2, backend="cpu",
                             channel_axis=None)
    np.testing.assert_array_equal(store_labels(tmp_path / "labels.zarr"), expected)

    # Half the volume above the baseline is room enough for labels going to
    # a TIFF. (A Zarr store also holds a row of chunks, 64 slices of int32
    # labels, and its codec's buffers: about 26.6 MiB above the baseline
    # here, at the edge of half the volume's 27 MiB.)
    half = baseline + big.nbytes // 2
    tiff = run_child([tmp_path / "big.zarr", tmp_path / "labels.tif", "stream", limit_slabs],
                     half)
    assert tiff.returncode == 0, tiff.stderr
    print("half: limit %.1f MiB, streamed peak %.1f MiB" % (half / 2**20, vm_peak(tiff) / 2**20))
    assert vm_peak(tiff) <= half
    np.testing.assert_array_equal(tifffile.imread(tmp_path / "labels.tif"), expected)

    # A store at that limit, and at a third: the labels, or one line that
    # says memory ran out and no store (before, c-blosc crashed on its own
    # failed allocation, and GLib aborted on a chunk it could not have).
    for room in (big.nbytes // 2, big.nbytes // 3):
        out = tmp_path / ("room-%d.zarr" % room)
        child = run_child([tmp_path / "big.zarr", out, "stream", limit_slabs], baseline + room)
        print("store at baseline + %.1f MiB: exit %d, %s" % (room / 2**20, child.returncode, child.stderr.strip().splitlines()[-1:] ))
        if child.returncode == 0:
            np.testing.assert_array_equal(store_labels(out), expected)
        else:
            assert child.returncode == 1, child.stderr
            assert "memory" in child.stderr.strip().splitlines()[-1].lower(), child.stderr
            assert not out.exists()
