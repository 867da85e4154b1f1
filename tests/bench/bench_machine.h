// Copyright 2026 The svi Authors.
//
// The machine a benchmark table comes from, printed at the top of svi-bench and
// svi-bench-plugin: the CPU as the kernel names it, the kernels' dispatch, the compiler and flags,
// the load, and a clock estimate.  Wall times from two hosts of one cloud "kind" differed by 2x
// (benchmarks.md, "Which machine"), so a table without these lines cannot be compared with another.
//
// The clock estimate times a chain of dependent 64-bit multiply-adds, x = x * K + 1: each one
// waits for the last (integer multiply 3 cycles + add 1 cycle on x86-64 cores since about 2011),
// so cycles per second ~ 4 / (seconds per link).  It is an estimate of the clock the benchmark
// ran at (turbo and the host's sharing included), not a reading of a counter.

#ifndef SVI_BENCH_MACHINE_H_
#define SVI_BENCH_MACHINE_H_

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

/* svi_lcp.c (exported by svi_core and the plugin, which both benchmarks link): 1 where the AVX-512
 * copies of the kernels run */
int svi_have_avx512_probe(void);

#ifndef SVI_BUILD_FLAGS
#define SVI_BUILD_FLAGS "flags not recorded"
#endif

// seconds on the monotonic clock (the benchmarks' timer)
static double bench_now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

// FNV-1a over every bit of n doubles, continuing from h (start: BENCH_FNV0): the bit-identity
// hashes the benchmarks print (same_bits.sh compares them between builds)
#define BENCH_FNV0 1469598103934665603ULL
static inline uint64_t bench_fnv(uint64_t h, const double* x, size_t n) {
  for (size_t i = 0; i < n; i++) {
    uint64_t b;
    memcpy(&b, x + i, sizeof(b));
    h = (h ^ b) * 1099511628211ULL;
  }
  return h;
}

// best of 5 runs of a 2e7-link dependent multiply-add chain: GHz estimate (4 cycles per link,
// x86-64 only: elsewhere a link is one fused multiply-add of core-dependent latency; 0 = none)
static double bench_machine_ghz(void) {
#if defined(__x86_64__)
  const long links = 20000000;
  double best = 1e30;
  volatile uint64_t sink = 0;
  for (int r = 0; r < 5; r++) {
    uint64_t x = (uint64_t)r + 1;
    double t0 = bench_now();
    for (long i = 0; i < links; i++) {
      x = x * 0x9E3779B97F4A7C15ull + 1;
#if defined(__GNUC__)
      __asm__ volatile("" : "+r"(x));   // clang would fold two links into one (x K^2 + c)
#endif
    }
    double t = bench_now() - t0;
    sink += x;
    if (t < best) best = t;
  }
  (void)sink;
  return 4.0 * (double)links / best * 1e-9;
#else
  return 0;
#endif
}

// the value of "key" in /proc/cpuinfo's first processor, or "" (not Linux, or no such key)
static void bench_cpuinfo(const char* key, char* out, int cap) {
  out[0] = 0;
  FILE* f = fopen("/proc/cpuinfo", "r");
  if (!f) return;
  char line[512];
  size_t k = strlen(key);
  while (fgets(line, sizeof(line), f)) {
    if (strncmp(line, key, k) != 0) continue;
    const char* v = line + k;
    while (*v == ' ' || *v == '\t') v++;
    if (*v != ':') continue;     // "model" must not take "model name"'s line
    v++;
    while (*v == ' ') v++;
    snprintf(out, (size_t)cap, "%s", v);
    out[strcspn(out, "\n")] = 0;
    break;
  }
  fclose(f);
}

// prints the lines; returns the clock estimate in GHz
static double bench_print_machine(void) {
  char name[256], fam[32], model[32], step[32], mhz[32];
  bench_cpuinfo("model name", name, sizeof(name));
  bench_cpuinfo("cpu family", fam, sizeof(fam));
  bench_cpuinfo("model", model, sizeof(model));
  bench_cpuinfo("stepping", step, sizeof(step));
  bench_cpuinfo("cpu MHz", mhz, sizeof(mhz));
  double load = -1;
  FILE* f = fopen("/proc/loadavg", "r");
  if (f) {
    if (fscanf(f, "%lf", &load) != 1) load = -1;
    fclose(f);
  }
  double ghz = bench_machine_ghz();
  const char* kernels = "portable C (no run-time dispatch in this build)";
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(SVI_NO_MULTIVERSION)
  __builtin_cpu_init();
  kernels = __builtin_cpu_supports("avx2") ? (__builtin_cpu_supports("fma") ? "AVX2 + FMA clones" : "AVX2 clones")
                                           : "default clones (no AVX2 on this CPU)";
  if (svi_have_avx512_probe())   /* the kernels' own test (CPU and build), not a copy of it */
    kernels = "AVX2 + FMA clones, and the AVX-512 copies of the product form's FTRAN (from 64 rows), the ratio scan, "
              "the covering vector and the low-rank Lemke's direction";
#endif
  char ghz_s[64] = "no clock estimate (not x86-64)", load_s[32] = "n/a";
  if (ghz > 0) snprintf(ghz_s, sizeof(ghz_s), "about %.2f GHz by a dependent multiply-add chain", ghz);
  if (load >= 0) snprintf(load_s, sizeof(load_s), "%.2f", load);
  printf("Machine: %s (family %s, model %s, stepping %s; %s MHz as the kernel reports it), "
         "%s; load average %s at start.\n",
         name[0] ? name : "unknown CPU", fam[0] ? fam : "n/a", model[0] ? model : "n/a",
         step[0] ? step : "n/a", mhz[0] ? mhz : "n/a", ghz_s, load_s);
#if defined(__clang__) || !defined(__GNUC__)
  const char* cc = "";                 // clang's __VERSION__ names itself
#else
  const char* cc = "GCC ";
#endif
#ifdef __VERSION__
  const char* ver = __VERSION__;
#else
  const char* ver = "unknown compiler";
#endif
  printf("Build: %s%s, %s; kernels: %s.\n", cc, ver, SVI_BUILD_FLAGS, kernels);
  return ghz;
}

#endif  // SVI_BENCH_MACHINE_H_
