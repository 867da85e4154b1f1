/* test_box3d.c -- the set-valued law on an exact 3-D box (6 DOF, M = diag(m, m, m, I), corner
 * contacts with the four-sided friction pyramid, nt = 2): held-out comparison laws, branch
 * coverage of the step, and an independent check of every outcome.
 *
 * SVI_TEST_SCALE (environment, default 1) scales the sample counts; the sanitizer build runs
 * with 0.1 (tests/CMakeLists.txt). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "svi/svi_core.h"
#include "svi_internal.h"
#include "svi_test.h"
#include "box3d.h"
#include "random_reach.h"

static double scale_count(double n) {
  const char* e = getenv("SVI_TEST_SCALE");
  double f = e ? atof(e) : 1.0;
  if (!(f > 0)) f = 1.0;
  return n * f < 1 ? 1 : n * f;
}

static double dist(int n, const double* a, const double* b) {
  double d = 0;
  for (int i = 0; i < n; i++) d += (a[i] - b[i]) * (a[i] - b[i]);
  return sqrt(d);
}

static double nearest(const double* V, const unsigned char* acc, long long M, const double* v) {
  double best = INFINITY;
  for (long long k = 0; k < M; k++) if (acc[k]) best = fmin(best, dist(6, V + 6 * k, v));
  return best;
}

/* The outcome certificate, computed from the test's own M and J (not the core's G, W or units):
 * v+ = v- + M^-1 (J_n^T l_n + J_t^T l_t) for an impulse l inside every contact's pyramid
 * |l_t1| + |l_t2| <= mu l_n, no contact approaching, kinetic energy not increased.  These are
 * the conditions every member of the exact set meets. */
static int certificate_ok(const box3d* b, const double* v, const double* lam, double vapp) {
  int nc = b->nc;
  double p[6] = {0}, ke0 = 0, ke1 = 0, tol = 1e-6 * vapp;
  for (int i = 0; i < nc; i++) {
    double ln = lam[i], l1 = lam[nc + 4 * i] - lam[nc + 4 * i + 1];
    double l2 = lam[nc + 4 * i + 2] - lam[nc + 4 * i + 3];
    if (ln < -1e-9 || fabs(l1) + fabs(l2) > b->mu[i] * ln * (1 + 1e-9) + 1e-9) return 0;
    for (int k = 0; k < 6; k++)
      p[k] += b->Jn[6 * i + k] * ln + b->Jt[12 * i + k] * l1 + b->Jt[12 * i + 6 + k] * l2;
  }
  /* M is diagonal in the linear block; the angular block is solved by Cramer's rule */
  double dv[6], A[9];
  for (int k = 0; k < 3; k++) dv[k] = p[k] / b->M[7 * k];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) A[3 * i + j] = b->M[(3 + i) * 6 + 3 + j];
  double det = A[0] * (A[4] * A[8] - A[5] * A[7]) - A[1] * (A[3] * A[8] - A[5] * A[6]) +
               A[2] * (A[3] * A[7] - A[4] * A[6]);
  for (int c = 0; c < 3; c++) {
    double B[9];
    memcpy(B, A, sizeof(B));
    for (int i = 0; i < 3; i++) B[3 * i + c] = p[3 + i];
    dv[3 + c] = (B[0] * (B[4] * B[8] - B[5] * B[7]) - B[1] * (B[3] * B[8] - B[5] * B[6]) +
                 B[2] * (B[3] * B[7] - B[4] * B[6])) / det;
  }
  for (int k = 0; k < 6; k++) if (fabs(b->v[k] + dv[k] - v[k]) > 1e-9 * (1 + fabs(v[k]))) return 0;
  for (int i = 0; i < nc; i++) {
    double vn = 0;
    for (int k = 0; k < 6; k++) vn += b->Jn[6 * i + k] * v[k];
    if (vn < -tol) return 0;
  }
  for (int i = 0; i < 6; i++)
    for (int j = 0; j < 6; j++) {
      ke0 += 0.5 * b->v[i] * b->M[6 * i + j] * b->v[j];
      ke1 += 0.5 * v[i] * b->M[6 * i + j] * v[j];
    }
  return ke1 <= ke0 * (1 + 1e-9);
}

