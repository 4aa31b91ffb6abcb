// cub_bench.cu: times NVIDIA CUB's sorts on inputs written by the warpsort
// benchmark, so that CUB and warpsort are measured on identical data.
//
// Build:  nvcc -O3 -std=c++17 -arch=sm_90 -o cub_bench cub_bench.cu
// Usage:  cub_bench <keys.bin> <dtype> <mode> <reps> [segments.bin]
//   keys.bin      raw little-endian keys; n = file size / sizeof(dtype)
//   dtype         u32 | i32 | f32 | u64 | i64 | f64, or a composite key
//                 (packed records, no segments, modes 0, 1, argsort, stable):
//                   u32x2   8 bytes: u32 a at 0, u32 b at 4; by a, then b
//                   f32u32  8 bytes: f32 a at 0, u32 b at 4; a in IEEE
//                           total order, then b
//                   u64u32  16 bytes: u64 a at 0, u32 b at 8, 4 bytes of
//                           padding at 12 (not compared, but carried and
//                           checked bitwise); by a, then b
//                   b16     16 bytes, byte 0 most significant (memcmp order)
//                   b8      8 bytes, likewise
//                 or orderby3 (mode 0 only, no segments): a table of n rows
//                 in 24-byte records: u16 region at 0, 6 bytes of padding
//                 (ignored), f64 revenue at 8, u64 id at 16; see below
//   mode          0 = keys only, 1 = key-value with values u32 0..n-1,
//                 v64 = key-value with u64 values (i in both halves),
//                 rec64 (u32 keys only) = key-value with 64-byte values
//                 (16 u32 words, each i); JSON dtype "u32:rec64",
//                 argsort = the permutation that sorts the keys (an iota
//                 kernel writes the u32 values 0..n-1 inside the timing,
//                 then a pairs sort from the keys to separate outputs),
//                 stable = stable key-value sort (u32 values 0..n-1)
//   reps          timed repetitions (values < 1 mean 10)
//   segments.bin  optional raw little-endian u32 offsets (segs+1 of them,
//                 first 0, last n); selects the segmented sorts
//
// Without segments: cub::DeviceMergeSort (less-than comparator; IEEE total
// order for floats, like Rust's total_cmp) and cub::DeviceRadixSort; for
// argsort SortPairsCopy and radix SortPairs after the iota; for stable
// DeviceMergeSort::StableSortPairs and DeviceRadixSort::SortPairs (radix sort
// is stable), both verified to keep equal keys in input order.
// Composite keys go the same way, with the same algorithm names: merge sort
// with a comparator for the record's order, radix sort with a decomposer
// (CUB's custom-type overloads) naming the record's fields most significant
// first: (a, b) for u32x2, f32u32 and u64u32 (not the padding), the bytes
// 0..15 or 0..7 as uint8_t for b16 and b8. Radix treats f32u32's -0.0 and
// +0.0 as equal, as for f32.
// With segments (modes 0 and 1 only): cub::DeviceSegmentedSort and
// cub::DeviceSegmentedRadixSort.
// rec64 runs the mode-1 calls (cub_merge_sort: DeviceMergeSort::SortPairs,
// cub_radix_sort: DeviceRadixSort::SortPairs) with the 64-byte values; a value
// is verified to have all 16 words equal to one input index.
// orderby3 times the comparator way of a table sort: the stable permutation
// ordering the rows by region ascending, then revenue descending in IEEE total
// order, then id ascending. The harness splits the records into three device
// columns (region u16[n], revenue f64[n], id u64[n]) outside the timing; each
// timed run is the iota kernel writing u32 indices 0..n-1, then a stable sort
// of the indices with a comparator reading the columns:
// cub_merge_orderby (DeviceMergeSort::StableSortKeys) and
// thrust_stable_orderby (thrust::stable_sort(thrust::device, ...), which
// allocates its temporary storage inside the timed call). Nothing needs
// restoring; instead of the copy below, an untimed memset fills the indices
// with UINT32_MAX before each run. Verified on the host: a permutation of
// 0..n-1 whose rows are in that order, equal rows in increasing index
// (stability). JSON dtype "orderby3", pairs false.
//
// Each algorithm prints one JSON line on stdout; everything else goes to
// stderr. Timing (mirrors the Rust side): 3 warm-up runs, then `reps` timed
// runs; before each, an untimed device-to-device copy restores the input;
// only the sort call sits between the two events on the default stream.
// ms_median is the middle time (mean of the two middle ones for even reps).
// After timing, the last result is copied back and verified: keys in order
// (per segment), and for pairs keys[i] == input[values[i]] bitwise with the
// values a permutation (within each segment).
// Exit status: 0 if every result verified, 1 on any error or failed check.

#include <cub/cub.cuh>
#include <cuda/std/bit>
#include <cuda/std/tuple>
#include <cuda/std/type_traits>
#include <cuda/std/utility>
#include <thrust/execution_policy.h>
#include <thrust/sort.h>

