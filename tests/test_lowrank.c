/* test_lowrank.c -- the low-rank Lemke (svi_lowrank.c) against the dense Lemke on the same LCPs.
 *
 * The dense reference is the explicit tableau (svi_lcp_lemke_perturbed, the oracle).
 * Random many-contact impact problems: a free box on N floor points (redundant: rank 3 normal
 * block), the box against a floor and a wall, two stacked boxes, a planar body, and general-
 * position rows with few velocities.  For each problem, Routh steps (75) with random budgets
 * (some zero, some huge) and the simultaneous LCP (31), under the Lemke rule and random
 * covering vectors with signed lexicographic perturbations.  Checked:
 *   - every low-rank solution that is returned as solved satisfies the LCP built densely
 *     (svi_lcp_residual_units on A_routh / A_ap, physical units): 1e-9, 1e-6 if regularised;
 *   - the low-rank solver solves whatever the dense one solves (and the reverse), all but a
 *     handful of times in every thousand;
 *   - the post-step velocity v + G lambda agrees with the dense solution's (impulses may differ on
 *     redundant contacts) in at least 95 % of the LCPs (measured: 98 %); where it differs, the
 *     two paths resolved a degenerate tie differently and reached two solutions of a step that
 *     has several: the dense one must then be valid too;
 *   - whole samples (svi_routh_sample) through the low-rank path keep the outcome invariants,
 *     computed here from the problem data: K(v+) <= K(v-)(1 + 1e-9), J_n v+ >= -1e-6 v_app.
 *
 *   test_lowrank [problems]     default 600; SVI_TEST_SCALE scales it
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "svi_internal.h"
#include "svi_test.h"

#define T_NV 12
#define T_NC 48

typedef struct {
  int nv, nc, nt;
  double M[T_NV * T_NV], Jn[T_NC * T_NV], Jt[2 * T_NC * T_NV], mu[T_NC], v[T_NV];
} tprob;

static double U(uint64_t t, uint64_t i) { return svi_rng_uniform(777, t, i); }

/* rows of a point p (relative to body b's centre) for direction dir: [dir, r x dir] */
static void point_row(double* row, int nv, int b, const double* r, const double* dir, double sg) {
  int o = 6 * b;
  row[o] += sg * dir[0];
  row[o + 1] += sg * dir[1];
  row[o + 2] += sg * dir[2];
  row[o + 3] += sg * (r[1] * dir[2] - r[2] * dir[1]);
  row[o + 4] += sg * (r[2] * dir[0] - r[0] * dir[2]);
  row[o + 5] += sg * (r[0] * dir[1] - r[1] * dir[0]);
  (void)nv;
}

static void body_mass(tprob* p, int b, uint64_t t) {
  double m = pow(10, 4 * U(t, 50 + b) - 2), h[3];
  for (int i = 0; i < 3; i++) h[i] = 0.05 + U(t, 60 + 3 * b + i);
  double I[3] = {m * (h[1] * h[1] + h[2] * h[2]) / 3, m * (h[0] * h[0] + h[2] * h[2]) / 3,
                 m * (h[0] * h[0] + h[1] * h[1]) / 3};
  for (int i = 0; i < 3; i++) {
    p->M[(6 * b + i) * p->nv + 6 * b + i] = m;
    p->M[(6 * b + 3 + i) * p->nv + 6 * b + 3 + i] = I[i];
  }
}

/* kind 0: box on N floor points; 1: floor and +x wall; 2: two stacked boxes; 3: planar body on a
 * floor and a wall; 4: general-position rows, nv 3..6; 5: two legs (check_runs): a base of 6
 * velocities and two legs of 3 joints each, 8-23 contacts a foot, leg 0's first; in half of them
 * leg 0's contacts 3-5 are leg 1's (a short run among leg 0's) */
