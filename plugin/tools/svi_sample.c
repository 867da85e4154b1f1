/* svi_sample.c -- command-line sampler: sample or approximate the post-impact set of a reference
 * problem, print a summary, write the outcomes as CSV and draw the paper's kind of figure. */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <ctype.h>
#include <time.h>

#include "svi/svi_core.h"
#include "svi/svi_mujoco.h"
#include "svi_cli.h"
#include "svi_plot.h"

static const char* const T = "svi-sample";

typedef struct {
  const char* example;
  const char* model;
  const char* key;
  long long samples;
  int steps, threads, list, paths;
  double h_abs, step_rel, eps, growth;
  unsigned long long seed;
  svi_branch branch;
  svi_budget budget;
  const char *csv, *plot;
  int law;               /* -1: the model's (or setvalued); SVI_LAW_SETVALUED or SVI_LAW_PROPAGATIVE */
  double restitution;    /* < 0: the model's (or 1) */
} options;

static void usage(FILE* f) {
  fprintf(f,
    "usage: svi-sample --example NAME [options]\n"
    "       svi-sample --model MODEL.xml [--key NAME] [options]\n"
    "       svi-sample --list\n"
    "Approximates the post-impact velocity set of a reference problem, or of the first impact\n"
    "event of an MJCF model, with native MuJoCo's outcome marked (Halm & Posa, Alg. 2).\n"
    "  --example NAME     rocking_block | box_wall | compass_gait | disk_stack | zeno_block | ramone\n"
    "  --model FILE       an MJCF model declaring the svi.impact plugin; runs to its first impact event\n"
    "  --key NAME         keyframe to start from (default 'impact' if the model has one)\n"
    "  --samples M        number of samples (default: the paper's M, Appendix A)\n"
    "  --steps N          Routh steps per sample before the final step (default: paper's N, a model's max_steps)\n"
    "  --h H              Routh step in N s (default: the paper's h, a model's step_abs)\n"
    "  --step R           Routh step relative to the reference impulse (overrides --h; default: a model's step)\n"
    "  --growth G         budget growth a step after the first half of the steps (default: a model's step_growth;\n"
    "                     4 with a relative step, 1 = constant h with --h and the paper's examples)\n"
    "  --eps E            epsilon of Algorithm 2 in m/s (default 1%% of max |J_n v-|)\n"
    "  --seed S           seed (default 1); same seed, same output bit for bit\n"
    "  --threads T        worker threads (default: all cores; output does not depend on it)\n"
    "  --branch B         auto | lemke | random | enumerate (default auto)\n"
    "  --budget B         sobol | uniform (default sobol)\n"
    "  --csv FILE         write every sample (default NAME.csv; '-' = none)\n"
    "  --plot FILE        figure, .png/.svg/.pdf (default NAME.png; '-' = none)\n"
    "  --paths K          draw the intermediate velocities of K samples (default 2000)\n"
    "  --law L            setvalued | propagative (default: the model's law, else setvalued)\n"
    "  --restitution E    e of the propagative law in [0, 1] (default: the model's, else 1)\n");
}

static int parse(int argc, char** argv, options* o) {
  memset(o, 0, sizeof(*o));
  o->seed = 1;
  o->branch = SVI_BRANCH_AUTO;
  o->budget = SVI_BUDGET_SOBOL;
  o->paths = 2000;
  o->law = -1;
  o->restitution = -1;
  for (int i = 1; i < argc; i++) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
#define NEEDV() do { if (!v) { fprintf(stderr, "svi-sample: %s needs a value\n", a); return 0; } i++; } while (0)
    if (!strcmp(a, "--list")) o->list = 1;
    else if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); exit(0); }
    else if (!strcmp(a, "--example")) { NEEDV(); o->example = v; }
    else if (!strcmp(a, "--model")) { NEEDV(); o->model = v; }
    else if (!strcmp(a, "--key")) { NEEDV(); o->key = v; }
    else if (!strcmp(a, "--samples")) { NEEDV(); long long x; if (!svi_cli_int(T, a, v, 1, 1LL << 40, &x)) return 0; o->samples = x; }
    else if (!strcmp(a, "--steps")) { NEEDV(); long long x; if (!svi_cli_int(T, a, v, 1, 100000, &x)) return 0; o->steps = (int)x; }
    else if (!strcmp(a, "--h")) { NEEDV(); if (!svi_cli_double(T, a, v, 1e-300, 1e300, &o->h_abs)) return 0; }
    else if (!strcmp(a, "--step")) { NEEDV(); if (!svi_cli_double(T, a, v, 1e-300, 1e300, &o->step_rel)) return 0; }
    else if (!strcmp(a, "--growth")) { NEEDV(); if (!svi_cli_double(T, a, v, 1, 1e3, &o->growth)) return 0; }
    else if (!strcmp(a, "--eps")) { NEEDV(); if (!svi_cli_double(T, a, v, 1e-300, 1e300, &o->eps)) return 0; }
    else if (!strcmp(a, "--seed")) { NEEDV(); uint64_t x; if (!svi_cli_seed(T, a, v, &x)) return 0; o->seed = x; }
    else if (!strcmp(a, "--threads")) { NEEDV(); long long x; if (!svi_cli_int(T, a, v, 1, 1024, &x)) return 0; o->threads = (int)x; }
    else if (!strcmp(a, "--paths")) { NEEDV(); long long x; if (!svi_cli_int(T, a, v, 0, 1000000, &x)) return 0; o->paths = (int)x; }
    else if (!strcmp(a, "--csv")) { NEEDV(); o->csv = v; }
    else if (!strcmp(a, "--restitution")) { NEEDV(); if (!svi_cli_double(T, a, v, 0, 1, &o->restitution)) return 0; }
    else if (!strcmp(a, "--law")) {
      NEEDV();
      o->law = svi_law_from_name(v);
      if (o->law != SVI_LAW_SETVALUED && o->law != SVI_LAW_PROPAGATIVE) {
        fprintf(stderr, "svi-sample: --law must be setvalued or propagative, not '%s'\n", v);
        return 0;
      }
    }
    else if (!strcmp(a, "--plot")) { NEEDV(); o->plot = v; }
    else if (!strcmp(a, "--branch")) {
      NEEDV();
      if (!strcmp(v, "auto")) o->branch = SVI_BRANCH_AUTO;
      else if (!strcmp(v, "lemke")) o->branch = SVI_BRANCH_LEMKE;
      else if (!strcmp(v, "random")) o->branch = SVI_BRANCH_RANDOM;
      else if (!strcmp(v, "enumerate")) o->branch = SVI_BRANCH_ENUMERATE;
      else { fprintf(stderr, "svi-sample: --branch must be auto, lemke, random or enumerate, not '%s'\n", v); return 0; }
    } else if (!strcmp(a, "--budget")) {
      NEEDV();
      if (!strcmp(v, "sobol")) o->budget = SVI_BUDGET_SOBOL;
      else if (!strcmp(v, "uniform")) o->budget = SVI_BUDGET_UNIFORM;
      else { fprintf(stderr, "svi-sample: --budget must be sobol or uniform, not '%s'\n", v); return 0; }
    } else {
      fprintf(stderr, "svi-sample: unknown option '%s' (see --help)\n", a);
      return 0;
    }
