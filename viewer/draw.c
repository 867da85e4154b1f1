/* draw.c -- 2-D drawing in window pixels (origin bottom-left), onto the window or onto a cached
 * panel.  MuJoCo draws text with glBitmap, which software OpenGL renders slowly (a few ms for a
 * screen of text): panels whose content did not change (the inset, the HUD, the timeline) are
 * drawn once into an mjr aux buffer and then only blitted. */
#include <GL/gl.h>
#include <string.h>

#include "viewer.h"

/* the current canvas: drawing coordinates are window pixels, (ox, oy) the canvas' corner */
static int ox, oy, cw, ch;

static void canvas(int x, int y, int w, int h) { ox = x; oy = y; cw = w; ch = h; }

void vw_canvas_window(const viewer* v) { canvas(0, 0, v->uis.rect[0].width, v->uis.rect[0].height); }

/* fixed-function 2-D state for lines and quads in window pixels */
void vw_pixel_space(void) {
  glViewport(0, 0, cw, ch);
  glMatrixMode(GL_PROJECTION);
  glLoadIdentity();
  glOrtho(ox, ox + cw, oy, oy + ch, -1, 1);
  glMatrixMode(GL_MODELVIEW);
  glLoadIdentity();
  glDisable(GL_DEPTH_TEST);
  glDisable(GL_LIGHTING);
  glDisable(GL_TEXTURE_2D);
  glEnable(GL_BLEND);
  glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
}

void vw_box(double x, double y, double w, double h, float r, float g, float b, float a) {
  mjrRect rr = {(int)(x - ox + 0.5), (int)(y - oy + 0.5), (int)(w + 0.5), (int)(h + 0.5)};
  mjr_rectangle(rr, r, g, b, a);
}

int vw_text_width(const viewer* v, const char* s) {
  int w = 0;
  for (; *s; s++) if ((unsigned char)*s < 127) w += v->con.charWidth[(unsigned char)*s];
  return w;
}

/* text with its baseline-left corner at (x, y) */
void vw_text(const viewer* v, const char* s, double x, double y, float r, float g, float b) {
  glViewport(0, 0, cw, ch);
  mjr_text(mjFONT_NORMAL, s, &v->con, (float)((x - ox) / cw), (float)((y - oy) / ch), r, g, b);
}

void vw_text_right(const viewer* v, const char* s, double x, double y, float r, float g, float b) {
  vw_text(v, s, x - vw_text_width(v, s), y, r, g, b);
}

void vw_text_center(const viewer* v, const char* s, double x, double y, float r, float g, float b) {
  vw_text(v, s, x - 0.5 * vw_text_width(v, s), y, r, g, b);
}

/* FNV-1a, to key a panel's content */
unsigned long long vw_hash(unsigned long long h, const void* p, size_t n) {
  const unsigned char* c = p;
  if (!h) h = 1469598103934665603ULL;
  for (size_t i = 0; i < n; i++) { h ^= c[i]; h *= 1099511628211ULL; }
  return h;
}

/* A panel drawn by draw() into aux buffer `aux` only when its key or place changed, then blitted
 * to the window.  draw() must fill the whole rectangle (the blit copies it, opaque). */
void vw_cached_panel(viewer* v, int aux, mjrRect r, unsigned long long key, void (*draw)(viewer*, mjrRect)) {
  if (r.width <= 0 || r.height <= 0 || aux <= 0 || aux >= VW_NPANEL) return;
  key = vw_hash(key, &r, sizeof(r));
  if (key != v->panel_key[aux]) {
    if (v->con.auxWidth[aux] != r.width || v->con.auxHeight[aux] != r.height || !v->con.auxFBO[aux])
      mjr_addAux(aux, r.width, r.height, 0, &v->con);
    mjr_setAux(aux, &v->con);
    canvas(r.left, r.bottom, r.width, r.height);
    draw(v, r);
    vw_canvas_window(v);
    mjr_restoreBuffer(&v->con);
    v->panel_key[aux] = key;
    v->panel_draws++;
  }
  mjrRect src = {0, 0, r.width, r.height};
  mjr_blitAux(aux, src, r.left, r.bottom, &v->con);
}

/* A two-column text panel (MuJoCo's overlay look, opaque): titles left, values right. */
static int count_lines(const char* s) {
  int n = 1;
  for (; *s; s++) n += *s == '\n';
  return n;
}

static int widest_line(const viewer* v, const char* s) {
  int w = 0;
  char line[300];
  while (*s) {
    size_t n = strcspn(s, "\n");
    snprintf(line, sizeof(line), "%.*s", (int)n, s);
    int lw = vw_text_width(v, line);
    if (lw > w) w = lw;
    s += n + (s[n] == '\n');
  }
  return w;
}

mjrRect vw_text_panel_size(const viewer* v, const char* titles, const char* values) {
  int lh = v->con.charHeight + 6, n = count_lines(titles);
  if (count_lines(values) > n) n = count_lines(values);
  mjrRect r = {0, 0, widest_line(v, titles) + widest_line(v, values) + 36, n * lh + 10};
  return r;
}

static void text_lines(const viewer* v, const char* s, double x, double y, int lh, float c) {
  char line[300];
  while (*s) {
    size_t n = strcspn(s, "\n");
    snprintf(line, sizeof(line), "%.*s", (int)n, s);
    vw_text(v, line, x, y, c, c, c);
    y -= lh;
    s += n + (s[n] == '\n');
  }
}

void vw_text_panel(const viewer* v, mjrRect r, const char* titles, const char* values) {
  int lh = v->con.charHeight + 6;
  vw_box(r.left, r.bottom, r.width, r.height, 0.12f, 0.12f, 0.13f, 1);
  double top = r.bottom + r.height - 5 - v->con.charHeight + 3;
  text_lines(v, titles, r.left + 12, top, lh, 0.65f);
  text_lines(v, values, r.left + 24 + widest_line(v, titles), top, lh, 1.0f);
}