/* Algorithm 1 samples of the box under a rule; every one must pass the certificate */
static void check_samples(const char* name, const box3d* b, svi_impact* s, svi_branch rule,
                          svi_budget budget, int n) {
  svi_routh_config c = svi_routh_default_config();
  c.branch = rule;
  c.budget = budget;
  c.seed = 3;
  int bad = 0, accepted = 0;
  double lam[BOX3D_MAX_NC * 5], v[6];
  for (int k = 0; k < n; k++) {
    svi_sample_info info;
    svi_routh_sample(s, &c, NULL, (uint64_t)k, v, &info, NULL, 0, NULL);
    svi_impact_last_impulse(s, lam);
    accepted += info.accepted;
    if (info.accepted && !certificate_ok(b, v, lam, svi_impact_approach_speed(s))) bad++;
  }
  CHECK(bad == 0, "%s: %d accepted samples fail the independent impulse certificate", name, bad);
  CHECK(accepted > n * 9 / 10, "%s: only %d of %d samples accepted", name, accepted, n);
}

static void approximate_set(const svi_problem_def* def, long long M, double** V, unsigned char** acc,
                            svi_approx_stats* st) {
  svi_approx_config c = svi_approx_default_config();
  c.samples = M;
  c.threads = 2;
  c.routh.budget = SVI_BUDGET_MIXED;
  /* h = 2 reference impulses: one step can complete one contact's impact, as the sequential
   * law's single LCP (31) does (the paper's h is 1.1 to 6.9 reference impulses) */
  c.routh.step = 2.0;
  *V = malloc(sizeof(double) * 6 * (size_t)M);
  *acc = malloc((size_t)M);
  svi_approximate(def, &c, *V, *acc, NULL, st);
}

/* classes: bit i set when contact i sticks ('S'); every other contact lifts ('L') */
static int pivot_count(svi_impact* s, const double* V, const unsigned char* acc, long long M, int sticking) {
  int n = 0;
  char c[8];
  for (long long k = 0; k < M; k++) {
    if (!acc[k]) continue;
    svi_classify(s, V + 6 * k, c);
    int ok = 1;
    for (int i = 0; i < 4 && ok; i++) ok = c[i] == ((sticking >> i & 1) ? 'S' : 'L');
    n += ok;
  }
  return n;
}

/* A box dropped flat onto its 4 bottom corners: the set holds the outcome of each of the 4! = 24
 * sequential orders, the Anitescu-Potra outcome(s), and pivots about each bottom edge. */
