/* svi_viewer.c -- watch impacts, click to resample their outcomes, see the alternatives.
 *
 *   svi-viewer MODEL.xml [--script FILE] [--width W --height H] [--ghosts K] [--bench-fps N]
 *
 * GLFW 3.3 window, MuJoCo's classic mjv/mjr rendering.  The simulation is plain mj_step, in which
 * svi.impact (declared in the model, loaded with this program's library) resolves impacts; the
 * selected impact event can be resampled with a new seed (button or key R), undone and redone,
 * shown under another law, and its alternatives are drawn as translucent ghosts and as an inset
 * plot of the post-impact set in two contact-normal velocities.  --script drives the real window
 * with a file of actions (see usage()) for tests; every state change is also printed on stdout.
 */
#define _POSIX_C_SOURCE 200809L
#include <GLFW/glfw3.h>
#include <GL/gl.h>
#include <cairo.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "svi/svi_mujoco.h"

#define MAX_GHOSTS 64
#define MAX_INSET 1024
#define MAX_UNDO 32

/* --------------------------------------------------------------------------------------------- */
typedef struct { double x, y, w, h; } rect;   /* window pixels, origin top-left */

typedef struct {
  mjData* d;              /* mj_copyData copies svi.impact's instance and log with it */
  int selected;
} undo_point;

typedef struct {
  /* model and runs */
  mjModel* m;                    /* the model, with svi.impact */
  mjModel* mn;                   /* the same model without it: native MuJoCo */
  mjData *d, *native, *scratch, *ghost, *nscratch;
  svi_instance* in;
  char path[512], message[1024];
  int has_plugin;
  /* rendering */
  GLFWwindow* win;
  mjvCamera cam;
  mjvOption opt;
  mjvScene scn;
  mjrContext con;
  int width, height;
  /* interaction */
  int paused, pause_on_impact, show_help, show_native, show_ghosts, show_inset, slow;
  int button_left, button_right, button_middle;
  double lastx, lasty;
  int selected;                  /* selected event (log index), -1 none */
  svi_law law;                   /* law used by Resample */
  uint64_t next_seed;
  /* alternatives of the selected event */
  int nghost, ghost_event;
  double* ghost_qpos;            /* nghost x nq */
  int ninset, inset_event, inset_a, inset_b;
  double inset_pt[MAX_INSET][2];
  uint64_t inset_seed[MAX_INSET];
  double inset_native[2];
  int inset_has_native;
  /* undo / redo */
  undo_point undo[MAX_UNDO], redo[MAX_UNDO];
  int nundo, nredo;
  /* scripted and measured */
  int scripted;
  double sim_per_frame;
  long long frames;
  double last_resample_ms;
  double click_t0;               /* resample start: measured to the first frame that shows it */
} viewer;

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}

static const char* law_name(svi_law l) { return svi_law_name(l); }

/* the native run at d's state (every state component but the plugin's) */
static void sync_native(viewer* v, mjData* dst) {
  const int sig = mjSTATE_INTEGRATION & ~mjSTATE_PLUGIN;
  mjtNum* st = malloc(sizeof(mjtNum) * (size_t)mj_stateSize(v->m, sig));
  if (!st) return;
  mj_getState(v->m, v->d, st, sig);
  mj_setState(v->mn, dst, st, sig);
  mj_forward(v->mn, dst);
  free(st);
}

/* FNV-1a over qpos, qvel, time: "the same state" in test output */
static unsigned long long state_hash(const mjModel* m, const mjData* d) {
  unsigned long long h = 1469598103934665603ULL;
  const unsigned char* p[3] = {(const unsigned char*)d->qpos, (const unsigned char*)d->qvel,
                               (const unsigned char*)&d->time};
  size_t n[3] = {sizeof(mjtNum) * m->nq, sizeof(mjtNum) * m->nv, sizeof(mjtNum)};
  for (int k = 0; k < 3; k++)
    for (size_t i = 0; i < n[k]; i++) { h ^= p[k][i]; h *= 1099511628211ULL; }
  return h;
}

/* --------------------------------------------------------------------------------------------- */
/* Layout (window pixels): buttons top-right, timeline along the bottom, inset bottom-right. */
enum { B_RESAMPLE, B_UNDO, B_REDO, B_LAW, B_GHOSTS, B_NATIVE, B_PAUSEIMPACT, B_PLAY, NBUTTONS };
static const char* button_label(const viewer* v, int b, char* buf, size_t n) {
  switch (b) {
  case B_RESAMPLE: return "Resample (R)";
  case B_UNDO: snprintf(buf, n, "Undo (Z) [%d]", v->nundo); return buf;
  case B_REDO: snprintf(buf, n, "Redo (Y) [%d]", v->nredo); return buf;
  case B_LAW: snprintf(buf, n, "Law: %s (L)", law_name(v->law)); return buf;
  case B_GHOSTS: return v->show_ghosts ? "Ghosts: on (G)" : "Ghosts: off (G)";
  case B_NATIVE: return v->show_native ? "Native: on (N)" : "Native: off (N)";
  case B_PAUSEIMPACT: return v->pause_on_impact ? "Pause on impact: on (I)" : "Pause on impact: off (I)";
  default: return v->paused ? "Play (Space)" : "Pause (Space)";
  }
}

static rect button_rect(const viewer* v, int b) {
  rect r = {v->width - 250, 10 + 34.0 * b, 240, 28};
  return r;
}

static rect timeline_rect(const viewer* v) { rect r = {10, v->height - 40, v->width - 20, 28}; return r; }

static rect inset_rect(const viewer* v) {
  double s = fmin(0.36 * v->height, 300);
  rect r = {v->width - s - 10, v->height - 75 - s, s, s};
  return r;
}

static int inside(rect r, double x, double y) { return x >= r.x && x <= r.x + r.w && y >= r.y && y <= r.y + r.h; }

/* mjr uses OpenGL viewports: origin bottom-left */
static mjrRect gl_rect(const viewer* v, rect r) {
  mjrRect g = {(int)r.x, (int)(v->height - r.y - r.h), (int)r.w, (int)r.h};
  return g;
}

