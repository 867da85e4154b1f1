// test_models.c -- every MJCF model in models/ loads in MuJoCo and matches its documentation.
//
//   test_models <models-dir> <plugin-dir>
//
// A C host as users write one: it links MuJoCo alone and loads svi.impact at run time with
// mj_loadAllPluginLibraries(<plugin-dir>).  Before that, a model that declares svi.impact must
// fail to compile with MuJoCo's own message naming the plugin (docs/usage.md shows it).
// For every models/*.xml and models/scenes/*.xml: mj_loadXML succeeds; the model declares one
// svi.impact instance whose config values are allowed; from qpos0 and from every keyframe, 2 s
// of plain mj_step, with the plugin and with the plugin removed through mjSpec (native MuJoCo),
// stay finite with no MuJoCo warning and no body ends below the floor.  Models with a known contact geometry (the paper's
// examples and our own) must, from the keyframe "impact", report exactly the expected contacts at
// the start and have all of them at the expected points at one step within the first 0.05 s.  The
// expected points are computed here from the paper's parameters, not read from the model.
// The six paper models are also checked against the exact planar reference problems of the core
// (svi_examples.c): mass matrix, contact normal and tangent Jacobians (at qpos0, where the contacts
// touch exactly), pre-impact velocity (keyframes "impact" and "touch"), friction coefficient,
// Routh step h and trajectory length N.

#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mujoco/mujoco.h>

#include "svi_test.h"

#include <svi/svi_core.h>

#define MAX_MODELS 64
#define MAX_EXPECT 128
#define NAME_LEN 256

static const double kPi = 3.14159265358979323846;

static const double kRunTime = 2.0;          // s of native simulation per initial state
static const double kContactWindow = 0.05;   // s in which the expected contacts must appear
static const double kPosTol = 1e-3;          // m, contact point vs expected point

//---------------------------------- paper examples ------------------------------------------------

// Appendix A (Tables 4-8) and Section 4.3: what the models must declare
typedef struct {
  const char* name;
  int nv;
  double mu;         // friction at every paper contact
  double h;          // Routh step, N s (svi.step_abs)
  int N;             // trajectory length (svi.max_steps)
} paper_example;

static const paper_example kPaper[] = {
  {"rocking_block", 3, 1.0,   0.3,  10},
  {"box_wall",      3, 1.0,   2.0,  5},
  {"compass_gait",  4, 5.0,   0.25, 5},
  {"disk_stack",    9, 1.7320508075688772, 1.0, 10},
  {"ramone",        7, 1e5,   1.0,  10},
  {"zeno_block",    3, 1.0,   0.3,  10},
};
#define N_PAPER ((int)(sizeof(kPaper)/sizeof(kPaper[0])))

// every model the task list asks for; a missing one fails the test
static const char* const kRequired[] = {
  "rocking_block", "box_wall", "compass_gait", "disk_stack", "ramone", "zeno_block",
  "block_flat_3d", "newtons_cradle", "rimless_wheel", "plate_4", "plate_25",
};
#define N_REQUIRED ((int)(sizeof(kRequired)/sizeof(kRequired[0])))

static const paper_example* find_paper(const char* name) {
  for (int i=0; i < N_PAPER; i++) {
    if (!strcmp(kPaper[i].name, name)) return kPaper + i;
  }
  return NULL;
}

// planar (paper x, y) -> MuJoCo (x, 0, z)
static void put_xz(double p[3], double x, double y) {
  p[0] = x;
  p[1] = 0;
  p[2] = y;
}

