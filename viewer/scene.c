/* scene.c -- what svi-viewer adds to MuJoCo's scene: the ghosts of the selected impact's
 * alternatives, its contact markers (numbered as in the inset) and impulses, native MuJoCo's run;
 * and picking a ghost with the mouse. */
#include <math.h>
#include <string.h>

#include "viewer.h"

static const float GHOST_RGB[3] = {0.30f, 0.62f, 1.00f};
static const float CURRENT_RGB[3] = {1.00f, 0.20f, 0.80f};
static const float NATIVE_RGBA[4] = {0.10f, 0.90f, 0.30f, 0.35f};

/* contact k's number and geoms, e.g. "1: floor/block" (numbers: geoms are often named by letters) */
void vw_contact_name(const mjModel* m, const svi_event* e, int k, char* buf, int n) {
  char g[2][48];
  for (int s = 0; s < 2; s++) {
    int id = s ? e->geom2[k] : e->geom1[k];
    const char* name = id >= 0 ? mj_id2name(m, mjOBJ_GEOM, id) : NULL;
    if (!name && id >= 0) name = mj_id2name(m, mjOBJ_BODY, m->geom_bodyid[id]);
    if (name) snprintf(g[s], sizeof(g[s]), "%s", name);
    else snprintf(g[s], sizeof(g[s]), "geom %d", id);
  }
  snprintf(buf, (size_t)n, "%d: %s/%s", k + 1, g[0], g[1]);
}

/* --------------------------------------------------------------------------------------------- */
/* The ghost cache: each distinct outcome's geoms at the ghosts' time (where the alternatives differ
 * most), built once when results arrive (not per frame).  Range k < nghost is ghost k, the last
 * range the current outcome's own roll-out.  Alternatives often differ by millimetres: each
 * ghost's difference from the current outcome is magnified (ghost_scale, at most 50, shown in the
 * HUD) until they can be told apart. */
static void add_pose(viewer* v, int range, const double* qpos) {
  double* shown = v->ghost_pose + (size_t)range * v->m->nq;
  memcpy(shown, qpos, sizeof(mjtNum) * (size_t)v->m->nq);
  memcpy(v->pick->qpos, qpos, sizeof(mjtNum) * (size_t)v->m->nq);
  mj_kinematics(v->m, v->pick);
  mjv_addGeoms(v->m, v->pick, &v->opt, NULL, mjCAT_DYNAMIC, &v->gscn);
}

/* q_ref + scale (q - q_ref), on the configuration manifold (quaternions stay unit) */
static const double* magnified(viewer* v, const double* ref, const double* q, double scale) {
  double *qd = v->ghost_qtmp, *dq = v->ghost_qtmp + v->m->nq;
  if (!ref || scale == 1) return q;
  mj_differentiatePos(v->m, dq, 1, ref, q);
  memcpy(qd, ref, sizeof(double) * (size_t)v->m->nq);
  mj_integratePos(v->m, qd, dq, scale);
  return qd;
}

static double ghost_magnification(const viewer* v) {
  double spread = v->alts->spread, target = 0.15 * v->body_size;
  return spread > 1e-9 ? fmin(50, fmax(1, target / spread)) : 1;
}

/* within tol in position and rtol in orientation (rotation-matrix entries) */
static int same_place(const mjvGeom* a, const float* pos, const float* mat, double tol, double rtol) {
  double dp = 0, dr = 0;
  for (int i = 0; i < 3; i++) dp = fmax(dp, fabs(a->pos[i] - pos[i]));
  for (int i = 0; i < 9; i++) dr = fmax(dr, fabs(a->mat[i] - mat[i]));
  return dp <= tol && dr <= rtol;
}

static double place_tol(const viewer* v) {
  return 2e-3 * (v->m->stat.extent > 0 ? v->m->stat.extent : 1);
}

/* a ghost geom that coincides with the same geom of the current outcome or of an earlier ghost is
 * drawn once: stacked translucent copies would turn opaque */
static void mark_duplicates(viewer* v, int nrange) {
  int cur = nrange - 1;
  double tol = place_tol(v);
  memset(v->gskip, 0, (size_t)v->gscn.ngeom);
  for (int r = 0; r < cur; r++)
    for (int i = v->gstart[r]; i < v->gstart[r + 1]; i++) {
      const mjvGeom* g = v->gscn.geoms + i;
      for (int j = v->gstart[cur]; j < v->gstart[cur + 1] && !v->gskip[i]; j++)
        if (v->gscn.geoms[j].objid == g->objid && same_place(v->gscn.geoms + j, g->pos, g->mat, tol, 2e-3))
          v->gskip[i] = 1;
      for (int j = 0; j < v->gstart[r] && !v->gskip[i]; j++)
        if (!v->gskip[j] && v->gscn.geoms[j].objid == g->objid &&
            same_place(v->gscn.geoms + j, g->pos, g->mat, tol, 2e-3))
          v->gskip[i] = 1;
    }
}