/* --------------------------------------------------------------------------------------------- */
static void record_undo(viewer* v, undo_point* stack, int* n) {
  if (*n == MAX_UNDO) {   /* drop the oldest */
    mj_deleteData(stack[0].d);
    memmove(stack, stack + 1, sizeof(undo_point) * (MAX_UNDO - 1));
    (*n)--;
  }
  undo_point* u = &stack[(*n)++];
  u->d = mj_copyData(NULL, v->m, v->d);
  u->selected = v->selected;
}

static void apply_undo_point(viewer* v, undo_point* u) {
  mj_copyData(v->d, v->m, u->d);
  v->selected = u->selected;
  mj_deleteData(u->d);
  mj_forward(v->m, v->d);
  v->ghost_event = v->inset_event = -1;
}

static void clear_redo(viewer* v) {
  for (int i = 0; i < v->nredo; i++) mj_deleteData(v->redo[i].d);
  v->nredo = 0;
}

/* --------------------------------------------------------------------------------------------- */
static void print_event(const char* what, viewer* v, const svi_event* e) {
  printf("%s event=%d time=%.4f law=%s seed=%llu lcps=%d ke=%.6g->%.6g class=%s vn=(", what,
         v->selected, e->time, law_name(e->law), (unsigned long long)e->seed, e->lcps, e->ke_before,
         e->ke_after, e->cls);
  for (int k = 0; k < e->ncontact && k < SVI_EVENT_MAX_CONTACTS; k++) printf("%s%.6f", k ? "," : "", e->vn_after[k]);
  printf(") state=%016llx\n", state_hash(v->m, v->d));
  fflush(stdout);
}

/* Re-run the selected impact with a new seed (or the law selector), continue from it. */
static void resample(viewer* v, uint64_t seed, svi_law law) {
  if (!v->in || v->selected < 0 || v->selected >= svi_event_count(v->in)) {
    snprintf(v->message, sizeof(v->message), "no impact event selected");
    return;
  }
  double t0 = now_ms();
  v->click_t0 = t0;
  record_undo(v, v->undo, &v->nundo);
  clear_redo(v);
  int sel = v->selected;
  int st = svi_event_resample(v->in, v->m, v->d, sel, seed, law);
  v->last_resample_ms = now_ms() - t0;
  v->ghost_event = -1;   /* ghosts follow the event; the inset keeps its set, marks the new outcome */
  if (st != SVI_OK || svi_event_count(v->in) == 0) {
    /* nothing logged (should not happen: the native law logs the event it leaves to MuJoCo) */
    v->selected = svi_event_count(v->in) - 1;
    v->inset_event = -1;
    printf("resample law=%s: no event logged (MuJoCo resolves it) state=%016llx\n", law_name(law),
           state_hash(v->m, v->d));
    fflush(stdout);
    return;
  }
  v->selected = svi_event_count(v->in) - 1;
  print_event("resample", v, svi_event_get(v->in, v->selected));
  printf("resample_ms=%.2f\n", v->last_resample_ms);
  fflush(stdout);
}

/* Undo and redo move one step through the history: the present goes onto the other stack. */
static void history_move(viewer* v, undo_point* from, int* nfrom, undo_point* to, int* nto,
                         const char* what) {
  if (*nfrom == 0) return;
  record_undo(v, to, nto);
  apply_undo_point(v, &from[--(*nfrom)]);
  printf("%s selected=%d state=%016llx\n", what, v->selected, state_hash(v->m, v->d));
  fflush(stdout);
}

static void undo(viewer* v) { history_move(v, v->undo, &v->nundo, v->redo, &v->nredo, "undo"); }
static void redo(viewer* v) { history_move(v, v->redo, &v->nredo, v->undo, &v->nundo, "redo"); }

/* --------------------------------------------------------------------------------------------- */
/* K alternatives of the selected event: the post-impact state for seeds base..base+K-1, rolled out
 * for a short horizon; and the inset set in the two fastest-approaching contacts' velocities. */
static void compute_alternatives(viewer* v) {
  if (!v->in || v->selected < 0) return;
  const svi_event* e = svi_event_get(v->in, v->selected);
  if (!e) return;
  int nq = v->m->nq, nv = v->m->nv;
  double* q = malloc(sizeof(double) * nv);
  if (v->ghost_event != v->selected && v->show_ghosts && v->nghost > 0) {
    for (int k = 0; k < v->nghost; k++) {
      svi_event_preview(v->in, v->m, v->ghost, v->selected, 1000 + (uint64_t)k, SVI_LAW_SETVALUED, q);
      double t_end = v->ghost->time + 0.6;
      while (v->ghost->time < t_end) mj_step(v->m, v->ghost);   /* short roll-out, svi.impact on */
      memcpy(v->ghost_qpos + (size_t)k * nq, v->ghost->qpos, sizeof(mjtNum) * nq);
    }
    v->ghost_event = v->selected;
  }
  if (v->inset_event != v->selected && v->show_inset) {
    /* axes: the two fastest-approaching contacts of the event */
    int a = 0, b = e->ncontact > 1 ? 1 : 0;
    for (int k = 0; k < e->ncontact && k < SVI_EVENT_MAX_CONTACTS; k++)
      if (e->vn_before[k] < e->vn_before[a]) a = k;
    b = a == 0 ? (e->ncontact > 1 ? 1 : 0) : 0;
    for (int k = 0; k < e->ncontact && k < SVI_EVENT_MAX_CONTACTS; k++)
      if (k != a && e->vn_before[k] < e->vn_before[b]) b = k;
    if (a > b) { int t = a; a = b; b = t; }
    v->inset_a = a;
    v->inset_b = b;
    int n = 0;
    for (int k = 0; k < v->ninset && n < MAX_INSET; k++) {
      uint64_t seed = 5000 + (uint64_t)k;
      if (svi_event_preview(v->in, v->m, v->scratch, v->selected, seed, SVI_LAW_SETVALUED, q) != SVI_OK) continue;
      const svi_event* p = svi_last_preview(v->in);
      v->inset_pt[n][0] = p->vn_after[a];
      v->inset_pt[n][1] = p->vn_after[b];
      v->inset_seed[n] = seed;
      n++;
    }
    v->ninset = n;
    /* native MuJoCo from the same pre-impact state */
    svi_problem_def def;
    v->inset_has_native = 0;
    int nc = svi_event_problem(v->in, v->m, v->scratch, v->selected, &def);
    if (nc > a && nc > b) {
      double* jn = malloc(sizeof(double) * (size_t)nc * nv);
      memcpy(jn, def.Jn, sizeof(double) * (size_t)nc * nv);
      svi_problem_def frozen = def;
      frozen.Jn = jn;
      double* vn = malloc(sizeof(double) * (size_t)nc);
      if (svi_event_load_native(v->in, v->m, v->selected, v->mn, v->nscratch) == SVI_OK &&
          svi_native_outcome(v->mn, v->nscratch, &frozen, 0.1, vn) > 0) {
        v->inset_native[0] = vn[a];
        v->inset_native[1] = vn[b];
        v->inset_has_native = 1;
      }
      free(vn);
      free(jn);
    }
    v->inset_event = v->selected;
    /* distinct plotted pixels: what "as many points as were sampled" can mean on screen */
    printf("inset event=%d points=%d\n", v->selected, v->ninset);
    fflush(stdout);
  }
  free(q);
}

