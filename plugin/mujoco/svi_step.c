/* svi_step.c -- svi_step(m, d), the drop-in for mj_step, and the impact-event log.
 *
 * The step is MuJoCo's own pipeline with one stage inserted (DESIGN.md section 3):
 *   mj_step1 -> detect impact event -> resolve with the law -> write qvel -> mj_fwdVelocity,
 *   mj_sensorVel -> mj_step2.
 * Writing qvel is legitimate here: an instantaneous impact is a velocity jump by definition; the
 * jump comes from the impact law and the velocity stage is recomputed from it.
 */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "svi/svi_mujoco.h"
#include "svi_mujoco_internal.h"

/* ---------------------------------------------------------------------------------------------
 * Registry: mjData -> instance, so that svi_step(m, d) needs no handle.
 */
#define MAX_INSTANCES 256

typedef struct { const mjData* d; svi_instance* in; int failed; } reg_entry;
static reg_entry registry[MAX_INSTANCES];
static pthread_mutex_t registry_lock = PTHREAD_MUTEX_INITIALIZER;

static reg_entry* reg_find(const mjData* d) {
  for (int i = 0; i < MAX_INSTANCES; i++) if (registry[i].d == d) return &registry[i];
  return NULL;
}

svi_instance* svi_instance_of(const mjData* d) {
  pthread_mutex_lock(&registry_lock);
  reg_entry* e = reg_find(d);
  svi_instance* in = e ? e->in : NULL;
  pthread_mutex_unlock(&registry_lock);
  return in;
}

static void reg_put(const mjData* d, svi_instance* in, int failed) {
  pthread_mutex_lock(&registry_lock);
  reg_entry* e = reg_find(d);
  if (!e) e = reg_find(NULL);
  if (e) { e->d = d; e->in = in; e->failed = failed; }
  pthread_mutex_unlock(&registry_lock);
}

/* ---------------------------------------------------------------------------------------------
 * Snapshots: everything mj_step reads that the user or the step may change.
 */
static int touch_capacity(const mjModel* m) { return m->nconmax > 0 ? m->nconmax : 1; }

static int snapshot_size(const mjModel* m) {
  return 1 + 1 + 5 * touch_capacity(m) + m->nq + m->nv + m->na + m->nv + m->nu + m->nv + 6 * m->nbody + 3 * m->nmocap +
         4 * m->nmocap + m->nuserdata;
}

static void copy_state(const mjModel* m, mjData* d, double* buf, int save, svi_instance* in) {
  struct { mjtNum* p; int n; } parts[] = {
    {d->qpos, m->nq}, {d->qvel, m->nv}, {d->act, m->na}, {d->qacc_warmstart, m->nv},
    {d->ctrl, m->nu}, {d->qfrc_applied, m->nv}, {d->xfrc_applied, 6 * m->nbody},
    {d->mocap_pos, 3 * m->nmocap}, {d->mocap_quat, 4 * m->nmocap}, {d->userdata, m->nuserdata}};
  double* b = buf;
  if (save) *b = d->time; else d->time = *b;
  b++;
  int cap = touch_capacity(m);
  if (save) {
    *b = in->ntouch;
    memcpy(b + 1, in->touch, sizeof(double) * 5 * (size_t)in->ntouch);
  } else if (in) {   /* in == NULL: load the mjData state only */
    in->ntouch = (int)*b;
    memcpy(in->touch, b + 1, sizeof(double) * 5 * (size_t)in->ntouch);
  }
  b += 1 + 5 * cap;
  for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
    if (parts[i].n <= 0) continue;
    if (save) memcpy(b, parts[i].p, sizeof(mjtNum) * (size_t)parts[i].n);
    else memcpy(parts[i].p, b, sizeof(mjtNum) * (size_t)parts[i].n);
    b += parts[i].n;
  }
}

/* ---------------------------------------------------------------------------------------------
 * Attach / detach.
 */
static void free_instance(svi_instance* in) {
  if (!in) return;
  svi_impact_destroy(in->imp);
  free(in->block);
  free(in->events);
  free(in->cidx);
  free(in->kept);
  free(in->touch);
  free(in->touch_next);
  free(in->touch_save);
  free(in);
}

