/* svi_sim.c -- run an MJCF model headless with the svi plugin, print every impact event and
 * write the trajectory as CSV. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "svi/svi_mujoco.h"

static void usage(FILE* f) {
  fprintf(f,
    "usage: svi-sim MODEL.xml [options]\n"
    "Runs the model with the svi impact plugin (svi_step) and prints every impact event.\n"
    "  --time T        simulated seconds (default 2)\n"
    "  --law L         setvalued | simultaneous | sequential | native (default: the model's svi.law)\n"
    "  --seed S        seed (default: the model's svi.seed)\n"
    "  --key NAME      start from this keyframe (default: 'impact' if the model has it)\n"
    "  --csv FILE      trajectory: time, qpos, qvel per step ('-' = none; default none)\n"
    "  --quiet         only the final summary\n");
}

static const char* law_name(svi_law l) {
  static const char* n[] = {"setvalued", "simultaneous", "sequential", "native"};
  return (unsigned)l < 4 ? n[l] : "?";
}

int main(int argc, char** argv) {
  const char *path = NULL, *csv = NULL, *key = NULL;
  double T = 2;
  int law = -1, quiet = 0, has_seed = 0;
  unsigned long long seed = 0;
  for (int i = 1; i < argc; i++) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); return 0; }
    else if (!strcmp(a, "--quiet")) quiet = 1;
    else if (!strcmp(a, "--time") && v) { T = atof(v); i++; if (!(T > 0)) { fprintf(stderr, "svi-sim: --time must be > 0\n"); return 2; } }
    else if (!strcmp(a, "--seed") && v) { seed = strtoull(v, NULL, 10); has_seed = 1; i++; }
    else if (!strcmp(a, "--csv") && v) { csv = v; i++; }
    else if (!strcmp(a, "--key") && v) { key = v; i++; }
    else if (!strcmp(a, "--law") && v) {
      const char* names[] = {"setvalued", "simultaneous", "sequential", "native"};
      for (int k = 0; k < 4; k++) if (!strcmp(v, names[k])) law = k;
      if (law < 0) { fprintf(stderr, "svi-sim: --law must be setvalued, simultaneous, sequential or native, not '%s'\n", v); return 2; }
      i++;
    } else if (a[0] != '-' && !path) path = a;
    else { fprintf(stderr, "svi-sim: unknown or incomplete option '%s' (see --help)\n", a); return 2; }
  }
  if (!path) { usage(stderr); return 2; }

  char err[1000];
  mjModel* m = svi_load_xml(path, err, sizeof(err));
  if (!m) { fprintf(stderr, "svi-sim: %s\n", err); return 1; }
  mjData* d = mj_makeData(m);
  int kid = mj_name2id(m, mjOBJ_KEY, key ? key : "impact");
  if (key && kid < 0) { fprintf(stderr, "svi-sim: model has no keyframe '%s'\n", key); return 1; }
  if (kid >= 0) mj_resetDataKeyframe(m, d, kid);
  mj_forward(m, d);

  svi_instance* in = svi_attach(m, d, err, sizeof(err));
  if (!in) { fprintf(stderr, "svi-sim: %s\n", err); return 1; }
  if (law >= 0) svi_set_law(in, (svi_law)law);
  if (has_seed) svi_set_seed(in, seed);
  const svi_config* cfg = svi_instance_config(in);
  printf("svi-sim %s: %s, nq=%d nv=%d, dt=%g s, %s\n", SVI_VERSION_STRING, path, m->nq, m->nv,
         m->opt.timestep, cfg->enabled ? "svi plugin declared" : "no svi.plugin: native MuJoCo");
  if (cfg->enabled)
    printf("  law %s, seed %llu, impact speed %g m/s, band %g m, window %g s, pseudo-impulse %g s\n",
           law_name(law >= 0 ? (svi_law)law : cfg->law), (unsigned long long)(has_seed ? seed : cfg->seed),
           cfg->impact_speed, cfg->band, cfg->window, cfg->pseudo_impulse);

  FILE* f = NULL;
  if (csv && strcmp(csv, "-")) {
    f = fopen(csv, "w");
    if (!f) { fprintf(stderr, "svi-sim: cannot write %s\n", csv); return 1; }
    fprintf(f, "time");
    for (int i = 0; i < m->nq; i++) fprintf(f, ",qpos%d", i);
    for (int i = 0; i < m->nv; i++) fprintf(f, ",qvel%d", i);
    fprintf(f, "\n");
  }
  int bad = 0;
  while (d->time < T) {
    int ne = svi_step(m, d);
    for (int i = 0; i < m->nv; i++) if (!isfinite(d->qvel[i])) bad = 1;
    if (ne > 0 && !quiet) {
      const svi_event* ev = svi_event_get(in, svi_event_count(in) - 1);
      printf("  t=%8.4f  event %3d: %2d contacts (%d approaching)  %-8s  KE %.5g -> %.5g J (%+.2f%%)  LCPs %d%s\n",
             ev->time, ev->index, ev->ncontact, ev->napproach, ev->cls, ev->ke_before, ev->ke_after,
             ev->ke_before > 0 ? 100 * (ev->ke_after - ev->ke_before) / ev->ke_before : 0.0, ev->lcps,
             ev->fallback ? " (fallback)" : "");
    }
    if (f) {
      fprintf(f, "%.9g", d->time);
      for (int i = 0; i < m->nq; i++) fprintf(f, ",%.12g", d->qpos[i]);
      for (int i = 0; i < m->nv; i++) fprintf(f, ",%.12g", d->qvel[i]);
      fprintf(f, "\n");
    }
    if (bad) break;
  }
  if (f) fclose(f);
  svi_counters c = svi_instance_counters(in);
  printf("  %.3f s simulated: %lld steps, %lld impact events, %lld LCPs, %lld fallbacks, max KE+/KE- %.4f%s\n",
         d->time, c.steps, c.events, c.lcps, c.fallbacks, c.max_energy_ratio, bad ? ", NON-FINITE STATE" : "");
  svi_detach(d);
  mj_deleteData(d);
  mj_deleteModel(m);
  return bad ? 1 : 0;
}