static void make_problem(tprob* p, uint64_t t, int kind) {
  memset(p, 0, sizeof(*p));
  if (kind == 5) {
    p->nv = 12;
    p->nt = 2;
    int n0 = 8 + (int)(U(t, 2) * 16), mix = U(t, 4) < 0.5;
    p->nc = n0 + 8 + (int)(U(t, 3) * 16);
    double A[T_NV * T_NV];   /* a dense mass matrix: the base and the joints coupled */
    for (int i = 0; i < 144; i++) A[i] = 2 * U(t, 100 + i) - 1;
    for (int i = 0; i < 12; i++)
      for (int j = 0; j < 12; j++) {
        double m = i == j ? 0.1 : 0;
        for (int k = 0; k < 12; k++) m += A[k * 12 + i] * A[k * 12 + j];
        p->M[i * 12 + j] = m;
      }
    double ez[3] = {0, 0, 1}, ex[3] = {1, 0, 0}, ey[3] = {0, 1, 0};
    for (int c = 0; c < p->nc; c++) {
      int leg = c < n0 ? 0 : 1;
      if (mix && c >= 3 && c < 6) leg = 1;
      double* rows[3] = {p->Jn + c * 12, p->Jt + (2 * c) * 12, p->Jt + (2 * c + 1) * 12};
      double* dirs[3] = {ez, ex, ey};
      double r[3] = {0.3 * (2 * U(t, 400 + c) - 1) + (leg ? 0.4 : -0.4), 0.2 * (2 * U(t, 500 + c) - 1), -0.8};
      for (int a = 0; a < 3; a++) {
        point_row(rows[a], 12, 0, r, dirs[a], 1);
        for (int j = 0; j < 3; j++) rows[a][6 + 3 * leg + j] = 2 * U(t, 600 + 9 * c + 3 * a + j) - 1;
      }
    }
  } else if (kind == 4) {
    p->nv = 3 + (int)(U(t, 1) * 4);
    p->nc = 10 + (int)(U(t, 2) * 30);
    p->nt = U(t, 3) < 0.5 ? 1 : 2;
    double A[T_NV * T_NV];
    for (int i = 0; i < p->nv * p->nv; i++) A[i] = 2 * U(t, 100 + i) - 1;
    for (int i = 0; i < p->nv; i++)
      for (int j = 0; j < p->nv; j++) {
        double s = i == j ? 0.1 : 0;
        for (int k = 0; k < p->nv; k++) s += A[k * p->nv + i] * A[k * p->nv + j];
        p->M[i * p->nv + j] = s;
      }
    for (int i = 0; i < p->nc * p->nv; i++) p->Jn[i] = 2 * U(t, 1000 + i) - 1;
    for (int i = 0; i < p->nc * p->nt * p->nv; i++) p->Jt[i] = 2 * U(t, 5000 + i) - 1;
  } else if (kind == 3) {
    p->nv = 3;
    p->nt = 1;
    p->nc = 12 + (int)(U(t, 2) * 32);
    double m = pow(10, 4 * U(t, 4) - 2), a = 0.1 + U(t, 5), b = 0.1 + U(t, 6);
    p->M[0] = p->M[4] = m;
    p->M[8] = m * (a * a + b * b) / 3;
    for (int c = 0; c < p->nc; c++) {   /* (x, z, theta): floor points, then wall points */
      double* jn = p->Jn + c * 3;
      double* jt = p->Jt + c * 3;
      if (c % 3 != 2) {
        double x = a * (2 * U(t, 200 + c) - 1);
        jn[0] = 0; jn[1] = 1; jn[2] = x;     /* n = +z, r = (x, -b) */
        jt[0] = 1; jt[1] = 0; jt[2] = b;
      } else {
        double z = b * (2 * U(t, 300 + c) - 1);
        jn[0] = -1; jn[1] = 0; jn[2] = z;    /* n = -x at the +x wall, r = (a, z) */
        jt[0] = 0; jt[1] = 1; jt[2] = a;
      }
    }
  } else {
    int nb = kind == 2 ? 2 : 1;
    p->nv = 6 * nb;
    p->nt = 2;
    p->nc = kind == 2 ? 8 + (int)(U(t, 2) * 24) : 9 + (int)(U(t, 2) * 32);
    for (int b = 0; b < nb; b++) body_mass(p, b, t);
    double hx = 0.2 + U(t, 7), hy = 0.2 + U(t, 8), hz = 0.1 + U(t, 9);
    double ez[3] = {0, 0, 1}, ex[3] = {1, 0, 0}, ey[3] = {0, 1, 0}, mx[3] = {-1, 0, 0};
    for (int c = 0; c < p->nc; c++) {
      double* jn = p->Jn + c * p->nv;
      double* t1 = p->Jt + (2 * c) * p->nv;
      double* t2 = t1 + p->nv;
      double r[3] = {hx * (2 * U(t, 400 + c) - 1), hy * (2 * U(t, 500 + c) - 1), -hz};
      if (kind == 1 && c % 4 == 3) {   /* wall at +x: n = -x on the box */
        r[0] = hx;
        r[2] = hz * (2 * U(t, 600 + c) - 1);
        point_row(jn, p->nv, 0, r, mx, 1);
        point_row(t1, p->nv, 0, r, ey, 1);
        point_row(t2, p->nv, 0, r, ez, 1);
      } else if (kind == 2 && c % 2 == 1) {   /* box 1 on box 0: relative velocity 1 - 0 */
        double r1[3] = {r[0] * 0.5, r[1] * 0.5, -hz}, r0[3] = {r[0] * 0.5, r[1] * 0.5, hz};
        point_row(jn, p->nv, 1, r1, ez, 1);
        point_row(jn, p->nv, 0, r0, ez, -1);
        point_row(t1, p->nv, 1, r1, ex, 1);
        point_row(t1, p->nv, 0, r0, ex, -1);
        point_row(t2, p->nv, 1, r1, ey, 1);
        point_row(t2, p->nv, 0, r0, ey, -1);
      } else {
        point_row(jn, p->nv, 0, r, ez, 1);
        point_row(t1, p->nv, 0, r, ex, 1);
        point_row(t2, p->nv, 0, r, ey, 1);
      }
    }
  }
  for (int i = 0; i < p->nc; i++) p->mu[i] = U(t, 7000 + i) < 0.1 ? 0 : 2 * U(t, 7100 + i);
  for (int i = 0; i < p->nv; i++) p->v[i] = 2 * U(t, 8000 + i) - 1;
  /* at least contact 0 approaches at 0.1 .. 1.1 (and often every contact: v straight down) */
  if (kind <= 2 && U(t, 8100) < 0.5)
    for (int i = 0; i < p->nv; i++) p->v[i] = (i == 2 ? -1.0 : 0.05 * (2 * U(t, 8200 + i) - 1));
  double vn = 0, jj = 0;
  for (int k = 0; k < p->nv; k++) { vn += p->Jn[k] * p->v[k]; jj += p->Jn[k] * p->Jn[k]; }
  if (vn > -0.1) for (int k = 0; k < p->nv; k++) p->v[k] -= (vn + 0.1 + U(t, 8300)) * p->Jn[k] / jj;
}

/* A workspace for the test problems with the solver asked for (SVI_SOLVER_AUTO: the plugin's
 * pick), solving at each step (svi_impact_set_step_solve) where step_solve; NULL without memory */
static svi_impact* workspace(svi_solver solver, int step_solve) {
  svi_impact* s = svi_impact_create(T_NV, T_NC, 2);
  svi_impact_set_solver(s, solver);
  if (step_solve) svi_impact_set_step_solve(s, 1);
  return s;
}

static svi_problem_def def_of(const tprob* p) {
  svi_problem_def d = {p->nv, p->nc, p->nt, p->M, p->Jn, p->Jt, p->mu, p->v};
  return d;
}

static double ke(const tprob* p, const double* v) {
  double k = 0;
  for (int i = 0; i < p->nv; i++)
    for (int j = 0; j < p->nv; j++) k += v[i] * p->M[i * p->nv + j] * v[j];
  return 0.5 * k;
}

/* the outcome invariants from the problem data: v finite, K(v) <= K(v-)(1 + 1e-9), and (for an
 * accepted outcome) J_n v >= -1e-6 v_app */
static int invariants_hold(const tprob* p, const double* v, double ke0, double vapp, int accepted) {
  int ok = 1;
  for (int i = 0; i < p->nv; i++) ok &= isfinite(v[i]);
  ok &= ke(p, v) <= ke0 * (1 + 1e-9);
  if (accepted)
    for (int i = 0; i < p->nc; i++) {
      double vn = 0;
      for (int j = 0; j < p->nv; j++) vn += p->Jn[i * p->nv + j] * v[j];
      ok &= vn >= -1e-6 * vapp;
    }
  return ok;
}

/* ||v' - v''||_M of two impulses: the M-norm of G (l1 - l2) */
/* v within tol of ref, relative to ref's largest entry (1e-12 at least): two samples' outcomes */
static int same_velocity(int nv, const double* v, const double* ref, double tol) {
  double gap = 0, sc = 0;
  for (int i = 0; i < nv; i++) {
    gap = fmax(gap, fabs(v[i] - ref[i]));
    sc = fmax(sc, fabs(ref[i]));
  }
  return gap <= tol * fmax(sc, 1e-12);
}

static double dv_gap(const svi_impact* s, const double* l1, const double* l2, double* scale) {
  int nv = s->nv, nb = s->nb;
  double d[T_NV] = {0}, a[T_NV] = {0};
  for (int c = 0; c < nb; c++)
    for (int k = 0; k < nv; k++) {
      d[k] += s->G[k * nb + c] * (l1[c] - l2[c]);
      a[k] += s->G[k * nb + c] * l2[c];
    }
  double g = 0, sc = 0;
  for (int i = 0; i < nv; i++)
    for (int j = 0; j < nv; j++) {
      g += d[i] * s->M[i * nv + j] * d[j];
      sc += a[i] * s->M[i * nv + j] * a[j];
    }
  *scale = sqrt(sc);
  return sqrt(fmax(g, 0));
}

