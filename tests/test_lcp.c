/* test_lcp.c -- Lemke and the enumerator on random problems of the impact shape. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "svi/svi_core.h"
#include "svi_internal.h"
#include "svi_test.h"
#include "random_problem.h"

/* Lemke on a P-matrix (unique solution) agrees with enumeration exactly */
static void test_pmatrix(void) {
  svi_lcp_work* w = svi_lcp_work_create(12);
  int bad = 0, badres = 0;
  for (int t = 0; t < 2000; t++) {
    int n = 2 + t % 9;
    double M[144], q[12], z[12], sols[12 * 8];
    random_pd(n, M, (uint64_t)t);
    for (int i = 0; i < n; i++) q[i] = 2 * rnd(t, 100 + i) - 1;
    svi_lcp_info info;
    int st = svi_lcp_lemke(w, n, M, q, NULL, NULL, z, &info);
    if (st != SVI_OK || info.residual > 1e-9) badres++;
    int cnt = 0;
    svi_lcp_enumerate(n, M, q, 1e-10, sols, 8, &cnt);
    double d = 0;
    for (int i = 0; i < n; i++) d = fmax(d, fabs(sols[i] - z[i]));
    if (cnt != 1 || d > 1e-8) bad++;
  }
  CHECK(badres == 0, "P-matrix LCPs: %d of 2000 Lemke solutions failed the 1e-9 residual", badres);
  CHECK(bad == 0, "P-matrix LCPs: %d of 2000 disagree with enumeration", bad);
  svi_lcp_work_destroy(w);
}

/* AP and Routh LCPs of random impact problems: residual <= 1e-9 (relative); on small ones the
 * post-impact velocity is one the enumerator finds */
static void test_impact_shape(void) {
  int total = 0, badres = 0, notfound = 0, compared = 0;
  for (int t = 0; t < 3000; t++) {
    rp_problem p;
    random_impact(&p, (uint64_t)t, t % 3 == 0);   /* every third one has redundant contacts */
    svi_problem_def def = rp_def(&p);
    svi_impact* s = svi_impact_create(def.nv, def.nc, def.nt);
    if (svi_impact_setup(s, &def, NULL, 0) != SVI_OK) { svi_impact_destroy(s); continue; }
    double v[RP_NV], lmax[RP_NC], lam[RP_NC * 5];
    svi_lcp_info info;
    int st = svi_law_simultaneous(s, NULL, v, &info);
    total++;
    if (st < 0 || info.residual > 1e-9) badres++;
    for (int i = 0; i < def.nc; i++) lmax[i] = rnd(t, 300 + i) * svi_impact_reference_impulse(s) + 1e-3;
    st = svi_routh_step(s, def.v, lmax, NULL, NULL, lam, v, &info);
    total++;
    if (st < 0 || info.residual > 1e-9) badres++;
    /* compare the AP outcome with all solutions, for small LCPs */
    if (s->n_ap <= 12) {
      double all[64 * RP_NV], vap[RP_NV];
      int cnt = 0;
      svi_law_simultaneous(s, NULL, vap, NULL);
      svi_law_simultaneous_all(s, all, 64, &cnt);
      double best = INFINITY, scale = 1e-9 + fabs(s->vscale);
      for (int k = 0; k < cnt && k < 64; k++) {
        double d = 0;
        for (int i = 0; i < def.nv; i++) d = fmax(d, fabs(all[k * def.nv + i] - vap[i]));
        best = fmin(best, d);
      }
      compared++;
      if (best > 1e-6 * scale) notfound++;
    }
    svi_impact_destroy(s);
  }
  CHECK(total >= 5000, "ran %d LCPs", total);
  CHECK(badres == 0, "%d of %d impact-shaped LCP solutions failed the 1e-9 relative residual", badres, total);
  CHECK(notfound == 0, "%d of %d AP outcomes are not among the enumerated solutions", notfound, compared);
  CHECK(compared > 500, "compared %d with enumeration", compared);
}

