/* svi_plot.c -- normal-velocity-plane figures with cairo (see svi_plot.h).
 *
 * Layout: one plot frame computed from the spec (data ranges + pixel rectangle) is shared by the
 * drawing code and svi_plot_data_to_pixel, so tests can find exactly where a point landed.
 * Big clouds are thinned through a byte occupancy grid of 1.5-pixel cells; the same grid tells
 * the legend and the "pre-impact" label where the picture is empty.
 */
#include "svi_plot.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cairo.h>
#if CAIRO_HAS_PDF_SURFACE
#include <cairo-pdf.h>
#endif
#if CAIRO_HAS_SVG_SURFACE
#include <cairo-svg.h>
#endif

#define DEFAULT_WIDTH  900
#define DEFAULT_HEIGHT 760
#define MAX_SIDE       20000      /* well inside cairo's 32767-pixel image limit */
#define PAD_FRACTION   0.08
#define CELL           1.5        /* thinning cell, pixels (at the default size or smaller) */
#define DOT_RADIUS     1.6        /* cloud dot, pixels: a little over the cell, so dense sets
                                     read as solid */
#define FILL_BATCH     4096       /* dots per cairo_fill: bounds the path cairo must tessellate */

#define TWO_PI         6.283185307179586   /* M_PI is not in strict C11 */
#define CLOUD_GREY     0.55
#define PATH_GREY      0.82

enum { BIT_CLOUD = 1, BIT_PATH = 2 };
enum { FMT_PNG, FMT_SVG, FMT_PDF };

/* data ranges, plot rectangle and font sizes; everything the pixel mapping depends on */
typedef struct {
  int width, height;
  double x0, x1, y0, y1;          /* data range shown */
  double xstep, ystep;            /* tick spacing */
  double left, top, w, h;         /* plot rectangle, pixels */
  double sx, sy;                  /* pixels per data unit */
  double s;                       /* size scale relative to the default canvas */
  double fs_title, fs_label, fs_tick, fs_legend, fs_footer;
} plot_frame;

typedef struct { double x0, y0, x1, y1; } box;

typedef struct {
  uint8_t* used;                  /* gw x gh cells, BIT_CLOUD | BIT_PATH */
  int gw, gh;
  double size;                    /* cell side, pixels */
} occupancy;

/* ------------------------------------------------------------------------------------------- */
/* ranges and ticks                                                                            */

static int finite_pt(const svi_plot_pt* p) {
  return isfinite(p->x) && isfinite(p->y);
}

typedef struct { double lo, hi; int any; } span;

static void span_add(span* sp, double v) {
  if (!sp->any) {
    sp->lo = sp->hi = v;
    sp->any = 1;
  } else {
    if (v < sp->lo) sp->lo = v;
    if (v > sp->hi) sp->hi = v;
  }
}

static void spans_add_points(span* sx, span* sy, const svi_plot_pt* p, long n) {
  if (!p) return;
  for (long i = 0; i < n; i++) {
    if (!finite_pt(p + i)) continue;
    span_add(sx, p[i].x);
    span_add(sy, p[i].y);
  }
}

/* step of 1, 2 or 5 x 10^k giving about `target` intervals over `range` */
static double nice_step(double range, int target) {
  double raw = range / target;
  double mag = pow(10.0, floor(log10(raw)));
  double norm = raw / mag;
  if (norm < 1.5) return mag;
  if (norm < 3.5) return 2 * mag;
  if (norm < 7.5) return 5 * mag;
  return 10 * mag;
}

/* padded range; a degenerate span is widened so a single point still gets a readable axis */
static int padded_range(const span* sp, double* lo, double* hi) {
  if (!sp->any) {
    *lo = -1;
    *hi = 1;
    return 0;
  }
  double a = sp->lo, b = sp->hi;
  double mag = fmax(fabs(a), fabs(b));
  double min_range = mag > 0 ? 1e-9 * mag : 1.0;
  if (b - a < min_range) {
    double half = mag > 0 ? fmax(0.1 * mag, min_range) : 0.5;
    double mid = 0.5 * (a + b);
    a = mid - half;
    b = mid + half;
  }
  double pad = PAD_FRACTION * (b - a);
  *lo = a - pad;
  *hi = b + pad;
  return isfinite(*lo) && isfinite(*hi) && isfinite(*hi - *lo) ? 0 : -1;
}

/* ------------------------------------------------------------------------------------------- */
/* frame                                                                                        */

/* 0, or why not: FRAME_BAD_SIZE, FRAME_BAD_RANGE */
enum { FRAME_BAD_SIZE = 1, FRAME_BAD_RANGE = 2 };

