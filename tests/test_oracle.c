/* test_oracle.c -- our Lemke against an independent implementation, Siconos numerics'
 * lexicographic Lemke, on the LCPs the impact laws produce. */
#include <math.h>
#include <string.h>

#include "siconos_oracle.h"
#include "svi/svi_core.h"
#include "svi_internal.h"
#include "svi_test.h"
#include "random_problem.h"

int main(void) {
  svi_siconos* so = svi_siconos_create(40);
  svi_lcp_work* w = svi_lcp_work_create(40);
  CHECK(so && w, "oracle created");
  int solved_both = 0, ours_failed = 0, siconos_failed = 0, same_v = 0, pmat_bad = 0;
  for (int t = 0; t < 3000; t++) {
    rp_problem p;
    random_impact(&p, (uint64_t)t + 31337, t % 4 == 0);
    svi_problem_def def = rp_def(&p);
    svi_impact* s = svi_impact_create(def.nv, def.nc, def.nt);
    if (svi_impact_setup(s, &def, NULL, 0) != SVI_OK) { svi_impact_destroy(s); continue; }
    int nb = s->nb, nc = s->nc, n = s->n_routh;
    double q[40], z1[40], z2[40];
    for (int i = 0; i < nc; i++) q[i] = (0.1 + rnd(t, 900 + i)) * svi_impact_reference_impulse(s);
    memcpy(q + nc, s->u0, sizeof(double) * nb);
    memset(q + nc + nb, 0, sizeof(double) * nc);
    svi_lcp_info info;
    int st1 = svi_lcp_lemke(w, n, svi_impact_routh(s), q, NULL, NULL, z1, &info);
    int st2 = svi_siconos_lemke(so, n, svi_impact_routh(s), q, z2, NULL);
    if (st2 != 0) siconos_failed++;
    if (st1 < 0 || info.residual > 1e-9) ours_failed++;
    if (st1 >= 0 && st2 == 0) {
      solved_both++;
      /* both valid; same post-step velocity when the step outcome is unique (most problems) */
      double dv = 0, scale = 1e-12 + s->vscale;
      for (int i = 0; i < nb; i++) {
        double a = 0, b = 0;
        for (int j = 0; j < nb; j++) { a += s->W[i * nb + j] * z1[nc + j]; b += s->W[i * nb + j] * z2[nc + j]; }
        dv = fmax(dv, fabs(a - b));
      }
      same_v += dv < 1e-7 * scale;
    }
    svi_impact_destroy(s);
    /* a P-matrix problem has one solution: both must return it */
    int m = 3 + t % 10;
    double M[169], qq[13];
    random_pd(m, M, (uint64_t)t + 5);
    for (int i = 0; i < m; i++) qq[i] = 2 * rnd(t, 1700 + i) - 1;
    svi_lcp_lemke(w, m, M, qq, NULL, NULL, z1, NULL);
    if (svi_siconos_lemke(so, m, M, qq, z2, NULL) == 0) {
      double d = 0;
      for (int i = 0; i < m; i++) d = fmax(d, fabs(z1[i] - z2[i]));
      if (d > 1e-8) pmat_bad++;
    }
  }
  printf("Routh step LCPs: both solved %d, ours failed %d, Siconos failed %d, same outcome %d\n",
         solved_both, ours_failed, siconos_failed, same_v);
  CHECK(ours_failed == 0, "our Lemke failed %d impact-shaped LCPs", ours_failed);
  CHECK(solved_both > 2500, "both solved %d", solved_both);
  CHECK(same_v > solved_both * 9 / 10, "same outcome on %d of %d (non-unique steps may differ)", same_v, solved_both);
  CHECK(pmat_bad == 0, "P-matrix LCPs: %d disagreements with Siconos", pmat_bad);
  svi_siconos_destroy(so);
  svi_lcp_work_destroy(w);
  return svi_test_finish();
}