typedef struct {
  long long solves, both_ok, lr_only, dense_only, neither, same_v, diff_v_valid, diff_v_bad, bad_res;
  long long same_pivots;
  double worst_res;
} tally;

/* The LCP of compare_lcps' repetition rep (0-3: (75) with random budgets, 3 huge; 4-5: (31)) of
 * problem t on s's event: q, and for odd rep a random covering vector d with a signed
 * lexicographic order; returns whether it is perturbed */
static int step_lcp(const svi_impact* s, uint64_t t, int rep, double* q, double* d, double* sg, int* ord) {
  int nc = s->nc, nb = s->nb, routh = rep < 4, n = routh ? s->n_routh : s->n_ap, off = routh ? nc : 0;
  if (routh) {
    double h = s->ref_impulse * (rep == 3 ? 50 : 2 * U(t, 9000 + rep));
    for (int i = 0; i < nc; i++) q[i] = U(t, 9100 + 100 * rep + i) < 0.1 ? 0 : h * U(t, 9200 + 100 * rep + i);
  }
  memcpy(q + off, s->u0, sizeof(double) * nb);
  memset(q + off + nb, 0, sizeof(double) * nc);
  int pert = rep % 2;
  if (pert) {
    for (int i = 0; i < n; i++) {
      ord[i] = i;
      sg[i] = U(t, 20000 + 1000 * rep + i) < 0.5 ? -1.0 : 1.0;
      d[i] = 0.05 + 0.95 * U(t, 30000 + 1000 * rep + i);
    }
    for (int i = n - 1; i > 0; i--) {
      int j = (int)(U(t, 40000 + 1000 * rep + i) * (i + 1));
      int tmp = ord[i]; ord[i] = ord[j]; ord[j] = tmp;
    }
  }
  return pert;
}

/* One LCP solved two ways on s's event, (75) if routh else (31): the first solution (status s1)
 * checked on the densely built matrix (1e-9, 1e-6 if regularised), and the two compared by the
 * velocity change they give (the same, different with the second valid too, or different with it
 * invalid), or counted by which of them solved it */
static void tally_pair(tally* ty, const svi_impact* s, int routh, const double* q, const svi_lcp_options* o,
                       int s1, const double* z1, int s2, const double* z2) {
  int n = routh ? s->n_routh : s->n_ap, off = routh ? s->nc : 0;
  const double* A = routh ? s->A_routh : s->A_ap;
  ty->solves++;
  if (s1 >= 0) {   /* independent check on the dense matrix */
    double r = svi_lcp_residual_units(n, A, q, z1, o->zunit, o->wunit);
    ty->worst_res = fmax(ty->worst_res, r);
    if (r > (s1 == SVI_OK ? 1e-9 : 1e-6)) ty->bad_res++;
  }
  if (s1 >= 0 && s2 >= 0) {
    ty->both_ok++;
    double scale, g = dv_gap(s, z1 + off, z2 + off, &scale);
    int same = g <= 1e-7 * fmax(scale, 1e-300) + 1e-12 * s->vscale;
    if (same) ty->same_v++;
    else if (svi_lcp_residual_units(n, A, q, z2, o->zunit, o->wunit) <= 1e-6) ty->diff_v_valid++;
    else ty->diff_v_bad++;
  } else if (s1 >= 0) ty->lr_only++;
  else if (s2 >= 0) ty->dense_only++;
  else ty->neither++;
}

/* What every tally of the first way (what) against the dense Lemke must hold: each first solution
 * within the densely built LCP's residual; failures where the dense path solves no more than the
 * reverse plus one in 200 (Lemke stalls on friction loops between floor and wall, mu up to 2:
 * both fail on a few LCPs in a thousand, not always the same ones); where both solve, a different
 * v' only with the dense solution valid too (a degenerate tie resolved the other way reaches
 * another solution of a step that has several) and the same v' in at least 95 % */
static void check_tally(const tally* ty, const char* what) {
  CHECK(ty->bad_res == 0, "%lld %s solutions fail the dense residual", ty->bad_res, what);
  CHECK(ty->dense_only <= ty->lr_only + ty->solves / 200, "%s fails where the dense path solves: %lld (the "
        "reverse %lld) of %lld", what, ty->dense_only, ty->lr_only, ty->solves);
  CHECK(ty->diff_v_bad == 0, "%lld different velocities where the dense solution is invalid (%s)", ty->diff_v_bad,
        what);
  CHECK(ty->same_v * 100 >= ty->both_ok * 95, "same velocity in only %lld of %lld (%s)", ty->same_v, ty->both_ok,
        what);
}

/* One LCP's data and two solutions (7 T_NC rows each); pert: step_lcp's, for q's LCP */
typedef struct {
  double *q, *z1, *z2, *d, *sg;
  int* ord;
  int pert;
} lcp_bufs;

static int lcp_bufs_make(lcp_bufs* b) {
  size_t m = 7 * T_NC;
  b->q = malloc(sizeof(double) * m);
  b->z1 = malloc(sizeof(double) * m);
  b->z2 = malloc(sizeof(double) * m);
  b->d = malloc(sizeof(double) * m);
  b->sg = malloc(sizeof(double) * m);
  b->ord = malloc(sizeof(int) * m);
  return b->q && b->z1 && b->z2 && b->d && b->sg && b->ord;
}

static void lcp_bufs_free(lcp_bufs* b) {
  free(b->q); free(b->z1); free(b->z2); free(b->d); free(b->sg); free(b->ord);
}

/* the low-rank Lemke on the LCP b holds (step_lcp's q, and its perturbation where it drew one) */
static int lr_solve_bufs(svi_impact* s, int routh, const lcp_bufs* b, double* z, svi_lcp_info* info) {
  svi_lcp_options o = svi_impact_lcp_options(s, NULL, routh);
  return svi_lr_lemke(s->lr, s, routh, b->q, b->pert ? b->d : NULL, b->pert ? b->ord : NULL,
                      b->pert ? b->sg : NULL, &o, z, info);
}

/* compare_lcps' repetition rep of problem t: the low-rank Lemke's solution in b->z1 (its info in
 * *i1, its status returned) against the dense Lemke's in b->z2, tallied */
