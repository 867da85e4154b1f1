/* svi_bench.c -- the benchmark tables of docs/benchmarks.md.
 *
 *   svi-bench [--quick] [--markdown] [--propagative] [--only=123]
 *   svi-bench --one EXAMPLE auto|lemke|random|enumerate K    only K samples of Algorithm 1 (for
 *                                                            callgrind's instruction counts)
 *   svi-bench --alg2 EXAMPLE LOG2 THREADS [REPS]             Algorithm 2 with 2^LOG2 samples (paper's
 *                                                            h and N, Sobol budgets, branch auto):
 *                                                            wall seconds and a checksum of the set,
 *                                                            REPS times (then min / median / max)
 *   svi-bench --entry-cost PER REPS                          REPS solves with a sparse unit lower
 *                                                            triangle of PER entries a column (the
 *                                                            cost of a sparse LU's FTRAN an entry,
 *                                                            for callgrind: see entry_cost)
 *
 * 1. Per reference problem: LCPs per sample, us per sample (median and mean over individually
 *    timed samples, one thread), us per LCP, next to the paper's Table 3.
 * 2. Algorithm 2 wall time at 2^14, 2^17, 2^20 samples on 1 and 2 threads.
 * 3. Our Lemke against Siconos numerics' lexicographic Lemke on the same Routh step LCPs.
 * 4. (--propagative) The propagative law beside the set-valued law.
 * 5. The dense and the low-rank Lemke on one impact event of a tower of K free boxes with C
 *    contacts per face, solved once as the plugin solves it (svi_impact_set_step_solve), and
 *    which one SVI_SOLVER_AUTO picks (svi_impact.c, lowrank_pays).
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "svi/svi_core.h"
#include "svi_internal.h"
#include "bench_machine.h"
#include "../box3d.h"
#ifdef SVI_HAVE_SICONOS
#include "siconos_oracle.h"
#endif

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

/* Algorithm 1 samples 0..K-1 of s under c, each timed alone into t[k] (after 1000 untimed ones);
 * returns the total seconds, *lcps the LCPs solved. */
static double time_samples(svi_impact* s, const svi_routh_config* c, int K, double* t, long long* lcps) {
  double v[SVI_EX_MAX_NV], total = 0;
  for (int k = 0; k < 1000; k++) svi_routh_sample(s, c, NULL, (uint64_t)k, v, NULL, NULL, 0, NULL);
  for (int k = 0; k < K; k++) {
    svi_sample_info info;
    double t0 = bench_now();
    svi_routh_sample(s, c, NULL, (uint64_t)k, v, &info, NULL, 0, NULL);
    t[k] = bench_now() - t0;
    total += t[k];
    *lcps += info.lcps;
  }
  return total;
}

/* The clock's own share of one timed interval: the median of back-to-back bench_now() pairs with
 * nothing between them (about 30 ns on the development VM, 4 % of a rocking-block sample). */
static double clock_overhead(void) {
  enum { N = 200001 };
  double* t = malloc(sizeof(double) * N);
  if (!t) return 0;
  for (int k = 0; k < N; k++) {
    double t0 = bench_now();
    t[k] = bench_now() - t0;
  }
  qsort(t, N, sizeof(double), cmp_double);
  double m = t[N / 2];
  free(t);
  return m;
}

/* paper's Table 3: LCPs/sample, s/sample (MATLAB + PATH, 2.4 GHz Core i5) */
typedef struct { const char* name; double lcps, sec; } paper_row;
static const paper_row paper[] = {
  {"rocking_block", 2.67, 2.1e-3}, {"compass_gait", 2.27, 1.9e-3}, {"box_wall", 1.97, 1.6e-3},
  {"ramone", 3.20, 2.2e-3}, {"disk_stack", 9.04, 1.1e-2}};

static const paper_row* paper_of(const char* name) {
  for (size_t i = 0; i < sizeof(paper) / sizeof(paper[0]); i++)
    if (!strcmp(paper[i].name, name)) return &paper[i];
  return NULL;
}

