/* alts.c -- the alternatives of the selected impact, computed on a worker thread so that the
 * frame rate holds: K ghost outcomes rolled out VW_HORIZON past the impact (identical outcomes
 * merged), the set of N outcomes in two contact-normal velocities with its outline and native
 * MuJoCo's outcome, and the roll-out of the current outcome (the highlighted ghost).
 *
 * The plugin's functions that take an instance read its log and write its preview record, so the
 * worker never touches the render thread's mjData: each request carries an mj_copyData copy of
 * it (state and log), made on the render thread and swapped in under the mutex. */
#define _DEFAULT_SOURCE
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "viewer.h"

#define GHOST_SEED0 1000
#define SET_SEED0 5000
#define MAX_DISTINCT 64

vw_alts* vw_alts_new(int nq, int nv) {
  vw_alts* a = calloc(1, sizeof(vw_alts));
  if (!a) return NULL;
  a->ghost_traj = calloc((size_t)VW_MAX_GHOSTS * VW_NSAMPLE * (nq + 1), sizeof(double));
  a->ghost_qvel = calloc((size_t)VW_MAX_GHOSTS * (nv + 1), sizeof(double));
  a->key.index = -1;
  if (!a->ghost_traj || !a->ghost_qvel) { vw_alts_free(a); return NULL; }
  return a;
}

void vw_alts_free(vw_alts* a) {
  if (!a) return;
  free(a->ghost_traj);
  free(a->ghost_qvel);
  free(a);
}

static void alts_copy(vw_alts* dst, const vw_alts* src, int nq, int nv) {
  double *q = dst->ghost_traj, *u = dst->ghost_qvel;
  *dst = *src;
  dst->ghost_traj = q;
  dst->ghost_qvel = u;
  memcpy(q, src->ghost_traj, sizeof(double) * (size_t)src->nghost * VW_NSAMPLE * nq);
  memcpy(u, src->ghost_qvel, sizeof(double) * (size_t)src->nghost * nv);
}

static int key_eq(vw_evkey a, vw_evkey b) {
  return a.index == b.index && a.time == b.time && a.law == b.law && a.gen == b.gen;
}

static vw_evkey key_of(const viewer* v, const svi_event* e) {
  vw_evkey k = {e->index, e->time, vw_set_law(e), v->gen};
  return k;
}

static double max_abs_diff(const double* a, const double* b, int n) {
  double m = 0;
  for (int i = 0; i < n; i++) m = fmax(m, fabs(a[i] - b[i]));
  return m;
}

/* --------------------------------------------------------------------------------------------- */
/* The outline of the set: the convex hull (Andrew's monotone chain), counter-clockwise. */
static int cmp_pt(const void* a, const void* b) {
  const double *p = a, *q = b;
  return p[0] < q[0] ? -1 : p[0] > q[0] ? 1 : p[1] < q[1] ? -1 : p[1] > q[1];
}

static double cross(const double* o, const double* a, const double* b) {
  return (a[0] - o[0]) * (b[1] - o[1]) - (a[1] - o[1]) * (b[0] - o[0]);
}

static int convex_hull(double (*pt)[2], int n, double (*hull)[2]) {
  if (n < 3) { memcpy(hull, pt, sizeof(double) * 2 * (size_t)n); return n; }
  qsort(pt, (size_t)n, sizeof(pt[0]), cmp_pt);
  int k = 0;
  for (int i = 0; i < n; i++) {
    while (k >= 2 && cross(hull[k - 2], hull[k - 1], pt[i]) <= 0) k--;
    hull[k][0] = pt[i][0]; hull[k][1] = pt[i][1]; k++;
  }
  for (int i = n - 2, lo = k + 1; i >= 0; i--) {
    while (k >= lo && cross(hull[k - 2], hull[k - 1], pt[i]) <= 0) k--;
    hull[k][0] = pt[i][0]; hull[k][1] = pt[i][1]; k++;
  }
  return k - 1;
}