/* inset data range and mapping */
static void inset_bounds(const viewer* v, double* lo, double* hi) {
  lo[0] = lo[1] = INFINITY;
  hi[0] = hi[1] = -INFINITY;
  for (int k = 0; k < v->ninset; k++)
    for (int j = 0; j < 2; j++) { lo[j] = fmin(lo[j], v->inset_pt[k][j]); hi[j] = fmax(hi[j], v->inset_pt[k][j]); }
  for (int j = 0; j < 2; j++) {
    lo[j] = fmin(lo[j], 0); hi[j] = fmax(hi[j], 0);
    double pad = 0.08 * fmax(hi[j] - lo[j], 1e-6);
    lo[j] -= pad; hi[j] += pad;
  }
}

static void inset_to_pixel(const viewer* v, double x, double y, double* px, double* py) {
  double lo[2], hi[2];
  inset_bounds(v, lo, hi);
  rect r = inset_rect(v);
  *px = r.x + 6 + (r.w - 12) * (x - lo[0]) / (hi[0] - lo[0]);
  *py = r.y + 6 + (r.h - 12) * (1 - (y - lo[1]) / (hi[1] - lo[1]));
}

/* pick the inset point nearest to a click: continue from that outcome */
static void pick_inset(viewer* v, double x, double y) {
  int best = -1;
  double bd = 1e9;
  for (int k = 0; k < v->ninset; k++) {
    double px, py;
    inset_to_pixel(v, v->inset_pt[k][0], v->inset_pt[k][1], &px, &py);
    double dd = hypot(px - x, py - y);
    if (dd < bd) { bd = dd; best = k; }
  }
  if (best < 0 || bd > 12) return;
  double pa = v->inset_pt[best][0], pb = v->inset_pt[best][1];
  int a = v->inset_a, b = v->inset_b;
  resample(v, v->inset_seed[best], SVI_LAW_SETVALUED);
  const svi_event* e = svi_event_get(v->in, v->selected);
  printf("pick k=%d seed=%llu point=(%.6f,%.6f) state_vn=(%.6f,%.6f)\n", best,
         (unsigned long long)v->inset_seed[best], pa, pb, e->vn_after[a], e->vn_after[b]);
  fflush(stdout);
  v->inset_event = v->selected;   /* same set: keep it (the event index in the log changed) */
}

/* --------------------------------------------------------------------------------------------- */
static void select_event(viewer* v, int i) {
  if (!v->in || i < 0 || i >= svi_event_count(v->in)) return;
  v->selected = i;
  print_event("select", v, svi_event_get(v->in, i));
}

static void on_impact(viewer* v) {
  v->selected = svi_event_count(v->in) - 1;
  if (v->pause_on_impact) v->paused = 1;
}

/* one physics step of both runs */
static void step(viewer* v) {
  long long ev = v->in ? svi_instance_counters(v->in).events : 0;
  mj_step(v->m, v->d);
  if (v->in && svi_instance_counters(v->in).events > ev) on_impact(v);
  if (v->show_native) mj_step(v->mn, v->native);
}

static void reset(viewer* v) {
  int k = mj_name2id(v->m, mjOBJ_KEY, "impact");
  if (k >= 0) mj_resetDataKeyframe(v->m, v->d, k); else mj_resetData(v->m, v->d);
  v->in = svi_instance_of(v->m, v->d);
  if (v->in) svi_set_log_capacity(v->in, v->m, 256);
  mj_forward(v->m, v->d);
  sync_native(v, v->native);
  v->selected = -1;
  v->ghost_event = v->inset_event = -1;
  for (int i = 0; i < v->nundo; i++) mj_deleteData(v->undo[i].d);
  v->nundo = 0;
  clear_redo(v);
}

