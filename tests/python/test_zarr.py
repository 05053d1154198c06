"""OME-Zarr in and out of supervox-cli slic. Stores are written and read
back by python3-zarr (a second implementation of Zarr v2): an image as a
store gives the labels of the same voxels as a TIFF, bit for bit, in
memory and streamed in thin slabs; labels written as a store are the
TIFF run's labels with the dtype, shape, chunks and codec asked for; the
labels/ group carries NGFF 0.4's metadata; bad stores fail with one line
and leave nothing behind."""

import json
import os
import shlex
import subprocess

import numpy as np
import pytest
import tifffile

# Debian's python3-zarr (tools/deps.sh) reads what Supervox writes; a
# machine without it skips these checks rather than failing to collect.
zarr = pytest.importorskip("zarr")
numcodecs = pytest.importorskip("numcodecs")

CLI = os.environ["SUPERVOX_CLI"]
SHAPE = (19, 34, 29)
PARAMS = ["--n-segments", "40", "--compactness", "0.2", "--backend", "cpu"]

COMPRESSORS = {
    "blosc": numcodecs.Blosc(cname="lz4", clevel=5, shuffle=numcodecs.Blosc.SHUFFLE),
    "zstd": numcodecs.Zstd(level=3),
    "zlib": numcodecs.Zlib(level=4),
    "gzip": numcodecs.GZip(level=6),
    "none": None,
}


