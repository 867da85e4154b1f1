/* svi_sim.c -- run an MJCF model headless with plain mj_step (svi.impact acts inside it), print
 * every impact event and write the trajectory as CSV. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "svi/svi_mujoco.h"
#include "svi_cli.h"

static void usage(FILE* f) {
  fprintf(f,
    "usage: svi-sim MODEL.xml [options]\n"
    "Runs the model with mj_step (svi.impact, declared in the model, resolves its impacts) and\n"
    "prints every impact event.\n"
    "  --time T        simulated seconds (default 2), rounded to whole time steps\n"
    "  --law L         setvalued | simultaneous | sequential | native | propagative\n"
    "                  (default: the model's law)\n"
    "  --seed S        seed, an integer in [0, 2^64) (default: the model's seed)\n"
    "  --key NAME      start from this keyframe (default: 'impact' if the model has it)\n"
    "  --csv FILE      trajectory: time, qpos, qvel per step ('-' = none; default none)\n"
    "  --quiet         only the final summary\n"
    "Exit status: 0 ok; 1 the model failed to load, the state became non-finite, or MuJoCo reset a\n"
    "diverging simulation (reported, then the run stops); 2 bad options.\n");
}

static void print_event(const svi_event* ev) {
  /* the record keeps the first SVI_EVENT_MAX_CONTACTS contacts' classes: "..." says there are more;
   * the classes padded to 8 characters as before */
  const char* more = ev->ncontact > SVI_EVENT_MAX_CONTACTS ? "..." : "";
  int len = (int)(strlen(ev->cls) + strlen(more));
  printf("  t=%8.4f  event %3d: %2d contacts (%d approaching)  %s%s%*s  ", ev->time, ev->index, ev->ncontact,
         ev->napproach, ev->cls, more, len < 8 ? 8 - len : 0, "");
  if (ev->law == SVI_LAW_NATIVE) {
    printf("left to MuJoCo (native law)\n");
    return;
  }
  printf("KE %.5g -> %.5g J (%+.2f%%)  LCPs %d%s\n", ev->ke_before, ev->ke_after,
         ev->ke_before > 0 ? 100 * (ev->ke_after - ev->ke_before) / ev->ke_before : 0.0, ev->lcps,
         ev->fallback == 1 ? " (finished by (31))" : ev->fallback == 2 ? " (fallback: simultaneous)"
         : ev->fallback == 3 ? " (fallback: left to MuJoCo)" : "");
}