/* --------------------------------------------------------------------------------------------- */
static void handle_key(viewer* v, int key, int mods) {
  switch (key) {
  case GLFW_KEY_SPACE: v->paused = !v->paused; break;
  case GLFW_KEY_RIGHT: if (v->paused) step(v); break;
  case GLFW_KEY_BACKSPACE: reset(v); break;
  case GLFW_KEY_R: resample(v, v->next_seed++, v->law); break;
  case GLFW_KEY_Z: undo(v); break;
  case GLFW_KEY_Y: redo(v); break;
  case GLFW_KEY_L: v->law = (svi_law)((v->law + 1) % SVI_NLAW); break;
  case GLFW_KEY_1: case GLFW_KEY_2: case GLFW_KEY_3: case GLFW_KEY_4: case GLFW_KEY_5:
    v->law = (svi_law)(key - GLFW_KEY_1);
    resample(v, v->next_seed++, v->law);
    break;
  case GLFW_KEY_G: v->show_ghosts = !v->show_ghosts; v->ghost_event = -1; break;
  case GLFW_KEY_N:
    v->show_native = !v->show_native;
    if (v->show_native) sync_native(v, v->native);
    break;
  case GLFW_KEY_I: v->pause_on_impact = !v->pause_on_impact; break;
  case GLFW_KEY_P: v->show_inset = !v->show_inset; v->inset_event = -1; break;
  case GLFW_KEY_T: v->opt.flags[mjVIS_TRANSPARENT] = !v->opt.flags[mjVIS_TRANSPARENT]; break;
  case GLFW_KEY_S: v->slow = v->slow == 1 ? 4 : v->slow == 4 ? 16 : 1; break;
  case GLFW_KEY_LEFT_BRACKET: select_event(v, v->selected - 1); break;
  case GLFW_KEY_RIGHT_BRACKET: select_event(v, v->selected + 1); break;
  case GLFW_KEY_F1: case GLFW_KEY_H: v->show_help = !v->show_help; break;
  case GLFW_KEY_ESCAPE: glfwSetWindowShouldClose(v->win, 1); break;
  default: break;
  }
  (void)mods;
}

static void handle_click(viewer* v, double x, double y) {
  for (int b = 0; b < NBUTTONS; b++) {
    if (!inside(button_rect(v, b), x, y)) continue;
    switch (b) {
    case B_RESAMPLE: printf("click Resample\n"); resample(v, v->next_seed++, v->law); break;
    case B_UNDO: undo(v); break;
    case B_REDO: redo(v); break;
    case B_LAW: v->law = (svi_law)((v->law + 1) % SVI_NLAW); break;
    case B_GHOSTS: handle_key(v, GLFW_KEY_G, 0); break;
    case B_NATIVE: handle_key(v, GLFW_KEY_N, 0); break;
    case B_PAUSEIMPACT: handle_key(v, GLFW_KEY_I, 0); break;
    default: v->paused = !v->paused; break;
    }
    return;
  }
  if (v->show_inset && v->ninset > 0 && inside(inset_rect(v), x, y)) { pick_inset(v, x, y); return; }
  rect t = timeline_rect(v);
  if (inside(t, x, y) && v->in && svi_event_count(v->in) > 0) {
    double tmax = fmax(v->d->time, 1e-9), best = 1e9;
    int bi = -1;
    for (int i = 0; i < svi_event_count(v->in); i++) {
      double px = t.x + t.w * svi_event_get(v->in, i)->time / tmax;
      if (fabs(px - x) < best) { best = fabs(px - x); bi = i; }
    }
    if (bi >= 0 && best < 15) select_event(v, bi);
  }
}

/* GLFW callbacks */
static viewer* the_viewer;

static void key_cb(GLFWwindow* w, int key, int sc, int act, int mods) {
  (void)w; (void)sc;
  if (act == GLFW_RELEASE) return;
  handle_key(the_viewer, key, mods);
}

static void button_cb(GLFWwindow* w, int button, int act, int mods) {
  viewer* v = the_viewer;
  (void)mods;
  v->button_left = glfwGetMouseButton(w, GLFW_MOUSE_BUTTON_LEFT) == GLFW_PRESS;
  v->button_right = glfwGetMouseButton(w, GLFW_MOUSE_BUTTON_RIGHT) == GLFW_PRESS;
  v->button_middle = glfwGetMouseButton(w, GLFW_MOUSE_BUTTON_MIDDLE) == GLFW_PRESS;
  glfwGetCursorPos(w, &v->lastx, &v->lasty);
  if (button == GLFW_MOUSE_BUTTON_LEFT && act == GLFW_PRESS) handle_click(v, v->lastx, v->lasty);
}

static void move_cb(GLFWwindow* w, double x, double y) {
  viewer* v = the_viewer;
  if (!v->button_left && !v->button_right && !v->button_middle) { v->lastx = x; v->lasty = y; return; }
  double dx = x - v->lastx, dy = y - v->lasty;
  v->lastx = x;
  v->lasty = y;
  int shift = glfwGetKey(w, GLFW_KEY_LEFT_SHIFT) == GLFW_PRESS || glfwGetKey(w, GLFW_KEY_RIGHT_SHIFT) == GLFW_PRESS;
  int action = v->button_right ? (shift ? mjMOUSE_MOVE_H : mjMOUSE_MOVE_V)
             : v->button_left ? (shift ? mjMOUSE_ROTATE_H : mjMOUSE_ROTATE_V) : mjMOUSE_ZOOM;
  mjv_moveCamera(v->m, action, dx / v->height, dy / v->height, &v->cam);
}

static void scroll_cb(GLFWwindow* w, double xo, double yo) {
  (void)w; (void)xo;
  mjv_moveCamera(the_viewer->m, mjMOUSE_ZOOM, 0, -0.05 * yo, &the_viewer->cam);
}

/* --------------------------------------------------------------------------------------------- */
/* Drawing: the scene with event arrows, ghosts and the native overlay; then the 2-D overlays. */
static void add_translucent(viewer* v, mjData* d, const float tint[4]) {
  int before = v->scn.ngeom;
  mjv_addGeoms(v->m, d, &v->opt, NULL, mjCAT_DYNAMIC, &v->scn);
  for (int i = before; i < v->scn.ngeom; i++) {
    mjvGeom* g = v->scn.geoms + i;
    for (int c = 0; c < 3; c++) g->rgba[c] = 0.5f * g->rgba[c] + 0.5f * tint[c];
    g->rgba[3] = tint[3];
    g->segid = -1;
  }
}