/* --------------------------------------------------------------------------------------------- */
/* Worker side. */
static int should_abort(vw_worker* w) {
  return atomic_load(&w->quit) || atomic_load(&w->abort_job) || atomic_load(&w->req_pending);
}

static void publish(vw_worker* w) {
  pthread_mutex_lock(&w->mu);
  alts_copy(w->out, w->work, w->m->nq, w->m->nv);
  atomic_fetch_add(&w->out_version, 1);
  pthread_mutex_unlock(&w->mu);
}

/* mj_step from the post-impact state left in d for VW_HORIZON, keeping VW_NSAMPLE poses: the steps
 * the replay takes.  Returns -1 if the job was abandoned. */
static int roll_out(vw_worker* w, mjData* d, double t_event, double* traj, int (*abandon)(vw_worker*)) {
  for (int j = 0; j < VW_NSAMPLE; j++) {
    double t = t_event + VW_HORIZON * (j + 1) / VW_NSAMPLE;
    while (d->time < t - 1e-12) {
      if (abandon(w)) return -1;
      mj_step(w->m, d);
    }
    memcpy(traj + (size_t)j * w->m->nq, d->qpos, sizeof(double) * (size_t)w->m->nq);
  }
  return 0;
}

static int current_abandoned(vw_worker* w) { return atomic_load(&w->quit) || atomic_load(&w->abort_job); }

/* Where the current outcome goes: preview with its seed and law, then its roll-out. */
static void run_current(vw_worker* w) {
  const mjModel* m = w->m;
  svi_instance* in = svi_instance_of(m, w->wc);
  vw_current* c = &w->work_cur;
  const svi_event* e = in ? svi_event_get(in, c->event) : NULL;
  if (!e) return;
  double t_event = e->time;
  if (svi_event_preview(in, m, w->wcs, c->event, c->seed, (svi_law)c->law, w->qv) != SVI_OK) return;
  if (roll_out(w, w->wcs, t_event, c->traj, current_abandoned) != 0) return;
  pthread_mutex_lock(&w->mu);
  w->out_cur.key = c->key;
  w->out_cur.seed = c->seed;
  w->out_cur.law = c->law;
  memcpy(w->out_cur.traj, c->traj, sizeof(double) * VW_NSAMPLE * (size_t)m->nq);
  atomic_fetch_add(&w->cur_version, 1);
  pthread_mutex_unlock(&w->mu);
}

/* a pending current-outcome job goes first, even in the middle of a set */
static void service_current(vw_worker* w) {
  if (!atomic_load(&w->cur_pending)) return;
  pthread_mutex_lock(&w->mu);
  mjData* t = w->wc; w->wc = w->cur_d; w->cur_d = t;
  w->work_cur.event = w->cur_event;   /* the job's own copy: the render thread may post the next */
  w->work_cur.key = w->cur_key;
  w->work_cur.seed = w->cur_seed;
  w->work_cur.law = w->cur_law;
  atomic_store(&w->cur_pending, 0);
  pthread_mutex_unlock(&w->mu);
  run_current(w);
}

/* the plotted contacts: the two approaching fastest, in contact order */
static void choose_axes(const svi_event* e, vw_alts* a) {
  int n = e->ncontact < SVI_EVENT_MAX_CONTACTS ? e->ncontact : SVI_EVENT_MAX_CONTACTS;
  int p = 0, q = -1;
  for (int k = 1; k < n; k++) if (e->vn_before[k] < e->vn_before[p]) p = k;
  for (int k = 0; k < n; k++) if (k != p && (q < 0 || e->vn_before[k] < e->vn_before[q])) q = k;
  a->ncontact = e->ncontact;
  a->dim = q < 0 ? 1 : 2;
  if (q < 0) q = p;
  a->axis[0] = p < q ? p : q;
  a->axis[1] = p < q ? q : p;
}

/* distinct outcomes seen so far, up to MAX_DISTINCT representatives */
typedef struct { double* rep; int n, capped; } distinct_set;

