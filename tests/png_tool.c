/* png_tool.c -- compare screenshots in tests (cairo reads the PNGs).
 *   png_tool diff A.png B.png [x y w h]   number of pixels that differ (any channel by > 8)
 *   png_tool size A.png                   width height
 */
#include <cairo.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cairo_surface_t* load(const char* p) {
  cairo_surface_t* s = cairo_image_surface_create_from_png(p);
  if (cairo_surface_status(s) != CAIRO_STATUS_SUCCESS) { fprintf(stderr, "png_tool: cannot read %s\n", p); exit(2); }
  return s;
}

int main(int argc, char** argv) {
  if (argc >= 3 && !strcmp(argv[1], "size")) {
    cairo_surface_t* s = load(argv[2]);
    printf("%d %d\n", cairo_image_surface_get_width(s), cairo_image_surface_get_height(s));
    return 0;
  }
  if (argc < 4 || strcmp(argv[1], "diff")) { fprintf(stderr, "usage: png_tool diff A B [x y w h] | size A\n"); return 2; }
  cairo_surface_t *a = load(argv[2]), *b = load(argv[3]);
  int w = cairo_image_surface_get_width(a), h = cairo_image_surface_get_height(a);
  if (w != cairo_image_surface_get_width(b) || h != cairo_image_surface_get_height(b)) { printf("%d\n", w * h); return 0; }
  int x0 = 0, y0 = 0, x1 = w, y1 = h;
  if (argc >= 8) { x0 = atoi(argv[4]); y0 = atoi(argv[5]); x1 = x0 + atoi(argv[6]); y1 = y0 + atoi(argv[7]); }
  int sa = cairo_image_surface_get_stride(a), sb = cairo_image_surface_get_stride(b);
  const unsigned char *pa = cairo_image_surface_get_data(a), *pb = cairo_image_surface_get_data(b);
  long n = 0;
  for (int y = y0; y < y1 && y < h; y++)
    for (int x = x0; x < x1 && x < w; x++) {
      uint32_t u = ((const uint32_t*)(pa + (size_t)y * sa))[x], v = ((const uint32_t*)(pb + (size_t)y * sb))[x];
      for (int c = 0; c < 3; c++) {
        int d = (int)((u >> (8 * c)) & 255) - (int)((v >> (8 * c)) & 255);
        if (d > 8 || d < -8) { n++; break; }
      }
    }
  printf("%ld\n", n);
  return 0;
}
