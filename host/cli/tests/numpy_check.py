#!/usr/bin/env python3
"""`warpsort sort` against numpy on a GPU machine: writes a .npy file of
`--gib` GiB per dtype with numpy (f32 with NaNs, infinities and both
zeros, i64), sorts it with the warpsort binary ascending and descending (to
a new file, and in place), reads the result back with numpy and compares it
with `numpy.sort` (descending: reversed) element by element, and bit for bit
with the IEEE total order (`f32::total_cmp`), which warpsort sorts in.
numpy puts every NaN last and treats -0.0 and +0.0 as equal, in any order;
the total order puts positive NaNs (all numpy writes) last too and -0.0
before +0.0, so the two agree as values and the bits follow the total order.

usage: numpy_check.py WARPSORT_BINARY DIR [--gib 1]
"""

import os
import subprocess
import sys
import time

import numpy as np


def total_order_sort(x):
    """`x` sorted in IEEE total order (integers: their order), by numpy."""
    if x.dtype != np.float32:
        return np.sort(x)
    b = x.view(np.uint32)
    key = np.where(b >> 31 == 1, ~b, b | np.uint32(0x8000_0000)).astype(np.uint32)
    key.sort()
    return np.where(key >> 31 == 1, key & np.uint32(0x7FFF_FFFF), ~key).astype(np.uint32).view(np.float32)


def check(binary, path, dtype, descending, in_place):
    rng = np.random.default_rng(7)
    n = (GIB << 30) // np.dtype(dtype).itemsize
    if dtype == np.float32:
        x = rng.standard_normal(n, dtype=np.float32) * 1e6
        x[rng.integers(0, n, n // 1000)] = np.nan
        x[rng.integers(0, n, 100)] = np.inf
        x[rng.integers(0, n, 100)] = -np.inf
        x[rng.integers(0, n, 100)] = -0.0
        x[rng.integers(0, n, 100)] = 0.0
    else:
        x = rng.integers(np.iinfo(dtype).min, np.iinfo(dtype).max, n, dtype=dtype)
    np.save(path, x)
    out = path if in_place else path.replace(".npy", ".sorted.npy")
    args = [binary, "sort", path] + ([] if in_place else ["-o", out]) + (["--descending"] if descending else [])
    t = time.time()
    r = subprocess.run(args, capture_output=True, text=True)
    took = time.time() - t
    if r.returncode != 0:
        print(f"FAILED {' '.join(args)}: exit {r.returncode}\n{r.stderr}")
        return False
    got = np.load(out)
    want = np.sort(x)
    exact = total_order_sort(x)
    if descending:
        want, exact = want[::-1], exact[::-1]
    same_values = np.array_equal(got, want, equal_nan=dtype == np.float32)
    ok = got.dtype == x.dtype and got.shape == x.shape and same_values and got.tobytes() == exact.tobytes()
    if not in_place:
        ok = ok and np.load(path).tobytes() == x.tobytes()  # the input untouched
    what = f"{np.dtype(dtype).name} {n} elements ({GIB} GiB) {'descending' if descending else 'ascending'} {'in place' if in_place else '-o'}"
    print(f"{'ok' if ok else 'WRONG'}: {what}: warpsort sort {took:.2f} s (file to file)")
    for f in {path, out}:
        os.remove(f)
    return ok


if __name__ == "__main__":
    binary, folder = sys.argv[1], sys.argv[2]
    GIB = int(sys.argv[sys.argv.index("--gib") + 1]) if "--gib" in sys.argv else 1
    results = [
        check(binary, os.path.join(folder, f"x_{dt.__name__}.npy"), dt, desc, in_place)
        for dt in (np.float32, np.int64)
        for desc, in_place in ((False, False), (True, True))
    ]
    print("numpy check:", "PASSED" if all(results) else "FAILED")
    sys.exit(0 if all(results) else 1)
