/* test_mj_step.c -- svi.impact inside MuJoCo's own entry points (DESIGN.md section 3): mj_step,
 * mj_forward (repeated), mj_step1/mj_step2, mj_copyData, mj_resetData(Keyframe),
 * mj_getState/mj_setState, many mjData per model, every integrator and cone, disabled passive
 * forces, and what svi.impact hands back to MuJoCo (flex contacts, sleeping bodies, a full
 * contact buffer). */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "svi/svi_mujoco.h"
#include "svi_test.h"

static char tmpdir[256] = "/tmp";

static const char* write_model(const char* name, const char* xml) {
  static char path[512];
  snprintf(path, sizeof(path), "%s/%s.xml", tmpdir, name);
  FILE* f = fopen(path, "w");
  fputs(xml, f);
  fclose(f);
  return path;
}

static mjModel* load(const char* name, const char* xml) {
  char err[1000];
  mjModel* m = svi_load_xml(write_model(name, xml), err, sizeof(err));
  if (!m) fprintf(stderr, "load %s: %s\n", name, err);
  return m;
}

/* the rocking block of the paper (planar, two corner contacts), options spliced in */
static mjModel* block(const char* option, const char* config) {
  char xml[4096];
  snprintf(xml, sizeof(xml),
    "<mujoco><option timestep='0.001' %s/>"
    "<extension><plugin plugin='svi.impact'><instance name='svi'>"
    "<config key='step_abs' value='0.3'/>%s</instance></plugin></extension><worldbody>"
    "<geom type='plane' size='5 5 .1' gap='0.001'/>"
    "<body pos='0 0 1.0012'><joint type='slide' axis='1 0 0'/><joint type='slide' axis='0 0 1'/>"
    "<joint type='hinge' axis='0 1 0'/><inertial pos='0 0 0' mass='1' diaginertia='.41667 .41667 .41667'/>"
    "<geom type='sphere' size='0.001' pos='-.5 0 -1' gap='0.001' friction='1'/>"
    "<geom type='sphere' size='0.001' pos='.5 0 -1' gap='0.001' friction='1'/>"
    "</body></worldbody><keyframe><key name='impact' qpos='0 0 0' qvel='0.1 -0.4429 0.05'/></keyframe></mujoco>",
    option, config);
  return load("block", xml);
}

static int same_state(const mjModel* m, const mjData* a, const mjData* b) {
  return a->time == b->time && !memcmp(a->qpos, b->qpos, sizeof(mjtNum) * m->nq) &&
         !memcmp(a->qvel, b->qvel, sizeof(mjtNum) * m->nv) &&
         !memcmp(a->plugin_state, b->plugin_state, sizeof(mjtNum) * m->npluginstate);
}

static int same_log(const svi_instance* a, const svi_instance* b) {
  if (svi_event_count(a) != svi_event_count(b)) return 0;
  for (int i = 0; i < svi_event_count(a); i++)
    if (memcmp(svi_event_get(a, i), svi_event_get(b, i), sizeof(svi_event))) return 0;
  return 1;
}

/* the last step in which an impact was resolved: before it, d is the pre-impact state */
static void step_to_impact(const mjModel* m, mjData* d, mjData* before) {
  svi_instance* in = svi_instance_of(m, d);
  long long n0 = svi_instance_counters(in).events;
  while (d->time < 1) {
    mj_copyData(before, m, d);
    mj_step(m, d);
    if (svi_instance_counters(in).events > n0) return;
  }
}

