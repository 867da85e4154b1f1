/* test_restitution.c -- the propagative law (restitution) inside mj_step, on the bundled models:
 * Newton's cradles (T1 through MuJoCo), the unequal-mass cradle (T2), the billiard break (xi = 0 at
 * theta = pi/2), the bouncing ball (heights e^2 per bounce until it rests), friction (the impact is
 * frictionless), and the legged robot's simultaneous touchdown. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "svi/svi_mujoco.h"
#include "svi_test.h"

static char models[512] = "models";

static mjModel* load(const char* file) {
  char path[700], err[1000];
  snprintf(path, sizeof(path), "%s/%s", models, file);
  mjModel* m = svi_load_xml(path, err, sizeof(err));
  if (!m) fprintf(stderr, "%s\n", err);
  return m;
}

static void start(const mjModel* m, mjData* d, const char* key) {
  mj_resetDataKeyframe(m, d, mj_name2id(m, mjOBJ_KEY, key));
}

static double kinetic(const mjModel* m, mjData* d, const double* v) {
  double* Mv = malloc(sizeof(double) * (size_t)m->nv);
  mj_mulM(m, d, Mv, v);
  double e = 0;
  for (int i = 0; i < m->nv; i++) e += 0.5 * v[i] * Mv[i];
  free(Mv);
  return e;
}

/* the first event's post-impact qvel for a seed, exactly as svi_event_resample would give it */
static void outcome(svi_instance* in, const mjModel* m, mjData* scratch, uint64_t seed, double* v) {
  svi_event_preview(in, m, scratch, 0, seed, SVI_LAW_PROPAGATIVE, v);
}

/* --- T1: equal-mass cradles, e = 1: the end ball leaves with the striker's speed, every order -- */
static void test_cradle(const char* file, int n) {
  mjModel* m = load(file);
  if (!m) { CHECK(0, "load %s", file); return; }
  mjData* d = mj_makeData(m);
  start(m, d, "touch");   /* contacts exactly closed: the impact at the paper's geometry */
  svi_instance* in = svi_instance_of(m, d);
  while (svi_event_count(in) == 0 && d->time < 0.1) mj_step(m, d);
  CHECK(svi_event_count(in) == 1 && svi_event_get(in, 0)->ncontact == n - 1,
        "%s: one event with all %d contacts", file, n - 1);
  if (svi_event_count(in) == 0) { mj_deleteData(d); mj_deleteModel(m); return; }
  double v0[8], v[8];
  mjData* scratch = mj_makeData(m);
  svi_problem_def def;   /* v- of the event, and the mass matrix at its state */
  svi_event_problem(in, m, scratch, 0, &def);
  memcpy(v0, def.v, sizeof(double) * (size_t)n);
  double ke0 = kinetic(m, scratch, v0);
  int ok = 1;
  double worst = 0, ke_err = 0;
  for (uint64_t seed = 1; seed <= 32; seed++) {
    outcome(in, m, scratch, seed, v);
    for (int i = 0; i < n - 1; i++) worst = fmax(worst, fabs(v[i]));
    worst = fmax(worst, fabs(v[n - 1] - v0[0]));
    ke_err = fmax(ke_err, fabs(kinetic(m, scratch, v) - ke0) / ke0);
    ok &= svi_last_preview(in)->fallback == 0;
  }
  mj_deleteData(scratch);
  CHECK(ok && worst < 1e-12 && ke_err < 1e-12,
        "%s: 32 orders, end ball leaves at the striker's %.4f rad/s, others at rest (max error %.1e), "
        "energy conserved (%.1e)", file, v0[0], worst, ke_err);
  /* on: the last ball swings out and back, the first leaves again */
  while (d->time < 1.2) mj_step(m, d);
  svi_counters c = svi_instance_counters(in);
  CHECK(c.events >= 3 && c.fallbacks == 0, "%s: the cradle keeps going (%lld impacts in 1.2 s)", file, c.events);
  mj_deleteData(d);
  mj_deleteModel(m);
}