static const char* branch_name(svi_branch b) {
  return b == SVI_BRANCH_AUTO ? "auto" : b == SVI_BRANCH_LEMKE ? "lemke" : b == SVI_BRANCH_RANDOM ? "random" : "enumerate";
}

/* the clock estimate of the machine lines (bench_machine.h), 0 when they were not printed */
static double g_ghz;

static void table_per_sample(int K) {
  double clk = clock_overhead();
  printf("\n## 1. Per sample (Algorithm 1, one thread, paper's h and N, %d samples each)\n\n", K);
  printf("Each sample is timed alone; the clock's own share of an interval, %.1f ns (median of empty\n"
         "intervals), is in every timed column and taken out only in \"median - clock\". \"kcycles\" is\n"
         "median - clock times the clock estimate above (%.2f GHz): closer than microseconds across\n"
         "machines of different clocks, not across cores that do different work per cycle.\n\n",
         clk * 1e9, g_ghz);
  printf("| problem | branch | LCPs/sample | us/sample median | median - clock | kcycles (est.) | us/sample mean | us/LCP | paper LCPs/sample | paper us/sample | speed-up (median) |\n");
  printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
  double* t = malloc(sizeof(double) * (size_t)K);
  svi_branch branches[2] = {SVI_BRANCH_AUTO, SVI_BRANCH_LEMKE};
  for (int e = 0; e < svi_example_count(); e++) {
    svi_example ex;
    svi_example_get(svi_example_name(e), &ex);
    const paper_row* pr = paper_of(ex.name);
    if (!pr) continue;
    svi_problem_def def = svi_example_problem(&ex);
    svi_impact* s = svi_impact_create(def.nv, def.nc, def.nt);
    svi_impact_setup(s, &def, NULL, 0);
    for (int b = 0; b < 2; b++) {
      svi_routh_config c = svi_routh_default_config();
      c.step_abs = ex.h;
      c.max_steps = ex.N;
      c.branch = branches[b];
      long long lcps = 0;
      double total = time_samples(s, &c, K, t, &lcps);
      qsort(t, (size_t)K, sizeof(double), cmp_double);
      double med = t[K / 2] * 1e6, mean = total / K * 1e6, lps = (double)lcps / K;
      printf("| %s | %s | %.2f | %.2f | %.2f | %.1f | %.2f | %.2f | %.2f | %.0f | %.0fx |\n", ex.name,
             branch_name(branches[b]), lps, med, med - clk * 1e6, (med - clk * 1e6) * g_ghz, mean, mean / lps, pr->lcps,
             pr->sec * 1e6, pr->sec * 1e6 / med);
    }
    svi_impact_destroy(s);
  }
  free(t);
}

static void table_alg2(int maxlog) {
  printf("\n## 2. Algorithm 2 wall time (Sobol budgets, paper's h and N, branch auto)\n\n");
  printf("| problem | samples | 1 thread (s) | 2 threads (s) | speed-up | accepted | rejected | LCP rejects | step / sample retries | identical |\n");
  printf("|---|---|---|---|---|---|---|---|---|---|\n");
  for (int e = 0; e < svi_example_count(); e++) {
    svi_example ex;
    svi_example_get(svi_example_name(e), &ex);
    if (!paper_of(ex.name)) continue;
    svi_problem_def def = svi_example_problem(&ex);
    for (int lg = 14; lg <= maxlog; lg += 3) {
      long long M = 1LL << lg;
      double* V1 = malloc(sizeof(double) * (size_t)M * def.nv);
      double* V2 = malloc(sizeof(double) * (size_t)M * def.nv);
      svi_approx_config c = svi_approx_default_config();
      c.samples = M;
      c.routh.step_abs = ex.h;
      c.routh.max_steps = ex.N;
      svi_approx_stats s1, s2;
      c.threads = 1;
      svi_approximate(&def, &c, V1, NULL, NULL, &s1);
      c.threads = 2;
      svi_approximate(&def, &c, V2, NULL, NULL, &s2);
      int same = !memcmp(V1, V2, sizeof(double) * (size_t)M * def.nv);
      printf("| %s | 2^%d | %.3f | %.3f | %.2fx | %.2f%% | %lld | %lld | %lld / %lld | %s |\n", ex.name, lg,
             s1.wall_seconds, s2.wall_seconds, s1.wall_seconds / s2.wall_seconds,
             100.0 * s2.accepted / M, s2.rejected, s2.lcp_rejects, s2.step_retries,
             s2.sample_retries, same ? "yes" : "NO");
      free(V1);
      free(V2);
    }
  }
}