#undef NEEDV
  }
  return 1;
}

/* One impact to study: a reference problem or the first impact event of an MJCF model. */
typedef struct {
  char   name[128], title[256];
  int    nv, nc, nt;
  double *M, *Jn, *Jt, *mu, *v;
  char   (*cname)[32];
  int    plot_a, plot_b;
  double h;             /* N s; 0 = relative step */
  double step;          /* the relative step (x the reference impulse) where h = 0 */
  double growth;        /* a model's step_growth (0: the default) */
  int    N;
  long long samples;
  int    has_native;
  double* native_vn;    /* native MuJoCo's J_n v after the impact */
  double* native_v;     /* native MuJoCo's v after the impact (nv values), for J_t v */
  double tdir[2];       /* one contact: the figure's x axis in its tangent plane (set_tangent_axis) */
  int    slip_axis;     /* tdir is the pre-impact slip's direction (else the first tangent) */
  int    law;           /* the model's law (SVI_LAW_SETVALUED for reference problems) */
  double restitution;   /* the model's restitution */
  int    ngroup;        /* a model's event under split = groups: its groups (svi_current_groups) */
  int*   group;         /* nv dofs' then nc contacts' groups (NULL for one group) */
  uint64_t* gkey;       /* each group's key */
  int    nlim;          /* a model's event: the joint and tendon limits MuJoCo holds active */
  double *lim, lim_tol; /* their rows (nlim x nv), then their velocities off the event (svi_current_limits) */
} problem;

static double* dup(const double* x, size_t n) {
  double* y = malloc(sizeof(double) * (n ? n : 1));
  if (y && n) memcpy(y, x, sizeof(double) * n);
  return y;
}

static svi_problem_def problem_def(const problem* p) {
  svi_problem_def d = {p->nv, p->nc, p->nt, p->M, p->Jn, p->Jt, p->mu, p->v};
  return d;
}

static int from_example(const char* name, problem* p) {
  svi_example ex;
  if (svi_example_get(name, &ex) != SVI_OK) {
    fprintf(stderr, "svi-sample: unknown example '%s'; one of:", name);
    for (int i = 0; i < svi_example_count(); i++) fprintf(stderr, " %s", svi_example_name(i));
    fprintf(stderr, "\n");
    return 0;
  }
  memset(p, 0, sizeof(*p));
  snprintf(p->name, sizeof(p->name), "%s", ex.name);
  snprintf(p->title, sizeof(p->title), "%s", ex.title);
  p->title[0] = (char)toupper((unsigned char)p->title[0]);
  p->nv = ex.nv; p->nc = ex.nc; p->nt = ex.nt;
  p->M = dup(ex.M, (size_t)ex.nv * ex.nv);
  p->Jn = dup(ex.Jn, (size_t)ex.nc * ex.nv);
  p->Jt = dup(ex.Jt, (size_t)ex.nc * ex.nt * ex.nv);
  p->mu = dup(ex.mu, (size_t)ex.nc);
  p->v = dup(ex.v, (size_t)ex.nv);
  p->cname = calloc((size_t)ex.nc, sizeof(*p->cname));
  for (int i = 0; i < ex.nc; i++) snprintf(p->cname[i], 32, "%s", ex.contact_names[i]);
  p->plot_a = ex.plot_a; p->plot_b = ex.plot_b;
  p->h = ex.h; p->step = 1.0; p->N = ex.N; p->samples = ex.samples;
  p->law = SVI_LAW_SETVALUED;
  p->restitution = 1;
  return 1;
}

/* Run the model with mj_step (svi.impact resolves its impacts) to its first impact event, take
 * that event's impact problem from its pre-impact state, and run native MuJoCo (the same model
 * without the plugin, svi_load_xml_native) from the same state. */