static int frame_from_spec(const svi_plot_spec* spec, plot_frame* f) {
  memset(f, 0, sizeof(*f));
  if (!spec || spec->width < 0 || spec->height < 0 || spec->width > MAX_SIDE ||
      spec->height > MAX_SIDE) {
    return FRAME_BAD_SIZE;
  }
  f->width = spec->width ? spec->width : DEFAULT_WIDTH;
  f->height = spec->height ? spec->height : DEFAULT_HEIGHT;

  span sx = {0, 0, 0}, sy = {0, 0, 0};
  spans_add_points(&sx, &sy, spec->cloud, spec->ncloud);
  spans_add_points(&sx, &sy, spec->path, spec->npath);
  if (spec->has_pre) spans_add_points(&sx, &sy, spec->pre, 1);
  if (spec->series) {
    for (int k = 0; k < spec->nseries; k++) {
      spans_add_points(&sx, &sy, spec->series[k].pts, spec->series[k].npts);
    }
  }
  if (padded_range(&sx, &f->x0, &f->x1) || padded_range(&sy, &f->y0, &f->y1)) {
    return FRAME_BAD_RANGE;
  }
  f->xstep = nice_step(f->x1 - f->x0, 7);
  f->ystep = nice_step(f->y1 - f->y0, 7);
  // subnormal ranges underflow the step; refuse rather than loop over ticks forever
  if (!(f->xstep > 0 && (f->x1 - f->x0) / f->xstep < 100 && f->ystep > 0 &&
        (f->y1 - f->y0) / f->ystep < 100)) {
    return FRAME_BAD_RANGE;
  }

  // fonts and margins follow the smaller of the two scale factors so text never crowds the plot
  f->s = fmin(f->width / (double)DEFAULT_WIDTH, f->height / (double)DEFAULT_HEIGHT);
  f->s = fmin(fmax(f->s, 0.6), 4.0);
  double s = f->s;
  f->fs_title = 19 * s;
  f->fs_label = 16 * s;
  f->fs_tick = 13.5 * s;
  f->fs_legend = 14 * s;
  f->fs_footer = 12.5 * s;

  double top = spec->title ? 2.9 * f->fs_title : 1.6 * f->fs_tick;
  double bottom = 10 * s + 1.6 * f->fs_tick + (spec->xlabel ? 2.0 * f->fs_label : 0) +
                  (spec->footer ? 2.2 * f->fs_footer : 0) + 8 * s;
  double left = 12 * s + 4.6 * f->fs_tick + (spec->ylabel ? 2.0 * f->fs_label : 0);
  double right = 2.4 * f->fs_tick;
  f->left = left;
  f->top = top;
  f->w = f->width - left - right;
  f->h = f->height - top - bottom;
  if (f->w < 20 || f->h < 20) return FRAME_BAD_SIZE;   /* no room left for the plot */
  f->sx = f->w / (f->x1 - f->x0);
  f->sy = f->h / (f->y1 - f->y0);
  return 0;
}

static void frame_map(const plot_frame* f, double x, double y, double* px, double* py) {
  *px = f->left + (x - f->x0) * f->sx;
  *py = f->top + f->h - (y - f->y0) * f->sy;
}

void svi_plot_data_to_pixel(const svi_plot_spec* spec, double x, double y, double* px,
                            double* py) {
  plot_frame f;
  if (frame_from_spec(spec, &f)) {
    *px = *py = NAN;
    return;
  }
  frame_map(&f, x, y, px, py);
}

/* ------------------------------------------------------------------------------------------- */
/* occupancy grid                                                                               */

static int occupancy_create(occupancy* g, const plot_frame* f) {
  // cells grow with large canvases so the dot count (and vector file size) stays bounded
  g->size = CELL * fmax(1.0, f->s);
  g->gw = (int)ceil(f->w / g->size) + 1;
  g->gh = (int)ceil(f->h / g->size) + 1;
  g->used = calloc((size_t)g->gw * (size_t)g->gh, 1);
  return g->used ? 0 : -1;
}

/* cell index of a pixel, -1 outside the plot (tested in double so huge values cannot overflow) */
static long cell_index(const occupancy* g, const plot_frame* f, double px, double py) {
  double cx = (px - f->left) / g->size, cy = (py - f->top) / g->size;
  if (!(cx >= 0 && cy >= 0 && cx < g->gw && cy < g->gh)) return -1;
  return (long)cy * g->gw + (long)cx;
}

