/* test_plot.c -- svi_plot: files are written, readable, the right size, and marks land where
 * svi_plot_data_to_pixel says they do; bad data and bad paths fail softly.
 *
 * usage: test_plot [tmpdir]   (default /tmp)
 */
#include "svi_plot.h"
#include "svi_test.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cairo.h>

static long file_size(const char* path) {
  FILE* fp = fopen(path, "rb");
  if (!fp) return -1;
  long n = fseek(fp, 0, SEEK_END) == 0 ? ftell(fp) : -1;
  fclose(fp);
  return n;
}

/* deterministic uniform in [0,1) (xorshift), so the picture is the same on every run */
static double uniform(uint64_t* state) {
  *state ^= *state << 13;
  *state ^= *state >> 7;
  *state ^= *state << 17;
  return (double)(*state >> 11) / 9007199254740992.0;
}

/* rgb of pixel (x, y), or -1 if outside */
static int pixel_rgb(cairo_surface_t* img, int x, int y, int rgb[3]) {
  int w = cairo_image_surface_get_width(img), h = cairo_image_surface_get_height(img);
  if (x < 0 || y < 0 || x >= w || y >= h) return -1;
  cairo_surface_flush(img);
  const unsigned char* data = cairo_image_surface_get_data(img);
  uint32_t p;
  memcpy(&p, data + (size_t)y * cairo_image_surface_get_stride(img) + 4 * (size_t)x, 4);
  rgb[0] = (p >> 16) & 255;
  rgb[1] = (p >> 8) & 255;
  rgb[2] = p & 255;
  return 0;
}

static int is_coloured(const int c[3]) {
  int mx = c[0], mn = c[0];
  for (int i = 1; i < 3; i++) {
    mx = c[i] > mx ? c[i] : mx;
    mn = c[i] < mn ? c[i] : mn;
  }
  return mx - mn > 60;   /* grey and white have equal channels */
}

/* every pixel of a (2r+1)^2 patch around (x, y) is pure white */
static int patch_white(cairo_surface_t* img, double x, double y, int r) {
  for (int dy = -r; dy <= r; dy++) {
    for (int dx = -r; dx <= r; dx++) {
      int c[3];
      if (pixel_rgb(img, (int)x + dx, (int)y + dy, c)) return 0;
      if (c[0] != 255 || c[1] != 255 || c[2] != 255) return 0;
    }
  }
  return 1;
}