static int from_model(const char* path, const char* key, problem* p) {
  char err[1000];
  mjModel* m = svi_load_xml(path, err, sizeof(err));
  if (!m) { fprintf(stderr, "svi-sample: %s\n", err); return 0; }
  mjData* d = mj_makeData(m);
  mjData* scratch = mj_makeData(m);
  svi_instance* in = svi_instance_of(m, d);
  if (!d || !scratch || !in) {
    fprintf(stderr, "svi-sample: %s does not declare the svi.impact plugin (<extension>)\n", path);
    return 0;
  }
  int kid = mj_name2id(m, mjOBJ_KEY, key ? key : "impact");
  if (key && kid < 0) { fprintf(stderr, "svi-sample: %s has no keyframe '%s'\n", path, key); return 0; }
  if (kid >= 0) mj_resetDataKeyframe(m, d, kid);
  while (svi_event_count(in) == 0 && d->time < 10) mj_step(m, d);
  if (svi_event_count(in) == 0) {   /* none, or none the plugin resolved (its last message says why) */
    svi_counters c = svi_instance_counters(in);
    if (c.fallbacks > 0)
      fprintf(stderr, "svi-sample: %s has no impact event the plugin resolved in its first 10 s (%lld left to "
              "MuJoCo; the plugin said: %s)\n", path, c.fallbacks, svi_instance_message(in));
    else
      fprintf(stderr, "svi-sample: %s has no impact event in its first 10 s\n", path);
    return 0;
  }
  double t_event = svi_event_get(in, 0)->time;
  svi_instance* sin = svi_instance_of(m, scratch);
  svi_event_load(in, m, scratch, 0);
  svi_problem_def def;
  int* cidx = malloc(sizeof(int) * (size_t)svi_instance_config(in)->max_contacts);
  int nc = cidx ? svi_current_problem(sin, m, scratch, &def, cidx) : 0;
  if (nc <= 0) {
    const char* why = sin ? svi_instance_message(sin) : "";
    fprintf(stderr, "svi-sample: could not rebuild the impact problem%s%s\n", why[0] ? ": " : "", why);
    return 0;
  }
  memset(p, 0, sizeof(*p));
  p->nlim = svi_current_limits(sin, nc, def.nv, 0, NULL, NULL, NULL);
  p->lim = p->nlim > 0 ? malloc(sizeof(double) * (size_t)p->nlim * ((size_t)def.nv + 1)) : NULL;
  if (p->lim)
    svi_current_limits(sin, nc, def.nv, p->nlim, p->lim, p->lim + (size_t)p->nlim * def.nv, &p->lim_tol);
  else
    p->nlim = 0;
  const char* base = strrchr(path, '/');
  snprintf(p->name, sizeof(p->name), "%s", base ? base + 1 : path);
  char* dot = strrchr(p->name, '.');
  if (dot) *dot = 0;
  snprintf(p->title, sizeof(p->title), "%s, first impact (t = %.4f s, %d contacts)", p->name, t_event, nc);
  p->nv = def.nv; p->nc = nc; p->nt = def.nt;
  p->M = dup(def.M, (size_t)def.nv * def.nv);
  p->Jn = dup(def.Jn, (size_t)nc * def.nv);
  p->Jt = dup(def.Jt, (size_t)nc * def.nt * def.nv);
  p->mu = dup(def.mu, (size_t)nc);
  p->v = dup(def.v, (size_t)def.nv);
  p->cname = calloc((size_t)nc, sizeof(*p->cname));
  /* contact names from the geoms; axes: the two fastest-approaching contacts */
  double best1 = INFINITY, best2 = INFINITY;
  p->plot_a = 0;
  p->plot_b = nc > 1 ? 1 : 0;
  for (int k = 0; k < nc; k++) {
    const mjContact* c = scratch->contact + cidx[k];
    int g = m->geom_bodyid[c->geom[0]] == 0 ? c->geom[1] : c->geom[0];
    const char* gn = mj_id2name(m, mjOBJ_GEOM, g);
    if (gn) snprintf(p->cname[k], 32, "%s", gn);
    else snprintf(p->cname[k], 32, "c%d", k);
    double vn = 0;
    for (int j = 0; j < def.nv; j++) vn += def.Jn[k * def.nv + j] * def.v[j];
    if (vn < best1) { best2 = best1; p->plot_b = p->plot_a; best1 = vn; p->plot_a = k; }
    else if (vn < best2) { best2 = vn; p->plot_b = k; }
  }
  /* several contacts on one geom (a box's corners): number them, 1:box, 2:box, ... */
  int repeated = 0;
  for (int k = 0; k < nc && !repeated; k++)
    for (int j = k + 1; j < nc && !repeated; j++) repeated = !strcmp(p->cname[k], p->cname[j]);
  for (int k = 0; k < nc && repeated; k++) {
    char name[32];
    snprintf(name, sizeof(name), "%d:%.18s", k + 1, p->cname[k]);
    memcpy(p->cname[k], name, sizeof(name));
  }
  if (p->plot_a > p->plot_b) { int t = p->plot_a; p->plot_a = p->plot_b; p->plot_b = t; }
  const svi_config* cfg = svi_instance_config(in);
  p->law = cfg->law;
  p->restitution = cfg->restitution;
  p->h = cfg->step_abs;
  p->step = cfg->step;   /* the model's own relative step, as the plugin's law uses it */
  p->N = cfg->max_steps;
  p->growth = cfg->step_growth;
  p->samples = 1 << 14;
  /* native MuJoCo from the same pre-impact state */
  mjModel* mn = svi_load_xml_native(path, err, sizeof(err));
  mjData* dn = mn ? mj_makeData(mn) : NULL;
  p->native_vn = malloc(sizeof(double) * (size_t)nc);
  p->native_v = malloc(sizeof(double) * (size_t)p->nv);
  if (dn && svi_event_load_native(in, m, 0, mn, dn) == SVI_OK) {
    svi_problem_def frozen = problem_def(p);
    int ns = svi_native_outcome(mn, dn, &frozen, 0.1, p->native_vn);
    p->has_native = ns > 0;
    memcpy(p->native_v, dn->qvel, sizeof(double) * (size_t)p->nv);   /* the state it stopped in */
    if (ns <= 0) fprintf(stderr, "svi-sample: native MuJoCo still approaching after 0.1 s; not marked\n");
  } else {
    fprintf(stderr, "svi-sample: no native reference: %s\n", mn ? "state mismatch" : err);
  }
  p->group = malloc(sizeof(int) * ((size_t)p->nv + (size_t)nc));
  p->gkey = malloc(sizeof(uint64_t) * ((size_t)m->ntree + 1));
  p->ngroup = p->group && p->gkey ? svi_current_groups(sin, m, scratch, nc, p->group, p->group + p->nv, p->gkey)
                                   : 1;
  free(cidx);
  if (dn) mj_deleteData(dn);
  if (mn) mj_deleteModel(mn);
  mj_deleteData(scratch);
  mj_deleteData(d);
  mj_deleteModel(m);
  return 1;
}

/* "pivot about A" (one contact sticks, the others lift: the body may still turn about it), "all
 * contacts stick", or a per-contact list */
static void describe(const problem* pb, const char* cls, char* out, size_t len) {
  int nc = pb->nc, stick = 0, lift = 0, pivot = -1;
  for (int i = 0; i < nc; i++) {
    if (cls[i] == 'S') { stick++; pivot = i; }
    if (cls[i] == 'L') lift++;
  }
  if (stick == 1 && lift == nc - 1) { snprintf(out, len, "pivot about %s", pb->cname[pivot]); return; }
  if (stick == nc) { snprintf(out, len, "all contacts stick"); return; }
  if (lift == nc) { snprintf(out, len, "all contacts lift off"); return; }
  size_t n = 0;
  out[0] = 0;
  for (int i = 0; i < nc && n < len; i++) {
    const char* m = cls[i] == 'S' ? "sticks" : cls[i] == 'L' ? "lifts" : "slides";
    n += (size_t)snprintf(out + n, len - n, "%s%s %s", i ? ", " : "", pb->cname[i], m);
  }
}