// RAMone's two foot contacts in paper order (lead, trail), from Table 7 and notes section 3.5
static void ramone_contacts(double p[2][3]) {
  const double s1 = 0.137675, l2 = 0.2, l3 = 0.2385, deg = kPi/180;   // contact below the foot disc
  const double th = 16*deg, al = -70*deg, bl = -2*deg, at = 70*deg;
  double leg_ht = l3*cos(th + al + bl) + l2*cos(th + al);
  double back_knee = leg_ht - l2*cos(th + at);
  double bt = -at - th + asin(back_knee/l3) - kPi/2;
  double alpha[2] = {al, at}, beta[2] = {bl, bt};
  double hip_x = s1*sin(th);       // trunk at x = 0; R(a) (0, -l) = (l sin a, -l cos a)
  for (int i=0; i < 2; i++) {
    double x = hip_x + l2*sin(th + alpha[i]) + l3*sin(th + alpha[i] + beta[i]);
    put_xz(p[i], x, 0);
  }
}

// Expected contact points of a model at its "impact" keyframe, in the paper's contact order where
// there is one; 0 = no expectation for this model.  Points that move with the model (plates) are
// read from the support geoms at the current state d.
static int expected_contacts(const char* name, const mjModel* m, const mjData* d,
                             double p[MAX_EXPECT][3]) {
  if (!strcmp(name, "rocking_block") || !strcmp(name, "zeno_block")) {
    put_xz(p[0], -0.5, 0);                              // A, B: bottom corners of the 1 x 2 block
    put_xz(p[1],  0.5, 0);
    return 2;
  }
  if (!strcmp(name, "box_wall")) {
    double th = 80*kPi/180, c = cos(th), s = sin(th);
    double xr = 0.5*(c + s);                            // rightmost corner offset = -x of centre
    put_xz(p[0], -xr + 0.5*(s - c), 0);                 // A on the floor
    put_xz(p[1], 0, xr + 0.5*(s - c));                  // B on the wall x = 0
    return 2;
  }
  if (!strcmp(name, "compass_gait")) {
    put_xz(p[0], -2*sin(78*kPi/180), 0);                // leading foot
    put_xz(p[1], 0, 0);                                 // trailing foot
    return 2;
  }
  if (!strcmp(name, "disk_stack")) {
    double h = 1 + sqrt(3)/2;
    put_xz(p[0], 0, 0);                                 // A floor / left
    put_xz(p[1], 2, 0);                                 // B floor / right
    put_xz(p[2], 0.5, h);                               // C top / left
    put_xz(p[3], 1.5, h);                               // D top / right
    put_xz(p[4], 1, 1);                                 // E left / right
    return 5;
  }
  if (!strcmp(name, "ramone")) {
    double q[2][3];
    ramone_contacts(q);
    memcpy(p, q, sizeof(q));
    return 2;
  }
  if (!strcmp(name, "block_flat_3d")) {
    for (int i=0; i < 4; i++) {                         // bottom corners of the 0.2 x 0.2 box
      p[i][0] = (i & 1) ? 0.1 : -0.1;
      p[i][1] = (i & 2) ? 0.1 : -0.1;
      p[i][2] = 0;
    }
    return 4;
  }
  if (!strcmp(name, "newtons_cradle")) {
    for (int i=0; i < 4; i++) {                         // equators between neighbouring balls
      put_xz(p[i], -0.06 + 0.04*i, 0.2);
    }
    return 4;
  }
  if (!strcmp(name, "rimless_wheel")) {
    double a = kPi/8, g = 0.08, s = sin(a);             // +-l sin(alpha) along the downhill tangent
    put_xz(p[0], -s*cos(g),  s*sin(g));
    put_xz(p[1],  s*cos(g), -s*sin(g));
    return 2;
  }
  if (!strncmp(name, "plate_", 6)) {
    int n = 0;
    for (int g=0; g < m->ngeom && n < MAX_EXPECT; g++) {
      const char* gname = mj_id2name(m, mjOBJ_GEOM, g);
      if (gname && !strncmp(gname, "support_", 8)) {    // lowest point of each support sphere
        p[n][0] = d->geom_xpos[3*g];
        p[n][1] = d->geom_xpos[3*g + 1];
        p[n][2] = d->geom_xpos[3*g + 2] - m->geom_size[3*g];
        n++;
      }
    }
    return n;
  }
  return 0;
}

//---------------------------------- helpers -------------------------------------------------------