/* --- mj_forward: resolves an impact as mj_step would; repeated, it changes nothing --------------- */
static void test_forward(void) {
  mjModel* m = block("", "");
  mjData *d = mj_makeData(m), *pre = mj_makeData(m), *a = mj_makeData(m), *b = mj_makeData(m);
  mj_resetDataKeyframe(m, d, 0);
  step_to_impact(m, d, pre);
  /* a: mj_forward (a paused viewer, ten frames), then mj_step;  b: mj_step */
  mj_copyData(a, m, pre);
  mj_copyData(b, m, pre);
  mj_forward(m, a);
  mjtNum v1[3];
  memcpy(v1, a->qvel, sizeof(v1));
  svi_instance* ia = svi_instance_of(m, a);
  int n1 = svi_event_count(ia);
  svi_event e1 = *svi_event_get(ia, n1 - 1);
  for (int k = 0; k < 10; k++) mj_forward(m, a);
  CHECK(!memcmp(v1, a->qvel, sizeof(v1)) && svi_event_count(ia) == n1 &&
        !memcmp(&e1, svi_event_get(ia, n1 - 1), sizeof(e1)),
        "mj_forward x 10 at the impact state: qvel and the log unchanged after the first");
  CHECK(memcmp(v1, pre->qvel, sizeof(v1)) != 0, "the first mj_forward resolved the impact");
  mj_step(m, a);
  mj_step(m, b);
  CHECK(same_state(m, a, b) && same_log(ia, svi_instance_of(m, b)),
        "mj_forward then mj_step = mj_step, bit for bit (state, plugin state, log)");
  /* mj_step1 / mj_step2 = mj_step */
  mjData* c = mj_makeData(m);
  mj_copyData(c, m, pre);
  mj_step1(m, c);
  mj_step2(m, c);
  CHECK(same_state(m, c, b), "mj_step1 + mj_step2 = mj_step");
  /* after the impact step no contact approaches, and MuJoCo's solver added no second impulse */
  const svi_event* e = svi_event_get(svi_instance_of(m, b), svi_event_count(svi_instance_of(m, b)) - 1);
  double vmin = 0;
  for (int k = 0; k < e->ncontact; k++) vmin = fmin(vmin, e->vn_after[k]);
  CHECK(vmin > -1e-9 && e->native_impulse < 0.05 * e->impulse_normal,
        "impact step: min J_n v+ %g, MuJoCo's impulse %g vs the law's %g N s", vmin, e->native_impulse, e->impulse_normal);
  mj_deleteData(c);
  mj_deleteData(d); mj_deleteData(pre); mj_deleteData(a); mj_deleteData(b);
  mj_deleteModel(m);
}

/* --- mj_copyData, mj_resetData, mj_resetDataKeyframe, mj_getState/mj_setState --------------- */
static void test_state(void) {
  mjModel* m = block("", "");
  mjData *a = mj_makeData(m), *b = mj_makeData(m);
  mj_resetDataKeyframe(m, a, 0);
  /* copy before the impact, mid-run: both continue identically, each with its own log */
  mj_step(m, a);
  mj_copyData(b, m, a);
  for (int i = 0; i < 800; i++) { mj_step(m, a); mj_step(m, b); }
  svi_instance *ia = svi_instance_of(m, a), *ib = svi_instance_of(m, b);
  CHECK(svi_event_count(ia) >= 1 && same_state(m, a, b) && same_log(ia, ib) && ia != ib,
        "mj_copyData before the impact: both runs identical (%d events)", svi_event_count(ia));
  /* a copy made after events carries the log (deep copy) */
  mjData* c = mj_copyData(NULL, m, a);
  CHECK(c && same_log(ia, svi_instance_of(m, c)) && svi_instance_of(m, c) != ia, "mj_copyData(NULL) copies the log");
  mj_deleteData(c);

  /* reset: the touching list and counter go; the same run again finds the same first impact */
  svi_event first = *svi_event_get(ia, 0);
  mj_resetDataKeyframe(m, a, 0);
  CHECK(svi_event_count(ia) == 0 && a->plugin_state[1] == 0, "mj_resetDataKeyframe clears the log and the touching list");
  for (int i = 0; i < 801; i++) mj_step(m, a);
  CHECK(svi_event_count(ia) >= 1 && !memcmp(&first, svi_event_get(ia, 0), sizeof(first)),
        "after mj_resetDataKeyframe the first impact is detected again, identically");
  /* a reset in the middle of resting contact, then a new drop: the impact is not missed */
  mj_resetData(m, b);
  b->qpos[1] = 0.01;   /* 1 cm above the floor */
  long long e0 = svi_instance_counters(ib).events;
  for (int i = 0; i < 200; i++) mj_step(m, b);
  CHECK(svi_instance_counters(ib).events > e0 && svi_instance_counters(ib).resets >= 1,
        "mj_resetData while resting, then a drop: the impact is detected (%lld events)", svi_instance_counters(ib).events - e0);

  /* getState/setState with mjSTATE_INTEGRATION round-trips, also into a fresh mjData */
  int size = mj_stateSize(m, mjSTATE_INTEGRATION);
  mjtNum* s = malloc(sizeof(mjtNum) * (size_t)size);
  mj_resetDataKeyframe(m, a, 0);
  mj_getState(m, a, s, mjSTATE_INTEGRATION);
  for (int i = 0; i < 500; i++) mj_step(m, a);
  mjData* f = mj_makeData(m);
  mj_setState(m, f, s, mjSTATE_INTEGRATION);
  for (int i = 0; i < 500; i++) mj_step(m, f);
  CHECK(same_state(m, a, f), "mj_setState(mjSTATE_INTEGRATION) into a fresh mjData: the run continues bit-identically");
  /* and mid-contact (after the impact, touching list non-empty) */
  mj_getState(m, a, s, mjSTATE_INTEGRATION);
  CHECK(a->plugin_state[1] > 0, "the touching list is part of the state (%g contacts)", a->plugin_state[1]);
  for (int i = 0; i < 300; i++) mj_step(m, a);
  mj_setState(m, f, s, mjSTATE_INTEGRATION);
  long long ef = svi_instance_counters(svi_instance_of(m, f)).events;
  for (int i = 0; i < 300; i++) mj_step(m, f);
  CHECK(same_state(m, a, f) && svi_instance_counters(svi_instance_of(m, f)).events == ef + (svi_instance_counters(ia).events - svi_instance_counters(ia).events),
        "mj_setState mid-contact: identical continuation, no spurious impact");
  free(s);
  mj_deleteData(f);
  mj_deleteData(a); mj_deleteData(b);
  mj_deleteModel(m);
}

