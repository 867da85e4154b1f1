/* test_propagative.c -- the propagative law with restitution (Seghete & Murphey; digest 004,
 * section 12 tests T1, T2, T4, T5, the billiard break, the restitution blend, validity, friction). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "svi/svi_core.h"
#include "svi_internal.h"
#include "svi_test.h"
#include "random_problem.h"

#define NVX 12
#define NCX 10
#define PI 3.14159265358979323846

typedef struct {
  int nv, nc, nt;
  double M[NVX * NVX], Jn[NCX * NVX], Jt[2 * NCX * NVX], mu[NCX], v[NVX];
} prob;

static svi_impact* setup(const prob* p) {
  svi_problem_def d = {p->nv, p->nc, p->nt > 0 ? p->nt : 1, p->M, p->Jn, p->Jt, p->mu, p->v};
  svi_impact* s = svi_impact_create(d.nv, d.nc, d.nt);
  char err[200];
  int st = svi_impact_setup(s, &d, err, sizeof(err));
  CHECK(st == SVI_OK, "setup: %s", err);
  return s;
}

/* n balls on a line, ball i touching ball i+1: contact i has J_n = e_{i+1} - e_i (separating > 0) */
static prob cradle(int n, const double* m, const double* v) {
  prob p;
  memset(&p, 0, sizeof(p));
  p.nv = n;
  p.nc = n - 1;
  p.nt = 1;
  for (int i = 0; i < n; i++) { p.M[i * n + i] = m ? m[i] : 1.0; p.v[i] = v[i]; }
  for (int i = 0; i + 1 < n; i++) { p.Jn[i * n + i] = -1; p.Jn[i * n + i + 1] = 1; }
  return p;
}

static double mdot(int nv, const double* M, const double* a, const double* b) {
  double s = 0;
  for (int i = 0; i < nv; i++)
    for (int j = 0; j < nv; j++) s += a[i] * M[i * nv + j] * b[j];
  return s;
}

static double maxdiff(int n, const double* a, const double* b) {
  double d = 0;
  for (int i = 0; i < n; i++) d = fmax(d, fabs(a[i] - b[i]));
  return d;
}

/* M^-1 x for a small SPD M (copy, Cholesky) */
static void minv(int n, const double* M, double* x) {
  double L[NVX * NVX];
  memcpy(L, M, sizeof(double) * n * n);
  svi_cholesky(n, L);
  svi_cholesky_solve(n, L, x);
}

/* <a, b>_g = a M^-1 b^T (eq. 5) */
static double gdot(int n, const double* M, const double* a, const double* b) {
  double x[NVX];
  memcpy(x, b, sizeof(double) * n);
  minv(n, M, x);
  double s = 0;
  for (int i = 0; i < n; i++) s += a[i] * x[i];
  return s;
}

/* rows 0..k-1 of J made g-orthonormal (Gram-Schmidt in the metric of eq. 5) */
static void g_orthonormalise(int n, const double* M, double* J, int k) {
  for (int i = 0; i < k; i++) {
    double* r = J + i * n;
    for (int j = 0; j < i; j++) {
      double c = gdot(n, M, r, J + j * n);
      for (int t = 0; t < n; t++) r[t] -= c * J[j * n + t];
    }
    double nr = sqrt(gdot(n, M, r, r));
    for (int t = 0; t < n; t++) r[t] /= nr;
  }
}

/* v <- v + M^-1 J^T c, J: k rows */
static void add_impulse(int n, const double* M, const double* J, int k, const double* c, double* v) {
  double x[NVX] = {0};
  for (int i = 0; i < k; i++)
    for (int t = 0; t < n; t++) x[t] += J[i * n + t] * c[i];
  minv(n, M, x);
  for (int t = 0; t < n; t++) v[t] += x[t];
}

static svi_propagative_config elastic(void) {
  svi_propagative_config c = svi_propagative_default_config();
  c.restitution = 1;
  return c;
}

/* Checks an outcome in physical units, independently of the library: energy, non-penetration at
 * 1e-6 x the largest approach speed, non-negative impulses, and v+ - v- = M^-1 J_n^T lambda. */
static int valid_outcome(const prob* p, const double* v1, const double* lam, double ke_tol) {
  int nv = p->nv, nc = p->nc;
  double speed = 0, vn;
  for (int i = 0; i < nc; i++) {
    vn = 0;
    for (int k = 0; k < nv; k++) vn += p->Jn[i * nv + k] * p->v[k];
    speed = fmax(speed, -vn);
  }
  double ke0 = 0.5 * mdot(nv, p->M, p->v, p->v), ke1 = 0.5 * mdot(nv, p->M, v1, v1);
  int ok = ke1 <= ke0 * (1 + ke_tol);
  for (int i = 0; i < nc; i++) {
    vn = 0;
    for (int k = 0; k < nv; k++) vn += p->Jn[i * nv + k] * v1[k];
    ok &= vn >= -1e-6 * speed;
    if (lam) ok &= lam[i] >= 0;
  }
  if (lam) {
    /* M (v+ - v-) = J_n^T lambda: the law applies normal impulses only */
    double scale = 0;
    for (int k = 0; k < nv; k++) scale = fmax(scale, fabs(p->v[k]) + fabs(v1[k]));
    for (int r = 0; r < nv; r++) {
      double a = 0, b = 0;
      for (int k = 0; k < nv; k++) a += p->M[r * nv + k] * (v1[k] - p->v[k]);
      for (int i = 0; i < nc; i++) b += p->Jn[i * nv + r] * lam[i];
      double ms = 0;
      for (int k = 0; k < nv; k++) ms = fmax(ms, fabs(p->M[r * nv + k]));
      ok &= fabs(a - b) <= 1e-10 * (1 + ms * scale);
    }
  }
  return ok;
}

