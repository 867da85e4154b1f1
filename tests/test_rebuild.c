/* test_rebuild.c -- the revised Lemke's product form rebuilt from its basis (svi_lcp.c,
 * pfi_rebuild) on LCPs whose paths run much longer than their bases.
 *
 * Towers of K free boxes with C contact points on each bottom face (tests/box3d.h, box3d_tower):
 * W has rank 6K under 5KC impulse rows, and Lemke's paths on their Routh step LCPs (75) bring
 * columns in and out many times, so the product form rebuilds.  For each LCP, with random
 * budgets, covering vectors and signed lexicographic orders (some LCPs with the plain rule), the
 * revised Lemke (svi_lcp_lemke_prepared: the product form, rebuilt) against the same path with
 * rebuilds off (svi_lcp_set_rebuild) and against the explicit tableau (svi_lcp_lemke_perturbed,
 * the oracle), on the same dense matrix.  Checked:
 *   - the product form was rebuilt on at least a twentieth of the LCPs, and never on a path of
 *     fewer than 64 rows; a path that was not rebuilt has the bits of the path with rebuilds off;
 *   - every solution returned with rebuilds solves the LCP in physical units: 1e-9 (1e-6 when
 *     regularised), and every LCP solved without them or by the tableau is solved with them;
 *   - where rebuilt, the post-step velocity v + G lambda agrees (1e-7 of its size, in the
 *     kinetic-energy norm) with the path without rebuilds' and with the tableau's in at least
 *     95 % of the LCPs: a rebuild rounds
 *     B^-1 differently, so a decision of the ratio test within that rounding may go the other way
 *     and reach another solution of a step that has several, and the other solution must then be
 *     valid too (the paths' lengths are reported: the product form and the tableau differ in
 *     about a fifth of these degenerate LCPs without any rebuild);
 *   - the path with the AVX-512 copies (FTRAN's pfi_ftran_large_512 and the ratio scan's
 *     ratio_scan_vl, eight rows a vector from 64 rows ratio_scan_512, where the CPU has them: see
 *     the output) has the bits of the path with the
 *     4-wide FTRAN and the AVX2 scan (svi_kern_set_avx512(0)): status, pivots, rebuilds and z, on
 *     every LCP;
 *   - the random covering vectors and signs (svi_random_covering) of the AVX-512VL/DQ kernel have
 *     the bits of the AVX2 kernel's and of the scalar formula's, on 20 000 random keys, offsets
 *     and lengths.
 *
 *   test_rebuild [LCPs]     default 240; SVI_TEST_SCALE scales it
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "svi_internal.h"
#include "svi_test.h"
#include "box3d.h"

#define KMAX 6
#define CMAX 16

static double U(uint64_t t, uint64_t i) { return svi_rng_uniform(4242, t, i); }

/* the post-step velocities v0 + G l1 and v0 + G l2 (svi_impact_g_add) within tol of each other,
 * in kinetic-energy norm: K(dv) <= tol^2 K(v2), plus a floor of 1e-24 K(v0) */
static int same_step(const svi_impact* s, const double* l1, const double* l2, double tol) {
  double v1[6 * KMAX], v2[6 * KMAX], dv[6 * KMAX];
  memcpy(v1, s->v0, sizeof(double) * s->nv);
  memcpy(v2, s->v0, sizeof(double) * s->nv);
  svi_impact_g_add(s, l1, v1);
  svi_impact_g_add(s, l2, v2);
  for (int i = 0; i < s->nv; i++) dv[i] = v1[i] - v2[i];
  return svi_impact_kinetic_energy(s, dv) <=
         tol * tol * svi_impact_kinetic_energy(s, v2) + 1e-24 * svi_impact_kinetic_energy(s, s->v0);
}

/* svi_random_covering with the AVX-512 kernel (where the CPU has it), without it (the AVX2 kernel)
 * and the scalar formula of svi_routh.c: the same d and signs, bit for bit */