/* two ranges (ghost poses) whose geoms all lie within tol of each other */
static int ranges_close(const viewer* v, int a, int b, double tol) {
  int na = v->gstart[a + 1] - v->gstart[a], nb = v->gstart[b + 1] - v->gstart[b];
  if (na != nb || na == 0) return 0;
  for (int i = 0; i < na; i++) {
    const mjvGeom *g = v->gscn.geoms + v->gstart[a] + i, *h = v->gscn.geoms + v->gstart[b] + i;
    if (g->objid != h->objid || !same_place(g, h->pos, h->mat, tol, 0.04)) return 0;
  }
  return 1;
}

/* Ghosts that would be drawn within 4 % of the bodies' size of another (or of the current outcome)
 * are drawn as one, labelled with the samples it stands for: many near-equal translucent copies
 * would stack into an opaque block. */
static void merge_close_ghosts(viewer* v, int K) {
  double tol = 0.04 * v->body_size;
  v->ghosts_visual = 0;
  for (int k = 0; k <= K; k++) {
    v->gmerged[k] = -1;
    v->gcount[k] = k < K ? v->alts->ghost[k].count : 0;
  }
  for (int k = 0; k < K; k++) {
    if (ranges_close(v, k, K, tol)) { v->gmerged[k] = K; v->gcount[K] += v->gcount[k]; continue; }
    for (int j = 0; j < k && v->gmerged[k] < 0; j++)
      if (v->gmerged[j] < 0 && ranges_close(v, k, j, tol)) { v->gmerged[k] = j; v->gcount[j] += v->gcount[k]; }
    if (v->gmerged[k] < 0) v->ghosts_visual++;
  }
}

void vw_ghosts_cache(viewer* v) {
  int ready = vw_alts_ready(v, VW_STAGE_GHOSTS), nq = v->m->nq;
  int K = ready ? v->alts->nghost : 0, tau = ready ? v->alts->tau : VW_NSAMPLE - 1;
  const double* ref = vw_current_ready(v) ? v->cur.traj + (size_t)tau * nq : NULL;
  v->ghost_scale = ready && ref ? ghost_magnification(v) : 1;
  v->gscn.ngeom = 0;
  for (int k = 0; k < K; k++) {
    v->gstart[k] = v->gscn.ngeom;
    add_pose(v, k, magnified(v, ref, v->alts->ghost_traj + ((size_t)k * VW_NSAMPLE + tau) * nq, v->ghost_scale));
  }
  v->gstart[K] = v->gscn.ngeom;
  if (ref) add_pose(v, K, ref);
  v->gstart[K + 1] = v->gscn.ngeom;
  mark_duplicates(v, K + 1);
  merge_close_ghosts(v, K);
  v->ghosts_cached_for = K;
}

/* --------------------------------------------------------------------------------------------- */
static int scene_full(const viewer* v, int n) { return v->scn.ngeom + n > v->scn.maxgeom; }

static void tint(mjvGeom* g, const float rgb[3], float alpha) {
  for (int c = 0; c < 3; c++) g->rgba[c] = 0.2f * g->rgba[c] + 0.8f * rgb[c];
  g->rgba[3] = alpha;
  g->segid = -1;
}

/* the label of a ghost: how many sampled outcomes it stands for, or that it is the only one */
static void ghost_label(const viewer* v, int r, int K, mjvGeom* g) {
  const vw_alts* a = v->alts;
  if (r == K && K == 1 && a->stage == VW_STAGE_SET && a->unique)
    snprintf(g->label, sizeof(g->label), "unique outcome");
  else if (r < K && v->gcount[r] > 1)
    snprintf(g->label, sizeof(g->label), "%d of %d", v->gcount[r], a->sampled);
}

/* ghosts lie in the bodies' plane (planar models) or close to them: each is drawn a little towards
 * the camera, so translucent faces do not z-fight with the body's or each other's */
static void toward_camera(const viewer* v, mjvGeom* g, int layer) {
  const mjvGLCamera* c = v->scn.camera;
  float step = 0.002f * (float)v->cam.distance * (float)layer;
  for (int i = 0; i < 3; i++) g->pos[i] -= step * c->forward[i];
}