static int compare_one(svi_impact* s, uint64_t t, int rep, lcp_bufs* b, tally* ty, svi_lcp_info* i1) {
  int routh = rep < 4, n = routh ? s->n_routh : s->n_ap;
  const double* A = routh ? s->A_routh : s->A_ap;
  int pert = b->pert = step_lcp(s, t, rep, b->q, b->d, b->sg, b->ord);
  const double* d = pert ? b->d : NULL;
  const int* ord = pert ? b->ord : NULL;
  const double* sg = pert ? b->sg : NULL;
  svi_lcp_options o = svi_impact_lcp_options(s, NULL, routh);
  svi_lcp_info i2;
  int s1 = lr_solve_bufs(s, routh, b, b->z1, i1);
  int s2 = svi_lcp_lemke_perturbed(s->lcp, n, A, b->q, d, ord, sg, &o, b->z2, &i2);
  tally_pair(ty, s, routh, b->q, &o, s1, b->z1, s2, b->z2);
  ty->same_pivots += s1 >= 0 && s2 >= 0 && i1->pivots == i2.pivots;
  if (s1 < 0 && s2 >= 0 && getenv("TLR_VERBOSE"))
    fprintf(stderr, "dense-only: problem %llu nc %d nv %d nt %d rep %d st %d pivots %d/%d res %g\n",
            (unsigned long long)t, s->nc, s->nv, s->nt, rep, s1, i1->pivots, i2.pivots, i1->residual);
  return s1;
}

/* problem t of make_problem's kind set up on s (a failed set-up is a failed check, problem k) */
static int set_up(svi_impact* s, tprob* p, uint64_t t, int kind, long long k) {
  make_problem(p, t, kind);
  svi_problem_def def = def_of(p);
  if (svi_impact_setup(s, &def, NULL, 0) == SVI_OK) return 1;
  CHECK(0, "setup of problem %lld", k);
  return 0;
}

static void compare_lcps(svi_impact* s, uint64_t t, tally* ty) {
  lcp_bufs b;
  CHECK(lcp_bufs_make(&b), "buffers");
  for (int rep = 0; rep < 6 && b.ord; rep++) {
    svi_lcp_info i1;
    compare_one(s, t, rep, &b, ty, &i1);
  }
  lcp_bufs_free(&b);
}

/* The simultaneous law (31) on the dense solver where (75) is too large for the transposed
 * matrices (n_routh > SVI_AT_NMAX) but (31) is not: spatial boxes of 17 .. 22 floor points
 * (n_ap = 102 .. 132 rows, n_routh = 119 .. 154) on one workspace, after a small event filled its
 * matrices.  (31)'s transposed matrix must be this event's: before, it was built only together
 * with (75)'s, so these events ran Lemke on the previous event's matrix (and read past the end
 * of its sparsity table at 20 and 21 contacts).  Every solve must succeed on the first path and
 * satisfy the dense LCP built from this event. */
static void check_ap_sizes(void) {
  svi_impact* sd = workspace(SVI_SOLVER_DENSE, 0);
  CHECK(sd != NULL, "workspace");
  if (!sd) return;
  int checked = 0;
  for (int nc = 17; nc <= 22; nc++) {
    tprob small, p;
    for (uint64_t t = 0; t < 40; t++) {   /* a small event, then one of nc contacts */
      make_problem(&small, 9000 + t, 0);
      small.nc = 4;
      svi_problem_def d0 = def_of(&small);
      double v[T_NV];
      svi_lcp_info info;
      if (svi_impact_setup(sd, &d0, NULL, 0) != SVI_OK) { CHECK(0, "small setup"); continue; }
      svi_law_simultaneous(sd, NULL, v, &info);
      make_problem(&p, 9100 + t, 0);
      p.nc = nc;
      svi_problem_def def = def_of(&p);
      if (svi_impact_setup(sd, &def, NULL, 0) != SVI_OK) { CHECK(0, "setup nc %d", nc); continue; }
      CHECK(!sd->lowrank && sd->n_ap == 6 * nc, "dense solver, n_ap %d", sd->n_ap);
      int st = svi_law_simultaneous(sd, NULL, v, &info);
      svi_lcp_options o = svi_impact_lcp_options(sd, NULL, 0);
      double res = st >= 0 ? svi_lcp_residual_units(sd->n_ap, sd->A_ap, sd->q, sd->z, o.zunit, o.wunit) : INFINITY;
      CHECK(st >= 0 && res <= 1e-9, "(31) at nc %d (n_ap %d, n_routh %d), problem %llu: status %d, "
            "residual on this event's matrix %.3g", nc, sd->n_ap, sd->n_routh, (unsigned long long)t, st, res);
      checked++;
    }
  }
  printf("(31) on the dense solver at 17 .. 22 spatial contacts, after a small event: %d solves checked\n", checked);
  svi_impact_destroy(sd);
}

/* The factor of M of svi_impact_setup (M = U U^T, eliminated from the last dof: theory 5.3, "The
 * factor of M"): G = M^-1 Jbar^T against the dense Cholesky solve (svi_cholesky), on the mass
 * matrix of a random kinematic tree numbered as MuJoCo numbers it (a dof before its descendants,
 * each subtree contiguous; there U must have exactly M's nonzeros), of the same tree numbered at
 * random (the factor fills inside the envelopes; the same G), and of a dense SPD matrix. */