/* ---- T1: equal-mass cradle, e = 1 ------------------------------------------------------- */
static void test_t1_cradle(void) {
  for (int n = 3; n <= 5; n += 2) {
    double v[5] = {1, 0, 0, 0, 0}, V[8 * 5], L[8 * 4];
    prob p = cradle(n, NULL, v);
    svi_impact* s = setup(&p);
    svi_propagative* w = svi_propagative_create(n, n - 1, 0);
    svi_propagative_config c = elastic();
    svi_propagative_set_info si;
    int st = svi_propagative_all(w, s, &c, V, L, 8, &si);
    CHECK(st == SVI_OK && si.exhaustive && si.count == 1 && si.rejected == 0,
          "T1 n=%d: st %d exhaustive %d count %d rejected %lld", n, st, si.exhaustive, si.count, si.rejected);
    CHECK(si.min_length == n - 1 && si.max_length == n - 1, "T1 n=%d: lengths %d..%d", n, si.min_length, si.max_length);
    double want[5] = {0};
    want[n - 1] = 1;
    CHECK(maxdiff(n, V, want) < 1e-12, "T1 n=%d: end ball leaves, the others rest (err %g)", n, maxdiff(n, V, want));
    double ke0 = 0.5, ke1 = 0.5 * mdot(n, p.M, V, V);
    CHECK(fabs(ke1 - ke0) <= 1e-12 * ke0, "T1 n=%d: energy %.17g vs %.17g", n, ke1, ke0);
    printf("T1: %d balls, relative energy error %.1e\n", n, fabs(ke1 - ke0) / ke0);
    CHECK(si.xi == 0, "T1 n=%d: xi %g", n, si.xi);
    /* impulses pass through the resting contacts: every contact carries lambda = 1 (m v) */
    for (int i = 0; i < n - 1; i++) CHECK(fabs(L[i] - 1) < 1e-12, "T1 n=%d: lambda[%d] = %g", n, i, L[i]);
    /* every single-outcome order policy, many seeds */
    svi_order ords[3] = {SVI_ORDER_RANDOM, SVI_ORDER_MOST_VIOLATED, SVI_ORDER_LEAST_VIOLATED};
    int bad = 0;
    for (int o = 0; o < 3; o++)
      for (uint64_t k = 0; k < 64; k++) {
        double v1[5], lam[4];
        svi_propagative_info inf;
        c.order = ords[o];
        st = svi_propagative_outcome(w, s, &c, k, v1, lam, &inf);
        if (st != SVI_OK || maxdiff(n, v1, want) > 1e-12 || inf.reflections != n - 1 ||
            !valid_outcome(&p, v1, lam, 1e-12) || fabs(inf.ke_after - ke0) > 1e-12 * ke0) bad++;
      }
    CHECK(bad == 0, "T1 n=%d: %d outcomes differ over orders", n, bad);
    svi_propagative_destroy(w);
    svi_impact_destroy(s);
  }
  /* digest 8.2 vectors, m = 1: (2,0,-1) -> (-1,0,2) by uvu or vuv; (3,1,-2) -> (-2,1,3) */
  double in[2][3] = {{2, 0, -1}, {3, 1, -2}}, out[2][3] = {{-1, 0, 2}, {-2, 1, 3}};
  for (int t = 0; t < 2; t++) {
    prob p = cradle(3, NULL, in[t]);
    svi_impact* s = setup(&p);
    svi_propagative* w = svi_propagative_create(3, 2, 0);
    svi_propagative_config c = elastic();
    svi_propagative_set_info si;
    double V[4 * 3];
    svi_propagative_all(w, s, &c, V, NULL, 4, &si);
    CHECK(si.exhaustive && si.count == 1 && maxdiff(3, V, out[t]) < 1e-12 && si.orders == 2 &&
          si.max_length == 3 && si.min_length == 3,
          "cradle (%g,%g,%g): count %d orders %lld lengths %d..%d, v+ (%g,%g,%g)", in[t][0], in[t][1],
          in[t][2], si.count, si.orders, si.min_length, si.max_length, V[0], V[1], V[2]);
    svi_propagative_destroy(w);
    svi_impact_destroy(s);
  }
}

/* ---- the restitution blend on the cradle: plastic endpoint, digest 4's 0 / 34 / 66.7 % ---- */
static void test_cradle_restitution(void) {
  double v[3] = {1, 0, 0}, v1[3], lam[2];
  prob p = cradle(3, NULL, v);
  svi_impact* s = setup(&p);
  svi_propagative* w = svi_propagative_create(3, 2, 0);
  svi_propagative_config c = svi_propagative_default_config();
  double es[3] = {1, 0.7, 0}, loss[3] = {0, 0.34, 2.0 / 3};
  for (int t = 0; t < 3; t++) {
    c.restitution = es[t];
    svi_propagative_info inf;
    int st = svi_propagative_outcome(w, s, &c, 0, v1, lam, &inf);
    double rel = 1 - inf.ke_after / inf.ke_before;
    CHECK(st == SVI_OK && fabs(rel - loss[t]) < 1e-12, "cradle e=%g: loss %.15g, want %.15g", es[t], rel, loss[t]);
    CHECK(valid_outcome(&p, v1, lam, 1e-12), "cradle e=%g: invalid outcome", es[t]);
    if (es[t] == 0) {
      double vp[3] = {1.0 / 3, 1.0 / 3, 1.0 / 3}, lp[2] = {2.0 / 3, 1.0 / 3};
      CHECK(maxdiff(3, v1, vp) < 1e-12 && maxdiff(2, lam, lp) < 1e-12 && inf.reflections == 0,
            "cradle e=0: plastic (1/3,1/3,1/3), lambda (2/3,1/3); got (%g,%g,%g) (%g,%g)", v1[0], v1[1], v1[2], lam[0], lam[1]);
    }
  }
  svi_propagative_destroy(w);
  svi_impact_destroy(s);
}

/* ---- T2: unequal masses (1, 2, 1.5), v- = (1, 0, -1): exactly the two outcomes of digest 8.2 - */
static void test_t2_unequal(void) {
  double m[3] = {1, 2, 1.5}, v[3] = {1, 0, -1}, V[8 * 3], L[8 * 2];
  double uvu[3] = {-0.904761904761905, -0.476190476190476, 0.904761904761905};
  double vuv[3] = {-1.476190476190476, 0.176870748299320, 0.414965986394558};
  prob p = cradle(3, m, v);
  svi_impact* s = setup(&p);
  svi_propagative* w = svi_propagative_create(3, 2, 0);
  svi_propagative_config c = elastic();
  svi_propagative_set_info si;
  int st = svi_propagative_all(w, s, &c, V, L, 8, &si);
  CHECK(st == SVI_OK && si.exhaustive && si.count == 2 && si.orders == 2 && si.rejected == 0,
        "T2: st %d exhaustive %d count %d orders %lld", st, si.exhaustive, si.count, si.orders);
  int a = maxdiff(3, V, uvu) < 1e-12 ? 0 : 1;   /* which stored outcome is uvu */
  CHECK(maxdiff(3, V + a * 3, uvu) < 1e-12 && maxdiff(3, V + (1 - a) * 3, vuv) < 1e-12,
        "T2: outcomes (%.12f,%.12f,%.12f) and (%.12f,%.12f,%.12f)", V[0], V[1], V[2], V[3], V[4], V[5]);
  for (int k = 0; k < 2; k++) {
    double ke = 0.5 * mdot(3, p.M, V + 3 * k, V + 3 * k);
    CHECK(fabs(ke - 1.25) < 1e-12, "T2: KE %.15g, want 1.25", ke);
    CHECK(valid_outcome(&p, V + 3 * k, L + 2 * k, 1e-12), "T2: outcome %d invalid", k);
  }
  CHECK(si.min_length == 3 && si.max_length == 3, "T2: lengths %d..%d", si.min_length, si.max_length);
  CHECK(fabs(si.xi - svi_indeterminacy(s, V, 2)) < 1e-12 && si.xi > 0.1, "T2: xi %g vs %g", si.xi, svi_indeterminacy(s, V, 2));
  /* the ordering rules: normalised vn = -1/sqrt(1.5) at contact 0, -1/sqrt(7/6) at contact 1, so
   * most-violated-first starts with contact 1 (vuv), least-violated-first with contact 0 (uvu) */
  double v1[3];
  c.order = SVI_ORDER_MOST_VIOLATED;
  svi_propagative_outcome(w, s, &c, 0, v1, NULL, NULL);
  CHECK(maxdiff(3, v1, vuv) < 1e-12, "T2: most violated first gives vuv");
  c.order = SVI_ORDER_LEAST_VIOLATED;
  svi_propagative_outcome(w, s, &c, 0, v1, NULL, NULL);
  CHECK(maxdiff(3, v1, uvu) < 1e-12, "T2: least violated first gives uvu");
  /* random orders reach both, each about half of the time; sampling gives the same set */
  c.order = SVI_ORDER_RANDOM;
  int n_uvu = 0, n_vuv = 0;
  for (uint64_t k = 0; k < 1000; k++) {
    svi_propagative_outcome(w, s, &c, k, v1, NULL, NULL);
    n_uvu += maxdiff(3, v1, uvu) < 1e-12;
    n_vuv += maxdiff(3, v1, vuv) < 1e-12;
  }
  CHECK(n_uvu + n_vuv == 1000 && n_uvu > 400 && n_vuv > 400, "T2: random orders %d uvu, %d vuv", n_uvu, n_vuv);
  c.enum_max_contacts = 0;
  st = svi_propagative_all(w, s, &c, V, NULL, 8, &si);
  CHECK(st == SVI_OK && !si.exhaustive && si.count == 2 && si.orders == c.samples,
        "T2 sampled: exhaustive %d count %d orders %lld", si.exhaustive, si.count, si.orders);
  svi_propagative_destroy(w);
  svi_impact_destroy(s);
}