/* --- many mjData per model: each its own instance and log; made and freed without leaks -------- */
static void test_many_data(void) {
  mjModel* m = block("", "");
  enum { N = 8 };
  mjData* d[N];
  for (int i = 0; i < N; i++) {
    d[i] = mj_makeData(m);
    mj_resetDataKeyframe(m, d[i], 0);
    svi_set_seed(svi_instance_of(m, d[i]), (uint64_t)(i % 2) + 1);
  }
  for (int t = 0; t < 300; t++) for (int i = 0; i < N; i++) mj_step(m, d[i]);
  int ok = 1;
  for (int i = 0; i < N; i++) {
    svi_instance* in = svi_instance_of(m, d[i]);
    ok &= svi_event_count(in) >= 1 && svi_event_get(in, 0)->seed == (uint64_t)(i % 2) + 1;
    ok &= same_state(m, d[i], d[i % 2]);
  }
  CHECK(ok, "%d mjData of one model: own logs and seeds, same seed same bits", N);
  for (int i = 0; i < N; i++) mj_deleteData(d[i]);
  /* 300 mjData made, stepped through an impact and freed (the sanitizer build checks for leaks;
   * an address MuJoCo reuses gets a fresh instance) */
  int all = 1;
  for (int i = 0; i < 300; i++) {
    mjData* x = mj_makeData(m);
    mj_resetDataKeyframe(m, x, 0);
    for (int t = 0; t < 5; t++) mj_step(m, x);
    all &= svi_event_count(svi_instance_of(m, x)) == 1;
    mj_deleteData(x);
  }
  CHECK(all, "300 mjData made and freed: each resolves its own first impact");
  mj_deleteModel(m);
}