static void distinct_add(distinct_set* s, const double* qv, int nv, double tol) {
  for (int i = 0; i < s->n; i++)
    if (max_abs_diff(s->rep + (size_t)i * nv, qv, nv) <= tol) return;
  if (s->n == MAX_DISTINCT) { s->capped = 1; return; }
  memcpy(s->rep + (size_t)s->n++ * nv, qv, sizeof(double) * (size_t)nv);
}

/* K ghosts: outcomes for seeds GHOST_SEED0 + k; equal outcomes merge, the others roll out */
static int sample_ghosts(vw_worker* w, svi_instance* in, int ev, int K, svi_law law, double tol,
                         distinct_set* ds) {
  const mjModel* m = w->m;
  vw_alts* a = w->work;
  double t_event = svi_event_get(in, ev)->time;
  for (int k = 0; k < K; k++) {
    if (should_abort(w)) return -1;
    service_current(w);
    uint64_t seed = GHOST_SEED0 + (uint64_t)k;
    if (svi_event_preview(in, m, w->ws, ev, seed, law, w->qv) != SVI_OK) continue;
    a->sampled = k + 1;
    distinct_add(ds, w->qv, m->nv, tol);
    int j = 0;
    while (j < a->nghost && max_abs_diff(a->ghost_qvel + (size_t)j * m->nv, w->qv, m->nv) > tol) j++;
    if (j < a->nghost) { a->ghost[j].count++; continue; }
    vw_outcome* o = &a->ghost[a->nghost];
    o->seed = seed;
    o->count = 1;
    memcpy(o->vn, svi_last_preview(in)->vn_after, sizeof(o->vn));
    memcpy(a->ghost_qvel + (size_t)a->nghost * m->nv, w->qv, sizeof(double) * (size_t)m->nv);
    double* traj = a->ghost_traj + (size_t)a->nghost * VW_NSAMPLE * m->nq;
    if (roll_out(w, w->ws, t_event, traj, should_abort) != 0) return -1;
    a->nghost++;
  }
  return 0;
}

/* N outcomes of the set (seeds SET_SEED0 + k) in the plotted contacts' normal velocities, several
 * seeds a call (the event detected and set up once per call, the same outcomes): VW_SET_BATCH up
 * to 8 contacts, fewer for larger events, whose samples are slow (an abort waits for a call) */
static int sample_set(vw_worker* w, svi_instance* in, int ev, int N, svi_law law, double tol,
                      distinct_set* ds) {
  const mjModel* m = w->m;
  vw_alts* a = w->work;
  int nc = svi_event_get(in, ev)->ncontact;
  int batch = nc <= 8 ? VW_SET_BATCH : nc <= 24 ? VW_SET_BATCH / 4 : 1;
  a->nset = 0;
  for (int k0 = 0; k0 < N && a->nset < VW_MAX_SET; k0 += batch) {
    if (should_abort(w)) return -1;
    service_current(w);
    int nb = N - k0 < batch ? N - k0 : batch;
    uint64_t seeds[VW_SET_BATCH];
    for (int k = 0; k < nb; k++) seeds[k] = SET_SEED0 + (uint64_t)(k0 + k);
    if (svi_event_preview_many(in, m, w->ws, ev, seeds, nb, law, w->qv_batch, w->rec_batch) != SVI_OK) continue;
    for (int k = 0; k < nb && a->nset < VW_MAX_SET; k++) {
      const svi_event* p = w->rec_batch + k;
      distinct_add(ds, w->qv_batch + (size_t)k * m->nv, m->nv, tol);
      a->set_pt[a->nset][0] = p->vn_after[a->axis[0]];
      a->set_pt[a->nset][1] = a->dim == 2 ? p->vn_after[a->axis[1]] : 0;
      a->set_seed[a->nset++] = seeds[k];
    }
  }
  return 0;
}