/* a random SPD matrix of size n (random_problem.h's generator, stream t) */
static void spd(int n, double* M, uint64_t t) {
  double A[NVX * NVX];
  for (int i = 0; i < n * n; i++) A[i] = 2 * svi_rng_uniform(77, t, (uint64_t)i) - 1;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double s = i == j ? 0.1 : 0;
      for (int k = 0; k < n; k++) s += A[k * n + i] * A[k * n + j];
      M[i * n + j] = s;
    }
}

/* ---- T4 (Theorem 2): pairwise g-orthogonal normals, n = 2..8 -------------------------------- */
static void test_t4_orthogonal(void) {
  int bad_count = 0, bad_len = 0, bad_formula = 0, not_exh = 0, systems = 0;
  svi_propagative* w = svi_propagative_create(NVX, NCX, 0);
  for (int n = 2; n <= 8; n++) {
    for (int rep = 0; rep < 6; rep++) {
      uint64_t t = (uint64_t)(100 * n + rep);
      prob p;
      memset(&p, 0, sizeof(p));
      p.nv = n + 2;
      p.nc = n;
      p.nt = 1;
      spd(p.nv, p.M, t);
      for (int i = 0; i < n * p.nv; i++) p.Jn[i] = 2 * svi_rng_uniform(78, t, (uint64_t)i) - 1;
      g_orthonormalise(p.nv, p.M, p.Jn, n);
      /* random scales, then every contact approaching: vn_i = -(0.1 + U) */
      for (int i = 0; i < n; i++) {
        double sc = 0.2 + 3 * svi_rng_uniform(79, t, (uint64_t)i);
        for (int k = 0; k < p.nv; k++) p.Jn[i * p.nv + k] *= sc;
      }
      for (int k = 0; k < p.nv; k++) p.v[k] = 2 * svi_rng_uniform(80, t, (uint64_t)k) - 1;
      double cimp[NCX];
      for (int i = 0; i < n; i++) {
        double vn = 0, *J = p.Jn + i * p.nv;
        for (int k = 0; k < p.nv; k++) vn += J[k] * p.v[k];
        cimp[i] = (-(0.1 + svi_rng_uniform(81, t, (uint64_t)i)) - vn) / gdot(p.nv, p.M, J, J);
      }
      add_impulse(p.nv, p.M, p.Jn, n, cimp, p.v);
      svi_impact* s = setup(&p);
      CHECK(svi_normal_coupling(s, NULL) < 1e-12, "T4: coupling %g", svi_normal_coupling(s, NULL));
      svi_propagative_config c = elastic();
      svi_propagative_set_info si;
      double V[4 * NVX], L[4 * NCX];
      svi_propagative_all(w, s, &c, V, L, 4, &si);
      systems++;
      not_exh += !si.exhaustive;
      bad_count += si.count != 1 || si.rejected != 0;
      bad_len += si.min_length != n || si.max_length != n;
      /* eq. (25) / Lemma 7: v+ = v- - 2 sum_i (vn_i / A_ii) M^-1 J_i^T, each contact reflected once */
      double want[NVX], c2[NCX];
      memcpy(want, p.v, sizeof(want));
      for (int i = 0; i < n; i++) {
        double vn = 0, *J = p.Jn + i * p.nv;
        for (int k = 0; k < p.nv; k++) vn += J[k] * p.v[k];
        c2[i] = -2 * vn / gdot(p.nv, p.M, J, J);
      }
      add_impulse(p.nv, p.M, p.Jn, n, c2, want);
      bad_formula += maxdiff(p.nv, V, want) > 1e-9 || !valid_outcome(&p, V, L, 1e-12);
      if (n == 8 && rep == 0) {
        /* the full tree of 8 contacts: sum_k 8!/(8-k)! = 109600 reflections, 40320 orders */
        CHECK(si.orders == 40320 && si.reflections == 109600, "T4 n=8: %lld orders, %lld reflections", si.orders, si.reflections);
      }
      svi_impact_destroy(s);
    }
  }
  CHECK(not_exh == 0, "T4: %d of %d systems not enumerated exhaustively", not_exh, systems);
  CHECK(bad_count == 0, "T4: %d of %d systems with more than one outcome", bad_count, systems);
  CHECK(bad_len == 0, "T4: %d of %d systems not reflected exactly n times", bad_len, systems);
  CHECK(bad_formula == 0, "T4: %d of %d systems differ from eq. (25)", bad_formula, systems);
  svi_propagative_destroy(w);
}

/* two contacts with normalised coupling c (g-orthonormal pair, random scales), random v- */
static prob two_contacts(double cpl, uint64_t t) {
  prob p;
  memset(&p, 0, sizeof(p));
  p.nv = 4;
  p.nc = 2;
  p.nt = 1;
  spd(p.nv, p.M, t);
  double E[2 * NVX];
  for (int i = 0; i < 2 * p.nv; i++) E[i] = 2 * svi_rng_uniform(90, t, (uint64_t)i) - 1;
  g_orthonormalise(p.nv, p.M, E, 2);
  double a = 0.3 + 2 * svi_rng_uniform(91, t, 0), b = 0.3 + 2 * svi_rng_uniform(91, t, 1);
  for (int k = 0; k < p.nv; k++) {
    p.Jn[k] = a * E[k];
    p.Jn[p.nv + k] = b * (cpl * E[k] + sqrt(1 - cpl * cpl) * E[p.nv + k]);
  }
  for (int k = 0; k < p.nv; k++) p.v[k] = 2 * svi_rng_uniform(92, t, (uint64_t)k) - 1;
  return p;
}

