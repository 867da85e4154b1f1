/* svi_bench_plugin.c -- the plugin's costs next to native MuJoCo, measured side by side.
 *
 *   svi-bench-plugin MODELS_DIR [--quick] [--only=ABCDEFGH]
 *   svi-bench-plugin --count MODEL.xml plugin|native STEPS     (for callgrind, see below)
 *   svi-bench-plugin --impact MODEL.xml REPS | --preview MODEL.xml N
 *
 * The native reference is the same model without svi.impact (svi_load_xml_native: the plugin
 * instance removed through mjSpec), so margins, solver and options are identical.
 * A. mj_step with svi.impact against mj_step without it, on steps without impacts (resting or
 *    swinging bodies), both from the same state, interleaved in blocks so both see the same
 *    machine state; medians over the blocks.
 * B. The impact step of every bundled model: mj_step from the pre-impact state with svi.impact
 *    against native mj_step from the same state.
 * C. One impact event against the number of contacts: a plate landing on N supports
 *    (models/make_plate.sh N; beyond its N = 100 the same script with the cap lifted), N = 2 ..
 *    200, and the least-squares exponent of the impact step's cost in N from 9 to 200; then a
 *    two-legged robot (nv = 18) landing on feet of K x K points (legs_model), K = 2 .. 10; then an
 *    articulated chain of K links (nv = 6 + 2 (K - 1)) landing flat on 4 K contacts (snake_model).
 * D. One outcome of the propagative law against one sample of the set-valued law on the same
 *    impact problems (cradles, billiard break, the tailed runner).
 * E. One impact event among many bodies: a box dropped onto a resting stack of K - 1 boxes
 *    (K = 2 .. 25, 4 contacts per face, 4K contacts, 6K dofs; tower_model), and the exponent
 *    of the impact step's cost in the number of contacts; then a box landing among K boxes
 *    resting apart (bin_model), whose contacts are not in the event; then a mesh cube landing
 *    on a pile of G x G columns of LAYERS mesh cubes (meshpile_model), with the product form's
 *    rebuilds (svi_lcp.c, pfi_rebuild).
 * F. The impact step of the scenes in MODELS_DIR/scenes (robots landing, a pile of boxes in a bin,
 *    a chain, an arm pushing a box), as in B.
 * G. Algorithm 2 on the first impact event of every model and scene, as svi-sample runs it on one
 *    thread: microseconds per sample (spatial events of up to two contacts go through the
 *    per-event pattern maps, svi_modes.c).
 * H. The first impact event of every model and scene under its law for 2000 seeds: one
 *    svi_event_preview a seed against one svi_event_preview_many (the event set up once), and
 *    whether both gave the same qvel bits.
 * --count runs STEPS impact-free steps of one variant inside bench_free_steps(), for
 *    valgrind --tool=callgrind --toggle-collect=bench_free_steps (tests/bench/overhead_callgrind.sh).
 * --impact MODEL.xml REPS [LAW] runs the impact step of the model's first event REPS times inside
 *    impact_steps() (under LAW instead of the model's law if given: setvalued, simultaneous, ...)
 *    and native mj_step from the same state inside native_steps(), for
 *    valgrind --tool=callgrind --toggle-collect=impact_steps (or native_steps); --plate N DIR,
 *    --tower K, --bin K, --meshpile G LAYERS, --legs K and --snake K write the model of table C or E
 *    and print its path.
 * --time MODEL.xml REPS times the model's first impact step against native mj_step from the same
 *    state as table B does (REPS interleaved pairs, medians) and prints both and their ratio.
 * --preview MODEL.xml N draws the first event's outcomes for seeds 1000 .. 1000 + N - 1 by one
 *    svi_event_preview_many inside bench_preview_many() (--toggle-collect=bench_preview_many) and
 *    prints a hash of every bit of their qvel.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>

#include "svi/svi_mujoco.h"
#include "bench_machine.h"

static int cmp_double(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return x < y ? -1 : x > y;
}

static double median(double* x, int n) {
  qsort(x, (size_t)n, sizeof(double), cmp_double);
  return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

typedef struct {
  mjModel *m, *mn;      /* with svi.impact, without */
  mjData *d, *dn;
  double* state;        /* the start state, without the plugin's part */
  int sig;
} pair;

static const int kNoPlugin = mjSTATE_INTEGRATION & ~mjSTATE_PLUGIN;

/* Both models at one impact-free state: the plugin model run from keyframe `key` for `settle`
 * seconds (past its impacts), the same state given to the native model. */
static int make_pair(const char* path, const char* key, double settle, pair* p) {
  char err[1000];
  memset(p, 0, sizeof(*p));
  p->m = svi_load_xml(path, err, sizeof(err));
  p->mn = svi_load_xml_native(path, err, sizeof(err));
  if (!p->m || !p->mn) { fprintf(stderr, "%s\n", err); return 0; }
  p->d = mj_makeData(p->m);
  p->dn = mj_makeData(p->mn);
  int k = mj_name2id(p->m, mjOBJ_KEY, key);
  if (k < 0 && p->m->nkey > 0) k = 0;   /* e.g. the bouncing ball's "drop" */
  if (k >= 0) mj_resetDataKeyframe(p->m, p->d, k);
  while (p->d->time < settle) mj_step(p->m, p->d);
  p->sig = kNoPlugin;
  p->state = malloc(sizeof(double) * (size_t)mj_stateSize(p->m, p->sig));
  mj_getState(p->m, p->d, p->state, p->sig);
  return 1;
}

static void free_pair(pair* p) {
  free(p->state);
  if (p->d) mj_deleteData(p->d);
  if (p->dn) mj_deleteData(p->dn);
  if (p->m) mj_deleteModel(p->m);
  if (p->mn) mj_deleteModel(p->mn);
}

/* the same start for both: the plugin keeps its touching list from the settled run */
static void restart(pair* p) {
  mj_setState(p->m, p->d, p->state, p->sig);
  mj_setState(p->mn, p->dn, p->state, p->sig);
}

/* every bundled model: the *.xml files of the models directory, sorted */
static char* kModels[128];
static int nModels;

static int cmp_name(const void* a, const void* b) { return strcmp(*(char* const*)a, *(char* const*)b); }

static void list_models(const char* dir) {   /* replaces the list */
  for (int i = 0; i < nModels; i++) free(kModels[i]);
  nModels = 0;
  DIR* dd = opendir(dir);
  struct dirent* e;
  while (dd && (e = readdir(dd)) && nModels < 128) {
    size_t l = strlen(e->d_name);
    if (l > 4 && !strcmp(e->d_name + l - 4, ".xml")) kModels[nModels++] = strdup(e->d_name);
  }
  if (dd) closedir(dd);
  qsort(kModels, (size_t)nModels, sizeof(char*), cmp_name);
}

/* Impact-free steps: 3 s past the first impacts (resting), or the cradle swinging as one after its
 * impact; the rimless wheel rolls on, 1 ms after an impact (blocks of 100 steps end before the
 * next one).  The tables print the events seen, which must be 0. */
static double settle_time(const char* path) {
  if (strstr(path, "cradle")) return 0.01;
  if (strstr(path, "rimless")) return 0.0015;
  return 3.0;
}