#define F_NV 40
static void check_mass_factor(void) {
  svi_impact* s = svi_impact_create(F_NV, 2, 2);
  CHECK(s != NULL, "workspace");
  if (!s) return;
  static double M[F_NV * F_NV], Mp[F_NV * F_NV], L[F_NV * F_NV], Jn[2 * F_NV], Jt[4 * F_NV];
  double mu[2] = {0.5, 0.8}, v[F_NV], x[F_NV], worst = 0;
  int checked = 0, fill_checked = 0;
  for (uint64_t t = 0; t < 300; t++) {
    int nv = 1 + (int)(U(t, 1) * F_NV), kind = (int)(t % 3);
    if (nv > F_NV) nv = F_NV;
    int parent[F_NV], perm[F_NV];
    /* DFS numbering: dof i hangs from i - 1 or one of its ancestors, or starts a new tree */
    for (int i = 0; i < nv; i++) {
      int chain[F_NV], nch = 0;
      for (int a = i - 1; a >= 0; a = parent[a]) chain[nch++] = a;
      int pick = (int)(U(t, 100 + i) * (nch + 1));
      parent[i] = pick < nch ? chain[pick] : -1;
    }
    memset(M, 0, sizeof(M));
    for (int k = 0; k < nv; k++) {   /* a body's contribution over its chain to the root */
      double a[F_NV] = {0};
      for (int j = k; j >= 0; j = parent[j]) a[j] = 2 * U(t, 1000 + k * F_NV + j) - 1;
      for (int i = 0; i < nv; i++)
        for (int j = 0; j < nv; j++) M[i * nv + j] += a[i] * a[j];
      M[k * nv + k] += 0.1;
    }
    if (kind == 2)
      for (int i = 0; i < nv; i++)
        for (int j = 0; j <= i; j++) {
          double e = i == j ? nv : 2 * U(t, 5000 + i * F_NV + j) - 1;
          M[i * nv + j] += e;
          if (i != j) M[j * nv + i] += e;
        }
    for (int i = 0; i < nv; i++) perm[i] = i;
    if (kind == 1)
      for (int i = nv - 1; i > 0; i--) {
        int j = (int)(U(t, 3000 + i) * (i + 1)), tmp = perm[i];
        perm[i] = perm[j];
        perm[j] = tmp;
      }
    for (int i = 0; i < nv; i++)
      for (int j = 0; j < nv; j++) Mp[i * nv + j] = M[perm[i] * nv + perm[j]];
    for (int r = 0; r < 2; r++)
      for (int i = 0; i < nv; i++) Jn[r * nv + i] = 2 * U(t, 7000 + r * F_NV + i) - 1;
    for (int r = 0; r < 4; r++)
      for (int i = 0; i < nv; i++) Jt[r * nv + i] = 2 * U(t, 8000 + r * F_NV + i) - 1;
    for (int i = 0; i < nv; i++) v[i] = 2 * U(t, 9000 + i) - 1;
    svi_problem_def def = {nv, 2, 2, Mp, Jn, Jt, mu, v};
    char err[200];
    if (svi_impact_setup(s, &def, err, sizeof(err)) != SVI_OK) { CHECK(0, "setup %llu: %s", (unsigned long long)t, err); continue; }
    memcpy(L, Mp, sizeof(double) * nv * nv);
    CHECK(svi_cholesky(nv, L), "reference factor %llu", (unsigned long long)t);
    int nb = s->nb;
    for (int c = 0; c < nb; c++) {
      memcpy(x, s->Jbar + (size_t)c * nv, sizeof(double) * nv);
      svi_cholesky_solve(nv, L, x);
      double e = 0, m = 0;
      for (int k = 0; k < nv; k++) {
        e = fmax(e, fabs(s->G[k * nb + c] - x[k]));
        m = fmax(m, fabs(x[k]));
      }
      worst = fmax(worst, e / fmax(m, 1e-300));
    }
    checked++;
    int lower = 0, nzu = 0, nzm = 0;
    for (int i = 0; i < nv; i++)
      for (int j = 0; j < nv; j++) {
        lower += j < i && s->U[i * nv + j] != 0;
        nzu += j >= i && s->U[i * nv + j] != 0;
        nzm += j >= i && Mp[i * nv + j] != 0;
      }
    CHECK(lower == 0, "U upper triangular (%d lower entries), problem %llu", lower, (unsigned long long)t);
    if (kind == 0) {
      CHECK(nzu == nzm, "tree numbered depth first: U has M's %d nonzeros, not %d (problem %llu)", nzm, nzu,
            (unsigned long long)t);
      fill_checked++;
    }
  }
  CHECK(worst <= 1e-10, "G against the dense solve: worst %.3g relative", worst);
  printf("factor of M on %d trees and dense matrices (1 .. %d dofs): G within %.2g of the dense solve; "
         "no fill on %d depth-first trees\n", checked, F_NV, worst, fill_checked);
  svi_impact_destroy(s);
}

/* W's rows on use (svi_impact.c, wrows: the dense Lemke's per-step solve on many contacts forms
 * a row of W when its column first enters) against W formed whole at set-up (no_wrows), on the
 * same problems and samples: every row formed on use must hold the whole W's values (Wp's row,
 * the -t columns left out), fewer rows than nb must be formed on the many-contact problems, and
 * the samples must keep the invariants.  Their outcomes agree in most samples, not all: the two
 * differ in the rounding of the step's velocity update (u + Jbar (G lambda) instead of u + W
 * lambda), of the residual (in O(n nv) instead of O(nb^2)) and in the pivot tolerance (from a
 * bound of |A|_inf instead of its value), and these problems (a box on up to 40 floor points)
 * have steps with several solutions, where a last-bit change can move the path to another one:
 * measured, 94 % agree within 1e-9 (with those three made the same, 99.5 %). */
static void check_wrows(long long P) {
  svi_impact* a = workspace(SVI_SOLVER_DENSE, 1);
  svi_impact* b = workspace(SVI_SOLVER_DENSE, 1);
  CHECK(a && b, "workspaces");
  if (!a || !b) return;
  b->no_wrows = 1;
  long long events = 0, samples = 0, same = 0, invalid = 0, rows_on = 0, rows_all = 0, bad_rows = 0;
  long long events_maps = 0;
  tprob p;
  for (long long k = 0; k < P; k++) {
    make_problem(&p, (uint64_t)(100000 + k), (int)(k % 5));
    svi_problem_def def = def_of(&p);
    /* every fourth problem sampled as Algorithm 2 samples (the per-event maps): rows on use only
     * where (75)'s transpose is not kept (n_routh > SVI_AT_NMAX) */
    svi_impact_set_step_solve(a, k % 4 != 3);
    svi_impact_set_step_solve(b, k % 4 != 3);
    if (svi_impact_setup(a, &def, NULL, 0) != SVI_OK || svi_impact_setup(b, &def, NULL, 0) != SVI_OK) {
      CHECK(0, "setup of problem %lld", k);
      continue;
    }
    CHECK(!b->wrows, "no_wrows");
    if (!a->wrows) continue;
    events++;
    events_maps += k % 4 == 3;
    svi_routh_config c = svi_routh_default_config();
    c.branch = k % 3 == 0 ? SVI_BRANCH_LEMKE : SVI_BRANCH_RANDOM;
    double ke0 = ke(&p, p.v), vapp = svi_impact_approach_speed(a);
    for (int m = 0; m < 3; m++) {
      double va[T_NV], vb[T_NV];
      svi_sample_info ia, ib;
      int st = svi_routh_sample(a, &c, NULL, (uint64_t)m, va, &ia, NULL, 0, NULL);
      svi_routh_sample(b, &c, NULL, (uint64_t)m, vb, &ib, NULL, 0, NULL);
      samples++;
      invalid += !invariants_hold(&p, va, ke0, vapp, ia.accepted || st == SVI_OK);
      same += ia.accepted == ib.accepted && same_velocity(p.nv, va, vb, 1e-9);
    }
    /* the rows formed on use against the whole W (b's, formed at set-up), unless a sample formed
     * a's whole W (w_full: its rows then hold the whole W's layout) */
    if (!a->w_full) {
      int nb = a->nb, nc = a->nc, np = (nb - nc) / 2;
      for (int r = 0; r < nb; r++) {
        if (!a->w_row_ok[r]) continue;
        rows_on++;
        const double *x = a->W + (size_t)r * nb, *y = b->W + (size_t)r * nb;
        int eq = 1;
        for (int j = 0; j < nc; j++) eq &= x[j] == y[j];
        for (int m = 0; m < np; m++) eq &= x[nc + m] == y[nc + 2 * m] && -x[nc + m] == y[nc + 2 * m + 1];
        bad_rows += !eq;
      }
      rows_all += nb - np;
    }
  }
  printf("W's rows on use: %lld events (%lld with the per-event maps) of %lld problems, %lld samples, same outcome as the whole W %lld, "
         "invariant violations %lld; rows formed %lld of %lld, not the whole W's %lld\n",
         events, events_maps, P, samples, same, invalid, rows_on, rows_all, bad_rows);
  CHECK(events * 4 >= P && events_maps * 40 >= P, "W's rows on use in only %lld of %lld problems (%lld "
        "with the maps)", events, P, events_maps);
  CHECK(bad_rows == 0, "%lld rows formed on use differ from the whole W's", bad_rows);
  CHECK(rows_on * 10 <= rows_all * 9, "rows formed on use: %lld of %lld", rows_on, rows_all);
  CHECK(invalid == 0, "%lld samples violate the invariants", invalid);
  CHECK(same * 100 >= samples * 85, "same outcome in only %lld of %lld samples", same, samples);
  svi_impact_destroy(a);
  svi_impact_destroy(b);
}