#ifdef SVI_HAVE_SICONOS
/* The Routh step LCPs met by Algorithm 1 on each problem, solved by both solvers. */
static void table_siconos(int K) {
  printf("\n## 3. Our Lemke vs Siconos' lexicographic Lemke on the same Routh step LCPs\n\n");
  printf("| problem | LCP size | LCPs | ours us/LCP | Siconos us/LCP | ours valid | Siconos valid | same outcome | ours faster by |\n");
  printf("|---|---|---|---|---|---|---|---|---|\n");
  for (int e = 0; e < svi_example_count(); e++) {
    svi_example ex;
    svi_example_get(svi_example_name(e), &ex);
    if (!paper_of(ex.name)) continue;
    svi_problem_def def = svi_example_problem(&ex);
    svi_impact* s = svi_impact_create(def.nv, def.nc, def.nt);
    svi_impact_setup(s, &def, NULL, 0);
    int n = s->n_routh, nc = s->nc, nb = s->nb;
    /* collect the q vectors of the first K samples' steps */
    int cap = K * 12, nq = 0;
    double* Q = malloc(sizeof(double) * (size_t)cap * n);
    svi_routh_config c = svi_routh_default_config();
    c.step_abs = ex.h;
    c.max_steps = ex.N;
    c.branch = SVI_BRANCH_LEMKE;
    for (int k = 0; k < K && nq < cap; k++) {
      double traj[16 * SVI_EX_MAX_NV], v[SVI_EX_MAX_NV];
      int tl = 0;
      svi_routh_sample(s, &c, NULL, (uint64_t)k, v, NULL, traj, 16, &tl);
      for (int t = 0; t + 1 < tl && nq < cap; t++) {
        double* q = Q + (size_t)nq * n;
        for (int i = 0; i < nc; i++) q[i] = ex.h * svi_rng_uniform(c.seed, 1, ((uint64_t)k * ex.N + t) * nc + i);
        svi_matvec(nb, def.nv, s->Jbar, traj + t * def.nv, q + nc);
        memset(q + nc + nb, 0, sizeof(double) * nc);
        nq++;
      }
    }
    svi_lcp_work* w = svi_lcp_work_create(n);
    svi_siconos* so = svi_siconos_create(n);
    const double* A = svi_impact_routh(s);
    double* Z1 = malloc(sizeof(double) * (size_t)nq * n);
    double* Z2 = malloc(sizeof(double) * (size_t)nq * n);
    int reps = 20;
    double t0 = bench_now();
    for (int r = 0; r < reps; r++)
      for (int i = 0; i < nq; i++) svi_lcp_lemke(w, n, A, Q + (size_t)i * n, NULL, NULL, Z1 + (size_t)i * n, NULL);
    double t1 = bench_now();
    svi_siconos_set_check(so, 0);
    for (int r = 0; r < reps; r++)
      for (int i = 0; i < nq; i++) svi_siconos_lemke(so, n, A, Q + (size_t)i * n, Z2 + (size_t)i * n, NULL);
    double t2 = bench_now();
    int ok1 = 0, ok2 = 0, same = 0;
    for (int i = 0; i < nq; i++) {
      const double* q = Q + (size_t)i * n;
      int a = svi_lcp_residual(n, A, q, Z1 + (size_t)i * n) <= 1e-9;
      int b = svi_lcp_residual(n, A, q, Z2 + (size_t)i * n) <= 1e-9;
      ok1 += a;
      ok2 += b;
      double d = 0;
      for (int r = 0; r < nb; r++) {
        double x = 0, y = 0;
        for (int j = 0; j < nb; j++) {
          x += s->W[r * nb + j] * Z1[(size_t)i * n + nc + j];
          y += s->W[r * nb + j] * Z2[(size_t)i * n + nc + j];
        }
        d = fmax(d, fabs(x - y));
      }
      same += a && b && d < 1e-7 * s->vscale;
    }
    double us1 = (t1 - t0) / (reps * (double)nq) * 1e6, us2 = (t2 - t1) / (reps * (double)nq) * 1e6;
    printf("| %s | %d | %d | %.2f | %.2f | %d/%d | %d/%d | %d | %.2fx |\n", ex.name, n, nq, us1, us2,
           ok1, nq, ok2, nq, same, us2 / us1);
    free(Q); free(Z1); free(Z2);
    svi_lcp_work_destroy(w);
    svi_siconos_destroy(so);
    svi_impact_destroy(s);
  }
}
#endif