/* A: one model */
static void overhead(const char* dir, const char* file, int steps) {
  char path[700];
  snprintf(path, sizeof(path), "%s/%s", dir, file);
  pair p;
  if (!make_pair(path, "impact", settle_time(path), &p)) return;
  svi_instance* in = svi_instance_of(p.m, p.d);
  long long ev0 = svi_instance_counters(in).events;
  mjtNum* touch = malloc(sizeof(mjtNum) * (size_t)p.m->npluginstate);
  memcpy(touch, p.d->plugin_state, sizeof(mjtNum) * (size_t)p.m->npluginstate);
  const int block = 100;
  int nb = steps / block;
  double* tn = malloc(sizeof(double) * (size_t)nb);
  double* ts = malloc(sizeof(double) * (size_t)nb);
  for (int b = 0; b < nb; b++) {
    restart(&p);
    memcpy(p.d->plugin_state, touch, sizeof(mjtNum) * (size_t)p.m->npluginstate);
    double t0 = bench_now();
    for (int i = 0; i < block; i++) mj_step(p.mn, p.dn);
    double t1 = bench_now();
    for (int i = 0; i < block; i++) mj_step(p.m, p.d);
    double t2 = bench_now();
    tn[b] = (t1 - t0) / block;
    ts[b] = (t2 - t1) / block;
  }
  long long ev = svi_instance_counters(in).events - ev0;
  double mn = median(tn, nb), ms = median(ts, nb);
  printf("| %s | %d | %d | %.2f | %.2f | %+.1f%% | %lld |\n", file, (int)p.m->nv, p.d->ncon, mn * 1e6, ms * 1e6,
         100 * (ms - mn) / mn, ev);
  free(tn); free(ts); free(touch);
  free_pair(&p);
}

/* --count: STEPS steps of one variant, for callgrind's --toggle-collect=bench_free_steps */
__attribute__((noinline)) void bench_free_steps(const mjModel* m, mjData* d, int n) {
  for (int i = 0; i < n; i++) mj_step(m, d);
}

static int count_mode(const char* path, const char* which, int steps) {
  pair p;
  if (!make_pair(path, "impact", settle_time(path), &p)) return 1;
  restart(&p);
  int native = !strcmp(which, "native");
  svi_instance* in = svi_instance_of(p.m, p.d);
  long long e0 = svi_instance_counters(in).events;
  bench_free_steps(native ? p.mn : p.m, native ? p.dn : p.d, steps);
  printf("MuJoCo %s, %s %s: %d steps, t = %g, impact events %lld\n", mj_versionString(), path, which, steps,
         native ? p.dn->time : p.d->time, svi_instance_counters(in).events - e0);
  free_pair(&p);
  return 0;
}

/* The model with its first impact event found (within 10 s of simulated time, as svi-sample
 * searches; from the keyframe "impact", else the model's first keyframe, else qpos0): d at the
 * pre-impact state of event 0.  NULL, and why on stderr, if the model has no svi.impact
 * instance or no event. */
static svi_instance* first_event(const char* path, pair* p) {
  char err[1000];
  memset(p, 0, sizeof(*p));
  p->m = svi_load_xml(path, err, sizeof(err));
  p->mn = svi_load_xml_native(path, err, sizeof(err));
  if (!p->m || !p->mn) { fprintf(stderr, "%s\n", err); return NULL; }
  p->d = mj_makeData(p->m);
  p->dn = mj_makeData(p->mn);
  int k = mj_name2id(p->m, mjOBJ_KEY, "impact");
  if (k < 0 && p->m->nkey > 0) k = 0;
  if (k >= 0) mj_resetDataKeyframe(p->m, p->d, k);
  svi_instance* in = svi_instance_of(p->m, p->d);
  if (!in) {
    fprintf(stderr, "%s: does not declare the svi.impact plugin (docs/usage.md)\n", path);
    return NULL;
  }
  while (svi_event_count(in) == 0 && p->d->time < 10) mj_step(p->m, p->d);
  if (!svi_event_count(in)) fprintf(stderr, "%s: no impact event in 10 s\n", path);
  return svi_event_count(in) ? in : NULL;
}

/* both models at event 0's pre-impact state (the native one first: svi_event_restore drops the
 * event from the log, and svi_event_load_native reads it) */
static int load_event(svi_instance* in, pair* p) {
  return svi_event_load_native(in, p->m, 0, p->mn, p->dn) == 0 && svi_event_restore(in, p->m, p->d, 0) == 0;
}

typedef struct { double impact_us, native_us; int ncontact, nt, lcps, ok; } step_cost;

/* B: the impact step of one model: mj_step with svi.impact from the pre-impact state of the
 * first event against native mj_step from the same state, interleaved, medians */
static step_cost impact_step(const char* path, int reps) {
  step_cost c = {0, 0, 0, 0, 0, 0};
  pair p;
  svi_instance* in = first_event(path, &p);
  if (!in) { free_pair(&p); return c; }
  svi_event ev = *svi_event_get(in, 0);
  double* ts = malloc(sizeof(double) * (size_t)reps);
  double* tn = malloc(sizeof(double) * (size_t)reps);
  int r = 0;
  for (; r < reps; r++) {
    if (!load_event(in, &p)) break;
    double t0 = bench_now();
    mj_step(p.m, p.d);
    double t1 = bench_now();
    mj_step(p.mn, p.dn);
    double t2 = bench_now();
    ts[r] = t1 - t0;
    tn[r] = t2 - t1;
  }
  if (r == reps) {
    c.impact_us = median(ts, reps) * 1e6;
    c.native_us = median(tn, reps) * 1e6;
    c.ncontact = ev.ncontact;
    c.nt = ev.nt;
    c.lcps = ev.lcps;
    c.ok = 1;
  }
  free(ts); free(tn);
  free_pair(&p);
  return c;
}

static void impact_row(const char* path, const char* label, int reps) {
  pair p;
  svi_instance* in = first_event(path, &p);
  int nv = in ? (int)p.m->nv : 0;
  free_pair(&p);
  step_cost c = impact_step(path, reps);
  if (!c.ok) { printf("| %s | no impact event |\n", label); return; }
  printf("| %s | %d | %d | %d | %.1f | %.1f | %.1f |\n", label, nv, c.ncontact, c.lcps, c.impact_us,
         c.native_us, c.impact_us / c.native_us);
}

/* B and F: the impact_row of every listed model of dir */
static void impact_table(const char* dir, int reps) {
  printf("| model | nv | contacts | LCPs | impact step us | native mj_step us | ratio |\n|---|---|---|---|---|---|---|\n");
  for (int i = 0; i < nModels; i++) {
    char path[1400];
    snprintf(path, sizeof(path), "%s/%s", dir, kModels[i]);
    impact_row(path, kModels[i], reps);
  }
}

/* G: Algorithm 2 on a model's first impact event, as svi-sample runs it on one thread: the
 * model's Routh step and N, Sobol budgets (uniform beyond the Sobol dimensions), the event's
 * set-up included; microseconds per sample, the fastest of reps runs.  A slow event (a run of 256
 * samples longer than 0.1 s) runs fewer samples, at least 256. */