svi_instance* svi_attach(const mjModel* m, mjData* d, char* err, int errlen) {
  char dummy[8];
  if (!err || errlen <= 0) { err = dummy; errlen = sizeof(dummy); }
  err[0] = 0;
  if (!m || !d) { snprintf(err, (size_t)errlen, "svi: NULL model or data"); return NULL; }
  svi_instance* old = svi_instance_of(d);
  if (old && old->m == m && old->nv == m->nv && old->nconmax == m->nconmax) return old;
  if (old) svi_detach(d);   /* stale: the mjData was freed without svi_detach and reused */

  svi_instance* in = calloc(1, sizeof(*in));
  if (!in) { snprintf(err, (size_t)errlen, "svi: out of memory"); return NULL; }
  if (svi_config_from_model(m, &in->cfg, err, errlen) < 0) { free(in); return NULL; }
  in->m = m;
  in->d = d;
  in->nv = m->nv;
  in->nconmax = m->nconmax;
  in->law_override = -1;
  int nv = m->nv;
  int ncmax = in->cfg.max_contacts;
  if (m->nconmax > 0 && m->nconmax < ncmax) ncmax = m->nconmax;
  in->nc_max = ncmax;
  in->snap_size = snapshot_size(m);
  in->log_cap = in->cfg.log_events;

  if (in->cfg.enabled && nv > 0) {
    in->imp = svi_impact_create(nv, ncmax, 2);
    if (!in->imp) {
      snprintf(err, (size_t)errlen, "svi: cannot allocate the impact workspace (nv=%d, contacts=%d)", nv, ncmax);
      free_instance(in);
      return NULL;
    }
  }
  /* every per-step buffer, allocated once */
  size_t need = (size_t)nv * nv + (size_t)ncmax * nv * 3 + (size_t)ncmax * 2 + 6 * (size_t)nv +
                (size_t)ncmax * 9 + (size_t)(in->log_cap + 1) * in->snap_size;
  in->block = calloc(need + 1, sizeof(double));
  in->events = calloc((size_t)in->log_cap, sizeof(svi_event));
  in->cidx = calloc((size_t)ncmax, sizeof(int));
  in->touch_cap = touch_capacity(m);
  in->touch = calloc((size_t)in->touch_cap * 5, sizeof(double));
  in->touch_next = calloc((size_t)in->touch_cap * 5, sizeof(double));
  in->touch_save = calloc((size_t)in->touch_cap * 5, sizeof(double));
  in->kept = calloc((size_t)ncmax, sizeof(int));
  if (!in->block || !in->events || !in->cidx || !in->kept || !in->touch || !in->touch_next || !in->touch_save) {
    snprintf(err, (size_t)errlen, "svi: out of memory for the event log (%d events)", in->log_cap);
    free_instance(in);
    return NULL;
  }
  double* b = in->block;
  in->M = b;      b += (size_t)nv * nv;
  in->Jn = b;     b += (size_t)ncmax * nv;
  in->Jt = b;     b += (size_t)ncmax * 2 * nv;
  in->mu = b;     b += ncmax;
  in->vn = b;     b += ncmax;
  in->J1 = b;     b += 3 * (size_t)nv;
  in->J2 = b;     b += 3 * (size_t)nv;
  in->tdir = b;   b += (size_t)ncmax * 4;      /* per contact: tangent combination (2) + spare */
  in->lam = b;    b += (size_t)ncmax * 5;       /* lambda_bar: nc (1 + nd), nd <= 4 */
  in->pending = b; b += in->snap_size;
  in->snaps = b;
  in->counters.max_energy_ratio = 0;
  reg_put(d, in, 0);
  return in;
}

void svi_detach(mjData* d) {
  pthread_mutex_lock(&registry_lock);
  reg_entry* e = reg_find(d);
  svi_instance* in = NULL;
  if (e) { in = e->in; e->d = NULL; e->in = NULL; e->failed = 0; }
  pthread_mutex_unlock(&registry_lock);
  free_instance(in);
}

const svi_config* svi_instance_config(const svi_instance* in) { return &in->cfg; }
void svi_set_law(svi_instance* in, svi_law law) { in->law_override = (int)law; }
void svi_set_seed(svi_instance* in, uint64_t seed) { in->cfg.seed = seed; }
svi_counters svi_instance_counters(const svi_instance* in) { return in->counters; }

/* ---------------------------------------------------------------------------------------------
 * The event log: a ring of log_cap events with their pre-step snapshots.
 */
int svi_event_count(const svi_instance* in) { return in ? in->log_count : 0; }

const svi_event* svi_event_get(const svi_instance* in, int i) {
  if (!in || i < 0 || i >= in->log_count) return NULL;
  return &in->events[(in->log_start + i) % in->log_cap];
}