/* occupied cells inside a pixel box: how much data a legend placed there would hide */
static long occupied_in_box(const occupancy* g, const plot_frame* f, box b) {
  int cx0 = (int)fmax(0, floor((b.x0 - f->left) / g->size));
  int cy0 = (int)fmax(0, floor((b.y0 - f->top) / g->size));
  int cx1 = (int)fmin(g->gw - 1, ceil((b.x1 - f->left) / g->size));
  int cy1 = (int)fmin(g->gh - 1, ceil((b.y1 - f->top) / g->size));
  long n = 0;
  for (int cy = cy0; cy <= cy1; cy++) {
    const uint8_t* row = g->used + (long)cy * g->gw;
    for (int cx = cx0; cx <= cx1; cx++) n += row[cx] != 0;
  }
  return n;
}

/* ------------------------------------------------------------------------------------------- */
/* text                                                                                         */

static void set_font(cairo_t* cr, double size, int bold) {
  cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL,
                         bold ? CAIRO_FONT_WEIGHT_BOLD : CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr, size);
}

static double text_width(cairo_t* cr, const char* s) {
  cairo_text_extents_t e;
  cairo_text_extents(cr, s, &e);
  return e.x_advance;
}

/* draws s with its box anchored at (x, y): ha/va 0 = left/top, 0.5 = centre, 1 = right/bottom.
 * Vertical placement uses the font's ascent/descent, not the glyphs, so labels share a baseline */
static void show_text(cairo_t* cr, const char* s, double x, double y, double ha, double va) {
  cairo_font_extents_t fe;
  cairo_font_extents(cr, &fe);
  double w = text_width(cr, s);
  double hgt = fe.ascent + fe.descent;
  cairo_move_to(cr, x - ha * w, y - va * hgt + fe.ascent);
  cairo_show_text(cr, s);
}

/* tick label with enough decimals for the step, a true minus sign and no "-0" */
static void format_tick(char* buf, size_t len, double v, double step) {
  if (fabs(v) < 1e-9 * step) v = 0;
  int dec = step >= 1 ? 0 : (int)ceil(-log10(step) - 1e-9);
  if (dec > 12) dec = 12;
  char tmp[64];
  if (fabs(v) >= 1e6 || (v != 0 && fabs(v) < 1e-4 && dec > 8)) {
    snprintf(tmp, sizeof(tmp), "%.3g", v);
  } else {
    snprintf(tmp, sizeof(tmp), "%.*f", dec, v);
  }
  if (tmp[0] == '-') {
    snprintf(buf, len, "\xe2\x88\x92%s", tmp + 1);
  } else {
    snprintf(buf, len, "%s", tmp);
  }
}

/* ------------------------------------------------------------------------------------------- */
/* marks                                                                                        */

static double clamp01(double v) {
  return v >= 0 ? (v <= 1 ? v : 1) : 0;   /* NaN -> 0 */
}

/* thinned dots: one per occupancy cell, drawn at the first point that reaches the cell */
static void draw_dots(cairo_t* cr, const plot_frame* f, occupancy* g, uint8_t bit,
                      const svi_plot_pt* p, long n, double radius, double grey) {
  if (!p || n <= 0) return;
  cairo_set_source_rgb(cr, grey, grey, grey);
  long pending = 0;
  for (long i = 0; i < n; i++) {
    if (!finite_pt(p + i)) continue;
    double px, py;
    frame_map(f, p[i].x, p[i].y, &px, &py);
    long c = cell_index(g, f, px, py);
    if (c < 0 || (g->used[c] & bit)) continue;
    g->used[c] |= bit;
    cairo_new_sub_path(cr);
    cairo_arc(cr, px, py, radius, 0, TWO_PI);
    if (++pending == FILL_BATCH) {
      cairo_fill(cr);
      pending = 0;
    }
  }
  if (pending) cairo_fill(cr);
}

/* marker outline path; the shapes are sized to look equally heavy */
static void marker_path(cairo_t* cr, int shape, double x, double y, double r) {
  switch (shape) {
  case 1: {
    double a = 0.886 * r;   /* square of the circle's area */
    cairo_rectangle(cr, x - a, y - a, 2 * a, 2 * a);
    break;
  }
  case 2: {
    double R = 1.3 * r;
    cairo_move_to(cr, x, y - R);
    cairo_line_to(cr, x + 0.866 * R, y + 0.5 * R);
    cairo_line_to(cr, x - 0.866 * R, y + 0.5 * R);
    cairo_close_path(cr);
    break;
  }
  case 3: {
    double R = 1.25 * r;
    cairo_move_to(cr, x, y - R);
    cairo_line_to(cr, x + R, y);
    cairo_line_to(cr, x, y + R);
    cairo_line_to(cr, x - R, y);
    cairo_close_path(cr);
    break;
  }
  case 4: {
    double a = 0.95 * r;
    cairo_move_to(cr, x - a, y - a);
    cairo_line_to(cr, x + a, y + a);
    cairo_move_to(cr, x - a, y + a);
    cairo_line_to(cr, x + a, y - a);
    break;
  }
  default:
    cairo_new_sub_path(cr);
    cairo_arc(cr, x, y, r, 0, TWO_PI);
    break;
  }
}