/* degenerate problems: redundant rows, zero q entries, mu = 0 */
static void test_degenerate(void) {
  svi_lcp_work* w = svi_lcp_work_create(8);
  /* duplicated constraint: M = [[1,1],[1,1]], q = [-1,-1] : z1 + z2 = 1 */
  double M[4] = {1, 1, 1, 1}, q[2] = {-1, -1}, z[2];
  svi_lcp_info info;
  int st = svi_lcp_lemke(w, 2, M, q, NULL, NULL, z, &info);
  CHECK(st >= 0 && fabs(z[0] + z[1] - 1) < 1e-12 && info.residual < 1e-12,
        "singular M: st=%d z=(%g,%g)", st, z[0], z[1]);
  /* q >= 0: trivial solution, no pivots */
  double q2[2] = {0, 1};
  st = svi_lcp_lemke(w, 2, M, q2, NULL, NULL, z, &info);
  CHECK(st == SVI_OK && z[0] == 0 && z[1] == 0 && info.pivots == 0, "trivial solution");
  /* no solution: M = [[-1]], q = [-1] (ray) */
  double Mn[1] = {-1}, qn[1] = {-1};
  st = svi_lcp_lemke(w, 1, Mn, qn, NULL, NULL, z, &info);
  CHECK(st < 0 && z[0] == 0, "infeasible LCP reports failure (st=%d) and leaves z=0", st);
  /* non-finite input */
  double Mnan[1] = {NAN};
  CHECK(svi_lcp_lemke(w, 1, Mnan, q, NULL, NULL, z, &info) == SVI_ERR_NONFINITE, "NaN in M");
  CHECK(svi_lcp_lemke(w, 9, M, q, NULL, NULL, z, &info) == SVI_ERR_CAPACITY, "n > capacity");
  double dneg[2] = {1, -1};
  CHECK(svi_lcp_lemke(w, 2, M, q, dneg, NULL, z, &info) == SVI_ERR_ARG, "covering vector <= 0");
  svi_lcp_work_destroy(w);
}

/* The product form (svi_lcp_lemke_prepared) against the tableau (svi_lcp_lemke_perturbed) on one
 * LCP under an order and signs (NULL: identity, +1): 1 if they differ in status, pivots or z beyond
 * 1e-9 of |z|; *pivots += the product form's pivots */
static int pfi_differs(svi_lcp_work* w, int n, const double* M, double mnorm, const double* q, const int* order,
                       const double* sign, double* z, double* zp, int* pivots) {
  svi_lcp_info it, ip;
  int st = svi_lcp_lemke_perturbed(w, n, M, q, NULL, order, sign, NULL, z, &it);
  svi_lcp_prepared P = {.M = M, .mnorm = mnorm};
  int stp = svi_lcp_lemke_prepared(w, n, &P, q, NULL, order, sign, NULL, zp, &ip);
  double d = 0, zs = 1e-300;
  for (int i = 0; i < n; i++) { d = fmax(d, fabs(z[i] - zp[i])); zs = fmax(zs, fabs(z[i])); }
  *pivots += ip.pivots;
  return st != SVI_OK || stp != SVI_OK || d > 1e-9 * zs || ip.pivots != it.pivots;
}

/* Degenerate LCPs of the product form's size with ties of many rows at most pivots: q = -1 on
 * every fourth row and 0 on the others (the normal rows of equal contacts at a flat landing, their
 * friction rows), so that once z0 has entered every row of q = -1 is at zero and ties with the
 * others that the entering column reaches; M = B B^T / m + 0.01 I with B of n x n/4 (one
 * solution, W's low rank).  The product form's lexicographic test reads a
 * component of the tied rows without BTRAN while no eta has pivoted on its row (pfi_lex_ties); its
 * path must be the tableau's, which compares whole rows of its explicit B^-1: the same pivots and
 * z, under the identity order and under a random order and signs. */
