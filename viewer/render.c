/* render.c -- drawing a frame: the 3-D view (cached while unchanged, rendered at a lower
 * resolution while changing when software OpenGL cannot keep up), the plot and the timeline
 * (plot.c), the HUD, help, info and profiler overlays, the big labels, MuJoCo's panel; and
 * screenshots. */
#include <GL/gl.h>
#include <cairo.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "viewer.h"

/* --------------------------------------------------------------------------------------------- */
/* The HUD: the selected impact in words. */
static void outcome_words(const svi_event* e, char* buf, int n) {
  int m = e->ncontact < SVI_EVENT_MAX_CONTACTS ? e->ncontact : SVI_EVENT_MAX_CONTACTS;
  buf[0] = 0;
  if (m <= 6) {
    for (int k = 0; k < m; k++) {
      const char* w = e->cls[k] == 'S' ? "stick" : e->cls[k] == 'L' ? "lift-off" : e->cls[k] == 'D' ? "slide" : "?";
      char part[40];
      snprintf(part, sizeof(part), "%s%d %s", k ? ", " : "", k + 1, w);
      strncat(buf, part, (size_t)n - strlen(buf) - 1);
    }
    return;
  }
  const char* words[3] = {"stick", "lift-off", "slide"};
  const char letters[3] = {'S', 'L', 'D'};
  for (int c = 0; c < 3; c++) {
    char part[64];
    int len = snprintf(part, sizeof(part), "%s%s:", buf[0] ? "  " : "", words[c]), any = 0;
    for (int k = 0; k < m && len < 60; k++)
      if (e->cls[k] == letters[c]) { len += snprintf(part + len, sizeof(part) - (size_t)len, " %d", k + 1); any = 1; }
    if (any) strncat(buf, part, (size_t)n - strlen(buf) - 1);
  }
}

static void ghost_lines(viewer* v, const svi_event* e, char* buf, int n) {
  const vw_alts* a = v->alts;
  if (!vw_event_shown(v, e))
    snprintf(buf, (size_t)n, "impact #%d is past: Ctrl+R replays it\n ", e->index);
  else if (!vw_alts_ready(v, VW_STAGE_GHOSTS))
    snprintf(buf, (size_t)n, "computing...\n ");
  else if (a->stage == VW_STAGE_SET && a->unique)
    snprintf(buf, (size_t)n, "unique outcome: %d samples agree\nshown at +%.2f s", a->sampled + a->nset, vw_ghost_time(v));
  else {
    char scale[40] = "";
    if (v->ghost_scale > 1.05) snprintf(scale, sizeof(scale), ", differences x%.0f", v->ghost_scale);
    snprintf(buf, (size_t)n, "%d outcomes in %d samples, up to %.3g mm apart at +%.2f s\n%s",
             a->nghost, a->sampled, 1e3 * a->spread, vw_ghost_time(v),
             v->ghosts_visual ? "" : "drawn as one: closer than 4 % of the body");
    if (v->ghosts_visual)
      snprintf(buf + strlen(buf), (size_t)n - strlen(buf), "%d drawn (blue%s); %s", v->ghosts_visual, scale,
               v->current_at_body ? "this one stays at the body" : "magenta: this one");
  }
}

static void hud_event_lines(viewer* v, const svi_event* e, char* t, char* c, int n) {
  char out[200], ghosts[200], sel[80];
  outcome_words(e, out, sizeof(out));
  ghost_lines(v, e, ghosts, sizeof(ghosts));
  snprintf(sel, sizeof(sel), "#%d at %.4f s (%d of %d)", e->index, e->time, v->selected + 1, svi_event_count(v->in));
  char energy[80] = "not measured (left to MuJoCo)", solver[80] = "MuJoCo's constraint solver";
  if (isfinite(e->ke_before) && isfinite(e->ke_after)) {
    double de = e->ke_before > 0 ? 100 * (e->ke_after - e->ke_before) / e->ke_before : 0;
    snprintf(energy, sizeof(energy), "%.4g J -> %.4g J (%+.0f %%)", e->ke_before, e->ke_after, de);
  }
  if (e->law == SVI_LAW_SETVALUED)
    snprintf(solver, sizeof(solver), "%d LCP%s (one per Routh step)", e->lcps, e->lcps == 1 ? "" : "s");
  else if (e->law != SVI_LAW_NATIVE)
    snprintf(solver, sizeof(solver), "%d LCP%s", e->lcps, e->lcps == 1 ? "" : "s");
  if (e->law == SVI_LAW_NATIVE) snprintf(out, sizeof(out), "left to MuJoCo");
  snprintf(t, (size_t)n, "Impact\nLaw\nOutcome\nEnergy\nSolver\nGhosts\n ");
  snprintf(c, (size_t)n, "%s\n%s, seed %llu\n%s\n%s\n%s\n%s", sel, svi_law_name(e->law),
           (unsigned long long)e->seed, out, energy, solver, ghosts);
}