/* --- integrators and cones ------------------------------------------------------------------- */
static void test_integrators(void) {
  const char* opts[] = {"integrator='Euler'", "integrator='implicit'", "integrator='implicitfast'",
                        "integrator='discrete'", "cone='elliptic'", "cone='pyramidal'",
                        "integrator='implicitfast' cone='elliptic'"};
  svi_event ref;
  memset(&ref, 0, sizeof(ref));
  for (size_t k = 0; k < sizeof(opts) / sizeof(opts[0]); k++) {
    mjModel* m = block(opts[k], "");
    if (!m) { CHECK(0, "model with %s", opts[k]); continue; }
    mjData* d = mj_makeData(m);
    mj_resetDataKeyframe(m, d, 0);
    int nan = 0;
    for (int i = 0; i < 1500; i++) {
      mj_step(m, d);
      for (int j = 0; j < m->nv; j++) nan |= !isfinite(d->qvel[j]);
    }
    svi_instance* in = svi_instance_of(m, d);
    const svi_event* e = svi_event_count(in) ? svi_event_get(in, 0) : NULL;
    double vmin = 0;
    for (int c = 0; e && c < e->ncontact; c++) vmin = fmin(vmin, e->vn_after[c]);
    CHECK(e && !nan && vmin > -1e-9 && e->native_impulse < 0.05 * e->impulse_normal && d->qpos[1] > -0.01,
          "%s: impact resolved (min J_n v+ %g, MuJoCo adds %g of %g N s), block stays above the floor (%g)",
          opts[k], vmin, e ? e->native_impulse : -1, e ? e->impulse_normal : -1, d->qpos[1]);
    /* the law does not depend on MuJoCo's integrator or cone: the same outcome */
    if (e && k == 0) ref = *e;
    if (e && k > 0)
      CHECK(!memcmp(ref.vn_after, e->vn_after, sizeof(ref.vn_after)) && !strcmp(ref.cls, e->cls),
            "%s: the same outcome as Euler (%s vs %s)", opts[k], e->cls, ref.cls);
    mj_deleteData(d);
    mj_deleteModel(m);
  }
  /* RK4 switched on after the model was made (refused at compile time: test_plugin): said once,
   * impacts left to MuJoCo, never stepped with another integrator */
  mjModel* m = block("", "");
  mjData* d = mj_makeData(m);
  mj_resetDataKeyframe(m, d, 0);
  m->opt.integrator = mjINT_RK4;
  for (int i = 0; i < 200; i++) mj_step(m, d);
  svi_instance* in = svi_instance_of(m, d);
  CHECK(svi_instance_counters(in).events == 0 && svi_instance_counters(in).unsupported > 0 &&
        strstr(svi_instance_message(in), "RK4") && isfinite(d->qvel[1]),
        "integrator switched to RK4: reported ('%s'), impacts left to MuJoCo", svi_instance_message(in));
  mj_deleteData(d);
  mj_deleteModel(m);
}

/* --- passive forces disabled: MuJoCo skips the hook; the user is told ----------------------- */
static void test_passive_disabled(void) {
  mjModel* m = block("><flag spring='disable' damper='disable'/></option><option", "");
  if (!m) { CHECK(0, "model with passive forces disabled"); return; }
  mjData* d = mj_makeData(m);
  mj_resetDataKeyframe(m, d, 0);
  svi_instance* in = svi_instance_of(m, d);
  CHECK(strstr(svi_instance_message(in), "passive forces are disabled") != NULL, "said at mj_makeData: '%s'",
        svi_instance_message(in));
  for (int i = 0; i < 100; i++) mj_step(m, d);
  CHECK(svi_instance_counters(in).events == 0 && svi_instance_counters(in).unsupported == 100,
        "no impact resolved, every step counted as unsupported");
  mj_deleteData(d);
  mj_deleteModel(m);
}

/* --- what svi.impact leaves to MuJoCo: flex contacts, sleeping bodies, a full contact buffer -- */
static int finite_state(const mjModel* m, const mjData* d) {
  for (int i = 0; i < m->nq; i++) if (!isfinite(d->qpos[i])) return 0;
  for (int i = 0; i < m->nv; i++) if (!isfinite(d->qvel[i])) return 0;
  return 1;
}