static void test_degenerate_ties(void) {
  enum { NMAX = 96 };
  static double M[NMAX * NMAX], B[NMAX * NMAX];
  double q[NMAX], z[NMAX], zp[NMAX], sign[NMAX];
  int order[NMAX];
  svi_lcp_work* w = svi_lcp_work_create(NMAX);
  int bad = 0, pivots = 0, runs = 0;
  for (int t = 0; t < 8; t++) {
    int n = 64 + 16 * (t % 3), m = n / 4;
    for (int i = 0; i < n * m; i++) B[i] = 2 * rnd(9100 + t, i) - 1;
    double mn = 0;
    for (int i = 0; i < n; i++) {
      double r = 0;
      for (int j = 0; j < n; j++) {
        double sum = i == j ? 0.01 : 0;
        for (int k = 0; k < m; k++) sum += B[i * m + k] * B[j * m + k] / m;
        M[i * n + j] = sum;
        r += fabs(sum);
      }
      mn = fmax(mn, r);
      q[i] = i % 4 == 0 ? -1.0 : 0.0;
      order[i] = i;
      sign[i] = rnd(9300 + t, i) < 0.5 ? -1.0 : 1.0;
    }
    for (int i = n - 1; i > 0; i--) {   /* a random order (Fisher-Yates) for the odd runs */
      int j = (int)(rnd(9400 + t, i) * (i + 1));
      int x = order[i]; order[i] = order[j]; order[j] = x;
    }
    bad += pfi_differs(w, n, M, mn, q, t % 2 ? order : NULL, t % 2 ? sign : NULL, z, zp, &pivots);
    runs++;
  }
  CHECK(bad == 0 && pivots > runs * 16, "degenerate ties, product form vs tableau: %d of %d differ (%d pivots)",
        bad, runs, pivots);
  svi_lcp_work_destroy(w);
}

/* A path longer than the product form's eta file (2n + 16 etas) restarts on the tableau, with the
 * same answer.  Murty's example (1 on the diagonal, 2 below it, q = -1) takes 2^n
 * pivots with the covering vector of ones: n = 7 fills the file after 30 and needs 128. */
static void test_long_path(void) {
  enum { n = 7 };
  double M[n * n], q[n], z[n], zp[n];
  for (int i = 0; i < n; i++) {
    q[i] = -1;
    for (int j = 0; j < n; j++) M[i * n + j] = i == j ? 1 : j < i ? 2 : 0;
  }
  svi_lcp_work* w = svi_lcp_work_create(n);
  svi_lcp_info it, ip;
  int st = svi_lcp_lemke(w, n, M, q, NULL, NULL, z, &it);
  svi_lcp_prepared P = {.M = M, .mnorm = 13};
  int stp = svi_lcp_lemke_prepared(w, n, &P, q, NULL, NULL, NULL, NULL, zp, &ip);
  double d = 0;
  for (int i = 0; i < n; i++) d = fmax(d, fabs(z[i] - zp[i]));
  CHECK(st == SVI_OK && it.pivots == 128, "Murty n = 7 on the tableau: st %d, %d pivots (2^7 expected)", st,
        it.pivots);
  CHECK(stp == SVI_OK && ip.pivots == 2 * n + 16 + 128 && d == 0 && ip.residual <= 1e-12,
        "Murty n = 7 on the product form: st %d, %d pivots (restart after %d), |z - z_tableau| = %g", stp,
        ip.pivots, 2 * n + 16, d);
  svi_lcp_work_destroy(w);
}

/* The product form against the tableau from n = 64 on, where FTRAN skips a pair of etas whose
 * pivot values are zero: positive definite M (one solution), the same z to rounding. */
static void test_large_pfi(void) {
  enum { NMAX = 96 };
  static double M[NMAX * NMAX], A[NMAX * NMAX];
  double q[NMAX], z[NMAX], zp[NMAX];
  svi_lcp_work* w = svi_lcp_work_create(NMAX);
  int bad = 0, pivots = 0;
  for (int t = 0; t < 12; t++) {
    int n = 64 + 8 * (t % 5);
    for (int i = 0; i < n * n; i++) A[i] = 2 * rnd(7000 + t, 1000 + i) - 1;
    for (int i = 0; i < n; i++)   /* M = A^T A / n + 0.1 I: positive definite */
      for (int j = 0; j < n; j++) {
        double sum = i == j ? 0.1 : 0;
        for (int k = 0; k < n; k++) sum += A[k * n + i] * A[k * n + j] / n;
        M[i * n + j] = sum;
      }
    double mn = 0;
    for (int i = 0; i < n; i++) {
      q[i] = 2 * rnd(7000 + t, i) - 1;
      double r = 0;
      for (int j = 0; j < n; j++) r += fabs(M[i * n + j]);
      mn = fmax(mn, r);
    }
    bad += pfi_differs(w, n, M, mn, q, NULL, NULL, z, zp, &pivots);
  }
  CHECK(bad == 0 && pivots > 12 * 20, "product form vs tableau, n = 64..96: %d of 12 differ (%d pivots)", bad, pivots);
  double dsub[2] = {1, 1e-310}, M2[4] = {2, 1, 1, 2}, q2[2] = {-1, -1};
  CHECK(svi_lcp_lemke(w, 2, M2, q2, dsub, NULL, z, NULL) == SVI_ERR_ARG, "subnormal covering vector rejected");
  svi_lcp_work_destroy(w);
}

