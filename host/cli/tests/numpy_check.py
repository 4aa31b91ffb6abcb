#!/usr/bin/env python3
"""`warpsort sort` against numpy on a GPU machine: writes a .npy file of
`--gib` GiB per dtype with numpy (f32 with NaNs and infinities, i64), sorts
it with the warpsort binary ascending and descending (to a new file, and in
place), reads the result back with numpy and compares it with `numpy.sort`
bit for bit. For floats numpy puts every NaN last; warpsort sorts in IEEE
total order, which puts positive NaNs (all numpy writes here) last too, so
the two agree; descending is numpy's order reversed.

usage: numpy_check.py WARPSORT_BINARY DIR [--gib 1]
"""

import os
import subprocess
import sys
import time

import numpy as np


def check(binary, path, dtype, descending, in_place):
    rng = np.random.default_rng(7)
    n = (GIB << 30) // np.dtype(dtype).itemsize
    if dtype == np.float32:
        x = rng.standard_normal(n, dtype=np.float32) * 1e6
        x[rng.integers(0, n, n // 1000)] = np.nan
        x[rng.integers(0, n, 100)] = np.inf
        x[rng.integers(0, n, 100)] = -np.inf
        x[rng.integers(0, n, 100)] = -0.0
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
    if descending:
        want = want[::-1]
    ok = got.dtype == x.dtype and got.shape == x.shape and got.tobytes() == want.tobytes()
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