static void hud_text(viewer* v, char* t, char* c, int n) {
  const svi_event* e = vw_selected_event(v);
  if (e) hud_event_lines(v, e, t, c, n);
  else if (v->has_plugin) {
    snprintf(t, (size_t)n, "Impact\nLaw");
    snprintf(c, (size_t)n, "none yet: Space plays until the first one\n%s", svi_law_name(svi_current_law(v->in)));
  } else {
    snprintf(t, (size_t)n, "Impacts");
    snprintf(c, (size_t)n, "no svi.impact in this model: native MuJoCo");
  }
}

/* the HUD and the help are text panels, cached: their text changes rarely */
static const char *panel_titles, *panel_values;

static void draw_text_panel(viewer* v, mjrRect r) { vw_text_panel(v, r, panel_titles, panel_values); }

static mjrRect text_overlay(viewer* v, mjrRect area, const char* titles, const char* values) {
  mjrRect r = vw_text_panel_size(v, titles, values);
  r.left = area.left;
  r.bottom = area.bottom + area.height - r.height;
  if (r.width > area.width) r.width = area.width;
  unsigned long long h = vw_hash(vw_hash(0, titles, strlen(titles)), values, strlen(values));
  panel_titles = titles;
  panel_values = values;
  vw_cached_panel(v, VW_AUX_HUD, r, h, draw_text_panel);
  return r;
}

static const char HELP_KEYS[] =
  "Space\n+  -\nLeft / Right\nEnter\nClick ghost or point\nCtrl Z / Ctrl Y\nCtrl R\n"
  "Ctrl Left / Right\nCtrl 1-5\nCtrl G / I / N\nCtrl B\nClick timeline\n"
  "Dbl-click / right / Ctrl right\nLeft / right drag, scroll\nCtrl drag / Ctrl right drag\n"
  "Esc / Ctrl A\n[  ]\nBackspace / Ctrl L\nDrop a model file\nCtrl P / Ctrl Q\nTab\n"
  "F1 F2 F3 F5\nF6 / F7\nLetters, 0-5\nPanel right-button hold\nOutcome words\nLCP";
static const char HELP_TEXT[] =
  "Play / pause\nSpeed up / down\nStep back / forward\nResample the impact (new seed)\n"
  "Continue from that outcome\nUndo / redo\nReplay the impact\nPrevious / next impact\n"
  "Resample: setvalued, simultaneous, sequential, native, propagative\n"
  "Ghosts / outcome set / native MuJoCo\nPause on impact\nSelect an impact\n"
  "Select body / center camera / track body\nOrbit / pan / zoom (Shift: other plane)\n"
  "Rotate / move the selected body\nFree camera / align\nCycle cameras\nReset / reload model\n"
  "Load it\nScreenshot / quit\nShow / hide panel\nHelp, info, profiler, full screen\nFrames / labels\n"
  "Rendering flags and groups (panel)\nShow the panel's shortcuts\n"
  "per contact: stick, lift-off, slide (S, L, D)\nlinear complementarity problem (one per Routh step)";