static void test_covering(void) {
  enum { N = 45 };
  double d1[N], s1[N], d0[N], s0[N];
  long long diff_wide = 0, diff_scalar = 0, tries = 20000;
  for (long long t = 0; t < tries; t++) {
    uint64_t key = svi_rng_keyed(0x5eed, (uint64_t)t), index0 = svi_rng_keyed(0x1dea, (uint64_t)t) >> (t % 64);
    int n = 1 + (int)(svi_rng_keyed(0x1e9, (uint64_t)t) % N);
    svi_random_covering(key, index0, n, d1, s1);
    svi_kern_set_avx512(0);
    svi_random_covering(key, index0, n, d0, s0);
    svi_kern_set_avx512(1);
    diff_wide += memcmp(d1, d0, sizeof(double) * n) != 0 || memcmp(s1, s0, sizeof(double) * n) != 0;
    for (int i = 0; i < n; i++) {
      uint64_t x = svi_rng_keyed(key, index0 + (uint64_t)i);
      double d = 0.05 + 0.95 * ((double)(x >> 11) + 0.5) * 0x1.0p-53, sg = (double)(2 * (int)(x & 1) - 1);
      diff_scalar += memcmp(&d, &d1[i], sizeof d) != 0 || sg != s1[i];
    }
  }
  printf("random covering vectors: %lld of %lld differ with the AVX-512 kernel %s, %lld entries from the scalar "
         "formula\n", diff_wide, tries, svi_have_avx512() ? "on and off" : "(not on this CPU)", diff_scalar);
  CHECK(diff_wide == 0 && diff_scalar == 0, "covering vectors: %lld differ between the kernels, %lld entries from "
        "the scalar formula", diff_wide, diff_scalar);
}