def volume(dtype, shape=SHAPE, seed=5):
    z, y, x = np.mgrid[0:shape[0], 0:shape[1], 0:shape[2]]
    rng = np.random.default_rng(seed)
    v = 0.5 + 0.2 * np.sin(z / 3.0) * np.cos(y / 5.0) + 0.15 * ((x // 7 + y // 6 + z // 5) % 3)
    v = v + 0.03 * rng.standard_normal(shape)
    dt = np.dtype(dtype)
    if dt.kind == "f":
        return (v * 1000 - 300).astype(dt)
    info = np.iinfo(dt)
    lo, hi = max(info.min, -30000), min(info.max, 60000)
    return (lo + np.clip(v, 0, 1) * (hi - lo)).astype(dt)


def run(*args, ok=True):
    p = subprocess.run([CLI, "slic", *args], capture_output=True, text=True)
    if ok:
        assert p.returncode == 0, p.stderr
    return p


def ome_image(path, data, chunks, compressor, scale=(1.0, 1.0, 1.0), axes="zyx", levels=None,
              unit="micrometer"):
    """An OME-Zarr image of NGFF 0.4 with one level per array of `levels`."""
    g = zarr.open_group(str(path), mode="w")
    levels = levels if levels is not None else [data]
    datasets = []
    for i, level in enumerate(levels):
        g.create_dataset(str(i), data=level, chunks=chunks, compressor=compressor)
        s = [1.0] * (len(axes) - 3) + [scale[0], scale[1] * 2**i, scale[2] * 2**i]
        datasets.append({"path": str(i),
                         "coordinateTransformations": [{"type": "scale", "scale": s}]})
    kinds = {"c": "channel", "t": "time"}
    ax = [{"name": a, "type": kinds[a]} if a in kinds else
          {"name": a, "type": "space", "unit": unit} for a in axes]
    g.attrs["multiscales"] = [{"version": "0.4", "axes": ax, "datasets": datasets}]
    return path


def tiff_labels(tmp_path, data, *extra):
    src = tmp_path / "same.tif"
    out = tmp_path / "same-labels.tif"
    tifffile.imwrite(src, data)
    run(str(src), "-o", str(out), *PARAMS, *extra)
    return tifffile.imread(out)


def leftovers(folder):
    return sorted(os.listdir(folder))


# (a) input: dtypes, codecs and chunk shapes that do not divide the volume

CASES = [
    ("uint8", "blosc", (5, 16, 11)),
    ("uint16", "zstd", (7, 13, 29)),
    ("uint32", "zlib", (19, 34, 29)),
    ("int8", "gzip", (4, 9, 8)),
    ("int16", "none", (6, 34, 10)),
    ("int32", "zstd", (3, 5, 7)),
    (">u2", "blosc", (8, 8, 8)),
    ("float32", "blosc", (5, 20, 20)),
    ("float64", "zlib", (10, 17, 15)),
]


@pytest.mark.parametrize("dtype,codec,chunks", CASES)
@pytest.mark.parametrize("stream", [False, True])
def test_plain_array_gives_the_tiff_labels(tmp_path, dtype, codec, chunks, stream):
    data = volume(dtype)
    store = tmp_path / "in.zarr"
    zarr.open_array(str(store), mode="w", shape=data.shape, chunks=chunks, dtype=data.dtype,
                    compressor=COMPRESSORS[codec])[:] = data
    out = tmp_path / "labels.tif"
    extra = ["--slab-depth", "3"] if stream else []
    run(str(store), "-o", str(out), *PARAMS, *extra)
    side = json.loads((tmp_path / "labels.json").read_text())
    assert side["mode"] == ("streaming" if stream else "in-memory")
    expected = tiff_labels(tmp_path, data.astype(data.dtype.newbyteorder("="))
                           if data.dtype.byteorder == ">" else data)
    np.testing.assert_array_equal(tifffile.imread(out), expected)
    assert len(np.unique(expected)) > 10


@pytest.mark.parametrize("stream", [False, True])
def test_missing_chunk_is_fill_value(tmp_path, stream):
    data = volume("uint16")
    store = tmp_path / "in.zarr"
    a = zarr.open_array(str(store), mode="w", shape=data.shape, chunks=(6, 16, 16),
                        dtype=data.dtype, compressor=COMPRESSORS["zstd"], fill_value=1234)
    a[:] = data
    os.remove(store / "1.1.0")
    seen = a[:]
    assert (seen[6:12, 16:32, 0:16] == 1234).all()
    out = tmp_path / "labels.tif"
    run(str(store), "-o", str(out), *PARAMS, *(["--slab-depth", "2"] if stream else []))
    np.testing.assert_array_equal(tifffile.imread(out), tiff_labels(tmp_path, seen))


@pytest.mark.parametrize("stream", [False, True])
def test_ome_image_with_channels_levels_and_scale(tmp_path, stream):
    data = np.stack([volume("uint16", seed=1), volume("uint16", seed=2)])
    half = data[:, :, ::2, ::2].copy()
    store = ome_image(tmp_path / "img.zarr", data, (1, 5, 16, 16), COMPRESSORS["blosc"],
                      scale=(2.0, 0.5, 0.5), axes="czyx", levels=[data, half])
    extra = ["--slab-depth", "4"] if stream else []
    out = tmp_path / "labels.tif"

    # Channel 1 of level 0, its spacing from the scale.
    run(str(store), "-o", str(out), "--channel", "1", "--spacing", "file", *PARAMS, *extra)
    np.testing.assert_array_equal(
        tifffile.imread(out),
        tiff_labels(tmp_path, data[1], "--spacing", "2,0.5,0.5"))

    # Level 1 has twice the spacing in y and x.
    run(str(store), "-o", str(out), "--zarr-level", "1", "--channel", "0", "--spacing", "file",
        *PARAMS, *extra)
    np.testing.assert_array_equal(tifffile.imread(out),
                                  tiff_labels(tmp_path, half[0], "--spacing", "2,1,1"))


def test_sidecar_command_names_the_level(tmp_path):
    # The sidecar's command names the image and --zarr-level as given, its
    # input the level's array; run again, the command gives the same file.
    data = volume("uint16", shape=(12, 40, 36))
    store = ome_image(tmp_path / "img.zarr", data, (4, 16, 16), COMPRESSORS["zstd"],
                      levels=[data, data[:, ::2, ::2].copy()])
    out = tmp_path / "labels.tif"
    run(str(store), "-o", str(out), "--zarr-level", "1", *PARAMS)
    side = json.loads((tmp_path / "labels.json").read_text())
    assert side["input"] == str(store / "1")
    assert side["shape"] == [12, 20, 18]
    words = shlex.split(side["command"])
    assert words[2] == str(store)
    assert words[words.index("--zarr-level") + 1] == "1"
    again = tmp_path / "again.tif"
    words[words.index("-o") + 1] = str(again)
    assert subprocess.run([CLI] + words[1:], capture_output=True).returncode == 0
    assert again.read_bytes() == out.read_bytes()


# (b) output: the TIFF run's labels, as python3-zarr reads them

B = numcodecs.Blosc


# codec, the compressor python3-zarr finds, the name the sidecar gives it
# (blosc's filter only where it is not the inner codec's default).
@pytest.mark.parametrize("codec,expect,name", [
    (None, B(cname="zstd", clevel=1, shuffle=B.NOSHUFFLE), "blosc:zstd:1"),
    ("zstd:3", numcodecs.Zstd(level=3), "zstd:3"),
    ("blosc:lz4:7", B(cname="lz4", clevel=7, shuffle=B.SHUFFLE), "blosc:lz4:7"),
    ("blosc", B(cname="zstd", clevel=5, shuffle=B.NOSHUFFLE), "blosc:zstd:5"),
    ("blosc:zstd:5:shuffle", B(cname="zstd", clevel=5, shuffle=B.SHUFFLE),
     "blosc:zstd:5:shuffle"),
    ("blosc:lz4:bitshuffle", B(cname="lz4", clevel=5, shuffle=B.BITSHUFFLE),
     "blosc:lz4:5:bitshuffle"),
    ("blosc:3:noshuffle", B(cname="zstd", clevel=3, shuffle=B.NOSHUFFLE), "blosc:zstd:3"),
    ("zlib:2", numcodecs.Zlib(level=2), "zlib:2"),
    ("zlib:runs", numcodecs.Zlib(level=1), "zlib:runs"),
    ("gzip", numcodecs.GZip(level=5), "gzip:5"),
    ("none", None, "none"),
])
@pytest.mark.parametrize("stream", [False, True])
def test_labels_as_a_store(tmp_path, codec, expect, name, stream):
    data = volume("uint16", shape=(70, 40, 66))
    src = tmp_path / "in.tif"
    tifffile.imwrite(src, data)
    ref = tmp_path / "ref.tif"
    run(str(src), "-o", str(ref), *PARAMS, "--spacing", "3,1,1")
    out = tmp_path / "labels.zarr"
    extra = (["--compression", codec] if codec else []) + (["--slab-depth", "5"] if stream else [])
    run(str(src), "-o", str(out) + "/", *PARAMS, "--spacing", "3,1,1", *extra)
    g = zarr.open_group(str(out), mode="r")
    a = g["0"]
    assert a.dtype == np.uint32
    assert a.shape == (70, 40, 66)
    assert a.chunks == (64, 40, 64)
    assert a.compressor == expect
    assert json.loads((tmp_path / "labels.zarr.json").read_text())["compression"] == name
    np.testing.assert_array_equal(a[:], tifffile.imread(ref))
    ms = g.attrs["multiscales"][0]
    assert ms["version"] == "0.4"
    assert [x["name"] for x in ms["axes"]] == ["z", "y", "x"]
    assert ms["datasets"][0]["coordinateTransformations"] == [
        {"type": "scale", "scale": [3.0, 1.0, 1.0]}]
    assert leftovers(tmp_path) == ["in.tif", "labels.zarr", "labels.zarr.json", "ref.json",
                                   "ref.tif"]


@pytest.mark.parametrize("stream", [False, True])
def test_chunk_shape_and_nested_chunk_files(tmp_path, stream):
    """--zarr-chunks gives the store's chunk shape, cut short at the
    volume's edges; the chunk files sit at 0/z/y/x, NGFF's "/" separator,
    and python3-zarr reads the TIFF run's labels from them."""
    data = volume("uint16", shape=(70, 40, 66))
    src = tmp_path / "in.tif"
    tifffile.imwrite(src, data)
    ref = tmp_path / "ref.tif"
    run(str(src), "-o", str(ref), *PARAMS)
    out = tmp_path / "labels.zarr"
    extra = ["--slab-depth", "7"] if stream else []
    run(str(src), "-o", str(out), *PARAMS, "--zarr-chunks", "16,32,128", *extra)
    meta = json.loads((out / "0" / ".zarray").read_text())
    assert meta["chunks"] == [16, 32, 66]
    assert meta["dimension_separator"] == "/"
    files = sorted(str(p.relative_to(out / "0")) for p in (out / "0").rglob("*") if p.is_file())
    assert files == [".zarray"] + ["%d/%d/0" % (z, y) for z in range(5) for y in range(2)]
    a = zarr.open_group(str(out), mode="r")["0"]
    assert a.chunks == (16, 32, 66)
    np.testing.assert_array_equal(a[:], tifffile.imread(ref))


def test_output_format_zarr_and_calibration_carried_over(tmp_path):
    data = volume("uint8")
    store = ome_image(tmp_path / "img.zarr", data, (8, 8, 8), COMPRESSORS["zstd"],
                      scale=(0.8, 0.2, 0.2), unit="nanometer")
    out = tmp_path / "labels"
    run(str(store), "-o", str(out), "--output-format", "zarr", *PARAMS)
    g = zarr.open_group(str(out), mode="r")
    ms = g.attrs["multiscales"][0]
    assert [x.get("unit") for x in ms["axes"]] == ["nanometer"] * 3
    assert ms["datasets"][0]["coordinateTransformations"][0]["scale"] == [0.8, 0.2, 0.2]
    np.testing.assert_array_equal(g["0"][:], tiff_labels(tmp_path, data))
    # Written again: the store is replaced, not merged.
    run(str(store), "-o", str(out), "--output-format", "zarr", *PARAMS, "--n-segments", "9")
    assert len(np.unique(zarr.open_group(str(out), mode="r")["0"][:])) < 20


# (c) labels beside the image, with NGFF 0.4's image-label metadata

NGFF_AXIS_TYPES = {"space", "time", "channel"}


def check_ngff_multiscales(attrs, group):
    assert isinstance(attrs["multiscales"], list) and attrs["multiscales"]
    for ms in attrs["multiscales"]:
        assert ms["version"] == "0.4"
        axes = ms["axes"]
        assert 2 <= len(axes) <= 5
        for ax in axes:
            assert set(ax) <= {"name", "type", "unit"}
            assert ax["type"] in NGFF_AXIS_TYPES
        assert [ax["name"] for ax in axes if ax["type"] == "space"][-2:] == ["y", "x"]
        assert ms["datasets"]
        for ds in ms["datasets"]:
            ts = ds["coordinateTransformations"]
            assert ts[0]["type"] == "scale" and len(ts[0]["scale"]) == len(axes)
            assert group[ds["path"]].ndim == len(axes)


@pytest.mark.parametrize("stream", [False, True])
def test_labels_group_of_an_image(tmp_path, stream):
    data = volume("uint16")
    store = ome_image(tmp_path / "img.zarr", data, (5, 16, 16), COMPRESSORS["zstd"],
                      scale=(2.0, 0.5, 0.5))
    extra = ["--slab-depth", "3"] if stream else []
    run(str(store), "--zarr-labels", "supervoxels", *PARAMS, *extra)
    run(str(store), "--zarr-labels", "coarse", *PARAMS, "--n-segments", "8", *extra)
    run(str(store), "--zarr-labels", "supervoxels", *PARAMS, *extra)

    labels = zarr.open_group(str(store), mode="r")["labels"]
    assert labels.attrs.asdict() == {"labels": ["supervoxels", "coarse"]}
    for name in labels.attrs["labels"]:
        g = labels[name]
        attrs = g.attrs.asdict()
        assert attrs["image-label"]["version"] == "0.4"
        assert attrs["image-label"]["source"] == {"image": "../../"}
        assert set(attrs["image-label"]) <= {"version", "colors", "properties", "source"}
        check_ngff_multiscales(attrs, g)
        a = g[attrs["multiscales"][0]["datasets"][0]["path"]]
        assert a.dtype.kind in "iu"
        assert a.shape == data.shape
        assert (attrs["multiscales"][0]["datasets"][0]["coordinateTransformations"][0]["scale"]
                == [2.0, 0.5, 0.5])
    np.testing.assert_array_equal(labels["supervoxels/0"][:], tiff_labels(tmp_path, data))
    check_ngff_multiscales(zarr.open_group(str(store), mode="r").attrs.asdict(),
                           zarr.open_group(str(store), mode="r"))
    assert sorted(os.listdir(store)) == [".zattrs", ".zgroup", "0", "labels"]


# (d) errors: one line, exit 1, nothing left

def bad_stores(tmp_path):
    data = volume("uint16")
    good = ome_image(tmp_path / "good.zarr", data, (4, 16, 16), COMPRESSORS["zstd"])

    def copy(name):
        import shutil
        dst = tmp_path / name
        shutil.copytree(good, dst)
        return dst

    no_zarray = copy("no-zarray.zarr")
    os.remove(no_zarray / "0" / ".zarray")
    group_only = tmp_path / "group.zarr"
    zarr.open_group(str(group_only), mode="w")
    complex_ = tmp_path / "complex.zarr"
    zarr.open_array(str(complex_), mode="w", shape=(4, 8, 8), dtype="c8")[:] = 1
    int64 = tmp_path / "int64.zarr"
    zarr.open_array(str(int64), mode="w", shape=(4, 8, 8), dtype="i8")[:] = 1
    cut = copy("cut.zarr")
    last = cut / "0" / "4.1.1"
    last.write_bytes(last.read_bytes()[:-9])
    noise = copy("noise.zarr")
    (noise / "0" / "3.0.1").write_bytes(np.random.default_rng(1).bytes(300))
    fortran = tmp_path / "fortran.zarr"
    zarr.open_array(str(fortran), mode="w", shape=(4, 8, 8), dtype="u1", order="F")[:] = 1
    series = ome_image(tmp_path / "series.zarr", np.stack([data, data]), (1, 5, 16, 16),
                       COMPRESSORS["zstd"], axes="tzyx")
    return {
        "no-zarray.zarr": ("no-zarray.zarr: ", ".zarray is missing"),
        "group.zarr": ("group.zarr: ", "neither a Zarr array"),
        "complex.zarr": ("complex.zarr: ", "samples of type <c8 cannot be read"),
        "int64.zarr": ("int64.zarr: ", "samples of type <i8 cannot be read"),
        "cut.zarr": ("cut.zarr: ", "chunk 4.1.1 is damaged or cut short"),
        "noise.zarr": ("noise.zarr: ", "chunk 3.0.1 is damaged or cut short"),
        "fortran.zarr": ("fortran.zarr: ", "only C order"),
        "series.zarr": ("series.zarr: ", "time series of 2 time points"),
    }


@pytest.mark.parametrize("output", ["out.tif", "out.zarr"])
@pytest.mark.parametrize("stream", [False, True])
def test_bad_stores_fail_with_one_line(tmp_path, output, stream):
    cases = bad_stores(tmp_path)
    before = leftovers(tmp_path)
    for name, (prefix, words) in cases.items():
        p = run(str(tmp_path / name), "-o", str(tmp_path / output), *PARAMS,
                *(["--slab-depth", "2"] if stream else []), ok=False)
        assert p.returncode == 1, (name, p.stderr)
        lines = p.stderr.strip().splitlines()
        assert len(lines) == 1, (name, p.stderr)
        assert prefix in lines[0] and words in lines[0], (name, lines[0])
        assert leftovers(tmp_path) == before, name


def test_bad_levels_and_labels_options(tmp_path):
    data = volume("uint8")
    store = ome_image(tmp_path / "img.zarr", data, (8, 8, 8), COMPRESSORS["zstd"])
    plain = tmp_path / "plain.zarr"
    zarr.open_array(str(plain), mode="w", shape=data.shape, dtype=data.dtype)[:] = data
    tif = tmp_path / "in.tif"
    tifffile.imwrite(tif, data)
    before = leftovers(tmp_path)
    for args, words in [
        ([str(store), "-o", "x.zarr", "--zarr-level", "1"], "has 1 resolution level (0 to 0)"),
        ([str(plain), "-o", "x.zarr", "--zarr-level", "1"], "not an OME-Zarr image"),
        ([str(tif), "-o", "x.zarr", "--zarr-level", "1"], "--zarr-level is for OME-Zarr"),
        ([str(plain), "--zarr-labels", "seg"], "needs one input that is an OME-Zarr image"),
        ([str(store), "--zarr-labels", "../seg"], "a name without '/'"),
        ([str(store), "-o", "x.zarr", "--compression", "lzw"], "unknown Zarr compression"),
        ([str(store), "-o", "x.zarr", "--compression", "zstd:30"], "unknown Zarr compression"),
        ([str(store), "-o", "x.zarr", "--compression", "gzip:runs"], "unknown Zarr compression"),
        ([str(store), "-o", "x.zarr", "--compression", "blosc:zstd:5:shufle"],
         "unknown Zarr compression"),
        ([str(store), "-o", "x.zarr", "--compression", "blosc:shuffle:lz4"],
         "unknown Zarr compression"),
        ([str(store), "-o", "x.zarr", "--compression", "blosc:lz4:5:shuffle:2"],
         "unknown Zarr compression"),
        ([str(store), "-o", "x.zarr", "--zarr-chunks", "16,32"], "wants Z,Y,X"),
        ([str(store), "-o", "x.zarr", "--zarr-chunks", "16,0,32"], "between 1 and 4096"),
        ([str(store), "-o", "x.tif", "--zarr-chunks", "16,16,16"], "the labels are a TIFF"),
    ]:
        p = subprocess.run([CLI, "slic", *args, *PARAMS], capture_output=True, text=True,
                           cwd=tmp_path)
        assert p.returncode == 1, (args, p.stderr)
        assert len(p.stderr.strip().splitlines()) == 1 and words in p.stderr, (args, p.stderr)
        assert leftovers(tmp_path) == before, args