static void info_text(viewer* v, char* t, char* c, int n) {
  const mjData* d = v->d;
  svi_counters k = {0};
  if (v->in) k = svi_instance_counters(v->in);
  int steps = d->timer[mjTIMER_STEP].number;
  char cpu[40] = "- (paused)";
  if (steps) snprintf(cpu, sizeof(cpu), "%.3g ms per step", d->timer[mjTIMER_STEP].duration / steps);
  snprintf(t, (size_t)n, "Time\nSpeed\nSize\nCPU\nFPS\nMemory\nImpacts\nLCPs");
  snprintf(c, (size_t)n, "%.3f s\n%g %% wanted, %.0f %% actual\n%d  (%d con)\n%s\n%.0f\n%.1f%% of %s\n%lld (%d in log)\n%lld",
           d->time, vw_speed_percent[v->speed_index], v->rt_actual, d->nefc, d->ncon, cpu, v->fps,
           100 * d->maxuse_arena / (double)(d->narena ? d->narena : 1), mju_writeNumBytes(d->narena),
           k.events, v->in ? svi_event_count(v->in) : 0, k.lcps);
}

/* CPU time per step over the last frames: the step, collision, the velocity stage (which holds
 * svi.impact's impact resolution) and the constraint solver */
static void profiler_update(viewer* v) {
  mjvFigure* f = &v->fig_cpu;
  const mjData* d = v->d;
  int n = d->timer[mjTIMER_STEP].number;
  if (!n) return;
  float y[4] = {(float)(d->timer[mjTIMER_STEP].duration / n), (float)(d->timer[mjTIMER_POS_COLLISION].duration / n),
                (float)(d->timer[mjTIMER_VELOCITY].duration / n), (float)(d->timer[mjTIMER_CONSTRAINT].duration / n)};
  int pnt = f->linepnt[0] < 200 ? f->linepnt[0] + 1 : 200;
  for (int l = 0; l < 4; l++) {
    for (int i = pnt - 1; i > 0; i--) f->linedata[l][2 * i + 1] = f->linedata[l][2 * i - 1];
    f->linedata[l][1] = y[l];
    for (int i = 0; i < pnt; i++) f->linedata[l][2 * i] = (float)-i;
    f->linepnt[l] = pnt;
  }
}

static void clear_timers(mjData* d) {
  for (int i = 0; i < mjNTIMER; i++) { d->timer[i].duration = 0; d->timer[i].number = 0; }
}

void vw_profiler_init(viewer* v) {
  mjvFigure* f = &v->fig_cpu;
  mjv_defaultFigure(f);
  snprintf(f->title, sizeof(f->title), "CPU time per step (ms)");
  snprintf(f->xlabel, sizeof(f->xlabel), "Video frame");
  snprintf(f->yformat, sizeof(f->yformat), "%%.3f");
  const char* names[4] = {"step", "collision", "velocity (svi.impact)", "solver"};
  for (int l = 0; l < 4; l++) snprintf(f->linename[l], sizeof(f->linename[l]), "%s", names[l]);
  f->figurergba[3] = 0.5f;
  f->gridsize[0] = 3;
  f->gridsize[1] = 5;
  f->range[0][0] = -200;
  f->range[0][1] = 0;
  f->range[1][0] = 0;
  f->range[1][1] = 0.05f;
}

/* The big labels at the top right (PAUSE, REPLAY, the speed), below the HUD (hud: its width)
 * when they would overlap it; returns how far down they reach. */
static int big_width(const viewer* v, const char* s) {
  int w = 0;
  for (; *s; s++) if ((unsigned char)*s < 127) w += v->con.charWidthBig[(unsigned char)*s];
  return w;
}