static int cmp_names(const void* a, const void* b) {
  return strcmp((const char*)a, (const char*)b);
}

static int ends_with(const char* s, const char* suffix) {
  size_t ls = strlen(s), lx = strlen(suffix);
  return ls >= lx && !strcmp(s + ls - lx, suffix);
}

static int all_finite(const mjtNum* x, int n) {
  for (int i=0; i < n; i++) {
    if (!isfinite(x[i])) return 0;
  }
  return 1;
}

static double dist3(const double* a, const double* b) {
  double dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
  return sqrt(dx*dx + dy*dy + dz*dz);
}

// contact index of d within tol of point p, or -1
static int contact_at(const mjData* d, const double p[3], double tol) {
  for (int i=0; i < d->ncon; i++) {
    if (dist3(d->contact[i].pos, p) <= tol) return i;
  }
  return -1;
}

// how many of the n expected points have a contact of d within tol
static int matched_points(const mjData* d, double p[MAX_EXPECT][3], int n, double tol) {
  int k = 0;
  for (int i=0; i < n; i++) {
    if (contact_at(d, p[i], tol) >= 0) k++;
  }
  return k;
}

// a config value of the model's plugin instance 0, NULL if absent
static const char* config_text(const mjModel* m, const char* key) {
  const char* v = m->nplugin ? mj_getPluginConfig(m, 0, key) : NULL;
  return v && v[0] ? v : NULL;
}

// value of a numeric config key, or NAN if absent
static double config_number(const mjModel* m, const char* key) {
  const char* v = config_text(m, key);
  return v ? strtod(v, NULL) : NAN;
}

//---------------------------------- checks --------------------------------------------------------

// The config keys, their type and the least the value must satisfy, checked here independently of
// the plugin's own parser (plugin/mujoco/svi_config.c, docs/usage.md), which compiling the model
// already ran.
typedef enum { KEY_POSITIVE, KEY_NONNEG, KEY_COUNT, KEY_NATURAL } key_rule;
typedef struct { const char* name; key_rule rule; } numeric_key;

static const numeric_key kNumericKeys[] = {
  {"step", KEY_POSITIVE}, {"step_abs", KEY_NONNEG}, {"max_steps", KEY_COUNT},
  {"seed", KEY_NATURAL}, {"friction_dirs", KEY_COUNT}, {"window", KEY_NONNEG},
  {"impact_speed", KEY_NONNEG}, {"band", KEY_NONNEG}, {"pseudo_impulse", KEY_NONNEG},
  {"max_contacts", KEY_COUNT}, {"log_events", KEY_COUNT}, {"restitution", KEY_NONNEG},
};
typedef struct { const char* name; const char* const* choices; int n; } text_key;
static const char* const kLaws[] = {"setvalued", "simultaneous", "sequential", "native", "propagative"};
static const char* const kBranches[] = {"auto", "lemke", "random", "enumerate"};
static const char* const kSplits[] = {"groups", "off"};
static const text_key kTextKeys[] = {
  {"law", kLaws, 5}, {"branch", kBranches, 4}, {"split", kSplits, 2},
};