/* 4. The propagative law (restitution) beside the set-valued law on the same frictionless
 * problems: Newton's cradles on a line (J_t rows zero, mu = 0). */
static void table_propagative(int K) {
  printf("\n## 4. Propagative law (restitution) vs the set-valued law, per outcome (one thread, %d outcomes each)\n\n", K);
  printf("| problem | law | us/outcome median | us/outcome mean | reflections or LCPs per outcome | distinct outcomes (svi_propagative_all, exhaustive) |\n");
  printf("|---|---|---|---|---|---|\n");
  struct { const char* name; int n; double m[5], v[5]; } cases[] = {
    {"cradle 5, v-=(1,0,0,0,0)", 5, {1, 1, 1, 1, 1}, {1, 0, 0, 0, 0}},
    {"cradle 5, v-=(1,0,0,0,-1)", 5, {1, 1, 1, 1, 1}, {1, 0, 0, 0, -1}},
    {"cradle 5, m=(1,2,1.5,3,1), v-=(1,0,0,0,-1)", 5, {1, 2, 1.5, 3, 1}, {1, 0, 0, 0, -1}},
    {"cradle 3, m=(1,2,1.5), v-=(1,0,-1)", 3, {1, 2, 1.5}, {1, 0, -1}}};
  double* t = malloc(sizeof(double) * (size_t)K);
  for (size_t q = 0; q < sizeof(cases) / sizeof(cases[0]); q++) {
    int n = cases[q].n, nc = n - 1;
    double M[25] = {0}, Jn[20] = {0}, Jt[20] = {0}, mu[4] = {0}, v[5], lam[4];
    for (int i = 0; i < n; i++) M[i * n + i] = cases[q].m[i];
    for (int i = 0; i < nc; i++) { Jn[i * n + i] = -1; Jn[i * n + i + 1] = 1; }
    svi_problem_def def = {n, nc, 1, M, Jn, Jt, mu, cases[q].v};
    svi_impact* s = svi_impact_create(n, nc, 1);
    svi_impact_setup(s, &def, NULL, 0);
    svi_propagative* w = svi_propagative_create(n, nc, 0);
    double es[2] = {1.0, 0.5};
    for (int r = 0; r < 3; r++) {
      long long work = 0;
      double total = 0;
      int distinct = 0;
      double set_us = 0;
      char law[64];
      if (r < 2) {
        svi_propagative_config c = svi_propagative_default_config();
        c.restitution = es[r];
        snprintf(law, sizeof(law), "propagative e=%.1f (random order)", es[r]);
        for (int k = 0; k < 1000; k++) svi_propagative_outcome(w, s, &c, (uint64_t)k, v, lam, NULL);
        for (int k = 0; k < K; k++) {
          svi_propagative_info info;
          double t0 = bench_now();
          svi_propagative_outcome(w, s, &c, (uint64_t)k, v, lam, &info);
          t[k] = bench_now() - t0;
          total += t[k];
          work += info.reflections;
        }
        svi_propagative_set_info si;
        double V[64 * 5];
        int reps = K / 10 > 0 ? K / 10 : 1;
        double t0 = bench_now();
        for (int k = 0; k < reps; k++) svi_propagative_all(w, s, &c, V, NULL, 64, &si);
        set_us = (bench_now() - t0) / reps * 1e6;
        distinct = si.count;
      } else {
        svi_routh_config c = svi_routh_default_config();
        snprintf(law, sizeof(law), "set-valued (svi_routh_sample, defaults)");
        long long lcps = 0;
        total = time_samples(s, &c, K, t, &lcps);
        work += lcps;
        distinct = -1;
      }
      qsort(t, (size_t)K, sizeof(double), cmp_double);
      char dbuf[48];
      if (distinct >= 0) snprintf(dbuf, sizeof(dbuf), "%d (%.2f us/set)", distinct, set_us);
      else snprintf(dbuf, sizeof(dbuf), "-");
      printf("| %s | %s | %.3f | %.3f | %.2f %s | %s |\n", cases[q].name, law, t[K / 2] * 1e6, total / K * 1e6,
             (double)work / K, r < 2 ? "refl." : "LCPs", dbuf);
    }
    svi_propagative_destroy(w);
    svi_impact_destroy(s);
  }
  free(t);
}