/* filled marker with a darker rim; the cross is stroked over a white halo so it reads on grey */
static void draw_marker(cairo_t* cr, const svi_plot_series* se, double x, double y, double r,
                        double s) {
  double red = clamp01(se->r), green = clamp01(se->g), blue = clamp01(se->b);
  cairo_new_path(cr);
  marker_path(cr, se->shape, x, y, r);
  if (se->shape == 4) {
    cairo_set_line_cap(cr, CAIRO_LINE_CAP_ROUND);
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_set_line_width(cr, 0.55 * r + 2.4 * s);
    cairo_stroke_preserve(cr);
    cairo_set_source_rgb(cr, red, green, blue);
    cairo_set_line_width(cr, 0.55 * r);
    cairo_stroke(cr);
    cairo_set_line_cap(cr, CAIRO_LINE_CAP_BUTT);
    return;
  }
  cairo_set_source_rgb(cr, red, green, blue);
  cairo_fill_preserve(cr);
  cairo_set_source_rgb(cr, 0.55 * red, 0.55 * green, 0.55 * blue);
  cairo_set_line_width(cr, 1.3 * s);
  cairo_set_line_join(cr, CAIRO_LINE_JOIN_MITER);
  cairo_stroke(cr);
}

static void draw_pre_marker(cairo_t* cr, double x, double y, double r, double s) {
  cairo_new_path(cr);
  cairo_arc(cr, x, y, r, 0, TWO_PI);
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_fill_preserve(cr);
  cairo_set_source_rgb(cr, 0, 0, 0);
  cairo_set_line_width(cr, 1.8 * s);
  cairo_stroke(cr);
}

/* ------------------------------------------------------------------------------------------- */
/* axes                                                                                         */

static void draw_zero_lines(cairo_t* cr, const plot_frame* f) {
  double dash[2] = {6 * f->s, 4 * f->s};
  cairo_save(cr);
  cairo_set_dash(cr, dash, 2, 0);
  cairo_set_line_width(cr, 1.1 * f->s);
  cairo_set_source_rgb(cr, 0.42, 0.42, 0.42);
  double px, py;
  frame_map(f, 0, 0, &px, &py);
  if (f->x0 < 0 && f->x1 > 0) {
    double x = round(px) + 0.5;   /* on a pixel centre: crisp 1-px line */
    cairo_move_to(cr, x, f->top);
    cairo_line_to(cr, x, f->top + f->h);
  }
  if (f->y0 < 0 && f->y1 > 0) {
    double y = round(py) + 0.5;
    cairo_move_to(cr, f->left, y);
    cairo_line_to(cr, f->left + f->w, y);
  }
  cairo_stroke(cr);
  cairo_restore(cr);
}

/* frame, ticks and tick labels; returns the widest y tick label so the y label can clear it */
static double draw_axes(cairo_t* cr, const plot_frame* f) {
  double s = f->s, tick = 6 * s;
  cairo_set_source_rgb(cr, 0.15, 0.15, 0.15);
  cairo_set_line_width(cr, 1.2 * s);
  cairo_rectangle(cr, f->left, f->top, f->w, f->h);
  cairo_stroke(cr);

  set_font(cr, f->fs_tick, 0);
  char buf[80];
  double bottom = f->top + f->h;
  for (double k = ceil(f->x0 / f->xstep - 1e-9); k * f->xstep <= f->x1 + 1e-9 * f->xstep;
       k++) {
    double v = k * f->xstep, px, py;
    frame_map(f, v, f->y0, &px, &py);
    cairo_move_to(cr, px, bottom);
    cairo_line_to(cr, px, bottom + tick);
    cairo_stroke(cr);
    format_tick(buf, sizeof(buf), v, f->xstep);
    show_text(cr, buf, px, bottom + tick + 3 * s, 0.5, 0);
  }
  double widest = 0;
  for (double k = ceil(f->y0 / f->ystep - 1e-9); k * f->ystep <= f->y1 + 1e-9 * f->ystep;
       k++) {
    double v = k * f->ystep, px, py;
    frame_map(f, f->x0, v, &px, &py);
    cairo_move_to(cr, f->left, py);
    cairo_line_to(cr, f->left - tick, py);
    cairo_stroke(cr);
    format_tick(buf, sizeof(buf), v, f->ystep);
    show_text(cr, buf, f->left - tick - 4 * s, py, 1, 0.5);
    widest = fmax(widest, text_width(cr, buf));
  }
  return widest;
}

