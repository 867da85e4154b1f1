/* test_physics.c -- the paper's claims on its own examples and on random impact problems. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "svi/svi_core.h"
#include "svi_internal.h"
#include "svi_test.h"
#include "random_problem.h"
#include "random_reach.h"

#ifndef SVI_TEST_DATA
#define SVI_TEST_DATA "tests/data"   /* the data directory (CMake passes the source tree's) */
#endif

static svi_impact* make(const char* name, svi_example* ex) {
  svi_example_get(name, ex);
  svi_problem_def def = svi_example_problem(ex);
  svi_impact* s = svi_impact_create(def.nv, def.nc, def.nt);
  svi_impact_setup(s, &def, NULL, 0);
  return s;
}

/* the paper's sampling configuration for an example, M samples */
static svi_approx_config paper_config(const svi_example* ex, long long M) {
  svi_approx_config c = svi_approx_default_config();
  c.samples = M;
  c.routh.step_abs = ex->h;
  c.routh.max_steps = ex->N;
  c.threads = 2;
  return c;
}

static double vdist(int n, const double* a, const double* b) {
  double d = 0;
  for (int i = 0; i < n; i++) d += (a[i] - b[i]) * (a[i] - b[i]);
  return sqrt(d);
}

/* distance from v to the nearest accepted sample */
static double nearest(int nv, const double* V, const unsigned char* acc, long long M, const double* v) {
  double best = INFINITY;
  for (long long k = 0; k < M; k++) if (acc[k]) best = fmin(best, vdist(nv, V + k * nv, v));
  return best;
}

typedef struct { double* V; unsigned char* acc; long long M; svi_approx_stats st; } set;

static set approximate(const svi_example* ex, long long M, int threads, uint64_t seed) {
  set r;
  svi_problem_def def = svi_example_problem(ex);
  svi_approx_config c = paper_config(ex, M);
  c.threads = threads;
  c.routh.seed = seed;
  r.M = M;
  r.V = malloc(sizeof(double) * (size_t)M * def.nv);
  r.acc = malloc((size_t)M);
  svi_approximate(&def, &c, r.V, r.acc, NULL, &r.st);
  return r;
}

static void free_set(set* r) { free(r->V); free(r->acc); }

/* Theorem 7, non-collision and finite output on every example's set */
static void check_set_physics(const char* name, const set* r, svi_impact* s) {
  int nv = s->nv;
  long long bad_e = 0, bad_c = 0, bad_nan = 0;
  double ke0 = svi_impact_kinetic_energy(s, s->v0), vn[8];
  for (long long k = 0; k < r->M; k++) {
    const double* v = r->V + k * nv;
    for (int i = 0; i < nv; i++) if (!isfinite(v[i])) bad_nan++;
    if (svi_impact_kinetic_energy(s, v) > ke0 * (1 + 1e-12)) bad_e++;
    svi_impact_normal_velocity(s, v, vn);
    if (r->acc[k]) for (int i = 0; i < s->nc; i++) if (vn[i] < -s->sep_tol) bad_c++;
  }
  CHECK(bad_nan == 0, "%s: %lld non-finite outputs", name, bad_nan);
  CHECK(bad_e == 0, "%s: %lld samples gained kinetic energy (Theorem 7)", name, bad_e);
  CHECK(bad_c == 0, "%s: %lld accepted samples still approaching", name, bad_c);
  CHECK(r->st.accepted > r->M * 95 / 100, "%s: only %lld of %lld samples accepted", name, r->st.accepted, r->M);
  CHECK(r->st.max_energy_ratio <= 1 + 1e-12, "%s: energy ratio %g", name, r->st.max_energy_ratio);
}

static int count_class(const set* r, svi_impact* s, const char* cls) {
  char c[8];
  int n = 0;
  for (long long k = 0; k < r->M; k++) {
    if (!r->acc[k]) continue;
    svi_classify(s, r->V + k * s->nv, c);
    n += !strcmp(c, cls);
  }
  return n;
}

/* Held-out comparison laws: the outcome of the sequential law under every contact order
 * (svi_law_sequential_all: all nc! orders here) and every outcome of (31) lie within tol of an
 * accepted sample of the set. */
static void check_holdouts(const char* name, const set* r, svi_impact* s, double tol) {
  double seq[64 * SVI_EX_MAX_NV], ap[64 * SVI_EX_MAX_NV];
  int nseq = 0, nap = 0, nv = s->nv;
  svi_sequential_stats st;
  svi_law_sequential_all(s, 1000, 0, 1, seq, 64, &nseq, &st);
  CHECK(st.exhaustive && st.unterminated == 0 && st.rejected == 0 && st.failed == 0 && nseq > 0,
        "%s: every sequential order terminates (%lld orders, %lld unterminated)", name, st.orders, st.unterminated);
  for (int k = 0; k < nseq && k < 64; k++) {
    double d = nearest(nv, r->V, r->acc, r->M, seq + k * nv);
    CHECK(d < tol, "%s: sequential outcome %d of %d (%lld orders) at %g from the set (tol %g)", name, k, nseq, st.orders, d, tol);
  }
  CHECK(svi_law_simultaneous_all(s, ap, 64, &nap) == SVI_OK && nap > 0, "%s: Anitescu-Potra outcomes", name);
  for (int k = 0; k < nap && k < 64; k++) {
    double d = nearest(nv, r->V, r->acc, r->M, ap + k * nv);
    CHECK(d < tol, "%s: Anitescu-Potra outcome %d of %d at %g from the set (tol %g)", name, k, nap, d, tol);
  }
}

static void test_rocking_block(void) {
  svi_example ex;
  svi_impact* s = make("rocking_block", &ex);
  double v[3], vn[2];
  svi_law_simultaneous(s, NULL, v, NULL);
  char c[8];
  svi_classify(s, v, c);
  CHECK(!strcmp(c, "SS") && fabs(v[0]) + fabs(v[1]) + fabs(v[2]) < 1e-9,
        "rocking block: Anitescu-Potra gives rest (got %s)", c);
  int AB[2] = {0, 1}, BA[2] = {1, 0};
  double vab[3], vba[3];
  svi_law_sequential(s, AB, 100, vab, NULL);
  svi_law_sequential(s, BA, 100, vba, NULL);
  svi_classify(s, vab, c);
  CHECK(!strcmp(c, "LS"), "rocking block: A then B pivots about B (got %s)", c);
  svi_classify(s, vba, c);
  CHECK(!strcmp(c, "SL"), "rocking block: B then A pivots about A (got %s)", c);

  set r = approximate(&ex, 1 << 14, 2, 1);
  check_set_physics("rocking block", &r, s);
  check_holdouts("rocking block", &r, s, 0.01 * 0.4429);
  double rest[3] = {0, 0, 0}, tol = 0.01 * 0.4429;
  CHECK(nearest(3, r.V, r.acc, r.M, rest) < tol, "rocking block: set contains rest");
  CHECK(nearest(3, r.V, r.acc, r.M, vab) < tol, "rocking block: set contains pivot about B");
  CHECK(nearest(3, r.V, r.acc, r.M, vba) < tol, "rocking block: set contains pivot about A");
  /* scaled-down pivots (Fig. 9): pivot about A with 10%..90% of the sequential lift speed */
  svi_impact_normal_velocity(s, vba, vn);
  double full = vn[1];
  int scaled = 0;
  for (long long k = 0; k < r.M; k++) {
    if (!r.acc[k]) continue;
    svi_impact_normal_velocity(s, r.V + 3 * k, vn);
    svi_classify(s, r.V + 3 * k, c);
    if (!strcmp(c, "SL") && vn[1] > 0.1 * full && vn[1] < 0.9 * full) scaled++;
  }
  CHECK(scaled > 100, "rocking block: %d scaled-down pivots", scaled);
  /* no outcome beyond the sequential ones: the lift speed is bounded by the sequential pivot */
  double maxlift = 0;
  for (long long k = 0; k < r.M; k++) {
    svi_impact_normal_velocity(s, r.V + 3 * k, vn);
    maxlift = fmax(maxlift, fmax(vn[0], vn[1]));
  }
  CHECK(maxlift <= full * (1 + 1e-6), "rocking block: max lift %g <= sequential %g", maxlift, full);
  free_set(&r);
  svi_impact_destroy(s);
}