#include <algorithm>
#include <array>
#include <climits>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#define CUDA_CHECK(expr)                                                              \
  do {                                                                                \
    cudaError_t err_ = (expr);                                                        \
    if (err_ != cudaSuccess) {                                                        \
      std::fprintf(stderr, "%s:%d: CUDA error %s: %s\n  in: %s\n", __FILE__, __LINE__, \
                   cudaGetErrorName(err_), cudaGetErrorString(err_), #expr);          \
      std::exit(1);                                                                   \
    }                                                                                 \
  } while (0)

[[noreturn]] static void die(const std::string& msg) {
  std::fprintf(stderr, "cub_bench: %s\n", msg.c_str());
  std::exit(1);
}

// ---------------------------------------------------------------------------
// Key order
// ---------------------------------------------------------------------------

// Unsigned integer with the same width as the key.
template <class T>
using Bits = ::cuda::std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>;

// Maps a key to unsigned bits whose unsigned order is the key's order.
// Floats: bits ^ ((bits >> (w-1), arithmetic) | signbit), i.e. IEEE total
// order as in Rust's f32::total_cmp (-NaN < -inf < ... < -0 < +0 < ... < +NaN).
template <class T>
__host__ __device__ inline Bits<T> order_bits(T v) {
  using U = Bits<T>;
  constexpr int kShift = int(sizeof(T) * 8 - 1);
  constexpr U kSign = U(1) << kShift;
  const U b = ::cuda::std::bit_cast<U>(v);
  if constexpr (::cuda::std::is_floating_point_v<T>) {
    using S = ::cuda::std::make_signed_t<U>;
    return b ^ (U(S(b) >> kShift) | kSign);
  } else if constexpr (::cuda::std::is_signed_v<T>) {
    return b ^ kSign;
  } else {
    return b;
  }
}

// Merge-sort comparator: plain `<` for integers, total order for floats.
template <class T>
struct TotalLess {
  __host__ __device__ bool operator()(const T& a, const T& b) const {
    if constexpr (::cuda::std::is_floating_point_v<T>) {
      return order_bits(a) < order_bits(b);
    } else {
      return a < b;
    }
  }
};

// The order a result is verified in:
//   Total:  order_bits (merge sort's comparator).
//   Radix:  the order of CUB's radix-based sorts: total order, except that
//           -0.0 and +0.0 are equal.
// DeviceSegmentedSort is checked in Radix order too. Note that it sorts small
// segments with a plain `<` merge sort, under which NaN is unordered: with NaN
// keys its output can be unsorted or not even a permutation of the segment
// (seen with CUB 3.0 on an H200), and is then reported as not verified.
enum class Order { Total, Radix };

template <class T>
static bool is_nan(T v) {
  if constexpr (::cuda::std::is_floating_point_v<T>) return v != v;
  else return false;
}

template <class T>
static Bits<T> check_key(T v, Order order) {
  if constexpr (::cuda::std::is_floating_point_v<T>) {
    if (order != Order::Total && v == T(0)) v = T(0);  // -0.0 -> +0.0
  }
  return order_bits(v);
}

// ---------------------------------------------------------------------------
// Composite keys
// ---------------------------------------------------------------------------

// The records as the Rust benchmark writes them. b16 and b8 are aligned to
// their size (a whole-record load); that changes no byte of the layout.
struct U32x2 {
  std::uint32_t a, b;
};
struct F32U32 {
  float a;
  std::uint32_t b;
};
struct alignas(8) U64U32 {
  std::uint64_t a;
  std::uint32_t b;
  std::uint32_t pad;  // not part of the key
};
struct alignas(16) B16 {
  std::uint8_t b[16];
};
struct alignas(8) B8 {
  std::uint8_t b[8];
};
static_assert(sizeof(U32x2) == 8 && sizeof(F32U32) == 8 && sizeof(U64U32) == 16 &&
                  sizeof(B16) == 16 && sizeof(B8) == 8,
              "composite records must match the Rust layout");

template <class T>
inline constexpr bool kComposite = false;
template <>
inline constexpr bool kComposite<U32x2> = true;
template <>
inline constexpr bool kComposite<F32U32> = true;
template <>
inline constexpr bool kComposite<U64U32> = true;
template <>
inline constexpr bool kComposite<B16> = true;
template <>
inline constexpr bool kComposite<B8> = true;

// Byte records compared as big-endian 64-bit words (in registers; the data
// stay as they are).
__host__ __device__ inline std::uint32_t bswap32(std::uint32_t x) {
#ifdef __CUDA_ARCH__
  return __byte_perm(x, 0, 0x0123);
#else
  return __builtin_bswap32(x);
#endif
}

template <int Words>
struct U32Words {
  std::uint32_t w[Words];
};

// Bytes 8i..8i+7 of a byte record as a number, byte 8i most significant.
template <class R>
__host__ __device__ inline std::uint64_t be64(const R& r, int i) {
  const auto w = ::cuda::std::bit_cast<U32Words<int(sizeof(R) / 4)>>(r);
  return (std::uint64_t(bswap32(w.w[2 * i])) << 32) | bswap32(w.w[2 * i + 1]);
}

// Merge-sort comparators: the record's order.
template <>
struct TotalLess<U32x2> {
  __host__ __device__ bool operator()(const U32x2& x, const U32x2& y) const {
    return x.a < y.a || (x.a == y.a && x.b < y.b);
  }
};
template <>
struct TotalLess<F32U32> {
  __host__ __device__ bool operator()(const F32U32& x, const F32U32& y) const {
    const std::uint32_t xa = order_bits(x.a), ya = order_bits(y.a);
    return xa < ya || (xa == ya && x.b < y.b);
  }
};
template <>
struct TotalLess<U64U32> {
  __host__ __device__ bool operator()(const U64U32& x, const U64U32& y) const {
    return x.a < y.a || (x.a == y.a && x.b < y.b);
  }
};
template <>
struct TotalLess<B16> {
  __host__ __device__ bool operator()(const B16& x, const B16& y) const {
    const std::uint64_t x0 = be64(x, 0), y0 = be64(y, 0);
    return x0 < y0 || (x0 == y0 && be64(x, 1) < be64(y, 1));
  }
};
template <>
struct TotalLess<B8> {
  __host__ __device__ bool operator()(const B8& x, const B8& y) const {
    return be64(x, 0) < be64(y, 0);
  }
};

// Radix-sort decomposers: references to the key's fields, most significant
// first (CUB's custom-type radix sort).
template <class T>
struct Decomposer;
template <>
struct Decomposer<U32x2> {
  __host__ __device__ ::cuda::std::tuple<std::uint32_t&, std::uint32_t&> operator()(U32x2& k) const {
    return {k.a, k.b};
  }
};
template <>
struct Decomposer<F32U32> {
  __host__ __device__ ::cuda::std::tuple<float&, std::uint32_t&> operator()(F32U32& k) const {
    return {k.a, k.b};
  }
};
template <>
struct Decomposer<U64U32> {
  __host__ __device__ ::cuda::std::tuple<std::uint64_t&, std::uint32_t&> operator()(U64U32& k) const {
    return {k.a, k.b};
  }
};
// All bytes as uint8_t, byte 0 first.
template <class R, std::size_t... I>
__host__ __device__ inline auto byte_refs(R& k, ::cuda::std::index_sequence<I...>) {
  return ::cuda::std::tie(k.b[I]...);
}
template <>
struct Decomposer<B16> {
  __host__ __device__ auto operator()(B16& k) const {
    return byte_refs(k, ::cuda::std::make_index_sequence<16>{});
  }
};
template <>
struct Decomposer<B8> {
  __host__ __device__ auto operator()(B8& k) const {
    return byte_refs(k, ::cuda::std::make_index_sequence<8>{});
  }
};

// Verification order of composite keys, computed independently of the
// comparators above: field tuples, and bytes (std::array compares
// lexicographically) for b16 and b8. Radix order differs only for f32u32.
static std::pair<std::uint32_t, std::uint32_t> check_key(const U32x2& k, Order) {
  return {k.a, k.b};
}
static std::pair<std::uint32_t, std::uint32_t> check_key(const F32U32& k, Order order) {
  return {check_key(k.a, order), k.b};
}
static std::pair<std::uint64_t, std::uint32_t> check_key(const U64U32& k, Order) {
  return {k.a, k.b};
}
template <class R, std::size_t N = sizeof(R)>
static std::array<std::uint8_t, N> byte_key(const R& k) {
  std::array<std::uint8_t, N> bytes;
  std::memcpy(bytes.data(), k.b, N);
  return bytes;
}
static std::array<std::uint8_t, 16> check_key(const B16& k, Order) { return byte_key(k); }
static std::array<std::uint8_t, 8> check_key(const B8& k, Order) { return byte_key(k); }

static bool is_nan(const F32U32& k) { return k.a != k.a; }

// ---------------------------------------------------------------------------
// Host helpers
// ---------------------------------------------------------------------------

template <class T>
static std::vector<T> read_array(const char* path) {
  FILE* f = std::fopen(path, "rb");
  if (!f) die(std::string("cannot open ") + path);
  std::fseek(f, 0, SEEK_END);
  const long long size = std::ftell(f);
  std::fseek(f, 0, SEEK_SET);
  if (size < 0 || size % (long long)sizeof(T) != 0) {
    die(std::string(path) + ": size is not a multiple of the element size");
  }
  std::vector<T> v(size_t(size) / sizeof(T));
  if (!v.empty() && std::fread(v.data(), sizeof(T), v.size(), f) != v.size()) {
    die(std::string("short read from ") + path);
  }
  std::fclose(f);
  return v;
}

// Owning device allocation (freed on scope exit; never copied).
template <class T>
struct DevBuf {
  T* ptr = nullptr;
  explicit DevBuf(size_t count) {
    if (count > 0) CUDA_CHECK(cudaMalloc(&ptr, count * sizeof(T)));
  }
  ~DevBuf() {
    if (ptr) cudaFree(ptr);
  }
  DevBuf(const DevBuf&) = delete;
  DevBuf& operator=(const DevBuf&) = delete;
};

struct Timing {
  double ms_median = 0, ms_min = 0;
};

// 3 warm-up runs, then `reps` timed runs. `reset` restores the input (untimed);
// `sort` launches the CUB call and returns its cudaError_t.
template <class Reset, class Sort>
static Timing time_sort(int reps, Reset reset, Sort sort) {
  cudaEvent_t start, stop;
  CUDA_CHECK(cudaEventCreate(&start));
  CUDA_CHECK(cudaEventCreate(&stop));
  std::vector<float> ms;
  for (int i = 0; i < 3 + reps; ++i) {
    reset();
    CUDA_CHECK(cudaEventRecord(start, 0));
    CUDA_CHECK(sort());
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaEventRecord(stop, 0));
    CUDA_CHECK(cudaEventSynchronize(stop));
    float t = 0;
    CUDA_CHECK(cudaEventElapsedTime(&t, start, stop));
    if (i >= 3) ms.push_back(t);
  }
  CUDA_CHECK(cudaEventDestroy(start));
  CUDA_CHECK(cudaEventDestroy(stop));
  std::sort(ms.begin(), ms.end());
  const size_t m = ms.size() / 2;
  Timing t;
  t.ms_median = ms.size() % 2 ? ms[m] : 0.5 * (double(ms[m - 1]) + double(ms[m]));
  t.ms_min = ms.front();
  return t;
}