static void alg2_row(const char* path, const char* label, long long samples, int reps) {
  pair p;
  svi_instance* in = first_event(path, &p);
  mjData* scratch = in ? mj_makeData(p.m) : NULL;
  svi_problem_def def;
  int nc = scratch ? svi_event_problem(in, p.m, scratch, 0, &def) : 0;
  double* v = nc > 0 ? malloc(sizeof(double) * (size_t)samples * def.nv) : NULL;
  if (!v) {
    printf("| %s | no impact event |\n", label);
  } else {
    /* svi_event_approximate: the instance's step settings and seed, one thread (the problem is
     * rebuilt on scratch by each call: one mj_forward, inside the timed set-up) */
    uint64_t seed = svi_instance_config(in)->seed;
    svi_approx_stats st;
    long long first = samples < 256 ? samples : 256;
    double best = INFINITY, t0 = bench_now();
    int rc = svi_event_approximate(in, p.m, scratch, 0, first, 1, seed, v, NULL, &st);
    double t256 = bench_now() - t0;
    if (t256 > 0.1) samples = first;
    for (int r = 0; r < reps && rc >= 0; r++) {
      double t1 = bench_now();
      rc = svi_event_approximate(in, p.m, scratch, 0, samples, 1, seed, v, NULL, &st);
      double t = bench_now() - t1;
      best = t < best ? t : best;
    }
    if (rc < 0) printf("| %s | %s |\n", label, svi_status_string(rc));
    else
      printf("| %s | %d | %d | %s | %.2f | %.2f | %lld of %lld |\n", label, def.nv, nc,
             def.nt == 2 ? "spatial" : "planar", (double)st.lcps / st.samples, best / samples * 1e6, st.accepted,
             samples);
  }
  free(v);
  if (scratch) mj_deleteData(scratch);
  free_pair(&p);
}

/* G and H: a row for every listed model of dir, then of dir/scenes */
typedef void (*model_row)(const char* path, const char* label, long long n, int reps);

static void models_and_scenes(const char* dir, model_row row, long long n, int reps) {
  char sdir[700];
  snprintf(sdir, sizeof(sdir), "%s/scenes", dir);
  const char* dirs[2] = {dir, sdir};
  for (int k = 0; k < 2; k++) {
    list_models(dirs[k]);
    for (int i = 0; i < nModels; i++) {
      char path[1400];
      snprintf(path, sizeof(path), "%s/%s", dirs[k], kModels[i]);
      row(path, kModels[i], n, reps);
    }
  }
}

/* H: outcomes of a model's first impact event for n seeds under its own law, in C: one
 * svi_event_preview per seed against one svi_event_preview_many for all of them (the event set up
 * once); microseconds per seed, the fastest of reps runs, and a check that both give the same qvel
 * bits.  A slow event (a preview over 1 ms) runs n / 50 seeds, at least 4. */
static void preview_row(const char* path, const char* label, long long nseed, int reps) {
  int n = (int)nseed;
  pair p;
  svi_instance* in = first_event(path, &p);
  mjData* scratch = in ? mj_makeData(p.m) : NULL;
  if (!scratch) {
    printf("| %s | no impact event |\n", label);
    free_pair(&p);
    return;
  }
  int nv = p.m->nv;
  svi_law law = (svi_law)svi_event_get(in, 0)->law;
  double* q1 = malloc(sizeof(double) * (size_t)n * nv);
  double* q2 = malloc(sizeof(double) * (size_t)n * nv);
  uint64_t* seeds = malloc(sizeof(uint64_t) * (size_t)n);
  svi_event* rec = malloc(sizeof(svi_event) * (size_t)n);
  for (int k = 0; k < n; k++) seeds[k] = 1000 + (uint64_t)k;
  double t0 = bench_now();
  int st = svi_event_preview(in, p.m, scratch, 0, seeds[0], law, q1);
  if (bench_now() - t0 > 1e-3) n = n / 50 > 4 ? n / 50 : 4;
  double one = INFINITY, many = INFINITY;
  for (int r = 0; r < reps && st == SVI_OK; r++) {
    double t1 = bench_now();
    for (int k = 0; k < n && st == SVI_OK; k++) st = svi_event_preview(in, p.m, scratch, 0, seeds[k], law, q1 + (size_t)k * nv);
    double t2 = bench_now();
    if (st == SVI_OK) st = svi_event_preview_many(in, p.m, scratch, 0, seeds, n, law, q2, rec);
    double t3 = bench_now();
    one = t2 - t1 < one ? t2 - t1 : one;
    many = t3 - t2 < many ? t3 - t2 : many;
  }
  if (st != SVI_OK) printf("| %s | %s |\n", label, svi_status_string(st));
  else
    printf("| %s | %d | %s | %d | %.2f | %.2f | %.1f | %s |\n", label, rec[0].ncontact, svi_law_name(law), n,
           one / n * 1e6, many / n * 1e6, one / many,
           memcmp(q1, q2, sizeof(double) * (size_t)n * nv) ? "**differ**" : "same");
  free(q1); free(q2); free(seeds); free(rec);
  mj_deleteData(scratch);
  free_pair(&p);
}

/* the plate model of table C: models/make_plate.sh, whose N <= 100 cap (the bundled models) is
 * lifted here for the scaling run.  The script is looked for first: sed's failure inside the pipe
 * would not reach system()'s status, and `sh` on empty input writes an empty model (a run from
 * another directory than the repository's printed "no impact event" for every plate). */
static int plate_model(const char* dir, int n, char* path, size_t len) {
  char cmd[900], script[600];
  snprintf(path, len, "/tmp/svi_bench_plate_%d.xml", n);
  snprintf(script, sizeof(script), "%s/make_plate.sh", dir);
  if (access(script, R_OK) != 0) {
    fprintf(stderr, "svi-bench-plugin: cannot read %s (give the models directory: svi-bench-plugin "
                    "PATH/TO/models)\n", script);
    return 0;
  }
  snprintf(cmd, sizeof(cmd), "sed 's/-le 100 ]/-le 1000 ]/' %s | sh -s %d > %s", script, n, path);
  return system(cmd) == 0;
}

/* C: a plate on n supports; returns the cost, prints the row */
static step_cost plate(const char* dir, int n, int reps) {
  char path[256];
  step_cost c = {0, 0, 0, 0, 0, 0};
  if (!plate_model(dir, n, path, sizeof(path))) { fprintf(stderr, "cannot generate %s\n", path); return c; }
  c = impact_step(path, reps);
  if (!c.ok) { printf("| %d | no impact event |\n", n); return c; }
  printf("| %d | %d | %d | %d | %.1f | %.1f | %.2f |\n", n, c.ncontact, c.nt == 2 ? 7 * c.ncontact : 5 * c.ncontact,
         c.lcps, c.impact_us, c.native_us, c.impact_us / c.native_us);
  return c;
}

/* A generated model's file /tmp/svi_bench_NAME.xml (its path in path), opened and begun: the
 * model element, 1 ms steps with the given extra option attributes, and svi.impact with
 * max_contacts */
static FILE* model_begin(const char* name, const char* option, int max_contacts, char* path, size_t len) {
  snprintf(path, len, "/tmp/svi_bench_%s.xml", name);
  FILE* f = fopen(path, "w");
  if (!f) return NULL;
  fprintf(f, "<mujoco model=\"%s\">\n  <option timestep=\"0.001\"%s/>\n  <size memory=\"64M\"/>\n"
             "  <extension><plugin plugin=\"svi.impact\"><instance name=\"impacts\">"
             "<config key=\"max_contacts\" value=\"%d\"/></instance></plugin></extension>\n",
          name, option, max_contacts);
  return f;
}

