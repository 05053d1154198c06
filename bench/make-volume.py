#!/usr/bin/env python3
"""The streaming benchmarks' uint8 volume (smooth structure, steps and
noise, one page per slice, BigTIFF), made page by page on every core.

    bench/make-volume.py OUT.tif N [NOISE]

Page z is 0.5 + 0.3·s(z)·s(7y)·s(3x) + 0.15·((z//37 + y//41 + x//43) mod 3)
+ NOISE·U(0, 1), clipped to [0, 1.05] and scaled to 0…255, with s(i) =
sin(0.11 i) and U drawn from a generator seeded with z (so that pages can
be made in any order). 2048³ takes 8 GiB.
"""
import multiprocessing
import sys

import numpy as np
import tifffile


def page(args):
    n, noise, z = args
    s = np.sin(np.arange(n) * 0.11).astype(np.float32)
    yy = s[(np.arange(n) * 7) % n][:, None]
    xx = s[(np.arange(n) * 3) % n][None, :]
    cyx = np.arange(n)[:, None] // 41 + np.arange(n)[None, :] // 43
    rng = np.random.default_rng(z)
    v = (0.5 + s[z] * (0.3 * yy * xx) + 0.15 * ((z // 37 + cyx) % 3)
         + noise * rng.random((n, n), dtype=np.float32))
    return (np.clip(v, 0, 1.05) * (255 / 1.05)).astype(np.uint8)


def main():
    path, n = sys.argv[1], int(sys.argv[2])
    noise = float(sys.argv[3]) if len(sys.argv) > 3 else 0.05
    with multiprocessing.Pool() as pool:
        pages = pool.imap(page, ((n, noise, z) for z in range(n)), chunksize=4)
        tifffile.imwrite(path, pages, shape=(n, n, n), dtype=np.uint8, bigtiff=True)


if __name__ == "__main__":
    main()