/* does every geom of range r lie where the body's is? */
static int range_at_body(const viewer* v, int r, const mjData* shown, double tol) {
  for (int i = v->gstart[r]; i < v->gstart[r + 1]; i++) {
    const mjvGeom* g = v->gscn.geoms + i;
    int id = g->objid;
    if (id < 0 || id >= v->m->ngeom) continue;
    float pos[3], mat[9];
    for (int c = 0; c < 3; c++) pos[c] = (float)shown->geom_xpos[3 * id + c];
    for (int c = 0; c < 9; c++) mat[c] = (float)shown->geom_xmat[9 * id + c];
    if (!same_place(g, pos, mat, tol, 2e-3)) return 0;
  }
  return 1;
}

/* The current outcome where the body already is (it barely moves): a label instead of a magenta
 * copy that would only tint the body. */
static void label_at_body(viewer* v, int K) {
  if (v->gstart[K + 1] == v->gstart[K] || scene_full(v, 1)) return;
  const mjvGeom* src = v->gscn.geoms + v->gstart[K];
  mjvGeom* g = v->scn.geoms + v->scn.ngeom++;
  mjtNum size[3] = {0, 0, 0}, pos[3] = {src->pos[0], src->pos[1], src->pos[2]};
  float rgba[4] = {CURRENT_RGB[0], CURRENT_RGB[1], CURRENT_RGB[2], 1};
  mjv_initGeom(g, mjGEOM_LABEL, size, pos, NULL, rgba);
  g->category = mjCAT_DECOR;
  if (v->alts->stage == VW_STAGE_SET && v->alts->unique) snprintf(g->label, sizeof(g->label), "unique outcome");
  else if (v->gcount[K] > 0)
    snprintf(g->label, sizeof(g->label), "this outcome (and %d of %d samples): here", v->gcount[K], v->alts->sampled);
  else snprintf(g->label, sizeof(g->label), "this outcome: here");
}

static void add_ghosts(viewer* v, const mjData* shown) {
  int K = v->ghosts_cached_for;
  if (K < 0) return;
  double tol = place_tol(v);
  int ng = v->m->ngeom;
  memset(v->gdrawn, 0, (size_t)(VW_MAX_GHOSTS + 1) * (ng + 1));
  for (int r = K; r >= 0; r--) {   /* the current outcome first */
    int drawn = 0;
    if (r < K && v->gmerged[r] >= 0) continue;
    if (r == K) v->current_at_body = range_at_body(v, K, shown, tol);
    if (r == K && v->current_at_body) { label_at_body(v, K); v->ghosts_drawn++; continue; }
    int slot = r == K ? VW_MAX_GHOSTS : r;
    for (int i = v->gstart[r]; i < v->gstart[r + 1]; i++) {
      const mjvGeom* src = v->gscn.geoms + i;
      int id = src->objid;
      if (v->gskip[i] || scene_full(v, 1) || id < 0 || id >= ng) continue;
      float pos[3], mat[9];
      for (int c = 0; c < 3; c++) pos[c] = (float)shown->geom_xpos[3 * id + c];
      for (int c = 0; c < 9; c++) mat[c] = (float)shown->geom_xmat[9 * id + c];
      if (same_place(src, pos, mat, tol, 2e-3)) continue;   /* where the body is: would only cover it */
      mjvGeom* g = v->scn.geoms + v->scn.ngeom++;
      *g = *src;
      g->label[0] = 0;
      toward_camera(v, g, r == K ? K + 2 : r + 1);
      if (r == K) tint(g, CURRENT_RGB, 0.35f);
      else tint(g, GHOST_RGB, 0.14f + 0.06f * (float)fmin(v->gcount[r] - 1, 4));
      if (!drawn) ghost_label(v, r, K, g);
      v->gdrawn[slot * (ng + 1) + id] = 1;
      drawn = 1;
    }
    v->ghosts_drawn += drawn;
  }
}

static void add_translucent(viewer* v, mjData* d, const float rgba[4]) {
  int before = v->scn.ngeom;
  mjv_addGeoms(v->m, d, &v->opt, NULL, mjCAT_DYNAMIC, &v->scn);
  for (int i = before; i < v->scn.ngeom; i++) {
    mjvGeom* g = v->scn.geoms + i;
    for (int c = 0; c < 3; c++) g->rgba[c] = 0.5f * g->rgba[c] + 0.5f * rgba[c];
    g->rgba[3] = rgba[3];
    g->segid = -1;
    g->label[0] = 0;
  }
}