static void test_box_wall(void) {
  svi_example ex;
  svi_impact* s = make("box_wall", &ex);
  double v[3], vseq[3];
  char c[8];
  svi_law_simultaneous(s, NULL, v, NULL);
  svi_classify(s, v, c);
  CHECK(!strcmp(c, "SS"), "box-wall: Anitescu-Potra gives rest (got %s)", c);
  int BA[2] = {1, 0};
  svi_law_sequential(s, BA, 100, vseq, NULL);
  svi_classify(s, vseq, c);
  CHECK(!strcmp(c, "DL"), "box-wall: sequential gives A sliding, B lifting (got %s)", c);
  set r = approximate(&ex, 1 << 16, 2, 1);
  check_set_physics("box-wall", &r, s);
  check_holdouts("box-wall", &r, s, 0.01);
  CHECK(nearest(3, r.V, r.acc, r.M, v) < 0.01, "box-wall: set contains rest");
  CHECK(nearest(3, r.V, r.acc, r.M, vseq) < 0.01, "box-wall: set contains the sequential outcome");
  /* intermediates: A slides and B lifts slower than in the sequential outcome */
  double vn[2], vns[2];
  svi_impact_normal_velocity(s, vseq, vns);
  int inter = 0;
  for (long long k = 0; k < r.M; k++) {
    if (!r.acc[k]) continue;
    svi_impact_normal_velocity(s, r.V + 3 * k, vn);
    svi_classify(s, r.V + 3 * k, c);
    if (!strcmp(c, "DL") && vn[1] < 0.9 * vns[1] && vn[1] > 0.1 * vns[1]) inter++;
  }
  CHECK(inter > 100, "box-wall: %d intermediate outcomes", inter);
  free_set(&r);
  svi_impact_destroy(s);
}

static void test_compass_gait(void) {
  svi_example ex;
  svi_impact* s = make("compass_gait", &ex);
  double ap[64 * 4];
  int nap = 0;
  svi_law_simultaneous_all(s, ap, 64, &nap);
  CHECK(nap == 3, "compass gait: Anitescu-Potra has 3 distinct solutions (got %d)", nap);
  char c[8];
  int stick = 0, lift = 0, slide = 0;
  for (int k = 0; k < nap; k++) {
    svi_classify(s, ap + 4 * k, c);
    stick += !strcmp(c, "SS");
    lift += !strcmp(c, "SL");
    slide += !strcmp(c, "SD");
  }
  CHECK(stick == 1 && lift == 1 && slide == 1, "compass gait: AP solutions: B sticks, lifts, slides");
  int AB[2] = {0, 1};
  double vseq[4];
  svi_law_sequential(s, AB, 100, vseq, NULL);

  set r = approximate(&ex, 1 << 16, 2, 1);
  check_set_physics("compass gait", &r, s);
  check_holdouts("compass gait", &r, s, 0.01 * 0.489);
  double scale = 0.489;
  for (int k = 0; k < nap; k++) {
    double d = nearest(4, r.V, r.acc, r.M, ap + 4 * k);
    svi_classify(s, ap + 4 * k, c);
    CHECK(d < 0.01 * scale, "compass gait: set covers AP solution %s (nearest %g)", c, d);
  }
  CHECK(nearest(4, r.V, r.acc, r.M, vseq) < 0.01 * scale, "compass gait: set covers the sequential outcome");
  CHECK(count_class(&r, s, "LS") > 0, "compass gait: A lifts while B stays (oscillating impulses)");
  free_set(&r);

  /* the single-solution Lemke sampler misses the sliding branch: branch coverage is needed */
  svi_problem_def def = svi_example_problem(&ex);
  svi_approx_config cl = paper_config(&ex, 1 << 14);
  cl.routh.branch = SVI_BRANCH_LEMKE;
  set rl;
  rl.M = cl.samples;
  rl.V = malloc(sizeof(double) * (size_t)rl.M * 4);
  rl.acc = malloc((size_t)rl.M);
  svi_approximate(&def, &cl, rl.V, rl.acc, NULL, &rl.st);
  CHECK(count_class(&rl, s, "SD") == 0,
        "compass gait: plain Lemke never reaches B sliding (documents why enumeration is on)");
  free_set(&rl);
  svi_impact_destroy(s);
}

static void test_disk_stack(void) {
  svi_example ex;
  svi_impact* s = make("disk_stack", &ex);
  double ap[64 * 9];
  int nap = 0;
  svi_law_simultaneous_all(s, ap, 64, &nap);
  char c[8];
  svi_classify(s, ap, c);
  CHECK(nap == 1 && !strcmp(c, "SSSSS"), "disk stack: Anitescu-Potra predicts only rest (%d, %s)", nap, c);
  set r = approximate(&ex, 1 << 14, 2, 1);
  check_set_physics("disk stack", &r, s);
  check_holdouts("disk stack", &r, s, 0.01 * 0.866);   /* 120 orders */
  int broken = 0;
  for (long long k = 0; k < r.M; k++) {
    if (!r.acc[k]) continue;
    svi_classify(s, r.V + 9 * k, c);
    if (strchr(c, 'L')) broken++;
  }
  CHECK(broken > r.M / 10, "disk stack: %d outcomes where the stack breaks", broken);
  free_set(&r);
  svi_impact_destroy(s);
}

/* RAMone (mu = 1e5): the set against the held-out laws */
static void test_ramone(void) {
  svi_example ex;
  svi_impact* s = make("ramone", &ex);
  set r = approximate(&ex, 1 << 14, 2, 1);
  check_set_physics("ramone", &r, s);
  check_holdouts("ramone", &r, s, 0.01 * 0.5321);
  free_set(&r);
  svi_impact_destroy(s);
}

/* eq. (68): every impact of the Zeno block scales the angular velocity by 0.7 */
static void test_zeno(void) {
  svi_example ex;
  svi_impact* s = make("zeno_block", &ex);
  svi_routh_config c = svi_routh_default_config();
  c.step_abs = ex.h;
  c.max_steps = ex.N;
  int bad = 0;
  for (int k = 0; k < 2000; k++) {
    double v[3];
    svi_sample_info info;
    svi_routh_sample(s, &c, NULL, (uint64_t)k, v, &info, NULL, 0, NULL);
    if (fabs(v[2] / ex.v[2] - 0.7) > 1e-9) bad++;
  }
  CHECK(bad == 0, "zeno block: %d of 2000 samples do not scale omega by 0.7", bad);
  double v[3];
  svi_law_simultaneous(s, NULL, v, NULL);
  CHECK(fabs(v[2] / ex.v[2] - 0.7) < 1e-9, "zeno block: simultaneous law also gives 0.7");
  svi_impact_destroy(s);
}