static void check_extension(const char* name, const mjModel* m) {
  const mjpPlugin* p = m->nplugin == 1 ? mjp_getPluginAtSlot(m->plugin[0]) : NULL;
  CHECK(p && !strcmp(p->name, "svi.impact"), "%s: declares %d plugin instances (%s), want one svi.impact",
        name, (int)m->nplugin, p ? p->name : "none");
  if (!p) return;
  for (int i=0; i < p->nattribute; i++) {
    const char* key = p->attributes[i];
    const char* value = config_text(m, key);
    if (!value) continue;
    const text_key* tk = NULL;
    const numeric_key* nk = NULL;
    for (size_t k=0; k < sizeof(kTextKeys)/sizeof(kTextKeys[0]); k++) {
      if (!strcmp(key, kTextKeys[k].name)) tk = kTextKeys + k;
    }
    for (size_t k=0; k < sizeof(kNumericKeys)/sizeof(kNumericKeys[0]); k++) {
      if (!strcmp(key, kNumericKeys[k].name)) nk = kNumericKeys + k;
    }
    CHECK(tk || nk, "%s: config key %s unknown to this test", name, key);
    if (tk) {
      int ok = 0;
      for (int k=0; k < tk->n; k++) ok |= !strcmp(value, tk->choices[k]);
      CHECK(ok, "%s: %s = \"%s\" is not an allowed value", name, key, value);
    }
    if (nk) {
      char* end = NULL;
      double x = strtod(value, &end);
      int ok = end != value && !*end && isfinite(x);
      if (nk->rule == KEY_POSITIVE) ok = ok && x > 0;
      if (nk->rule == KEY_NONNEG) ok = ok && x >= 0;
      if (nk->rule == KEY_COUNT) ok = ok && x >= 1 && x == floor(x);
      if (nk->rule == KEY_NATURAL) ok = ok && x >= 0 && x == floor(x);
      CHECK(ok, "%s: %s = \"%s\" out of range", name, key, value);
    }
  }
  CHECK(isnan(config_number(m, "step")) || isnan(config_number(m, "step_abs")),
        "%s: step and step_abs both given", name);
}

// the paper's h and N as config step_abs / max_steps, and the pre-impact keyframes
static void check_paper_settings(const char* name, const mjModel* m, const paper_example* ex) {
  double h = config_number(m, "step_abs"), N = config_number(m, "max_steps");
  CHECK(h == ex->h, "%s: step_abs = %g, paper h = %g", name, h, ex->h);
  CHECK(N == ex->N, "%s: max_steps = %g, paper N = %d", name, N, ex->N);
  CHECK(m->nv == ex->nv, "%s: nv = %d, paper %d dofs", name, (int)m->nv, ex->nv);
  CHECK(mj_name2id(m, mjOBJ_KEY, "impact") >= 0, "%s: no keyframe \"impact\"", name);
  CHECK(mj_name2id(m, mjOBJ_KEY, "touch") >= 0, "%s: no keyframe \"touch\"", name);
}

// from the "impact" keyframe (or qpos0): exactly the expected contacts at the start, and all
// of them at once within kContactWindow; the paper's friction at each
static void check_contacts(const char* name, const mjModel* m, mjData* d) {
  int key = mj_name2id(m, mjOBJ_KEY, "impact");
  if (key >= 0) mj_resetDataKeyframe(m, d, key);
  else mj_resetData(m, d);
  mj_forward(m, d);

  double p[MAX_EXPECT][3];
  int n = expected_contacts(name, m, d, p);
  if (n == 0) return;
  CHECK(n >= 2, "%s: %d expected contacts, want at least 2", name, n);
  CHECK(d->ncon == n, "%s: %d contacts at the start, expected %d", name, d->ncon, n);

  int best = 0, steps = (int)ceil(kContactWindow/m->opt.timestep);
  for (int s=0; s <= steps && best < n; s++) {
    if (s) mj_step(m, d);
    int k = matched_points(d, p, n, kPosTol);
    if (k > best) best = k;
    if (k == n) {
      const paper_example* ex = find_paper(name);
      for (int i=0; ex && i < n; i++) {
        const mjContact* c = d->contact + contact_at(d, p[i], kPosTol);
        CHECK(fabs(c->friction[0] - ex->mu) <= 1e-12*ex->mu,
              "%s: contact %d friction %g, paper mu %g", name, i, c->friction[0], ex->mu);
      }
    }
  }
  CHECK(best == n, "%s: at most %d of %d expected contact points within %g s", name, best, n,
        kContactWindow);
}