/* contact points of the selected event, numbered as in the inset, and the impulses (yellow) */
static void add_event_markers(viewer* v, const svi_event* e) {
  double scale = 0, ext = v->m->stat.extent > 0 ? v->m->stat.extent : 1;
  int n = e->ncontact < SVI_EVENT_MAX_CONTACTS ? e->ncontact : SVI_EVENT_MAX_CONTACTS;
  for (int k = 0; k < n; k++) scale = fmax(scale, e->impulse[k][0]);
  int plotted[2] = {vw_alts_ready(v, VW_STAGE_GHOSTS) ? v->alts->axis[0] : -1,
                    vw_alts_ready(v, VW_STAGE_GHOSTS) ? v->alts->axis[1] : -1};
  for (int k = 0; k < n && !scene_full(v, 2); k++) {
    const double* p = e->pos[k];
    int axis = k == plotted[0] || k == plotted[1];
    float red[4] = {0.95f, 0.15f, 0.1f, 1}, dim[4] = {0.6f, 0.2f, 0.2f, 1}, yellow[4] = {1, 0.8f, 0.1f, 1};
    mjtNum size[3] = {0.012 * ext, 0.012 * ext, 0.012 * ext};
    mjvGeom* g = v->scn.geoms + v->scn.ngeom++;
    mjv_initGeom(g, mjGEOM_SPHERE, size, p, NULL, axis ? red : dim);
    g->category = mjCAT_DECOR;
    snprintf(g->label, sizeof(g->label), "%d", k + 1);
    double len = scale > 0 ? 0.3 * ext * e->impulse[k][0] / scale : 0;
    if (len <= 1e-9) continue;
    g = v->scn.geoms + v->scn.ngeom++;
    mjv_initGeom(g, mjGEOM_ARROW, size, p, NULL, yellow);
    mjtNum to[3] = {p[0] + len * e->normal[k][0], p[1] + len * e->normal[k][1], p[2] + len * e->normal[k][2]};
    mjv_connector(g, mjGEOM_ARROW, 0.008 * ext, p, to);
    g->category = mjCAT_DECOR;
  }
}

/* MuJoCo's scene of the shown state, plus the ghosts, markers and native run */
void vw_scene_update(viewer* v) {
  mjData* shown = vw_shown_data(v);
  mjv_updateScene(v->m, shown, &v->opt, &v->pert, &v->cam, mjCAT_ALL, &v->scn);
  v->ghosts_drawn = 0;
  const svi_event* e = vw_selected_event(v);
  if (e && vw_event_shown(v, e)) {
    if (v->ghosts_cached_for < 0) vw_ghosts_cache(v);
    if (v->show_ghosts) add_ghosts(v, shown);
    add_event_markers(v, e);
  }
  if (v->show_native && v->native_valid && !scene_full(v, v->m->ngeom) &&
      fabs(v->native->time - vw_shown_time(v)) < 0.5 * v->m->opt.timestep)
    add_translucent(v, v->native, NATIVE_RGBA);
}

/* --------------------------------------------------------------------------------------------- */
/* Picking: the ghost under a window point (GL pixels), by MuJoCo's own ray selection on each
 * ghost's pose; only geoms drawn in the last frame count.  Returns the range (nghost = the
 * current outcome), -1 for none. */
static const double* range_qpos(const viewer* v, int r) { return v->ghost_pose + (size_t)r * v->m->nq; }

static void camera_position(const viewer* v, double pos[3]) {
  for (int i = 0; i < 3; i++) pos[i] = 0.5 * (v->scn.camera[0].pos[i] + v->scn.camera[1].pos[i]);
}

int vw_ghost_at(viewer* v, double x, double y, int* geom) {
  int K = v->ghosts_cached_for, best = -1;
  const mjrRect r = v->uis.rect[3];
  if (K < 0 || !v->ghosts_drawn || r.width <= 0 || r.height <= 0) return -1;
  double cam[3], bestd = INFINITY;
  camera_position(v, cam);
  for (int k = 0; k <= K; k++) {
    if (k == K && !vw_current_ready(v)) continue;
    memcpy(v->pick->qpos, range_qpos(v, k), sizeof(mjtNum) * (size_t)v->m->nq);
    mj_kinematics(v->m, v->pick);
    mjtNum sel[3];
    int g = -1, flex = -1, skin = -1;
    int body = mjv_select(v->m, v->pick, &v->opt, (mjtNum)r.width / r.height, (x - r.left) / r.width,
                          (y - r.bottom) / r.height, &v->scn, sel, &g, &flex, &skin);
    int slot = k == K ? VW_MAX_GHOSTS : k;
    if (body <= 0 || g < 0 || !v->gdrawn[slot * (v->m->ngeom + 1) + g]) continue;
    double dist = sqrt((sel[0] - cam[0]) * (sel[0] - cam[0]) + (sel[1] - cam[1]) * (sel[1] - cam[1]) +
                       (sel[2] - cam[2]) * (sel[2] - cam[2]));
    if (dist < bestd) { bestd = dist; best = k; if (geom) *geom = g; }
  }
  return best;
}