/* ---- T5 (Theorems 1 and 3): two contacts ---------------------------------------------------- */
static void test_t5_two_contacts(void) {
  svi_propagative* w = svi_propagative_create(NVX, 2, 0);
  svi_propagative_config c = elastic();
  int trials = 0, over_thm1 = 0, over_wedge = 0, over_two = 0, not_exh = 0, two = 0, both = 0, bad_cpl = 0;
  int bad_valid = 0;
  for (uint64_t t = 0; t < 4000; t++) {
    double cpl = -0.99 + 1.98 * svi_rng_uniform(93, t, 0);
    prob p = two_contacts(cpl, 1000 + t);
    svi_impact* s = setup(&p);
    double vn[2];
    svi_impact_normal_velocity(s, p.v, vn);
    if (vn[0] >= 0 && vn[1] >= 0) { svi_impact_destroy(s); continue; }
    trials++;
    bad_cpl += fabs(svi_normal_coupling(s, NULL) - fabs(cpl)) > 1e-9;
    svi_propagative_set_info si;
    double V[4 * NVX], L[4 * 2];
    svi_propagative_all(w, s, &c, V, L, 4, &si);
    double gamma = 0.5 * acos(-cpl);   /* <u,v>_g = -cos 2 gamma (38) */
    not_exh += !si.exhaustive;
    over_thm1 += si.max_length > (int)ceil(PI / gamma);
    over_wedge += si.max_length > (int)ceil(PI / (2 * gamma));
    over_two += si.count > 2;
    two += si.count == 2;
    both += vn[0] < 0 && vn[1] < 0;
    for (int k = 0; k < si.count && k < 4; k++) bad_valid += !valid_outcome(&p, V + k * p.nv, L + 2 * k, 1e-12);
    svi_impact_destroy(s);
  }
  CHECK(trials > 2500, "T5: only %d trials", trials);
  CHECK(bad_cpl == 0, "T5: svi_normal_coupling wrong in %d trials", bad_cpl);
  CHECK(not_exh == 0, "T5: %d trials did not terminate", not_exh);
  CHECK(over_thm1 == 0, "T5: %d trials longer than Theorem 1's ceil(pi/gamma)", over_thm1);
  CHECK(over_wedge == 0, "T5: %d trials longer than the wedge bound ceil(pi/(2 gamma))", over_wedge);
  CHECK(over_two == 0, "T5: %d trials with more than two outcomes", over_two);
  /* a singly-approaching p has one start, so one outcome; a doubly-approaching p two (the two
   * walks end in different wedge images unless c = -cos(pi/k): almost surely for random c) */
  CHECK(two == both, "T5: %d trials with two outcomes, %d with both contacts approaching", two, both);
  CHECK(bad_valid == 0, "T5: %d invalid outcomes", bad_valid);
  printf("T5: %d trials, %d with both contacts approaching, %d with two outcomes\n", trials, both, two);

  /* uniqueness at c = -1/2 (Theorem 3) and at c = -cos(pi/k) (digest 6, numerical); at c = 0 by
   * Theorem 2; non-uniqueness at c = +1/2 */
  double cs[6] = {-0.5, 0.0, -cos(PI / 4), -cos(PI / 5), -cos(PI / 6), 0.5};
  int ks[6] = {3, 2, 4, 5, 6, 0};
  for (int q = 0; q < 6; q++) {
    int multi = 0, n = 0, longest = 0;
    for (uint64_t t = 0; t < 500; t++) {
      prob p = two_contacts(cs[q], 9000 + 1000 * (uint64_t)q + t);
      svi_impact* s = setup(&p);
      double vn[2];
      svi_impact_normal_velocity(s, p.v, vn);
      if (vn[0] < 0 && vn[1] < 0) {
        svi_propagative_set_info si;
        double V[4 * NVX];
        svi_propagative_all(w, s, &c, V, NULL, 4, &si);
        n++;
        multi += si.count > 1;
        if (si.max_length > longest) longest = si.max_length;
      }
      svi_impact_destroy(s);
    }
    printf("T5: c = %+.4f: %d of %d doubly-approaching trials with two outcomes, longest sequence %d\n", cs[q], multi, n,
           longest);
    if (ks[q] > 0) {
      CHECK(n > 50 && multi == 0 && longest <= ks[q], "c = %.4f: %d of %d trials non-unique, longest %d (want <= %d)",
            cs[q], multi, n, longest, ks[q]);
    } else {
      CHECK(n > 50 && multi == n, "c = +1/2: only %d of %d trials non-unique", multi, n);
    }
  }
  svi_propagative_destroy(w);
}

/* ---- billiard break (digest 8.3) ------------------------------------------------------------ */
static prob billiard(double theta, const double r[3]) {
  prob p;
  memset(&p, 0, sizeof(p));
  p.nv = 6;
  p.nc = 2;
  p.nt = 1;
  double m[3] = {r[0] * r[0] * r[0], r[1] * r[1] * r[1], r[2] * r[2] * r[2]};   /* m ~ r^3 */
  for (int b = 0; b < 3; b++) p.M[(2 * b) * 6 + 2 * b] = p.M[(2 * b + 1) * 6 + 2 * b + 1] = m[b];
  /* c at the origin, a and b at angle +-theta/2 from the bisector (the x axis); v_c along it */
  double na[2] = {cos(theta / 2), sin(theta / 2)}, nb[2] = {cos(theta / 2), -sin(theta / 2)};
  const double* n2[2] = {na, nb};
  for (int i = 0; i < 2; i++) {
    /* J_n = n^T (v_ball - v_c), J_t = t^T (v_ball - v_c), t = n rotated by +90 degrees */
    double t[2] = {-n2[i][1], n2[i][0]};
    for (int d = 0; d < 2; d++) {
      p.Jn[i * 6 + 2 * i + d] = n2[i][d];
      p.Jn[i * 6 + 4 + d] = -n2[i][d];
      p.Jt[i * 6 + 2 * i + d] = t[d];
      p.Jt[i * 6 + 4 + d] = -t[d];
    }
  }
  p.v[4] = 1;
  return p;
}