// the deepest a moving body's centre of mass lies below a world plane geom (the floor, a slope or
// a wall), m; negative = every body above every plane
static double below_floor(const mjModel* m, const mjData* d) {
  double worst = -INFINITY;
  for (int g=0; g < m->ngeom; g++) {
    if (m->geom_type[g] != mjGEOM_PLANE || m->geom_bodyid[g] != 0) continue;
    const mjtNum* n = d->geom_xmat + 9*g;      // the plane's normal is its local z axis
    for (int b=1; b < m->nbody; b++) {
      if (m->body_dofnum[b] == 0 && m->body_parentid[b] == 0) continue;   // fixed to the world
      const mjtNum* x = d->xipos + 3*b;
      double h = n[2]*(x[0] - d->geom_xpos[3*g]) + n[5]*(x[1] - d->geom_xpos[3*g + 1]) +
                 n[8]*(x[2] - d->geom_xpos[3*g + 2]);
      worst = fmax(worst, -h);
    }
  }
  return worst;
}

// 2 s of plain mj_step from the current state: finite, no warnings, nothing through the floor
static void check_run(const char* name, const char* state, const mjModel* m, mjData* d) {
  int steps = (int)ceil(kRunTime/m->opt.timestep), bad = -1;
  double deepest = -INFINITY;
  for (int s=0; s < steps && bad < 0; s++) {
    mj_step(m, d);
    if (!all_finite(d->qpos, m->nq) || !all_finite(d->qvel, m->nv)) bad = s;
    deepest = fmax(deepest, below_floor(m, d));
  }
  CHECK(bad < 0, "%s (%s): non-finite qpos/qvel at step %d", name, state, bad);
  CHECK(deepest <= 0.005, "%s (%s): a body's centre of mass went %.3f m below a floor plane", name, state,
        deepest);
  for (int i=0; i < mjNWARNING; i++) {
    CHECK(d->warning[i].number == 0, "%s (%s): MuJoCo warning %d raised %d times", name, state,
          i, d->warning[i].number);
  }
}

