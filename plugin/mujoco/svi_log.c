/* svi_log.c -- the impact-event log: a ring of events, each with the state at the start of its
 * impact step (mj_getState with mjSTATE_INTEGRATION: qpos, qvel, act, warmstart, controls, applied
 * forces, mocap, userdata, and plugin_state, which holds our touching list and event counter), and
 * what is built on it: restore, resample, preview. */
#include <stdlib.h>
#include <string.h>

#include "svi/svi_mujoco.h"
#include "svi_mujoco_internal.h"

int svi_log_alloc(svi_instance* in, int cap) {
  svi_event* ev = calloc((size_t)cap, sizeof(svi_event));
  double* snaps = calloc((size_t)cap * (size_t)in->snap_size + 1, sizeof(double));
  if (!ev || !snaps) { free(ev); free(snaps); return SVI_ERR_NOMEM; }
  /* keep the newest events that fit */
  int keep = in->log_count < cap ? in->log_count : cap;
  for (int k = 0; k < keep; k++) {
    int src = (in->log_start + in->log_count - keep + k) % in->log_cap;
    ev[k] = in->events[src];
    ev[k].slot = k;
    memcpy(snaps + (size_t)k * in->snap_size, in->snaps + (size_t)src * in->snap_size,
           sizeof(double) * (size_t)in->snap_size);
  }
  free(in->events);
  free(in->snaps);
  in->events = ev;
  in->snaps = snaps;
  in->log_cap = cap;
  in->log_start = 0;
  in->log_count = keep;
  return SVI_OK;
}

int svi_set_log_capacity(svi_instance* in, const mjModel* m, int cap) {
  if (!in || !m || cap < 1) return SVI_ERR_ARG;
  return svi_log_alloc(in, cap);
}

void svi_log_clear(svi_instance* in) {
  in->log_start = 0;
  in->log_count = 0;
}

void svi_log_copy(svi_instance* dst, const svi_instance* src) {
  if (dst->log_cap != src->log_cap && svi_log_alloc(dst, src->log_cap) != SVI_OK) {
    svi_log_clear(dst);   /* out of memory: an empty log beats a wrong one */
    return;
  }
  dst->log_start = src->log_start;
  dst->log_count = src->log_count;
  for (int k = 0; k < src->log_count; k++) {
    int s = (src->log_start + k) % src->log_cap;
    dst->events[s] = src->events[s];
    memcpy(dst->snaps + (size_t)s * dst->snap_size, src->snaps + (size_t)s * src->snap_size,
           sizeof(double) * (size_t)src->snap_size);
  }
}

int svi_event_count(const svi_instance* in) { return in ? in->log_count : 0; }

const svi_event* svi_event_get(const svi_instance* in, int i) {
  if (!in || i < 0 || i >= in->log_count) return NULL;
  return &in->events[(in->log_start + i) % in->log_cap];
}

svi_event* svi_log_last(svi_instance* in) {
  return in->log_count ? &in->events[(in->log_start + in->log_count - 1) % in->log_cap] : NULL;
}

/* A log entry for the event with index state[NEXT_INDEX], holding d's current state (called in
 * compute, before qvel is written).  Calling mj_forward again at a state that re-triggers the same
 * event (a fallback to MuJoCo leaves the contact approaching) rewrites that entry rather than
 * adding one: the log, like mjData, does not change under repeated mj_forward. */
svi_event* svi_log_append(svi_instance* in, const mjModel* m, mjData* d) {
  int index = (int)svi_state(m, d, in)[SVI_STATE_NEXT_INDEX];
  svi_event* last = svi_log_last(in);
  int slot;
  in->replaced = last && last->index == index && last->time == d->time;
  if (in->replaced) {
    slot = last->slot;
  } else {
    if (in->log_count == in->log_cap) {
      in->log_start = (in->log_start + 1) % in->log_cap;
      in->log_count--;
    }
    slot = (in->log_start + in->log_count) % in->log_cap;
    in->log_count++;
  }
  svi_event* ev = &in->events[slot];
  memset(ev, 0, sizeof(*ev));
  ev->slot = slot;
  ev->index = index;
  mj_getState(m, d, in->snaps + (size_t)slot * in->snap_size, mjSTATE_INTEGRATION);
  return ev;
}

static const double* snapshot(const svi_instance* in, const svi_event* ev) {
  return in->snaps + (size_t)ev->slot * in->snap_size;
}

int svi_event_restore(svi_instance* in, const mjModel* m, mjData* d, int i) {
  const svi_event* ev = svi_event_get(in, i);
  if (!ev || !m || !d) return SVI_ERR_ARG;
  mj_setState(m, d, snapshot(in, ev), mjSTATE_INTEGRATION);
  in->log_count = i;
  in->has_once = 0;
  in->pending = 0;
  in->measure_pending = 0;
  in->touch_next_valid = 0;
  return SVI_OK;
}