static void test_billiard(void) {
  svi_propagative* w = svi_propagative_create(6, 2, 0);
  svi_propagative_config c = elastic();
  /* digest 8.3 reference table (re-derived independently: pure-Python propagation) */
  double th[11] = {1.0 / 6, 1.0 / 4, 1.0 / 3, 5.0 / 12, 1.0 / 2, 7.0 / 12, 2.0 / 3, 3.0 / 4, 5.0 / 6, 11.0 / 12, 1};
  double xi1[11] = {NAN, NAN, 0.750, 0.383, 0, 0.335, 0.559, 0.445, 0.155, 0.021, 0};
  double xi2[11] = {0.038, 0.030, 0.020, 0.0095, 0, 0.0074, 0.012, 0.013, 0.011, 0.006, 0};
  double tol2[11] = {5e-4, 5e-4, 5e-4, 5e-5, 1e-12, 5e-5, 5e-4, 5e-4, 5e-4, 5e-4, 1e-12};
  double r1[3] = {1, 1, 1}, r2[3] = {1, 1, 2.864};
  for (int k = 0; k < 11; k++) {
    for (int row = 0; row < 2; row++) {
      if (row == 0 && isnan(xi1[k])) continue;   /* a and b would overlap */
      prob p = billiard(th[k] * PI, row ? r2 : r1);
      svi_impact* s = setup(&p);
      svi_propagative_set_info si;
      double V[4 * 6];
      svi_propagative_all(w, s, &c, V, NULL, 4, &si);
      double want = row ? xi2[k] : xi1[k], tol = row ? tol2[k] : (want == 0 ? 1e-12 : 5e-4);
      printf("billiard radii %-11s theta/pi = %.4f: xi = %.4f (digest %.4f), lengths %d..%d\n",
             row ? "(1,1,2.864)" : "(1,1,1)", th[k], si.xi, want, si.min_length, si.max_length);
      CHECK(si.exhaustive && fabs(si.xi - want) <= tol, "billiard radii %s theta = %.4f pi: xi %.6f, table %.4f",
            row ? "(1,1,2.864)" : "(1,1,1)", th[k], si.xi, want);
      CHECK(fabs(si.xi - svi_indeterminacy(s, V, si.count)) < 1e-12, "billiard: xi of the set vs svi_indeterminacy");
      if (th[k] == 1) CHECK(si.max_length == 0 && si.count == 1, "billiard theta = pi: grazing, no impact");
      if (row == 0 && th[k] > 0.3 && th[k] < 1) {
        int len = th[k] <= 2.0 / 3 + 1e-9 ? 2 : 3;   /* digest: length 2 up to 2 pi/3, 3 beyond */
        CHECK(si.min_length == len && si.max_length == len, "billiard theta = %.4f pi: lengths %d..%d, want %d", th[k],
              si.min_length, si.max_length, len);
      }
      svi_impact_destroy(s);
    }
  }
  /* xi vanishes at pi/2 (Theorem 2: cos(theta) = 0) and only there on (pi/3, pi) */
  int zeros = 0;
  for (int k = 1; k < 120; k++) {
    double theta = PI / 3 + (PI - PI / 3) * k / 120.0;
    prob p = billiard(theta, r1);
    svi_impact* s = setup(&p);
    svi_propagative_set_info si;
    double V[4 * 6];
    svi_propagative_all(w, s, &c, V, NULL, 4, &si);
    if (si.xi < 1e-9) zeros++;
    if (k == 30) CHECK(si.xi < 1e-12, "billiard: xi(pi/2) = %g", si.xi);   /* theta = pi/2 exactly */
    svi_impact_destroy(s);
  }
  CHECK(zeros == 1, "billiard: xi vanishes at %d grid angles, want 1 (pi/2)", zeros);
  /* explicit vectors at theta = pi/3 (a first): v_a = (0.75, 0.433013), v_b = (0.375, -0.216506),
   * v_c = (-0.125, -0.216506); b first is its mirror image */
  {
    prob p = billiard(PI / 3, r1);
    svi_impact* s = setup(&p);
    double v1[6], want[6] = {0.75, sqrt(3) / 4, 0.375, -sqrt(3) / 8, -0.125, -sqrt(3) / 8};
    c.order = SVI_ORDER_MOST_VIOLATED;   /* symmetric: a tie, broken by the lowest index = a first */
    svi_propagative_outcome(w, s, &c, 0, v1, NULL, NULL);
    CHECK(maxdiff(6, v1, want) < 1e-12, "billiard pi/3 a-first: (%g,%g) (%g,%g) (%g,%g)", v1[0], v1[1], v1[2], v1[3], v1[4], v1[5]);
    c.order = SVI_ORDER_RANDOM;
    svi_impact_destroy(s);
  }
  svi_propagative_destroy(w);
}

/* ---- the restitution blend on random problems: eq. (16)-(18) and what holds in general -------- */
static void test_energy_random(void) {
  svi_propagative* w = svi_propagative_create(RP_NV, RP_NC, 0);
  long long n = 0, not_ok = 0, bad_blend = 0, bad_elastic = 0, bad_identity = 0, bad_bound = 0,
            bad_valid = 0, bad_plastic = 0, bad_s = 0, strict = 0, equal = 0, bad_fallback = 0,
            not_ok_square = 0, regularised = 0, n_locked = 0;
  for (uint64_t t = 0; t < 12000; t++) {
    rp_problem rp;
    random_impact(&rp, t, t % 5 == 4);
    prob p;
    memset(&p, 0, sizeof(p));
    p.nv = rp.nv;
    p.nc = rp.nc;
    p.nt = rp.nt;
    memcpy(p.M, rp.M, sizeof(rp.M));
    memcpy(p.Jn, rp.Jn, sizeof(rp.Jn));
    memcpy(p.Jt, rp.Jt, sizeof(rp.Jt));
    memcpy(p.mu, rp.mu, sizeof(rp.mu));
    memcpy(p.v, rp.v, sizeof(rp.v));
    svi_impact* s = setup(&p);
    svi_propagative_config c = svi_propagative_default_config();
    c.seed = t;
    double e = svi_rng_uniform(5, t, 0);
    double ve[RP_NV], vp[RP_NV], v1[RP_NV], le[RP_NC], lp[RP_NC], l1[RP_NC];
    svi_propagative_info ie, ip, i1;
    c.restitution = 1;
    int se = svi_propagative_outcome(w, s, &c, 3, ve, le, &ie);
    c.restitution = 0;
    int sp = svi_propagative_outcome(w, s, &c, 3, vp, lp, &ip);
    c.restitution = e;
    int s1 = svi_propagative_outcome(w, s, &c, 3, v1, l1, &i1);
    n++;
    if (se != SVI_OK || sp != SVI_OK || s1 != SVI_OK) {
      /* a failure is reported and the plastic outcome (valid) returned instead, never silently.
       * With more contacts than velocities the normals can lock every normal motion, and then no
       * elastic outcome exists (see test_locked); otherwise only very long sequences hit the cap */
      not_ok++;
      not_ok_square += p.nc <= p.nv;
      n_locked += ie.locked;
      bad_fallback += !((se == SVI_OK || ie.fallback == 1) && (s1 == SVI_OK || i1.fallback == 1) && sp == SVI_OK &&
                        valid_outcome(&p, ve, le, 1e-9) && valid_outcome(&p, v1, l1, 1e-9));
      svi_impact_destroy(s);
      continue;
    }
    int nv = p.nv;
    double ke0 = 0.5 * mdot(nv, p.M, p.v, p.v), kee = 0.5 * mdot(nv, p.M, ve, ve);
    double kep = 0.5 * mdot(nv, p.M, vp, vp), ke1 = 0.5 * mdot(nv, p.M, v1, v1);
    bad_valid += !valid_outcome(&p, ve, le, 1e-9) || !valid_outcome(&p, vp, lp, 1e-9) ||
                 !valid_outcome(&p, v1, l1, 1e-9);
    /* v+ = v_p + e (v_e - v_p) */
    double d[RP_NV], scale = 0;
    for (int k = 0; k < nv; k++) { d[k] = vp[k] + e * (ve[k] - vp[k]); scale = fmax(scale, fabs(ve[k]) + fabs(vp[k])); }
    bad_blend += maxdiff(nv, v1, d) > 1e-12 * (1 + scale);
    /* round-off grows with the sequence length (up to hundreds for nearly parallel normals) */
    double rt = 1e-12 + 3e-13 * ie.reflections;
    bad_elastic += fabs(kee - ke0) > rt * ke0;
    /* loss(e) = (1 - e^2) E_p - 2 e (1 - e) sigma,  sigma = <v_p, v_e - v_p>_M = (J_n v_p) . lambda_e */
    for (int k = 0; k < nv; k++) d[k] = ve[k] - vp[k];
    double sigma = mdot(nv, p.M, vp, d), Ep = ke0 - kep, loss = ke0 - ke1;
    double sig2 = 0;
    for (int i = 0; i < p.nc; i++) {
      double vn = 0;
      for (int k = 0; k < nv; k++) vn += p.Jn[i * nv + k] * vp[k];
      sig2 += vn * le[i];
    }
    bad_s += fabs(sigma - sig2) > 1e-9 * (ke0 + 1e-300) || sigma < -1e-9 * ke0;
    double pred = (1 - e * e) * Ep - e * (1 - e) * sigma;   /* KE is half the squared norm */
    bad_identity += fabs(loss - pred) > 1e-9 * ke0;
    bad_bound += loss > (1 - e * e) * Ep + rt * ke0 || loss < -rt * ke0 || loss > ke0 * (1 + rt) ||
                 Ep > ke0 * (1 + 1e-12);
    if (sigma > 1e-6 * ke0) strict++; else equal++;
    /* e = 0 is the plastic projection, eq. (10)-(11) with lambda >= 0: its KKT conditions
     * J_n v_p >= 0, lambda_p >= 0, lambda_p . J_n v_p = 0 (with v_p - v- = M^-1 J_n^T lambda_p,
     * checked by valid_outcome), and the Anitescu-Potra law with mu = 0, the same LCP in another
     * form (friction rows forced to zero), where that solve needed no regularisation */
    double speed = 0, comp = 0, lmax = 0;
    for (int i = 0; i < p.nc; i++) {
      double vn0 = 0, vn = 0;
      for (int k = 0; k < nv; k++) { vn0 += p.Jn[i * nv + k] * p.v[k]; vn += p.Jn[i * nv + k] * vp[k]; }
      speed = fmax(speed, -vn0);
      comp = fmax(comp, fabs(lp[i] * vn));
      lmax = fmax(lmax, lp[i]);
    }
    int kkt = comp <= 1e-9 * lmax * speed;
    prob q = p;
    memset(q.mu, 0, sizeof(q.mu));
    svi_impact* s0 = setup(&q);
    double vap[RP_NV];
    svi_lcp_info li;
    int sa = svi_law_simultaneous(s0, NULL, vap, &li);
    for (int k = 0; k < nv; k++) d[k] = vap[k] - vp[k];
    bad_plastic += !kkt || (sa == SVI_OK && sqrt(mdot(nv, p.M, d, d)) > 1e-7 * sqrt(2 * ke0));
    regularised += sa != SVI_OK;
    svi_impact_destroy(s0);
    svi_impact_destroy(s);
  }
  printf("energy: %lld random problems, %lld fallbacks (%lld with nc <= nv, %lld locked); sigma > 0 (loss < (1-e^2) E_p) "
         "in %lld, sigma = 0 in %lld\n", n, not_ok, not_ok_square, n_locked, strict, equal);
  CHECK(not_ok_square <= n / 1000, "energy: %lld fallbacks with nc <= nv", not_ok_square);
  CHECK(n >= 10000 && n - not_ok >= 10000, "energy: only %lld problems with valid outcomes", n - not_ok);
  CHECK(bad_fallback == 0, "energy: %lld failures not reported with a valid plastic fallback", bad_fallback);
  CHECK(bad_valid == 0, "energy: %lld invalid outcomes returned as valid", bad_valid);
  CHECK(bad_blend == 0, "energy: %lld outcomes not v_p + e (v_e - v_p)", bad_blend);
  CHECK(bad_elastic == 0, "energy: %lld elastic outcomes changed the energy", bad_elastic);
  CHECK(bad_s == 0, "energy: %lld with sigma != (J_n v_p).lambda_e or sigma < 0", bad_s);
  CHECK(bad_identity == 0, "energy: %lld violate loss = (1-e^2) E_p - 2e(1-e) sigma", bad_identity);
  CHECK(bad_bound == 0, "energy: %lld violate 0 <= loss <= (1-e^2) E_p <= KE(v-)", bad_bound);
  CHECK(bad_plastic == 0, "energy: %lld plastic outcomes fail KKT or differ from the frictionless simultaneous law (%lld "
        "of its solves regularised, not compared)", bad_plastic, regularised);
  CHECK(strict > 100 && equal > 100, "energy: both cases should occur (strict %lld, equal %lld)", strict, equal);
  svi_propagative_destroy(w);
}