/* --- T2: unequal masses (1, 2, 1.5), v- = (1, 0, -1): exactly the digest's two outcomes ---------- */
static void test_unequal(void) {
  mjModel* m = load("cradle_unequal.xml");
  if (!m) { CHECK(0, "load cradle_unequal"); return; }
  mjData* d = mj_makeData(m);
  start(m, d, "impact");
  svi_instance* in = svi_instance_of(m, d);
  while (svi_event_count(in) == 0 && d->time < 0.1) mj_step(m, d);
  const double uvu[3] = {-0.904761904761905, -0.476190476190476, 0.904761904761905};
  const double vuv[3] = {-1.476190476190476, 0.176870748299320, 0.414965986394558};
  int n_uvu = 0, n_vuv = 0, other = 0;
  mjData* sc = mj_makeData(m);
  for (uint64_t seed = 1; seed <= 40; seed++) {
    double v[3];
    outcome(in, m, sc, seed, v);
    double e1 = 0, e2 = 0;
    for (int i = 0; i < 3; i++) { e1 = fmax(e1, fabs(v[i] - uvu[i])); e2 = fmax(e2, fabs(v[i] - vuv[i])); }
    if (e1 < 1e-9) n_uvu++;
    else if (e2 < 1e-9) n_vuv++;
    else { other++; fprintf(stderr, "unexpected outcome (%g, %g, %g)\n", v[0], v[1], v[2]); }
  }
  CHECK(n_uvu > 0 && n_vuv > 0 && other == 0,
        "unequal cradle: exactly the two outcomes uvu (%d seeds) and vuv (%d seeds), no other (%d)", n_uvu, n_vuv, other);
  mj_deleteData(sc);
  /* the whole set through the core on the event's problem: the same two */
  mjData* scratch = mj_makeData(m);
  svi_problem_def def;
  int nc = svi_event_problem(in, m, scratch, 0, &def);
  svi_impact* s = svi_impact_create(def.nv, nc, def.nt);
  svi_propagative* w = svi_propagative_create(def.nv, nc, 0);
  svi_impact_setup(s, &def, NULL, 0);
  svi_propagative_config pc = svi_propagative_default_config();
  double set[8 * 3];
  svi_propagative_set_info info;
  svi_propagative_all(w, s, &pc, set, NULL, 8, &info);
  CHECK(info.count == 2 && info.exhaustive && info.xi > 0.1,
        "unequal cradle: the set has %d outcomes (exhaustive %d), xi = %.4f", info.count, info.exhaustive, info.xi);
  svi_propagative_destroy(w);
  svi_impact_destroy(s);
  mj_deleteData(scratch);
  mj_deleteData(d);
  mj_deleteModel(m);
}

/* --- billiard break: unique at theta = pi/2, two outcomes at 2 pi/3 ---------------------------- */
static void test_billiard(void) {
  mjModel* m = load("billiard_break.xml");
  if (!m) { CHECK(0, "load billiard_break"); return; }
  const char* keys[3] = {"theta90", "impact", "rack"};
  for (int k = 0; k < 3; k++) {
    mjData* d = mj_makeData(m);
    start(m, d, keys[k]);
    svi_instance* in = svi_instance_of(m, d);
    while (svi_event_count(in) == 0 && d->time < 0.1) mj_step(m, d);
    mjData* sc = mj_makeData(m);
    double v1[6], v[6], spread = 0;
    outcome(in, m, sc, 1, v1);
    for (uint64_t seed = 2; seed <= 24; seed++) {
      outcome(in, m, sc, seed, v);
      double dv[6], Mdv[6], e = 0;
      for (int i = 0; i < 6; i++) dv[i] = v[i] - v1[i];
      mj_mulM(m, d, Mdv, dv);
      for (int i = 0; i < 6; i++) e += dv[i] * Mdv[i];
      spread = fmax(spread, sqrt(e) / sqrt(2 * svi_event_get(in, 0)->ke_before));
    }
    /* pi/2 up to the keyframe's 1e-9 m overlap, which turns the normals by ~2e-8 rad */
    if (k == 0) CHECK(spread < 1e-6, "billiard, theta = pi/2: one outcome for every order (spread %.1e)", spread);
    if (k == 1) CHECK(fabs(spread - 0.559) < 0.005, "billiard, theta = 2 pi/3: xi = %.4f (digest: 0.559)", spread);
    if (k == 2) CHECK(svi_event_get(in, 0)->ncontact == 3 && fabs(spread - 0.750) < 0.005,
                      "billiard rack, theta = pi/3: 3 contacts (%d), xi = %.4f (digest: 0.750)",
                      svi_event_get(in, 0)->ncontact, spread);
    mj_deleteData(sc);
    mj_deleteData(d);
  }
  mj_deleteModel(m);
}