/* Theorem 7 and termination on 10^4 random impact problems, every branch rule */
static void test_random_problems(void) {
  long long gain = 0, colliding = 0, unflagged = 0, nan = 0, samples = 0;
  for (int t = 0; t < 10000; t++) {
    rp_problem p;
    random_impact(&p, (uint64_t)t + 77777, t % 5 == 0);
    svi_problem_def def = rp_def(&p);
    svi_impact* s = svi_impact_create(def.nv, def.nc, def.nt);
    if (svi_impact_setup(s, &def, NULL, 0) != SVI_OK) { svi_impact_destroy(s); continue; }
    svi_routh_config c = svi_routh_default_config();
    c.branch = (svi_branch)(t % 4);
    c.seed = (uint64_t)t;
    for (int k = 0; k < 3; k++) {
      double v[RP_NV], vn[RP_NC];
      svi_sample_info info;
      svi_routh_sample(s, &c, NULL, (uint64_t)k, v, &info, NULL, 0, NULL);
      samples++;
      for (int i = 0; i < def.nv; i++) if (!isfinite(v[i])) nan++;
      if (info.ke_after > info.ke_before * (1 + 1e-10) + 1e-14) gain++;
      svi_impact_normal_velocity(s, v, vn);
      int coll = 0;
      for (int i = 0; i < def.nc; i++) if (vn[i] < -s->sep_tol * 10) coll = 1;
      colliding += coll;
      if (coll && info.finish != SVI_FINISH_FAIL) unflagged++;
    }
    svi_impact_destroy(s);
  }
  CHECK(samples >= 30000, "%lld samples", samples);
  CHECK(nan == 0, "random problems: %lld non-finite velocities", nan);
  CHECK(gain == 0, "random problems: %lld samples gained energy (Theorem 7)", gain);
  CHECK(unflagged == 0, "random problems: %lld colliding samples not flagged (of %lld colliding)", unflagged, colliding);
}

/* Lemma 8: zero budget or a non-colliding velocity gives no impulse */
static void test_lemma8(void) {
  int bad = 0;
  for (int t = 0; t < 2000; t++) {
    rp_problem p;
    random_impact(&p, (uint64_t)t + 999, 0);
    svi_problem_def def = rp_def(&p);
    svi_impact* s = svi_impact_create(def.nv, def.nc, def.nt);
    if (svi_impact_setup(s, &def, NULL, 0) != SVI_OK) { svi_impact_destroy(s); continue; }
    double lmax[RP_NC] = {0}, lam[RP_NC * 5], v[RP_NV];
    svi_routh_step(s, def.v, lmax, NULL, NULL, lam, v, NULL);
    if (vdist(def.nv, v, def.v) > 1e-12) bad++;
    svi_impact_destroy(s);
  }
  CHECK(bad == 0, "Lemma 8: %d steps with l_max = 0 changed the velocity", bad);
  /* a velocity that is already non-colliding: Algorithm 1 returns it untouched, no LCP */
  svi_example ex;
  svi_example_get("rocking_block", &ex);
  ex.v[1] = +0.3;
  svi_problem_def def = svi_example_problem(&ex);
  svi_impact* s = svi_impact_create(3, 2, 1);
  svi_impact_setup(s, &def, NULL, 0);
  svi_routh_config c = svi_routh_default_config();
  double v[3];
  svi_sample_info info;
  svi_routh_sample(s, &c, NULL, 0, v, &info, NULL, 0, NULL);
  CHECK(info.lcps == 0 && !memcmp(v, ex.v, sizeof(v)), "Lemma 8: separating velocity is kept");
  svi_impact_destroy(s);
}

/* the mode enumeration finds exactly the distinct outcomes of the full enumeration */
static void test_modes_vs_enumeration(void) {
  int mismatch = 0, compared = 0, multi = 0;
  for (int t = 0; t < 600; t++) {
    rp_problem p;
    random_impact(&p, (uint64_t)t + 4242, 0);
    p.nt = 1;
    if (p.nc > 2) p.nc = 2;
    svi_problem_def def = rp_def(&p);
    svi_impact* s = svi_impact_create(def.nv, def.nc, 1);
    if (svi_impact_setup(s, &def, NULL, 0) != SVI_OK) { svi_impact_destroy(s); continue; }
    int nc = s->nc, nb = s->nb, nr = s->n_routh;
    double q[16], lmax[2];
    for (int i = 0; i < nc; i++) lmax[i] = (0.2 + rnd(t, 70 + i)) * svi_impact_reference_impulse(s);
    memcpy(q, lmax, sizeof(double) * nc);
    memcpy(q + nc, s->u0, sizeof(double) * nb);
    memset(q + nc + nb, 0, sizeof(double) * nc);
    /* full enumeration, outcomes as reduced contact velocities */
    static double sols[64 * 16];
    int cnt = 0;
    svi_lcp_enumerate(nr, svi_impact_routh(s), q, 1e-10, sols, 64, &cnt);
    double full[64][4];
    int nfull = 0;
    for (int k = 0; k < cnt && k < 64; k++) {
      double du[4] = {0};
      for (int i = 0; i < nc; i++)
        for (int j = 0; j < nb; j++) {
          du[2 * i] += s->W[i * nb + j] * sols[k * nr + nc + j];
          du[2 * i + 1] += s->W[(nc + 2 * i) * nb + j] * sols[k * nr + nc + j];
        }
      int dup = 0;
      for (int m = 0; m < nfull && !dup; m++) {
        double d = 0;
        for (int i = 0; i < 2 * nc; i++) d = fmax(d, fabs(full[m][i] - du[i]));
        dup = d < 1e-7 * s->vscale;
      }
      if (!dup) { memcpy(full[nfull], du, sizeof(du)); nfull++; }
    }
    int nm = svi_modes_enumerate(s, s->u0, lmax);
    compared++;
    multi += nm > 1;
    if (nm != nfull) mismatch++;
    svi_impact_destroy(s);
  }
  CHECK(compared > 500, "modes: compared %d problems", compared);
  CHECK(mismatch == 0, "modes: %d of %d problems have a different number of distinct outcomes", mismatch, compared);
  CHECK(multi > 0, "modes: %d problems with several outcomes were exercised", multi);
}

/* The plugin's per-step solve (svi_impact_set_step_solve: each pattern solved at the step) against
 * the precomputed pattern maps and rows: the same outcomes, in the same order, on random planar
 * problems of 1-3 contacts; and whole samples of the paper's examples agree to rounding. */
