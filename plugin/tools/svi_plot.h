/* svi_plot.h -- figures of post-impact velocities in the plane of two contact-normal velocities.
 *
 * The kind of figure Halm & Posa (2021) use to compare impact laws: the sampled post-impact set
 * as a grey cloud, optionally the intermediate velocities of the impact process in light grey,
 * the pre-impact velocity as a hollow circle, and the predictions of other laws as coloured
 * markers with a legend.  x = normal velocity of contact A, y = normal velocity of contact B
 * (m/s, J_n v > 0 separating), so the dashed lines x = 0 and y = 0 are the separation
 * boundaries.  Drawing is done with cairo; the module keeps no state between calls.
 */
#ifndef SVI_PLOT_H_
#define SVI_PLOT_H_

#ifdef __cplusplus
extern "C" {
#endif

typedef struct { double x, y; } svi_plot_pt;

typedef struct {
  const char* label;                  /* legend text, e.g. "Anitescu-Potra (simultaneous)";
                                         NULL = no legend entry */
  double r, g, b;                     /* colour 0..1 */
  int shape;                          /* 0 circle, 1 square, 2 triangle, 3 diamond, 4 cross */
  const svi_plot_pt* pts; int npts;   /* one or more points (e.g. several AP solutions) */
} svi_plot_series;

typedef struct {
  const char* title; const char* xlabel; const char* ylabel;   /* each may be NULL */
  int width, height;                  /* pixels, default 900x760 when 0 */
  const svi_plot_pt* cloud; long ncloud;      /* post-impact set samples: grey */
  const svi_plot_pt* path;  long npath;       /* optional intermediate velocities (light grey),
                                                 may be 0 */
  const svi_plot_pt* pre; int has_pre;        /* pre-impact point, black hollow circle +
                                                 "pre-impact" */
  const svi_plot_series* series; int nseries; /* markers drawn on top with a legend */
  const char* footer;     /* optional one-line text under the plot (e.g. "2^14 samples,
                             2.7 LCPs/sample") */
} svi_plot_spec;

/* Writes PNG if path ends in .png, SVG if .svg, PDF if .pdf (case-insensitive; for SVG and PDF
 * width and height are in points).  Returns 0 on success, -1 on error (message to stderr).
 * Never crashes on empty/NaN data: non-finite points are skipped.  Axis ranges cover every
 * finite point of cloud, path, pre and series with 8% padding.  The cloud is thinned to one dot
 * per 1.5-pixel cell, so 10^6 points draw in well under a second. */
int svi_plot_normal_plane(const char* path, const svi_plot_spec* spec);

/* Pixel coordinates (origin top-left, y down) at which svi_plot_normal_plane(path, spec) puts
 * the data point (x, y); the drawing code uses the same mapping.  Rescans the data to find the
 * axis ranges, so it costs O(ncloud + npath).  *px = *py = NaN if spec is unusable. */
void svi_plot_data_to_pixel(const svi_plot_spec* spec, double x, double y, double* px,
                            double* py);

#ifdef __cplusplus
}
#endif

#endif  /* SVI_PLOT_H_ */