int svi_event_resample(svi_instance* in, const mjModel* m, mjData* d, int i, uint64_t seed,
                       svi_law law) {
  const svi_event* ev = svi_event_get(in, i);
  if (!ev || !m || !d || (unsigned)law >= SVI_NLAW) return SVI_ERR_ARG;
  int index = ev->index;
  int st = svi_event_restore(in, m, d, i);
  if (st != SVI_OK) return st;
  in->has_once = 1;
  in->once_index = index;
  in->once_seed = seed;
  in->once_law = (int)law;
  mj_forward(m, d);
  const svi_event* now = svi_log_last(in);
  return now && now->index == index && in->log_count == i + 1 ? SVI_OK : SVI_ERR_ARG;
}

int svi_event_load(svi_instance* in, const mjModel* m, mjData* scratch, int i) {
  const svi_event* ev = svi_event_get(in, i);
  if (!ev || !m || !scratch) return SVI_ERR_ARG;
  mj_setState(m, scratch, snapshot(in, ev), mjSTATE_INTEGRATION);
  return SVI_OK;
}

int svi_event_load_native(svi_instance* in, const mjModel* m, int i, const mjModel* native,
                          mjData* d_native) {
  const svi_event* ev = svi_event_get(in, i);
  const int sig = mjSTATE_INTEGRATION & ~mjSTATE_PLUGIN;
  if (!ev || !m || !native || !d_native || native->nv != m->nv ||
      mj_stateSize(native, sig) != mj_stateSize(m, sig))
    return SVI_ERR_ARG;
  double* buf = malloc(sizeof(double) * (size_t)mj_stateSize(m, sig));
  if (!buf) return SVI_ERR_NOMEM;
  mj_extractState(m, snapshot(in, ev), mjSTATE_INTEGRATION, buf, sig);
  mj_setState(native, d_native, buf, sig);
  free(buf);
  return SVI_OK;
}

int svi_event_preview(svi_instance* in, const mjModel* m, mjData* scratch, int i, uint64_t seed,
                      svi_law law, double* qvel_out) {
  const svi_event* ev = svi_event_get(in, i);
  svi_instance* sin = svi_instance_of(m, scratch);
  if (!ev || !sin || !qvel_out || (unsigned)law >= SVI_NLAW) return SVI_ERR_ARG;
  mj_setState(m, scratch, snapshot(in, ev), mjSTATE_INTEGRATION);
  sin->preview = 1;
  sin->has_once = 1;
  sin->once_index = ev->index;
  sin->once_seed = seed;
  sin->once_law = (int)law;
  memset(&sin->preview_event, 0, sizeof(sin->preview_event));
  sin->preview_event.index = -1;
  mj_forward(m, scratch);
  sin->preview = 0;
  sin->has_once = 0;
  memcpy(qvel_out, scratch->qvel, sizeof(mjtNum) * (size_t)m->nv);
  in->preview_event = sin->preview_event;
  return in->preview_event.index == ev->index ? SVI_OK : SVI_ERR_ARG;
}

const svi_event* svi_last_preview(const svi_instance* in) { return &in->preview_event; }

/* The seeds before the last are resolved by svi_events_compute inside the last one's preview,
 * after the event's set-up (docs/theory.md §6, "Previews of many seeds"); under the native law,
 * which resolves nothing, and if compute did not reach them, each is previewed on its own. */
int svi_event_preview_many(svi_instance* in, const mjModel* m, mjData* scratch, int i,
                           const uint64_t* seeds, int n, svi_law law, double* qvel_out,
                           svi_event* records) {
  svi_instance* sin = svi_instance_of(m, scratch);
  if (!in || !sin || !seeds || n < 1 || !qvel_out) return SVI_ERR_ARG;
  size_t nv = (size_t)m->nv;
  int batch = law != SVI_LAW_NATIVE;
  sin->batch_seed = seeds;
  sin->batch_n = batch ? n - 1 : 0;
  sin->batch_qvel = qvel_out;
  sin->batch_rec = records;
  sin->batch_done = 0;
  int st = svi_event_preview(in, m, scratch, i, seeds[n - 1], law, qvel_out + (size_t)(n - 1) * nv);
  int done = sin->batch_done;
  sin->batch_n = 0;
  sin->batch_seed = NULL;
  sin->batch_qvel = NULL;
  sin->batch_rec = NULL;
  if (st == SVI_OK && (!batch || !done))   /* one at a time, in order: scratch ends at the last */
    for (int k = 0; k < n && st == SVI_OK; k++) {
      st = svi_event_preview(in, m, scratch, i, seeds[k], law, qvel_out + (size_t)k * nv);
      if (records) records[k] = in->preview_event;
    }
  else if (st == SVI_OK && records)
    records[n - 1] = in->preview_event;
  return st;
}