/* ---- validity failures are retried, counted and never returned as valid --------------------- */
static void test_rejection(void) {
  double v[3] = {2, 0, -1}, v1[3], lam[2];
  prob p = cradle(3, NULL, v);
  svi_impact* s = setup(&p);
  svi_propagative* w = svi_propagative_create(3, 2, 0);
  svi_propagative_config c = elastic();
  c.max_reflections = 2;   /* both orders need 3 */
  svi_propagative_info inf;
  int st = svi_propagative_outcome(w, s, &c, 0, v1, lam, &inf);
  double vp[3] = {1.0 / 3, 1.0 / 3, 1.0 / 3};
  CHECK(st == SVI_ERR_MAXITER && inf.fallback == 1 && inf.attempts == 1 + c.max_retries &&
        inf.rejected == inf.attempts && maxdiff(3, v1, vp) < 1e-12,
        "cap: st %d fallback %d attempts %d rejected %d v (%g,%g,%g)", st, inf.fallback, inf.attempts, inf.rejected,
        v1[0], v1[1], v1[2]);
  c.order = SVI_ORDER_MOST_VIOLATED;   /* deterministic rule: one attempt */
  st = svi_propagative_outcome(w, s, &c, 0, v1, lam, &inf);
  CHECK(st == SVI_ERR_MAXITER && inf.attempts == 1 && inf.rejected == 1 && inf.fallback == 1, "cap, most violated");
  svi_propagative_set_info si;
  double V[4 * 3];
  /* both branches of the tree capped, then every sampled order too: an empty set, reported */
  st = svi_propagative_all(w, s, &c, V, NULL, 4, &si);
  CHECK(st == SVI_ERR_MAXITER && si.count == 0 && si.orders == 2 + c.samples && si.rejected == si.orders &&
        !si.exhaustive, "depth cap: st %d count %d orders %lld rejected %lld", st, si.count, si.orders, si.rejected);
  c.max_reflections = 1000;
  c.enum_budget = 3;        /* the tree has 6 reflections: the first branch ends, then sampling */
  st = svi_propagative_all(w, s, &c, V, NULL, 4, &si);
  CHECK(st == SVI_OK && !si.exhaustive && si.rejected == 0 && si.orders == 1 + c.samples && si.count == 1,
        "budget: exhaustive %d orders %lld count %d", si.exhaustive, si.orders, si.count);
  svi_propagative_destroy(w);
  svi_impact_destroy(s);

  /* an outcome that terminates but fails the check: a contact approaching at 0.3 s is below an
   * (absurd) approach threshold tol = 0.5, so it is not resolved and the result still penetrates */
  prob q;
  memset(&q, 0, sizeof(q));
  q.nv = 2; q.nc = 2; q.nt = 1;
  q.M[0] = q.M[3] = 1;
  q.Jn[0] = 1; q.Jn[3] = 1;
  q.v[0] = -1; q.v[1] = -0.3;
  s = setup(&q);
  w = svi_propagative_create(2, 2, 0);
  c = elastic();
  c.tol = 0.5;
  double u[2], l2[2];
  st = svi_propagative_outcome(w, s, &c, 0, u, l2, &inf);
  CHECK(st == SVI_ERR_RESIDUAL && inf.fallback == 1 && inf.rejected == 1 + c.max_retries && fabs(u[0]) < 1e-15 && fabs(u[1]) < 1e-15,
        "invalid: st %d fallback %d rejected %d u (%g,%g)", st, inf.fallback, inf.rejected, u[0], u[1]);
  st = svi_propagative_all(w, s, &c, u, l2, 1, &si);
  CHECK(st == SVI_ERR_MAXITER && si.count == 0 && si.rejected == si.orders && si.orders == 1, "invalid in the set");
  c.tol = 1e-9;
  st = svi_propagative_outcome(w, s, &c, 0, u, l2, &inf);
  CHECK(st == SVI_OK && u[0] == 1 && fabs(u[1] - 0.3) < 1e-15 && inf.reflections == 2, "two independent contacts");
  /* bad arguments */
  c.restitution = 1.5;
  CHECK(svi_propagative_outcome(w, s, &c, 0, u, l2, &inf) == SVI_ERR_ARG, "e > 1 refused");
  c.restitution = NAN;
  CHECK(svi_propagative_outcome(w, s, &c, 0, u, l2, &inf) == SVI_ERR_ARG, "e = NaN refused");
  c = elastic();
  svi_propagative* small = svi_propagative_create(2, 1, 0);
  CHECK(svi_propagative_outcome(small, s, &c, 0, u, l2, &inf) == SVI_ERR_CAPACITY, "capacity checked");
  svi_propagative_destroy(small);
  svi_propagative_destroy(w);
  svi_impact_destroy(s);
}