static void draw_labels(cairo_t* cr, const plot_frame* f, const svi_plot_spec* spec,
                        double ytick_width) {
  double s = f->s;
  cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
  if (spec->title) {
    // centred on the plot; a title too long for that is centred on the canvas and shrunk to fit
    set_font(cr, f->fs_title, 1);
    double room = f->width - 16 * s, tw = text_width(cr, spec->title), cx = f->left + 0.5 * f->w;
    if (tw > 2 * fmin(cx, f->width - cx) - 16 * s) {
      cx = 0.5 * f->width;
      if (tw > room) set_font(cr, f->fs_title * fmax(0.6, room / tw), 1);
    }
    show_text(cr, spec->title, cx, 0.9 * f->fs_title, 0.5, 0);
  }
  set_font(cr, f->fs_label, 0);
  double below_ticks = f->top + f->h + 6 * s + 3 * s + 1.3 * f->fs_tick + 0.5 * f->fs_label;
  if (spec->xlabel) {
    show_text(cr, spec->xlabel, f->left + 0.5 * f->w, below_ticks, 0.5, 0);
  }
  if (spec->ylabel) {
    double x = f->left - 6 * s - 4 * s - ytick_width - 0.7 * f->fs_label;
    x = fmax(x, 0.6 * f->fs_label + 2 * s);
    cairo_save(cr);
    cairo_translate(cr, x, f->top + 0.5 * f->h);
    cairo_rotate(cr, -0.25 * TWO_PI);
    show_text(cr, spec->ylabel, 0, 0, 0.5, 0.5);
    cairo_restore(cr);
  }
  if (spec->footer) {
    set_font(cr, f->fs_footer, 0);
    cairo_set_source_rgb(cr, 0.35, 0.35, 0.35);
    show_text(cr, spec->footer, f->left + 0.5 * f->w, f->height - 6 * s, 0.5, 1);
  }
}

/* ------------------------------------------------------------------------------------------- */
/* legend and pre-impact label                                                                  */

enum { ENTRY_CLOUD, ENTRY_PATH, ENTRY_SERIES };

typedef struct {
  int kind;
  const char* label;
  const svi_plot_series* series;
} legend_entry;

static int any_finite(const svi_plot_pt* p, long n) {
  if (!p) return 0;
  for (long i = 0; i < n; i++) {
    if (finite_pt(p + i)) return 1;
  }
  return 0;
}

/* series and pre-impact markers within r of a pixel box */
static long markers_in_box(const plot_frame* f, const svi_plot_spec* spec, box b, double r) {
  long n = 0;
  double px, py;
  for (int k = 0; spec->series && k < spec->nseries; k++) {
    const svi_plot_series* se = spec->series + k;
    for (int i = 0; se->pts && i < se->npts; i++) {
      if (!finite_pt(se->pts + i)) continue;
      frame_map(f, se->pts[i].x, se->pts[i].y, &px, &py);
      n += px > b.x0 - r && px < b.x1 + r && py > b.y0 - r && py < b.y1 + r;
    }
  }
  if (spec->has_pre && spec->pre && finite_pt(spec->pre)) {
    frame_map(f, spec->pre->x, spec->pre->y, &px, &py);
    n += px > b.x0 - r && px < b.x1 + r && py > b.y0 - r && py < b.y1 + r;
  }
  return n;
}

/* what a box placed there would hide; covering a law's prediction is far worse than covering
 * cloud dots */
static long box_cost(const plot_frame* f, const occupancy* g, const svi_plot_spec* spec, box b,
                     double marker_r) {
  return occupied_in_box(g, f, b) + 100000L * markers_in_box(f, spec, b, marker_r);
}

static int boxes_overlap(box a, box b) {
  return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;
}

/* s cut to whole UTF-8 characters with a trailing ellipsis so that it is at most maxw wide (in
 * buf); s itself when it fits */