static void add_event_arrows(viewer* v) {
  if (!v->in || v->selected < 0) return;
  const svi_event* e = svi_event_get(v->in, v->selected);
  if (!e) return;
  double scale = 0;
  for (int k = 0; k < e->ncontact && k < SVI_EVENT_MAX_CONTACTS; k++) scale = fmax(scale, e->impulse[k][0]);
  double ext = v->m->stat.extent > 0 ? v->m->stat.extent : 1;
  for (int k = 0; k < e->ncontact && k < SVI_EVENT_MAX_CONTACTS; k++) {
    if (v->scn.ngeom + 2 > v->scn.maxgeom) break;
    const double* p = e->pos[k];
    float red[4] = {0.9f, 0.1f, 0.1f, 1}, yellow[4] = {1, 0.8f, 0.1f, 1};
    mjvGeom* g = v->scn.geoms + v->scn.ngeom++;
    mjtNum size[3] = {0.015 * ext, 0.015 * ext, 0.015 * ext};
    mjv_initGeom(g, mjGEOM_SPHERE, size, p, NULL, red);
    g->category = mjCAT_DECOR;
    double len = scale > 0 ? 0.3 * ext * e->impulse[k][0] / scale : 0;
    if (len <= 1e-9) continue;
    g = v->scn.geoms + v->scn.ngeom++;
    mjv_initGeom(g, mjGEOM_ARROW, size, p, NULL, yellow);
    mjtNum to[3] = {p[0] + len * e->normal[k][0], p[1] + len * e->normal[k][1], p[2] + len * e->normal[k][2]};
    mjv_connector(g, mjGEOM_ARROW, 0.01 * ext, p, to);
    g->category = mjCAT_DECOR;
  }
}

/* mjr_text places text relative to the current GL viewport, which mjr_rectangle leaves at its own
 * rectangle: reset it to the whole window first. */
static void draw_text(viewer* v, const char* s, double x, double y, float r, float g, float b) {
  glViewport(0, 0, v->width, v->height);
  mjr_text(mjFONT_NORMAL, s, &v->con, (float)(x / v->width), (float)(1 - y / v->height), r, g, b);
}

static void draw_buttons(viewer* v) {
  char buf[96];
  for (int b = 0; b < NBUTTONS; b++) {
    rect r = button_rect(v, b);
    float c = b == B_RESAMPLE ? 0.25f : 0.15f;
    mjr_rectangle(gl_rect(v, r), c, c + (b == B_RESAMPLE ? 0.2f : 0.05f), c + 0.1f, 0.9f);
    draw_text(v, button_label(v, b, buf, sizeof(buf)), r.x + 10, r.y + 23, 1, 1, 1);
  }
}

static void draw_timeline(viewer* v) {
  rect t = timeline_rect(v);
  mjr_rectangle(gl_rect(v, t), 0.1f, 0.1f, 0.12f, 0.85f);
  if (!v->in) return;
  double tmax = fmax(v->d->time, 1e-9);
  for (int i = 0; i < svi_event_count(v->in); i++) {
    const svi_event* e = svi_event_get(v->in, i);
    double px = t.x + t.w * e->time / tmax;
    int sel = i == v->selected;
    rect mk = {px - (sel ? 3 : 1.5), t.y + 3, sel ? 6 : 3, t.h - 6};
    mjr_rectangle(gl_rect(v, mk), sel ? 1.0f : 0.9f, sel ? 0.8f : 0.4f, sel ? 0.1f : 0.1f, 1);
  }
}

static void draw_inset(viewer* v) {
  if (!v->show_inset || v->ninset == 0) return;
  rect r = inset_rect(v);
  mjr_rectangle(gl_rect(v, r), 1, 1, 1, 0.92f);
  double lo[2], hi[2], px, py;
  inset_bounds(v, lo, hi);
  /* separation lines J_n v = 0 */
  inset_to_pixel(v, 0, 0, &px, &py);
  rect hx = {r.x + 6, py, r.w - 12, 1}, vy = {px, r.y + 6, 1, r.h - 12};
  mjr_rectangle(gl_rect(v, hx), 0.85f, 0.85f, 0.85f, 1);
  mjr_rectangle(gl_rect(v, vy), 0.85f, 0.85f, 0.85f, 1);
  for (int k = 0; k < v->ninset; k++) {
    inset_to_pixel(v, v->inset_pt[k][0], v->inset_pt[k][1], &px, &py);
    rect d = {px - 2, py - 2, 4, 4};
    mjr_rectangle(gl_rect(v, d), 0.35f, 0.35f, 0.35f, 1);
  }
  if (v->inset_has_native) {
    inset_to_pixel(v, v->inset_native[0], v->inset_native[1], &px, &py);
    rect d = {px - 4, py - 4, 8, 8};
    mjr_rectangle(gl_rect(v, d), 0.1f, 0.6f, 0.2f, 1);
  }
  const svi_event* e = v->in && v->selected >= 0 ? svi_event_get(v->in, v->selected) : NULL;
  if (e && v->inset_a < e->ncontact && v->inset_b < e->ncontact) {
    inset_to_pixel(v, e->vn_after[v->inset_a], e->vn_after[v->inset_b], &px, &py);
    rect d = {px - 5, py - 5, 10, 10};
    mjr_rectangle(gl_rect(v, d), 0.9f, 0.1f, 0.1f, 1);
  }
  char buf[128];
  snprintf(buf, sizeof(buf), "Post-impact set (%d)", v->ninset);
  draw_text(v, buf, r.x, r.y - 30, 1, 1, 1);
  draw_text(v, "red: now  green: native", r.x, r.y - 10, 0.8f, 0.8f, 0.8f);
  snprintf(buf, sizeof(buf), "x: v_n %d  y: v_n %d  (m/s)", v->inset_a, v->inset_b);
  draw_text(v, buf, r.x, r.y + r.h + 18, 0.8f, 0.8f, 0.8f);
}