/* ---- locked contacts: no elastic outcome exists ---------------------------------------------- */
static void test_locked(void) {
  /* a point mass held by three walls whose normals positively span the plane: every nonzero
   * velocity approaches one of them, so no velocity of the same energy is feasible (reflections
   * never end); the law reports the cap and returns the plastic outcome, rest */
  prob p;
  memset(&p, 0, sizeof(p));
  p.nv = 2; p.nc = 3; p.nt = 1;
  p.M[0] = p.M[3] = 1;
  for (int i = 0; i < 3; i++) {
    p.Jn[2 * i] = cos(2 * PI * i / 3);
    p.Jn[2 * i + 1] = sin(2 * PI * i / 3);
  }
  p.v[0] = -1; p.v[1] = 0.2;
  svi_impact* s = setup(&p);
  svi_propagative* w = svi_propagative_create(2, 3, 0);
  svi_propagative_config c = svi_propagative_default_config();
  double es[2] = {1, 0.5};
  for (int q = 0; q < 2; q++) {
    c.restitution = es[q];
    double v1[2], lam[3];
    svi_propagative_info inf;
    int st = svi_propagative_outcome(w, s, &c, 0, v1, lam, &inf);
    CHECK(st == SVI_ERR_MAXITER && inf.fallback == 1 && inf.locked && inf.attempts == 1 && inf.rejected == 1 &&
          fabs(v1[0]) < 1e-12 && fabs(v1[1]) < 1e-12 && valid_outcome(&p, v1, lam, 1e-12),
          "locked e=%g: st %d fallback %d locked %d attempts %d v (%g,%g)", es[q], st, inf.fallback, inf.locked,
          inf.attempts, v1[0], v1[1]);
    svi_propagative_set_info si;
    st = svi_propagative_all(w, s, &c, v1, lam, 1, &si);
    CHECK(st == SVI_ERR_MAXITER && si.count == 0 && si.locked && !si.exhaustive && si.reflections == 0,
          "locked e=%g set: st %d count %d locked %d", es[q], st, si.count, si.locked);
  }
  c.restitution = 0;   /* the plastic member needs no propagation */
  double v1[2];
  CHECK(svi_propagative_outcome(w, s, &c, 0, v1, NULL, NULL) == SVI_OK, "locked e=0: plastic outcome");
  svi_propagative_destroy(w);
  svi_impact_destroy(s);

  /* the lock test against geometry: three random normals in the plane lock it iff they positively
   * span it (a null vector of the 2 x 3 matrix with one sign); unlocked ones reach an outcome */
  w = svi_propagative_create(2, 3, 0);
  int wrong = 0, n_locked = 0, n_free = 0, free_failed = 0;
  for (uint64_t t = 0; t < 400; t++) {
    memset(&p, 0, sizeof(p));
    p.nv = 2; p.nc = 3; p.nt = 1;
    spd(2, p.M, 7000 + t);
    for (int i = 0; i < 6; i++) p.Jn[i] = 2 * svi_rng_uniform(97, t, (uint64_t)i) - 1;
    p.v[0] = 2 * svi_rng_uniform(98, t, 0) - 1; p.v[1] = 2 * svi_rng_uniform(98, t, 1) - 1;
    const double* J = p.Jn;
    double n0 = J[2] * J[5] - J[3] * J[4], n1 = J[4] * J[1] - J[5] * J[0], n2 = J[0] * J[3] - J[1] * J[2];
    int geo = (n0 > 0 && n1 > 0 && n2 > 0) || (n0 < 0 && n1 < 0 && n2 < 0);
    s = setup(&p);
    double vn[3];
    svi_impact_normal_velocity(s, p.v, vn);
    if (vn[0] >= 0 && vn[1] >= 0 && vn[2] >= 0) { svi_impact_destroy(s); continue; }
    c = svi_propagative_default_config();
    svi_propagative_info inf;
    int st = svi_propagative_outcome(w, s, &c, t, v1, NULL, &inf);
    wrong += geo != inf.locked || (geo && st != SVI_ERR_MAXITER);
    n_locked += geo;
    n_free += !geo;
    free_failed += !geo && st != SVI_OK;
    svi_impact_destroy(s);
  }
  printf("locked: %d of %d random 3-normal planar problems locked, %d unlocked ones failed\n", n_locked,
         n_locked + n_free, free_failed);
  CHECK(wrong == 0 && n_locked > 20 && n_free > 20, "locked: %d disagree with geometry (%d locked, %d free)", wrong,
        n_locked, n_free);
  CHECK(free_failed == 0, "locked: %d unlocked problems without an outcome", free_failed);
  svi_propagative_destroy(w);
}