static int top_labels(viewer* v, mjrRect r, mjrRect hud) {
  char label[80] = "", rt[64] = "";
  const svi_event* e = vw_selected_event(v);
  if (v->replay.phase) snprintf(label, sizeof(label), "REPLAY impact #%d", v->replay.index);
  else if (!v->run) {
    if (e && fabs(v->d->time - e->time) <= 2 * v->m->opt.timestep) snprintf(label, sizeof(label), "PAUSE at impact #%d", e->index);
    else snprintf(label, sizeof(label), "PAUSE");
  }
  float want = vw_speed_percent[v->speed_index], actual = (float)v->rt_actual;
  int misaligned = v->run && actual > 0 && fabsf(actual - want) > 0.1f * want;
  if (want != 100 || misaligned) {
    int len = snprintf(rt, sizeof(rt), "%g%%", want);
    if (misaligned) snprintf(rt + len, sizeof(rt) - (size_t)len, " (actual %.0f%%)", actual);
  }
  int widest = big_width(v, label) > big_width(v, rt) ? big_width(v, label) : big_width(v, rt);
  int top = hud.left + hud.width + widest + 30 > r.left + r.width ? hud.height : 0, lh = v->con.charHeightBig + 14;
  mjrRect at = {r.left, r.bottom, r.width, r.height - top};
  if (label[0]) { mjr_overlay(mjFONT_BIG, mjGRID_TOPRIGHT, at, label, NULL, &v->con); at.height -= lh; }
  if (rt[0]) { mjr_overlay(mjFONT_BIG, mjGRID_TOPRIGHT, at, rt, NULL, &v->con); at.height -= lh; }
  if (v->message[0] && vw_now_ms() > v->message_until) v->message[0] = 0;
  if (v->message[0]) {   /* above the timeline, where it covers nothing else */
    mjrRect above = {r.left, r.bottom + 56, r.width, r.height - 56};
    mjr_overlay(mjFONT_NORMAL, mjGRID_BOTTOM, above, v->message, NULL, &v->con);
  }
  return r.height - at.height;
}

/* Is the scene the same as the one last rendered?  Geoms (up to the fields mjr_render itself
 * writes), cameras, lights, flags and place. */
static int geoms_equal(const mjvGeom* a, const mjvGeom* b, int n) {
  for (int i = 0; i < n; i++)
    if (memcmp(a + i, b + i, offsetof(mjvGeom, camdist))) return 0;
  return 1;
}

static int scene_unchanged(const viewer* v, mjrRect r) {
  const mjvScene* s = &v->scn;
  return v->cache_valid && s->nflex == 0 && s->nskin == 0 && s->ngeom == v->last.ngeom &&
         s->nlight == v->last.nlight && !memcmp(&r, &v->last_rect, sizeof(r)) &&
         !memcmp(s->camera, v->last.camera, sizeof(s->camera)) &&
         !memcmp(s->lights, v->last.lights, sizeof(mjvLight) * (size_t)s->nlight) &&
         !memcmp(s->flags, v->last.flags, sizeof(s->flags)) &&
         geoms_equal(s->geoms, v->last_geoms, s->ngeom);
}

static void remember_scene(viewer* v, mjrRect r) {
  const mjvScene* s = &v->scn;
  v->last.ngeom = s->ngeom;
  v->last.nlight = s->nlight;
  memcpy(v->last.camera, s->camera, sizeof(s->camera));
  memcpy(v->last.lights, s->lights, sizeof(mjvLight) * (size_t)s->nlight);
  memcpy(v->last.flags, s->flags, sizeof(s->flags));
  memcpy(v->last_geoms, s->geoms, sizeof(mjvGeom) * (size_t)s->ngeom);
  v->last_rect = r;
  v->cache_valid = 1;
}

/* Software OpenGL fills pixels on the CPU: a changing scene is rendered at the resolution that
 * fits a ~12 ms budget (at least 40 %, then scaled up to the window), leaving room for the rest
 * of the frame on a loaded machine; a scene that stops changing is rendered once more at full
 * resolution and then only blitted. */
static void adapt_resolution(viewer* v, double ms, double scale) {
  double want = scale * sqrt(12.0 / fmax(ms, 0.5));
  want = fmin(1, fmax(0.4, want));
  v->res_scale = fmin(1, fmax(0.4, 0.05 * lround(20 * (0.5 * v->res_scale + 0.5 * want))));
}

/* A changing scene is rendered straight into the window at full resolution when that fits the
 * budget, else offscreen at a lower resolution and scaled up; an unchanged scene is rendered once
 * offscreen at full resolution and then blitted. */
/* mjr_render into the current buffer, timed to the GPU's finish (render_ms, renders) */
static void timed_render(viewer* v, mjrRect r) {
  double t0 = vw_now_ms();
  mjr_render(r, &v->scn, &v->con);
  glFinish();
  v->render_ms = vw_now_ms() - t0;
  v->renders++;
}

