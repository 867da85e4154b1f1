/* random_reach.h -- which step outcomes random-perturbation Lemke reaches (tests only). */
#ifndef SVI_RANDOM_REACH_H_
#define SVI_RANDOM_REACH_H_
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "svi/svi_core.h"
#include "svi_internal.h"

/* Random perturbed Lemke on the Routh step (75) at contact velocity u with budget lmax, `draws`
 * draws (covering vector and signed lexicographic order by the RANDOM rule's generator,
 * svi_random_perturbation, on streams 11 and 12 of seed r): bit
 * m of the result is set when the enumerated outcome m (s->sols, n of them, from
 * svi_modes_enumerate at the same u and lmax) is reached, by its velocity change W lambda within
 * 1e-6 of the contact-speed scale. */
static unsigned long long random_reach(svi_impact* s, const double* u, const double* lmax, int n,
                                       int draws) {
  int nr = s->n_routh, nb = s->nb, nc = s->nc;
  double q[64], z[64], d[64], sg[64], du[40];
  static double dm[64][40];
  int ord[64];
  for (int m = 0; m < n && m < 64; m++) svi_matvec(nb, nb, s->W, s->sols + m * nb, dm[m]);
  memcpy(q, lmax, sizeof(double) * nc);
  memcpy(q + nc, u, sizeof(double) * nb);
  memset(q + nc + nb, 0, sizeof(double) * nc);
  svi_lcp_options o = svi_impact_lcp_options(s, NULL, 1);
  const double* A = svi_impact_routh(s);
  unsigned long long reached = 0;
  for (int r = 0; r < draws; r++) {
    svi_random_perturbation(svi_rng_key((uint64_t)r, 11), svi_rng_key((uint64_t)r, 12), 0, nr, d, sg, ord);
    if (svi_lcp_lemke_perturbed(s->lcp, nr, A, q, d, ord, sg, &o, z, NULL) < 0) continue;
    svi_matvec(nb, nb, s->W, z + nc, du);
    for (int m = 0; m < n && m < 64; m++) {
      double e = 0;
      for (int i = 0; i < nb; i++) e = fmax(e, fabs(du[i] - dm[m][i]));
      if (e <= 1e-6 * s->vscale) reached |= 1ull << m;
    }
  }
  return reached;
}

#endif  /* SVI_RANDOM_REACH_H_ */