/* K samples of one example under one rule, nothing else: what a profiler should see */
static int run_one(const char* name, const char* rule, long long K) {
  svi_example ex;
  if (svi_example_get(name, &ex) != SVI_OK) { fprintf(stderr, "unknown example %s\n", name); return 2; }
  if (strcmp(rule, "auto") && strcmp(rule, "lemke") && strcmp(rule, "random") && strcmp(rule, "enumerate")) {
    fprintf(stderr, "unknown rule %s (auto, lemke, random or enumerate)\n", rule);
    return 2;
  }
  svi_problem_def def = svi_example_problem(&ex);
  svi_impact* s = svi_impact_create(def.nv, def.nc, def.nt);
  svi_impact_setup(s, &def, NULL, 0);
  svi_routh_config c = svi_routh_default_config();
  c.step_abs = ex.h;
  c.max_steps = ex.N;
  c.branch = !strcmp(rule, "lemke") ? SVI_BRANCH_LEMKE : !strcmp(rule, "random") ? SVI_BRANCH_RANDOM
           : !strcmp(rule, "enumerate") ? SVI_BRANCH_ENUMERATE : SVI_BRANCH_AUTO;
  double v[SVI_EX_MAX_NV], sum = 0;
  uint64_t hash = BENCH_FNV0;   /* every v+ bit: a bit-identity check */
  for (long long k = 0; k < K; k++) {
    svi_routh_sample(s, &c, NULL, (uint64_t)k, v, NULL, NULL, 0, NULL);
    sum += v[0];
    hash = bench_fnv(hash, v, (size_t)def.nv);
  }
  printf("%lld samples of %s (%s), sum of v+[0] %.17g, hash of v+ %016llx\n", K, name,
         branch_name(c.branch), sum, (unsigned long long)hash);
  svi_impact_destroy(s);
  return 0;
}

/* --alg2: reps runs of the same set (each run's wall time; the set must be the same bits each
 * time), then the minimum, median and maximum: one run's figure moves by +-20 % with the load of
 * this 2-core VM */
enum { ALG2_MAX_REPS = 99 };