int main(int argc, char** argv) {
  const char *path = NULL, *csv = NULL, *key = NULL, *tool = "svi-sim";
  double T = 2;
  int law = -1, quiet = 0, has_seed = 0, measured = 0;   /* measured: an event the law measured KE+/KE- of */
  setvbuf(stdout, NULL, _IOLBF, 0);   /* whole lines between the plugin's warnings on stderr (a pipe of both) */
  uint64_t seed = 0;
  for (int i = 1; i < argc; i++) {
    const char* a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); return 0; }
    else if (!strcmp(a, "--quiet")) quiet = 1;
    else if (!strcmp(a, "--time") && v) { if (!svi_cli_double(tool, a, v, 1e-9, 1e9, &T)) return 2; i++; }
    else if (!strcmp(a, "--seed") && v) { if (!svi_cli_seed(tool, a, v, &seed)) return 2; has_seed = 1; i++; }
    else if (!strcmp(a, "--csv") && v) { csv = v; i++; }
    else if (!strcmp(a, "--key") && v) { key = v; i++; }
    else if (!strcmp(a, "--law") && v) {
      law = svi_law_from_name(v);
      if (law < 0) { fprintf(stderr, "svi-sim: --law must be setvalued, simultaneous, sequential, native or propagative, not '%s'\n", v); return 2; }
      i++;
    } else if (a[0] != '-' && !path) path = a;
    else { fprintf(stderr, "svi-sim: unknown or incomplete option '%s' (see --help)\n", a); return 2; }
  }
  if (!path) { usage(stderr); return 2; }

  char err[1000];
  mjModel* m = svi_load_xml(path, err, sizeof(err));
  if (!m) { fprintf(stderr, "svi-sim: %s\n", err); return 1; }
  mjData* d = mj_makeData(m);
  if (!d) { fprintf(stderr, "svi-sim: could not make the data of %s\n", path); return 1; }
  int kid = mj_name2id(m, mjOBJ_KEY, key ? key : "impact");
  if (key && kid < 0) { fprintf(stderr, "svi-sim: model has no keyframe '%s'\n", key); return 1; }
  if (kid >= 0) mj_resetDataKeyframe(m, d, kid);

  svi_instance* in = svi_instance_of(m, d);
  if (in && law >= 0) svi_set_law(in, law);
  if (in && has_seed) svi_set_seed(in, seed);
  printf("svi-sim %s: %s, MuJoCo %s, nq=%d nv=%d, dt=%g s, %s\n", SVI_VERSION_STRING, path, mj_versionString(),
         (int)m->nq, (int)m->nv, m->opt.timestep,
         in ? "svi.impact declared" : "no svi.impact instance: native MuJoCo");
  if (in) {
    const svi_config* cfg = svi_instance_config(in);
    printf("  law %s, seed %llu, impact speed %g m/s, band %g m, window %g s, pseudo-impulse %g s\n",
           svi_law_name(svi_current_law(in)), (unsigned long long)(has_seed ? seed : cfg->seed), cfg->impact_speed, cfg->band,
           cfg->window, cfg->pseudo_impulse);
  }

  FILE* f = NULL;
  if (csv && strcmp(csv, "-")) {
    f = fopen(csv, "w");
    if (!f) { fprintf(stderr, "svi-sim: cannot write %s\n", csv); return 1; }
    fprintf(f, "time");
    for (int i = 0; i < m->nq; i++) fprintf(f, ",qpos%d", i);
    for (int i = 0; i < m->nv; i++) fprintf(f, ",qvel%d", i);
    fprintf(f, "\n");
  }
  int bad = 0, reset = 0;
  long long events = 0;
  int badqacc = d->warning[mjWARN_BADQACC].number;
  long long nstep = (long long)ceil(T / m->opt.timestep - 1e-9);   /* --time 2 at dt 0.001: 2000 steps */
  double t_reached = d->time;   /* before a reset of MuJoCo's puts the time back to 0 */
  for (long long k = 0; k < nstep; k++) {
    t_reached = d->time;
    mj_step(m, d);
    for (int i = 0; i < m->nv; i++) if (!isfinite(d->qvel[i])) bad = 1;
    /* MuJoCo resets a diverging simulation itself (time back to 0): report it and stop rather than
     * replay the run forever */
    if (d->warning[mjWARN_BADQACC].number > badqacc) {
      reset = 1;
      printf("  MuJoCo reset the simulation: bad acceleration after t = %g (warning info %d); the run "
             "diverged, stopping here (under an explicit integrator a body spun up by impacts can diverge: "
             "implicitfast may help)\n", t_reached, d->warning[mjWARN_BADQACC].lastinfo);
    }
    if (in) {
      svi_counters c = svi_instance_counters(in);
      if (c.events > events && svi_event_count(in) > 0) {
        const svi_event* ev = svi_event_get(in, svi_event_count(in) - 1);
        measured |= ev->law != SVI_LAW_NATIVE && ev->fallback != 3 && ev->ke_before > 0;
        if (!quiet) print_event(ev);
      }
      events = c.events;
    }
    if (f) {
      fprintf(f, "%.9g", d->time);
      for (int i = 0; i < m->nq; i++) fprintf(f, ",%.12g", d->qpos[i]);
      for (int i = 0; i < m->nv; i++) fprintf(f, ",%.12g", d->qvel[i]);
      fprintf(f, "\n");
    }
    if (bad || reset) break;
  }
  if (f) fclose(f);
  if (in) {
    svi_counters c = svi_instance_counters(in);
    char ke[32] = "n/a";   /* no event measured it (the native law's events are not) */
    if (c.max_energy_ratio > 0 || measured) snprintf(ke, sizeof(ke), "%.4f", c.max_energy_ratio);
    char over[64] = "";
    if (c.touch_overflow) snprintf(over, sizeof(over), " (%lld steps over max_contacts)", c.touch_overflow);
    printf("  %.3f s simulated: %lld steps, %lld impact events, %lld LCPs, %lld fallbacks%s, %lld finished by (31), "
           "max KE+/KE- %s%s\n", reset ? t_reached : d->time, c.steps, c.events, c.lcps, c.fallbacks, over,
           c.finished_ap, ke, bad ? ", NON-FINITE STATE" : "");
    if (svi_instance_message(in)[0]) printf("  last message: %s\n", svi_instance_message(in));
  } else {
    printf("  %.3f s simulated%s\n", reset ? t_reached : d->time, bad ? ", NON-FINITE STATE" : "");
  }
  mj_deleteData(d);
  mj_deleteModel(m);
  return bad || reset ? 1 : 0;
}