static void draw_hud(viewer* v, double fps) {
  char l2[2048] = "", sel[64] = "none";
  const char* l1 = "Time\nLaw\nSeed\nEvents\nSelected\nLCPs\nKE before\nKE after\nClass\nSpeed\nFPS";
  const svi_event* e = v->in && v->selected >= 0 ? svi_event_get(v->in, v->selected) : NULL;
  /* law and seed: the selected event's own, else what the next impact will use */
  const char* law = e ? law_name(e->law) : v->has_plugin ? law_name(v->law) : "native (no svi.impact)";
  unsigned long long seed = e ? e->seed : v->has_plugin ? svi_instance_config(v->in)->seed : 0;
  if (e) snprintf(sel, sizeof(sel), "#%d at %.4f s", v->selected, e->time);
  snprintf(l2, sizeof(l2), "%.3f s%s\n%s\n%llu\n%d\n%s\n%d\n%.5g J\n%.5g J\n%s\n1/%d\n%.0f",
           v->d->time, v->paused ? " (paused)" : "", law, seed, v->in ? svi_event_count(v->in) : 0,
           sel, e ? e->lcps : 0, e ? e->ke_before : 0, e ? e->ke_after : 0, e ? e->cls : "-",
           v->slow, fps);
  mjrRect full = {0, 0, v->width, v->height};
  if (!v->show_help) mjr_overlay(mjFONT_NORMAL, mjGRID_TOPLEFT, full, l1, l2, &v->con);
  if (v->show_help) {
    mjr_overlay(mjFONT_NORMAL, mjGRID_BOTTOMLEFT, full,
                "Space\nRight\nBackspace\nR / click Resample\nZ / Y\nL, 1-5\nG\nN\nI\nP\nT\nS\n[ / ]\nclick timeline\nclick inset\nleft drag\nright drag\nscroll\nF1 / H\nEsc",
                "play / pause\nsingle step (paused)\nreset\nresample the selected impact\nundo / redo\nlaw selector (1-5 resample now)\nghosts of alternatives\nnative MuJoCo overlay\npause on impact\ninset plot\ntransparent bodies (see contacts)\nslow motion 1, 1/4, 1/16\nprevious / next event\nselect an event\npick that outcome\nrotate camera\npan camera (shift: horizontal)\nzoom\nthis help\nquit",
                &v->con);
  } else {
    mjr_overlay(mjFONT_NORMAL, mjGRID_BOTTOMLEFT, full, "F1", "help", &v->con);
  }
  if (v->message[0]) {
    mjr_overlay(mjFONT_BIG, mjGRID_TOPLEFT, (mjrRect){0, 0, v->width, v->height - 260}, v->message, NULL, &v->con);
  }
}

static void render(viewer* v, double fps) {
  glfwGetFramebufferSize(v->win, &v->width, &v->height);
  mjrRect viewport = {0, 0, v->width, v->height};
  mjv_updateScene(v->m, v->d, &v->opt, NULL, &v->cam, mjCAT_ALL, &v->scn);
  if (v->show_ghosts && v->ghost_event == v->selected && v->selected >= 0) {
    float tint[4] = {0.3f, 0.6f, 1.0f, 0.22f};
    double ext = v->m->stat.extent > 0 ? v->m->stat.extent : 1;
    for (int k = 0; k < v->nghost; k++) {
      if (v->scn.ngeom + v->m->ngeom > v->scn.maxgeom) break;
      const double* gq = v->ghost_qpos + (size_t)k * v->m->nq;
      double dq = 0;
      for (int j = 0; j < v->m->nq; j++) dq = fmax(dq, fabs(gq[j] - v->d->qpos[j]));
      if (dq < 2e-3 * ext) continue;   /* coincides with the body: would only z-fight */
      memcpy(v->ghost->qpos, gq, sizeof(mjtNum) * v->m->nq);
      mj_kinematics(v->m, v->ghost);
      mj_comPos(v->m, v->ghost);
      mj_camlight(v->m, v->ghost);
      add_translucent(v, v->ghost, tint);
    }
  }
  if (v->show_native) {
    float tint[4] = {0.1f, 0.9f, 0.3f, 0.35f};
    add_translucent(v, v->native, tint);   /* same geoms and layout as v->m */
  }
  add_event_arrows(v);
  mjr_render(viewport, &v->scn, &v->con);
  draw_buttons(v);
  draw_timeline(v);
  draw_inset(v);
  draw_hud(v, fps);
}

/* --------------------------------------------------------------------------------------------- */
static int screenshot(viewer* v, const char* path) {
  int w = v->width, h = v->height;
  unsigned char* rgb = malloc((size_t)w * h * 3);
  if (!rgb) return -1;
  mjr_setBuffer(mjFB_WINDOW, &v->con);
  mjr_readPixels(rgb, NULL, (mjrRect){0, 0, w, h}, &v->con);
  cairo_surface_t* s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, w, h);
  unsigned char* px = cairo_image_surface_get_data(s);
  int stride = cairo_image_surface_get_stride(s);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      const unsigned char* src = rgb + ((size_t)(h - 1 - y) * w + x) * 3;   /* flip: GL is bottom-up */
      uint32_t* dst = (uint32_t*)(px + (size_t)y * stride) + x;
      *dst = 0xff000000u | ((uint32_t)src[0] << 16) | ((uint32_t)src[1] << 8) | src[2];
    }
  cairo_surface_mark_dirty(s);
  int rc = cairo_surface_write_to_png(s, path) == CAIRO_STATUS_SUCCESS ? 0 : -1;
  cairo_surface_destroy(s);
  free(rgb);
  printf("screenshot %s %s\n", path, rc == 0 ? "ok" : "FAILED");
  fflush(stdout);
  return rc;
}

/* --------------------------------------------------------------------------------------------- */
/* Scripted mode: one action per line (# comments):
 *   frames N        render N frames (the simulation advances sim_per_frame each while playing)
 *   wait S          advance S simulated seconds (rendering as it goes)
 *   sleep MS        render for MS milliseconds of wall time (for outside input, e.g. xdotool)
 *   key NAME        space right backspace r z y l 1-5 g n i p s [ ] f1 h
 *   click X Y       a left click at window pixel (X, Y)
 *   click-button NAME  resample undo redo law ghosts native pauseimpact play
 *   pick K          click on inset point K
 *   select I        select event I
 *   seed S          the next Resample uses seed S
 *   screenshot PATH
 *   print           print the state line
 *   fps N           render N frames playing, print frames per second
 *   quit
 */