static void test_step_solve_same_set(void) {
  int compared = 0, count_diff = 0, multi = 0;
  double worst = 0;
  for (int t = 0; t < 600; t++) {
    rp_problem p;
    random_impact(&p, (uint64_t)t + 777, 0);
    p.nt = 1;
    if (p.nc > 3) p.nc = 3;
    svi_problem_def def = rp_def(&p);
    svi_impact *a = svi_impact_create(def.nv, def.nc, 1), *b = svi_impact_create(def.nv, def.nc, 1);
    svi_impact_set_step_solve(b, 1);
    if (svi_impact_setup(a, &def, NULL, 0) != SVI_OK || svi_impact_setup(b, &def, NULL, 0) != SVI_OK) {
      svi_impact_destroy(a); svi_impact_destroy(b);
      continue;
    }
    CHECK(a->n_patterns > 0 && b->n_patterns == 0, "step solve: maps precomputed only by default");
    double lmax[3];
    for (int i = 0; i < a->nc; i++) lmax[i] = (0.2 + rnd(t, 90 + i)) * svi_impact_reference_impulse(a);
    int na = svi_modes_enumerate(a, a->u0, lmax), nb = svi_modes_enumerate(b, b->u0, lmax);
    compared++;
    multi += na > 1;
    if (na != nb) { count_diff++; goto next; }
    /* compared as velocity changes W lambda: a singular pattern's impulse is not unique */
    for (int k = 0; k < na; k++)
      for (int r = 0; r < a->nb; r++) {
        double da = 0, db = 0;
        for (int j = 0; j < a->nb; j++) {
          da += a->W[r * a->nb + j] * a->sols[k * a->nb + j];
          db += a->W[r * a->nb + j] * b->sols[k * a->nb + j];
        }
        worst = fmax(worst, fabs(da - db) / a->vscale);
      }
  next:
    svi_impact_destroy(a); svi_impact_destroy(b);
  }
  CHECK(compared > 500, "step solve: compared %d problems", compared);
  CHECK(multi > 0, "step solve: %d problems with several outcomes", multi);
  CHECK(count_diff == 0, "step solve: %d of %d problems with another number of outcomes", count_diff, compared);
  CHECK(worst < 1e-9, "step solve: outcomes differ by %.2g of the contact speed", worst);
  printf("step solve vs precomputed maps: %d problems (%d with several outcomes), same counts, "
         "velocity changes within %.2g of the contact speed\n", compared, multi, worst);
  const char* names[] = {"rocking_block", "box_wall", "compass_gait", "ramone"};
  for (int e = 0; e < 4; e++) {
    svi_example ex;
    svi_example_get(names[e], &ex);
    svi_problem_def def = svi_example_problem(&ex);
    svi_impact *a = svi_impact_create(def.nv, def.nc, def.nt), *b = svi_impact_create(def.nv, def.nc, def.nt);
    svi_impact_set_step_solve(b, 1);
    svi_impact_setup(a, &def, NULL, 0);
    svi_impact_setup(b, &def, NULL, 0);
    svi_routh_config c = svi_routh_default_config();
    c.step_abs = ex.h;
    c.max_steps = ex.N;
    double dmax = 0, vmax = 0;
    int both = 0;
    for (uint64_t k = 0; k < 2000; k++) {
      double va[8], vb[8];
      svi_sample_info ia, ib;
      svi_routh_sample(a, &c, NULL, k, va, &ia, NULL, 0, NULL);
      svi_routh_sample(b, &c, NULL, k, vb, &ib, NULL, 0, NULL);
      both += ia.accepted && ib.accepted;
      for (int i = 0; i < def.nv; i++) { dmax = fmax(dmax, fabs(va[i] - vb[i])); vmax = fmax(vmax, fabs(def.v[i])); }
    }
    CHECK(both == 2000 || e >= 2, "%s step solve: %d of 2000 samples accepted by both", names[e], both);
    CHECK(dmax <= 1e-9 * vmax, "%s step solve: samples differ by %.2g (|v-| %.2g)", names[e], dmax, vmax);
    svi_impact_destroy(a); svi_impact_destroy(b);
  }
}

/* the same for spatial contacts (the four-sided pyramid, 19 modes per contact): the outcomes of
 * the mode enumeration all solve (75), and they include every distinct outcome of the
 * complementary-basis enumeration (which skips singular bases, so the modes may find more).
 * Contacts at rest and large mu make non-unique steps (Assumption 6 fails) common. */
/* step k's budgets of problem t's random steps: 1 % to 3 reference impulses, apart per contact */
static void step_budgets(const svi_impact* s, int t, int k, double* lmax) {
  double scale = pow(10, -2 + 2.5 * rnd(t, 80 + k));
  for (int i = 0; i < s->nc; i++) lmax[i] = scale * (0.2 + rnd(t, 90 + 4 * k + i)) * svi_impact_reference_impulse(s);
}

/* The pruning of the directly solved enumerations (svi_modes.c, velocity_bounds) only skips
 * patterns that cannot be feasible: with it and without it the same outcomes come out bit for
 * bit, in the same order, on planar (up to 4 contacts) and spatial (up to 3) steps, from the
 * pre-impact velocity and from the velocity after one step, over budgets from 1 % to 3 reference
 * impulses.  It must also skip something, or it is not being tested. */
static void test_pruning_exact(void) {
  int compared = 0, differ = 0, multi = 0;
  long long with = 0, without = 0;
  for (int t = 0; t < 400; t++) {
    rp_problem p;
    random_impact(&p, (uint64_t)t + 4242, 0);
    p.nt = t % 3 == 2 ? 2 : 1;
    if (p.nt == 2) {
      p.nc = 1 + t % 3;
      for (int i = 0; i < p.nc * 2 * p.nv; i++) p.Jt[i] = 2 * rnd(t, 7000 + i) - 1;
    }
    if (t % 2 == 1)   /* high friction: non-unique steps */
      for (int i = 0; i < p.nc; i++) p.mu[i] = 5 * rnd(t, 7100 + i);
    if (p.nc >= 2 && t % 4 == 1) {   /* contact 1 at rest */
      double vn = 0, jj = 0;
      for (int k = 0; k < p.nv; k++) { vn += p.Jn[p.nv + k] * p.v[k]; jj += p.Jn[p.nv + k] * p.Jn[p.nv + k]; }
      for (int k = 0; k < p.nv; k++) p.v[k] -= vn * p.Jn[p.nv + k] / jj;
    }
    svi_problem_def def = rp_def(&p);
    svi_impact *a = svi_impact_create(def.nv, def.nc, p.nt), *b = svi_impact_create(def.nv, def.nc, p.nt);
    svi_impact_set_step_solve(a, 1);
    svi_impact_set_step_solve(b, 1);
    b->no_prune = 1;
    if (svi_impact_setup(a, &def, NULL, 0) != SVI_OK || svi_impact_setup(b, &def, NULL, 0) != SVI_OK) {
      svi_impact_destroy(a); svi_impact_destroy(b);
      continue;
    }
    int nb = a->nb;
    double lmax[4], u[32];
    memcpy(u, a->u0, sizeof(double) * nb);
    for (int pass = 0; pass < 2; pass++) {
      step_budgets(a, t, pass, lmax);
      long long pa = a->patterns_solved, pb = b->patterns_solved;
      int na = svi_modes_enumerate(a, u, lmax), nbb = svi_modes_enumerate(b, u, lmax);
      with += a->patterns_solved - pa;
      without += b->patterns_solved - pb;
      compared++;
      multi += na > 1;
      if (na != nbb || memcmp(a->sols, b->sols, sizeof(double) * (size_t)(na * nb))) { differ++; break; }
      if (na == 0) break;
      svi_impact_add_w(a, a->sols, u);   /* the second pass starts after the first outcome */
    }
    svi_impact_destroy(a); svi_impact_destroy(b);
  }
  CHECK(compared > 600, "pruning: compared %d steps", compared);
  CHECK(multi > 0, "pruning: %d steps with several outcomes", multi);
  CHECK(differ == 0, "pruning: %d of %d steps came out differently", differ, compared);
  CHECK(with < without / 2, "pruning: solved %lld patterns of %lld", with, without);
  printf("pruning: %d steps (%d with several outcomes) bit-identical with and without; "
         "%lld of %lld patterns solved (%.1f %%)\n", compared, multi, with, without, 100.0 * with / without);
}

/* a random spatial event of one or two contacts (t odd: two) with friction up to 5 */
static void spatial_event(rp_problem* p, int t, uint64_t seed) {
  random_impact(p, (uint64_t)t + seed, 0);
  p->nt = 2;
  p->nc = 1 + t % 2;
  for (int i = 0; i < p->nc * 2 * p->nv; i++) p->Jt[i] = 2 * rnd(t, 7000 + i) - 1;
  for (int i = 0; i < p->nc; i++) p->mu[i] = 5 * rnd(t, 7100 + i);
}

/* a random planar event of one to three contacts (one tangent each) with friction up to 5 */
static void planar_event(rp_problem* p, int t, uint64_t seed) {
  random_impact(p, (uint64_t)t + seed, 0);
  p->nt = 1;
  p->nc = 1 + t % 3;
  for (int i = 0; i < p->nc * p->nv; i++) p->Jt[i] = 2 * rnd(t, 7000 + i) - 1;
  for (int i = 0; i < p->nc; i++) p->mu[i] = 5 * rnd(t, 7100 + i);
}