int main(int argc, char** argv) {
  test_covering();
  long long P = argc > 1 ? atoll(argv[1]) : 240;
  const char* sc = getenv("SVI_TEST_SCALE");
  if (sc) P = (long long)(P * atof(sc));
  if (P < 24) P = 24;
  static const int shapes[][2] = {{6, 16}, {6, 9}, {4, 16}, {2, 4}};   /* K, C; the last: n = 56 */
  const int nshape = (int)(sizeof(shapes) / sizeof(shapes[0]));
  int nvmax = 6 * KMAX, ncmax = KMAX * CMAX, nmax = 7 * ncmax;
  double *M = malloc(sizeof(double) * nvmax * nvmax), *Jn = malloc(sizeof(double) * ncmax * nvmax);
  double *Jt = malloc(sizeof(double) * 2 * ncmax * nvmax), *mu = malloc(sizeof(double) * ncmax);
  double *v = malloc(sizeof(double) * nvmax), *q = malloc(sizeof(double) * nmax);
  double *z1 = malloc(sizeof(double) * nmax), *z2 = malloc(sizeof(double) * nmax);
  double* z0 = malloc(sizeof(double) * nmax);
  double *d = malloc(sizeof(double) * nmax), *sg = malloc(sizeof(double) * nmax);
  int* ord = malloc(sizeof(int) * nmax);
  svi_impact* s = svi_impact_create(nvmax, ncmax, 2);
  CHECK(M && Jn && Jt && mu && v && q && z0 && z1 && z2 && d && sg && ord && s, "allocation");
  if (!s) return svi_test_finish();
  svi_impact_set_solver(s, SVI_SOLVER_DENSE);
  long long solves = 0, rebuilt = 0, rebuilds = 0, small_rebuilt = 0, same_pivots = 0, bad_res = 0;
  long long only_tableau = 0, only_unrebuilt = 0, both[2] = {0, 0}, same_v[2] = {0, 0}, diff_valid[2] = {0, 0};
  long long diff_bad[2] = {0, 0};   /* [0]: against the path without rebuilds, [1]: against the tableau */
  long long wide_same = 0;
  const int wide = svi_have_avx512();
  long long shape_rebuilt[8] = {0};
  double worst = 0;
  for (long long k = 0; k < P; k++) {
    int K = shapes[k % nshape][0], C = shapes[k % nshape][1];
    box3d_tower(K, C, M, Jn, Jt, mu, v);
    /* a varied landing: the top box's velocity and every friction coefficient drawn */
    for (int i = 0; i < 6; i++) v[6 * (K - 1) + i] += 0.3 * (2 * U(k, i) - 1);
    v[6 * (K - 1) + 2] = -0.5 - U(k, 7);
    for (int i = 0; i < K * C; i++) mu[i] = 0.2 + 0.8 * U(k, 100 + i);
    svi_problem_def def = {6 * K, K * C, 2, M, Jn, Jt, mu, v};
    if (svi_impact_setup(s, &def, NULL, 0) != SVI_OK) { CHECK(0, "setup of problem %lld", k); continue; }
    svi_impact_dense(s);
    int nc = s->nc, nb = s->nb, n = s->n_routh;
    /* (75)'s q: budgets (some zero, some huge), the pre-impact velocity's rows, zeros */
    double h = s->ref_impulse * (k % 7 == 3 ? 50 : 0.2 + 2 * U(k, 9000));
    for (int i = 0; i < nc; i++) q[i] = U(k, 9100 + i) < 0.1 ? 0 : h * U(k, 9300 + i);
    memcpy(q + nc, s->u0, sizeof(double) * nb);
    memset(q + nc + nb, 0, sizeof(double) * nc);
    int pert = (k / nshape) % 4 != 0;   /* the plain rule on a quarter of each shape's LCPs */
    for (int i = 0; i < n; i++) {
      ord[i] = i;
      sg[i] = U(k, 20000 + i) < 0.5 ? -1.0 : 1.0;
      d[i] = 0.05 + 0.95 * U(k, 30000 + i);
    }
    for (int i = n - 1; i > 0; i--) {
      int j = (int)(U(k, 40000 + i) * (i + 1));
      int t = ord[i]; ord[i] = ord[j]; ord[j] = t;
    }
    svi_lcp_options o = svi_impact_lcp_options(s, NULL, 1);
    svi_lcp_prepared prep = {.M = s->A_routh, .mnorm = s->anorm_routh};
    const double* dd = pert ? d : NULL;
    const int* oo = pert ? ord : NULL;
    const double* ss = pert ? sg : NULL;
    svi_lcp_info i1, i0, i2;
    int s1 = svi_lcp_lemke_prepared(s->lcp, n, &prep, q, dd, oo, ss, &o, z1, &i1);
    {   /* the same path through the 4-wide FTRAN and the AVX2 scan: the same bits (z0 is
         * overwritten below) */
      svi_lcp_info i4;
      svi_kern_set_avx512(0);
      int s4 = svi_lcp_lemke_prepared(s->lcp, n, &prep, q, dd, oo, ss, &o, z0, &i4);
      svi_kern_set_avx512(1);
      int same = s4 == s1 && i4.pivots == i1.pivots && i4.rebuilds == i1.rebuilds &&
                 (s1 < 0 || !memcmp(z0, z1, sizeof(double) * n));
      wide_same += same;
      CHECK(same, "problem %lld: the AVX-512 copies and the 4-wide FTRAN with the AVX2 scan differ (status "
            "%d/%d, pivots %d/%d, rebuilds %d/%d)", k, s1, s4, i1.pivots, i4.pivots, i1.rebuilds, i4.rebuilds);
    }
    svi_lcp_set_rebuild(s->lcp, 0);
    int s0 = svi_lcp_lemke_prepared(s->lcp, n, &prep, q, dd, oo, ss, &o, z0, &i0);
    svi_lcp_set_rebuild(s->lcp, 1);
    int s2 = svi_lcp_lemke_perturbed(s->lcp, n, s->A_routh, q, dd, oo, ss, &o, z2, &i2);
    solves++;
    shape_rebuilt[k % nshape] += i1.rebuilds > 0;
    rebuilt += i1.rebuilds > 0;
    rebuilds += i1.rebuilds;
    small_rebuilt += n < 64 && i1.rebuilds > 0;
    CHECK(i0.rebuilds == 0 && i2.rebuilds == 0, "rebuilds reported with rebuilds off (%d) or on the tableau (%d)",
          i0.rebuilds, i2.rebuilds);
    if (s1 >= 0) {
      double r = svi_lcp_residual_units(n, s->A_routh, q, z1, o.zunit, o.wunit);
      worst = fmax(worst, r);
      if (r > (s1 == SVI_OK ? 1e-9 : 1e-6)) bad_res++;
    }
    if (s2 >= 0 && s1 < 0) only_tableau++;
    if (s0 >= 0 && s1 < 0) only_unrebuilt++;
    if (i1.rebuilds == 0) {   /* the same path: the same bits */
      int same = s1 == s0 && i1.pivots == i0.pivots && !memcmp(z1, z0, sizeof(double) * n);
      CHECK(same, "problem %lld: no rebuild, but not the bits of the path without rebuilds", k);
      continue;
    }
    const double* ref[2] = {z0, z2};
    int sref[2] = {s0, s2};
    for (int c = 0; c < 2; c++) {
      if (s1 < 0 || sref[c] < 0) continue;
      both[c]++;
      if (c == 0) same_pivots += i1.pivots == i0.pivots;
      if (same_step(s, z1 + nc, ref[c] + nc, 1e-7)) same_v[c]++;
      else if (svi_lcp_residual_units(n, s->A_routh, q, ref[c], o.zunit, o.wunit) <= 1e-6) diff_valid[c]++;
      else diff_bad[c]++;
    }
  }
  printf("towers (n = 56 .. 672), %lld LCPs: the product form rebuilt in %lld (%lld rebuilds); worst residual "
         "%.2e, above tolerance %lld; solved by the tableau and not with rebuilds %lld, without rebuilds and not "
         "with them %lld.  Where rebuilt, against the same path without rebuilds: both solved %lld, same pivots "
         "%lld, same v' %lld, different v' both valid %lld, different and invalid %lld; against the tableau: both "
         "solved %lld, same v' %lld, different both valid %lld, different and invalid %lld\n",
         solves, rebuilt, rebuilds, worst, bad_res, only_tableau, only_unrebuilt, both[0], same_pivots, same_v[0],
         diff_valid[0], diff_bad[0], both[1], same_v[1], diff_valid[1], diff_bad[1]);
  printf("the AVX-512 copies of FTRAN and the ratio scan %s: the same bits as without them in %lld of %lld "
         "LCPs\n", wide ? "on (this CPU has AVX-512F, VL, DQ and VBMI)" : "not exercised (no AVX-512F, VL, DQ and VBMI on "
         "this CPU, or a portable build): both runs took the 4-wide FTRAN and the AVX2 scan", wide_same, solves);
  printf("rebuilt by shape (K x C):");
  for (int h = 0; h < nshape; h++) printf(" %d x %d: %lld of %lld", shapes[h][0], shapes[h][1], shape_rebuilt[h],
                                          (P - h + nshape - 1) / nshape);
  printf("\n");
  CHECK(rebuilt >= 2 && rebuilt * 20 >= solves, "the product form was rebuilt in only %lld of %lld LCPs", rebuilt,
        solves);
  CHECK(small_rebuilt == 0, "%lld paths below 64 rows were rebuilt", small_rebuilt);
  CHECK(bad_res == 0, "%lld returned solutions fail the residual", bad_res);
  CHECK(only_tableau == 0 && only_unrebuilt == 0, "LCPs solved by the tableau (%lld) or without rebuilds (%lld) "
        "and not with them", only_tableau, only_unrebuilt);
  for (int c = 0; c < 2; c++) {
    CHECK(diff_bad[c] == 0, "%lld different velocities where the %s's solution is invalid", diff_bad[c],
          c ? "tableau" : "path without rebuilds");
    CHECK(same_v[c] * 100 >= both[c] * 95, "same velocity as the %s in only %lld of %lld",
          c ? "tableau" : "path without rebuilds", same_v[c], both[c]);
  }
  svi_impact_destroy(s);
  free(M); free(Jn); free(Jt); free(mu); free(v); free(q); free(z0); free(z1); free(z2); free(d); free(sg); free(ord);
  return svi_test_finish();
}