static int keycode(const char* s) {
  if (!strcmp(s, "space")) return GLFW_KEY_SPACE;
  if (!strcmp(s, "right")) return GLFW_KEY_RIGHT;
  if (!strcmp(s, "backspace")) return GLFW_KEY_BACKSPACE;
  if (!strcmp(s, "[")) return GLFW_KEY_LEFT_BRACKET;
  if (!strcmp(s, "]")) return GLFW_KEY_RIGHT_BRACKET;
  if (!strcmp(s, "f1")) return GLFW_KEY_F1;
  if (strlen(s) == 1 && s[0] >= 'a' && s[0] <= 'z') return GLFW_KEY_A + (s[0] - 'a');
  if (strlen(s) == 1 && s[0] >= '0' && s[0] <= '9') return GLFW_KEY_0 + (s[0] - '0');
  return -1;
}

static void frame(viewer* v, double fps);

static int run_script_line(viewer* v, char* line) {
  char cmd[64] = "", a1[512] = "", a2[64] = "";
  if (sscanf(line, "%63s %511s %63s", cmd, a1, a2) < 1 || cmd[0] == '#') return 1;
  if (!strcmp(cmd, "frames")) { int n = atoi(a1); for (int i = 0; i < n; i++) frame(v, 0); }
  else if (!strcmp(cmd, "wait")) { double t = v->d->time + atof(a1); int was = v->paused; v->paused = 0; while (v->d->time < t && !glfwWindowShouldClose(v->win)) frame(v, 0); v->paused = was; }
  else if (!strcmp(cmd, "sleep")) { double t0 = now_ms(), ms = atof(a1); while (now_ms() - t0 < ms && !glfwWindowShouldClose(v->win)) { frame(v, 0); glfwPollEvents(); } }
  else if (!strcmp(cmd, "key")) { int k = keycode(a1); if (k < 0) fprintf(stderr, "script: unknown key '%s'\n", a1); else handle_key(v, k, 0); }
  else if (!strcmp(cmd, "click")) handle_click(v, atof(a1), atof(a2));
  else if (!strcmp(cmd, "click-button")) {
    const char* names[NBUTTONS] = {"resample", "undo", "redo", "law", "ghosts", "native", "pauseimpact", "play"};
    for (int b = 0; b < NBUTTONS; b++)
      if (!strcmp(a1, names[b])) { rect r = button_rect(v, b); handle_click(v, r.x + r.w / 2, r.y + r.h / 2); }
  } else if (!strcmp(cmd, "pick")) {
    int k = atoi(a1);
    compute_alternatives(v);
    if (k >= 0 && k < v->ninset) { double px, py; inset_to_pixel(v, v->inset_pt[k][0], v->inset_pt[k][1], &px, &py); pick_inset(v, px, py); }
  } else if (!strcmp(cmd, "select")) select_event(v, atoi(a1));
  else if (!strcmp(cmd, "seed")) v->next_seed = strtoull(a1, NULL, 10);
  else if (!strcmp(cmd, "screenshot")) { frame(v, 0); screenshot(v, a1); }
  else if (!strcmp(cmd, "print")) {
    printf("state time=%.6f events=%d selected=%d state=%016llx\n", v->d->time, v->in ? svi_event_count(v->in) : 0,
           v->selected, state_hash(v->m, v->d));
    fflush(stdout);
  } else if (!strcmp(cmd, "fps")) {
    int n = atoi(a1), was = v->paused;
    v->paused = 0;
    double t0 = now_ms();
    for (int i = 0; i < n; i++) frame(v, 0);
    double fps = n / ((now_ms() - t0) / 1e3);
    printf("fps frames=%d fps=%.1f ghosts=%d\n", n, fps, v->show_ghosts ? v->nghost : 0);
    fflush(stdout);
    v->paused = was;
  } else if (!strcmp(cmd, "quit")) return 0;
  else fprintf(stderr, "script: unknown action '%s'\n", cmd);
  return 1;
}

/* one frame: advance the simulation (fixed sim time per frame in scripts, wall time otherwise),
 * recompute alternatives if the selection changed, draw, swap */
static double frame_wall_prev;

static void frame(viewer* v, double fps) {
  if (!v->paused) {
    double dt_sim = v->sim_per_frame / v->slow;
    if (!v->scripted) {
      double t = now_ms();
      dt_sim = frame_wall_prev > 0 ? fmin((t - frame_wall_prev) / 1e3, 0.05) / v->slow : 0;
      frame_wall_prev = t;
    }
    double t_end = v->d->time + dt_sim;
    while (v->d->time < t_end - 1e-12 && !v->paused) step(v);
  } else {
    frame_wall_prev = 0;
  }
  compute_alternatives(v);
  render(v, fps);
  glfwSwapBuffers(v->win);
  v->frames++;
  if (v->click_t0 > 0) {   /* the new outcome, its ghosts and its inset are on screen now */
    glFinish();
    printf("resample_to_frame_ms=%.1f\n", now_ms() - v->click_t0);
    fflush(stdout);
    v->click_t0 = 0;
  }
}

static void usage(FILE* f) {
  fprintf(f,
    "usage: svi-viewer MODEL.xml [options]\n"
    "  --script FILE     drive the window with a file of actions (see the source header)\n"
    "  --width W --height H   window size (default 1280 x 800)\n"
    "  --ghosts K        alternatives drawn as ghosts (default 16, max %d)\n"
    "  --inset N         samples in the inset plot (default 256, max %d)\n"
    "  --paused          start paused\n"
    "  --quality         multisampling, shadows, reflections (off by default: slow in software GL)\n"
    "Press F1 in the window for the controls.\n", MAX_GHOSTS, MAX_INSET);
}