static void test_left_to_mujoco(void) {
  /* a cloth (flex) and a ball fall onto the floor: the ball's impact is resolved, the cloth's
   * contacts stay with MuJoCo's solver, said once */
  mjModel* m = load("flex",
    "<mujoco><option timestep='0.001'/><extension><plugin plugin='svi.impact'><instance name='svi'/>"
    "</plugin></extension><worldbody><geom type='plane' size='5 5 .1' gap='0.002'/>"
    "<body name='holder' pos='0 0 0.05'><flexcomp name='cloth' type='grid' count='3 3 1' spacing='.05 .05 .05' dim='2'"
    " radius='.005' mass='0.1'><edge equality='true'/><contact gap='0.002'/></flexcomp></body>"
    "<body pos='1 0 0.1'><freejoint/><geom type='sphere' size='0.05' gap='0.002'/></body>"
    "</worldbody></mujoco>");
  if (m) {
    mjData* d = mj_makeData(m);
    for (int i = 0; i < 500; i++) mj_step(m, d);
    svi_instance* in = svi_instance_of(m, d);
    CHECK(finite_state(m, d) && svi_instance_counters(in).events >= 1 &&
          strstr(svi_instance_message(in), "flex contacts are left to MuJoCo") != NULL,
          "flex: the ball's impact resolved, flex contacts left to MuJoCo ('%s')", svi_instance_message(in));
    mj_deleteData(d);
    mj_deleteModel(m);
  } else {
    CHECK(0, "flex model");
  }

  /* sleeping: a box settles and falls asleep, then a ball lands on it */
  m = load("sleep",
    "<mujoco><option timestep='0.002'><flag sleep='enable'/></option><extension><plugin plugin='svi.impact'>"
    "<instance name='svi'/></plugin></extension><worldbody><geom type='plane' size='5 5 .1' gap='0.002'/>"
    "<body pos='0 0 0.1'><freejoint/><geom type='box' size='.1 .1 .1' gap='0.002'/></body>"
    "<body pos='0 0 1.5'><freejoint/><geom type='sphere' size='0.05' gap='0.002'/></body>"
    "</worldbody></mujoco>");
  if (m) {
    mjData* d = mj_makeData(m);
    int asleep = 0;
    for (int i = 0; i < 1500; i++) {
      mj_step(m, d);
      asleep |= d->body_awake[1] == mjS_ASLEEP;
    }
    svi_instance* in = svi_instance_of(m, d);
    int resolved = 0;
    for (int i = 0; i < svi_event_count(in); i++) resolved += svi_event_get(in, i)->ncontact >= 1;
    printf("sleep: box asleep at some point: %d; %lld events, %lld left to MuJoCo; message '%s'\n", asleep,
           svi_instance_counters(in).events, svi_instance_counters(in).fallbacks, svi_instance_message(in));
    CHECK(finite_state(m, d) && d->qpos[9] > 0.1, "sleeping box hit by a ball: finite, the ball rests on top (z %g)", d->qpos[9]);
    CHECK(svi_instance_counters(in).events >= 1 || strstr(svi_instance_message(in), "sleeping"),
          "the ball's impact is resolved, or said to be left to MuJoCo");
    mj_deleteData(d);
    mj_deleteModel(m);
  } else {
    CHECK(0, "sleep model");
  }

  /* a full arena: three boxes land flat with too little memory for their constraint rows */
  m = load("full",
    "<mujoco><size memory='16K'/><option timestep='0.001'/><extension><plugin plugin='svi.impact'>"
    "<instance name='svi'/></plugin></extension><worldbody><geom type='plane' size='5 5 .1' gap='0.003'/>"
    "<body pos='0 0 .06'><freejoint/><geom type='box' size='.1 .1 .05' gap='0.003'/></body>"
    "<body pos='0.3 0 .06'><freejoint/><geom type='box' size='.1 .1 .05' gap='0.003'/></body>"
    "<body pos='-0.3 0 .06'><freejoint/><geom type='box' size='.1 .1 .05' gap='0.003'/></body></worldbody></mujoco>");
  if (m) {
    mjData* d = mj_makeData(m);
    for (int i = 0; i < 300; i++) mj_step(m, d);
    svi_instance* in = svi_instance_of(m, d);
    int full = d->warning[mjWARN_CONTACTFULL].number + d->warning[mjWARN_CNSTRFULL].number;
    CHECK(full > 0 && finite_state(m, d) && strstr(svi_instance_message(in), "buffer is full"),
          "a full contact/constraint buffer (%d MuJoCo warnings): finite state, said ('%s')", full, svi_instance_message(in));
    mj_deleteData(d);
    mj_deleteModel(m);
  } else {
    CHECK(0, "memory model");
  }
}