static void test_flat_box(void) {
  box3d b;
  double h[3] = {0.2, 0.15, 0.25}, v0[6] = {0, 0, -1, 0, 0, 0};
  box3d_flat(&b, h, v0, 1.0);
  svi_problem_def def = box3d_def(&b);
  svi_impact* s = svi_impact_create(6, 4, 2);
  CHECK(svi_impact_setup(s, &def, NULL, 0) == SVI_OK, "flat box: setup");

  double seq[64 * 6], ap[64 * 6];
  int nseq = 0, nap = 0;
  svi_sequential_stats ss;
  svi_law_sequential_all(s, 1000, 0, 1, seq, 64, &nseq, &ss);
  CHECK(ss.exhaustive && ss.orders == 24 && ss.unterminated == 0 && ss.rejected == 0 && ss.failed == 0,
        "flat box: all 24 sequential orders ran and terminated (%lld, %lld unterminated)", ss.orders, ss.unterminated);
  CHECK(nseq >= 12, "flat box: %d distinct sequential outcomes", nseq);
  svi_law_simultaneous_all(s, ap, 64, &nap);
  char c[8];
  svi_classify(s, ap, c);
  CHECK(nap == 1 && !strcmp(c, "SSSS"), "flat box: Anitescu-Potra gives rest only (%d, %s)", nap, c);

  long long M = (long long)scale_count(1 << 15);
  double* V;
  unsigned char* acc;
  svi_approx_stats st;
  approximate_set(&def, M, &V, &acc, &st);
  printf("flat box: %lld samples, %lld accepted, %lld colliding, %lld rejected, %lld LCP rejects, "
         "%lld step retries, %lld sample retries\n", M, st.accepted, st.colliding, st.rejected,
         st.lcp_rejects, st.step_retries, st.sample_retries);
  CHECK(st.accepted > M * 95 / 100, "flat box: %lld of %lld accepted", st.accepted, M);
  double tol = 0.01;   /* 1 % of the impact speed */
  int far = 0;
  double worst = 0;
  for (int k = 0; k < nseq; k++) {
    double d = nearest(V, acc, M, seq + 6 * k);
    worst = fmax(worst, d);
    far += d > tol;
  }
  printf("flat box: %d distinct outcomes of the 24 sequential orders, the farthest at %.2e from the set\n", nseq, worst);
  CHECK(far == 0, "flat box: %d of %d sequential outcomes farther than %g from the set (worst %g)", far, nseq, tol, worst);
  CHECK(nearest(V, acc, M, ap) < tol, "flat box: the set contains rest (Anitescu-Potra)");
  /* contacts 0..3 = (-x,-y), (-x,+y), (+x,-y), (+x,+y): edges {0,1}, {2,3}, {0,2}, {1,3} */
  int edges[4] = {0x3, 0xC, 0x5, 0xA};
  for (int e = 0; e < 4; e++) {
    int n = pivot_count(s, V, acc, M, edges[e]);
    printf("flat box: %d samples pivot about the edge of contacts mask %x\n", n, edges[e]);
    CHECK(n > 0, "flat box: no pivot about the edge of contacts mask %x", edges[e]);
  }
  /* nothing outside the exact set: every returned velocity is admissible, and the samples of
   * Algorithm 1 pass the independent certificate */
  int bad = 0;
  for (long long k = 0; k < M; k++)
    if (svi_impact_check_outcome(s, V + 6 * k, NULL)) bad++;
  CHECK(bad == 0, "flat box: %d returned velocities fail the outcome checks", bad);
  check_samples("flat box (auto, mixed budgets)", &b, s, SVI_BRANCH_AUTO, SVI_BUDGET_MIXED, (int)scale_count(4000));
  check_samples("flat box (lemke)", &b, s, SVI_BRANCH_LEMKE, SVI_BUDGET_UNIFORM, (int)scale_count(2000));
  free(V);
  free(acc);
  svi_impact_destroy(s);
}

/* A box tilted about x lands on one bottom edge while spinning about the vertical: the two
 * corners slide in opposite directions.  Two spatial contacts: AUTO enumerates the 19^2 modes. */
static void test_edge_spin(void) {
  box3d b;
  double h[3] = {0.25, 0.15, 0.1}, R[9], r[3], up[3] = {0, 0, 1};
  box3d_rotation(0.5, 0, 0, R);
  double v0[6] = {0, 0.2, -1, 0.8, 0, 2.0};
  box3d_init(&b, 1.0, h, R, v0, 2);
  /* the lowest corners: sy = -1, sz = -1 after the tilt about x */
  for (int sx = -1; sx <= 1; sx += 2) {
    box3d_corner(&b, sx, -1, -1, r);
    box3d_add_contact(&b, r, up, 0.4);
  }
  svi_problem_def def = box3d_def(&b);
  svi_impact* s = svi_impact_create(6, 2, 2);
  CHECK(svi_impact_setup(s, &def, NULL, 0) == SVI_OK, "edge box: setup");
  double vn[2];
  svi_impact_normal_velocity(s, b.v, vn);
  CHECK(vn[0] < -0.1 && vn[1] < -0.1, "edge box: both corners approach (%g, %g)", vn[0], vn[1]);

  double seq[8 * 6], ap[64 * 6];
  int nseq = 0, nap = 0;
  svi_sequential_stats ss;
  svi_law_sequential_all(s, 1000, 0, 1, seq, 8, &nseq, &ss);
  CHECK(ss.exhaustive && ss.orders == 2 && ss.unterminated == 0, "edge box: both sequential orders terminate");
  svi_law_simultaneous_all(s, ap, 64, &nap);
  CHECK(nap >= 1, "edge box: %d Anitescu-Potra outcomes", nap);

  long long M = (long long)scale_count(1 << 14);
  double* V;
  unsigned char* acc;
  svi_approx_stats st;
  approximate_set(&def, M, &V, &acc, &st);
  CHECK(st.accepted > M * 95 / 100, "edge box: %lld of %lld accepted", st.accepted, M);
  double tol = 0.01 * fmax(-vn[0], -vn[1]);
  for (int k = 0; k < nseq; k++) {
    double d = nearest(V, acc, M, seq + 6 * k);
    printf("edge box: sequential outcome %d at %.2e from the set\n", k, d);
    CHECK(d < tol, "edge box: sequential outcome %d at %g from the set (tol %g)", k, d, tol);
  }
  for (int k = 0; k < nap; k++) {
    double d = nearest(V, acc, M, ap + 6 * k);
    printf("edge box: Anitescu-Potra outcome %d at %.2e from the set\n", k, d);
    CHECK(d < tol, "edge box: Anitescu-Potra outcome %d at %g from the set (tol %g)", k, d, tol);
  }
  int bad = 0;
  for (long long k = 0; k < M; k++)
    if (svi_impact_check_outcome(s, V + 6 * k, NULL)) bad++;
  CHECK(bad == 0, "edge box: %d returned velocities fail the outcome checks", bad);
  check_samples("edge box (auto)", &b, s, SVI_BRANCH_AUTO, SVI_BUDGET_UNIFORM, (int)scale_count(2000));
  check_samples("edge box (random)", &b, s, SVI_BRANCH_RANDOM, SVI_BUDGET_UNIFORM, (int)scale_count(2000));
  free(V);
  free(acc);
  svi_impact_destroy(s);
}