svi_event* log_append_event(svi_instance* in) {
  if (in->log_count == in->log_cap) {
    in->log_start = (in->log_start + 1) % in->log_cap;
    in->log_count--;
  }
  int slot = (in->log_start + in->log_count) % in->log_cap;
  in->log_count++;
  svi_event* ev = &in->events[slot];
  memset(ev, 0, sizeof(*ev));
  ev->slot = slot;
  memcpy(in->snaps + (size_t)slot * in->snap_size, in->pending, sizeof(double) * in->snap_size);
  return ev;
}

int svi_event_restore(svi_instance* in, const mjModel* m, mjData* d, int i) {
  const svi_event* ev = svi_event_get(in, i);
  if (!ev || !m || !d) return SVI_ERR_ARG;
  copy_state(m, d, in->snaps + (size_t)ev->slot * in->snap_size, 0, in);
  in->next_index = ev->index;
  in->log_count = i;
  mj_forward(m, d);
  return SVI_OK;
}

int svi_event_resample(svi_instance* in, const mjModel* m, mjData* d, int i, uint64_t seed,
                       svi_law law) {
  int st = svi_event_restore(in, m, d, i);
  if (st != SVI_OK) return st;
  in->once_seed = seed;
  in->once_law = (int)law;
  in->has_once = 1;
  int n = svi_step(m, d);
  in->has_once = 0;
  return n == 1 ? SVI_OK : SVI_ERR_ARG;
}

/* Running a past event on a scratch mjData needs that event's touching list in the instance;
 * the live one is kept aside meanwhile (returns its length for unstash_touch). */
static int stash_touch(svi_instance* in) {
  memcpy(in->touch_save, in->touch, sizeof(double) * 5 * (size_t)in->ntouch);
  return in->ntouch;
}

static void unstash_touch(svi_instance* in, int ntouch) {
  memcpy(in->touch, in->touch_save, sizeof(double) * 5 * (size_t)ntouch);
  in->ntouch = ntouch;
}

int svi_event_preview(svi_instance* in, const mjModel* m, mjData* scratch, int i, uint64_t seed,
                      svi_law law, double* qvel_out) {
  const svi_event* ev = svi_event_get(in, i);
  if (!ev || !m || !scratch || !qvel_out || !in->imp) return SVI_ERR_ARG;
  /* the live instance's step-to-step state is kept aside: the snapshot restores its own */
  int has_once = in->has_once, once_law = in->once_law;
  uint64_t once_seed = in->once_seed;
  long long next = in->next_index;
  int ntouch = stash_touch(in);
  copy_state(m, scratch, in->snaps + (size_t)ev->slot * in->snap_size, 0, in);
  in->next_index = ev->index;
  in->has_once = 1;
  in->once_seed = seed;
  in->once_law = (int)law;
  in->preview = 1;
  mj_step1(m, scratch);
  int n = law == SVI_LAW_NATIVE ? 0 : svi_resolve_impacts(in, m, scratch, law);
  memcpy(qvel_out, scratch->qvel, sizeof(mjtNum) * m->nv);
  in->preview = 0;
  in->has_once = has_once;
  in->once_law = once_law;
  in->once_seed = once_seed;
  in->next_index = next;
  unstash_touch(in, ntouch);
  return n == 1 ? SVI_OK : SVI_ERR_ARG;
}

const svi_event* svi_last_preview(const svi_instance* in) { return &in->preview_event; }

int svi_event_problem(svi_instance* in, const mjModel* m, mjData* scratch, int i,
                      svi_problem_def* def) {
  const svi_event* ev = svi_event_get(in, i);
  if (!ev || !m || !scratch || !def || !in->imp) return 0;
  int ntouch = stash_touch(in);
  copy_state(m, scratch, in->snaps + (size_t)ev->slot * in->snap_size, 0, in);
  mj_step1(m, scratch);
  int nc = svi_current_problem(in, m, scratch, def, NULL);
  unstash_touch(in, ntouch);
  return nc;
}

int svi_event_load(svi_instance* in, const mjModel* m, mjData* scratch, int i) {
  const svi_event* ev = svi_event_get(in, i);
  if (!ev || !m || !scratch) return SVI_ERR_ARG;
  copy_state(m, scratch, in->snaps + (size_t)ev->slot * in->snap_size, 0, NULL);
  mj_forward(m, scratch);
  return SVI_OK;
}

/* The instance's mutable state: log, snapshots, touching list, counters, overrides.  One list of
 * parts serves size, save and load, so the three cannot drift apart. */