/* A legend entry's text for an outcome class: describe()'s words while they are short, else the
 * counts and the class letters, "5 stick, 3 lift (SLLSLLLS)" (the letters up to 24 contacts):
 * the per-contact list of a humanoid's eight foot contacts is wider than the plot. */
#define LEGEND_WORDS 56
static void legend_label(const problem* pb, const char* cls, char* out, size_t len) {
  describe(pb, cls, out, len);
  if (strlen(out) <= LEGEND_WORDS) return;
  static const char* const word[3] = {"stick", "lift", "slide"};
  int count[3] = {0, 0, 0};
  for (int i = 0; i < pb->nc; i++) count[cls[i] == 'S' ? 0 : cls[i] == 'L' ? 1 : 2]++;
  size_t n = 0;
  out[0] = 0;
  for (int j = 0; j < 3 && n < len; j++)
    if (count[j]) n += (size_t)snprintf(out + n, len - n, "%s%d %s", n ? ", " : "", count[j], word[j]);
  if (pb->nc <= 24 && n < len) snprintf(out + n, len - n, " (%s)", cls);
}

/* The figure's point of a velocity v: the normal velocities of the two plotted contacts; with one
 * contact, its tangential velocity against its normal one, x = J_t v, y = J_n v (two normal axes
 * would only draw the line x = y).  A spatial contact (nt = 2) is read along its pre-impact slip
 * (set_tangent_axis: MuJoCo's first tangent is one direction of the plane like any other, and a
 * ball landing while it slides along the second would show no slip), or along the first tangent
 * where there is none.  vn: nc values, vt: nc nt values (scratch). */
static int tangent_axis(const problem* pb) { return pb->nc == 1 && pb->nt > 0; }

static void set_tangent_axis(problem* pb, const svi_impact* s) {
  pb->tdir[0] = 1;
  pb->tdir[1] = 0;
  pb->slip_axis = 0;
  if (!tangent_axis(pb) || pb->nt < 2) return;
  double vn, vt[2];
  svi_impact_normal_velocity(s, pb->v, &vn);
  svi_impact_tangent_velocity(s, pb->v, vt);
  double slip = hypot(vt[0], vt[1]);
  if (slip <= 1e-6 * fabs(vn)) return;   /* no slip to follow: rounding would pick the axis */
  pb->tdir[0] = vt[0] / slip;
  pb->tdir[1] = vt[1] / slip;
  pb->slip_axis = 1;
}

static double tangent_x(const problem* pb, const double* vt) {
  return pb->nt > 1 ? pb->tdir[0] * vt[0] + pb->tdir[1] * vt[1] : vt[0];
}

static svi_plot_pt plot_point(const problem* pb, const svi_impact* s, const double* v, double* vn,
                              double* vt) {
  svi_impact_normal_velocity(s, v, vn);
  if (!tangent_axis(pb)) return (svi_plot_pt){vn[pb->plot_a], vn[pb->plot_b]};
  svi_impact_tangent_velocity(s, v, vt);
  return (svi_plot_pt){tangent_x(pb, vt), vn[0]};
}

/* native MuJoCo's point: its J_n v as printed, J_t v from the velocity it stopped in (the rows
 * frozen at the impact configuration, as for J_n v) */
static svi_plot_pt native_point(const problem* pb, const svi_impact* s, double* vt) {
  if (!tangent_axis(pb)) return (svi_plot_pt){pb->native_vn[pb->plot_a], pb->native_vn[pb->plot_b]};
  svi_impact_tangent_velocity(s, pb->native_v, vt);
  return (svi_plot_pt){tangent_x(pb, vt), pb->native_vn[0]};
}

static void axis_labels(const problem* pb, char* xl, char* yl, size_t len) {
  if (!tangent_axis(pb)) {
    snprintf(xl, len, "J_n,%s v  (m/s)", pb->cname[pb->plot_a]);
    snprintf(yl, len, "J_n,%s v  (m/s)", pb->cname[pb->plot_b]);
    return;
  }
  const char* along = pb->nt < 2 ? "tangential"
                      : pb->slip_axis ? "along the pre-impact slip" : "first tangent";
  snprintf(xl, len, "J_t,%s v  (m/s, %s)", pb->cname[0], along);
  snprintf(yl, len, "J_n,%s v  (m/s, normal)", pb->cname[0]);
}

#define MAX_CLS 65
typedef struct { char cls[MAX_CLS]; long long count; } class_count;

static void count_class(class_count* cc, int* ncls, const char* cls) {
  for (int k = 0; k < *ncls; k++)
    if (!strcmp(cc[k].cls, cls)) { cc[k].count++; return; }
  if (*ncls < 256) { snprintf(cc[*ncls].cls, sizeof(cc[*ncls].cls), "%s", cls); cc[*ncls].count = 1; (*ncls)++; }
}

static int cmp_class(const void* a, const void* b) {
  long long x = ((const class_count*)a)->count, y = ((const class_count*)b)->count;
  return x < y ? 1 : x > y ? -1 : 0;
}

/* 1 if the outcome v (the model's dofs) closes a joint or tendon limit MuJoCo holds active at the
 * model's impact: mj_step leaves such an outcome to MuJoCo (svi_limits_refuse) */
static int closes_limit(const problem* pb, const double* v) {
  return pb->nlim > 0 &&
         svi_limits_refuse(pb->nlim, pb->nv, pb->lim, pb->lim + (size_t)pb->nlim * pb->nv, pb->lim_tol, 1, v, NULL) > 0;
}
static const char* const kClosesLimit = "  [closes an active limit: mj_step leaves it to MuJoCo]";

static void print_vn(const double* vn, int nc) {
  printf("(");
  for (int i = 0; i < nc && i < 8; i++) printf("%s%.4f", i ? ", " : "", vn[i]);
  if (nc > 8) printf(", ...");
  printf(")");
}