static const char* fit_text(cairo_t* cr, const char* s, double maxw, char* buf, size_t len) {
  if (text_width(cr, s) <= maxw) return s;
  size_t n = strlen(s);
  if (n > len - 4) n = len - 4;
  for (;;) {
    while (n > 0 && ((unsigned char)s[n] & 0xC0) == 0x80) n--;   /* not inside a character */
    size_t k = n;
    while (k > 0 && (s[k - 1] == ' ' || s[k - 1] == ',' || s[k - 1] == ':')) k--;
    memcpy(buf, s, k);
    memcpy(buf + k, "\xe2\x80\xa6", 4);   /* U+2026 and the terminator */
    if (n == 0 || text_width(cr, buf) <= maxw) return buf;
    n--;
  }
}

/* legend in the least occupied corner of the plot, top-right on ties; returns its box.  A label
 * wider than the plot leaves room for is cut with an ellipsis (the box never outgrows the plot) */
static box draw_legend(cairo_t* cr, const plot_frame* f, const occupancy* g,
                       const svi_plot_spec* spec, double marker_r, int* drawn) {
  legend_entry e[64];
  int n = 0;
  if (any_finite(spec->cloud, spec->ncloud)) {
    e[n++] = (legend_entry){ENTRY_CLOUD, "Set-valued (ours)", NULL};
  }
  if (any_finite(spec->path, spec->npath)) {
    e[n++] = (legend_entry){ENTRY_PATH, "Intermediate velocities", NULL};
  }
  for (int k = 0; spec->series && k < spec->nseries && n < 64; k++) {
    if (spec->series[k].label) {
      e[n++] = (legend_entry){ENTRY_SERIES, spec->series[k].label, spec->series + k};
    }
  }
  box none = {0, 0, 0, 0};
  *drawn = 0;
  if (!n) return none;

  double s = f->s, pad = 10 * s, row = 1.55 * f->fs_legend, sample = 26 * s;
  set_font(cr, f->fs_legend, 0);
  double inset = 10 * s;
  double maxw = fmax(f->w - 2 * inset - (pad + sample + 6 * s + pad), 40 * s);
  char fit[64][256];
  double tw = 0;
  for (int i = 0; i < n; i++) {
    e[i].label = fit_text(cr, e[i].label, maxw, fit[i], sizeof(fit[i]));
    tw = fmax(tw, text_width(cr, e[i].label));
  }
  double bw = pad + sample + 6 * s + tw + pad, bh = 2 * pad + n * row - 0.3 * f->fs_legend;

  // candidates: top-right, top-left, bottom-right, bottom-left
  double xs[4] = {f->left + f->w - inset - bw, f->left + inset, f->left + f->w - inset - bw,
                  f->left + inset};
  double ys[4] = {f->top + inset, f->top + inset, f->top + f->h - inset - bh,
                  f->top + f->h - inset - bh};
  int best = 0;
  long best_cost = -1;
  for (int c = 0; c < 4; c++) {
    box b = {xs[c], ys[c], xs[c] + bw, ys[c] + bh};
    long cost = box_cost(f, g, spec, b, marker_r);
    if (best_cost < 0 || cost < best_cost) {
      best = c;
      best_cost = cost;
    }
  }
  box b = {xs[best], ys[best], xs[best] + bw, ys[best] + bh};

  cairo_rectangle(cr, b.x0, b.y0, bw, bh);
  cairo_set_source_rgba(cr, 1, 1, 1, 0.92);
  cairo_fill_preserve(cr);
  cairo_set_source_rgb(cr, 0.7, 0.7, 0.7);
  cairo_set_line_width(cr, 1.0 * s);
  cairo_stroke(cr);

  for (int i = 0; i < n; i++) {
    double cy = b.y0 + pad + (i + 0.5) * row - 0.15 * f->fs_legend;
    double cx = b.x0 + pad + 0.5 * sample;
    if (e[i].kind == ENTRY_SERIES) {
      draw_marker(cr, e[i].series, cx, cy, 0.85 * marker_r, s);
    } else {
      // a tight hexagonal cluster of dots: reads as "a set of samples" rather than one point
      double grey = e[i].kind == ENTRY_CLOUD ? CLOUD_GREY : PATH_GREY, d = 1.7 * s;
      cairo_set_source_rgb(cr, grey, grey, grey);
      static const double off[7][2] = {{0, 0},  {-2, 0}, {2, 0}, {-1, -1.7},
                                       {1, -1.7}, {-1, 1.7}, {1, 1.7}};
      for (int j = 0; j < 7; j++) {
        cairo_new_sub_path(cr);
        cairo_arc(cr, cx + off[j][0] * d, cy + off[j][1] * d, 1.8 * s, 0, TWO_PI);
      }
      cairo_fill(cr);
    }
    cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
    show_text(cr, e[i].label, b.x0 + pad + sample + 6 * s, cy, 0, 0.5);
  }
  *drawn = 1;
  return b;
}