// the model's mass matrix, contact Jacobians and pre-impact velocity against svi_examples.c
static void check_against_core(const char* name, const mjModel* m, mjData* d) {
  svi_example ex;
  if (svi_example_get(name, &ex) != SVI_OK) {
    CHECK(0, "%s: no reference problem in svi_examples.c", name);
    return;
  }
  int nv = m->nv;
  if (nv != ex.nv) return;                     // reported by check_paper_settings

  // qpos0 = the paper's configuration with every contact exactly closed
  mj_resetData(m, d);
  mj_forward(m, d);

  mjtNum* M = calloc((size_t)nv*nv, sizeof(mjtNum));
  mjtNum* jac2 = calloc((size_t)3*nv, sizeof(mjtNum));
  mjtNum* jac1 = calloc((size_t)3*nv, sizeof(mjtNum));
  mj_fullM(m, d, M);
  double err = 0, scale = 1;
  for (int i=0; i < nv*nv; i++) {
    err = fmax(err, fabs(M[i] - ex.M[i]));
    scale = fmax(scale, fabs(ex.M[i]));
  }
  CHECK(err <= 1e-8*scale, "%s: mass matrix differs from the reference by %g", name, err);

  double p[MAX_EXPECT][3];
  int n = expected_contacts(name, m, d, p);
  CHECK(n == ex.nc, "%s: %d expected contacts, reference has %d", name, n, ex.nc);
  for (int k=0; k < n && k < ex.nc; k++) {
    int c = contact_at(d, p[k], 1e-9);
    CHECK(c >= 0, "%s: no contact exactly at reference contact %s", name, ex.contact_names[k]);
    if (c < 0) continue;
    const mjContact* con = d->contact + c;
    int b1 = m->geom_bodyid[con->geom[0]], b2 = m->geom_bodyid[con->geom[1]];
    mj_jac(m, d, jac2, NULL, con->pos, b2);
    memset(jac1, 0, (size_t)3*nv*sizeof(mjtNum));
    if (b1 > 0) mj_jac(m, d, jac1, NULL, con->pos, b1);

    // normal from geom1 to geom2; in-plane tangent (n_z, 0, -n_x) = the paper's (n_y, -n_x)
    const mjtNum* nrm = con->frame;
    double tan[3] = {nrm[2], 0, -nrm[0]};
    double en[2] = {0, 0}, et[2] = {0, 0};     // errors for sign +1 / -1 (pair order may differ)
    for (int j=0; j < nv; j++) {
      double jn = 0, jt = 0;
      for (int r=0; r < 3; r++) {
        double dj = jac2[r*nv + j] - jac1[r*nv + j];
        jn += nrm[r]*dj;
        jt += tan[r]*dj;
      }
      for (int s=0; s < 2; s++) {
        double sign = s ? -1 : 1;
        en[s] = fmax(en[s], fabs(sign*jn - ex.Jn[k*nv + j]));
        et[s] = fmax(et[s], fabs(sign*jt - ex.Jt[k*nv + j]));
      }
    }
    double e = fmin(fmax(en[0], et[0]), fmax(en[1], et[1]));
    CHECK(e <= 1e-9, "%s: contact %s Jacobian differs from the reference by %g", name,
          ex.contact_names[k], e);
    CHECK(fabs(con->friction[0] - ex.mu[k]) <= 1e-12*ex.mu[k], "%s: contact %s mu %g vs %g",
          name, ex.contact_names[k], con->friction[0], ex.mu[k]);
  }

  // "impact": the paper's velocity a little before contact; "touch": the same, contacts closed
  const char* keys[2] = {"impact", "touch"};
  const double qtol[2] = {3e-4, 1e-8};
  for (int i=0; i < 2; i++) {
    int key = mj_name2id(m, mjOBJ_KEY, keys[i]);
    CHECK(key >= 0, "%s: no keyframe \"%s\"", name, keys[i]);
    if (key < 0) continue;
    double ev = 0, eq = 0;
    for (int j=0; j < nv; j++) {
      ev = fmax(ev, fabs(m->key_qvel[key*nv + j] - ex.v[j]));
      eq = fmax(eq, fabs(m->key_qpos[key*m->nq + j] - m->qpos0[j]));
    }
    CHECK(ev <= 1e-12, "%s: keyframe %s qvel differs from the reference v by %g", name, keys[i], ev);
    CHECK(eq <= qtol[i], "%s: keyframe %s qpos is %g from the touching pose qpos0", name, keys[i],
          eq);
  }
  CHECK(ex.h == find_paper(name)->h && ex.N == find_paper(name)->N,
        "%s: reference h, N = %g, %d differ from the table here", name, ex.h, ex.N);
  free(M);
  free(jac2);
  free(jac1);
}

// the same model with svi.impact removed through MuJoCo's model-editing API
static mjModel* load_native(const char* path) {
  char error[1000] = "";
  mjSpec* spec = mj_parseXML(path, NULL, error, sizeof(error));
  if (!spec) return NULL;
  mjsElement* el = mjs_firstElement(spec, mjOBJ_PLUGIN);
  while (el) {
    mjsElement* next = mjs_nextElement(spec, el);
    mjs_delete(spec, el);
    el = next;
  }
  mjModel* m = mj_compile(spec, NULL);
  mj_deleteSpec(spec);
  return m;
}

