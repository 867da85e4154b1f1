/* plot.c -- the inset: the selected impact's post-impact set as a real plot (axes with ticks in
 * m/s, contacts named by geom and numbered as the scene's markers, the set's outline, native
 * MuJoCo's outcome always inside the bounds, a number line for one contact); and the event
 * timeline with time labels.  Drawn with mjr_rectangle/mjr_text and plain OpenGL lines, in window
 * pixels with the origin bottom-left (OpenGL's and mjui's convention). */
#include <GL/gl.h>
#include <math.h>
#include <string.h>

#include "viewer.h"

/* plot margins inside the inset, pixels */
#define M_LEFT 58
#define M_RIGHT 12
#define M_BOTTOM 44
#define M_TOP 72
#define TIMELINE_H 40

/* "nice" tick spacing: 1, 2 or 5 times a power of ten, about n ticks over the range */
static double tick_step(double range, int n) {
  double raw = range / n, p = pow(10, floor(log10(raw))), f = raw / p;
  return (f < 1.5 ? 1 : f < 3 ? 2 : f < 7 ? 5 : 10) * p;
}

static void tick_label(char* buf, int n, double x, double step) {
  int dec = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
  if (fabs(x) < 0.5 * step) x = 0;
  snprintf(buf, (size_t)n, "%.*f", dec, x);
}

/* --------------------------------------------------------------------------------------------- */
/* Layout, in the scene's rectangle (uis.rect[3]). */
mjrRect vw_timeline_rect(const viewer* v) {
  mjrRect s = v->uis.rect[3], r = {s.left + 10, s.bottom + 6, s.width - 20, TIMELINE_H};
  return r;
}

mjrRect vw_inset_rect(const viewer* v) {
  mjrRect s = v->uis.rect[3];
  int room = s.height - TIMELINE_H - 20 - 110;   /* keep the top for the HUD */
  int side = (int)fmin(fmin(0.52 * room, 0.40 * s.width), 400);
  if (side < 160) side = 160;
  mjrRect r = {s.left + s.width - side - 12, s.bottom + TIMELINE_H + 16, side, side};
  return r;
}

int vw_inset_visible(const viewer* v) {
  return v->show_set && v->has_plugin && vw_selected_event(v) != NULL && v->uis.rect[3].width > 300;
}

static mjrRect data_rect(const viewer* v) {
  mjrRect r = vw_inset_rect(v), d = {r.left + M_LEFT, r.bottom + M_BOTTOM, r.width - M_LEFT - M_RIGHT,
                                     r.height - M_BOTTOM - M_TOP};
  return d;
}

/* The plotted range: every sample, the outline, native MuJoCo, the current outcome and zero (the
 * contact's separation line), padded. */
static void bounds(const viewer* v, double lo[2], double hi[2]) {
  const vw_alts* a = v->alts;
  const svi_event* e = vw_selected_event(v);
  lo[0] = lo[1] = 0;
  hi[0] = hi[1] = 0;
  for (int k = 0; k < a->nset; k++)
    for (int j = 0; j < 2; j++) { lo[j] = fmin(lo[j], a->set_pt[k][j]); hi[j] = fmax(hi[j], a->set_pt[k][j]); }
  for (int k = 0; k < a->nghost; k++)
    for (int j = 0; j < a->dim; j++) {
      lo[j] = fmin(lo[j], a->ghost[k].vn[a->axis[j]]);
      hi[j] = fmax(hi[j], a->ghost[k].vn[a->axis[j]]);
    }
  if (a->has_native)
    for (int j = 0; j < 2; j++) { lo[j] = fmin(lo[j], a->native_pt[j]); hi[j] = fmax(hi[j], a->native_pt[j]); }
  if (e)
    for (int j = 0; j < a->dim; j++) {
      lo[j] = fmin(lo[j], e->vn_after[a->axis[j]]);
      hi[j] = fmax(hi[j], e->vn_after[a->axis[j]]);
    }
  /* an axis along which every outcome is nearly the same gets a span of 20 % of the other's (at
   * least 1 mm/s): its ticks stay readable */
  double big = fmax(fmax(hi[0] - lo[0], hi[1] - lo[1]), 1e-3);
  for (int j = 0; j < 2; j++) {
    double span = hi[j] - lo[j], mid = 0.5 * (hi[j] + lo[j]);
    if (span < 0.2 * big) { span = 0.2 * big; lo[j] = mid - 0.5 * span; hi[j] = mid + 0.5 * span; }
    lo[j] -= 0.08 * span;
    hi[j] += 0.08 * span;
  }
  if (a->dim == 1) { lo[1] = -1; hi[1] = 1; }
}