/* Table E's scenes: nbox boxes (0.2 m cubes, 1 kg, free joints) resting at xyz (nbox x 3), box
 * `drop` 0.1 mm higher and falling at 1 m/s (key "impact"); friction 0.6, MuJoCo's default pyramidal
 * cone, gap = margin = 2.5 mm (reported early, as make_plate.sh), a floor of half-size `floor`. */
static int box_scene(const char* name, int nbox, const double* xyz, int drop, double floor, int max_contacts,
                     char* path, size_t len) {
  FILE* f = model_begin(name, "", max_contacts, path, len);
  if (!f) return 0;
  fprintf(f, "  <default><geom friction=\"0.6 0.005 0.0001\" gap=\"0.0025\" margin=\"0.0025\"/></default>\n"
             "  <worldbody>\n    <geom name=\"floor\" type=\"plane\" size=\"%g %g 0.1\"/>\n",
          floor, floor);
  for (int i = 0; i < nbox; i++)
    fprintf(f, "    <body name=\"b%d\" pos=\"%g %g %g\"><freejoint/>"
               "<geom type=\"box\" size=\"0.1 0.1 0.1\" mass=\"1\"/></body>\n",
            i, xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2]);
  fprintf(f, "  </worldbody>\n  <keyframe><key name=\"impact\" qpos=\"");
  for (int i = 0; i < nbox; i++)
    fprintf(f, "%g %g %g 1 0 0 0 ", xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2] + (i == drop ? 1e-4 : 0));
  fprintf(f, "\" qvel=\"");
  for (int i = 0; i < nbox; i++) fprintf(f, "0 0 %d 0 0 0 ", i == drop ? -1 : 0);
  fprintf(f, "\"/></keyframe>\n</mujoco>\n");
  return fclose(f) == 0;
}

/* the stack of table E: k boxes on each other and on the floor, the top one landing */
static int tower_model(int k, char* path, size_t len) {
  double* xyz = calloc(3 * (size_t)k, sizeof(double));
  if (!xyz) return 0;
  for (int i = 0; i < k; i++) xyz[3 * i + 2] = 0.1 + 0.2 * i;
  char name[32];
  snprintf(name, sizeof(name), "tower_%d", k);
  int ok = box_scene(name, k, xyz, k - 1, 2, 4 * k + 8, path, len);
  free(xyz);
  return ok;
}

/* Table E's third part: a pile of mesh cubes, the shape robots with mesh parts and bins of
 * objects give: g x g columns of `layers` cubes (5 cm convex meshes of 8 vertices, 62.5 g,
 * friction 0.6, gap = margin = 2.5 mm) resting on each other and on the floor, the columns 5.5 mm
 * apart (their side faces out of each other's margin), and one more cube tilted 10 degrees about
 * (1, 1, 0) landing on the top layer at 1 m/s, its lowest corner 0.1 mm above it (key "impact").
 * Mesh-mesh collision reports many points a face (two layers of 2 x 2: 107 contacts in the event),
 * whose W is far from full rank: Lemke's paths run several pivots a row (svi_lcp.c, pfi_rebuild). */
static int meshpile_model(int g, int layers, char* path, size_t len) {
  char name[48];
  snprintf(name, sizeof(name), "meshpile_%d_%d", g, layers);
  int nbody = g * g * layers + 1;
  FILE* f = model_begin(name, "", 32 * nbody, path, len);
  if (!f) return 0;
  const double h = 0.025, pitch = 0.0555, half = 3.14159265358979323846 / 36;   /* half of 10 degrees */
  const double c = cos(half), sn = sin(half) / sqrt(2.0);
  const double quat[4] = {c, sn, sn, 0};   /* 10 degrees about (1, 1, 0) */
  /* the tilted cube's lowest corner below its centre: the rotated corners' smallest z,
   * z = 2 (q_x q_z - q_w q_y) x + 2 (q_y q_z + q_w q_x) y + (1 - 2 (q_x^2 + q_y^2)) z */
  double zmin = 0;
  for (int k = 0; k < 8; k++) {
    double x = k & 1 ? h : -h, y = k & 2 ? h : -h, z = k & 4 ? h : -h;
    double zr = 2 * (quat[1] * quat[3] - quat[0] * quat[2]) * x + 2 * (quat[2] * quat[3] + quat[0] * quat[1]) * y +
                (1 - 2 * (quat[1] * quat[1] + quat[2] * quat[2])) * z;
    zmin = zr < zmin ? zr : zmin;
  }
  const double top = 2 * h * layers, xd = 0.01, yd = 0.012;   /* the landing cube off the columns' axes */
  fprintf(f, "  <default><geom friction=\"0.6 0.005 0.0001\" gap=\"0.0025\" margin=\"0.0025\"/></default>\n"
             "  <asset><mesh name=\"cube\" scale=\"%g %g %g\" vertex=\"-1 -1 -1  1 -1 -1  -1 1 -1  1 1 -1  "
             "-1 -1 1  1 -1 1  -1 1 1  1 1 1\"/></asset>\n"
             "  <worldbody>\n    <geom name=\"floor\" type=\"plane\" size=\"2 2 0.1\"/>\n", h, h, h);
  for (int pass = 0; pass < 2; pass++) {   /* the bodies, then the keyframe's qpos */
    if (pass) fprintf(f, "  </worldbody>\n  <keyframe><key name=\"impact\" qpos=\"");
    for (int b = 0; b < nbody; b++) {
      int last = b == nbody - 1, l = b / (g * g), i = b % (g * g) / g, j = b % g;
      double x = last ? xd : (i - (g - 1) / 2.0) * pitch, y = last ? yd : (j - (g - 1) / 2.0) * pitch;
      double z = last ? top - zmin + (pass ? 1e-4 : 0.02) : h + 2 * h * l;
      if (!pass)
        fprintf(f, "    <body name=\"c%d\" pos=\"%.10g %.10g %.10g\"><freejoint/>"
                   "<geom type=\"mesh\" mesh=\"cube\" density=\"500\"/></body>\n", b, x, y, z);
      else if (last) fprintf(f, "%.10g %.10g %.10g %.10g %.10g %.10g 0", x, y, z, quat[0], quat[1], quat[2]);
      else fprintf(f, "%.10g %.10g %.10g 1 0 0 0 ", x, y, z);
    }
  }
  fprintf(f, "\" qvel=\"");
  for (int b = 0; b < nbody; b++) fprintf(f, "0 0 %d 0 0 0 ", b == nbody - 1 ? -1 : 0);
  fprintf(f, "\"/></keyframe>\n</mujoco>\n");
  return fclose(f) == 0;
}

/* table E's second part: a box landing flat on the floor among k boxes resting on it (a grid of
 * 0.5 m pitch, none touching another) */
static int bin_model(int k, char* path, size_t len) {
  int side = 1;
  while (side * side < k + 1) side++;
  double* xyz = calloc(3 * (size_t)(k + 1), sizeof(double));
  if (!xyz) return 0;
  for (int i = 0; i <= k; i++) {
    xyz[3 * i] = 0.5 * (i % side);
    xyz[3 * i + 1] = 0.5 * (i / side);
    xyz[3 * i + 2] = 0.1;
  }
  char name[32];
  snprintf(name, sizeof(name), "bin_%d", k);
  int ok = box_scene(name, k + 1, xyz, 0, 20, 4 * k + 8, path, len);
  free(xyz);
  return ok;
}