/* A zero column of M (a frictionless contact whose normal row is zero): its nonzero-row table is
 * {-1, -1}, and the product form must start that column's FTRAN without reading outside its
 * per-row table (the ASan build runs this).  The prepared entry agrees with the tableau. */
static void test_zero_column(void) {
  enum { N = 2 };
  double M[N * N] = {1, 0, 0, 0}, Mnt[N * N];
  for (int j = 0; j < N; j++)
    for (int i = 0; i < N; i++) Mnt[j * N + i] = -M[i * N + j];
  int nz[2 * N] = {0, -1, -1, -1};
  const double qs[2][N] = {{-1, 2}, {-1, -2}};
  svi_lcp_work* w = svi_lcp_work_create(8);
  for (int k = 0; k < 2; k++) {
    double z[N], zp[N];
    svi_lcp_info it, ip;
    svi_lcp_prepared P = {.M = M, .Mnt = Mnt, .Mnt_nz = nz, .mnorm = 1};
    int st = svi_lcp_lemke(w, N, M, qs[k], NULL, NULL, z, &it);
    int stp = svi_lcp_lemke_prepared(w, N, &P, qs[k], NULL, NULL, NULL, NULL, zp, &ip);
    CHECK(st == stp && fabs(z[0] - zp[0]) + fabs(z[1] - zp[1]) < 1e-12,
          "zero column, q = (%g, %g): tableau %d (%g, %g), product form %d (%g, %g)", qs[k][0], qs[k][1], st,
          z[0], z[1], stp, zp[0], zp[1]);
  }
  svi_lcp_work_destroy(w);
}

/* Sobol: each coordinate of the first 2^k points is stratified (one point per 2^-k cell) */
static void test_sobol(void) {
  static svi_sobol s;
  CHECK(svi_sobol_init(&s, 100, 7) == SVI_OK, "sobol init");
  int bad = 0;
  for (int d = 0; d < 100; d++) {
    int cnt[256] = {0};
    for (int i = 0; i < 256; i++) {
      double x = svi_sobol_point(&s, (uint64_t)i, d);
      /* undo the digital shift's effect on the cell index: XOR permutes the cells */
      unsigned c = ((unsigned)(x * 4294967296.0) ^ s.shift[d]) >> 24;
      cnt[c]++;
    }
    for (int c = 0; c < 256; c++) if (cnt[c] != 1) { bad++; break; }
  }
  CHECK(bad == 0, "%d Sobol dimensions are not stratified", bad);
  CHECK(svi_sobol_init(&s, SVI_SOBOL_MAXDIM + 1, 0) == SVI_ERR_ARG, "dimension cap");
  double m = 0;
  for (int i = 0; i < 100000; i++) m += svi_rng_uniform(3, 4, (uint64_t)i);
  CHECK(fabs(m / 100000 - 0.5) < 0.005, "uniform mean %g", m / 100000);
  CHECK(svi_rng_u64(1, 2, 3) == svi_rng_u64(1, 2, 3) && svi_rng_u64(1, 2, 3) != svi_rng_u64(2, 2, 3),
        "counter RNG is a function of (seed, stream, index)");
}

/* The ratio test's AVX2 kernels give their scalar twins' bits, and the scan's AVX-512VL copy the
 * AVX2 kernel's (row included, ties too; where the CPU has it): random columns and basic values
 * with ties, signs, zeros of both signs, subnormals, infinities and NaNs, the pending update on
 * or off, a small and a large tolerance.  The minimum, the second value and the updated x bit for
 * bit (a zero of either sign as one value), the row when the minimum is unique (with a tie the
 * caller takes the two-pass test and the row is not used). */
static double ratio_value(uint64_t c, uint64_t i, int kind) {
  uint64_t r = svi_rng_u64(12345, c, i) >> 11;
  double u = (double)r * 0x1p-53;
  switch (kind) {
  case 0: return u;
  case 1: return (double)(r % 4);                  /* ties */
  case 2: return u - 0.5;
  default: {
    static const double sp[] = {INFINITY, -INFINITY, NAN, 0.0, -0.0, 4.9e-324, -4.9e-324, 1e-300, 1e300};
    return r % 3 ? sp[(r >> 3) % 9] : u;
  }
  }
}

