/* random_problem.h -- random impact problems of the shape the plugin produces (tests only). */
#ifndef SVI_RANDOM_PROBLEM_H_
#define SVI_RANDOM_PROBLEM_H_
#include <math.h>
#include <string.h>

#include "svi/svi_core.h"

#define RP_NV 8
#define RP_NC 6

static inline double rnd(uint64_t t, uint64_t i) { return svi_rng_uniform(12345, t, i); }

/* symmetric positive definite A^T A + 0.1 I */
static inline void random_pd(int n, double* M, uint64_t t) {
  double A[RP_NV * 2 * RP_NV * 2];
  for (int i = 0; i < n * n; i++) A[i] = 2 * rnd(t, 1000 + i) - 1;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double s = i == j ? 0.1 : 0;
      for (int k = 0; k < n; k++) s += A[k * n + i] * A[k * n + j];
      M[i * n + j] = s;
    }
}

typedef struct {
  int nv, nc, nt;
  double M[RP_NV * RP_NV], Jn[RP_NC * RP_NV], Jt[2 * RP_NC * RP_NV], mu[RP_NC], v[RP_NV];
} rp_problem;

/* nv in 2..6, nc in 1..4 (redundant: nc > nv allowed), planar nt = 1 or spatial nt = 2 (every
 * fourth), at least one contact approaching */
static inline void random_impact(rp_problem* p, uint64_t t, int redundant) {
  memset(p, 0, sizeof(*p));
  p->nv = 2 + (int)(rnd(t, 1) * 5);
  p->nc = 1 + (int)(rnd(t, 2) * 4);
  if (redundant) p->nc = p->nv + 1 < RP_NC ? p->nv + 1 : RP_NC;
  p->nt = (t % 4 == 3) ? 2 : 1;
  random_pd(p->nv, p->M, t);
  for (int i = 0; i < p->nc * p->nv; i++) p->Jn[i] = 2 * rnd(t, 2000 + i) - 1;
  for (int i = 0; i < p->nc * p->nt * p->nv; i++) p->Jt[i] = 2 * rnd(t, 3000 + i) - 1;
  for (int i = 0; i < p->nc; i++) p->mu[i] = (t % 7 == 0) ? 0 : 2 * rnd(t, 4000 + i);
  for (int i = 0; i < p->nv; i++) p->v[i] = 2 * rnd(t, 5000 + i) - 1;
  /* make contact 0 approach */
  double vn = 0, jj = 0;
  for (int k = 0; k < p->nv; k++) { vn += p->Jn[k] * p->v[k]; jj += p->Jn[k] * p->Jn[k]; }
  if (vn > -0.1) for (int k = 0; k < p->nv; k++) p->v[k] -= (vn + 0.1 + rnd(t, 6000)) * p->Jn[k] / jj;
}

static inline svi_problem_def rp_def(const rp_problem* p) {
  svi_problem_def d = {p->nv, p->nc, p->nt, p->M, p->Jn, p->Jt, p->mu, p->v};
  return d;
}
#endif