/* The directly solved enumerations keep each pattern's factor of K for the event (svi_modes.c,
 * mode_factor / mode_solve; up to two spatial or three planar contacts): a step solved with the
 * factors of earlier steps gives the outcomes of the same step solved by a fresh instance, which
 * factors every pattern anew, bit for bit.  Random spatial events of one and two contacts and
 * planar ones of one to three, high friction (non-unique steps), few velocities (singular
 * patterns: the normal-equations path is kept too), five steps each at varied budgets and
 * velocities, every event of a kind set up on the same instance. */
static void test_factor_cache(void) {
  for (int spatial = 0; spatial < 2; spatial++) {
    int compared = 0, differ = 0, multi = 0;
    long long solved = 0, factored = 0, singular = 0;
    const char* kind = spatial ? "spatial" : "planar";
    svi_impact* a = svi_impact_create(RP_NV, 3, 2);   /* one instance for every event: a factor
                                                       * kept from an earlier event would show */
    svi_impact_set_step_solve(a, 1);   /* the direct solve (the maps are tested below) */
    for (int t = 0; t < 300; t++) {
      rp_problem p;
      if (spatial) spatial_event(&p, t, 9191);
      else planar_event(&p, t, 9292);
      svi_problem_def def = rp_def(&p);
      if (svi_impact_setup(a, &def, NULL, 0) != SVI_OK) continue;
      int nb = a->nb;
      double lmax[4], u[32];
      memcpy(u, a->u0, sizeof(double) * nb);
      for (int step = 0; step < 5; step++) {
        step_budgets(a, t, step, lmax);
        svi_impact* b = svi_impact_create(def.nv, def.nc, def.nt);
        svi_impact_set_step_solve(b, 1);
        if (svi_impact_setup(b, &def, NULL, 0) != SVI_OK) { svi_impact_destroy(b); break; }
        long long s0 = a->patterns_solved, f0 = a->patterns_factored;
        int na = svi_modes_enumerate(a, u, lmax), nbb = svi_modes_enumerate(b, u, lmax);
        solved += a->patterns_solved - s0;
        factored += a->patterns_factored - f0;
        singular += b->patterns_singular;
        compared++;
        multi += na > 1;
        int same = na == nbb && !memcmp(a->sols, b->sols, sizeof(double) * (size_t)(na * nb));
        svi_impact_destroy(b);
        if (!same) { differ++; break; }
        if (na == 0) break;
        svi_impact_add_w(a, a->sols + (step % na) * nb, u);   /* on from one of the outcomes */
      }
    }
    svi_impact_destroy(a);
    CHECK(compared > 600, "%s factor cache: compared %d steps", kind, compared);
    CHECK(multi > 0, "%s factor cache: %d steps with several outcomes", kind, multi);
    CHECK(singular > 0, "%s factor cache: %lld singular patterns", kind, singular);
    CHECK(factored < solved / 2, "%s factor cache: %lld of %lld patterns factored", kind, factored, solved);
    CHECK(differ == 0, "%s factor cache: %d of %d steps came out differently", kind, differ, compared);
    printf("%s factor cache: %d steps (%d with several outcomes) bit-identical with a fresh instance; "
           "%lld of %lld patterns factored, %lld singular in the fresh ones\n", kind, compared, multi, factored,
           solved, singular);
  }
}

/* The first step's candidates by budget cell (svi_modes.c, pattern_cells) change no bit: random
 * planar events of one, two and three contacts at high friction, 3000 samples of Algorithm 1
 * each (the table is built at step 1024), on one instance with the table and one without
 * (pattern_cells_off): every sample's v+ the same bits; and the cells must be the path taken
 * (where the CPU has AVX2 and FMA). */
static void test_first_step_cells(void) {
  enum { K = 3000 };
  long long used[4] = {0}, samples = 0;
  int differ = 0, events[4] = {0};
  for (int t = 0; t < 24; t++) {
    rp_problem p;
    planar_event(&p, t, 9393);
    svi_problem_def def = rp_def(&p);
    svi_impact *a = svi_impact_create(def.nv, def.nc, def.nt), *b = svi_impact_create(def.nv, def.nc, def.nt);
    if (!a || !b || svi_impact_setup(a, &def, NULL, 0) != SVI_OK || svi_impact_setup(b, &def, NULL, 0) != SVI_OK) {
      CHECK(0, "cells: setup of event %d", t);
      svi_impact_destroy(a); svi_impact_destroy(b);
      continue;
    }
    b->pattern_cells_off = 1;
    svi_routh_config c = svi_routh_default_config();
    c.seed = 77 + (uint64_t)t;
    for (int k = 0; k < K; k++) {
      double va[RP_NV], vb[RP_NV];
      svi_routh_sample(a, &c, NULL, (uint64_t)k, va, NULL, NULL, 0, NULL);
      svi_routh_sample(b, &c, NULL, (uint64_t)k, vb, NULL, NULL, 0, NULL);
      samples++;
      if (memcmp(va, vb, sizeof(double) * (size_t)def.nv)) { differ++; break; }
    }
    used[def.nc] += a->pattern_cell_steps;
    events[def.nc]++;
    CHECK(b->pattern_cell_steps == 0, "cells: off, yet %lld steps took them", b->pattern_cell_steps);
    svi_impact_destroy(a); svi_impact_destroy(b);
  }
  CHECK(differ == 0, "cells: %d of 24 events gave other bits with the table", differ);
  for (int nc = 1; nc <= 3; nc++)
    CHECK(!svi_have_avx2() || used[nc] > events[nc] * K / 2, "cells: %lld first steps of %d %d-contact events took "
          "their cell's candidates", used[nc], events[nc], nc);
  printf("first-step cells: %lld samples of 24 planar events bit-identical with and without the table; "
         "first steps through it: %lld, %lld, %lld (1, 2, 3 contacts)\n", samples, used[1], used[2], used[3]);
}

/* The spatial pattern maps (svi_modes.c, spatial_fast: up to two contacts, with many samples of
 * one event) against the direct solve of every pattern (svi_impact_set_step_solve): the same
 * outcomes in the same order, each within 1e-9 of the approach speed, over random one- and
 * two-contact events at high friction (non-unique steps) with few velocities (singular
 * patterns, which both solve directly), five steps each; and the maps must be the path taken. */
static void test_spatial_maps_vs_solve(void) {
  int compared = 0, differ = 0, multi = 0, direct = 0, mapped = 0, unmapped = 0;
  double worst = 0;
  for (int t = 0; t < 400; t++) {
    rp_problem p;
    spatial_event(&p, t, 5151);
    svi_problem_def def = rp_def(&p);
    svi_impact *a = svi_impact_create(def.nv, def.nc, 2), *b = svi_impact_create(def.nv, def.nc, 2);
    svi_impact_set_step_solve(b, 1);
    if (svi_impact_setup(a, &def, NULL, 0) != SVI_OK || svi_impact_setup(b, &def, NULL, 0) != SVI_OK) {
      svi_impact_destroy(a); svi_impact_destroy(b);
      continue;
    }
    int nb = a->nb, nv = a->nv;
    double lmax[4], u[32], va[16], vb[16], vref = svi_impact_approach_speed(a);
    memcpy(u, a->u0, sizeof(double) * nb);
    for (int step = 0; step < 5; step++) {
      step_budgets(a, t, step, lmax);
      int na = svi_modes_enumerate(a, u, lmax), nbb = svi_modes_enumerate(b, u, lmax);
      unmapped += !a->smap_ready;
      if (step == 0) { direct += a->smap_direct; mapped += (a->nc == 1 ? 19 : 361) - a->smap_direct; }
      compared++;
      multi += na > 1;
      int same = na == nbb;
      for (int k = 0; k < na && same; k++) {   /* the velocity change each outcome gives */
        memset(va, 0, sizeof(va));
        memset(vb, 0, sizeof(vb));
        svi_impact_g_add(a, a->sols + k * nb, va);
        svi_impact_g_add(b, b->sols + k * nb, vb);
        double dn = 0;
        for (int j = 0; j < nv; j++) dn = fmax(dn, fabs(va[j] - vb[j]));
        worst = fmax(worst, dn / vref);
        same = dn <= 1e-9 * vref * (1 + nv);
      }
      if (!same) { differ++; break; }
      if (na == 0) break;
      svi_impact_add_w(a, a->sols + (step % na) * nb, u);
    }
    svi_impact_destroy(a); svi_impact_destroy(b);
  }
  CHECK(compared > 1000, "maps: compared %d steps", compared);
  CHECK(multi > 0, "maps: %d steps with several outcomes", multi);
  CHECK(differ == 0, "maps: %d of %d steps came out differently", differ, compared);
  CHECK(unmapped == 0, "maps: %d steps not through the maps", unmapped);
  CHECK(mapped > direct, "maps: %d patterns mapped, %d solved directly", mapped, direct);
  printf("spatial maps: %d steps (%d with several outcomes), the direct solve's outcomes, farthest "
         "%.1e of the approach speed; %d patterns mapped, %d singular ones solved directly\n", compared, multi,
         worst, mapped, direct);
}