/* the same double, a zero of either sign counting as one value (the twins' minima may keep
 * different zeros of equal rows; no decision reads a zero's sign: every divisor is above tol) */
static int same_double(double u, double v) {
  if (u == 0 && v == 0) return 1;
  return memcmp(&u, &v, sizeof(double)) == 0;
}

static void test_ratio_kernels(void) {
  if (!svi_have_avx2()) {
    printf("ratio kernels: no AVX2 on this CPU, the scalar twins only\n");
    return;
  }
  enum { NMAX = 160 };
  double x1[NMAX], x2[NMAX], x3[NMAX], a[NMAX], ap[NMAX];
  int bad_scan = 0, bad_min = 0, bad_vl = 0, cases = 200000;
  for (int c = 0; c < cases; c++) {
    int n4 = 4 * (1 + (int)(svi_rng_u64(12345, c, 0) % (NMAX / 4))), kind = c % 4;
    for (int i = 0; i < n4; i++) {
      x1[i] = x2[i] = ratio_value(c, 1 + 3 * i, kind);
      a[i] = ratio_value(c, 2 + 3 * i, kind);
      ap[i] = ratio_value(c, 3 + 3 * i, kind % 3);
    }
    double f = ratio_value(c, 3 * NMAX + 1, kind % 3), tol = c % 2 ? 1e-12 : 0.3;
    int rp = c % 3 ? (int)(svi_rng_u64(12345, c, 3 * NMAX + 2) % (uint64_t)n4) : -1;
    double m0 = svi_kern_min_ratio_as(0, n4, x1, a, tol), m1 = svi_kern_min_ratio_as(1, n4, x1, a, tol);
    bad_min += !same_double(m0, m1);
    for (int i = 0; i < n4; i++) x3[i] = x1[i];
    double s0, s1, s2;
    int g0, g1, g2;
    double r0 = svi_kern_ratio_scan(0, n4, x1, a, tol, &s0, &g0, ap, f, rp);
    double r1 = svi_kern_ratio_scan(1, n4, x2, a, tol, &s1, &g1, ap, f, rp);
    double r2 = svi_kern_ratio_scan(2, n4, x3, a, tol, &s2, &g2, ap, f, rp);
    int same = same_double(r0, r1) && same_double(s0, s1) && (g0 == g1 || !(s0 > r0));
    for (int i = 0; i < n4; i++) same &= same_double(x1[i], x2[i]);
    if (!same && bad_scan < 3)
      fprintf(stderr, "ratio scan differs: n %d kind %d rp %d: %g/%g %g/%g rows %d/%d\n", n4, kind, rp, r0, r1,
              s0, s1, g0, g1);
    bad_scan += !same;
    /* the AVX-512 copies against the AVX2 kernel (the 256-bit VL copy below 64 rows, eight rows a
     * vector from 64, folded into the four lanes): the same row even on ties */
    int same2 = same_double(r2, r1) && same_double(s2, s1) && g2 == g1;
    for (int i = 0; i < n4; i++) same2 &= same_double(x3[i], x2[i]);
    if (!same2 && bad_vl < 3)
      fprintf(stderr, "ratio scan (AVX-512VL) differs: n %d kind %d rp %d: %g/%g %g/%g rows %d/%d\n", n4, kind,
              rp, r2, r1, s2, s1, g2, g1);
    bad_vl += !same2;
  }
  printf("ratio kernels: %d random scans, the AVX2 kernel against the scalar twin%s\n", cases,
         svi_have_avx512() ? " and the AVX-512 copies (4 and 8 rows a vector) against the AVX2 kernel" : " (no AVX-512 kernels on this CPU)");
  CHECK(bad_vl == 0, "%d of %d ratio scans of the AVX-512 copies differ from the AVX2 kernel's", bad_vl, cases);
  CHECK(bad_scan == 0, "%d of %d ratio scans differ from the scalar twin", bad_scan, cases);
  CHECK(bad_min == 0, "%d of %d minimum ratios differ from the scalar twin", bad_min, cases);
}

int main(void) {
  test_ratio_kernels();
  test_pmatrix();
  test_impact_shape();
  test_degenerate();
  test_long_path();
  test_large_pfi();
  test_degenerate_ties();
  test_zero_column();
  test_sobol();
  return svi_test_finish();
}