/* native MuJoCo from the same pre-impact state, its contact-normal velocities after the impact */
static void native_point(vw_worker* w, svi_instance* in, int ev) {
  vw_alts* a = w->work;
  svi_problem_def def;
  a->has_native = 0;
  int nc = svi_event_problem(in, w->m, w->ws, ev, &def);
  int cap = svi_instance_config(in)->max_contacts;
  if (nc <= a->axis[1] || nc > cap) return;
  memcpy(w->jn, def.Jn, sizeof(double) * (size_t)nc * w->m->nv);
  svi_problem_def frozen = def;
  frozen.Jn = w->jn;
  if (svi_event_load_native(in, w->m, ev, w->mn, w->wn) == SVI_OK &&
      svi_native_outcome(w->mn, w->wn, &frozen, 0.1, w->vn) > 0) {
    a->native_pt[0] = w->vn[a->axis[0]];
    a->native_pt[1] = a->dim == 2 ? w->vn[a->axis[1]] : 0;
    a->has_native = 1;
  }
}

/* The sample where the distinct ghosts differ most: the largest distance of a moving body from its
 * place in ghost 0.  Equal ghosts are shown at the end of the horizon. */
static void ghost_time(vw_worker* w) {
  const mjModel* m = w->m;
  vw_alts* a = w->work;
  a->tau = VW_NSAMPLE - 1;
  a->spread = 0;
  for (int j = 0; j < VW_NSAMPLE && a->nghost > 1; j++) {
    double spread = 0;
    for (int k = 0; k < a->nghost; k++) {
      memcpy(w->ws->qpos, a->ghost_traj + ((size_t)k * VW_NSAMPLE + j) * m->nq, sizeof(double) * (size_t)m->nq);
      mj_kinematics(m, w->ws);
      if (k == 0) { memcpy(w->xpos0, w->ws->xpos, sizeof(double) * 3 * (size_t)m->nbody); continue; }
      for (int b = 1; b < m->nbody; b++)
        if (m->body_weldid[b] != 0)
          for (int c = 0; c < 3; c++) spread = fmax(spread, fabs(w->ws->xpos[3 * b + c] - w->xpos0[3 * b + c]));
    }
    if (spread > a->spread * 1.05) { a->spread = spread; a->tau = j; }
  }
}

static void outline(vw_alts* a) {
  static double pts[VW_MAX_SET][2];   /* worker thread only */
  memcpy(pts, a->set_pt, sizeof(double) * 2 * (size_t)a->nset);
  a->nhull = convex_hull(pts, a->nset, a->hull);
}

static void run_alts(vw_worker* w, int ev, vw_evkey key, int K, int N) {
  const mjModel* m = w->m;
  svi_instance* in = svi_instance_of(m, w->wd);
  vw_alts* a = w->work;
  const svi_event* e = in ? svi_event_get(in, ev) : NULL;
  if (!e) return;
  double *q = a->ghost_traj, *u = a->ghost_qvel;
  memset(a, 0, sizeof(*a));
  a->ghost_traj = q;
  a->ghost_qvel = u;
  a->key = key;
  choose_axes(e, a);
  /* outcomes equal to 1e-6 of the largest pre-impact speed are the same outcome */
  svi_event_load(in, m, w->ws, ev);
  double vmax = 0;
  for (int i = 0; i < m->nv; i++) vmax = fmax(vmax, fabs(w->ws->qvel[i]));
  double tol = 1e-6 * fmax(vmax, 1e-3);
  static double rep[MAX_DISTINCT * 64];   /* worker thread only; nv <= 64 checked below */
  distinct_set ds = {rep, 0, 0};
  if (m->nv > 64) ds.n = MAX_DISTINCT, ds.capped = 1;
  svi_law law = (svi_law)key.law;
  if (sample_ghosts(w, in, ev, K, law, tol, &ds) != 0) return;
  ghost_time(w);
  a->stage = VW_STAGE_GHOSTS;
  publish(w);
  if (sample_set(w, in, ev, N, law, tol, &ds) != 0) return;
  outline(a);
  native_point(w, in, ev);
  a->ndistinct = ds.capped ? MAX_DISTINCT + 1 : ds.n;
  a->unique = ds.n == 1 && !ds.capped;
  a->stage = VW_STAGE_SET;
  publish(w);
}