/* Table C's second part: a two-legged robot landing flat on both feet, each foot a grid of k x k
 * spheres (2 k^2 contacts).  A floating trunk (20 kg) with two legs of a 3-hinge hip, a knee and
 * a 2-hinge ankle (thigh 4 kg, shin 3 kg, foot 1 kg; nv = 18), the feet 0.22 x 0.12 m; falling
 * at 0.5 m/s with 0.1 m/s forward and a 0.05 rad/s roll, the soles 0.1 mm above the floor (key
 * "impact").  Friction 0.8, elliptic cones, gap 2.5 mm as make_plate.sh.  Joint limits in radians
 * (hips and ankles +-1, knee -2 to 0.5), none reached at the landing: until the thirtieth speed
 * session the ranges were read in MuJoCo's default degrees, so every joint sat within 1 degree of
 * a limit MuJoCo enforced and the straight knees at theirs, which the law has no rows for. */
static int legs_model(int k, char* path, size_t len) {
  char name[32];
  snprintf(name, sizeof(name), "legs_%d", k);
  FILE* f = model_begin(name, " cone=\"elliptic\"", 2 * k * k + 16, path, len);
  if (!f) return 0;
  fprintf(f, "  <compiler angle=\"radian\"/>\n  <default>\n    <geom condim=\"3\" margin=\"0\" gap=\"0.0025\" friction=\"0.8 0.005 0.0001\" "
             "contype=\"0\" conaffinity=\"0\"/>\n    <joint type=\"hinge\" damping=\"1\"/>\n"
             "    <default class=\"spike\"><geom type=\"sphere\" size=\"0.005\" contype=\"1\" mass=\"0.001\"/></default>\n"
             "  </default>\n  <worldbody>\n"
             "    <geom name=\"floor\" type=\"plane\" size=\"2 2 0.1\" conaffinity=\"1\"/>\n"
             "    <body name=\"trunk\" pos=\"0 0 1\"><freejoint/>"
             "<geom type=\"box\" size=\"0.15 0.2 0.1\" mass=\"20\"/>\n");
  for (int leg = 0; leg < 2; leg++) {
    const char* side = leg ? "r" : "l";
    fprintf(f, "      <body name=\"thigh_%s\" pos=\"0 %g -0.1\">"
               "<joint axis=\"1 0 0\" range=\"-1 1\"/><joint axis=\"0 1 0\" range=\"-1 1\"/>"
               "<joint axis=\"0 0 1\" range=\"-1 1\"/>"
               "<geom type=\"capsule\" fromto=\"0 0 0 0 0 -0.4\" size=\"0.05\" mass=\"4\"/>\n"
               "        <body name=\"shin_%s\" pos=\"0 0 -0.4\"><joint axis=\"0 1 0\" range=\"-2 0.5\"/>"
               "<geom type=\"capsule\" fromto=\"0 0 0 0 0 -0.4\" size=\"0.04\" mass=\"3\"/>\n"
               "          <body name=\"foot_%s\" pos=\"0 0 -0.4\">"
               "<joint axis=\"0 1 0\" range=\"-1 1\"/><joint axis=\"1 0 0\" range=\"-1 1\"/>"
               "<geom type=\"box\" size=\"0.11 0.06 0.01\" pos=\"0 0 -0.01\" mass=\"1\"/>\n",
            side, leg ? -0.12 : 0.12, side, side);
    for (int i = 0; i < k; i++)
      for (int j = 0; j < k; j++)
        fprintf(f, "            <geom class=\"spike\" pos=\"%.5f %.5f -0.025\"/>\n",
                k > 1 ? -0.1 + 0.2 * i / (k - 1) : 0.0, k > 1 ? -0.05 + 0.1 * j / (k - 1) : 0.0);
    fprintf(f, "          </body>\n        </body>\n      </body>\n");
  }
  fprintf(f, "    </body>\n  </worldbody>\n  <keyframe><key name=\"impact\" "
             "qpos=\"0 0 0.9301 1 0 0 0  0 0 0 0 0 0  0 0 0 0 0 0\" "
             "qvel=\"0.1 0 -0.5 0.05 0 0  0 0 0 0 0 0  0 0 0 0 0 0\"/></keyframe>\n</mujoco>\n");
  return fclose(f) == 0;
}

/* Table C's third part: an articulated chain (a snake robot) landing flat, k box links of
 * 0.095 x 0.06 x 0.04 m and 0.2 kg in a row along x, each joined to the one before by a yaw and a
 * pitch hinge (+-60, +-30 degrees, damping 0.1), the first one floating: nv = 6 + 2 (k - 1), 4 k
 * contacts (each link's four bottom corners on the floor), one body per 4 contacts in one tree.
 * Falling at 1 m/s, 0.1 mm above the floor (key "impact"); friction 0.7, MuJoCo's default
 * pyramidal cone, gap 2.5 mm as make_plate.sh. */
static int snake_model(int k, char* path, size_t len) {
  char name[32];
  snprintf(name, sizeof(name), "snake_%d", k);
  FILE* f = model_begin(name, "", 4 * k + 16, path, len);
  if (!f) return 0;
  fprintf(f, "  <default>\n    <geom type=\"box\" size=\"0.0475 0.03 0.02\" pos=\"0.05 0 0\" mass=\"0.2\" "
             "friction=\"0.7 0.005 0.0001\" gap=\"0.0025\"/>\n"
             "    <joint type=\"hinge\" damping=\"0.1\"/>\n  </default>\n  <worldbody>\n"
             "    <geom name=\"floor\" type=\"plane\" size=\"5 5 0.1\" pos=\"0 0 0\"/>\n"
             "    <body name=\"link0\" pos=\"0 0 0.0201\"><freejoint/><geom/>\n");
  for (int i = 1; i < k; i++)
    fprintf(f, "    <body name=\"link%d\" pos=\"0.1 0 0\"><joint axis=\"0 0 1\" range=\"-60 60\"/>"
               "<joint axis=\"0 1 0\" range=\"-30 30\"/><geom/>\n", i);
  for (int i = 0; i < k; i++) fprintf(f, "    </body>\n");
  fprintf(f, "  </worldbody>\n  <keyframe><key name=\"impact\" qpos=\"0 0 0.0201 1 0 0 0");
  for (int i = 1; i < k; i++) fprintf(f, " 0 0");
  fprintf(f, "\" qvel=\"0 0 -1 0 0 0");
  for (int i = 1; i < k; i++) fprintf(f, " 0 0");
  fprintf(f, "\"/></keyframe>\n</mujoco>\n");
  return fclose(f) == 0;
}

/* least-squares slope of log y against log x */
static double loglog_slope(const double* x, const double* y, int n) {
  double sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (int i = 0; i < n; i++) {
    double a = log(x[i]), b = log(y[i]);
    sx += a; sy += b; sxx += a * a; sxy += a * b;
  }
  return (n * sxy - sx * sy) / (n * sxx - sx * sx);
}

/* tables C and E: a row of N contacts into the growth fit, from 9 contacts on (issue 11's range) */
static void fit_add(double* fx, double* fy, double* fn, int* nf, double n, double impact_us, double native_us) {
  if (n < 9) return;
  fx[*nf] = n;
  fy[*nf] = impact_us;
  fn[*nf] = native_us;
  (*nf)++;
}