static void print_problem(const problem* pb, svi_impact* s, const svi_problem_def* def, double* vn0) {
  int nc = pb->nc;
  svi_impact_normal_velocity(s, def->v, vn0);
  printf("svi-sample %s: %s\n", SVI_VERSION_STRING, pb->title);
  printf("  %d dof, %d contacts (", pb->nv, nc);
  for (int i = 0; i < nc && i < 8; i++) printf("%s%s mu=%g", i ? ", " : "", pb->cname[i], def->mu[i]);
  printf("%s)\n  pre-impact J_n v = ", nc > 8 ? ", ..." : "");
  print_vn(vn0, nc);
  printf(" m/s, kinetic energy %.6g J\n", svi_impact_kinetic_energy(s, def->v));
}

/* The propagative law's set (Seghete & Murphey): every resolution order, its distinct outcomes and
 * the indeterminacy xi; the timing of one outcome (what a running simulation pays per impact). */
static int run_propagative(const options* o, problem* pb, svi_impact* s, const svi_problem_def* def) {
  int nv = pb->nv, nc = pb->nc, max_out = 4096;
  double* vn0 = malloc(sizeof(double) * (size_t)nc);
  double* vn = malloc(sizeof(double) * (size_t)nc);
  double* V = malloc(sizeof(double) * (size_t)max_out * nv);
  double* vp = malloc(sizeof(double) * (size_t)nv);
  char* cls = malloc((size_t)nc + 1);
  svi_propagative* w = svi_propagative_create(nv, nc, max_out);
  if (!vn0 || !vn || !V || !vp || !cls || !w) { fprintf(stderr, "svi-sample: out of memory\n"); return 1; }
  svi_propagative_config pc = svi_propagative_default_config();
  pc.restitution = o->restitution >= 0 ? o->restitution : pb->restitution;
  pc.seed = o->seed;
  if (o->samples > 0) pc.samples = o->samples;
  print_problem(pb, s, def, vn0);
  double cmax = svi_normal_coupling(s, NULL);
  printf("  propagative law (Seghete & Murphey), restitution e = %g, frictionless; max |c_ij| = %.4f%s\n",
         pc.restitution, cmax, cmax < 1e-12 ? " (orthogonal normals: one outcome, Theorem 2)" : "");
  svi_propagative_set_info si;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  int st = svi_propagative_all(w, s, &pc, V, NULL, max_out, &si);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double set_s = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
  printf("  the set: %d distinct outcome(s), %s over %lld order(s)%s%s; sequence length %d..%d; %.3f ms\n",
         si.count, si.exhaustive ? "every resolution order followed (exact)" : "sampled",
         si.orders, si.truncated ? ", truncated" : "", si.locked ? ", LOCKED: no elastic outcome" : "",
         si.min_length, si.max_length, set_s * 1e3);
  if (si.rejected) printf("  %lld order(s) rejected (reflection cap or validity check), counted\n", si.rejected);
  printf("  indeterminacy xi = max ||v_i - v_j||_M / ||v-||_M = %.6f\n", si.xi);
  int nshow = si.count < max_out ? si.count : max_out;
  for (int k = 0; k < nshow && k < 12; k++) {
    svi_impact_normal_velocity(s, V + (size_t)k * nv, vn);
    printf("    outcome %d: J_n v+ = ", k);
    print_vn(vn, nc);
    printf("  KE %.6g J\n", svi_impact_kinetic_energy(s, V + (size_t)k * nv));
  }
  /* one outcome per impact, as the plugin draws it: the timing, and the class frequencies */
  long long M = 4096;
  svi_propagative_info info;
  int bad = 0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (long long k = 0; k < M; k++) bad += svi_propagative_outcome(w, s, &pc, (uint64_t)k, vp, NULL, &info) != SVI_OK;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double per = ((double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec)) / (double)M;
  printf("  one outcome (random order, as in a running simulation): %.3f us, %lld draws, %d not valid (fallback)\n",
         per * 1e6, M, bad);
  if (pb->has_native) {
    printf("  native MuJoCo from the same state: J_n v+ = ");
    print_vn(pb->native_vn, nc);
    printf("\n");
  }
  int rc = st == SVI_OK ? 0 : 1;
  char csvname[300], plotname[300];
  snprintf(csvname, sizeof(csvname), "%s", o->csv ? o->csv : "");
  if (!o->csv) snprintf(csvname, sizeof(csvname), "%s.csv", pb->name);
  snprintf(plotname, sizeof(plotname), "%s", o->plot ? o->plot : "");
  if (!o->plot) snprintf(plotname, sizeof(plotname), "%s.png", pb->name);
  if (strcmp(csvname, "-")) {
    FILE* f = fopen(csvname, "w");
    if (!f) { fprintf(stderr, "svi-sample: cannot write %s\n", csvname); return 1; }
    fprintf(f, "outcome");
    for (int i = 0; i < nv; i++) fprintf(f, ",v%d", i);
    for (int i = 0; i < nc; i++) fprintf(f, ",vn_%s", pb->cname[i]);
    fprintf(f, "\n");
    for (int k = 0; k < nshow; k++) {
      svi_impact_normal_velocity(s, V + (size_t)k * nv, vn);
      fprintf(f, "%d", k);
      for (int i = 0; i < nv; i++) fprintf(f, ",%.17g", V[(size_t)k * nv + i]);
      for (int i = 0; i < nc; i++) fprintf(f, ",%.17g", vn[i]);
      fprintf(f, "\n");
    }
    fclose(f);
    printf("  wrote %s\n", csvname);
  }
  if (strcmp(plotname, "-")) {
    svi_plot_pt* pts = malloc(sizeof(svi_plot_pt) * (size_t)(nshow > 0 ? nshow : 1));
    double* vt = malloc(sizeof(double) * (size_t)(nc * pb->nt > 0 ? nc * pb->nt : 1));
    if (!pts || !vt) { fprintf(stderr, "svi-sample: out of memory\n"); return 1; }
    for (int k = 0; k < nshow; k++) pts[k] = plot_point(pb, s, V + (size_t)k * nv, vn, vt);
    /* the plastic outcome (e = 0) for reference */
    svi_propagative_config p0 = pc;
    p0.restitution = 0;
    svi_plot_pt plastic = {0, 0}, native_pt = {0, 0};
    int has_plastic = svi_propagative_outcome(w, s, &p0, 0, vp, NULL, &info) == SVI_OK;
    if (has_plastic) plastic = plot_point(pb, s, vp, vn, vt);
    svi_plot_series ser[3];
    int nser = 0;
    ser[nser++] = (svi_plot_series){"Outcomes over resolution orders", 0.85, 0.15, 0.1, 2, pts, nshow};
    if (has_plastic) ser[nser++] = (svi_plot_series){"Plastic (e = 0)", 0.1, 0.3, 0.9, 1, &plastic, 1};
    if (pb->has_native) {
      native_pt = native_point(pb, s, vt);
      ser[nser++] = (svi_plot_series){"Native MuJoCo (same state)", 0.1, 0.6, 0.3, 4, &native_pt, 1};
    }
    svi_plot_pt pre = plot_point(pb, s, def->v, vn, vt);
    char xl[80], yl[80], footer[200], title[300];
    axis_labels(pb, xl, yl, sizeof(xl));
    snprintf(title, sizeof(title), "%s: propagative law, e = %g", pb->title, pc.restitution);
    snprintf(footer, sizeof(footer), "%d outcome(s) (%s), xi = %.4f", si.count,
             si.exhaustive ? "every order" : "sampled orders", si.xi);
    svi_plot_spec spec = {title, xl, yl, 0, 0, NULL, 0, NULL, 0, &pre, 1, ser, nser, footer};
    if (svi_plot_normal_plane(plotname, &spec) == 0) printf("  wrote %s\n", plotname);
    else rc = 1;
    free(pts); free(vt);
  }
  svi_propagative_destroy(w);
  free(vn0); free(vn); free(V); free(vp); free(cls);
  return rc;
}