enum class Mode { Keys, Pairs, Pairs64, Argsort, Stable, Rec64 };

struct Run {
  const char* dtype;
  Mode mode;
  bool pairs;  // any mode with values
  int reps;
};

static bool g_all_verified = true;

static void emit(const char* algo, const Run& r, size_t n, size_t segs, const Timing& t, bool ok) {
  const double kps = t.ms_median > 0 ? double(n) / (t.ms_median / 1000.0) : 0.0;
  std::printf("{\"algo\":\"%s\",\"dtype\":\"%s\",\"pairs\":%s,\"n\":%zu,\"segments\":%zu,"
              "\"reps\":%d,\"ms_median\":%.6f,\"ms_min\":%.6f,\"keys_per_s\":%.6e,"
              "\"verified\":%s}\n",
              algo, r.dtype, r.pairs ? "true" : "false", n, segs, r.reps, t.ms_median, t.ms_min,
              kps, ok ? "true" : "false");
  std::fflush(stdout);
  if (!ok) g_all_verified = false;
}

static std::uint64_t mix64(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// A key's bit pattern as one 64-bit word: the bits of a scalar key; for a
// composite record, its 64-bit words (all bytes, padding too) chained by mix64.
template <class T>
static std::uint64_t key_word(const T& v) {
  if constexpr (kComposite<T>) {
    static_assert(sizeof(T) % 8 == 0, "composite records are whole 64-bit words");
    std::uint64_t x = 0;
    for (size_t i = 0; i < sizeof(T); i += 8) {
      std::uint64_t w;
      std::memcpy(&w, reinterpret_cast<const unsigned char*>(&v) + i, 8);
      x = mix64(x ^ w);
    }
    return x;
  } else {
    return std::uint64_t(::cuda::std::bit_cast<Bits<T>>(v));
  }
}

// A key's bits for messages: 0x-hex of a scalar key's bits; a composite
// record's bytes in memory order.
template <class T>
static std::string key_hex(const T& v) {
  char buf[2 * sizeof(T) + 8];
  if constexpr (kComposite<T>) {
    const unsigned char* p = reinterpret_cast<const unsigned char*>(&v);
    std::string s = "bytes ";
    for (size_t i = 0; i < sizeof(T); ++i) {
      std::snprintf(buf, sizeof buf, "%02x", p[i]);
      s += buf;
    }
    return s;
  } else {
    std::snprintf(buf, sizeof buf, "0x%llx", (unsigned long long)::cuda::std::bit_cast<Bits<T>>(v));
    return buf;
  }
}

// Order-independent hash of a key range's bit patterns (sum of a 64-bit mix),
// so keys-only output can be checked to be a permutation of its input in O(n).
template <class T>
static std::uint64_t multiset_hash(const T* p, size_t len) {
  std::uint64_t h = 0;
  for (size_t i = 0; i < len; ++i) h += mix64(key_word(p[i]));
  return h;
}

// Checks each segment [off[s], off[s+1]) of `out` is sorted in `order` and,
// with values, that out[i] is bitwise the input key at index vals[i], that
// index lying in the same segment and used once; without values, that the
// segment holds the same multiset of bit patterns as the input.
template <class T>
static bool verify(const char* algo, const std::vector<T>& in, const std::vector<T>& out,
                   const std::vector<std::uint32_t>* vals, const std::vector<std::uint32_t>& off,
                   Order order, bool stable = false) {
  const size_t n = in.size();
  std::vector<unsigned char> seen(vals ? n : 0, 0);
  for (size_t s = 0; s + 1 < off.size(); ++s) {
    const size_t lo = off[s], hi = off[s + 1];
    // On failure, says whether the input segment holds a NaN (see Order).
    auto nan_note = [&] {
      return std::any_of(in.data() + lo, in.data() + hi, [](const T& v) { return is_nan(v); })
                 ? " [input holds NaN]"
                 : "";
    };
    for (size_t i = lo; i < hi; ++i) {
      if (i > lo && check_key(out[i], order) < check_key(out[i - 1], order)) {
        std::fprintf(stderr, "%s: not sorted at index %zu (segment %zu%s): %s after %s\n", algo,
                     i, s, nan_note(), key_hex(out[i]).c_str(), key_hex(out[i - 1]).c_str());
        return false;
      }
      if (vals) {
        const size_t v = (*vals)[i];
        if (v < lo || v >= hi || seen[v]) {
          std::fprintf(stderr, "%s: bad or repeated value %zu at index %zu (segment %zu%s)\n",
                       algo, v, i, s, nan_note());
          return false;
        }
        seen[v] = 1;
        if (std::memcmp(&out[i], &in[v], sizeof(T)) != 0) {
          std::fprintf(stderr, "%s: key at %zu is not the input key at index %zu (segment %zu%s)\n",
                       algo, i, v, s, nan_note());
          return false;
        }
        if (stable && i > lo && check_key(out[i], order) == check_key(out[i - 1], order) &&
            (*vals)[i] < (*vals)[i - 1]) {
          std::fprintf(stderr, "%s: not stable at index %zu: value %u after %u for equal keys\n",
                       algo, i, (*vals)[i], (*vals)[i - 1]);
          return false;
        }
      }
    }
    if (!vals &&
        multiset_hash(out.data() + lo, hi - lo) != multiset_hash(in.data() + lo, hi - lo)) {
      std::fprintf(stderr, "%s: segment %zu%s is not a permutation of its input\n", algo, s,
                   nan_note());
      return false;
    }
  }
  return true;
}

// ---------------------------------------------------------------------------
// Benchmarks
// ---------------------------------------------------------------------------

// rec64's 64-byte value: 16 words, each the input index.
struct alignas(16) Rec64 {
  std::uint32_t w[16];
};
static_assert(sizeof(Rec64) == 64, "rec64 values are 64 bytes");

// Value i of the key-value modes: u32 i, or for u64 values i in both halves
// (so that a value whose high half did not travel is caught), or for rec64 i
// in all 16 words.
template <class V>
static V value_of(size_t i) {
  if constexpr (::cuda::std::is_same_v<V, Rec64>) {
    Rec64 v;
    for (std::uint32_t& w : v.w) w = std::uint32_t(i);
    return v;
  } else if constexpr (sizeof(V) == 8) {
    return V(std::uint64_t(i) * 0x100000001ull);
  } else {
    return V(i);
  }
}

// The input position value `v` encodes, or UINT32_MAX for no valid value.
template <class V>
static std::uint32_t position_of(V v) {
  if constexpr (::cuda::std::is_same_v<V, Rec64>) {
    for (const std::uint32_t w : v.w) {
      if (w != v.w[0]) return UINT32_MAX;
    }
    return v.w[0];
  } else if constexpr (sizeof(V) == 8) {
    const std::uint64_t b = std::uint64_t(v);
    return (b >> 32) == (b & 0xffffffffull) ? std::uint32_t(b) : UINT32_MAX;
  } else {
    return std::uint32_t(v);
  }
}

// Writes out[i] = i (argsort's values, launched inside the timed region).
template <class V>
__global__ void iota_kernel(V* out, size_t n) {
  const size_t stride = size_t(gridDim.x) * blockDim.x;
  for (size_t i = size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    out[i] = V(i);
  }
}

template <class V>
static cudaError_t launch_iota(V* out, size_t n) {
  const unsigned blocks = unsigned(std::min<size_t>((n + 255) / 256, 65535));
  iota_kernel<<<blocks, 256, 0, 0>>>(out, n);
  return cudaGetLastError();
}

// Device buffers shared by all algorithms of one run: pristine input, work
// copy (the sort input, and merge sort's in-place output), output buffers;
// values of type V.
template <class T, class V = std::uint32_t>
struct Buffers {
  size_t n;
  bool pairs;
  DevBuf<T> keys_pristine, keys_work, keys_out;
  DevBuf<V> vals_pristine, vals_work, vals_out;

  Buffers(const std::vector<T>& h_keys, bool pairs_)
      : n(h_keys.size()), pairs(pairs_), keys_pristine(n), keys_work(n), keys_out(n),
        vals_pristine(pairs ? n : 0), vals_work(pairs ? n : 0), vals_out(pairs ? n : 0) {
    CUDA_CHECK(cudaMemcpy(keys_pristine.ptr, h_keys.data(), n * sizeof(T), cudaMemcpyHostToDevice));
    if (pairs) {
      std::vector<V> iota(n);
      for (size_t i = 0; i < n; ++i) iota[i] = value_of<V>(i);
      CUDA_CHECK(cudaMemcpy(vals_pristine.ptr, iota.data(), n * sizeof(V), cudaMemcpyHostToDevice));
    }
  }
  // Untimed restore of the sort input before every run.
  void reset() {
    CUDA_CHECK(cudaMemcpyAsync(keys_work.ptr, keys_pristine.ptr, n * sizeof(T),
                               cudaMemcpyDeviceToDevice, 0));
    if (pairs) {
      CUDA_CHECK(cudaMemcpyAsync(vals_work.ptr, vals_pristine.ptr, n * sizeof(V),
                                 cudaMemcpyDeviceToDevice, 0));
    }
  }
  // Sizes and allocates temp storage (untimed), times `sort(d_temp, bytes)`,
  // copies the result back (from the work buffers if `in_place`, else from the
  // out buffers), verifies it (with `stable`, also that equal keys kept their
  // values in input order) and prints the JSON line.
  template <class Sort>
  void bench(const char* algo, const Run& r, const std::vector<T>& h_in, Sort sort, bool in_place,
             const std::vector<std::uint32_t>& off, Order order, size_t segs, bool stable = false) {
    size_t bytes = 0;
    CUDA_CHECK(sort(nullptr, bytes));
    // CUB reads a null d_temp_storage as a size query, so never allocate 0 bytes.
    const DevBuf<unsigned char> temp(std::max<size_t>(bytes, 1));
    const Timing tm = time_sort(r.reps, [&] { reset(); }, [&] { return sort(temp.ptr, bytes); });

    std::vector<T> h_out(n);
    std::vector<V> h_vals(pairs ? n : 0);
    CUDA_CHECK(cudaMemcpy(h_out.data(), in_place ? keys_work.ptr : keys_out.ptr, n * sizeof(T),
                          cudaMemcpyDeviceToHost));
    if (pairs) {
      CUDA_CHECK(cudaMemcpy(h_vals.data(), in_place ? vals_work.ptr : vals_out.ptr, n * sizeof(V),
                            cudaMemcpyDeviceToHost));
    }
    std::vector<std::uint32_t> positions(h_vals.size());
    for (size_t i = 0; i < h_vals.size(); ++i) positions[i] = position_of<V>(h_vals[i]);
    emit(algo, r, n, segs, tm,
         verify(algo, h_in, h_out, pairs ? &positions : nullptr, off, order, stable));
  }
};

// DeviceRadixSort over the whole key: all its bits for a scalar key, the
// decomposer's fields for a composite one.
template <class T, class OffsetT>
static cudaError_t radix_keys(void* d_temp, size_t& bytes, T* keys_in, T* keys_out, OffsetT n) {
  if constexpr (kComposite<T>) {
    return cub::DeviceRadixSort::SortKeys(d_temp, bytes, keys_in, keys_out, n, Decomposer<T>{}, 0);
  } else {
    return cub::DeviceRadixSort::SortKeys(d_temp, bytes, keys_in, keys_out, n, 0,
                                          int(sizeof(T) * 8), 0);
  }
}

template <class T, class V, class OffsetT>
static cudaError_t radix_pairs(void* d_temp, size_t& bytes, T* keys_in, T* keys_out, V* vals_in,
                               V* vals_out, OffsetT n) {
  if constexpr (kComposite<T>) {
    return cub::DeviceRadixSort::SortPairs(d_temp, bytes, keys_in, keys_out, vals_in, vals_out, n,
                                           Decomposer<T>{}, 0);
  } else {
    return cub::DeviceRadixSort::SortPairs(d_temp, bytes, keys_in, keys_out, vals_in, vals_out, n,
                                           0, int(sizeof(T) * 8), 0);
  }
}

// DeviceMergeSort and DeviceRadixSort; OffsetT is the num_items type (int when
// n fits, so CUB uses 32-bit offsets; int64_t beyond that). V is the value type.
template <class T, class V, class OffsetT>
static void run_flat(const Run& r, const std::vector<T>& h_keys) {
  Buffers<T, V> b(h_keys, r.pairs);
  const OffsetT n = OffsetT(b.n);
  const std::vector<std::uint32_t> whole = {0u, std::uint32_t(b.n)};

  // rec64 runs only the mode-1 calls below (no 64-byte iota or stable sorts).
  if constexpr (!::cuda::std::is_same_v<V, Rec64>) {
    if (r.mode == Mode::Argsort) {
      // The keys stay as they are: merge sort copies them out, radix sort
      // writes its own output. The iota is part of the timed operation.
      auto merge = [&](void* d_temp, size_t& bytes) {
        if (d_temp) {
          const cudaError_t e = launch_iota(b.vals_work.ptr, b.n);
          if (e != cudaSuccess) return e;
        }
        return cub::DeviceMergeSort::SortPairsCopy(d_temp, bytes, b.keys_work.ptr,
                                                   b.vals_work.ptr, b.keys_out.ptr, b.vals_out.ptr,
                                                   n, TotalLess<T>{}, 0);
      };
      b.bench("cub_merge_argsort", r, h_keys, merge, false, whole, Order::Total, 0);
      auto radix = [&](void* d_temp, size_t& bytes) {
        if (d_temp) {
          const cudaError_t e = launch_iota(b.vals_work.ptr, b.n);
          if (e != cudaSuccess) return e;
        }
        return radix_pairs(d_temp, bytes, b.keys_work.ptr, b.keys_out.ptr, b.vals_work.ptr,
                           b.vals_out.ptr, n);
      };
      // Radix sort is stable: this is also the stable argsort.
      b.bench("cub_radix_argsort_stable", r, h_keys, radix, false, whole, Order::Radix, 0, true);
      return;
    }

    if (r.mode == Mode::Stable) {
      auto merge = [&](void* d_temp, size_t& bytes) {
        return cub::DeviceMergeSort::StableSortPairs(d_temp, bytes, b.keys_work.ptr,
                                                     b.vals_work.ptr, n, TotalLess<T>{}, 0);
      };
      b.bench("cub_merge_sort_stable", r, h_keys, merge, true, whole, Order::Total, 0, true);
      auto radix = [&](void* d_temp, size_t& bytes) {
        return radix_pairs(d_temp, bytes, b.keys_work.ptr, b.keys_out.ptr, b.vals_work.ptr,
                           b.vals_out.ptr, n);
      };
      b.bench("cub_radix_sort_stable", r, h_keys, radix, false, whole, Order::Radix, 0, true);
      return;
    }
  }

  // Merge sort: in place on the work buffers.
  auto merge = [&](void* d_temp, size_t& bytes) {
    return r.pairs ? cub::DeviceMergeSort::SortPairs(d_temp, bytes, b.keys_work.ptr, b.vals_work.ptr,
                                                     n, TotalLess<T>{}, 0)
                   : cub::DeviceMergeSort::SortKeys(d_temp, bytes, b.keys_work.ptr, n,
                                                    TotalLess<T>{}, 0);
  };
  b.bench("cub_merge_sort", r, h_keys, merge, true, whole, Order::Total, 0);

  // Radix sort over the whole key: work -> out.
  auto radix = [&](void* d_temp, size_t& bytes) {
    return r.pairs ? radix_pairs(d_temp, bytes, b.keys_work.ptr, b.keys_out.ptr, b.vals_work.ptr,
                                 b.vals_out.ptr, n)
                   : radix_keys(d_temp, bytes, b.keys_work.ptr, b.keys_out.ptr, n);
  };
  b.bench("cub_radix_sort", r, h_keys, radix, false, whole, Order::Radix, 0);
}

// DeviceSegmentedSort and DeviceSegmentedRadixSort over u32 offsets
// (segment s is [off[s], off[s+1])): work -> out.
template <class T>
static void run_segmented(const Run& r, const std::vector<T>& h_keys,
                          const std::vector<std::uint32_t>& off) {
  Buffers<T> b(h_keys, r.pairs);
  const size_t segs = off.size() - 1;
  DevBuf<std::uint32_t> d_off(off.size());
  CUDA_CHECK(cudaMemcpy(d_off.ptr, off.data(), off.size() * 4, cudaMemcpyHostToDevice));
  const std::uint32_t* begin = d_off.ptr;
  const std::uint32_t* end = d_off.ptr + 1;
  constexpr int kEndBit = int(sizeof(T) * 8);

  // DeviceSegmentedSort takes 64-bit item and segment counts (CCCL 3).
  const std::int64_t n64 = std::int64_t(b.n), segs64 = std::int64_t(segs);
  auto seg_sort = [&](void* d_temp, size_t& bytes) {
    return r.pairs ? cub::DeviceSegmentedSort::SortPairs(d_temp, bytes, b.keys_work.ptr, b.keys_out.ptr,
                                                         b.vals_work.ptr, b.vals_out.ptr, n64,
                                                         segs64, begin, end, 0)
                   : cub::DeviceSegmentedSort::SortKeys(d_temp, bytes, b.keys_work.ptr, b.keys_out.ptr,
                                                        n64, segs64, begin, end, 0);
  };
  b.bench("cub_segmented_sort", r, h_keys, seg_sort, false, off, Order::Radix, segs);

  // DeviceSegmentedRadixSort takes int counts.
  if (b.n > size_t(INT_MAX) || segs > size_t(INT_MAX)) {
    std::fprintf(stderr, "cub_segmented_radix_sort: skipped, n or segments exceed INT_MAX\n");
    g_all_verified = false;
    return;
  }
  const int n32 = int(b.n), segs32 = int(segs);
  auto seg_radix = [&](void* d_temp, size_t& bytes) {
    return r.pairs ? cub::DeviceSegmentedRadixSort::SortPairs(d_temp, bytes, b.keys_work.ptr,
                                                              b.keys_out.ptr, b.vals_work.ptr,
                                                              b.vals_out.ptr, n32, segs32, begin,
                                                              end, 0, kEndBit, 0)
                   : cub::DeviceSegmentedRadixSort::SortKeys(d_temp, bytes, b.keys_work.ptr,
                                                             b.keys_out.ptr, n32, segs32, begin,
                                                             end, 0, kEndBit, 0);
  };
  b.bench("cub_segmented_radix_sort", r, h_keys, seg_radix, false, off, Order::Radix, segs);
}

template <class T>
static void run_dtype(const Run& r, const char* keys_path, const char* seg_path) {
  if (r.mode == Mode::Rec64 && !::cuda::std::is_same_v<T, std::uint32_t>) {
    die("mode rec64 needs dtype u32");
  }
  if constexpr (kComposite<T>) {
    if (seg_path) die(std::string("dtype ") + r.dtype + " has no segmented sorts");
    if (r.mode == Mode::Pairs64) {
      die(std::string("dtype ") + r.dtype + " takes mode 0, 1, argsort or stable");
    }
  }
  const std::vector<T> keys = read_array<T>(keys_path);
  const size_t n = keys.size();
  std::vector<std::uint32_t> off;
  if (seg_path) {
    off = read_array<std::uint32_t>(seg_path);
    if (off.empty() || off.front() != 0 || off.back() != n) {
      die("segments.bin must hold offsets starting at 0 and ending at n");
    }
    for (size_t s = 1; s < off.size(); ++s) {
      if (off[s] < off[s - 1]) die("segment offsets must be non-decreasing");
    }
  }
  if (seg_path && r.mode != Mode::Keys && r.mode != Mode::Pairs) {
    die("segments.bin needs mode 0 or 1");
  }
  if (n <= 1) {  // Nothing to sort: report zeros without calling CUB.
    const Timing zero;
    if (seg_path) {
      emit("cub_segmented_sort", r, n, off.size() - 1, zero, true);
      emit("cub_segmented_radix_sort", r, n, off.size() - 1, zero, true);
    } else if (r.mode == Mode::Argsort) {
      emit("cub_merge_argsort", r, n, 0, zero, true);
      emit("cub_radix_argsort_stable", r, n, 0, zero, true);
    } else if (r.mode == Mode::Stable) {
      emit("cub_merge_sort_stable", r, n, 0, zero, true);
      emit("cub_radix_sort_stable", r, n, 0, zero, true);
    } else {
      emit("cub_merge_sort", r, n, 0, zero, true);
      emit("cub_radix_sort", r, n, 0, zero, true);
    }
    return;
  }
  if constexpr (kComposite<T>) {  // u32 values only, no segments (checked above)
    if (n <= size_t(INT_MAX)) run_flat<T, std::uint32_t, int>(r, keys);
    else run_flat<T, std::uint32_t, std::int64_t>(r, keys);
  } else if (seg_path) {
    run_segmented<T>(r, keys, off);
  } else if (r.mode == Mode::Rec64) {
    if constexpr (::cuda::std::is_same_v<T, std::uint32_t>) {  // u32 only (checked above)
      if (n <= size_t(INT_MAX)) run_flat<T, Rec64, int>(r, keys);
      else run_flat<T, Rec64, std::int64_t>(r, keys);
    }
  } else if (r.mode == Mode::Pairs64) {
    if (n <= size_t(INT_MAX)) run_flat<T, std::uint64_t, int>(r, keys);
    else run_flat<T, std::uint64_t, std::int64_t>(r, keys);
  } else if (n <= size_t(INT_MAX)) {
    run_flat<T, std::uint32_t, int>(r, keys);
  } else {
    run_flat<T, std::uint32_t, std::int64_t>(r, keys);
  }
}

// ---------------------------------------------------------------------------
// orderby3: a three-column table sorted the comparator way
// ---------------------------------------------------------------------------

// One row of the keys file (24 bytes, packed as the Rust benchmark writes it).
struct OrderBy3Row {
  std::uint16_t region;
  std::uint8_t pad[6];  // ignored
  double revenue;
  std::uint64_t id;
};
static_assert(sizeof(OrderBy3Row) == 24 && offsetof(OrderBy3Row, region) == 0 &&
                  offsetof(OrderBy3Row, revenue) == 8 && offsetof(OrderBy3Row, id) == 16,
              "orderby3 rows must match the Rust layout");

// The row order on u32 row indices, reading the device columns: region
// ascending, then revenue descending in IEEE total order (larger order_bits
// first), then id ascending. A lexicographic combination of total orders, so
// a strict weak order whose equivalent rows agree in all three columns; the
// stable sorts keep those in index order.
struct OrderBy3Less {
  const std::uint16_t* region;
  const double* revenue;
  const std::uint64_t* id;
  __host__ __device__ bool operator()(std::uint32_t i, std::uint32_t j) const {
    const std::uint16_t gi = region[i], gj = region[j];
    if (gi != gj) return gi < gj;
    const std::uint64_t ri = order_bits(revenue[i]), rj = order_bits(revenue[j]);
    if (ri != rj) return ri > rj;
    return id[i] < id[j];
  }
};

// Checks `idx` is a permutation of 0..n-1 whose rows are in the row order with
// equal rows in increasing index (stability), with the order computed on the
// host independently of OrderBy3Less: (region, ~revenue bits, id, index)
// tuples strictly increasing.
static bool verify_orderby3(const char* algo, const std::vector<OrderBy3Row>& rows,
                            const std::vector<std::uint32_t>& idx) {
  const size_t n = rows.size();
  std::vector<unsigned char> seen(n, 0);
  auto row_key = [&](std::uint32_t i) {
    return std::make_tuple(rows[i].region, std::uint64_t(~order_bits(rows[i].revenue)), rows[i].id);
  };
  for (size_t k = 0; k < n; ++k) {
    const std::uint32_t v = idx[k];
    if (v >= n || seen[v]) {
      std::fprintf(stderr, "%s: bad or repeated index %u at position %zu\n", algo, v, k);
      return false;
    }
    seen[v] = 1;
    if (k == 0) continue;
    const std::uint32_t u = idx[k - 1];
    const auto ku = row_key(u), kv = row_key(v);
    if (kv < ku || (kv == ku && v < u)) {
      std::fprintf(stderr,
                   "%s: %s at position %zu: row %u (region %u, revenue 0x%016llx, id %llu) "
                   "after row %u (region %u, revenue 0x%016llx, id %llu)\n",
                   algo, kv < ku ? "not sorted" : "not stable", k, v, unsigned(rows[v].region),
                   (unsigned long long)::cuda::std::bit_cast<std::uint64_t>(rows[v].revenue),
                   (unsigned long long)rows[v].id, u, unsigned(rows[u].region),
                   (unsigned long long)::cuda::std::bit_cast<std::uint64_t>(rows[u].revenue),
                   (unsigned long long)rows[u].id);
      return false;
    }
  }
  return true;
}

static void run_orderby3(const Run& r, const char* keys_path, const char* seg_path) {
  if (seg_path) die("dtype orderby3 has no segmented sorts");
  if (r.mode != Mode::Keys) die("dtype orderby3 takes mode 0 only");
  const std::vector<OrderBy3Row> rows = read_array<OrderBy3Row>(keys_path);
  const size_t n = rows.size();
  if (n <= 1) {  // Nothing to sort: report zeros without calling CUB.
    const Timing zero;
    emit("cub_merge_orderby", r, n, 0, zero, true);
    emit("thrust_stable_orderby", r, n, 0, zero, true);
    return;
  }
  if (n > size_t(UINT32_MAX)) die("dtype orderby3: n exceeds the u32 row indices");

  // The columns, split on the host and uploaded outside the timing.
  std::vector<std::uint16_t> h_region(n);
  std::vector<double> h_revenue(n);
  std::vector<std::uint64_t> h_id(n);
  for (size_t i = 0; i < n; ++i) {
    h_region[i] = rows[i].region;
    h_revenue[i] = rows[i].revenue;
    h_id[i] = rows[i].id;
  }
  DevBuf<std::uint16_t> region(n);
  DevBuf<double> revenue(n);
  DevBuf<std::uint64_t> id(n);
  DevBuf<std::uint32_t> idx(n);
  CUDA_CHECK(cudaMemcpy(region.ptr, h_region.data(), n * sizeof(std::uint16_t),
                        cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(revenue.ptr, h_revenue.data(), n * sizeof(double), cudaMemcpyHostToDevice));
  CUDA_CHECK(cudaMemcpy(id.ptr, h_id.data(), n * sizeof(std::uint64_t), cudaMemcpyHostToDevice));
  const OrderBy3Less less{region.ptr, revenue.ptr, id.ptr};

  // As Buffers::bench, with `sort(d_temp, bytes)` writing the indices. The
  // columns are only read and the iota rewrites the indices inside the timed
  // run, so nothing needs restoring; the untimed reset fills the indices with
  // UINT32_MAX (no valid index), so that the result verified is the last run's.
  auto bench = [&](const char* algo, auto sort) {
    size_t bytes = 0;
    CUDA_CHECK(sort(nullptr, bytes));
    const DevBuf<unsigned char> temp(std::max<size_t>(bytes, 1));
    const Timing tm = time_sort(
        r.reps, [&] { CUDA_CHECK(cudaMemsetAsync(idx.ptr, 0xff, n * sizeof(std::uint32_t), 0)); },
        [&] { return sort(temp.ptr, bytes); });
    std::vector<std::uint32_t> h_idx(n);
    CUDA_CHECK(
        cudaMemcpy(h_idx.data(), idx.ptr, n * sizeof(std::uint32_t), cudaMemcpyDeviceToHost));
    emit(algo, r, n, 0, tm, verify_orderby3(algo, rows, h_idx));
  };

  // OffsetT int when n fits (32-bit offsets in CUB), else int64_t.
  auto merge = [&](void* d_temp, size_t& bytes) {
    if (d_temp) {
      const cudaError_t e = launch_iota(idx.ptr, n);
      if (e != cudaSuccess) return e;
    }
    return n <= size_t(INT_MAX)
               ? cub::DeviceMergeSort::StableSortKeys(d_temp, bytes, idx.ptr, int(n), less, 0)
               : cub::DeviceMergeSort::StableSortKeys(d_temp, bytes, idx.ptr, std::int64_t(n),
                                                      less, 0);
  };
  bench("cub_merge_orderby", merge);

  // thrust allocates (and frees) its temporary storage inside the call, which
  // returns when the sort is done; no size query.
  auto thrust_sort = [&](void* d_temp, size_t& bytes) {
    if (!d_temp) {
      bytes = 0;
      return cudaSuccess;
    }
    const cudaError_t e = launch_iota(idx.ptr, n);
    if (e != cudaSuccess) return e;
    try {
      thrust::stable_sort(thrust::device, idx.ptr, idx.ptr + n, less);
    } catch (const std::exception& ex) {
      std::fprintf(stderr, "thrust_stable_orderby: %s\n", ex.what());
      return cudaErrorUnknown;
    }
    return cudaSuccess;
  };
  bench("thrust_stable_orderby", thrust_sort);
}

int main(int argc, char** argv) {
  if (argc != 5 && argc != 6) {
    std::fprintf(stderr,
                 "usage: %s <keys.bin> "
                 "<u32|i32|f32|u64|i64|f64|u32x2|f32u32|u64u32|b16|b8|orderby3> "
                 "<mode 0|1|v64|argsort|stable|rec64> <reps> [segments.bin]\n",
                 argv[0]);
    return 1;
  }
  Run r;
  r.dtype = argv[2];
  const std::string mode = argv[3];
  if (mode == "0") r.mode = Mode::Keys;
  else if (mode == "1") r.mode = Mode::Pairs;
  else if (mode == "v64") r.mode = Mode::Pairs64;
  else if (mode == "argsort") r.mode = Mode::Argsort;
  else if (mode == "stable") r.mode = Mode::Stable;
  else if (mode == "rec64") r.mode = Mode::Rec64;
  else die("mode must be 0, 1, v64, argsort, stable or rec64");
  r.pairs = r.mode != Mode::Keys;
  r.reps = std::atoi(argv[4]);
  if (r.reps < 1) r.reps = 10;
  const char* seg_path = argc == 6 ? argv[5] : nullptr;

  int dev = 0;
  CUDA_CHECK(cudaGetDevice(&dev));
  cudaDeviceProp prop;
  CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  std::fprintf(stderr, "cub_bench: device %d: %s (sm_%d%d), CUB %d\n", dev, prop.name, prop.major,
               prop.minor, CUB_VERSION);

  const std::string t = r.dtype;
  if (r.mode == Mode::Rec64) {
    if (t != "u32") die("mode rec64 needs dtype u32, not " + t);
    r.dtype = "u32:rec64";  // the JSON dtype
  }
  if (t == "u32") run_dtype<std::uint32_t>(r, argv[1], seg_path);
  else if (t == "i32") run_dtype<std::int32_t>(r, argv[1], seg_path);
  else if (t == "f32") run_dtype<float>(r, argv[1], seg_path);
  else if (t == "u64") run_dtype<std::uint64_t>(r, argv[1], seg_path);
  else if (t == "i64") run_dtype<std::int64_t>(r, argv[1], seg_path);
  else if (t == "f64") run_dtype<double>(r, argv[1], seg_path);
  else if (t == "u32x2") run_dtype<U32x2>(r, argv[1], seg_path);
  else if (t == "f32u32") run_dtype<F32U32>(r, argv[1], seg_path);
  else if (t == "u64u32") run_dtype<U64U32>(r, argv[1], seg_path);
  else if (t == "b16") run_dtype<B16>(r, argv[1], seg_path);
  else if (t == "b8") run_dtype<B8>(r, argv[1], seg_path);
  else if (t == "orderby3") run_orderby3(r, argv[1], seg_path);
  else die("unknown dtype " + t);
  return g_all_verified ? 0 : 1;
}