/* Branch coverage with 4 spatial contacts, where AUTO uses random-perturbation Lemke: on every
 * step met along sampled trajectories of the flat drop and of a spinning box pivoting about one
 * edge onto the other (two contacts at rest, mu = 0.3), the exhaustive 19^4-pattern mode
 * enumeration's outcomes are all reached by 64 random draws.  Most of these steps have one
 * outcome; the non-unique ones are what the check is about. */
static void test_box_branch_coverage(void) {
  int steps = 0, multi = 0, missed = 0;
  int per_case = 10;   /* not scaled: the non-unique steps must be met in every build */
  for (int cs = 0; cs < 2; cs++) {
    box3d b;
    double h[3] = {0.2, 0.15, 0.25}, v0[6] = {0, 0, -1, 0, 0, 0};
    if (cs == 1) {   /* rotating about the x = -h edge (contacts 0, 1 at rest) with spin */
      double w[3] = {0, 1.0, 3.0}, rr[3] = {h[0], 0, h[2]};
      box3d_cross(w, rr, v0);
      v0[3] = w[0]; v0[4] = w[1]; v0[5] = w[2];
    }
    box3d_flat(&b, h, v0, cs == 1 ? 0.3 : 1.0);
    svi_problem_def def = box3d_def(&b);
    svi_impact* s = svi_impact_create(6, 4, 2);
    svi_impact_setup(s, &def, NULL, 0);
    svi_routh_config c = svi_routh_default_config();
    c.budget = SVI_BUDGET_MIXED;
    for (int k = 0; k < per_case; k++) {
      double traj[16 * 6], v[6];
      int tl = 0;
      svi_routh_sample(s, &c, NULL, (uint64_t)k, v, NULL, traj, 16, &tl);
      for (int t = 0; t + 1 < tl; t++) {
        double lmax[4];
        svi_matvec(s->nb, 6, s->Jbar, traj + 6 * t, s->u);
        if (svi_min_normal(s, s->u) >= -s->sep_tol) continue;
        for (int i = 0; i < 4; i++)
          lmax[i] = svi_rng_uniform(5, (uint64_t)k, (uint64_t)(4 * t + i)) * svi_impact_reference_impulse(s);
        int n = svi_modes_enumerate(s, s->u, lmax);
        unsigned long long r = random_reach(s, s->u, lmax, n, 64);
        steps++;
        multi += n > 1;
        for (int m = 0; m < n; m++) missed += !(r >> m & 1);
      }
    }
    svi_impact_destroy(s);
  }
  printf("box branch coverage: %d steps, %d with several outcomes, %d outcomes missed by random Lemke\n",
         steps, multi, missed);
  CHECK(steps >= 20 && multi > 0, "box branch coverage: %d steps compared, %d non-unique", steps, multi);
  CHECK(missed == 0, "box branch coverage: random Lemke missed %d step outcomes", missed);
}

int main(void) {
  test_flat_box();
  test_edge_spin();
  test_box_branch_coverage();
  return svi_test_finish();
}
