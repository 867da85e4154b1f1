/* test_invariants.c -- every impact event of 3-D models the project did not write its laws for
 * (a box on an edge, on a corner with spin, into a wall with mu = 0.1 and 2, a stack of three free
 * boxes, two boxes colliding in the air) and of every bundled model, over many seeds and every
 * law, and of the scenes in models/scenes (robots landing, a pile, a chain, an arm pushing a box):
 * no energy gain, no contact left approaching, nothing non-finite in mjData; fallbacks are
 * counted and printed, never silent.
 *
 *   test_invariants MODELS_DIR [SEEDS]     (SEEDS default 8; the sanitizer build uses fewer)
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "svi/svi_mujoco.h"
#include "svi_test.h"

static char tmpdir[256] = "/tmp";

#define HEAD "<mujoco><option timestep='0.001' cone='elliptic' %s/><extension><plugin plugin='svi.impact'>" \
             "<instance name='svi'><config key='log_events' value='2000'/></instance></plugin></extension>"
#define BOX(name, pos, euler, size, mu) \
  "<body name='" name "' pos='" pos "' euler='" euler "'><freejoint/><geom type='box' size='" size \
  "' mass='1' gap='0.002' friction='" mu "'/></body>"

typedef struct {
  const char* name;
  const char* option;
  const char* body;
  double qvel[12];   /* initial qvel of the free bodies (first two) */
} scene;

static const scene scenes[] = {
  {"box on an edge", "", BOX("b", "0 0 0.15", "45 0 0", ".1 .07 .05", "0.8"), {0.3, 0, -0.5}},
  {"box on a corner with spin", "", BOX("b", "0 0 0.2", "35 30 0", ".1 .07 .05", "0.8"),
   {0.2, -0.1, -1, 0, 0, 6}},
  {"box into a wall, mu 0.1", "", BOX("b", "-0.2 0 0.0501", "0 10 0", ".1 .1 .05", "0.1"), {2, 0, 0, 0, 0, 0.5}},
  {"box into a wall, mu 2", "", BOX("b", "-0.2 0 0.0501", "0 10 0", ".1 .1 .05", "2"), {2, 0, 0, 0, 0, 0.5}},
  {"stack of three boxes", "",
   BOX("a", "0 0 0.06", "0 0 0", ".1 .1 .05", "0.6") BOX("b", "0.02 0.01 0.2", "0 0 10", ".1 .1 .05", "0.6")
   BOX("c", "-0.01 0 0.35", "5 5 0", ".1 .1 .05", "0.6"), {0}},
  {"two boxes colliding in the air", "gravity='0 0 0'",
   BOX("a", "-0.2 0 0.5", "10 20 30", ".1 .07 .05", "0.5") BOX("b", "0.2 0.03 0.5", "-20 5 40", ".1 .07 .05", "0.5"),
   {1.5, 0, 0.1, 1, 2, 0, -1.5, 0, 0, 0, -1, 3}},
};

static mjModel* scene_model(const scene* s) {
  char xml[8192], path[600], err[1000];
  int n = snprintf(xml, sizeof(xml), HEAD, s->option);
  n += snprintf(xml + n, sizeof(xml) - (size_t)n,
                "<worldbody><geom type='plane' size='5 5 .1' gap='0.002'/>"
                "<geom type='plane' pos='0.1 0 0' zaxis='-1 0 0' size='1 1 .1' gap='0.002'/>%s</worldbody></mujoco>",
                s->body);
  snprintf(path, sizeof(path), "%s/invariants.xml", tmpdir);
  FILE* f = fopen(path, "w");
  fputs(xml, f);
  fclose(f);
  mjModel* m = svi_load_xml(path, err, sizeof(err));
  if (!m) fprintf(stderr, "%s: %s\n", s->name, err);
  return m;
}

typedef struct { long long events, gains, approaching, nonfinite, fallbacks; } tally;

/* run 1 s (or until time T) and check every event and the state */
static void run_checked(const mjModel* m, mjData* d, double T, tally* t) {
  svi_instance* in = svi_instance_of(m, d);
  int bad = 0;
  while (d->time < T && !bad) {
    mj_step(m, d);
    for (int i = 0; i < m->nv; i++) bad |= !isfinite(d->qvel[i]);
    for (int i = 0; i < m->nq; i++) bad |= !isfinite(d->qpos[i]);
  }
  t->nonfinite += bad;
  for (int i = 0; i < svi_event_count(in); i++) {
    const svi_event* e = svi_event_get(in, i);
    t->events++;
    t->fallbacks += e->fallback >= 2;
    if (e->law == SVI_LAW_NATIVE || e->fallback == 3) continue;   /* left to MuJoCo: no outcome of ours */
    if (!(e->ke_after <= e->ke_before * (1 + 1e-9) + 1e-300) || !isfinite(e->ke_after)) t->gains++;
    double vmax = 0;
    int nrec = e->ncontact < SVI_EVENT_MAX_CONTACTS ? e->ncontact : SVI_EVENT_MAX_CONTACTS;
    for (int k = 0; k < nrec; k++) vmax = fmax(vmax, -e->vn_before[k]);
    for (int k = 0; k < nrec; k++)
      if (e->vn_after[k] < -1e-6 * vmax - 1e-12) { t->approaching++; break; }
  }
}