static size_t transfer_state(svi_instance* in, char* buf, int save) {
  struct { void* p; size_t n; } parts[] = {
    {&in->log_start, sizeof(int)}, {&in->log_count, sizeof(int)}, {&in->ntouch, sizeof(int)},
    {&in->law_override, sizeof(int)}, {&in->next_index, sizeof(long long)},
    {&in->counters, sizeof(svi_counters)}, {&in->cfg, sizeof(svi_config)},
    {in->touch, sizeof(double) * 5 * (size_t)in->touch_cap},
    {in->events, sizeof(svi_event) * (size_t)in->log_cap},
    {in->snaps, sizeof(double) * (size_t)in->log_cap * (size_t)in->snap_size}};
  size_t off = 0;
  for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
    if (buf && save) memcpy(buf + off, parts[i].p, parts[i].n);
    else if (buf) memcpy(parts[i].p, buf + off, parts[i].n);
    off += parts[i].n;
  }
  return off;
}

size_t svi_instance_state_size(const svi_instance* in) {
  return transfer_state((svi_instance*)in, NULL, 1);   /* counts only: nothing is written */
}

void svi_instance_save(const svi_instance* in, void* buf) {
  transfer_state((svi_instance*)in, buf, 1);           /* reads in, writes buf */
}

void svi_instance_load(svi_instance* in, const void* buf) {
  transfer_state(in, (char*)buf, 0);                   /* reads buf, writes in */
}

/* ---------------------------------------------------------------------------------------------
 * The step.
 */
int svi_step(const mjModel* m, mjData* d) {
  svi_instance* in = svi_instance_of(d);
  /* a stale entry: the mjData was freed without svi_detach and its address reused, or the data
   * is stepped with another model -- start afresh */
  if (in && (in->m != m || in->nv != m->nv || in->nconmax != m->nconmax)) {
    svi_detach(d);
    in = NULL;
  }
  if (!in) {
    pthread_mutex_lock(&registry_lock);
    reg_entry* e = reg_find(d);
    int failed = e && e->failed;
    pthread_mutex_unlock(&registry_lock);
    if (!failed) {
      char err[600];
      in = svi_attach(m, d, err, sizeof(err));
      if (!in) {
        fprintf(stderr, "%s\n(svi: stepping this model natively)\n", err);
        reg_put(d, NULL, 1);
      }
    }
    if (!in) { mj_step(m, d); return SVI_ERR_ARG; }
  }
  in->counters.steps++;
  svi_law law = in->law_override >= 0 ? (svi_law)in->law_override : in->cfg.law;
  if (in->has_once) law = (svi_law)in->once_law;
  if (!in->cfg.enabled || law == SVI_LAW_NATIVE || m->nv == 0) {
    in->counters.native_steps++;
    mj_step(m, d);
    return 0;
  }
  copy_state(m, d, in->pending, 1, in);
  mj_step1(m, d);
  int events = svi_resolve_impacts(in, m, d, law);
  /* this step's touching contacts become the previous step's for the next one */
  double* t = in->touch;
  in->touch = in->touch_next;
  in->touch_next = t;
  in->ntouch = in->ntouch_next;
  mj_step2(m, d);
  if (events > 0) svi_measure_native(in, m, d);
  return events;
}

/* ---------------------------------------------------------------------------------------------
 * The run-time plugin table.
 */
static const char* const attribute_names[] = {
  "svi.plugin", "svi.law", "svi.branch", "svi.step", "svi.step_abs", "svi.max_steps", "svi.seed",
  "svi.friction_dirs", "svi.window", "svi.impact_speed", "svi.band", "svi.pseudo_impulse",
  "svi.max_contacts", "svi.log_events"};

static void* table_init(const mjModel* m, mjData* d, char* err, int errlen) {
  return svi_attach(m, d, err, errlen);
}
static void table_destroy(mjData* d, void* instance) { (void)instance; svi_detach(d); }
static void table_reset(const mjModel* m, mjData* d, void* instance) {
  svi_instance* in = instance;
  (void)m; (void)d;
  in->log_count = 0;
  in->log_start = 0;
  in->next_index = 0;
  memset(&in->counters, 0, sizeof(in->counters));
}
static int table_step(const mjModel* m, mjData* d, void* instance) { (void)instance; return svi_step(m, d); }

static const svi_plugin_def plugin_def = {
  SVI_PLUGIN_NAME, (int)(sizeof(attribute_names) / sizeof(attribute_names[0])), attribute_names,
  table_init, table_destroy, table_reset, table_step};

const svi_plugin_def* svi_plugin_table(void) { return &plugin_def; }
