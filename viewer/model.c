/* model.c -- loading, reloading and resetting a model, and the ring of recorded states that the
 * replay's lead-in and the Left-arrow step back read. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "viewer.h"

/* FNV-1a over qpos, qvel, time: "the same state" in test output */
unsigned long long vw_state_hash(const mjModel* m, const mjData* d) {
  unsigned long long h = 1469598103934665603ULL;
  const unsigned char* p[3] = {(const unsigned char*)d->qpos, (const unsigned char*)d->qvel,
                               (const unsigned char*)&d->time};
  size_t n[3] = {sizeof(mjtNum) * (size_t)m->nq, sizeof(mjtNum) * (size_t)m->nv, sizeof(mjtNum)};
  for (int k = 0; k < 3; k++)
    for (size_t i = 0; i < n[k]; i++) { h ^= p[k][i]; h *= 1099511628211ULL; }
  return h;
}

/* --------------------------------------------------------------------------------------------- */
/* The history ring: one mjSTATE_INTEGRATION state per step (its first entry is the time). */
void vw_hist_clear(viewer* v) { v->hist_len = v->hist_head = 0; }

void vw_hist_push(viewer* v) {
  if (!v->hist) return;
  mj_getState(v->m, v->d, v->hist + (size_t)v->hist_head * v->state_size, mjSTATE_INTEGRATION);
  v->hist_head = (v->hist_head + 1) % v->hist_cap;
  if (v->hist_len < v->hist_cap) v->hist_len++;
}

/* k = 0 is the newest state */
const double* vw_hist_state(const viewer* v, int k) {
  int slot = ((v->hist_head - 1 - k) % v->hist_cap + v->hist_cap) % v->hist_cap;
  return v->hist + (size_t)slot * v->state_size;
}

double vw_hist_time(const viewer* v, int k) { return vw_hist_state(v, k)[0]; }

int vw_hist_find(const viewer* v, double t) {
  for (int k = 0; k < v->hist_len; k++)
    if (vw_hist_time(v, k) <= t + 1e-12) return k;
  return -1;
}

void vw_hist_truncate(viewer* v, double t) {
  while (v->hist_len > 0 && vw_hist_time(v, 0) > t + 1e-12) {
    v->hist_head = (v->hist_head - 1 + v->hist_cap) % v->hist_cap;
    v->hist_len--;
  }
}

/* as simulate: the smaller of 2000 states and 64 MB, but enough for the replay's lead-in */
static int hist_capacity(const mjModel* m, int state_size) {
  int lead = (int)ceil(1.5 * VW_LEAD_IN / m->opt.timestep) + 2;
  long by_memory = (64L << 20) / ((long)sizeof(double) * state_size);
  long cap = by_memory < 2000 ? by_memory : 2000;
  if (cap < lead) cap = lead;
  return (int)cap;
}

/* --------------------------------------------------------------------------------------------- */
/* Planar models (every joint a hinge about y or a slide in x-z) are seen from the side. */
static int model_is_planar(const mjModel* m, const mjData* d) {
  for (int j = 0; j < m->njnt; j++) {
    const mjtNum* ax = d->xaxis + 3 * j;
    if (m->jnt_type[j] == mjJNT_FREE || m->jnt_type[j] == mjJNT_BALL) return 0;
    if (m->jnt_type[j] == mjJNT_HINGE && fabs(fabs(ax[1]) - 1) > 1e-6) return 0;
    if (m->jnt_type[j] == mjJNT_SLIDE && fabs(ax[1]) > 1e-6) return 0;
  }
  return 1;
}

/* The box around the moving bodies' geoms (not the floor, which MuJoCo's model statistics
 * include): what the camera frames.  Returns its half-diagonal. */
static double moving_box(const viewer* v, double center[3]) {
  const mjModel* m = v->m;
  const mjData* d = v->d;
  double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
  for (int g = 0; g < m->ngeom; g++) {
    if (m->body_weldid[m->geom_bodyid[g]] == 0 || m->geom_rbound[g] <= 0) continue;
    for (int c = 0; c < 3; c++) {
      lo[c] = fmin(lo[c], d->geom_xpos[3 * g + c] - m->geom_rbound[g]);
      hi[c] = fmax(hi[c], d->geom_xpos[3 * g + c] + m->geom_rbound[g]);
    }
  }
  if (lo[0] > hi[0]) {
    for (int c = 0; c < 3; c++) center[c] = m->stat.center[c];
    return m->stat.extent > 0 ? m->stat.extent : 1;
  }
  double r = 0;
  for (int c = 0; c < 3; c++) {
    center[c] = 0.5 * (lo[c] + hi[c]);
    if (!v->planar || c != 1) r += 0.25 * (hi[c] - lo[c]) * (hi[c] - lo[c]);   /* side view: x and z */
  }
  return fmax(sqrt(r), 0.3 * m->stat.extent);
}