int main(int argc, char** argv) {
  static viewer V;
  viewer* v = &V;
  the_viewer = v;
  const char* script = NULL;
  int w = 1280, h = 800, start_paused = 0, quality = 0;
  v->nghost = 16;
  v->ninset = 256;
  for (int i = 1; i < argc; i++) {
    const char* a = argv[i];
    const char* x = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); return 0; }
    else if (!strcmp(a, "--script") && x) { script = x; i++; }
    else if (!strcmp(a, "--width") && x) { w = atoi(x); i++; }
    else if (!strcmp(a, "--height") && x) { h = atoi(x); i++; }
    else if (!strcmp(a, "--ghosts") && x) { v->nghost = atoi(x); i++; }
    else if (!strcmp(a, "--inset") && x) { v->ninset = atoi(x); i++; }
    else if (!strcmp(a, "--paused")) start_paused = 1;
    else if (!strcmp(a, "--quality")) quality = 1;
    else if (a[0] != '-' && !v->path[0]) snprintf(v->path, sizeof(v->path), "%s", a);
    else { fprintf(stderr, "svi-viewer: unknown option '%s'\n", a); usage(stderr); return 2; }
  }
  if (!v->path[0]) { usage(stderr); return 2; }
  if (v->nghost < 0) v->nghost = 0;
  if (v->nghost > MAX_GHOSTS) v->nghost = MAX_GHOSTS;
  if (v->ninset < 1) v->ninset = 1;
  if (v->ninset > MAX_INSET) v->ninset = MAX_INSET;

  /* the model: a bad svi.impact setting is reported and the model runs natively */
  char err[1000] = "";
  v->m = svi_load_xml(v->path, err, sizeof(err));
  v->mn = svi_load_xml_native(v->path, err[0] ? NULL : err, err[0] ? 0 : (int)sizeof(err));
  if (!v->m) {
    fprintf(stderr, "svi-viewer: %s\n", err);
    if (!v->mn) { fprintf(stderr, "svi-viewer: cannot load %s\n", v->path); return 1; }
    snprintf(v->message, sizeof(v->message), "%s\n(running natively)", err);
    v->m = mj_copyModel(NULL, v->mn);
  }
  if (!v->mn) { fprintf(stderr, "svi-viewer: %s\n", err); return 1; }
  v->d = mj_makeData(v->m);
  v->native = mj_makeData(v->mn);
  v->nscratch = mj_makeData(v->mn);
  v->scratch = mj_makeData(v->m);
  v->ghost = mj_makeData(v->m);
  v->ghost_qpos = calloc((size_t)MAX_GHOSTS * (v->m->nq ? v->m->nq : 1), sizeof(double));
  v->law = SVI_LAW_SETVALUED;
  v->next_seed = 100;
  v->slow = 1;
  v->show_ghosts = 1;
  v->show_inset = 1;
  v->sim_per_frame = 1.0 / 60;
  v->scripted = script != NULL;
  v->paused = start_paused;

  if (!glfwInit()) { fprintf(stderr, "svi-viewer: cannot initialise GLFW (no display?)\n"); return 1; }
  /* software OpenGL (Mesa llvmpipe, e.g. under Xvfb) renders multisampling, shadows and
   * reflections on the CPU: off by default there, --quality turns them back on */
  glfwWindowHint(GLFW_SAMPLES, quality ? 4 : 0);
  v->win = glfwCreateWindow(w, h, "svi-viewer: set-valued impacts", NULL, NULL);
  if (!v->win) { fprintf(stderr, "svi-viewer: cannot create a window\n"); return 1; }
  glfwMakeContextCurrent(v->win);
  glfwSwapInterval(script ? 0 : 1);
  mjv_defaultCamera(&v->cam);
  mjv_defaultOption(&v->opt);
  v->opt.flags[mjVIS_TRANSPARENT] = 1;   /* impulse arrows and contacts show through bodies */
  mjv_defaultScene(&v->scn);
  mjr_defaultContext(&v->con);
  mjv_makeScene(v->m, &v->scn, 2000 + (MAX_GHOSTS + 2) * v->m->ngeom);
  mjr_makeContext(v->m, &v->con, mjFONTSCALE_150);
  v->scn.flags[mjRND_SHADOW] = (mjtByte)quality;
  v->scn.flags[mjRND_REFLECTION] = (mjtByte)quality;
  v->scn.flags[mjRND_SKYBOX] = (mjtByte)quality;
  v->cam.lookat[0] = v->m->stat.center[0];
  v->cam.lookat[1] = v->m->stat.center[1];
  v->cam.lookat[2] = v->m->stat.center[2];
  v->cam.distance = 1.6 * v->m->stat.extent;
  v->cam.elevation = -15;
  v->cam.azimuth = 90;
  glfwSetKeyCallback(v->win, key_cb);
  glfwSetMouseButtonCallback(v->win, button_cb);
  glfwSetCursorPosCallback(v->win, move_cb);
  glfwSetScrollCallback(v->win, scroll_cb);

  reset(v);
  v->has_plugin = v->in != NULL;
  if (!v->in && !v->message[0]) fprintf(stderr, "svi-viewer: %s declares no svi.impact instance: native MuJoCo\n", v->path);
  printf("viewer model=%s plugin=%s nq=%d nv=%d window=%dx%d\n", v->path, v->has_plugin ? "yes" : "no",
         (int)v->m->nq, (int)v->m->nv, w, h);
  if (v->message[0]) printf("message %s\n", v->message);
  fflush(stdout);

  if (script) {
    FILE* f = fopen(script, "r");
    if (!f) { fprintf(stderr, "svi-viewer: cannot read script %s\n", script); return 1; }
    char line[1024];
    while (fgets(line, sizeof(line), f) && !glfwWindowShouldClose(v->win)) {
      glfwPollEvents();
      if (!run_script_line(v, line)) break;
    }
    fclose(f);
  } else {
    double t_fps = now_ms(), fps = 0;
    long long f0 = 0;
    while (!glfwWindowShouldClose(v->win)) {
      frame(v, fps);
      glfwPollEvents();
      if (now_ms() - t_fps > 500) { fps = (v->frames - f0) / ((now_ms() - t_fps) / 1e3); f0 = v->frames; t_fps = now_ms(); }
    }
  }
  for (int i = 0; i < v->nundo; i++) mj_deleteData(v->undo[i].d);
  clear_redo(v);
  mjv_freeScene(&v->scn);
  mjr_freeContext(&v->con);
  mj_deleteData(v->d); mj_deleteData(v->native); mj_deleteData(v->scratch); mj_deleteData(v->ghost);
  mj_deleteData(v->nscratch);
  mj_deleteModel(v->m);
  mj_deleteModel(v->mn);
  free(v->ghost_qpos);
  glfwTerminate();
  return 0;
}