/* and the fit's line, over the rows it took */
static void fit_print(const double* fx, const double* fy, const double* fn, int nf) {
  if (nf >= 2)
    printf("\nLeast-squares fit over N = %.0f .. %.0f: impact step ~ N^%.2f, native mj_step ~ N^%.2f\n", fx[0],
           fx[nf - 1], loglog_slope(fx, fy, nf), loglog_slope(fx, fn, nf));
}

/* --impact: for callgrind's --toggle-collect */
__attribute__((noinline)) void impact_steps(svi_instance* in, pair* p, int reps) {
  for (int r = 0; r < reps; r++) {
    if (!load_event(in, p)) return;
    mj_step(p->m, p->d);
  }
}

__attribute__((noinline)) void native_steps(svi_instance* in, pair* p, int reps) {
  for (int r = 0; r < reps; r++) {
    if (svi_event_load_native(in, p->m, 0, p->mn, p->dn) != 0) return;
    mj_step(p->mn, p->dn);
  }
}

static int impact_mode(const char* path, int reps, const char* law_name) {
  int law = law_name ? svi_law_from_name(law_name) : -1;
  if (law_name && law < 0) {
    fprintf(stderr, "--impact: unknown law '%s' (one of:", law_name);
    for (int l = 0; l < SVI_NLAW; l++) fprintf(stderr, " %s", svi_law_name((svi_law)l));
    fprintf(stderr, ")\n");
    return 1;
  }
  pair p;
  svi_instance* in = first_event(path, &p);
  if (!in) { free_pair(&p); return 1; }
  if (law >= 0) svi_set_law(in, law);   /* the event's steps below under that law */
  impact_steps(in, &p, reps);
  svi_event ev = *svi_event_get(in, svi_event_count(in) - 1);
  uint64_t hash = bench_fnv(BENCH_FNV0, p.d->qvel, (size_t)p.m->nv);   /* the last impact step's qvel */
  native_steps(in, &p, reps);
  printf("MuJoCo %s, %s: %d impact steps (%d contacts, %d LCPs, status %d, fallback %d), hash of qvel %016llx, "
         "and %d native steps\n", mj_versionString(), path, reps, ev.ncontact, ev.lcps, ev.status, ev.fallback,
         (unsigned long long)hash, reps);
  free_pair(&p);
  return 0;
}

/* --preview MODEL N: the first event's outcomes for seeds 1000 .. 1000 + N - 1 under its law,
 * by one svi_event_preview_many (bench_preview_many, for callgrind's --toggle-collect), and an
 * FNV-1a hash of every bit of the N qvel */
__attribute__((noinline)) int bench_preview_many(svi_instance* in, pair* p, mjData* scratch, const uint64_t* seeds,
                                                 int n, svi_law law, double* q) {
  return svi_event_preview_many(in, p->m, scratch, 0, seeds, n, law, q, NULL);
}

static int preview_mode(const char* path, int n) {
  pair p;
  svi_instance* in = first_event(path, &p);
  if (!in || n < 1) { free_pair(&p); return 1; }
  mjData* scratch = mj_makeData(p.m);
  svi_law law = (svi_law)svi_event_get(in, 0)->law;
  double* q = malloc(sizeof(double) * (size_t)n * p.m->nv);
  uint64_t* seeds = malloc(sizeof(uint64_t) * (size_t)n);
  for (int k = 0; k < n; k++) seeds[k] = 1000 + (uint64_t)k;
  int st = bench_preview_many(in, &p, scratch, seeds, n, law, q);
  uint64_t hash = bench_fnv(BENCH_FNV0, q, (size_t)n * p.m->nv);
  printf("MuJoCo %s, %s: %d outcomes of event 0 under %s (status %d), hash of qvel %016llx\n", mj_versionString(),
         path, n, svi_law_name(law), st, (unsigned long long)hash);
  free(q); free(seeds);
  mj_deleteData(scratch);
  free_pair(&p);
  return st == SVI_OK ? 0 : 1;
}

/* D: one outcome of the propagative law against one sample of the set-valued law, on the same
 * impact problem (the model's first event): what a running simulation pays per impact */
static void law_cost(const char* dir, const char* file, int reps) {
  char path[700], err[1000];
  snprintf(path, sizeof(path), "%s/%s", dir, file);
  mjModel* m = svi_load_xml(path, err, sizeof(err));
  if (!m) { fprintf(stderr, "%s\n", err); return; }
  mjData *d = mj_makeData(m), *scratch = mj_makeData(m);
  int k = mj_name2id(m, mjOBJ_KEY, "impact");
  if (k >= 0) mj_resetDataKeyframe(m, d, k);
  svi_instance* in = svi_instance_of(m, d);
  while (svi_event_count(in) == 0 && d->time < 1) mj_step(m, d);
  svi_problem_def def;
  int nc = svi_event_count(in) ? svi_event_problem(in, m, scratch, 0, &def) : 0;
  if (nc <= 0) { printf("| %s | no impact event |\n", file); mj_deleteData(d); mj_deleteData(scratch); mj_deleteModel(m); return; }
  svi_impact* s = svi_impact_create(def.nv, nc, def.nt);
  svi_propagative* w = svi_propagative_create(def.nv, nc, 0);
  svi_impact_setup(s, &def, NULL, 0);
  double* v = malloc(sizeof(double) * (size_t)def.nv);
  double* tp = malloc(sizeof(double) * (size_t)reps);
  double* tr = malloc(sizeof(double) * (size_t)reps);
  svi_propagative_config pc = svi_propagative_default_config();
  svi_routh_config rc = svi_routh_default_config();
  const svi_config* cfg = svi_instance_config(in);
  rc.step = cfg->step;
  rc.step_abs = cfg->step_abs;
  rc.max_steps = cfg->max_steps;
  svi_propagative_info pi;
  svi_sample_info si;
  long long lcps = 0;
  const int batch = 100;
  for (int r = 0; r < reps; r++) {
    double t0 = bench_now();
    for (int b = 0; b < batch; b++) svi_propagative_outcome(w, s, &pc, (uint64_t)(r * batch + b), v, NULL, &pi);
    double t1 = bench_now();
    for (int b = 0; b < batch; b++) {
      svi_routh_sample(s, &rc, NULL, (uint64_t)(r * batch + b), v, &si, NULL, 0, NULL);
      lcps += si.lcps;
    }
    double t2 = bench_now();
    tp[r] = (t1 - t0) / batch;
    tr[r] = (t2 - t1) / batch;
  }
  printf("| %s | %d | %d | %.2f | %.2f | %.2f |\n", file, def.nv, nc, median(tp, reps) * 1e6, median(tr, reps) * 1e6,
         (double)lcps / ((double)reps * batch));
  free(v); free(tp); free(tr);
  svi_propagative_destroy(w);
  svi_impact_destroy(s);
  mj_deleteData(d); mj_deleteData(scratch); mj_deleteModel(m);
}