/* The dense Lemke handing a long path over to the low-rank one (svi_impact_lemke, svi_impact.c's
 * handover_neta; svi_lcp_handover, svi_lr_lemke_from) at K = 1 .. 19 etas, forced, on the step
 * LCPs (75) and (31) of compare_lcps against the dense Lemke's whole path (solver DENSE, the same
 * step solve).  The low-rank one goes on from the dense basis, so it is the same path: every
 * handed-over solution must satisfy the LCP built densely (1e-9, 1e-6 if regularised), the two
 * must be solved alike and reach the same v' in at least 95 % of the LCPs (where not, the dense
 * one valid too: a degenerate tie resolved the other way by rounding), and whole samples with the
 * handover keep the invariants.  A wrong basis carried over fails the comparison (tried: the
 * entering variable's kind flipped, the basic values off by 1 %: the same v' in 84 % and 91 %). */
static void check_handover(long long P) {
  svi_impact* h = workspace(SVI_SOLVER_AUTO, 1);
  svi_impact* sd = workspace(SVI_SOLVER_DENSE, 1);
  CHECK(h && sd, "workspaces");
  lcp_bufs bf;
  if (!h || !sd || !lcp_bufs_make(&bf)) return;
  double *q = bf.q, *z1 = bf.z1, *z2 = bf.z2, *d = bf.d, *sg = bf.sg;
  int* ord = bf.ord;
  long long events = 0, handed = 0, samples = 0, invalid = 0;
  tally ty;   /* lr_only: solved only with the handover, dense_only: only by the dense path */
  memset(&ty, 0, sizeof(ty));
  tprob p;
  for (long long k = 0; k < P; k++) {
    make_problem(&p, (uint64_t)(200000 + k), (int)(k % 5));
    svi_problem_def def = def_of(&p);
    svi_impact_set_handover(h, 1 + 3 * (int)(k % 7));
    if (svi_impact_setup(h, &def, NULL, 0) != SVI_OK || svi_impact_setup(sd, &def, NULL, 0) != SVI_OK) {
      CHECK(0, "setup of problem %lld", k);
      continue;
    }
    if (!h->handover) continue;   /* too few impulse rows for the low-rank Lemke */
    CHECK(!sd->handover, "a handover under SVI_SOLVER_DENSE");
    events++;
    svi_impact_dense(h);
    svi_impact_dense(sd);
    for (int rep = 0; rep < 6; rep++) {
      int routh = rep < 4;
      int pert = step_lcp(h, (uint64_t)k, rep, q, d, sg, ord);
      if (!routh) svi_impact_ap(h), svi_impact_ap(sd);
      svi_lcp_options o = svi_impact_lcp_options(h, NULL, routh);
      svi_lcp_info i1, i2;
      long long h0 = h->handovers;
      int s1 = svi_impact_lemke(h, routh, q, pert ? d : NULL, pert ? ord : NULL, pert ? sg : NULL, &o, z1, &i1);
      int s2 = svi_impact_lemke(sd, routh, q, pert ? d : NULL, pert ? ord : NULL, pert ? sg : NULL, &o, z2, &i2);
      handed += h->handovers > h0;
      tally_pair(&ty, h, routh, q, &o, s1, z1, s2, z2);
    }
    svi_routh_config c = svi_routh_default_config();
    c.branch = k % 3 == 0 ? SVI_BRANCH_LEMKE : SVI_BRANCH_RANDOM;
    double ke0 = ke(&p, p.v), vapp = svi_impact_approach_speed(h);
    for (int m = 0; m < 3; m++) {
      double v[T_NV];
      svi_sample_info info;
      int st = svi_routh_sample(h, &c, NULL, (uint64_t)m, v, &info, NULL, 0, NULL);
      samples++;
      invalid += !invariants_hold(&p, v, ke0, vapp, info.accepted || st == SVI_OK);
    }
  }
  printf("handover to the low-rank Lemke at 1 .. 19 etas: %lld events of %lld problems, %lld LCPs, handed over %lld; "
         "both solved %lld, only with the handover %lld, only the dense path %lld; same v' %lld, different v' both valid "
         "%lld, different and dense invalid %lld; residual on the dense matrix worst %.2e, above tolerance %lld; "
         "samples %lld, invariant violations %lld; handovers in all %lld\n",
         events, P, ty.solves, handed, ty.both_ok, ty.lr_only, ty.dense_only, ty.same_v, ty.diff_v_valid,
         ty.diff_v_bad, ty.worst_res, ty.bad_res, samples, invalid, h->handovers);
  CHECK(events * 3 >= P, "the handover applies to only %lld of %lld problems", events, P);
  CHECK(handed * 2 >= ty.solves, "handed over on only %lld of %lld LCPs", handed, ty.solves);
  check_tally(&ty, "handed-over");
  CHECK(invalid == 0, "%lld samples violate the invariants", invalid);
  lcp_bufs_free(&bf);
  svi_impact_destroy(h);
  svi_impact_destroy(sd);
}