static void lower_priority(void) {
  /* the render thread keeps its frame rate on a busy machine: the worker yields to it */
  if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), 10) != 0) { /* not fatal */ }
}

static void* worker_main(void* arg) {
  vw_worker* w = arg;
  lower_priority();
  pthread_mutex_lock(&w->mu);
  while (!atomic_load(&w->quit)) {
    if (!w->m) {   /* detached: nothing to compute on */
      atomic_store(&w->req_pending, 0);
      atomic_store(&w->cur_pending, 0);
    }
    if (!atomic_load(&w->req_pending) && !atomic_load(&w->cur_pending)) {
      pthread_cond_wait(&w->cv, &w->mu);
      continue;
    }
    atomic_store(&w->busy, 1);
    if (atomic_load(&w->cur_pending)) {
      pthread_mutex_unlock(&w->mu);
      service_current(w);
    } else {
      mjData* t = w->wd; w->wd = w->req_d; w->req_d = t;
      int ev = w->req_event, K = w->req_nghost, N = w->req_nset;
      vw_evkey key = w->req_key;
      atomic_store(&w->req_pending, 0);
      pthread_mutex_unlock(&w->mu);
      run_alts(w, ev, key, K, N);
      w->jobs_done++;
    }
    pthread_mutex_lock(&w->mu);
    atomic_store(&w->busy, 0);
    pthread_cond_broadcast(&w->cv);
  }
  pthread_mutex_unlock(&w->mu);
  return NULL;
}

/* --------------------------------------------------------------------------------------------- */
/* Render-thread side. */
int vw_worker_start(viewer* v) {
  vw_worker* w = &v->wk;
  pthread_mutex_init(&w->mu, NULL);
  pthread_cond_init(&w->cv, NULL);
  if (pthread_create(&w->thread, NULL, worker_main, w) != 0) return -1;
  w->started = 1;
  vw_worker_attach(v);
  return 0;
}

void vw_worker_stop(viewer* v) {
  vw_worker* w = &v->wk;
  if (!w->started) return;
  vw_worker_detach(v);
  pthread_mutex_lock(&w->mu);
  atomic_store(&w->quit, 1);
  pthread_cond_broadcast(&w->cv);
  pthread_mutex_unlock(&w->mu);
  pthread_join(w->thread, NULL);
  w->started = 0;
}

static void free_worker_data(vw_worker* w) {
  mjData** ds[] = {&w->req_d, &w->cur_d, &w->wd, &w->ws, &w->wn, &w->wc, &w->wcs};
  for (size_t i = 0; i < sizeof(ds) / sizeof(ds[0]); i++) { mj_deleteData(*ds[i]); *ds[i] = NULL; }
  free(w->jn); free(w->vn); free(w->qv); free(w->xpos0); free(w->qv_batch); free(w->rec_batch);
  free(w->work_cur.traj); free(w->out_cur.traj);
  vw_alts_free(w->work); vw_alts_free(w->out);
  w->jn = w->vn = w->qv = w->xpos0 = w->qv_batch = w->work_cur.traj = w->out_cur.traj = NULL;
  w->rec_batch = NULL;
  w->work = w->out = NULL;
}

/* stop any job on the current model and let go of it (before a reload frees the model) */
void vw_worker_detach(viewer* v) {
  vw_worker* w = &v->wk;
  pthread_mutex_lock(&w->mu);
  atomic_store(&w->abort_job, 1);
  while (atomic_load(&w->busy)) pthread_cond_wait(&w->cv, &w->mu);
  free_worker_data(w);
  w->m = w->mn = NULL;
  atomic_store(&w->req_pending, 0);
  atomic_store(&w->cur_pending, 0);
  atomic_store(&w->abort_job, 0);
  pthread_mutex_unlock(&w->mu);
}