int main(int argc, char** argv) {
  const char* dir = argc > 1 ? argv[1] : "/tmp";
  char png[1024], svg[1024], pdf[1024], tmp[1024];
  snprintf(png, sizeof(png), "%s/test_plot.png", dir);
  snprintf(svg, sizeof(svg), "%s/test_plot.svg", dir);
  snprintf(pdf, sizeof(pdf), "%s/test_plot.pdf", dir);

  // synthetic set: a vertical segment x = 0.2 and a disc around (1.5, 1.5)
  enum { NCLOUD = 20000 };
  static svi_plot_pt cloud[NCLOUD];
  uint64_t rng = 0x9e3779b97f4a7c15ULL;
  for (int i = 0; i < NCLOUD / 2; i++) {
    cloud[i] = (svi_plot_pt){0.2, 0.2 + 1.6 * uniform(&rng)};
  }
  for (int i = NCLOUD / 2; i < NCLOUD; i++) {
    double r = 0.3 * sqrt(uniform(&rng)), a = 6.283185307179586 * uniform(&rng);
    cloud[i] = (svi_plot_pt){1.5 + r * cos(a), 1.5 + r * sin(a)};
  }
  svi_plot_pt ap[2] = {{1.5, 1.5}, {0.2, 1.0}};
  svi_plot_pt seq[1] = {{1.0, 0.3}};
  svi_plot_series series[2] = {
    {"Anitescu-Potra (simultaneous)", 0.85, 0.15, 0.15, 1, ap, 2},
    {"Sequential (A then B)", 0.1, 0.35, 0.85, 2, seq, 1},
  };
  svi_plot_pt pre = {-0.5, -0.4};
  svi_plot_spec spec = {0};
  spec.title = "test";
  spec.xlabel = "contact A normal velocity (m/s)";
  spec.ylabel = "contact B normal velocity (m/s)";
  spec.width = 640;
  spec.height = 520;
  spec.cloud = cloud;
  spec.ncloud = NCLOUD;
  spec.pre = &pre;
  spec.has_pre = 1;
  spec.series = series;
  spec.nseries = 2;
  spec.footer = "20000 samples";

  // 1. PNG: written, readable, requested size, markers coloured, empty region white
  remove(png);
  CHECK(svi_plot_normal_plane(png, &spec) == 0, "PNG draw failed");
  CHECK(file_size(png) > 0, "no PNG at %s", png);
  cairo_surface_t* img = cairo_image_surface_create_from_png(png);
  int ok = cairo_surface_status(img) == CAIRO_STATUS_SUCCESS;
  CHECK(ok, "PNG does not read back: %s", cairo_status_to_string(cairo_surface_status(img)));
  if (ok) {
    CHECK(cairo_image_surface_get_width(img) == 640 && cairo_image_surface_get_height(img) == 520,
          "size %dx%d, want 640x520", cairo_image_surface_get_width(img),
          cairo_image_surface_get_height(img));
    for (int k = 0; k < 2; k++) {
      const svi_plot_series* se = series + k;
      for (int i = 0; i < se->npts; i++) {
        double px, py;
        int c[3] = {0, 0, 0};
        svi_plot_data_to_pixel(&spec, se->pts[i].x, se->pts[i].y, &px, &py);
        int in = pixel_rgb(img, (int)px, (int)py, c) == 0;
        CHECK(in && is_coloured(c), "series %d point %d at (%.1f, %.1f): rgb %d %d %d", k, i, px,
              py, c[0], c[1], c[2]);
        // and it is the series colour, not just any colour
        int want[3] = {(int)(255 * se->r), (int)(255 * se->g), (int)(255 * se->b)};
        int close = 1;
        for (int j = 0; j < 3; j++) close &= abs(c[j] - want[j]) < 40;
        CHECK(close, "series %d point %d: rgb %d %d %d, want about %d %d %d", k, i, c[0], c[1],
              c[2], want[0], want[1], want[2]);
      }
    }
    // a cloud dot is grey
    double px, py;
    int c[3] = {0, 0, 0};
    svi_plot_data_to_pixel(&spec, 0.2, 0.5, &px, &py);
    pixel_rgb(img, (int)floor(px), (int)floor(py), c);
    CHECK(!is_coloured(c) && c[0] < 200, "cloud at (%.1f, %.1f) not grey: %d %d %d", px, py,
          c[0], c[1], c[2]);
    // far from data, markers, zero lines and the legend corners
    svi_plot_data_to_pixel(&spec, 1.2, 0.8, &px, &py);
    CHECK(patch_white(img, px, py, 4), "region at (%.1f, %.1f) not white", px, py);
    // the pre-impact marker is hollow: white centre, dark ring
    svi_plot_data_to_pixel(&spec, pre.x, pre.y, &px, &py);
    CHECK(patch_white(img, px, py, 1), "pre-impact centre not white");
    int ring = 0;
    for (int dx = 3; dx < 12; dx++) {
      pixel_rgb(img, (int)px + dx, (int)py, c);
      ring |= c[0] < 80 && c[1] < 80 && c[2] < 80;
    }
    CHECK(ring, "no dark ring around pre-impact point");
  }
  cairo_surface_destroy(img);

  // 2. data_to_pixel: ranges pad the data, y grows upward
  {
    double ax, ay, bx, by;
    svi_plot_data_to_pixel(&spec, -0.5, -0.4, &ax, &ay);
    svi_plot_data_to_pixel(&spec, 1.8, 1.8, &bx, &by);
    CHECK(ax > 0 && bx < 640 && ay < 520 && by > 0 && bx > ax && by < ay,
          "mapping (%.1f,%.1f) (%.1f,%.1f)", ax, ay, bx, by);
    svi_plot_data_to_pixel(NULL, 0, 0, &ax, &ay);
    CHECK(isnan(ax) && isnan(ay), "NULL spec should map to NaN");
  }

  // 3. SVG and PDF
  remove(svg);
  remove(pdf);
  CHECK(svi_plot_normal_plane(svg, &spec) == 0 && file_size(svg) > 1000, "SVG");
  CHECK(svi_plot_normal_plane(pdf, &spec) == 0 && file_size(pdf) > 1000, "PDF");

  // 4. NaN and infinite points are skipped
  {
    static svi_plot_pt bad[NCLOUD];
    memcpy(bad, cloud, sizeof(bad));
    for (int i = 0; i < NCLOUD; i += 7) bad[i].x = NAN;
    for (int i = 3; i < NCLOUD; i += 11) bad[i].y = INFINITY;
    svi_plot_pt nan_pts[2] = {{NAN, 1}, {1, -INFINITY}};
    svi_plot_pt nan_pre = {NAN, NAN};
    svi_plot_series s2[2] = {series[0], {"all NaN", NAN, 0.5, 2.0, 9, nan_pts, 2}};
    svi_plot_spec b = spec;
    b.cloud = bad;
    b.path = nan_pts;
    b.npath = 2;
    b.pre = &nan_pre;
    b.series = s2;
    snprintf(tmp, sizeof(tmp), "%s/test_plot_nan.png", dir);
    CHECK(svi_plot_normal_plane(tmp, &b) == 0, "NaN data");
  }

  // 5. empty cloud; nothing at all; single point; NULL pointers with counts
  {
    svi_plot_spec b = spec;
    b.cloud = NULL;
    b.ncloud = 0;
    snprintf(tmp, sizeof(tmp), "%s/test_plot_empty.png", dir);
    CHECK(svi_plot_normal_plane(tmp, &b) == 0, "empty cloud");
    svi_plot_spec z = {0};
    CHECK(svi_plot_normal_plane(tmp, &z) == 0, "all-empty spec");
    svi_plot_pt one = {0.3, 0.3};
    z.cloud = &one;
    z.ncloud = 1;
    CHECK(svi_plot_normal_plane(tmp, &z) == 0, "single point");
    z.cloud = NULL;
    z.ncloud = 5;
    z.series = NULL;
    z.nseries = 3;
    z.has_pre = 1;
    CHECK(svi_plot_normal_plane(tmp, &z) == 0, "NULL arrays with counts");
    // extreme magnitudes must not hang or crash: either drawn or refused
    svi_plot_pt extreme[2] = {{1e-320, 0}, {3e-320, 1e-321}};
    z.has_pre = 0;
    z.cloud = extreme;
    z.ncloud = 2;
    int rc = svi_plot_normal_plane(tmp, &z);
    CHECK(rc == 0 || rc == -1, "subnormal data");
    extreme[0] = (svi_plot_pt){-1.7e308, 1.7e308};
    extreme[1] = (svi_plot_pt){1.7e308, -1.7e308};
    rc = svi_plot_normal_plane(tmp, &z);
    CHECK(rc == 0 || rc == -1, "huge data");
  }

  // 6. errors: unwritable path, unknown extension, NULL spec, bad size
  {
    CHECK(svi_plot_normal_plane("/nonexistent-dir-svi/x.png", &spec) == -1, "unwritable png");
    CHECK(svi_plot_normal_plane("/nonexistent-dir-svi/x.pdf", &spec) == -1, "unwritable pdf");
    CHECK(svi_plot_normal_plane("/nonexistent-dir-svi/x.svg", &spec) == -1, "unwritable svg");
    snprintf(tmp, sizeof(tmp), "%s/test_plot.jpg", dir);
    CHECK(svi_plot_normal_plane(tmp, &spec) == -1, "unknown extension");
    CHECK(svi_plot_normal_plane(png, NULL) == -1, "NULL spec");
    svi_plot_spec b = spec;
    b.width = -3;
    CHECK(svi_plot_normal_plane(png, &b) == -1, "negative width");
  }

  return svi_test_finish();
}