static void to_pixel(const viewer* v, const double lo[2], const double hi[2], double x, double y,
                     double* px, double* py) {
  mjrRect d = data_rect(v);
  *px = d.left + d.width * (x - lo[0]) / (hi[0] - lo[0]);
  *py = d.bottom + d.height * (y - lo[1]) / (hi[1] - lo[1]);
}

/* --------------------------------------------------------------------------------------------- */
/* Ticks of small velocities are labelled in units of 10^e m/s (the axis says so): 0.00005 would
 * not fit.  Returns e, 0 for plain m/s. */
static int axis_exponent(double lo, double hi) {
  double m = fmax(fabs(lo), fabs(hi));
  return m > 0 && m < 0.01 ? (int)floor(log10(m)) : 0;
}

static void axes_and_ticks(viewer* v, const double lo[2], const double hi[2]) {
  mjrRect d = data_rect(v);
  char buf[32];
  for (int j = 0; j < v->alts->dim; j++) {
    double step = tick_step(hi[j] - lo[j], j == 0 && d.width < 240 ? 3 : 4);
    double unit = pow(10, axis_exponent(lo[j], hi[j]));
    for (double t = ceil(lo[j] / step) * step; t <= hi[j] + 1e-9 * step; t += step) {
      double px, py;
      to_pixel(v, lo, hi, j ? lo[0] : t, j ? t : lo[1], &px, &py);
      int zero = fabs(t) < 0.5 * step;
      float c = zero ? 0.55f : 0.86f;
      if (j == 0) vw_box(px, d.bottom, zero ? 1.5 : 1, d.height, c, c, c, 1);
      else vw_box(d.left, py, d.width, zero ? 1.5 : 1, c, c, c, 1);
      tick_label(buf, sizeof(buf), t / unit, step / unit);
      if (j == 0) vw_text_center(v, buf, px, d.bottom - 16, 0.15f, 0.15f, 0.15f);
      else vw_text_right(v, buf, d.left - 5, py - 5, 0.15f, 0.15f, 0.15f);
    }
  }
  float k = 0.3f;   /* the frame */
  vw_box(d.left, d.bottom, d.width, 1, k, k, k, 1);
  vw_box(d.left, d.bottom + d.height, d.width, 1, k, k, k, 1);
  vw_box(d.left, d.bottom, 1, d.height, k, k, k, 1);
  vw_box(d.left + d.width, d.bottom, 1, d.height + 1, k, k, k, 1);
}

/* the set's outline: its convex hull, filled light and edged (an interval for one contact) */
static void outline(viewer* v, const double lo[2], const double hi[2]) {
  const vw_alts* a = v->alts;
  double px, py, qx, qy;
  if (a->nhull < 1) return;
  if (a->dim == 1 || a->nhull < 3) {
    to_pixel(v, lo, hi, a->hull[0][0], a->dim == 1 ? 0 : a->hull[0][1], &px, &py);
    to_pixel(v, lo, hi, a->hull[a->nhull - 1][0], a->dim == 1 ? 0 : a->hull[a->nhull - 1][1], &qx, &qy);
    vw_pixel_space();
    glLineWidth(a->dim == 1 ? 9 : 3);
    glColor4f(0.55f, 0.70f, 0.95f, 0.7f);
    glBegin(GL_LINES);
    glVertex2d(px, py);
    glVertex2d(qx + (qx == px && qy == py), qy);
    glEnd();
    glLineWidth(1);
    return;
  }
  vw_pixel_space();
  glColor4f(0.55f, 0.70f, 0.95f, 0.30f);
  glBegin(GL_TRIANGLE_FAN);
  for (int k = 0; k < a->nhull; k++) { to_pixel(v, lo, hi, a->hull[k][0], a->hull[k][1], &px, &py); glVertex2d(px, py); }
  glEnd();
  glLineWidth(1.5f);
  glColor4f(0.25f, 0.40f, 0.75f, 0.9f);
  glBegin(GL_LINE_LOOP);
  for (int k = 0; k < a->nhull; k++) { to_pixel(v, lo, hi, a->hull[k][0], a->hull[k][1], &px, &py); glVertex2d(px, py); }
  glEnd();
  glLineWidth(1);
}