/* --- MuJoCo's own reset of a diverging simulation: the instance follows ------------------------ */
static void test_divergence_reset(const char* data) {
  char path[600], err[1000];
  snprintf(path, sizeof(path), "%s/diverging.xml", data);
  mjModel* m = svi_load_xml(path, err, sizeof(err));
  if (!m) { CHECK(0, "%s", err); return; }
  mjData* d = mj_makeData(m);
  svi_instance* in = svi_instance_of(m, d);
  long long resets0 = svi_instance_counters(in).resets;
  int warned = 0;
  long long steps = 0;
  while (!warned && steps < 100000) {
    mj_step(m, d);
    steps++;
    warned = d->warning[mjWARN_BADQACC].number > 0;
  }
  svi_counters c = svi_instance_counters(in);
  CHECK(warned && c.resets == resets0 + 1 && svi_event_count(in) == 0 && d->plugin_state[1] == 0 &&
        d->time <= m->opt.timestep && c.events >= 1,
        "MuJoCo's reset after divergence (step %lld): the instance's touching list and log are cleared "
        "with it (resets %lld, log %d, touching %g, t %g), after %lld impact events", steps, c.resets - resets0,
        svi_event_count(in), d->plugin_state[1], d->time, c.events);
  /* the run starts over from qpos0 and finds its first impact again */
  long long e0 = c.events;
  for (int i = 0; i < 200; i++) mj_step(m, d);
  CHECK(svi_instance_counters(in).events > e0, "after MuJoCo's reset the first impact is detected again");
  mj_deleteData(d);
  mj_deleteModel(m);
}

/* A box sliding down a ramp whose geoms have no gap (margin + gap < band): MuJoCo reports the
 * pair's contacts only while they penetrate, and sliding lifts a corner by tens of micrometres
 * for a few milliseconds.  svi.impact says so at mj_makeData and keeps the unreported contact as
 * touching while the pair stays within the band: such a model gets about the events of the same
 * model with a gap (before: 10x as many, each a corner "landing" again while sliding). */
static int ramp_events(const char* gap, double* first, char* message, size_t n) {
  char xml[2048];
  snprintf(xml, sizeof(xml),
    "<mujoco><option timestep='0.001'/>"
    "<extension><plugin plugin='svi.impact'><instance name='svi'><config key='seed' value='5'/>"
    "</instance></plugin></extension><worldbody>"
    "<geom name='floor' type='plane' size='3 2 .1' gap='%s'/>"
    "<geom name='ramp' type='box' pos='0 0 .5' size='1 .5 .02' euler='0 20 0' friction='.2' gap='%s'/>"
    "<geom name='wall' type='box' pos='1.2 0 .3' size='.05 .5 .3' gap='%s'/>"
    "<body pos='-.6 0 .95' euler='0 20 0'><freejoint/>"
    "<geom name='box' type='box' size='.1 .1 .1' mass='1' friction='.2' gap='%s'/></body>"
    "</worldbody></mujoco>", gap, gap, gap, gap);
  mjModel* m = load("ramp", xml);
  if (!m) return -1;
  mjData* d = mj_makeData(m);
  svi_instance* in = svi_instance_of(m, d);
  snprintf(message, n, "%s", svi_instance_message(in));
  *first = -1;
  for (int i = 0; i < 3000; i++) {
    mj_step(m, d);
    if (*first < 0 && svi_instance_counters(in).events) *first = d->time;
  }
  int events = (int)svi_instance_counters(in).events;
  mj_deleteData(d);
  mj_deleteModel(m);
  return events;
}

static void test_gapless(void) {
  double t_gap, t_nogap;
  char msg_gap[800], msg_nogap[800];
  int with_gap = ramp_events("0.0025", &t_gap, msg_gap, sizeof(msg_gap));
  int without = ramp_events("0", &t_nogap, msg_nogap, sizeof(msg_nogap));
  printf("ramp: %d impact events without a gap, %d with one; first at t = %.4f, %.4f\n", without, with_gap,
         t_nogap, t_gap);
  CHECK(strstr(msg_nogap, "no contact band") && strstr(msg_nogap, "'floor' and 'box'") &&
        !strstr(msg_gap, "no contact band"),
        "a gapless colliding pair is named at mj_makeData, a model with gaps is not: '%s'", msg_nogap);
  CHECK(with_gap > 0 && without > 0 && without <= 2 * with_gap,
        "box sliding down a ramp: %d impact events without a gap, %d with one", without, with_gap);
  CHECK(fabs(t_nogap - t_gap) < 0.003, "the landing on the ramp is the first event either way (t %.4f, %.4f)",
        t_nogap, t_gap);
}

int main(int argc, char** argv) {
  if (argc > 1) snprintf(tmpdir, sizeof(tmpdir), "%s", argv[1]);
  const char* data = argc > 2 ? argv[2] : "tests/data";
  test_divergence_reset(data);
  test_forward();
  test_state();
  test_many_data();
  test_integrators();
  test_passive_disabled();
  test_left_to_mujoco();
  test_gapless();
  return svi_test_finish();
}