/* --- the bouncing ball: heights e^2 per bounce, then rest -------------------------------------- */
static void test_bouncing_ball(void) {
  mjModel* m = load("bouncing_ball.xml");
  if (!m) { CHECK(0, "load bouncing_ball"); return; }
  mjData* d = mj_makeData(m);
  start(m, d, "drop");
  svi_instance* in = svi_instance_of(m, d);
  const double e = svi_instance_config(in)->restitution, r = 0.05;
  double h[64], vin[64], apex = d->qpos[2] - r;
  int nb = 0, nv = 0;
  long long seen = 0;
  h[nb++] = apex;
  apex = 0;
  while (d->time < 6) {
    mj_step(m, d);
    apex = fmax(apex, d->qpos[2] - r);
    if (svi_instance_counters(in).events > seen) {   /* an impact: the apex since the last one */
      seen = svi_instance_counters(in).events;
      if (seen > 1 && nb < 64) h[nb++] = apex;
      if (nv < 64) vin[nv++] = -svi_event_get(in, svi_event_count(in) - 1)->vn_before[0];
      apex = 0;
    }
  }
  /* each impact returns e v-, so the next approach speed is e times this one and the next apex
   * e^2 times this one -- up to the time step: the impact is resolved up to v dt below the surface
   * and semi-implicit Euler shifts a flight's landing speed by up to g dt, so the speed ratio is
   * e within 2 g dt / v, and an apex h moves by O(v dt / h) (3 % at 2 cm here) */
  int ok_v = 1, ok_h = 1, checked = 0;
  for (int k = 1; k < nv && k < nb; k++) {
    if (h[k] < 0.02) break;
    double rv = vin[k] / vin[k - 1], rh = h[k] / h[k - 1];
    checked++;
    double tol_v = 1e-3 + 2 * 9.81 * m->opt.timestep / vin[k];
    if (fabs(rv - e) > tol_v) { ok_v = 0; fprintf(stderr, "impact %d: approach speed ratio %.4f\n", k, rv); }
    if (fabs(rh - e * e) > 0.03 * e * e) { ok_h = 0; fprintf(stderr, "bounce %d: height %.5f, ratio %.4f\n", k, h[k], rh); }
  }
  printf("bouncing ball: %d impacts; heights", (int)seen);
  for (int k = 0; k < nb && k < 10; k++) printf(" %.4f", h[k]);
  printf(" m ...\n");
  CHECK(checked >= 6 && ok_v, "bouncing ball: %d bounces above 2 cm, each approach e = %.2f times the previous (within 2 g dt / v)", checked, e);
  CHECK(checked >= 6 && ok_h, "bouncing ball: each bounce e^2 = %.2f of the previous height (3%%)", e * e);
  long long events = svi_instance_counters(in).events;
  for (int i = 0; i < 2000; i++) mj_step(m, d);
  CHECK(svi_instance_counters(in).events == events && fabs(d->qvel[2]) < 0.01 && fabs(d->qpos[2] - r) < 0.002,
        "bouncing ball: at rest on the floor after %lld impacts (z %.4f, vz %.2e)", events, d->qpos[2], d->qvel[2]);
  /* landing while sliding at 1 m/s on mu = 0.5: the impact is frictionless, the horizontal speed is
   * unchanged by it; MuJoCo's friction acts only while the ball stays in contact */
  start(m, d, "slide");
  long long e0 = svi_instance_counters(in).events;
  double vx = 0;
  while (svi_instance_counters(in).events == e0 && d->time < 1) { vx = d->qvel[0]; mj_step(m, d); }
  const svi_event* ev = svi_event_get(in, svi_event_count(in) - 1);
  CHECK(ev && fabs(ev->impulse[0][1]) + fabs(ev->impulse[0][2]) == 0,
        "sliding landing: no friction impulse in the impact (%g, %g)", ev ? ev->impulse[0][1] : -1, ev ? ev->impulse[0][2] : -1);
  CHECK(fabs(d->qvel[0] - vx) < 1e-9 && d->qvel[2] > 0,
        "sliding landing: horizontal speed %.6f before, %.6f after the impact step; it bounces (vz %.3f)",
        vx, d->qvel[0], d->qvel[2]);
  mj_deleteData(d);
  mj_deleteModel(m);
}