static void check_model(const char* dir, const char* file) {
  char path[4096], name[NAME_LEN], error[1000] = "";
  snprintf(path, sizeof(path), "%.2000s/%.1000s", dir, file);
  snprintf(name, sizeof(name), "%.*s", (int)(strlen(file) - 4), file);

  mjModel* m = mj_loadXML(path, NULL, error, sizeof(error));
  CHECK(m != NULL, "%s: mj_loadXML failed: %s", path, error);
  if (!m) return;
  mjData* d = mj_makeData(m);

  check_extension(name, m);
  const paper_example* ex = find_paper(name);
  if (ex) check_paper_settings(name, m, ex);
  check_contacts(name, m, d);

  mjModel* mn = load_native(path);
  CHECK(mn != NULL && mn->nplugin == 0, "%s: the model without svi.impact compiles", name);
  mjData* dn = mn ? mj_makeData(mn) : NULL;
  for (int native=0; native < 2 && (!native || dn); native++) {
    const mjModel* mm = native ? mn : m;
    mjData* dd = native ? dn : d;
    char state[NAME_LEN + 16];
    mj_resetData(mm, dd);
    snprintf(state, sizeof(state), "qpos0%s", native ? ", native" : "");
    check_run(name, state, mm, dd);
    for (int k=0; k < mm->nkey; k++) {
      const char* key = mj_id2name(mm, mjOBJ_KEY, k);
      mj_resetDataKeyframe(mm, dd, k);
      snprintf(state, sizeof(state), "%s%s", key ? key : "unnamed key", native ? ", native" : "");
      check_run(name, state, mm, dd);
    }
  }
  if (dn) mj_deleteData(dn);
  if (mn) mj_deleteModel(mn);

  if (ex) check_against_core(name, m, d);

  printf("%-16s nq %2d nv %2d ngeom %3d nkey %d%s\n", name, (int)m->nq, (int)m->nv, (int)m->ngeom, (int)m->nkey,
         ex ? "  (paper example)" : "");
  mj_deleteData(d);
  mj_deleteModel(m);
}

static void loaded(const char* filename, int first, int count) {
  printf("loaded %s: %d plugin(s) from slot %d\n", filename, count, first);
}

// MuJoCo's default warning handler also appends to MUJOCO_LOG.TXT in the working directory; the
// counters in d->warning are what the test checks
static void print_warning(const char* msg) {
  fprintf(stderr, "MuJoCo warning: %s\n", msg);
}

int main(int argc, char** argv) {
  mju_user_warning = print_warning;
  if (argc != 3) {
    fprintf(stderr, "usage: %s <models-dir> <plugin-dir>\n", argv[0]);
    return 2;
  }
  // before the plugin library is loaded: MuJoCo's compiler refuses the model, naming the plugin
  char path[4096], error[1000] = "";
  snprintf(path, sizeof(path), "%.3000s/rocking_block.xml", argv[1]);
  mjModel* m0 = mj_loadXML(path, NULL, error, sizeof(error));
  CHECK(!m0 && strstr(error, "svi.impact"), "without the plugin library: MuJoCo says '%s'", error);
  printf("without the plugin library, MuJoCo says: %s\n", error);
  if (m0) mj_deleteModel(m0);
  mj_loadAllPluginLibraries(argv[2], loaded);
  int slot = -1;
  CHECK(mjp_getPlugin("svi.impact", &slot) && slot >= 0, "svi.impact registered from %s", argv[2]);
  DIR* dir = opendir(argv[1]);
  CHECK(dir != NULL, "cannot open %s", argv[1]);
  if (!dir) return svi_test_finish();

  static char files[MAX_MODELS][NAME_LEN];
  int n = 0;
  // the models in the directory, then those of its scenes/ folder (as "scenes/NAME.xml")
  for (int pass = 0; pass < 2 && dir; pass++) {
    struct dirent* e;
    while ((e = readdir(dir)) != NULL) {
      if (ends_with(e->d_name, ".xml") && strlen(e->d_name) + 7 < NAME_LEN) {
        CHECK(n < MAX_MODELS, "more than %d models", MAX_MODELS);
        if (n < MAX_MODELS) snprintf(files[n++], NAME_LEN, "%s%s", pass ? "scenes/" : "", e->d_name);
      }
    }
    closedir(dir);
    snprintf(path, sizeof(path), "%.3000s/scenes", argv[1]);
    dir = pass ? NULL : opendir(path);
  }
  qsort(files, (size_t)n, NAME_LEN, cmp_names);

  for (int r=0; r < N_REQUIRED; r++) {
    int found = 0;
    for (int i=0; i < n; i++) {
      found |= !strncmp(files[i], kRequired[r], strlen(kRequired[r])) &&
               !strcmp(files[i] + strlen(kRequired[r]), ".xml");
    }
    CHECK(found, "model %s.xml missing from %s", kRequired[r], argv[1]);
  }

  for (int i=0; i < n; i++) check_model(argv[1], files[i]);
  return svi_test_finish();
}