static const int laws[] = {SVI_LAW_SETVALUED, SVI_LAW_SIMULTANEOUS, SVI_LAW_SEQUENTIAL, SVI_LAW_PROPAGATIVE};
#define NLAWS ((int)(sizeof(laws) / sizeof(laws[0])))

static void check_tally(const char* what, int law, int seeds, const tally* t) {
  printf("%-34s %-12s %d seeds: %5lld events, fallbacks %lld\n", what, svi_law_name((svi_law)law), seeds,
         t->events, t->fallbacks);
  CHECK(t->events > 0 && t->gains == 0 && t->approaching == 0 && t->nonfinite == 0,
        "%s, %s: %lld events, %lld with energy gain, %lld leaving a contact approaching, %lld non-finite runs",
        what, svi_law_name((svi_law)law), t->events, t->gains, t->approaching, t->nonfinite);
}

static void test_scenes(int seeds) {
  for (size_t s = 0; s < sizeof(scenes) / sizeof(scenes[0]); s++) {
    mjModel* m = scene_model(&scenes[s]);
    if (!m) { CHECK(0, "scene %s", scenes[s].name); continue; }
    for (int l = 0; l < NLAWS; l++) {
      tally t = {0};
      for (int seed = 1; seed <= seeds; seed++) {
        mjData* d = mj_makeData(m);
        int nfree = m->nv / 6;
        for (int b = 0; b < nfree && b < 2; b++) memcpy(d->qvel + 6 * b, scenes[s].qvel + 6 * b, sizeof(double) * 6);
        svi_instance* in = svi_instance_of(m, d);
        svi_set_law(in, laws[l]);
        svi_set_seed(in, (uint64_t)seed);
        run_checked(m, d, 1.0, &t);
        mj_deleteData(d);
      }
      check_tally(scenes[s].name, laws[l], seeds, &t);
    }
    mj_deleteModel(m);
  }
}

static int cmp_str(const void* a, const void* b) { return strcmp(*(char* const*)a, *(char* const*)b); }

static void test_bundled(const char* dir, int seeds) {
  DIR* dd = opendir(dir);
  if (!dd) { CHECK(0, "open %s", dir); return; }
  char* files[128];
  int n = 0;
  struct dirent* e;
  while ((e = readdir(dd)) && n < 128) {
    size_t len = strlen(e->d_name);
    if (len > 4 && !strcmp(e->d_name + len - 4, ".xml")) files[n++] = strdup(e->d_name);
  }
  closedir(dd);
  qsort(files, (size_t)n, sizeof(char*), cmp_str);
  for (int f = 0; f < n; f++) {
    char path[1200], err[1000];
    snprintf(path, sizeof(path), "%s/%s", dir, files[f]);
    mjModel* m = svi_load_xml(path, err, sizeof(err));
    if (!m) { CHECK(0, "%s", err); continue; }
    int key = mj_name2id(m, mjOBJ_KEY, "impact");
    if (key < 0 && m->nkey > 0) key = 0;   /* e.g. the bouncing ball's "drop" */
    for (int l = 0; l < NLAWS; l++) {
      tally t = {0};
      for (int seed = 1; seed <= seeds; seed++) {
        mjData* d = mj_makeData(m);
        if (key >= 0) mj_resetDataKeyframe(m, d, key);
        svi_instance* in = svi_instance_of(m, d);
        svi_set_law(in, laws[l]);
        svi_set_seed(in, (uint64_t)seed);
        svi_set_log_capacity(in, m, 2000);
        run_checked(m, d, 1.0, &t);
        mj_deleteData(d);
      }
      check_tally(files[f], laws[l], seeds, &t);
    }
    mj_deleteModel(m);
    free(files[f]);
  }
}

int main(int argc, char** argv) {
  const char* models = argc > 1 ? argv[1] : "models";
  setvbuf(stdout, NULL, _IONBF, 0);   /* MuJoCo's warnings (stderr) next to the scene they belong to */
  int seeds = argc > 2 ? atoi(argv[2]) : 8;
  if (argc > 3) snprintf(tmpdir, sizeof(tmpdir), "%s", argv[3]);
  test_scenes(seeds);
  test_bundled(models, seeds < 4 ? seeds : 4);
  char scene_dir[1100];   /* the robots and piles of models/scenes */
  snprintf(scene_dir, sizeof(scene_dir), "%.1000s/scenes", models);
  test_bundled(scene_dir, seeds < 4 ? seeds : 4);
  return svi_test_finish();
}
