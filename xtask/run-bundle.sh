#!/usr/bin/env bash
# Runs warpsort's GPU test suite and benchmark on a GPU machine with no Rust:
# `bash run.sh [bench options]` inside the folder `cargo xtask bundle` made.
# SKIP_TESTS=1, SKIP_BENCH=1 and SKIP_CUB=1 (no CUB beside warpsort) leave
# parts out; LANES=N runs N test binaries at a time. The CUB harness is
# ./cub_bench when the bundle carries one (built for sm_90 and newer where
# `cargo xtask bundle` found nvcc), else compiled here with nvcc for this GPU
# (about three minutes). Where python3 has PyTorch,
# torch_bench.py runs torch.sort beside CUB in the sizes and types suites.
# The binaries load the GPU's cubin where warpsort has one (8.x, 9.0), else
# its PTX; WARPSORT_IMAGE=ptx runs everything on the PTX (driver JIT) instead.
# Results and logs go to $OUT (default ./out). Exit status: non-zero when any
# test or the benchmark failed.
set -u -o pipefail
cd "$(dirname "$0")"
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
export WARPSORT_REQUIRE_GPU=1
# The CLI's tests run the bundle's binary, not the build machine's path.
export WARPSORT_BIN=$PWD/warpsort
nvidia-smi --query-gpu=name,driver_version,compute_cap --format=csv,noheader || true

cub=()
if [ "${SKIP_CUB:-0}" != 1 ] && [ -x cub_bench ]; then
  cub=(--cub ./cub_bench)   # built by `cargo xtask bundle` where nvcc was found
elif [ "${SKIP_CUB:-0}" != 1 ] && [ -f cub_bench.cu ] && command -v nvcc >/dev/null; then
  cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '.')
  if nvcc -O3 -std=c++17 -arch=sm_"${cc:-90}" -o cub_bench cub_bench.cu 2>"$OUT/nvcc.log"; then
    cub=(--cub ./cub_bench)
  else
    echo "CUB harness did not compile (see nvcc.log); benchmarking without CUB"; tail -5 "$OUT/nvcc.log"
  fi
fi

# PyTorch's torch.sort beside CUB (the first table's suites) where python3
# has torch.
if [ ${#cub[@]} -gt 0 ] && [ -f torch_bench.py ] && python3 -c "import torch" 2>/dev/null; then
  cub+=(--torch ./torch_bench.py)
fi

fail=0
if [ "${SKIP_TESTS:-0}" != 1 ]; then
  # Each test binary's log in $OUT/<binary>.log; LANES binaries at a time
  # (default 1; on an H200 the segmented tests alone take about six
  # minutes); a line each in $OUT/tests-summary.txt.
  one() {
    local t=$1 n s rc
    n=$(basename "$t"); s=$(date +%s)
    "$t" --test-threads=1 > "$OUT/$n.log" 2>&1; rc=$?
    # One write a binary, so that the lanes' lines do not interleave.
    printf '%s\n' "== $n rc=$rc $(( $(date +%s) - s )) s" \
      "$(grep -E "^test |test result|SKIPPED|panicked|warpsort tests on" "$OUT/$n.log")" >> "$OUT/tests-output.txt"
    echo "$n rc=$rc $(( $(date +%s) - s )) s $(grep 'test result' "$OUT/$n.log" | tail -1)"
  }
  export -f one; export OUT
  : > "$OUT/tests-output.txt"
  ls tests/* | xargs -P "${LANES:-1}" -I{} bash -c 'one {}' | tee "$OUT/tests-summary.txt"
  grep -qv ' rc=0 ' "$OUT/tests-summary.txt" && fail=1
fi
if [ "${SKIP_BENCH:-0}" != 1 ]; then
  ./warpsort bench "${cub[@]}" --out "$OUT" "$@" 2>&1 | tee "$OUT/bench.log" || fail=1
fi
echo "run.sh: $([ $fail = 0 ] && echo PASSED || echo FAILED)"
exit $fail
