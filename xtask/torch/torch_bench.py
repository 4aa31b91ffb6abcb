#!/usr/bin/env python3
# torch_bench.py: times PyTorch's sort (torch.sort, a radix sort on CUDA) on
# inputs written by the warpsort benchmark, beside the CUB harness and with
# its interface, so that PyTorch, CUB and warpsort are measured on identical
# data.
#
# Usage:  torch_bench.py <keys.bin> <dtype> <mode> <reps>
#   keys.bin  raw little-endian keys; n = file size / sizeof(dtype)
#   dtype     u32 | i32 | f32 | u64 | i64 | f64 (PyTorch sorts no unsigned
#             words: u32 and u64 keys go in as i32 and i64 with the top bit
#             flipped, which keeps their order)
#   mode      0 = keys only and argsort: torch.sort(x), which always makes
#                 the sorted keys and their i64 positions (torch_sort)
#             argsort = the same call (torch_sort)
#             1 = key-value with u32 values 0..n-1 (held as i32): torch.sort
#                 then a gather of the values by the positions
#                 (torch_sort_gather)
#             v64 = the same with i64 values (torch_sort_gather)
#             stable = torch.sort(x, stable=True) then the gather
#                 (torch_sort_stable_gather)
#   reps      timed repetitions (values < 1 mean 10)
#
# Timing mirrors the CUB harness: 3 warm-up runs, then `reps` timed runs
# between two CUDA events on the current stream (the sort reads its input and
# writes new tensors, so nothing needs restoring); ms_median is the middle
# time (mean of the two middle ones for even reps). After timing, the last
# result is verified on the host: keys in order and the same multiset as the
# input; the positions a permutation with keys[i] == input[pos[i]]; for
# stable, equal keys in increasing position.
# Each measurement prints one JSON line on stdout; everything else goes to
# stderr. Exit status: 0 if every result verified, 1 on a failed check, 2 on
# bad arguments or an error.
import json
import statistics
import sys

import numpy as np
import torch

DTYPES = {
    "u32": (np.uint32, np.int32, 1 << 31),
    "i32": (np.int32, np.int32, 0),
    "f32": (np.float32, np.float32, 0),
    "u64": (np.uint64, np.int64, 1 << 63),
    "i64": (np.int64, np.int64, 0),
    "f64": (np.float64, np.float64, 0),
}
MODES = {"0": "torch_sort", "argsort": "torch_sort", "1": "torch_sort_gather", "v64": "torch_sort_gather",
         "stable": "torch_sort_stable_gather"}


def fail(msg):
    print(f"torch_bench: {msg}", file=sys.stderr)
    sys.exit(2)


def main():
    if len(sys.argv) != 5:
        fail("usage: torch_bench.py <keys.bin> <dtype> <mode> <reps>")
    path, dtype, mode, reps = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    if dtype not in DTYPES or mode not in MODES:
        fail(f"dtype {dtype} or mode {mode} is not one this harness runs")
    reps = reps if reps >= 1 else 10
    store, held, flip = DTYPES[dtype]
    keys = np.fromfile(path, dtype=store)
    n = keys.size
    # The order-keeping flip of unsigned words into signed ones.
    held_keys = (keys ^ store(flip)).view(held) if flip else keys
    dev = torch.device("cuda")
    x = torch.from_numpy(held_keys.copy()).to(dev)
    pairs = mode in ("1", "v64", "stable")
    vals = None
    if pairs:
        vals = torch.arange(n, dtype=torch.int64 if mode == "v64" else torch.int32, device=dev)
    stable = mode == "stable"

    def run():
        s, pos = torch.sort(x, stable=stable)
        return s, (vals[pos] if pairs else pos)

    for _ in range(3):
        run()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        out = run()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    s, second = (t.cpu().numpy() for t in out)
    ms_median = statistics.median(times)
    verified = bool(verify(held_keys, s, second.astype(np.int64), stable))
    print(json.dumps({"algo": MODES[mode], "dtype": dtype, "pairs": pairs, "n": int(n), "segments": 0,
                      "reps": reps, "ms_median": ms_median, "ms_min": min(times),
                      "keys_per_s": n / (ms_median / 1e3) if ms_median > 0 else 0.0, "verified": verified}))
    sys.stdout.flush()
    sys.exit(0 if verified else 1)


def verify(held_keys, s, pos, stable):
    """Keys in order; positions a permutation leading to them bitwise (so
    the keys are the input's multiset)."""
    n = held_keys.size
    if s.size != n or pos.size != n:
        return False
    if n == 0:
        return True
    # NaNs compare false: they may only stand last (torch.sort puts them there).
    ordered = not np.any(s[1:] < s[:-1])
    perm = np.zeros(n, dtype=bool)
    if pos.min() < 0 or pos.max() >= n:
        return False
    perm[pos] = True
    picked = held_keys[pos]
    points = np.array_equal(np.ascontiguousarray(picked).view(np.uint8), np.ascontiguousarray(s).view(np.uint8))
    ties = True
    if stable:
        eq = s[1:] == s[:-1]
        ties = bool(np.all(pos[1:][eq] > pos[:-1][eq]))
    return bool(ordered) and bool(perm.all()) and points and ties


if __name__ == "__main__":
    try:
        main()
    except SystemExit:
        raise
    except Exception as e:  # noqa: BLE001 - any error is the harness's failure
        fail(f"{type(e).__name__}: {e}")