static void render_offscreen(viewer* v, mjrRect r, double scale) {
  if (v->con.offWidth < r.width || v->con.offHeight < r.height) mjr_resizeOffscreen(r.width, r.height, &v->con);
  mjrRect off = {0, 0, (int)lround(r.width * scale), (int)lround(r.height * scale)};
  mjr_setBuffer(mjFB_OFFSCREEN, &v->con);
  timed_render(v, off);
  v->cached_scale = scale;
  v->in_window = 0;
}

static void blit_offscreen(viewer* v, mjrRect r) {
  mjrRect off = {0, 0, (int)lround(r.width * v->cached_scale), (int)lround(r.height * v->cached_scale)};
  mjr_setBuffer(mjFB_OFFSCREEN, &v->con);
  mjr_blitBuffer(off, r, 1, 0, &v->con);
  mjr_setBuffer(mjFB_WINDOW, &v->con);
}

static void render_3d(viewer* v, mjrRect r) {
  int same = scene_unchanged(v, r);
  if (same && !v->in_window && v->cached_scale >= 1) { blit_offscreen(v, r); return; }
  if (same || v->quality) {
    render_offscreen(v, r, 1);
  } else if (v->res_scale >= 1) {   /* changing, and full resolution fits: no blit */
    mjr_setBuffer(mjFB_WINDOW, &v->con);
    timed_render(v, r);
    v->in_window = 1;
    adapt_resolution(v, v->render_ms, 1);
    remember_scene(v, r);
    return;
  } else {
    render_offscreen(v, r, v->res_scale);
    adapt_resolution(v, v->render_ms, v->cached_scale);
  }
  remember_scene(v, r);
  blit_offscreen(v, r);
}

void vw_render(viewer* v) {
  mjrRect r = v->uis.rect[3];
  vw_canvas_window(v);
  mjr_setBuffer(mjFB_WINDOW, &v->con);
  if (!v->ui0_enable || v->uis.rect[1].width == 0) mjr_rectangle(v->uis.rect[0], 0, 0, 0, 1);
  if (r.width > 0 && r.height > 0) render_3d(v, r);
  vw_draw_timeline(v);
  vw_draw_inset(v);
  mjrRect above = {r.left, r.bottom + 52, r.width, r.height - 52};   /* above the timeline */
  static char t[400], c[1600];   /* render thread only */
  mjrRect hud;
  mjrRect above_timeline = {r.left, r.bottom + 52, r.width, r.height - 52};
  if (v->help) hud = text_overlay(v, above_timeline, HELP_KEYS, HELP_TEXT);
  else { hud_text(v, t, c, sizeof(c)); hud = text_overlay(v, r, t, c); }
  int labels = top_labels(v, r, hud);
  if (v->info) {
    char it[300], ic[600];
    info_text(v, it, ic, sizeof(ic));
    mjr_overlay(mjFONT_NORMAL, mjGRID_BOTTOMLEFT, above, it, ic, &v->con);
  }
  if (v->profiler) {
    profiler_update(v);
    mjrRect fr = {r.left + r.width - r.width / 3, r.bottom + r.height - labels - r.height / 3, r.width / 3, r.height / 3};
    mjr_figure(fr, &v->fig_cpu, &v->con);
  }
  clear_timers(v->d);
  if (v->ui0_enable) mjui_render(&v->ui0, &v->uis, &v->con);
}

/* the window as a PNG (reads the back buffer: call after vw_render, before the swap) */
int vw_screenshot(viewer* v, const char* path) {
  int w = v->uis.rect[0].width, h = v->uis.rect[0].height;
  unsigned char* rgb = malloc((size_t)w * h * 3);
  if (!rgb) return -1;
  mjr_setBuffer(mjFB_WINDOW, &v->con);
  mjr_readPixels(rgb, NULL, v->uis.rect[0], &v->con);
  cairo_surface_t* s = cairo_image_surface_create(CAIRO_FORMAT_RGB24, w, h);
  unsigned char* px = cairo_image_surface_get_data(s);
  int stride = cairo_image_surface_get_stride(s);
  for (int y = 0; y < h; y++)
    for (int x = 0; x < w; x++) {
      const unsigned char* src = rgb + ((size_t)(h - 1 - y) * w + x) * 3;   /* GL is bottom-up */
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