static int run_alg2(const char* name, int lg, int threads, int reps) {
  svi_example ex;
  if (svi_example_get(name, &ex) != SVI_OK) { fprintf(stderr, "unknown example %s\n", name); return 2; }
  if (lg < 0 || lg > 30 || threads < 0 || reps < 1 || reps > ALG2_MAX_REPS) {
    fprintf(stderr, "LOG2 must be 0..30, THREADS >= 0 (0: one per core) and REPS 1..99\n");
    return 2;
  }
  bench_print_machine();
  svi_problem_def def = svi_example_problem(&ex);
  long long M = 1LL << lg;
  svi_approx_config c = svi_approx_default_config();
  c.samples = M;
  c.routh.step_abs = ex.h;
  c.routh.max_steps = ex.N;
  c.threads = threads;
  double* V = malloc(sizeof(double) * (size_t)M * def.nv);
  if (!V) { fprintf(stderr, "out of memory for 2^%d samples\n", lg); return 1; }
  double wall[ALG2_MAX_REPS];
  uint64_t hash0 = 0;
  int differ = 0;
  for (int r = 0; r < reps; r++) {
    svi_approx_stats st;
    svi_approximate(&def, &c, V, NULL, NULL, &st);
    double sum = 0;
    for (long long i = 0; i < M * def.nv; i++) sum += V[i];
    uint64_t hash = bench_fnv(BENCH_FNV0, V, (size_t)(M * def.nv));   /* every bit of the set */
    if (r == 0) hash0 = hash;
    differ |= hash != hash0;
    wall[r] = st.wall_seconds;
    printf("Algorithm 2, %s, 2^%d samples, %d threads: %.3f s wall, %lld accepted, %lld LCPs, sum of v+ %.17g\n",
           name, lg, threads, st.wall_seconds, st.accepted, st.lcps, sum);
  }
  free(V);
  if (reps > 1) {
    qsort(wall, (size_t)reps, sizeof(double), cmp_double);
    double med = reps % 2 ? wall[reps / 2] : 0.5 * (wall[reps / 2 - 1] + wall[reps / 2]);
    printf("%d runs: %.3f / %.3f / %.3f s (min / median / max)%s\n", reps, wall[0], med, wall[reps - 1],
           differ ? "; THE SETS DIFFER between runs" : ", the same set each run");
  }
  return differ;
}

/* 5. A tower of K free boxes (0.2 m cubes, 1 kg) with C contacts per face on a grid (3-D
 * friction, mu 0.6), the top one landing at 1 m/s: setup and one sample of its event, best of
 * reps, with each solver forced, and the automatic choice. */
enum { TOWER_KMAX = 8, TOWER_CMAX = 25 };   /* the largest tower of table 5 */

static double tower_time(const svi_problem_def* def, svi_solver solver, int reps) {
  svi_impact* s = svi_impact_create(def->nv, def->nc, def->nt);
  double best = INFINITY, v[6 * TOWER_KMAX];
  if (!s) return NAN;
  svi_impact_set_solver(s, solver);
  svi_impact_set_step_solve(s, 1);   /* one sample an event, as the plugin solves it */
  svi_routh_config rc = svi_routh_default_config();
  for (int r = 0; r < reps; r++) {
    double t0 = bench_now();
    svi_sample_info info;
    int st = svi_impact_setup(s, def, NULL, 0);
    if (st == SVI_OK) st = svi_routh_sample(s, &rc, NULL, 0, v, &info, NULL, 0, NULL);
    double t = bench_now() - t0;
    if (st != SVI_OK) { best = NAN; break; }
    best = t < best ? t : best;
  }
  svi_impact_destroy(s);
  return best;
}

/* whether SVI_SOLVER_AUTO picks the low-rank Lemke for def (its set-up decides) */
static int auto_picks_lowrank(const svi_problem_def* def) {
  svi_impact* s = svi_impact_create(def->nv, def->nc, def->nt);
  if (s) svi_impact_set_step_solve(s, 1);
  int lr = s && svi_impact_setup(s, def, NULL, 0) == SVI_OK && s->lowrank;
  svi_impact_destroy(s);
  return lr;
}