/* "pre-impact" next to its marker, on whichever side hides the least and stays in the plot */
static void draw_pre_label(cairo_t* cr, const plot_frame* f, const occupancy* g,
                           const svi_plot_spec* spec, double px, double py, double r,
                           box legend, int has_legend) {
  const char* text = "pre-impact";
  set_font(cr, f->fs_tick, 0);
  cairo_font_extents_t fe;
  cairo_font_extents(cr, &fe);
  double w = text_width(cr, text), h = fe.ascent + fe.descent, gap = r + 5 * f->s;
  // candidates: right, left, above, below, then the four diagonals
  double bx[8] = {px + gap, px - gap - w, px - 0.5 * w, px - 0.5 * w,
                  px + 0.7 * gap, px - 0.7 * gap - w, px + 0.7 * gap, px - 0.7 * gap - w};
  double by[8] = {py - 0.5 * h, py - 0.5 * h, py - gap - h, py + gap,
                  py - 0.7 * gap - h, py - 0.7 * gap - h, py + 0.7 * gap, py + 0.7 * gap};
  int best = -1;
  long best_cost = 0;
  for (int c = 0; c < 8; c++) {
    box b = {bx[c], by[c], bx[c] + w, by[c] + h};
    if (b.x0 < f->left || b.x1 > f->left + f->w || b.y0 < f->top || b.y1 > f->top + f->h) {
      continue;
    }
    long cost = box_cost(f, g, spec, b, r) + (has_legend && boxes_overlap(b, legend)) * 1000000L;
    if (best < 0 || cost < best_cost) {
      best = c;
      best_cost = cost;
    }
  }
  if (best < 0) best = 0;   /* nowhere fits: clipping to the plot keeps it tidy */
  cairo_set_source_rgb(cr, 0, 0, 0);
  show_text(cr, text, bx[best], by[best], 0, 0);
}

/* ------------------------------------------------------------------------------------------- */
/* output                                                                                       */

static int ends_with_ci(const char* s, const char* ext) {
  size_t n = strlen(s), m = strlen(ext);
  if (n < m) return 0;
  for (size_t i = 0; i < m; i++) {
    char c = s[n - m + i];
    if (c >= 'A' && c <= 'Z') c = (char)(c - 'A' + 'a');
    if (c != ext[i]) return 0;
  }
  return 1;
}

static int format_of(const char* path) {
  if (ends_with_ci(path, ".png")) return FMT_PNG;
  if (ends_with_ci(path, ".svg")) return FMT_SVG;
  if (ends_with_ci(path, ".pdf")) return FMT_PDF;
  return -1;
}

static cairo_surface_t* create_surface(const char* path, int fmt, int w, int h) {
  switch (fmt) {
#if CAIRO_HAS_SVG_SURFACE
  case FMT_SVG:
    return cairo_svg_surface_create(path, w, h);
#endif
#if CAIRO_HAS_PDF_SURFACE
  case FMT_PDF:
    return cairo_pdf_surface_create(path, w, h);
#endif
  case FMT_PNG:
    return cairo_image_surface_create(CAIRO_FORMAT_RGB24, w, h);
  default:
    return NULL;
  }
}

/* markers of earlier series within d pixels of (px, py).  Laws often agree exactly (e.g. both
 * sequential orders); each later coincident marker is drawn smaller so all stay visible */
static int markers_below(const plot_frame* f, const svi_plot_spec* spec, int k, double px,
                         double py, double d) {
  int n = 0;
  for (int j = 0; j < k; j++) {
    const svi_plot_series* se = spec->series + j;
    for (int i = 0; se->pts && i < se->npts; i++) {
      if (!finite_pt(se->pts + i)) continue;
      double qx, qy;
      frame_map(f, se->pts[i].x, se->pts[i].y, &qx, &qy);
      if (fabs(qx - px) < d && fabs(qy - py) < d) {
        n++;
        break;   /* one per series: a series' own repeated points do not shrink later ones twice */
      }
    }
  }
  return n;
}

/* the whole figure; layering is path < zero lines < cloud < markers < legend, then the axes and
 * text outside the plot */
