/* svi_bench_plugin.c -- the plugin's costs next to native MuJoCo, measured side by side.
 *
 *   svi-bench-plugin MODELS_DIR [--quick]
 *
 * A. svi_step against mj_step on steps without impacts (bodies resting or flying), interleaved
 *    in blocks so both see the same machine state.
 * B. One impact event against the number of contacts: a plate landing on N supports
 *    (models/make_plate.sh N), the impact step of svi_step against mj_step from the same state.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "svi/svi_mujoco.h"

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static mjModel* load(const char* path) {
  char err[1000];
  mjModel* m = svi_load_xml(path, err, sizeof(err));
  if (!m) fprintf(stderr, "%s\n", err);
  return m;
}

static void reset_key(const mjModel* m, mjData* d, const char* key) {
  int k = mj_name2id(m, mjOBJ_KEY, key);
  if (k >= 0) mj_resetDataKeyframe(m, d, k); else mj_resetData(m, d);
  mj_forward(m, d);
}

/* A: the same model stepped natively and with svi_step from the same settled state */
static void overhead(const char* dir, const char* file, const char* key, double settle, int steps) {
  char path[700];
  snprintf(path, sizeof(path), "%s/%s", dir, file);
  mjModel* m = load(path);
  if (!m) return;
  mjData *a = mj_makeData(m), *b = mj_makeData(m);
  reset_key(m, a, key);
  while (a->time < settle) svi_step(m, a);   /* past every impact */
  mj_copyData(b, m, a);
  svi_instance* in = svi_attach(m, b, NULL, 0);
  long long ev0 = svi_instance_counters(in).events;
  double tn = 0, ts = 0;
  int ncon = a->ncon;
  const int block = 500;
  for (int done = 0; done < steps; done += block) {
    double t0 = now();
    for (int i = 0; i < block; i++) mj_step(m, a);
    double t1 = now();
    for (int i = 0; i < block; i++) svi_step(m, b);
    double t2 = now();
    tn += t1 - t0;
    ts += t2 - t1;
  }
  long long ev = svi_instance_counters(in).events - ev0;
  svi_detach(a);
  printf("| %s | %d | %d | %.2f | %.2f | %+.1f%% | %lld |\n", file, m->nv, ncon, tn / steps * 1e6,
         ts / steps * 1e6, 100 * (ts - tn) / tn, ev);
  svi_detach(b);
  mj_deleteData(a);
  mj_deleteData(b);
  mj_deleteModel(m);
}

/* B: the impact step of a plate on n supports */
static void impact_cost(const char* dir, int n, int reps) {
  char cmd[800], path[256];
  snprintf(path, sizeof(path), "/tmp/svi_bench_plate_%d.xml", n);
  snprintf(cmd, sizeof(cmd), "sh %s/make_plate.sh %d > %s", dir, n, path);
  if (system(cmd) != 0) { fprintf(stderr, "cannot generate %s\n", path); return; }
  mjModel* m = load(path);
  if (!m) return;
  mjData* d = mj_makeData(m);
  reset_key(m, d, "impact");
  svi_instance* in = svi_attach(m, d, NULL, 0);
  while (svi_event_count(in) == 0 && d->time < 1) svi_step(m, d);
  const svi_event* ev = svi_event_get(in, 0);
  if (!ev) { printf("| %d | no event |\n", n); return; }
  int ncontact = ev->ncontact, lcps = ev->lcps;
  /* time the impact step: restore the pre-impact state, step; native from the same state */
  double ts = 0, tn = 0;
  mjData* nat = mj_makeData(m);
  for (int r = 0; r < reps; r++) {
    svi_event_restore(in, m, d, 0);
    mj_copyData(nat, m, d);
    double t0 = now();
    svi_step(m, d);
    double t1 = now();
    mj_step(m, nat);
    double t2 = now();
    ts += t1 - t0;
    tn += t2 - t1;
  }
  ev = svi_event_get(in, svi_event_count(in) - 1);
  printf("| %d | %d | %d | %d | %.1f | %.1f | %.1f |\n", n, ncontact, ev->nt == 2 ? 7 * ncontact : 5 * ncontact,
         lcps, ts / reps * 1e6, tn / reps * 1e6, (ts - tn) / reps * 1e6);
  svi_detach(d);
  mj_deleteData(d);
  mj_deleteData(nat);
  mj_deleteModel(m);
}

int main(int argc, char** argv) {
  const char* dir = argc > 1 ? argv[1] : "models";
  int quick = argc > 2 && !strcmp(argv[2], "--quick");
  int steps = quick ? 5000 : 50000;
  printf("## 4. svi_step against mj_step on steps without impacts (%d steps each, interleaved)\n\n", steps);
  printf("| model | nv | contacts | mj_step us | svi_step us | overhead | events |\n|---|---|---|---|---|---|---|\n");
  overhead(dir, "block_flat_3d.xml", "impact", 1.0, steps);
  overhead(dir, "plate_25.xml", "impact", 1.0, steps);
  overhead(dir, "rocking_block.xml", "impact", 1.0, steps);
  overhead(dir, "disk_stack.xml", "impact", 1.0, steps);
  overhead(dir, "ramone.xml", "impact", 2.0, steps);
  overhead(dir, "newtons_cradle.xml", "pulled", 0.05, steps);   /* swinging, before the impact */
  printf("\n## 5. One impact event against the number of contacts (plate on N supports)\n\n");
  printf("| supports | contacts in the event | LCP size | LCPs | svi_step impact step us | mj_step same state us | impact cost us |\n|---|---|---|---|---|---|---|\n");
  const int ns[] = {2, 4, 9, 16, 25, 36, 49, 64, 81, 100};
  for (size_t i = 0; i < sizeof(ns) / sizeof(ns[0]); i++) impact_cost(dir, ns[i], quick ? 5 : 30);
  return 0;
}