void vw_worker_attach(viewer* v) {
  vw_worker* w = &v->wk;
  const mjModel* m = v->m;
  pthread_mutex_lock(&w->mu);
  mjData** ds[] = {&w->req_d, &w->cur_d, &w->wd, &w->ws, &w->wc, &w->wcs};
  for (size_t i = 0; i < sizeof(ds) / sizeof(ds[0]); i++) *ds[i] = mj_makeData(m);
  w->wn = mj_makeData(v->mn);
  svi_config cfg = svi_default_config();
  if (v->in) cfg = *svi_instance_config(v->in);
  w->jn = calloc((size_t)cfg.max_contacts * m->nv + 1, sizeof(double));
  w->vn = calloc((size_t)cfg.max_contacts + 1, sizeof(double));
  w->qv = calloc((size_t)m->nv + 1, sizeof(double));
  w->qv_batch = calloc((size_t)VW_SET_BATCH * m->nv + 1, sizeof(double));
  w->rec_batch = calloc(VW_SET_BATCH, sizeof(svi_event));
  w->xpos0 = calloc(3 * (size_t)m->nbody + 1, sizeof(double));
  w->work_cur.traj = calloc((size_t)VW_NSAMPLE * m->nq + 1, sizeof(double));
  w->out_cur.traj = calloc((size_t)VW_NSAMPLE * m->nq + 1, sizeof(double));
  w->work = vw_alts_new(m->nq, m->nv);
  w->out = vw_alts_new(m->nq, m->nv);
  w->m = m;
  w->mn = v->mn;
  atomic_store(&w->out_version, 0);
  atomic_store(&w->cur_version, 0);
  v->seen_version = v->seen_cur_version = 0;
  v->want.index = v->want_cur.index = -1;
  v->cur.key.index = -1;
  pthread_mutex_unlock(&w->mu);
}

static void request_alts(viewer* v, int ev, vw_evkey key) {
  vw_worker* w = &v->wk;
  pthread_mutex_lock(&w->mu);
  mj_copyData(w->req_d, v->m, v->d);
  w->req_event = ev;
  w->req_key = key;
  w->req_nghost = v->nghost;
  w->req_nset = v->nset;
  atomic_store(&w->req_pending, 1);
  pthread_cond_broadcast(&w->cv);
  pthread_mutex_unlock(&w->mu);
  v->want = key;
}

static void request_current(viewer* v, int ev, vw_evkey key, const svi_event* e) {
  vw_worker* w = &v->wk;
  pthread_mutex_lock(&w->mu);
  mj_copyData(w->cur_d, v->m, v->d);
  w->cur_event = ev;
  w->cur_key = key;
  w->cur_seed = e->seed;
  w->cur_law = e->law;
  atomic_store(&w->cur_pending, 1);
  pthread_cond_broadcast(&w->cv);
  pthread_mutex_unlock(&w->mu);
  v->want_cur = key;
  v->want_cur_seed = e->seed;
  v->want_cur_law = e->law;
}

static void print_results(viewer* v, int old_stage) {
  vw_alts* a = v->alts;
  if (a->stage >= VW_STAGE_GHOSTS && old_stage < VW_STAGE_GHOSTS)
    printf("ghosts event=%d sampled=%d distinct=%d\n", a->key.index, a->sampled, a->nghost);
  if (a->stage == VW_STAGE_SET)
    printf("inset event=%d points=%d dim=%d native=%d distinct=%d unique=%d\n", a->key.index,
           a->nset, a->dim, a->has_native, a->ndistinct, a->unique);
  fflush(stdout);
}