/* simulate's Align, for impacts: the moving bodies centred, about half the view high; planar
 * models from the side */
void vw_default_camera(viewer* v) {
  mjv_defaultCamera(&v->cam);
  v->camera_sel = 0;
  double r = moving_box(v, v->cam.lookat);
  double fovy = v->m->vis.global.fovy > 0 ? v->m->vis.global.fovy : 45;
  v->cam.distance = 2.0 * r / tan(0.5 * fovy * mjPI / 180);
  v->cam.azimuth = v->planar ? 90 : 130;
  v->cam.elevation = v->planar ? -12 : -22;
}

/* --------------------------------------------------------------------------------------------- */
void vw_free_model(viewer* v) {
  vw_history_clear(v);
  mjv_freeScene(&v->scn);
  mjv_freeScene(&v->gscn);
  mj_deleteData(v->d);
  mj_deleteData(v->native);
  mj_deleteData(v->disp);
  mj_deleteData(v->pick);
  mj_deleteModel(v->m);
  mj_deleteModel(v->mn);
  free(v->hist);
  free(v->tmp_state);
  free(v->gskip);
  free(v->last_geoms);
  v->last_geoms = NULL;
  free(v->gdrawn);
  free(v->ghost_qtmp);
  free(v->ghost_pose);
  v->ghost_qtmp = v->ghost_pose = NULL;
  vw_alts_free(v->alts);
  free(v->cur.traj);
  v->alts = NULL;
  v->cur.traj = NULL;
  v->d = v->native = v->disp = v->pick = NULL;
  v->m = v->mn = NULL;
  v->hist = v->tmp_state = NULL;
  v->gskip = v->gdrawn = NULL;
  v->in = NULL;
}

/* The start keyframe: --key NAME, else "impact" (the bundled models' first impact), else the
 * first keyframe, else qpos0. */
static int start_key(const mjModel* m, const char* name) {
  if (name[0]) return mj_name2id(m, mjOBJ_KEY, name);
  int k = mj_name2id(m, mjOBJ_KEY, "impact");
  if (k >= 0) return k;
  return m->nkey > 0 ? 0 : -1;
}

/* the size of the moving bodies (twice the largest bounding radius of a geom not welded to the
 * world): how far apart ghosts must be drawn to be told apart */
static double moving_body_size(const mjModel* m) {
  double r = 0;
  for (int g = 0; g < m->ngeom; g++)
    if (m->body_weldid[m->geom_bodyid[g]] != 0) r = fmax(r, m->geom_rbound[g]);
  return r > 0 ? 2 * r : 0.2 * (m->stat.extent > 0 ? m->stat.extent : 1);
}

static int alloc_model_data(viewer* v) {
  const mjModel* m = v->m;
  v->d = mj_makeData(m);
  v->native = mj_makeData(v->mn);
  v->disp = mj_makeData(m);
  v->pick = mj_makeData(m);
  v->state_size = mj_stateSize(m, mjSTATE_INTEGRATION);
  v->hist_cap = hist_capacity(m, v->state_size);
  v->hist = malloc(sizeof(double) * (size_t)v->hist_cap * v->state_size);
  v->tmp_state = malloc(sizeof(double) * (size_t)v->state_size);
  int maxg = (VW_MAX_GHOSTS + 1) * (m->ngeom + 1);
  mjv_defaultScene(&v->scn);
  mjv_makeScene(m, &v->scn, 2000 + maxg + 8 * SVI_EVENT_MAX_CONTACTS);
  /* software OpenGL renders shadows and reflections on the CPU: --quality turns them on */
  v->scn.flags[mjRND_SHADOW] = (mjtByte)v->quality;
  v->scn.flags[mjRND_REFLECTION] = (mjtByte)v->quality;
  v->scn.flags[mjRND_SKYBOX] = (mjtByte)v->quality;
  mjv_defaultScene(&v->gscn);
  mjv_makeScene(m, &v->gscn, maxg);
  v->gskip = calloc((size_t)maxg, 1);
  v->last_geoms = calloc((size_t)v->scn.maxgeom, sizeof(mjvGeom));
  v->cache_valid = 0;
  if (v->res_scale <= 0) v->res_scale = 1;
  v->gdrawn = calloc((size_t)(VW_MAX_GHOSTS + 1) * (m->ngeom + 1), 1);
  v->alts = vw_alts_new(m->nq, m->nv);
  v->cur.traj = calloc((size_t)VW_NSAMPLE * m->nq + 1, sizeof(double));
  v->ghost_qtmp = calloc(2 * ((size_t)m->nq + m->nv) + 2, sizeof(double));
  v->ghost_pose = calloc((VW_MAX_GHOSTS + 1) * ((size_t)m->nq + 1), sizeof(double));
  v->body_size = moving_body_size(m);
  return v->d && v->native && v->disp && v->pick && v->hist && v->tmp_state && v->gskip && v->last_geoms &&
         v->gdrawn && v->alts && v->cur.traj && v->ghost_qtmp && v->ghost_pose ? 0 : -1;
}