int svi_event_approximate(svi_instance* in, const mjModel* m, mjData* scratch, int i, long long samples,
                          int threads, uint64_t seed, double* qvel_out, unsigned char* accepted,
                          svi_approx_stats* stats) {
  if (!in || !m || !scratch || samples < 1 || !qvel_out || threads < 0) return SVI_ERR_ARG;
  svi_problem_def def;
  int nc = svi_event_problem(in, m, scratch, i, &def);
  if (nc <= 0) return SVI_ERR_ARG;
  svi_instance* sin = svi_instance_of(m, scratch);
  int nl = svi_current_limits(sin, nc, m->nv, 0, NULL, NULL, NULL);
  int* dg = malloc(sizeof(int) * ((size_t)m->nv + (size_t)nc + 1));
  uint64_t* key = malloc(sizeof(uint64_t) * ((size_t)m->ntree + 1));
  double* lim = nl > 0 ? malloc(sizeof(double) * (size_t)nl * ((size_t)m->nv + 1)) : NULL;
  unsigned char* acc = accepted || nl == 0 ? accepted : malloc((size_t)samples);   /* the limits need the flags */
  if (!dg || !key || (nl > 0 && (!lim || !acc))) {
    free(dg); free(key); free(lim);
    if (acc != accepted) free(acc);
    return SVI_ERR_NOMEM;
  }
  int ng = svi_current_groups(sin, m, scratch, nc, dg, dg + m->nv, key);
  const svi_config* cfg = &in->cfg;
  svi_approx_config ac = svi_approx_default_config();
  ac.samples = samples;
  ac.threads = threads;
  svi_config_routh(cfg, &ac.routh);
  ac.routh.seed = seed;
  svi_approx_stats local, *out = stats ? stats : &local;
  int st = svi_approximate_groups(&def, &ac, ng, dg, dg + m->nv, key, qvel_out, acc, NULL,
                                  out);   /* Sobol where each fits, as svi-sample */
  if (st >= 0 && nl > 0) {   /* mj_step's check: an outcome that closes an active limit is MuJoCo's */
    double tol;
    svi_current_limits(sin, nc, m->nv, nl, lim, lim + (size_t)nl * m->nv, &tol);
    out->limit_refused = svi_limits_refuse(nl, m->nv, lim, lim + (size_t)nl * m->nv, tol, samples, qvel_out, acc);
    out->accepted -= out->limit_refused;
  }
  free(dg);
  free(key);
  free(lim);
  if (acc != accepted) free(acc);
  return st;
}

int svi_current_groups(svi_instance* in, const mjModel* m, const mjData* d, int nc, int* dof_group,
                       int* contact_group, uint64_t* key) {
  if (!in || !m || !d || nc <= 0 || !dof_group || !contact_group || !key) return 0;
  int ng = in->cfg.split ? svi_events_groups(in, m, d, nc) : 1;
  for (int j = 0; j < m->nv; j++) dof_group[j] = -1;
  for (int j = 0; j < in->nve; j++) dof_group[in->edof[j]] = ng > 1 ? in->gdof[j] : 0;
  for (int k = 0; k < nc; k++) contact_group[k] = ng > 1 ? in->gcon[k] : 0;
  for (int g = 0; g < ng; g++) key[g] = ng > 1 ? in->tkey[in->gkey[g]] : 0;
  return ng;
}

int svi_current_problem(svi_instance* in, const mjModel* m, mjData* d, svi_problem_def* def,
                        int* contact_index) {
  if (!in || !in->imp || !m || !d || !def) return 0;
  in->suspend = 1;
  mj_forward(m, d);
  in->suspend = 0;
  /* why this problem cannot be returned, if it cannot, is this state's message (not one kept
   * from an earlier event's rebuild), for the caller to pass on rather than printed here */
  in->warned = 0;
  in->message[0] = 0;
  in->quiet = 1;
  int napproach = 0;
  int nc = svi_events_problem(in, m, d, def, &napproach);
  in->quiet = 0;
  if (nc > 0 && contact_index) memcpy(contact_index, in->cidx, sizeof(int) * (size_t)nc);
  return nc;
}

int svi_event_problem(svi_instance* in, const mjModel* m, mjData* scratch, int i,
                      svi_problem_def* def) {
  svi_instance* sin = svi_instance_of(m, scratch);
  if (!sin || svi_event_load(in, m, scratch, i) != SVI_OK) return 0;
  return svi_current_problem(sin, m, scratch, def, NULL);
}