/* The low-rank Lemke's pivots kept as etas between two refactors of its basis (svi_lowrank.c,
 * lr_eta_max, lr_ftran, binv_column): the LCPs of compare_lcps with a refactor every 3 and every
 * 32 pivots (more than the rule gives these sizes), each against the dense Lemke by check_tally
 * and against the same solver refactored every pivot (k = 1: the solver before the etas).  With
 * svi_lr_set_verify every column of B^-1 the lexicographic test forms through etas is formed
 * again through every position, every one it takes as a unit column is formed and compared, and
 * every column it filters as a local one (lex_filter_local, at least 1 000) is filtered again as a
 * whole one: none may differ (a local filter's scan in which no zero moves it fails 24 393 of
 * 577 324, one that keeps every zero 2 211).  The path of a refactor every pivot (its pivots and v') must be followed on at
 * least 75 % of the LCPs (measured 85 % and 81 %: these problems tie often, and a tie within
 * rounding goes either way, as between the dense and the low-rank Lemke, 78 %).  The etas must
 * carry directions for k > 1 and none for k = 1.  Tried: the etas applied in reverse order (the
 * tally fails: 1 096 LCPs of 1 200 only the dense Lemke solves); the unit-column shortcut kept
 * after an eta pivoted on its row (the verify checks fail; the same path on 79 % and 71 %). */
static void check_eta_layer(long long P) {
  static const int ks[2] = {3, 32};
  svi_impact* s = workspace(SVI_SOLVER_LOWRANK, 0);
  lcp_bufs b;
  CHECK(s != NULL && lcp_bufs_make(&b), "workspace and buffers");
  if (!s || !b.ord) return;
  svi_lr_set_verify(s->lr, 1);
  for (int j = 0; j < 2; j++) {
    tally ty;
    memset(&ty, 0, sizeof(ty));
    long long d0, r0, e0, d1, r1, e1, dref = 0, lcps = 0, same_path = 0, vc0, vf0, vc1, vf1;
    svi_lr_eta_counts(s->lr, &d0, &r0, &e0);
    svi_lr_verify_counts(s->lr, &vc0, &vf0);
    long long vl0 = svi_lr_verify_local(s->lr);
    tprob p;
    for (long long k = 0; k < P; k++) {
      if (!set_up(s, &p, (uint64_t)(300000 + k), (int)(k % 5), k)) continue;
      svi_impact_dense(s);
      for (int rep = 0; rep < 6; rep++) {   /* at k etas against the dense Lemke, then at 1 */
        int routh = rep < 4, off = routh ? s->nc : 0;
        svi_lcp_info i1, i2;
        svi_lr_set_eta_max(s->lr, ks[j]);
        int s1 = compare_one(s, (uint64_t)(300000 + k), rep, &b, &ty, &i1);
        long long a, a2, x, y;
        svi_lr_eta_counts(s->lr, &a, &x, &y);
        svi_lr_set_eta_max(s->lr, 1);
        int s2 = lr_solve_bufs(s, routh, &b, b.z2, &i2);
        svi_lr_eta_counts(s->lr, &a2, &x, &y);
        dref += a2 - a;
        lcps++;
        double scale, g = s1 >= 0 && s2 >= 0 ? dv_gap(s, b.z1 + off, b.z2 + off, &scale) : 0;
        same_path += s1 == s2 && i1.pivots == i2.pivots &&
                     (s1 < 0 || g <= 1e-7 * fmax(scale, 1e-300) + 1e-12 * s->vscale);
      }
    }
    svi_lr_set_eta_max(s->lr, ks[j]);
    svi_lr_eta_counts(s->lr, &d1, &r1, &e1);
    svi_lr_verify_counts(s->lr, &vc1, &vf1);
    long long vl = svi_lr_verify_local(s->lr) - vl0;
    printf("low-rank Lemke with up to %d etas between refactors, %lld problems, %lld LCPs: directions through etas "
           "%lld, refactors %lld (%lld early, a small pivot); against the dense Lemke: both solved %lld, only "
           "low-rank %lld, only dense %lld, same v' %lld, different v' both valid %lld, different and dense invalid "
           "%lld, residual worst %.2e; against a refactor every pivot: the same path and v' on %lld of %lld LCPs "
           "(directions through etas there %lld); columns of B^-1 verified %lld (%lld of them local filters), wrong "
           "%lld\n",
           ks[j], P, ty.solves, d1 - d0, r1 - r0, e1 - e0, ty.both_ok, ty.lr_only, ty.dense_only, ty.same_v,
           ty.diff_v_valid, ty.diff_v_bad, ty.worst_res, same_path, lcps, dref, vc1 - vc0, vl, vf1 - vf0);
    char what[80];
    snprintf(what, sizeof(what), "low-rank with %d etas between refactors", ks[j]);
    check_tally(&ty, what);
    CHECK(d1 - d0 >= ty.solves, "only %lld directions through etas in %lld LCPs (%d etas between refactors)",
          d1 - d0, ty.solves, ks[j]);
    CHECK(dref == 0, "%lld directions went through etas with a refactor every pivot", dref);
    CHECK(vc1 - vc0 >= 1000 && vf1 == vf0, "columns of B^-1: %lld verified, %lld wrong (%d etas between refactors)",
          vc1 - vc0, vf1 - vf0, ks[j]);
    CHECK(vl >= 1000, "only %lld local filters verified (%d etas between refactors)", vl, ks[j]);
    CHECK(same_path * 100 >= lcps * 75, "the path of a refactor every pivot on only %lld of %lld LCPs (%d etas "
          "between refactors)", same_path, lcps, ks[j]);
  }
  svi_lr_set_eta_max(s->lr, 0);
  svi_lr_set_verify(s->lr, 0);
  lcp_bufs_free(&b);
  svi_impact_destroy(s);
}

/* The low-rank Lemke with the AVX-512 kernels (the ratio scan's copies and combine_columns_512, where
 * the CPU has them) and without (svi_kern_set_avx512(0): the AVX2 kernels and clones): the same
 * status, pivots and z, bit for bit, on every LCP of P problems of 9 to 41 contacts (63 to 287
 * rows: the 512-bit direction's blocks of 64 and its tail of the 256-bit kernel). */
static void check_avx512_bits(long long P) {
  svi_impact* s = workspace(SVI_SOLVER_LOWRANK, 0);
  lcp_bufs b;
  CHECK(s != NULL && lcp_bufs_make(&b), "workspace and buffers");
  if (!s || !b.ord) return;
  int have = svi_have_avx512();
  long long lcps = 0, differ = 0;
  tprob p;
  for (long long k = 0; k < P; k++) {
    if (!set_up(s, &p, (uint64_t)(400000 + k), (int)(k % 5), k)) continue;
    for (int rep = 0; rep < 6; rep++) {
      int routh = rep < 4, n = routh ? s->n_routh : s->n_ap;
      b.pert = step_lcp(s, (uint64_t)(400000 + k), rep, b.q, b.d, b.sg, b.ord);
      svi_lcp_info i1, i2;
      int s1 = lr_solve_bufs(s, routh, &b, b.z1, &i1);
      svi_kern_set_avx512(0);
      int s2 = lr_solve_bufs(s, routh, &b, b.z2, &i2);
      svi_kern_set_avx512(1);
      lcps++;
      differ += s1 != s2 || i1.pivots != i2.pivots || memcmp(b.z1, b.z2, sizeof(double) * (size_t)n) != 0;
    }
  }
  printf("low-rank Lemke %s the AVX-512 kernels against the AVX2 ones: %lld LCPs, %lld differ\n",
         have ? "with" : "(this CPU has no AVX-512 kernels) without", lcps, differ);
  CHECK(differ == 0, "%lld of %lld low-rank solves differ with and without the AVX-512 kernels", differ, lcps);
  lcp_bufs_free(&b);
  svi_impact_destroy(s);
}