static void table_solvers(int quick) {
  printf("\n## 5. Dense against low-rank Lemke: one event of a tower of K boxes with C contacts per face"
         " (setup and one sample, solved at the step as the plugin does, best of %d)\n\n", quick ? 1 : 3);
  printf("| boxes K | nv | contacts per face C | impulse rows nb | nb / nv | dense us | low-rank us | low-rank / dense | auto picks |\n");
  printf("|---|---|---|---|---|---|---|---|---|\n");
  static const int Ks[] = {1, 2, 3, 4, 6, 8}, Cs[] = {4, 9, 16, 25};
  enum { KMAX = TOWER_KMAX, CMAX = TOWER_CMAX };
  double* M = malloc(sizeof(double) * 36 * KMAX * KMAX);
  double* Jn = malloc(sizeof(double) * KMAX * CMAX * 6 * KMAX);
  double* Jt = malloc(sizeof(double) * 2 * KMAX * CMAX * 6 * KMAX);
  double mu[KMAX * CMAX], v[6 * KMAX];
  if (!M || !Jn || !Jt) { free(M); free(Jn); free(Jt); return; }
  for (int a = 0; a < 6; a++)
    for (int b = 0; b < 4; b++) {
      int K = Ks[a], C = Cs[b], nv = 6 * K, nb = 5 * K * C;
      if (quick && nb > 400) continue;
      box3d_tower(K, C, M, Jn, Jt, mu, v);
      svi_problem_def def = {nv, K * C, 2, M, Jn, Jt, mu, v};
      double td = tower_time(&def, SVI_SOLVER_DENSE, quick ? 1 : 3);
      double tl = tower_time(&def, SVI_SOLVER_LOWRANK, quick ? 1 : 3);
      int lr = auto_picks_lowrank(&def);
      printf("| %d | %d | %d | %d | %.1f | %.1f | %.1f | %.2f | %s |\n", K, nv, C, nb, (double)nb / nv, td * 1e6,
             tl * 1e6, tl / td, lr ? "low-rank" : "dense");
    }
  free(M); free(Jn); free(Jt);
}

/* The instructions a sparse LU's FTRAN spends per stored entry, measured on its kernel: a unit lower
 * triangle in compressed columns (as L), x_i -= l_ij x_j column by column from the first column
 * with x_j != 0, in fused multiply-adds (the FMA clone on an FMA host).  The columns of a
 * 700-row triangle hold PER entries each, at rows within 60 below the diagonal (a banded kernel,
 * as a tower of boxes' contact blocks give).  Instructions a stored entry:
 *     valgrind --tool=callgrind --toggle-collect='sparse_columns*' ./build/svi-bench --entry-cost PER REPS
 * divided by REPS times the entries it prints (7.5 at 20 a column, 12.5 at 4 on the Zen 3 host); the
 * dense product form's FTRAN costs 0.55-0.72 instructions an entry it applies (docs/benchmarks-log.md,
 * "The twenty-first session"). */
SVI_SIMD_FMA __attribute__((noinline)) void sparse_columns(int n, const int* cp, const int* ri, const double* v,
                                                        double* x) {
  for (int j = 0; j < n; j++) {
    double xj = x[j];
    if (xj == 0) continue;
#pragma GCC unroll 4
    for (int p = cp[j]; p < cp[j + 1]; p++) x[ri[p]] = fma(-v[p], xj, x[ri[p]]);
  }
}