static void marker(double x, double y, double s, float r, float g, float b) {
  vw_box(x - s / 2 - 1, y - s / 2 - 1, s + 2, s + 2, 0.1f, 0.1f, 0.1f, 1);
  vw_box(x - s / 2, y - s / 2, s, s, r, g, b, 1);
}

static void points(viewer* v, const double lo[2], const double hi[2]) {
  const vw_alts* a = v->alts;
  double px, py;
  vw_pixel_space();   /* the samples in one batch: hundreds of mjr_rectangle calls cost ms */
  glColor4f(0.30f, 0.30f, 0.32f, 1);
  glBegin(GL_QUADS);
  for (int k = 0; k < a->nset; k++) {
    to_pixel(v, lo, hi, a->set_pt[k][0], a->set_pt[k][1], &px, &py);
    glVertex2d(px - 1.5, py - 1.5); glVertex2d(px + 1.5, py - 1.5);
    glVertex2d(px + 1.5, py + 1.5); glVertex2d(px - 1.5, py + 1.5);
  }
  glEnd();
  for (int k = 0; k < a->nghost; k++) {   /* the ghosts' outcomes, in the ghosts' blue */
    to_pixel(v, lo, hi, a->ghost[k].vn[a->axis[0]], a->dim == 2 ? a->ghost[k].vn[a->axis[1]] : 0, &px, &py);
    marker(px, py, 6, 0.30f, 0.62f, 1.0f);
  }
  if (a->has_native) {
    to_pixel(v, lo, hi, a->native_pt[0], a->native_pt[1], &px, &py);
    marker(px, py, 9, 0.10f, 0.75f, 0.25f);
  }
  const svi_event* e = vw_selected_event(v);
  if (e) {   /* the current outcome, in the highlighted ghost's magenta */
    to_pixel(v, lo, hi, e->vn_after[a->axis[0]], a->dim == 2 ? e->vn_after[a->axis[1]] : 0, &px, &py);
    marker(px, py, 10, 1.0f, 0.2f, 0.8f);
  }
}

static void units(char* buf, int n, double lo, double hi) {
  int e = axis_exponent(lo, hi);
  if (e) snprintf(buf, (size_t)n, "v_n after, 1e%d m/s", e);
  else snprintf(buf, (size_t)n, "v_n after, m/s");
}

static void legend(viewer* v, mjrRect r, const double lo[2], const double hi[2]) {
  const vw_alts* a = v->alts;
  const svi_event* e = vw_selected_event(v);
  char title[160], xl[160], yl[160];
  int n = a->nset + a->sampled;
  if (a->stage < VW_STAGE_SET) snprintf(title, sizeof(title), "Impact #%d: computing the set...", e->index);
  else if (a->unique) snprintf(title, sizeof(title), "Impact #%d: unique outcome (%d samples)", e->index, n);
  else if (a->ndistinct <= 64) snprintf(title, sizeof(title), "Impact #%d: %d outcomes in %d samples", e->index, a->ndistinct, n);
  else snprintf(title, sizeof(title), "Impact #%d: post-impact set, %d samples", e->index, n);
  vw_text(v, title, r.left + 8, r.bottom + r.height - 18, 0.05f, 0.05f, 0.05f);
  double y = r.bottom + r.height - 38, x = r.left + 8;
  marker(x + 4, y + 5, 8, 1.0f, 0.2f, 0.8f);    vw_text(v, "now", x + 12, y, 0.2f, 0.2f, 0.2f);
  x += 24 + vw_text_width(v, "now");
  marker(x + 4, y + 5, 6, 0.30f, 0.62f, 1.0f);  vw_text(v, "ghosts", x + 12, y, 0.2f, 0.2f, 0.2f);
  x += 24 + vw_text_width(v, "ghosts");
  if (a->has_native) { marker(x + 4, y + 5, 8, 0.10f, 0.75f, 0.25f); vw_text(v, "native MuJoCo", x + 12, y, 0.2f, 0.2f, 0.2f); }
  char name[100], unit[40];
  vw_contact_name(v->m, e, a->axis[0], name, sizeof(name));
  units(unit, sizeof(unit), lo[0], hi[0]);
  snprintf(xl, sizeof(xl), "%s  %s", name, unit);
  vw_text_center(v, xl, r.left + M_LEFT + 0.5 * (r.width - M_LEFT - M_RIGHT), r.bottom + 8, 0.1f, 0.1f, 0.1f);
  if (a->dim == 2) {
    vw_contact_name(v->m, e, a->axis[1], name, sizeof(name));
    units(unit, sizeof(unit), lo[1], hi[1]);
    snprintf(yl, sizeof(yl), "^ %s  %s", name, unit);
    vw_text(v, yl, r.left + 8, r.bottom + r.height - M_TOP + 10, 0.1f, 0.1f, 0.1f);
  } else {
    vw_text(v, "one contact: the outcomes on a line", r.left + 8, r.bottom + r.height - M_TOP + 10, 0.1f, 0.1f, 0.1f);
  }
}