int main(int argc, char** argv) {
  if (argc == 5 && !strcmp(argv[1], "--count")) return count_mode(argv[2], argv[3], atoi(argv[4]));
  if ((argc == 4 || argc == 5) && !strcmp(argv[1], "--impact"))
    return impact_mode(argv[2], atoi(argv[3]), argc == 5 ? argv[4] : NULL);
  if (argc == 4 && !strcmp(argv[1], "--preview")) return preview_mode(argv[2], atoi(argv[3]));
  if (argc == 4 && !strcmp(argv[1], "--time")) {   /* table B's measurement on one model */
    int reps = atoi(argv[3]);
    if (reps < 1) { fprintf(stderr, "--time MODEL.xml REPS: REPS >= 1\n"); return 2; }
    step_cost c = impact_step(argv[2], reps);
    if (!c.ok) { fprintf(stderr, "%s: no impact event (or it did not load)\n", argv[2]); return 1; }
    printf("%s: impact step %.1f us, native mj_step %.1f us from the same state, %.2fx (medians of %d; "
           "%d contacts, %d LCPs)\n", argv[2], c.impact_us, c.native_us, c.impact_us / c.native_us, reps,
           c.ncontact, c.lcps);
    return 0;
  }
  if (argc == 3 && (!strcmp(argv[1], "--legs") || !strcmp(argv[1], "--snake"))) {
    char path[256];
    int k = atoi(argv[2]), legs = !strcmp(argv[1], "--legs");
    if (k < (legs ? 1 : 2) || k > (legs ? 12 : 64)) {
      fprintf(stderr, legs ? "--legs K: K from 1 to 12\n" : "--snake K: K from 2 to 64\n");
      return 2;
    }
    if (!(legs ? legs_model : snake_model)(k, path, sizeof(path))) { fprintf(stderr, "cannot write %s\n", path); return 1; }
    printf("%s\n", path);
    return 0;
  }
  if (argc == 3 && (!strcmp(argv[1], "--tower") || !strcmp(argv[1], "--bin"))) {
    char path[256];
    int k = atoi(argv[2]), tower = !strcmp(argv[1], "--tower");
    if (k < (tower ? 1 : 0) || k > 200) {
      fprintf(stderr, "%s K: K from %d to 200\n", argv[1], tower ? 1 : 0);
      return 2;
    }
    if (!(tower ? tower_model : bin_model)(k, path, sizeof(path))) { fprintf(stderr, "cannot write %s\n", path); return 1; }
    printf("%s\n", path);
    return 0;
  }
  if (argc == 4 && !strcmp(argv[1], "--meshpile")) {
    char path[256];
    int g = atoi(argv[2]), layers = atoi(argv[3]);
    if (g < 1 || g > 8 || layers < 1 || layers > 4) {
      fprintf(stderr, "--meshpile G LAYERS: G from 1 to 8, LAYERS from 1 to 4\n");
      return 2;
    }
    if (!meshpile_model(g, layers, path, sizeof(path))) { fprintf(stderr, "cannot write %s\n", path); return 1; }
    printf("%s\n", path);
    return 0;
  }
  if (argc == 4 && !strcmp(argv[1], "--plate")) {
    char path[256];
    if (!plate_model(argv[3], atoi(argv[2]), path, sizeof(path))) return 1;
    printf("%s\n", path);
    return 0;
  }
  const char* dir = argc > 1 ? argv[1] : "models";
  int quick = 0;
  const char* only = "ABCDEFGH";
  for (int i = 2; i < argc; i++) {
    if (!strcmp(argv[i], "--quick")) quick = 1;
    else if (!strncmp(argv[i], "--only=", 7)) only = argv[i] + 7;
    else dir = NULL;
  }
  if (!dir || dir[0] == '-') {
    fprintf(stderr,
            "usage: %s [MODEL_DIR] [--quick] [--only=TABLES]   (TABLES: any of A B C D E F G H; default models)\n"
            "       %s --impact MODEL.xml STEPS [LAW] | --count MODEL.xml MODE STEPS | --plate N DIR | --tower K | --bin K | --meshpile G LAYERS | --legs K | --snake K\n"
            "       %s --time MODEL.xml REPS   (wall time of the first event's impact step against native mj_step, as table B)\n",
            argv[0], argv[0], argv[0]);
    return 2;
  }
  int steps = quick ? 5000 : 50000;
  printf("MuJoCo %s\n", mj_versionString());
  bench_print_machine();
  list_models(dir);
  if (strchr(only, 'A')) {
  printf("## A. mj_step with svi.impact against the same model without it, steps without impacts "
         "(%d steps each, blocks of 100 interleaved, medians)\n\n", steps);
  printf("| model | nv | contacts | native mj_step us | with svi.impact us | overhead | events |\n"
         "|---|---|---|---|---|---|---|\n");
  for (int i = 0; i < nModels; i++) overhead(dir, kModels[i], steps);
  }
  if (strchr(only, 'B')) {
  printf("\n## B. The impact step: mj_step with svi.impact from the pre-impact state of the first event, "
         "against native mj_step from the same state (medians of %d)\n\n", quick ? 20 : 200);
  impact_table(dir, quick ? 20 : 200);
  }
  if (strchr(only, 'C')) {

  printf("\n## C. One impact event against the number of contacts (plate on N supports; medians of %d)\n\n",
         quick ? 5 : 30);
  printf("| supports | contacts in the event | LCP size | LCPs | impact step us | native mj_step us | ratio |\n"
         "|---|---|---|---|---|---|---|\n");
  const int ns[] = {2, 4, 9, 16, 25, 36, 49, 64, 81, 100, 144, 200};
  double fx[16], fy[16], fn[16];
  int nf = 0;
  for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) {
    step_cost c = plate(dir, ns[i], quick ? 5 : 30);
    if (c.ok) fit_add(fx, fy, fn, &nf, ns[i], c.impact_us, c.native_us);
  }
  fit_print(fx, fy, fn, nf);

  printf("\nA two-legged robot (floating trunk, two 6-dof legs, nv = 18) landing flat on feet of K x K points "
         "(2 K^2 contacts; legs_model; medians of %d)\n\n", quick ? 5 : 30);
  printf("| K | contacts in the event | LCP size | LCPs | impact step us | native mj_step us | ratio |\n"
         "|---|---|---|---|---|---|---|\n");
  const int kl[] = {2, 3, 4, 5, 6, 7, 8, 10};
  nf = 0;
  for (size_t i = 0; i < sizeof(kl) / sizeof(kl[0]); i++) {
    char path[256];
    if (!legs_model(kl[i], path, sizeof(path))) { fprintf(stderr, "cannot write %s\n", path); continue; }
    step_cost c = impact_step(path, quick ? 5 : 30);
    if (!c.ok) { printf("| %d | no impact event |\n", kl[i]); continue; }
    printf("| %d | %d | %d | %d | %.1f | %.1f | %.2f |\n", kl[i], c.ncontact,
           c.nt == 2 ? 7 * c.ncontact : 5 * c.ncontact, c.lcps, c.impact_us, c.native_us, c.impact_us / c.native_us);
    fit_add(fx, fy, fn, &nf, c.ncontact, c.impact_us, c.native_us);
  }
  fit_print(fx, fy, fn, nf);

  printf("\nAn articulated chain (a snake robot: K box links, a yaw and a pitch hinge between each two, the "
         "first floating; nv = 6 + 2 (K - 1)) landing flat on 4 K contacts (snake_model; medians of %d, "
         "10 from K = 25)\n\n", quick ? 3 : 30);
  printf("| links | dofs | contacts in the event | LCP size | LCPs | impact step us | native mj_step us | ratio |\n"
         "|---|---|---|---|---|---|---|---|\n");
  const int kn[] = {3, 6, 10, 16, 25, 36};
  nf = 0;
  for (size_t i = 0; i < sizeof(kn) / sizeof(kn[0]); i++) {
    char path[256];
    if (!snake_model(kn[i], path, sizeof(path))) { fprintf(stderr, "cannot write %s\n", path); continue; }
    step_cost c = impact_step(path, quick ? 3 : kn[i] >= 25 ? 10 : 30);
    if (!c.ok) { printf("| %d | no impact event |\n", kn[i]); continue; }
    printf("| %d | %d | %d | %d | %d | %.1f | %.1f | %.2f |\n", kn[i], 6 + 2 * (kn[i] - 1), c.ncontact,
           c.nt == 2 ? 7 * c.ncontact : 5 * c.ncontact, c.lcps, c.impact_us, c.native_us, c.impact_us / c.native_us);
    fit_add(fx, fy, fn, &nf, c.ncontact, c.impact_us, c.native_us);
  }
  fit_print(fx, fy, fn, nf);
  }
  if (strchr(only, 'D')) {

  printf("\n## D. One outcome per impact: the propagative law (random order, e = 1) against one sample of the "
         "set-valued law, on the model's first impact problem (medians of %d batches of 100)\n\n", quick ? 20 : 200);
  printf("| model | nv | contacts | propagative us/outcome | set-valued us/sample | set-valued LCPs/sample |\n"
         "|---|---|---|---|---|---|\n");
  const char* d_models[] = {"cradle_5.xml", "cradle_3.xml", "cradle_unequal.xml", "billiard_break.xml", "trex.xml"};
  for (size_t i = 0; i < sizeof(d_models) / sizeof(d_models[0]); i++) law_cost(dir, d_models[i], quick ? 20 : 200);
  }
  if (strchr(only, 'E')) {

  printf("\n## E. One impact event among many bodies: a box dropped onto a resting stack (K boxes, 4K contacts, "
         "6K dofs; medians of %s)\n\n", quick ? "3" : "30, 10 from K = 12, 5 from K = 25");
  printf("| boxes | dofs | contacts in the event | LCP size | LCPs | impact step us | native mj_step us | ratio |\n"
         "|---|---|---|---|---|---|---|---|\n");
  const int ks[] = {2, 3, 6, 12, 25};
  double fx[8], fy[8], fn[8];
  int nf = 0;
  for (size_t i = 0; i < sizeof(ks) / sizeof(ks[0]); i++) {
    char path[256];
    if (!tower_model(ks[i], path, sizeof(path))) { fprintf(stderr, "cannot write %s\n", path); continue; }
    step_cost c = impact_step(path, quick ? 3 : ks[i] >= 25 ? 5 : ks[i] >= 12 ? 10 : 30);
    if (!c.ok) { printf("| %d | no impact event |\n", ks[i]); continue; }
    printf("| %d | %d | %d | %d | %d | %.1f | %.1f | %.1f |\n", ks[i], 6 * ks[i], c.ncontact,
           c.nt == 2 ? 7 * c.ncontact : 5 * c.ncontact, c.lcps, c.impact_us, c.native_us, c.impact_us / c.native_us);
    fit_add(fx, fy, fn, &nf, c.ncontact, c.impact_us, c.native_us);
  }
  fit_print(fx, fy, fn, nf);

  printf("\nA box landing flat among K boxes resting on the floor, none touching another (medians of %d): the "
         "resting ones are not in the event\n\n", quick ? 3 : 30);
  printf("| resting boxes | dofs | contacts touching | contacts in the event | LCPs | impact step us | native mj_step us | "
         "ratio |\n|---|---|---|---|---|---|---|---|\n");
  const int kb[] = {0, 8, 24, 48};
  for (size_t i = 0; i < sizeof(kb) / sizeof(kb[0]); i++) {
    char path[256];
    if (!bin_model(kb[i], path, sizeof(path))) { fprintf(stderr, "cannot write %s\n", path); continue; }
    step_cost c = impact_step(path, quick ? 3 : 30);
    if (!c.ok) { printf("| %d | no impact event |\n", kb[i]); continue; }
    printf("| %d | %d | %d | %d | %d | %.1f | %.1f | %.1f |\n", kb[i], 6 * (kb[i] + 1), 4 * (kb[i] + 1), c.ncontact,
           c.lcps, c.impact_us, c.native_us, c.impact_us / c.native_us);
  }

  printf("\nA mesh cube landing tilted on a pile of G x G columns of L mesh cubes (5 cm, 8-vertex convex meshes; "
         "medians of %s)\n\n", quick ? "3" : "30, 5 from 4 cubes under the landing one");
  printf("| G x G x L | dofs | contacts in the event | LCP size | LCPs | impact step us | native mj_step us | "
         "ratio |\n|---|---|---|---|---|---|---|---|\n");
  const int mg[][2] = {{1, 1}, {2, 1}, {3, 1}, {2, 2}};
  nf = 0;
  for (size_t i = 0; i < sizeof(mg) / sizeof(mg[0]); i++) {
    char path[256];
    int g = mg[i][0], l = mg[i][1];
    if (!meshpile_model(g, l, path, sizeof(path))) { fprintf(stderr, "cannot write %s\n", path); continue; }
    step_cost c = impact_step(path, quick ? 3 : g * g * l >= 4 ? 5 : 30);
    if (!c.ok) { printf("| %d x %d x %d | no impact event |\n", g, g, l); continue; }
    printf("| %d x %d x %d | %d | %d | %d | %d | %.1f | %.1f | %.1f |\n", g, g, l, 6 * (g * g * l + 1), c.ncontact,
           c.nt == 2 ? 7 * c.ncontact : 5 * c.ncontact, c.lcps, c.impact_us, c.native_us, c.impact_us / c.native_us);
    fit_add(fx, fy, fn, &nf, c.ncontact, c.impact_us, c.native_us);
  }
  fit_print(fx, fy, fn, nf);
  }
  if (strchr(only, 'F')) {
    char sdir[700];
    snprintf(sdir, sizeof(sdir), "%s/scenes", dir);
    list_models(sdir);
    printf("\n## F. The impact step of the scenes in %s, as in B (nv: the model's; the event's problem holds the "
           "dofs of the trees it reaches; medians of %d)\n\n", sdir, quick ? 20 : 200);
    impact_table(sdir, quick ? 20 : 200);
  }
  if (strchr(only, 'G')) {
    long long ns = quick ? 1024 : 8192;
    printf("\n## G. Algorithm 2 on each model's first impact event, one thread, as svi-sample (%lld samples, 256 "
           "where 256 take over 0.1 s; the event's set-up included, the fastest of 3 runs)\n\n", ns);
    printf("| model | nv | contacts | contact | LCPs/sample | us/sample | accepted |\n|---|---|---|---|---|---|---|\n");
    models_and_scenes(dir, alg2_row, ns, 3);
  }
  if (strchr(only, 'H')) {
    int n = quick ? 200 : 2000;
    printf("\n## H. Outcomes of each model's first impact event for %d seeds under its law, in C: one "
           "svi_event_preview a seed, against one svi_event_preview_many (the event set up once); us per seed, "
           "the fastest of 3 runs\n\n", n);
    printf("| model | contacts | law | seeds | one a call us/seed | many us/seed | ratio | qvel bits |\n"
           "|---|---|---|---|---|---|---|---|\n");
    models_and_scenes(dir, preview_row, n, 3);
  }
  return 0;
}