static void test_spatial_modes_vs_enumeration(void) {
  int invalid = 0, missed = 0, extra = 0, compared = 0, multi = 0;
  for (int t = 0; t < 600; t++) {
    rp_problem p;
    spatial_event(&p, t, 8484);
    if (p.nc == 2 && t % 3 == 0) {   /* contact 1 at rest: it may stick, lift or slide */
      double vn = 0, jj = 0;
      for (int k = 0; k < p.nv; k++) { vn += p.Jn[p.nv + k] * p.v[k]; jj += p.Jn[p.nv + k] * p.Jn[p.nv + k]; }
      for (int k = 0; k < p.nv; k++) p.v[k] -= vn * p.Jn[p.nv + k] / jj;
    }
    svi_problem_def def = rp_def(&p);
    svi_impact* s = svi_impact_create(def.nv, def.nc, 2);
    if (svi_impact_setup(s, &def, NULL, 0) != SVI_OK || svi_impact_approach_speed(s) < 1e-3) {
      svi_impact_destroy(s);
      continue;
    }
    int nc = s->nc, nb = s->nb, nr = s->n_routh;
    double q[32], lmax[2];
    for (int i = 0; i < nc; i++) lmax[i] = (0.2 + rnd(t, 70 + i)) * svi_impact_reference_impulse(s);
    memcpy(q, lmax, sizeof(double) * nc);
    memcpy(q + nc, s->u0, sizeof(double) * nb);
    memset(q + nc + nb, 0, sizeof(double) * nc);
    static double sols[64 * 32];
    int cnt = 0;
    svi_lcp_enumerate(nr, svi_impact_routh(s), q, 1e-10, sols, 64, &cnt);
    double full[64][6];
    int nfull = 0;
    for (int k = 0; k < cnt && k < 64; k++) {   /* outcome: (u_n, u_t1, u_t2) change per contact */
      double du[6] = {0};
      for (int i = 0; i < nc; i++)
        for (int j = 0; j < nb; j++) {
          double l = sols[k * nr + nc + j];
          du[3 * i] += s->W[i * nb + j] * l;
          du[3 * i + 1] += s->W[(nc + 4 * i) * nb + j] * l;
          du[3 * i + 2] += s->W[(nc + 4 * i + 2) * nb + j] * l;
        }
      int dup = 0;
      for (int m = 0; m < nfull && !dup; m++) {
        double d = 0;
        for (int i = 0; i < 3 * nc; i++) d = fmax(d, fabs(full[m][i] - du[i]));
        dup = d < 1e-7 * s->vscale;
      }
      if (!dup) { memcpy(full[nfull], du, sizeof(du)); nfull++; }
    }
    int nm = svi_modes_enumerate(s, s->u0, lmax);
    compared++;
    multi += nm > 1;
    /* every mode outcome solves (75): complete z = [beta; lambda; gamma] and take the residual */
    double mdu[64][6];
    for (int k = 0; k < nm; k++) {
      double z[32] = {0}, up[32];
      memcpy(z + nc, s->sols + k * nb, sizeof(double) * nb);
      memcpy(up, s->u0, sizeof(double) * nb);
      svi_matvec_add(nb, nb, s->W, z + nc, up);
      for (int i = 0; i < nc; i++) {
        double g = 0;
        for (int r = 0; r < 4; r++) g = fmax(g, -up[nc + 4 * i + r]);
        z[i] = up[i] < 0 ? -up[i] : 0;
        z[nc + nb + i] = g;
        mdu[k][3 * i] = up[i] - s->u0[i];
        mdu[k][3 * i + 1] = up[nc + 4 * i] - s->u0[nc + 4 * i];
        mdu[k][3 * i + 2] = up[nc + 4 * i + 2] - s->u0[nc + 4 * i + 2];
      }
      if (svi_lcp_residual_units(nr, svi_impact_routh(s), q, z, s->zunit, s->wunit) > 1e-9) invalid++;
    }
    /* and every outcome of a nonsingular complementary basis is among them */
    for (int m = 0; m < nfull; m++) {
      double best = INFINITY;
      for (int k = 0; k < nm; k++) {
        double d = 0;
        for (int i = 0; i < 3 * nc; i++) d = fmax(d, fabs(mdu[k][i] - full[m][i]));
        best = fmin(best, d);
      }
      if (best > 1e-6 * s->vscale) missed++;
    }
    extra += nm > nfull;
    svi_impact_destroy(s);
  }
  CHECK(compared > 300, "spatial modes: compared %d problems", compared);
  CHECK(invalid == 0, "spatial modes: %d outcomes do not solve the step LCP (75)", invalid);
  CHECK(missed == 0, "spatial modes: %d basis-enumeration outcomes missed", missed);
  CHECK(multi > 10, "spatial modes: %d problems with several outcomes were exercised", multi);
  printf("spatial modes: %d problems compared, %d with several step outcomes, %d with outcomes that "
         "only singular bases give\n", compared, multi, extra);
}

/* Why ENUMERATE exists for spatial contacts: on random 3-contact spatial steps with two contacts
 * at rest and mu up to 5, 64 random-perturbation Lemke draws miss step outcomes that the mode
 * enumeration finds (the 3-D counterpart of the compass gait's sliding branch). */
static void test_spatial_random_lemke_misses(void) {
  int steps = 0, multi = 0, missed = 0;
  for (int t = 0; t < 150; t++) {
    rp_problem p;
    random_impact(&p, (uint64_t)t + 555, 0);
    p.nt = 2;
    p.nc = 3;
    for (int i = 0; i < p.nc * p.nv; i++) p.Jn[i] = 2 * rnd(t, 8000 + i) - 1;
    for (int i = 0; i < p.nc * 2 * p.nv; i++) p.Jt[i] = 2 * rnd(t, 7000 + i) - 1;
    for (int i = 0; i < p.nc; i++) p.mu[i] = 5 * rnd(t, 7100 + i);
    for (int c = 1; c < p.nc; c++) {   /* contacts 1, 2 at rest */
      double vn = 0, jj = 0;
      for (int k = 0; k < p.nv; k++) { vn += p.Jn[c * p.nv + k] * p.v[k]; jj += p.Jn[c * p.nv + k] * p.Jn[c * p.nv + k]; }
      for (int k = 0; k < p.nv; k++) p.v[k] -= vn * p.Jn[c * p.nv + k] / jj;
    }
    svi_problem_def def = rp_def(&p);
    svi_impact* s = svi_impact_create(def.nv, def.nc, 2);
    if (svi_impact_setup(s, &def, NULL, 0) != SVI_OK || svi_impact_approach_speed(s) < 1e-3) {
      svi_impact_destroy(s);
      continue;
    }
    double lmax[3];
    for (int i = 0; i < s->nc; i++) lmax[i] = (0.2 + rnd(t, 70 + i)) * svi_impact_reference_impulse(s);
    int n = svi_modes_enumerate(s, s->u0, lmax);
    unsigned long long reached = random_reach(s, s->u0, lmax, n, 64);
    steps++;
    multi += n > 1;
    for (int m = 0; m < n; m++) missed += !(reached >> m & 1);
    svi_impact_destroy(s);
  }
  printf("spatial 3-contact steps: %d, %d non-unique, %d outcomes missed by 64 random Lemke draws\n",
         steps, multi, missed);
  CHECK(multi > 10 && missed > 0,
        "random Lemke reaches every outcome of %d non-unique spatial steps (documents why ENUMERATE "
        "is needed; %d missed)", multi, missed);
}