static void draw_inset_panel(viewer* v, mjrRect r) {
  vw_box(r.left, r.bottom, r.width, r.height, 0.97f, 0.97f, 0.96f, 1);
  if (!vw_alts_ready(v, VW_STAGE_GHOSTS)) {
    vw_text(v, "computing the alternatives...", r.left + 8, r.bottom + r.height - 18, 0.1f, 0.1f, 0.1f);
    return;
  }
  double lo[2], hi[2];
  bounds(v, lo, hi);
  axes_and_ticks(v, lo, hi);
  outline(v, lo, hi);
  points(v, lo, hi);
  legend(v, r, lo, hi);
}

/* what the inset shows: the results (version), the event and its current outcome */
static unsigned long long inset_key(const viewer* v) {
  const svi_event* e = vw_selected_event(v);
  int ready = vw_alts_ready(v, VW_STAGE_GHOSTS);
  unsigned long long h = vw_hash(0, &v->seen_version, sizeof(int));
  h = vw_hash(h, &ready, sizeof(int));
  h = vw_hash(h, &v->fontscale, sizeof(int));
  if (e) {
    h = vw_hash(h, &e->index, sizeof(int));
    h = vw_hash(h, &e->seed, sizeof(e->seed));
    h = vw_hash(h, &e->law, sizeof(e->law));
    h = vw_hash(h, e->vn_after, sizeof(e->vn_after));
  }
  return h;
}

void vw_draw_inset(viewer* v) {
  if (vw_inset_visible(v)) vw_cached_panel(v, VW_AUX_INSET, vw_inset_rect(v), inset_key(v), draw_inset_panel);
}

/* --------------------------------------------------------------------------------------------- */
/* Picking in the inset: the nearest of the ghosts' outcomes and the set's points within 10 pixels
 * (a ghost's outcome on a tie).  Returns a set index, -(ghost + 2) for a ghost's, -1 for none. */
int vw_inset_point_at(viewer* v, double x, double y) {
  if (!vw_inset_visible(v) || !vw_alts_ready(v, VW_STAGE_GHOSTS)) return -1;
  const vw_alts* a = v->alts;
  double lo[2], hi[2], px, py, best = 10;
  int hit = -1;
  bounds(v, lo, hi);
  for (int k = 0; k < a->nghost; k++) {
    to_pixel(v, lo, hi, a->ghost[k].vn[a->axis[0]], a->dim == 2 ? a->ghost[k].vn[a->axis[1]] : 0, &px, &py);
    double dd = hypot(px - x, py - y);
    if (dd <= best) { best = dd; hit = -(k + 2); }
  }
  for (int k = 0; k < a->nset; k++) {
    to_pixel(v, lo, hi, a->set_pt[k][0], a->set_pt[k][1], &px, &py);
    double dd = hypot(px - x, py - y);
    if (dd < best) { best = dd; hit = k; }
  }
  return hit;
}

void vw_inset_point_where(viewer* v, int k, double* x, double* y) {
  double lo[2], hi[2];
  bounds(v, lo, hi);
  to_pixel(v, lo, hi, v->alts->set_pt[k][0], v->alts->set_pt[k][1], x, y);
}