/* ---- friction: the law is frictionless, tangential velocities change only through coupling ---- */
static void test_friction(void) {
  svi_propagative* w = svi_propagative_create(RP_NV, RP_NC, 0);
  int differ = 0, bad_rows = 0, n = 0;
  for (uint64_t t = 0; t < 2000; t++) {
    rp_problem rp;
    random_impact(&rp, t, 0);
    prob p;
    memset(&p, 0, sizeof(p));
    p.nv = rp.nv; p.nc = rp.nc; p.nt = rp.nt;
    memcpy(p.M, rp.M, sizeof(rp.M)); memcpy(p.Jn, rp.Jn, sizeof(rp.Jn));
    memcpy(p.Jt, rp.Jt, sizeof(rp.Jt)); memcpy(p.v, rp.v, sizeof(rp.v));
    for (int i = 0; i < p.nc; i++) p.mu[i] = 0.5 + rp.mu[i];
    prob q = p;   /* frictionless twin, other tangent rows */
    memset(q.mu, 0, sizeof(q.mu));
    for (int i = 0; i < p.nc * p.nt * p.nv; i++) q.Jt[i] = -2 * p.Jt[i] + 0.25;
    svi_impact* s = setup(&p);
    svi_impact* s0 = setup(&q);
    svi_propagative_config c = svi_propagative_default_config();
    c.restitution = svi_rng_uniform(6, t, 0);
    double v1[RP_NV], v0[RP_NV], l1[RP_NC], l0[RP_NC];
    int a = svi_propagative_outcome(w, s, &c, t, v1, l1, NULL);
    int b = svi_propagative_outcome(w, s0, &c, t, v0, l0, NULL);
    n++;
    differ += a != b || memcmp(v1, v0, sizeof(double) * p.nv) || memcmp(l1, l0, sizeof(double) * p.nc);
    /* M (v+ - v-) = J_n^T lambda_n, so J_t v+ - J_t v- = J_t M^-1 J_n^T lambda_n: no friction impulse */
    bad_rows += a == SVI_OK && !valid_outcome(&p, v1, l1, 1e-9);
    svi_impact_destroy(s);
    svi_impact_destroy(s0);
  }
  CHECK(differ == 0, "friction: %d of %d outcomes depend on mu or J_t", differ, n);
  CHECK(bad_rows == 0, "friction: %d outcomes with an impulse outside J_n^T lambda_n", bad_rows);
  svi_propagative_destroy(w);

  /* a point mass landing on the floor while sliding: the tangential velocity is untouched */
  prob p;
  memset(&p, 0, sizeof(p));
  p.nv = 2; p.nc = 1; p.nt = 1;
  p.M[0] = p.M[3] = 2;
  p.Jn[1] = 1;
  p.Jt[0] = 1;
  p.mu[0] = 0.8;
  p.v[0] = 1.5; p.v[1] = -1;
  svi_impact* s = setup(&p);
  w = svi_propagative_create(2, 1, 0);
  svi_propagative_config c = svi_propagative_default_config();
  double v1[2];
  c.restitution = 0.5;
  svi_propagative_outcome(w, s, &c, 0, v1, NULL, NULL);
  CHECK(v1[0] == 1.5 && fabs(v1[1] - 0.5) < 1e-15, "sliding landing: v+ (%g, %g), want (1.5, 0.5)", v1[0], v1[1]);
  svi_propagative_destroy(w);
  svi_impact_destroy(s);
}

/* ---- resting contacts: coupled ones pass the impulse on, decoupled ones stay out -------------- */
static void test_resting_contacts(void) {
  /* cradle A-B-C plus ball D resting against a wall (contact 2: J = e_D, decoupled from the rest) */
  prob p;
  memset(&p, 0, sizeof(p));
  p.nv = 4; p.nc = 3; p.nt = 1;
  for (int i = 0; i < 4; i++) p.M[i * 4 + i] = 1;
  p.Jn[0] = -1; p.Jn[1] = 1;
  p.Jn[4 + 1] = -1; p.Jn[4 + 2] = 1;
  p.Jn[8 + 3] = 1;
  p.v[0] = 1;
  svi_impact* s = setup(&p);
  svi_propagative* w = svi_propagative_create(4, 3, 0);
  svi_propagative_config c = elastic();
  double V[4 * 4], L[4 * 3];
  svi_propagative_set_info si;
  svi_propagative_all(w, s, &c, V, L, 4, &si);
  CHECK(si.count == 1 && si.exhaustive && L[1] > 0.99 && L[2] == 0 && V[3] == 0 && fabs(V[2] - 1) < 1e-12,
        "resting: count %d lambda (%g, %g, %g) v_C %g v_D %g", si.count, L[0], L[1], L[2], V[2], V[3]);
  /* with the resting B-C contact left out, A and B exchange and C stays: the contact matters */
  prob q = p;
  q.nc = 1;
  svi_impact* s1 = setup(&q);
  svi_propagative_all(w, s1, &c, V, L, 4, &si);
  CHECK(si.count == 1 && fabs(V[1] - 1) < 1e-12 && V[2] == 0, "without the resting contact: v_B %g", V[1]);
  svi_impact_destroy(s1);
  svi_propagative_destroy(w);
  svi_impact_destroy(s);
}

/* ---- three or more contacts: the set, determinism, consistency of sampling and enumeration ---- */
static void test_three_contacts(void) {
  svi_propagative* w = svi_propagative_create(NVX, NCX, 1024);
  int capped = 0, missing = 0, bad_valid = 0, nondet = 0, systems = 0, maxcount = 0, maxlen = 0, truncated = 0;
  for (uint64_t t = 0; t < 268; t++) {
    prob p;
    memset(&p, 0, sizeof(p));
    p.nv = 4; p.nc = 3; p.nt = 1;
    spd(4, p.M, 5000 + t);
    for (int i = 0; i < 12; i++) p.Jn[i] = 2 * svi_rng_uniform(95, t, (uint64_t)i) - 1;
    for (int k = 0; k < 4; k++) p.v[k] = 2 * svi_rng_uniform(96, t, (uint64_t)k) - 1;
    svi_impact* s = setup(&p);
    double vn[3];
    svi_impact_normal_velocity(s, p.v, vn);
    if (vn[0] >= 0 && vn[1] >= 0 && vn[2] >= 0) { svi_impact_destroy(s); continue; }
    systems++;
    svi_propagative_config c = elastic();
    static double V[1024 * NVX], L[1024 * NCX];
    svi_propagative_set_info si;
    svi_propagative_all(w, s, &c, V, L, 1024, &si);
    capped += !si.exhaustive;
    truncated += si.truncated;
    if (si.count > maxcount) maxcount = si.count;
    if (si.max_length > maxlen) maxlen = si.max_length;
    for (int k = 0; k < si.count && k < 1024; k++) bad_valid += !valid_outcome(&p, V + k * 4, L + k * 3, 1e-12);
    /* every random-order outcome is a member of the exhaustive set; outcome k is reproducible */
    if (si.exhaustive && !si.truncated)
      for (uint64_t k = 0; k < 32; k++) {
        double v1[4], v2[4], best = INFINITY;
        svi_propagative_outcome(w, s, &c, k, v1, NULL, NULL);
        svi_propagative_outcome(w, s, &c, k + 1000, v2, NULL, NULL);   /* interleaved call */
        svi_propagative_outcome(w, s, &c, k, v2, NULL, NULL);
        nondet += memcmp(v1, v2, sizeof(v1)) != 0;
        for (int j = 0; j < si.count; j++) best = fmin(best, maxdiff(4, v1, V + j * 4));
        missing += best > 1e-9;
      }
    svi_impact_destroy(s);
  }
  printf("3 contacts: %d systems, %d not exhaustive, %d truncated, largest set %d, longest sequence %d\n", systems,
         capped, truncated, maxcount, maxlen);
  CHECK(systems > 200, "3 contacts: %d systems", systems);
  CHECK(bad_valid == 0, "3 contacts: %d invalid outcomes in sets", bad_valid);
  CHECK(missing == 0, "3 contacts: %d random-order outcomes missing from the exhaustive set", missing);
  CHECK(nondet == 0, "3 contacts: %d outcomes not reproducible", nondet);
  svi_propagative_destroy(w);
}

int main(void) {
  test_t1_cradle();
  test_cradle_restitution();
  test_t2_unequal();
  test_t4_orthogonal();
  test_t5_two_contacts();
  test_billiard();
  test_energy_random();
  test_rejection();
  test_locked();
  test_friction();
  test_resting_contacts();
  test_three_contacts();
  return svi_test_finish();
}