static void test_determinism(void) {
  svi_example ex;
  svi_example_get("box_wall", &ex);
  set a = approximate(&ex, 5000, 1, 9), b = approximate(&ex, 5000, 2, 9), c = approximate(&ex, 5000, 2, 9);
  set d = approximate(&ex, 5000, 2, 10);
  CHECK(!memcmp(a.V, b.V, sizeof(double) * 5000 * 3) && !memcmp(a.acc, b.acc, 5000),
        "1 and 2 threads give bit-identical sets");
  CHECK(!memcmp(b.V, c.V, sizeof(double) * 5000 * 3), "same seed, bit-identical set");
  CHECK(memcmp(b.V, d.V, sizeof(double) * 5000 * 3) != 0, "another seed, another set");
  /* 3 and 7 threads split the range across the 256-sample batches of Sobol budgets; every sample
   * must also equal the same sample evaluated alone (budgets by svi_sobol_point) */
  set e3 = approximate(&ex, 5000, 3, 9), e7 = approximate(&ex, 5000, 7, 9);
  CHECK(!memcmp(a.V, e3.V, sizeof(double) * 5000 * 3) && !memcmp(a.V, e7.V, sizeof(double) * 5000 * 3) &&
        !memcmp(a.acc, e3.acc, 5000) && !memcmp(a.acc, e7.acc, 5000),
        "1, 3 and 7 threads give bit-identical sets");
  {
    svi_problem_def def = svi_example_problem(&ex);
    svi_approx_config cfg = paper_config(&ex, 5000);
    cfg.routh.seed = 9;
    svi_impact* s1 = svi_impact_create(def.nv, def.nc, def.nt);
    svi_impact_setup(s1, &def, NULL, 0);
    svi_sobol so;
    svi_sobol_init(&so, def.nc * ex.N, cfg.routh.seed);
    int same = 0;
    for (long long k = 0; k < 5000; k += 97) {
      double v[3];
      svi_sample_info info;
      svi_routh_run(s1, &cfg.routh, &so, (uint64_t)k, 0, a.st.eps / (3 * a.st.psi), v, &info, NULL, 0, NULL);
      same += !memcmp(v, a.V + k * 3, sizeof(v)) && info.accepted == a.acc[k];
    }
    CHECK(same == 52, "Algorithm 2's batched samples equal the samples evaluated alone: %d of 52", same);
    /* the batch generator against the direct evaluation, across the 2^k carries */
    uint32_t rows[300 * 20];
    svi_sobol_points(&so, 1000, 300, rows);
    int eq = 1;
    for (int m = 0; m < 300; m++)
      for (int j = 0; j < so.dim; j++)
        eq &= svi_sobol_value(rows[m * so.dim + j]) == svi_sobol_point(&so, 1000 + (uint64_t)m, j);
    CHECK(eq, "incremental Sobol points equal svi_sobol_point");
    /* across a carry of all 32 bits read (2^32 - 1 to 2^32) and of higher bits (not read) */
    svi_sobol_points(&so, 0xffffff00ULL, 300, rows);
    for (int m = 0; m < 300; m++)
      for (int j = 0; j < so.dim; j++)
        eq &= svi_sobol_value(rows[m * so.dim + j]) == svi_sobol_point(&so, 0xffffff00ULL + (uint64_t)m, j);
    CHECK(eq, "incremental Sobol points equal svi_sobol_point across 2^32");
    svi_impact_destroy(s1);
  }
  free_set(&a); free_set(&b); free_set(&c); free_set(&d); free_set(&e3); free_set(&e7);
  svi_impact* s = svi_impact_create(3, 2, 1);
  svi_problem_def def = svi_example_problem(&ex);
  svi_impact_setup(s, &def, NULL, 0);
  svi_routh_config cf = svi_routh_default_config();
  cf.branch = SVI_BRANCH_RANDOM;
  double v1[3], v2[3];
  svi_routh_sample(s, &cf, NULL, 17, v1, NULL, NULL, 0, NULL);
  svi_routh_sample(s, &cf, NULL, 3, v2, NULL, NULL, 0, NULL);
  svi_routh_sample(s, &cf, NULL, 17, v2, NULL, NULL, 0, NULL);
  CHECK(!memcmp(v1, v2, sizeof(v1)), "a sample depends only on (seed, index)");
  svi_impact_destroy(s);
}

/* The step loop tracks the contact velocity u = Jbar v and takes each step's u' from the step's
 * residual (which formed u + W lambda_bar) or adds W lambda_bar itself.  After every sample, u must
 * be Jbar v+ of the returned v+ = v- + G Lambda to rounding: a u' taken from the wrong solution
 * (a stale residual) would be off by a whole step's W lambda_bar. */
static void test_tracked_velocity(void) {
  const svi_branch rules[4] = {SVI_BRANCH_AUTO, SVI_BRANCH_LEMKE, SVI_BRANCH_RANDOM, SVI_BRANCH_ENUMERATE};
  int checked = 0, bad = 0;
  double worst = 0;
  for (int e = 0; e < svi_example_count(); e++) {
    svi_example ex;
    svi_impact* s = make(svi_example_name(e), &ex);
    double y[3 * SVI_EX_MAX_NC], v[SVI_EX_MAX_NV], u0 = 0;   /* the examples are planar: nb = 3 nc */
    svi_matvec(s->nb, s->nv, s->Jbar, ex.v, y);
    for (int i = 0; i < s->nb; i++) u0 = fmax(u0, fabs(y[i]));
    for (int r = 0; r < 4; r++) {
      svi_routh_config c = svi_routh_default_config();
      c.step_abs = ex.h;
      c.max_steps = ex.N;
      c.branch = rules[r];
      for (uint64_t k = 0; k < 300; k++) {
        if (svi_routh_sample(s, &c, NULL, k, v, NULL, NULL, 0, NULL) < 0) continue;
        svi_matvec(s->nb, s->nv, s->Jbar, v, y);
        double d = 0;
        for (int i = 0; i < s->nb; i++) d = fmax(d, fabs(y[i] - s->u[i]));
        worst = fmax(worst, d / u0);
        bad += !(d <= 1e-9 * u0);
        checked++;
      }
    }
    svi_impact_destroy(s);
  }
  CHECK(checked > 6000 && bad == 0, "tracked u = Jbar v+ after every sample: %d of %d off, worst %.1e of the speed",
        bad, checked, worst);
}