int main(int argc, char** argv) {
  setvbuf(stdout, NULL, _IOLBF, 0);   /* whole lines between the plugin's warnings on stderr (a pipe of both) */
  options o;
  if (!parse(argc, argv, &o)) return 2;
  if (o.list) {
    for (int i = 0; i < svi_example_count(); i++) {
      svi_example ex;
      svi_example_get(svi_example_name(i), &ex);
      printf("%-14s %s (%d dof, %d contacts)\n", ex.name, ex.title, ex.nv, ex.nc);
    }
    return 0;
  }
  if (!o.example && !o.model) { usage(stderr); return 2; }
  problem pb;
  if (o.model ? !from_model(o.model, o.key, &pb) : !from_example(o.example, &pb)) return 2;
  svi_problem_def def = problem_def(&pb);
  int nv = pb.nv, nc = pb.nc;
  svi_impact* s = svi_impact_create(nv, nc, pb.nt);
  char err[256];
  if (!s || svi_impact_setup(s, &def, err, sizeof(err)) != SVI_OK) {
    fprintf(stderr, "svi-sample: %s\n", s ? err : "out of memory");
    return 1;
  }
  set_tangent_axis(&pb, s);

  if ((o.law >= 0 ? o.law : pb.law) == SVI_LAW_PROPAGATIVE) {
    int prc = run_propagative(&o, &pb, s, &def);
    free(pb.M); free(pb.Jn); free(pb.Jt); free(pb.mu); free(pb.v); free(pb.cname); free(pb.native_vn);
    free(pb.native_v); free(pb.group); free(pb.gkey); free(pb.lim);
    svi_impact_destroy(s);
    return prc;
  }
  svi_approx_config cfg = svi_approx_default_config();
  cfg.samples = o.samples > 0 ? o.samples : pb.samples;
  cfg.threads = o.threads;
  cfg.eps = o.eps;
  cfg.routh.max_steps = o.steps > 0 ? o.steps : pb.N;
  cfg.routh.step_abs = o.step_rel > 0 ? 0 : (o.h_abs > 0 ? o.h_abs : pb.h);
  cfg.routh.step = o.step_rel > 0 ? o.step_rel : pb.step;
  cfg.routh.step_growth = o.growth > 0 ? o.growth : pb.growth;
  cfg.routh.seed = o.seed;
  cfg.routh.branch = o.branch;
  cfg.routh.budget = o.budget;
  if (pb.ngroup <= 1 && cfg.routh.budget == SVI_BUDGET_SOBOL && !svi_sobol_fits(&cfg.routh, nc))
    cfg.routh.budget = SVI_BUDGET_UNIFORM;   /* many contacts x steps (groups: each by its own) */

  long long M = cfg.samples;
  double* V = malloc(sizeof(double) * (size_t)M * nv);
  unsigned char* acc = malloc((size_t)M);
  int* lcps = malloc(sizeof(int) * (size_t)M);
  double* vn = malloc(sizeof(double) * (size_t)nc);
  double* vn0 = malloc(sizeof(double) * (size_t)nc);
  double* vt = malloc(sizeof(double) * (size_t)(nc * pb.nt > 0 ? nc * pb.nt : 1));
  char* cls = malloc((size_t)nc + 1);
  if (!V || !acc || !lcps || !vn || !vn0 || !vt || !cls) { fprintf(stderr, "svi-sample: out of memory for %lld samples\n", M); return 1; }
  svi_approx_stats st;
  int rc = svi_approximate_groups(&def, &cfg, pb.ngroup, pb.group, pb.group ? pb.group + pb.nv : NULL, pb.gkey, V, acc,
                                  lcps, &st);
  if (rc < 0) { fprintf(stderr, "svi-sample: %s\n", svi_status_string(rc)); return 1; }
  if (pb.nlim > 0) {   /* mj_step's check: an outcome that closes an active limit is left to MuJoCo */
    st.limit_refused = svi_limits_refuse(pb.nlim, nv, pb.lim, pb.lim + (size_t)pb.nlim * nv, pb.lim_tol, M, V, acc);
    st.accepted -= st.limit_refused;
  }

  print_problem(&pb, s, &def, vn0);
  double growth = svi_routh_growth(&cfg.routh);
  char grew[96] = "";
  if (growth > 1)
    snprintf(grew, sizeof(grew), " (budgets x %g a step from step %d on)", growth, (cfg.routh.max_steps + 1) / 2 + 1);
  printf("  Routh step h = %.4g N s (%.3g x reference impulse %.4g N s), N = %d%s, eps = %.3g m/s, psi = %.4g\n",
         st.h, st.h / fmax(svi_impact_reference_impulse(s), 1e-300), svi_impact_reference_impulse(s),
         cfg.routh.max_steps, grew, st.eps, st.psi);
  if (pb.ngroup > 1)
    printf("  split groups: %d groups of trees, each approximated as its own problem with its own h (the largest "
           "shown) and seed; sample k is every group's sample k\n", pb.ngroup);
  const char* brn[] = {"lemke", "random", "enumerate", "auto"};
  char why[96] = "";
  if (o.budget == SVI_BUDGET_SOBOL && cfg.routh.budget != SVI_BUDGET_SOBOL)
    snprintf(why, sizeof(why), ": %d contacts x %d steps exceed the %d Sobol dimensions", nc, cfg.routh.max_steps,
             SVI_SOBOL_MAXDIM);
  printf("  %lld samples (%s budgets%s), branch %s, seed %llu\n", M,
         cfg.routh.budget == SVI_BUDGET_SOBOL ? "Sobol" : "uniform", why, brn[cfg.routh.branch], o.seed);
  printf("  accepted %lld / %lld (%.2f%%), failed %lld", st.accepted, M, 100.0 * st.accepted / M, st.failed);
  if (st.colliding || st.rejected || st.limit_refused) {   /* why the others are not in the set */
    printf("; not accepted:");
    if (st.colliding || st.rejected)   /* Algorithm 2's C(q0) removal */
      printf(" %lld still colliding after N + 1 steps, %lld failed the outcome checks%s", st.colliding,
             st.rejected, st.limit_refused ? "," : "");
    if (st.limit_refused)
      printf(" %lld would close a joint or tendon limit MuJoCo holds active (%d at this impact), which mj_step "
             "leaves to MuJoCo", st.limit_refused, pb.nlim);
  }
  printf("\n");
  printf("  LCPs/sample %.3f, wall %.3f s = %.3f us/sample (all threads), max LCP residual %.2e\n",
         (double)st.lcps / M, st.wall_seconds, st.wall_seconds / (double)M * 1e6, st.max_residual);
  printf("  max KE(v+)/KE(v-) = %.6f (Theorem 7: <= 1)\n", st.max_energy_ratio);

  class_count* cc = calloc(256, sizeof(class_count));
  int ncls = 0;
  char desc[200], label[200];
  for (long long k = 0; k < M; k++) {
    if (!acc[k] || nc >= MAX_CLS) continue;
    svi_classify(s, V + k * nv, cls);
    count_class(cc, &ncls, cls);
  }
  qsort(cc, (size_t)ncls, sizeof(cc[0]), cmp_class);
  if (nc < MAX_CLS) {
    printf("  outcome classes (per contact %s..: S stick, L lift-off, D slide):\n", pb.cname[0]);
    for (int k = 0; k < ncls && k < 12; k++) {
      describe(&pb, cc[k].cls, desc, sizeof(desc));
      printf("    %-6s %6.2f%%  %s\n", cc[k].cls, 100.0 * cc[k].count / fmax(st.accepted, 1), desc);
    }
    if (ncls > 12) printf("    ... %d more classes\n", ncls - 12);
    if (ncls == 0) printf("    (no sample accepted)\n");
  }

  /* comparison laws */
  double* ap = malloc(sizeof(double) * 64 * nv);
  int nap = 0;
  if (svi_law_simultaneous_all(s, ap, 64, &nap) != SVI_OK)
    nap = svi_law_simultaneous(s, NULL, ap, NULL) >= 0 ? 1 : 0;
  if (nap > 64) nap = 64;
  printf("  Anitescu-Potra (31): %d distinct solution(s)\n", nap);
  svi_plot_pt ap_pts[64], seq_pts[8], native_pt;
  int ap_closes = 0;
  for (int k = 0; k < nap; k++) {
    svi_impact_normal_velocity(s, ap + k * nv, vn);
    svi_classify(s, ap + k * nv, cls);
    describe(&pb, cls, desc, sizeof(desc));
    printf("    %-6s J_n v+ = ", nc < MAX_CLS ? cls : "");
    print_vn(vn, nc);
    int closes = closes_limit(&pb, ap + k * nv);
    ap_closes += closes;
    printf("  %s%s\n", desc, closes ? kClosesLimit : "");
    ap_pts[k] = plot_point(&pb, s, ap + k * nv, vn, vt);
  }
  /* sequential single-contact impacts in every order (all nc! up to 7 contacts, then a seeded
   * sample of 256 orders: a pile's orders run up to 1000 single impacts each, and 5040 of them took
   * 12 s on the bin pile before the samples started): their distinct outcomes */
  int nseq = 0, seq_max = 64;
  double* vseq_all = malloc(sizeof(double) * (size_t)seq_max * nv);
  svi_sequential_stats sst;
  memset(&sst, 0, sizeof(sst));
  svi_law_sequential_all(s, 1000, nc <= 7 ? 0 : 256, o.seed, vseq_all, seq_max, &nseq, &sst);
  printf("  sequential impacts, %lld order(s)%s: %d distinct outcome(s)%s\n", sst.orders,
         sst.exhaustive ? " (every order)" : " (a seeded sample of the orders)", nseq,
         sst.unterminated ? " (some orders do not terminate: counted, not drawn)" : "");
  if (sst.unterminated) printf("    %lld order(s) did not terminate within 1000 single impacts\n", sst.unterminated);
  if (nseq > seq_max) nseq = seq_max;
  int nseq_plot = nseq < 8 ? nseq : 8;
  char seq_label[8][256];
  for (int f = 0; f < nseq; f++) {
    double* vs = vseq_all + (size_t)f * nv;
    svi_impact_normal_velocity(s, vs, vn);
    svi_classify(s, vs, cls);
    describe(&pb, cls, desc, sizeof(desc));
    int closes = closes_limit(&pb, vs);
    if (f < 12) {
      printf("    %-6s J_n v+ = ", nc < MAX_CLS ? cls : "");
      print_vn(vn, nc);
      printf("  %s%s\n", desc, closes ? kClosesLimit : "");
    }
    if (f < nseq_plot) {
      seq_pts[f] = plot_point(&pb, s, vs, vn, vt);
      legend_label(&pb, cls, label, sizeof(label));
      snprintf(seq_label[f], sizeof(seq_label[f]), "Sequential: %.200s%s", label, closes ? " (closes a limit)" : "");
      for (int g = 0; g < f; g++)   /* two outcomes of one class: tell the legend entries apart */
        if (!strcmp(seq_label[g], seq_label[f])) {
          snprintf(seq_label[f], sizeof(seq_label[f]), "Sequential %d: %.200s%s", f + 1, label,
                   closes ? " (closes a limit)" : "");
          break;
        }
    }
  }
  if (nseq > 12) printf("    ... %d more\n", nseq - 12);
  if (pb.has_native) {
    printf("  native MuJoCo from the same state: J_n v+ = ");
    print_vn(pb.native_vn, nc);
    printf("\n");
    native_pt = native_point(&pb, s, vt);
  }

  char csvname[300], plotname[300];
  if (o.csv) snprintf(csvname, sizeof(csvname), "%s", o.csv);
  else snprintf(csvname, sizeof(csvname), "%s.csv", pb.name);
  if (o.plot) snprintf(plotname, sizeof(plotname), "%s", o.plot);
  else snprintf(plotname, sizeof(plotname), "%s.png", pb.name);
  if (strcmp(csvname, "-")) {
    FILE* f = fopen(csvname, "w");
    if (!f) { fprintf(stderr, "svi-sample: cannot write %s\n", csvname); return 1; }
    fprintf(f, "sample,accepted,lcps,class");
    for (int i = 0; i < nv; i++) fprintf(f, ",v%d", i);
    for (int i = 0; i < nc; i++) fprintf(f, ",vn_%s", pb.cname[i]);
    fprintf(f, "\n");
    for (long long k = 0; k < M; k++) {
      svi_classify(s, V + k * nv, cls);
      svi_impact_normal_velocity(s, V + k * nv, vn);
      fprintf(f, "%lld,%d,%d,%s", k, acc[k], lcps[k], cls);
      for (int i = 0; i < nv; i++) fprintf(f, ",%.17g", V[k * nv + i]);
      for (int i = 0; i < nc; i++) fprintf(f, ",%.17g", vn[i]);
      fprintf(f, "\n");
    }
    fclose(f);
    printf("  wrote %s\n", csvname);
  }

  if (strcmp(plotname, "-")) {
    svi_plot_pt* cloud = malloc(sizeof(svi_plot_pt) * (size_t)M);
    long ncloud = 0;
    for (long long k = 0; k < M; k++) {
      if (!acc[k]) continue;
      cloud[ncloud++] = plot_point(&pb, s, V + k * nv, vn, vt);
    }
    /* intermediate velocities of the first samples (the light grey region of the paper's plots) */
    int K = o.paths, cap = cfg.routh.max_steps + 3;
    svi_plot_pt* path = malloc(sizeof(svi_plot_pt) * (size_t)(K > 0 ? K : 1) * (size_t)cap * 8);
    double* traj = malloc(sizeof(double) * (size_t)cap * nv);
    double* va = malloc(sizeof(double) * (size_t)nc);
    double* vb = malloc(sizeof(double) * (size_t)nc);
    double* vout = malloc(sizeof(double) * (size_t)nv);
    long npath = 0;
    svi_routh_config rc1 = cfg.routh;
    rc1.budget = SVI_BUDGET_UNIFORM;
    for (int k = 0; k < K; k++) {
      int tl = 0;
      svi_sample_info info;
      svi_routh_sample(s, &rc1, NULL, (uint64_t)k, vout, &info, traj, cap, &tl);
      for (int t = 0; t + 1 < tl; t++) {        /* segments, 8 points each */
        svi_plot_pt pa = plot_point(&pb, s, traj + t * nv, va, vt);
        svi_plot_pt pz = plot_point(&pb, s, traj + (t + 1) * nv, vb, vt);
        for (int j = 0; j < 8; j++) {
          double a = j / 8.0;
          path[npath++] = (svi_plot_pt){(1 - a) * pa.x + a * pz.x, (1 - a) * pa.y + a * pz.y};
        }
      }
    }
    svi_plot_pt pre = plot_point(&pb, s, def.v, vn, vt);
    const double seqcol[8][3] = {{0.85, 0.15, 0.1}, {0.95, 0.75, 0.0}, {0.2, 0.65, 0.2},
                                 {0.6, 0.3, 0.7}, {0.9, 0.45, 0.1}, {0.3, 0.7, 0.8},
                                 {0.5, 0.5, 0.1}, {0.8, 0.4, 0.6}};
    svi_plot_series ser[10];
    int nser = 0;
    ser[nser++] = (svi_plot_series){ap_closes ? "Anitescu-Potra (simultaneous; closes a limit)"
                                              : "Anitescu-Potra (simultaneous)", 0.1, 0.3, 0.9, 1, ap_pts, nap};
    for (int f = 0; f < nseq_plot; f++)
      ser[nser++] = (svi_plot_series){seq_label[f], seqcol[f][0], seqcol[f][1], seqcol[f][2],
                                      f == 0 ? 2 : 3, &seq_pts[f], 1};
    if (pb.has_native)
      ser[nser++] = (svi_plot_series){"Native MuJoCo (same state)", 0.1, 0.6, 0.3, 4, &native_pt, 1};
    char xl[80], yl[80], footer[240], refused[80] = "";
    axis_labels(&pb, xl, yl, sizeof(xl));
    if (st.limit_refused)
      snprintf(refused, sizeof(refused), "; %lld more close an active limit, not drawn", st.limit_refused);
    snprintf(footer, sizeof(footer), "%lld samples (Algorithm 2%s), h = %.3g N s, N = %d, %.2f LCPs/sample, seed %llu",
             st.accepted, refused, st.h, cfg.routh.max_steps, (double)st.lcps / M, o.seed);
    svi_plot_spec spec = {pb.title, xl, yl, 0, 0, cloud, ncloud, path, npath, &pre, 1, ser, nser, footer};
    if (svi_plot_normal_plane(plotname, &spec) == 0) printf("  wrote %s\n", plotname);
    else rc = -1;
    free(cloud); free(path); free(traj); free(va); free(vb); free(vout);
  }
  free(V); free(acc); free(lcps); free(vn); free(vn0); free(cls); free(cc); free(ap); free(vseq_all);
  free(pb.M); free(pb.Jn); free(pb.Jt); free(pb.mu); free(pb.v); free(pb.cname); free(pb.native_vn);
  free(pb.native_v); free(pb.group); free(pb.gkey); free(pb.lim); free(vt);
  svi_impact_destroy(s);
  return rc < 0 ? 1 : 0;
}