/* --- the legged robot: tail and foot land at once; the set has more than one outcome ------------ */
static void test_trex(void) {
  mjModel* m = load("trex.xml");
  if (!m) { CHECK(0, "load trex"); return; }
  mjData* d = mj_makeData(m);
  start(m, d, "impact");
  svi_instance* in = svi_instance_of(m, d);
  while (svi_event_count(in) == 0 && d->time < 0.1) mj_step(m, d);
  const svi_event* ev = svi_event_get(in, 0);
  CHECK(ev && ev->ncontact == 2 && ev->napproach == 2, "trex: tail and foot land in one event");
  mjData* scratch = mj_makeData(m);
  svi_problem_def def;
  int nc = svi_event_problem(in, m, scratch, 0, &def);
  svi_impact* s = svi_impact_create(def.nv, nc > 0 ? nc : 1, 2);
  svi_propagative* w = svi_propagative_create(def.nv, nc > 0 ? nc : 1, 0);
  double c[4] = {0};
  svi_propagative_set_info info = {0};
  if (nc == 2 && svi_impact_setup(s, &def, NULL, 0) == SVI_OK) {
    svi_normal_coupling(s, c);
    svi_propagative_config pc = svi_propagative_default_config();
    double set[16 * 7];
    svi_propagative_all(w, s, &pc, set, NULL, 16, &info);
  }
  printf("trex: coupling c_12 = %.4f, %d outcomes, xi = %.4f\n", c[1], info.count, info.xi);
  CHECK(fabs(c[1]) > 0.005 && info.count == 2 && info.xi > 1e-3,
        "trex: coupled normals (c = %.3f): two outcomes, xi = %.4f", c[1], info.xi);
  int nan = 0;
  for (int i = 0; i < 2000; i++) {
    mj_step(m, d);
    for (int k = 0; k < m->nv; k++) nan |= !isfinite(d->qvel[k]);
  }
  svi_counters cnt = svi_instance_counters(in);
  CHECK(!nan && cnt.max_energy_ratio <= 1 + 1e-9, "trex: 1 s of bouncing, %lld impacts, KE ratio <= %.12f",
        cnt.events, cnt.max_energy_ratio);
  svi_propagative_destroy(w);
  svi_impact_destroy(s);
  mj_deleteData(scratch);
  mj_deleteData(d);
  mj_deleteModel(m);
}

int main(int argc, char** argv) {
  if (argc > 1) snprintf(models, sizeof(models), "%s", argv[1]);
  test_cradle("cradle_3.xml", 3);
  test_cradle("cradle_5.xml", 5);
  test_unequal();
  test_billiard();
  test_bouncing_ball();
  test_trex();
  return svi_test_finish();
}