static void test_bad_input(void) {
  svi_example ex;
  svi_example_get("rocking_block", &ex);
  svi_impact* s = svi_impact_create(3, 2, 1);
  char err[256];
  svi_problem_def def = svi_example_problem(&ex);
  ex.M[0] = NAN;
  CHECK(svi_impact_setup(s, &def, err, sizeof(err)) == SVI_ERR_NONFINITE && strstr(err, "NaN"), "NaN: %s", err);
  svi_example_get("rocking_block", &ex);
  ex.M[0] = -1;
  CHECK(svi_impact_setup(s, &def, err, sizeof(err)) == SVI_ERR_NOT_SPD, "non-SPD: %s", err);
  svi_example_get("rocking_block", &ex);
  ex.M[1] = 0.5;
  CHECK(svi_impact_setup(s, &def, err, sizeof(err)) == SVI_ERR_NOT_SPD && strstr(err, "symmetric"), "asymmetric: %s", err);
  svi_example_get("rocking_block", &ex);
  ex.mu[1] = -0.1;
  CHECK(svi_impact_setup(s, &def, err, sizeof(err)) == SVI_ERR_NEG_MU && strstr(err, "mu[1]"), "mu < 0: %s", err);
  svi_example_get("rocking_block", &ex);
  svi_problem_def big = def;
  big.nc = 3;
  CHECK(svi_impact_setup(s, &big, err, sizeof(err)) == SVI_ERR_CAPACITY, "capacity: %s", err);
  big = def;
  big.nt = 0;
  CHECK(svi_impact_setup(s, &big, err, sizeof(err)) == SVI_ERR_ARG, "nt = 0: %s", err);
  big = def;
  big.Jn = NULL;
  CHECK(svi_impact_setup(s, &big, err, sizeof(err)) == SVI_ERR_ARG, "NULL Jn: %s", err);
  CHECK(svi_impact_setup(NULL, &def, err, sizeof(err)) == SVI_ERR_ARG, "NULL workspace");
  CHECK(svi_impact_create(0, 1, 1) == NULL && svi_impact_create(3, 2, 3) == NULL, "bad capacities");
  svi_approx_config c = svi_approx_default_config();
  c.samples = 0;
  double v[3];
  CHECK(svi_approximate(&def, &c, v, NULL, NULL, NULL) == SVI_ERR_ARG, "zero samples");
  CHECK(svi_impact_setup(s, &def, err, sizeof(err)) == SVI_OK, "valid problem after errors");
  svi_impact_destroy(s);
}

/* A pile: one event of 8 boxes in a bin (27 spatial contacts, nv = 48; tests/data), where Lemke's
 * plain path on (31) ends on a basis whose solution fails the physical residual.  The
 * simultaneous law and the (31) finish of Algorithm 1 re-solve with perturbed paths
 * (svi_ap_lemke) and must return valid outcomes: no energy gain, nothing approaching. */
static void test_ap_pile(const char* dir) {
  char path[512];
  snprintf(path, sizeof(path), "%s/bin_pile_event.txt", dir);
  FILE* f = fopen(path, "r");
  CHECK(f != NULL, "pile: cannot open %s", path);
  if (!f) return;
  char line[256];
  long pos = 0;
  while (fgets(line, sizeof(line), f) && line[0] == '#') pos = ftell(f);
  fseek(f, pos, SEEK_SET);
  int nv = 0, nc = 0, nt = 0;
  int ok = fscanf(f, "%d %d %d", &nv, &nc, &nt) == 3 && nv > 0 && nv <= 64 && nc > 0 && nc <= 32 && nt == 2;
  size_t n = (size_t)nv * nv + (size_t)nc * nv + (size_t)2 * nc * nv + (size_t)nc + (size_t)nv;
  double* buf = ok ? malloc(sizeof(double) * n) : NULL;
  for (size_t i = 0; ok && i < n; i++) ok = fscanf(f, "%lf", &buf[i]) == 1;
  fclose(f);
  CHECK(ok, "pile: malformed %s", path);
  if (!ok) { free(buf); return; }
  double *M = buf, *Jn = M + nv * nv, *Jt = Jn + nc * nv, *mu = Jt + 2 * nc * nv, *v = mu + nc;
  svi_problem_def def = {nv, nc, nt, M, Jn, Jt, mu, v};
  svi_impact* s = svi_impact_create(nv, nc, nt);
  CHECK(svi_impact_setup(s, &def, NULL, 0) == SVI_OK, "pile: setup");

  /* the premise: the plain path alone is rejected */
  memcpy(s->q, s->u0, sizeof(double) * s->nb);
  memset(s->q + s->nb, 0, sizeof(double) * nc);
  svi_lcp_options o = svi_impact_lcp_options(s, NULL, 0);
  svi_lcp_info li;
  int plain = svi_impact_lemke(s, 0, s->q, NULL, NULL, NULL, &o, s->z, &li);
  double plain_res = li.residual;

  double vout[64];
  int st = svi_law_simultaneous(s, NULL, vout, &li);
  double ke = svi_impact_kinetic_energy(s, vout), ke0 = svi_impact_kinetic_energy(s, v);
  CHECK(st >= 0 && li.residual <= 1e-9, "pile: simultaneous law status %d, residual %.2g", st, li.residual);
  CHECK(st >= 0 && ke <= ke0 * (1 + 1e-12), "pile: simultaneous law gains energy (%.6g -> %.6g)", ke0, ke);
  double vn[32], vmin = INFINITY;
  svi_impact_normal_velocity(s, vout, vn);
  for (int i = 0; i < nc; i++) vmin = fmin(vmin, vn[i]);
  CHECK(st >= 0 && vmin >= -10 * svi_impact_sep_tol(s), "pile: simultaneous law leaves a contact "
        "approaching at %.3g m/s", vmin);

  /* Algorithm 1 with the (31) finish, as the plugin runs it: every sample an outcome (accepted,
   * or terminated by (31)), none handed back as v- after failing every attempt */
  svi_routh_config c = svi_routh_default_config();
  int valid = 0, finished_ap = 0, retried = 0, bad = 0, K = 32;
  for (int k = 0; k < K; k++) {
    svi_sample_info info;
    svi_routh_sample(s, &c, NULL, (uint64_t)k, vout, &info, NULL, 0, NULL);
    int outcome = info.status == SVI_OK && (info.accepted || info.finish == SVI_FINISH_AP);
    valid += outcome;
    finished_ap += info.finish == SVI_FINISH_AP;
    retried += info.sample_retries > 0;
    svi_impact_normal_velocity(s, vout, vn);
    double m = INFINITY;
    for (int i = 0; i < nc; i++) m = fmin(m, vn[i]);
    bad += outcome && (svi_impact_kinetic_energy(s, vout) > ke0 * (1 + 1e-12) || m < -10 * svi_impact_sep_tol(s));
  }
  CHECK(valid == K, "pile: %d of %d Algorithm 1 samples are outcomes", valid, K);
  CHECK(bad == 0, "pile: %d samples gain energy or still approach", bad);
  printf("pile (27 spatial contacts, nv 48): plain Lemke on (31) status %d (residual %.2g); "
         "simultaneous law status %d, residual %.2g, KE %.4g -> %.4g J; Algorithm 1: %d of %d "
         "outcomes (%d finished with (31), %d re-run)\n", plain, plain_res, st, li.residual, ke0, ke,
         valid, K, finished_ap, retried);
  svi_impact_destroy(s);
  free(buf);
}

int main(int argc, char** argv) {
  test_rocking_block();
  test_box_wall();
  test_compass_gait();
  test_disk_stack();
  test_ramone();
  test_zeno();
  test_random_problems();
  test_lemma8();
  test_modes_vs_enumeration();
  test_step_solve_same_set();
  test_ap_pile(argc > 1 ? argv[1] : SVI_TEST_DATA);
  test_pruning_exact();
  test_spatial_modes_vs_enumeration();
  test_factor_cache();
  test_first_step_cells();
  test_spatial_maps_vs_solve();
  test_spatial_random_lemke_misses();
  test_determinism();
  test_tracked_velocity();
  test_bad_input();
  return svi_test_finish();
}