/* Load (or reload) a model.  On failure the current model stays and the message is shown. */
int vw_load_model(viewer* v, const char* path) {
  char err[1000] = "", nerr[1000] = "", note[1100] = "";
  mjModel* m = svi_load_xml(path, err, sizeof(err));
  mjModel* mn = svi_load_xml_native(path, nerr, sizeof(nerr));
  if (!m && mn) {   /* a bad svi.impact setting: said, and the model runs natively */
    fprintf(stderr, "svi-viewer: %s\n", err);
    snprintf(note, sizeof(note), "%s (running natively)", err);
    m = mj_copyModel(NULL, mn);
  }
  if (!m || !mn) {
    snprintf(v->load_error, sizeof(v->load_error), "cannot load %s: %s", path, err[0] ? err : nerr);
    fprintf(stderr, "svi-viewer: %s\n", v->load_error);
    mj_deleteModel(m);
    mj_deleteModel(mn);
    if (v->m) vw_message(v, "%s", v->load_error);
    return -1;
  }
  int same_file = v->m && !strcmp(v->path, path);   /* a reload keeps the camera */
  if (v->wk.started) vw_worker_detach(v);
  vw_free_model(v);
  v->m = m;
  v->mn = mn;
  if (v->path != path) snprintf(v->path, sizeof(v->path), "%s", path);
  v->load_error[0] = 0;
  v->gen++;
  if (alloc_model_data(v) != 0) { fprintf(stderr, "svi-viewer: out of memory\n"); return -1; }
  v->key = start_key(m, v->keyname);
  if (v->keyname[0] && v->key < 0) vw_message(v, "no keyframe '%s': starting from qpos0", v->keyname);
  /* no multisampling offscreen unless --quality: the 3-D view is drawn there (ui.c) */
  m->vis.quality.offsamples = v->quality ? 4 : 0;
  if (!v->quality) {   /* software OpenGL lights every vertex on the CPU: coarser round geoms */
    if (m->vis.quality.numslices > 16) m->vis.quality.numslices = 16;
    if (m->vis.quality.numstacks > 6) m->vis.quality.numstacks = 6;
  }
  mjr_makeContext(m, &v->con, v->fontscale);
  if (v->wk.started) vw_worker_attach(v);
  mjv_defaultPerturb(&v->pert);
  vw_reset(v);
  v->has_plugin = v->in != NULL;
  v->planar = model_is_planar(m, v->d);
  if (!same_file) vw_default_camera(v);
  v->law_sel = v->in ? (int)svi_instance_config(v->in)->law : SVI_LAW_NATIVE;
  char title[1100];
  snprintf(title, sizeof(title), "svi-viewer: %s", path);
  if (v->win) glfwSetWindowTitle(v->win, title);
  if (!v->in && !note[0])
    fprintf(stderr, "svi-viewer: %s declares no svi.impact instance: native MuJoCo\n", path);
  printf("viewer model=%s plugin=%s nq=%d nv=%d key=%d\n", path, v->has_plugin ? "yes" : "no",
         (int)m->nq, (int)m->nv, v->key);
  if (note[0]) vw_message(v, "%s", note);
  if (v->win && v->ui0.nsect) vw_ui_modify(v);
  fflush(stdout);
  return 0;
}

/* Back to the start keyframe: the log, history, undo and replay start over. */
void vw_reset(viewer* v) {
  if (v->key >= 0) mj_resetDataKeyframe(v->m, v->d, v->key); else mj_resetData(v->m, v->d);
  v->in = svi_instance_of(v->m, v->d);
  if (v->in) svi_set_log_capacity(v->in, v->m, 256);
  mj_forward(v->m, v->d);
  v->selected = -1;
  v->replay.phase = VW_REPLAY_OFF;
  v->pert.active = 0;
  vw_history_clear(v);
  vw_hist_clear(v);
  vw_hist_push(v);
  v->native_valid = 0;
  memset(&v->want, 0, sizeof(v->want));
  v->want.index = -1;
  v->next_seed = 100;
  /* a keyframe whose state already holds an impact: mj_forward resolved it */
  if (v->in && svi_event_count(v->in) > 0) {
    v->selected = svi_event_count(v->in) - 1;
    if (v->break_on_impact) vw_set_running(v, 0);
  }
  vw_native_sync(v);
}