/* continue from exactly that outcome: its seed under the set's law */
void vw_pick_inset(viewer* v, int k) {
  const vw_alts* a = v->alts;
  if (k <= -2) { vw_pick_ghost(v, -k - 2); return; }
  if (k < 0 || k >= a->nset) return;
  double pa = a->set_pt[k][0], pb = a->set_pt[k][1];
  int ax = a->axis[0], ay = a->axis[1], dim = a->dim;
  vw_resample(v, a->set_seed[k], (svi_law)a->key.law, "pick");
  const svi_event* e = vw_selected_event(v);
  if (!e) return;
  printf("pick k=%d seed=%llu point=(%.6f,%.6f) state_vn=(%.6f,%.6f) state=%016llx\n", k,
         (unsigned long long)a->set_seed[k], pa, pb, e->vn_after[ax], dim == 2 ? e->vn_after[ay] : 0,
         vw_state_hash(v->m, v->d));
  fflush(stdout);
}

/* --------------------------------------------------------------------------------------------- */
/* The timeline: the run's time with labels, its events (the selected one highlighted, orange),
 * the shown time (white). */
/* the timeline's end: at least 1 s, stepped so that it changes rarely (its panel is cached) */
static double timeline_end(const viewer* v) {
  double t = fmax(v->d->time, vw_shown_time(v));
  int n = v->in ? svi_event_count(v->in) : 0;
  if (n) t = fmax(t, svi_event_get(v->in, n - 1)->time);
  if (t < 0.9) return 1;
  double step = tick_step(t, 4);
  return step * ceil(1.1 * t / step);
}

static double timeline_x(const viewer* v, double t) {
  mjrRect r = vw_timeline_rect(v);
  return r.left + 6 + (r.width - 12) * t / timeline_end(v);
}

static void draw_timeline_panel(viewer* v, mjrRect r) {
  vw_box(r.left, r.bottom, r.width, r.height, 0.10f, 0.10f, 0.12f, 1);
  double tend = timeline_end(v), step = tick_step(tend, 8);
  char buf[32];
  for (double t = 0; t <= tend; t += step) {
    double x = timeline_x(v, t);
    vw_box(x, r.bottom + 16, 1, 6, 0.6f, 0.6f, 0.6f, 1);
    tick_label(buf, sizeof(buf), t, step);
    strcat(buf, " s");
    if (t == 0) vw_text(v, buf, x, r.bottom + 3, 0.75f, 0.75f, 0.75f);
    else vw_text_center(v, buf, x, r.bottom + 3, 0.75f, 0.75f, 0.75f);
  }
  int n = v->in ? svi_event_count(v->in) : 0;
  for (int i = 0; i < n; i++) {
    double x = timeline_x(v, svi_event_get(v->in, i)->time);
    int sel = i == v->selected;
    vw_box(x - (sel ? 3 : 1.5), r.bottom + 20, sel ? 6 : 3, r.height - 23, sel ? 1.0f : 0.85f,
        sel ? 0.55f : 0.35f, 0.1f, 1);
  }
}

void vw_draw_timeline(viewer* v) {
  mjrRect r = vw_timeline_rect(v);
  int n = v->in ? svi_event_count(v->in) : 0;
  double tend = timeline_end(v);
  const svi_event* last = n ? svi_event_get(v->in, n - 1) : NULL;
  unsigned long long h = vw_hash(0, &n, sizeof(n));
  h = vw_hash(h, &v->selected, sizeof(int));
  h = vw_hash(h, &tend, sizeof(tend));
  if (last) h = vw_hash(h, &last->time, sizeof(double));
  vw_cached_panel(v, VW_AUX_TIMELINE, r, h, draw_timeline_panel);
  vw_box(timeline_x(v, vw_shown_time(v)) - 1, r.bottom + 18, 2, r.height - 18, 1, 1, 1, 0.9f);
}

int vw_timeline_event_at(viewer* v, double x, double y) {
  mjrRect r = vw_timeline_rect(v);
  if (x < r.left || x > r.left + r.width || y < r.bottom || y > r.bottom + r.height || !v->in) return -2;
  int best = -1;
  double bd = 12;
  for (int i = 0; i < svi_event_count(v->in); i++) {
    double dd = fabs(timeline_x(v, svi_event_get(v->in, i)->time) - x);
    if (dd < bd) { bd = dd; best = i; }
  }
  return best;
}
