// What the machine's CPU copies allow, apart from the GPU: T threads copy
// `bytes` of pageable memory (a) into as much pageable memory (plain memcpy),
// (b) the same with non-temporal stores, (c) into a ring of 16 x 4 MiB (the
// staging's shape, reused: the ring stays in the last-level cache), and
// (d) only read it. GB/s of bytes copied (read), the median of 5 after a
// warm-up. Build: cc -O2 -mavx2 -pthread host-memcpy-microbench.c -o mb
#include <immintrin.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static size_t BYTES;
static char *src, *dst, *ring;
static int T, MODE;
static volatile uint64_t sink;

static double now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + t.tv_nsec * 1e-9; }

static void nt_copy(char *d, const char *s, size_t n) {
  for (size_t i = 0; i < n; i += 32) _mm256_stream_si256((__m256i *)(d + i), _mm256_loadu_si256((const __m256i *)(s + i)));
  _mm_sfence();
}

static void *work(void *arg) {
  size_t id = (size_t)arg, chunk = 256 << 10, nchunks = BYTES / chunk;
  uint64_t acc = 0;
  // chunks dealt round-robin, as the crew claims them
  for (size_t c = id; c < nchunks; c += T) {
    const char *s = src + c * chunk;
    switch (MODE) {
      case 0: memcpy(dst + c * chunk, s, chunk); break;
      case 1: nt_copy(dst + c * chunk, s, chunk); break;
      case 2: memcpy(ring + (c * chunk) % (64 << 20), s, chunk); break;
      case 3: for (size_t i = 0; i < chunk; i += 64) acc += *(const uint64_t *)(s + i); break;
    }
  }
  sink += acc;
  return 0;
}

static double run(int mode, int threads) {
  MODE = mode; T = threads;
  double best[6];
  for (int r = 0; r < 6; r++) {
    pthread_t th[64];
    double t0 = now();
    for (int i = 0; i < T; i++) pthread_create(&th[i], 0, work, (void *)(size_t)i);
    for (int i = 0; i < T; i++) pthread_join(th[i], 0);
    best[r] = BYTES / (now() - t0) / 1e9;
  }
  // median of the last 5
  for (int i = 1; i < 6; i++) for (int j = i + 1; j < 6; j++) if (best[j] < best[i]) { double x = best[i]; best[i] = best[j]; best[j] = x; }
  return best[3];
}

int main(int argc, char **argv) {
  size_t sizes[2] = {256u << 20, 1u << 30};
  const char *names[4] = {"memcpy pageable->pageable", "non-temporal pageable->pageable", "memcpy into a 64 MiB ring", "read only"};
  for (int z = 0; z < 2; z++) {
    BYTES = sizes[z];
    src = aligned_alloc(4096, BYTES); dst = aligned_alloc(4096, BYTES); ring = aligned_alloc(4096, 64 << 20);
    memset(src, 1, BYTES); memset(dst, 2, BYTES); memset(ring, 3, 64 << 20);
    for (int m = 0; m < 4; m++) {
      printf("%4zu MiB %-32s", BYTES >> 20, names[m]);
      int ts[4] = {1, 8, 15, 16};
      for (int t = 0; t < 4; t++) printf("  %2d threads %6.1f GB/s", ts[t], run(m, ts[t]));
      printf("\n");
    }
    free(src); free(dst); free(ring);
  }
  return 0;
}