static int entry_cost(int per, int reps) {
  enum { N = 700, BAND = 60 };
  if (per < 1 || per > BAND || reps < 1) {
    fprintf(stderr, "--entry-cost PER REPS: PER from 1 to %d, REPS >= 1\n", BAND);
    return 2;
  }
  int* cp = malloc(sizeof(int) * (N + 1));
  int* ri = malloc(sizeof(int) * (size_t)N * per);
  double* v = malloc(sizeof(double) * (size_t)N * per);
  double* x = malloc(sizeof(double) * N);
  if (!cp || !ri || !v || !x) { free(cp); free(ri); free(v); free(x); return 1; }
  uint64_t st = 1;
  int nz = 0;
  for (int j = 0; j < N; j++) {
    cp[j] = nz;
    for (int k = 0; k < per && j + 1 + k < N; k++) {   /* distinct rows, in increasing order */
      st = st * 6364136223846793005ull + 1442695040888963407ull;
      ri[nz] = j + 1 + k + (int)((st >> 33) % (uint64_t)(BAND - per + 1));
      if (ri[nz] >= N) break;
      v[nz++] = 1e-3 * (double)((st >> 40) % 7);
    }
  }
  cp[N] = nz;
  double sum = 0;
  for (int r = 0; r < reps; r++) {
    for (int i = 0; i < N; i++) x[i] = 1.0 + i % 3;
    sparse_columns(N, cp, ri, v, x);
    sum += x[r % N];
  }
  printf("%d solves of a %d-row unit lower triangle with %d stored entries (checksum %.17g)\n", reps, N, nz, sum);
  free(cp); free(ri); free(v); free(x);
  return 0;
}

static int usage(const char* prog) {
  fprintf(stderr,
          "usage: %s [--quick] [--only=TABLES] [--propagative]\n"
          "       %s --one EXAMPLE RULE K      K samples of one example (RULE: auto, lemke, random, enumerate)\n"
          "       %s --alg2 EXAMPLE LOG2 THREADS [REPS]   REPS runs (default 1), then min / median / max\n"
          "       %s --entry-cost PER REPS   a sparse triangular solve, for callgrind (see entry_cost)\n"
          "TABLES: any of 1 (per sample), 2 (Algorithm 2), 3 (against Siconos), 5 (dense against low-rank Lemke)\n",
          prog, prog, prog, prog);
  return 2;
}

int main(int argc, char** argv) {
  if (argc > 1 && !strcmp(argv[1], "--one") && argc != 5) return usage(argv[0]);
  if (argc > 1 && !strcmp(argv[1], "--alg2") && argc != 5 && argc != 6) return usage(argv[0]);
  if (argc > 1 && !strcmp(argv[1], "--entry-cost") && argc != 4) return usage(argv[0]);
  if (argc == 5 && !strcmp(argv[1], "--one")) return run_one(argv[2], argv[3], atoll(argv[4]));
  if (argc == 4 && !strcmp(argv[1], "--entry-cost")) return entry_cost(atoi(argv[2]), atoi(argv[3]));
  if (argc > 1 && !strcmp(argv[1], "--alg2"))
    return run_alg2(argv[2], atoi(argv[3]), atoi(argv[4]), argc == 6 ? atoi(argv[5]) : 1);
  int quick = 0, propagative = 0;
  const char* only = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--quick")) quick = 1;
    else if (!strncmp(argv[i], "--only=", 7)) only = argv[i] + 7;
    else if (!strcmp(argv[i], "--propagative")) propagative = 1;
    else return usage(argv[0]);   /* --help too */
  }
  printf("# svi benchmarks (svi %s)\n\n", SVI_VERSION_STRING);
  g_ghz = bench_print_machine();
  if (only) {   /* some of the tables 1, 2, 3, 5 */
    if (strchr(only, '1')) table_per_sample(quick ? 5000 : 100000);
    if (strchr(only, '2')) table_alg2(quick ? 17 : 20);
#ifdef SVI_HAVE_SICONOS
    if (strchr(only, '3')) table_siconos(quick ? 500 : 4000);
#endif
    if (strchr(only, '5')) table_solvers(quick);
    return 0;
  }
  if (propagative) {   /* table 4 only, in any position among the options */
    table_propagative(quick ? 5000 : 100000);
    return 0;
  }
  table_per_sample(quick ? 5000 : 100000);
  table_alg2(quick ? 17 : 20);
#ifdef SVI_HAVE_SICONOS
  table_siconos(quick ? 500 : 4000);
#else
  printf("\n(Siconos numerics not found: table 3 skipped)\n");
#endif
  table_propagative(quick ? 5000 : 100000);
  table_solvers(quick);
  return 0;
}