/* world point to window pixel (GL, bottom-left origin) through the scene's camera, as mjr_render
 * sets up its frustum */
int vw_project(const viewer* v, const float p[3], double* x, double* y) {
  mjvGLCamera c = mjv_averageCamera(v->scn.camera, v->scn.camera + 1);
  const mjrRect r = v->uis.rect[3];
  double right[3] = {c.forward[1] * c.up[2] - c.forward[2] * c.up[1],
                     c.forward[2] * c.up[0] - c.forward[0] * c.up[2],
                     c.forward[0] * c.up[1] - c.forward[1] * c.up[0]};
  double rel[3] = {p[0] - c.pos[0], p[1] - c.pos[1], p[2] - c.pos[2]};
  double xc = 0, yc = 0, zc = 0;
  for (int i = 0; i < 3; i++) { xc += rel[i] * right[i]; yc += rel[i] * c.up[i]; zc += rel[i] * c.forward[i]; }
  if (zc <= 1e-9) return -1;
  double xs = c.orthographic ? xc : c.frustum_near * xc / zc, ys = c.orthographic ? yc : c.frustum_near * yc / zc;
  double hw = c.frustum_width > 0 ? c.frustum_width
                                  : 0.5 * (c.frustum_top - c.frustum_bottom) * r.width / r.height;
  *x = r.left + (xs - (c.frustum_center - hw)) / (2 * hw) * r.width;
  *y = r.bottom + (ys - c.frustum_bottom) / (c.frustum_top - c.frustum_bottom) * r.height;
  return 0;
}

/* A window point where a click picks ghost k (the current outcome for k = nghost): points over
 * its drawn geoms (centres, then towards their edges), checked by picking them back.  Returns -1
 * if every point is covered by another ghost. */
int vw_ghost_where(viewer* v, int k, double* x, double* y) {
  static const float offs[9][2] = {{0, 0}, {.8f, 0}, {-.8f, 0}, {0, .8f}, {0, -.8f},
                                   {.55f, .55f}, {-.55f, .55f}, {.55f, -.55f}, {-.55f, -.55f}};
  int K = v->ghosts_cached_for;
  if (K < 0 || k < 0 || k > K) return -1;
  if (k < K && v->gmerged[k] >= 0) k = v->gmerged[k];   /* drawn together with another */
  int slot = k == K ? VW_MAX_GHOSTS : k, ng = v->m->ngeom;
  for (int o = 0; o < 9; o++)
    for (int i = v->gstart[k]; i < v->gstart[k + 1]; i++) {
      const mjvGeom* g = v->gscn.geoms + i;
      if (g->objid < 0 || g->objid >= ng || !v->gdrawn[slot * (ng + 1) + g->objid]) continue;
      float p[3];
      for (int c = 0; c < 3; c++)   /* along the geom's local x and y axes (mat is row-major) */
        p[c] = g->pos[c] + offs[o][0] * g->size[0] * g->mat[3 * c] + offs[o][1] * g->size[1] * g->mat[3 * c + 1];
      double px, py;
      if (vw_project(v, p, &px, &py) == 0 && vw_ghost_at(v, px, py, NULL) == k) { *x = px; *y = py; return 0; }
    }
  return -1;
}

/* a click on ghost k: continue from exactly that outcome (its seed, the set's law) */
void vw_pick_ghost(viewer* v, int k) {
  int K = v->ghosts_cached_for;
  const svi_event* e = vw_selected_event(v);
  if (!e || K < 0 || k < 0 || k > K) return;
  uint64_t seed = k == K ? v->cur.seed : v->alts->ghost[k].seed;
  svi_law law = (svi_law)(k == K ? v->cur.law : v->alts->key.law);
  vw_resample(v, seed, law, "pick");
  printf("pick-ghost k=%d seed=%llu law=%s state=%016llx\n", k, (unsigned long long)seed,
         svi_law_name(law), vw_state_hash(v->m, v->d));
  fflush(stdout);
}