/* each frame: take new results, ask for what the selected event needs */
void vw_alts_update(viewer* v) {
  vw_worker* w = &v->wk;
  if (!w->m) return;
  int ver = atomic_load(&w->out_version);
  if (ver != v->seen_version) {
    pthread_mutex_lock(&w->mu);
    int same = key_eq(v->alts->key, w->out->key), old_stage = same ? v->alts->stage : VW_STAGE_NONE;
    /* a recomputation of the same event: keep the complete results until it completes too */
    if (!same || w->out->stage >= old_stage) alts_copy(v->alts, w->out, v->m->nq, v->m->nv);
    pthread_mutex_unlock(&w->mu);
    v->seen_version = ver;
    if (v->alts->stage != old_stage || !same) {
      v->ghosts_cached_for = -1;
      v->ui_dirty = 1;
      print_results(v, old_stage);
    }
  }
  ver = atomic_load(&w->cur_version);
  if (ver != v->seen_cur_version) {
    pthread_mutex_lock(&w->mu);
    v->cur.key = w->out_cur.key;
    v->cur.seed = w->out_cur.seed;
    v->cur.law = w->out_cur.law;
    v->cur.provisional = 0;
    memcpy(v->cur.traj, w->out_cur.traj, sizeof(double) * VW_NSAMPLE * (size_t)v->m->nq);
    pthread_mutex_unlock(&w->mu);
    v->seen_cur_version = ver;
    v->ghosts_cached_for = -1;
  }
  const svi_event* e = vw_selected_event(v);
  if (!e || !v->has_plugin) return;
  vw_evkey key = key_of(v, e);
  if ((v->show_ghosts || v->show_set) && !key_eq(key, v->alts->key) && !key_eq(key, v->want))
    request_alts(v, v->selected, key);
  int cur_ok = vw_current_ready(v) && !v->cur.provisional;
  int cur_asked = key_eq(key, v->want_cur) && v->want_cur_seed == e->seed &&
                  v->want_cur_law == (int)e->law;
  if (v->show_ghosts && !cur_ok && !cur_asked) request_current(v, v->selected, key, e);
}

/* recompute the selected event's alternatives now (the old stay on screen until then) */
void vw_alts_force(viewer* v) {
  const svi_event* e = vw_selected_event(v);
  if (e && v->wk.m) request_alts(v, v->selected, key_of(v, e));
}

int vw_alts_ready(const viewer* v, int stage) {
  const svi_event* e = vw_selected_event(v);
  return e && v->alts && key_eq(v->alts->key, key_of(v, e)) && v->alts->stage >= stage;
}

int vw_current_ready(const viewer* v) {
  const svi_event* e = vw_selected_event(v);
  return e && key_eq(v->cur.key, key_of(v, e)) && v->cur.seed == e->seed && v->cur.law == (int)e->law;
}

/* Right after a resample d holds the new post-impact velocity: if a ghost has that outcome, it is
 * the highlighted one at once (the worker's exact roll-out replaces it a few ms later). */
void vw_current_from_ghosts(viewer* v) {
  const svi_event* e = vw_selected_event(v);
  v->ghosts_cached_for = -1;
  if (!e || !vw_alts_ready(v, VW_STAGE_GHOSTS) || v->d->time != e->time) return;
  double vmax = 0;
  for (int i = 0; i < v->m->nv; i++) vmax = fmax(vmax, fabs(v->d->qvel[i]));
  double tol = 1e-6 * fmax(vmax, 1e-3);
  for (int k = 0; k < v->alts->nghost; k++)
    if (max_abs_diff(v->alts->ghost_qvel + (size_t)k * v->m->nv, v->d->qvel, v->m->nv) <= tol) {
      v->cur.key = key_of(v, e);
      v->cur.seed = e->seed;
      v->cur.law = (int)e->law;
      v->cur.provisional = 1;
      memcpy(v->cur.traj, v->alts->ghost_traj + (size_t)k * VW_NSAMPLE * v->m->nq,
             sizeof(double) * VW_NSAMPLE * (size_t)v->m->nq);
      return;
    }
}