static void draw_figure(cairo_t* cr, const plot_frame* f, occupancy* g,
                        const svi_plot_spec* spec) {
  double s = f->s, marker_r = 7 * s;
  cairo_set_source_rgb(cr, 1, 1, 1);
  cairo_paint(cr);

  cairo_save(cr);
  cairo_rectangle(cr, f->left, f->top, f->w, f->h);
  cairo_clip(cr);
  double dot = DOT_RADIUS * fmax(1.0, s);   /* never thinner than the cells it stands for */
  draw_dots(cr, f, g, BIT_PATH, spec->path, spec->npath, dot, PATH_GREY);
  // post-impact sets often lie on a boundary (a contact that stays has v_n = 0 exactly), so the
  // boundaries go under the cloud; over the path, which would otherwise hide them
  draw_zero_lines(cr, f);
  draw_dots(cr, f, g, BIT_CLOUD, spec->cloud, spec->ncloud, dot, CLOUD_GREY);
  double prx = NAN, pry = NAN;
  if (spec->has_pre && spec->pre && finite_pt(spec->pre)) {
    frame_map(f, spec->pre->x, spec->pre->y, &prx, &pry);
    draw_pre_marker(cr, prx, pry, 0.9 * marker_r, s);
  }
  long nseries_pts = 0;   /* the coincidence test is quadratic: only for marker-sized counts */
  for (int k = 0; spec->series && k < spec->nseries; k++) {
    if (spec->series[k].pts && spec->series[k].npts > 0) nseries_pts += spec->series[k].npts;
  }
  for (int k = 0; spec->series && k < spec->nseries; k++) {
    const svi_plot_series* se = spec->series + k;
    for (int i = 0; se->pts && i < se->npts; i++) {
      if (!finite_pt(se->pts + i)) continue;
      double px, py;
      frame_map(f, se->pts[i].x, se->pts[i].y, &px, &py);
      int under = nseries_pts <= 4096 ? markers_below(f, spec, k, px, py, 0.5 * marker_r) : 0;
      draw_marker(cr, se, px, py, marker_r * pow(0.68, under), s);
    }
  }
  int has_legend;
  box legend = draw_legend(cr, f, g, spec, marker_r, &has_legend);
  if (isfinite(prx)) draw_pre_label(cr, f, g, spec, prx, pry, marker_r, legend, has_legend);
  cairo_restore(cr);

  double ytick_width = draw_axes(cr, f);
  draw_labels(cr, f, spec, ytick_width);
}

int svi_plot_normal_plane(const char* path, const svi_plot_spec* spec) {
  if (!path || !spec) {
    fprintf(stderr, "svi_plot: NULL %s\n", path ? "spec" : "path");
    return -1;
  }
  int fmt = format_of(path);
  if (fmt < 0) {
    fprintf(stderr, "svi_plot: %s: unknown extension (want .png, .svg or .pdf)\n", path);
    return -1;
  }
  plot_frame f;
  int bad = frame_from_spec(spec, &f);
  if (bad == FRAME_BAD_SIZE) {
    fprintf(stderr, "svi_plot: %s: unusable size %dx%d\n", path, spec->width, spec->height);
    return -1;
  }
  if (bad) {
    fprintf(stderr, "svi_plot: %s: data range too large or too small to draw\n", path);
    return -1;
  }
  occupancy g;
  if (occupancy_create(&g, &f)) {
    fprintf(stderr, "svi_plot: %s: out of memory\n", path);
    return -1;
  }
  cairo_surface_t* surf = create_surface(path, fmt, f.width, f.height);
  if (!surf || cairo_surface_status(surf) != CAIRO_STATUS_SUCCESS) {
    const char* why = surf ? cairo_status_to_string(cairo_surface_status(surf))
                           : "format not built into cairo";
    fprintf(stderr, "svi_plot: %s: %s\n", path, why);
    if (surf) cairo_surface_destroy(surf);
    free(g.used);
    return -1;
  }
  cairo_t* cr = cairo_create(surf);
  draw_figure(cr, &f, &g, spec);
  cairo_status_t st = cairo_status(cr);
  cairo_destroy(cr);
  free(g.used);

  if (st == CAIRO_STATUS_SUCCESS && fmt == FMT_PNG) st = cairo_surface_write_to_png(surf, path);
  cairo_surface_finish(surf);   /* vector formats write and close the file here */
  if (st == CAIRO_STATUS_SUCCESS) st = cairo_surface_status(surf);
  cairo_surface_destroy(surf);
  if (st != CAIRO_STATUS_SUCCESS) {
    fprintf(stderr, "svi_plot: %s: %s\n", path, cairo_status_to_string(st));
    return -1;
  }
  return 0;
}