/* The direction summed by runs of contacts over the velocities they reach (svi_lowrank.c,
 * contact_runs) against one sum over every velocity (svi_lr_set_runs(0), the solver before the
 * runs): the same status, pivots and z (a zero's sign aside: +0 and -0 compare equal) on every LCP
 * of P two-legged problems (make_problem's kind 5: two runs, or a short run of the other leg
 * merged), and the runs' solutions checked against the dense Lemke on the densely built LCP. */
static void check_runs(long long P) {
  svi_impact* s = workspace(SVI_SOLVER_LOWRANK, 0);
  lcp_bufs b;
  CHECK(s != NULL && lcp_bufs_make(&b), "workspace and buffers");
  if (!s || !b.ord) return;
  tally ty;
  memset(&ty, 0, sizeof(ty));
  long long lcps = 0, differ = 0, multi = 0, probs = 0;
  tprob p;
  for (long long k = 0; k < P; k++) {
    if (!set_up(s, &p, (uint64_t)(500000 + k), 5, k)) continue;
    svi_impact_dense(s);
    probs++;
    for (int rep = 0; rep < 6; rep++) {
      int routh = rep < 4, n = routh ? s->n_routh : s->n_ap;
      svi_lcp_info i1, i2;
      int s1 = compare_one(s, (uint64_t)(500000 + k), rep, &b, &ty, &i1);
      if (rep == 0) multi += svi_lr_runs(s->lr) >= 2;
      svi_lr_set_runs(s->lr, 0);
      int s2 = lr_solve_bufs(s, routh, &b, b.z2, &i2);
      svi_lr_set_runs(s->lr, 1);
      int same = s1 == s2 && i1.pivots == i2.pivots;
      for (int i = 0; same && i < n; i++) same = b.z1[i] == b.z2[i];
      lcps++;
      differ += !same;
    }
  }
  printf("low-rank Lemke by runs of contacts against one run: %lld two-legged problems (%lld in two runs), "
         "%lld LCPs, %lld differ; against the dense Lemke: both solved %lld, same v' %lld, worst residual %.2e\n",
         probs, multi, lcps, differ, ty.both_ok, ty.same_v, ty.worst_res);
  CHECK(differ == 0, "%lld of %lld low-rank solves differ by runs and in one run", differ, lcps);
  CHECK(multi * 4 >= probs, "only %lld of %lld two-legged problems in two runs", multi, probs);
  check_tally(&ty, "low-rank by runs");
  lcp_bufs_free(&b);
  svi_impact_destroy(s);
}

int main(int argc, char** argv) {
  long long P = argc > 1 ? atoll(argv[1]) : 600;
  const char* sc = getenv("SVI_TEST_SCALE");
  if (sc) P = (long long)(P * atof(sc));
  if (P < 50) P = 50;
  check_ap_sizes();
  check_mass_factor();
  check_wrows(P);
  check_handover(P);
  check_eta_layer(P / 3 < 200 ? 200 : P / 3);   /* the tally allows one failure in 200 LCPs */
  check_avx512_bits(P / 3);
  check_runs(P / 3);
  tally ty;
  memset(&ty, 0, sizeof(ty));
  long long samples = 0, accepted = 0, invalid = 0, same_outcome = 0, compared = 0;
  svi_impact* s = workspace(SVI_SOLVER_LOWRANK, 0);
  svi_impact* sd = workspace(SVI_SOLVER_DENSE, 0);
  CHECK(s && sd, "workspaces");
  tprob p;
  for (long long k = 0; k < P; k++) {
    make_problem(&p, (uint64_t)k, (int)(k % 5));
    svi_problem_def def = def_of(&p);
    if (svi_impact_setup(s, &def, NULL, 0) != SVI_OK || svi_impact_setup(sd, &def, NULL, 0) != SVI_OK) {
      CHECK(0, "setup of problem %lld", k);
      continue;
    }
    CHECK(s->lowrank && !sd->lowrank, "forced solvers");
    svi_impact_dense(s);
    compare_lcps(s, (uint64_t)k, &ty);
    /* whole samples through the low-rank path, checked from the problem data */
    svi_routh_config c = svi_routh_default_config();
    c.branch = k % 3 == 0 ? SVI_BRANCH_LEMKE : SVI_BRANCH_RANDOM;
    c.step = k % 4 == 0 ? 0.3 : 1.0;
    double ke0 = ke(&p, p.v), vapp = svi_impact_approach_speed(s);
    for (int m = 0; m < 3; m++) {
      double v[T_NV], vd[T_NV];
      svi_sample_info info, infod;
      int st = svi_routh_sample(s, &c, NULL, (uint64_t)m, v, &info, NULL, 0, NULL);
      svi_routh_sample(sd, &c, NULL, (uint64_t)m, vd, &infod, NULL, 0, NULL);
      samples++;
      accepted += info.accepted;
      invalid += !invariants_hold(&p, v, ke0, vapp, info.accepted || st == SVI_OK);
      if (info.accepted && infod.accepted) {
        compared++;
        same_outcome += same_velocity(p.nv, v, vd, 1e-7);
      }
    }
  }
  printf("low-rank vs dense Lemke, %lld problems, %lld LCPs: both solved %lld, only low-rank %lld, only dense %lld, "
         "neither %lld; same pivots %lld; same v' %lld, different v' both valid %lld, different and dense invalid %lld; "
         "low-rank residual on the dense matrix: worst %.2e, above tolerance %lld\n",
         P, ty.solves, ty.both_ok, ty.lr_only, ty.dense_only, ty.neither, ty.same_pivots, ty.same_v,
         ty.diff_v_valid, ty.diff_v_bad, ty.worst_res, ty.bad_res);
  printf("samples through the low-rank path: %lld, accepted %lld, invariant violations %lld; "
         "accepted by both: %lld, same outcome %lld\n", samples, accepted, invalid, compared, same_outcome);
  check_tally(&ty, "low-rank");
  CHECK(invalid == 0, "%lld samples violate the invariants", invalid);
  CHECK(accepted * 100 >= samples * 95, "accepted %lld of %lld", accepted, samples);
  svi_impact_destroy(s);
  svi_impact_destroy(sd);
  return svi_test_finish();
}
