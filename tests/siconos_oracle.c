/* siconos_oracle.c -- see siconos_oracle.h.
 *
 * Siconos numerics 4.4 usage notes (checked against the 4.4.0 sources):
 *  - SICONOS_LCP_LEMKE (200) is the lexicographic Lemke; there is no separate LEXICOLEMKE id.
 *  - We call lcp_lexicolemke() / lcp_enum() directly instead of linearComplementarity_driver():
 *    the driver adds a q >= 0 shortcut (lexicolemke has its own), an n == 1 shortcut
 *    z = -q/M that ignores the sign of M, and (filterOn) an lcp_compute_error() pass; on its
 *    shortcuts it also leaves iparam[SICONOS_IPARAM_ITER_DONE] stale.
 *  - lcp_lexicolemke writes z and w only for the variables that end up basic, so both must be
 *    zeroed before the call.
 *  - lcp_lexicolemke mallocs its (n x 2(n+1)) tableau row by row on every call; unavoidable.
 *  - lcp_enum allocates options->dWork/iWork on first use for the *current* n and never resizes:
 *    we allocate them once for nmax with lcp_enum_init().
 *  - solver_options_delete() does not free the struct itself (4.4): free() it afterwards.
 */
#include "siconos_oracle.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "LCP_Solvers.h"
#include "LinearComplementarityProblem.h"
#include "NumericsMatrix.h"
#include "NumericsVerbose.h"
#include "SolverOptions.h"
#include "lcp_cst.h"

struct svi_siconos {
  int nmax;
  int check;
  LinearComplementarityProblem* lcp;  /* owns M (dense, nmax*nmax doubles) and q (nmax) */
  SolverOptions* lemke;
  SolverOptions* enumo;
  double* w;                          /* nmax */
};

static void options_free(SolverOptions* o)
{
  if (o) {
    solver_options_delete(o);  /* frees iparam, dparam, dWork, iWork, ... but not o */
    free(o);
  }
}

void svi_siconos_destroy(svi_siconos* s)
{
  if (!s) return;
  if (s->lcp) freeLinearComplementarityProblem(s->lcp);  /* frees M->matrix0, M, q and lcp */
  options_free(s->lemke);
  options_free(s->enumo);
  free(s->w);
  free(s);
}

svi_siconos* svi_siconos_create(int nmax)
{
  if (nmax < 1 || nmax > 4096) return NULL;
  numerics_set_verbose(0);
  svi_siconos* s = (svi_siconos*)calloc(1, sizeof *s);
  if (!s) return NULL;
  s->nmax = nmax;
  s->check = 1;
  s->w = (double*)calloc((size_t)nmax, sizeof(double));
  s->lcp = newLCP();
  if (!s->w || !s->lcp) goto fail;
  s->lcp->size = nmax;
  s->lcp->M = NM_create(NM_DENSE, nmax, nmax);  /* calloc'd column-major storage */
  s->lcp->q = (double*)calloc((size_t)nmax, sizeof(double));
  if (!s->lcp->M || !s->lcp->M->matrix0 || !s->lcp->q) goto fail;

  s->lemke = solver_options_create(SICONOS_LCP_LEMKE);
  if (!s->lemke) goto fail;
  /* defaults: iparam[MAX_ITER] = 10000, PIVOTING_METHOD_TYPE = 0 => lexicographic tolerances
   * max|M_ij| * DBL_EPSILON.  Nothing to change. */

  s->enumo = solver_options_create(SICONOS_LCP_ENUM);
  if (!s->enumo) goto fail;
  s->enumo->iparam[SICONOS_LCP_IPARAM_ENUM_USE_DGELS] = 0;
  s->enumo->iparam[SICONOS_LCP_IPARAM_ENUM_MULTIPLE_SOLUTIONS] = 0;
  /* workspace for the largest size: dWork = n^2 + 3n doubles, iWork = 2n ints */
  lcp_enum_init(s->lcp, s->enumo, 1);
  if (!s->enumo->dWork || !s->enumo->iWork) goto fail;
  return s;

fail:
  svi_siconos_destroy(s);
  return NULL;
}

void svi_siconos_set_check(svi_siconos* s, int on)
{
  if (s) s->check = on != 0;
}

double svi_siconos_residual(int n, const double* M, const double* q, const double* z)
{
  double qn = 0.0, mn = 0.0, zn = 0.0, r = 0.0;
  for (int i = 0; i < n; ++i) {
    double rs = 0.0;
    for (int j = 0; j < n; ++j) rs += fabs(M[(size_t)i * n + j]);
    if (rs > mn) mn = rs;
    if (fabs(q[i]) > qn) qn = fabs(q[i]);
    if (fabs(z[i]) > zn) zn = fabs(z[i]);
  }
  double sc = 1.0;
  if (qn > sc) sc = qn;
  if (mn * zn > sc) sc = mn * zn;
  for (int i = 0; i < n; ++i) {
    double w = q[i];
    for (int j = 0; j < n; ++j) w += M[(size_t)i * n + j] * z[j];
    double m = fabs(fmin(z[i], w));
    if (-z[i] > m) m = -z[i];
    if (-w > m) m = -w;
    if (!(m <= r)) r = m;  /* also propagates NaN */
  }
  return r / sc;
}

/* Load (M row-major, q) into the Siconos problem: M^T layout = column-major with ld n. */
static void load(svi_siconos* s, int n, const double* M, const double* q)
{
  LinearComplementarityProblem* p = s->lcp;
  double* cm = p->M->matrix0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) cm[(size_t)j * n + i] = M[(size_t)i * n + j];
  memcpy(p->q, q, (size_t)n * sizeof(double));
  p->size = n;
  p->M->size0 = n;
  p->M->size1 = n;
}

int svi_siconos_lemke(svi_siconos* s, int n, const double* M, const double* q, double* z, int* iters)
{
  if (iters) *iters = 0;
  if (!s || !M || !q || !z || n < 1 || n > s->nmax) return SVI_SICONOS_ERR_ARG;
  numerics_set_verbose(0);
  load(s, n, M, q);
  memset(z, 0, (size_t)n * sizeof(double));
  memset(s->w, 0, (size_t)n * sizeof(double));
  s->lemke->iparam[SICONOS_IPARAM_ITER_DONE] = 0;
  int info = -1;
  lcp_lexicolemke(s->lcp, z, s->w, &info, s->lemke);
  if (iters) *iters = s->lemke->iparam[SICONOS_IPARAM_ITER_DONE];
  if (info == 0 && s->check && !(svi_siconos_residual(n, M, q, z) <= 1e-7))
    return SVI_SICONOS_BAD_SOLUTION;
  return info;
}

int svi_siconos_enum(svi_siconos* s, int n, const double* M, const double* q, double* z)
{
  if (!s || !M || !q || !z || n < 1 || n > s->nmax) return SVI_SICONOS_ERR_ARG;
  numerics_set_verbose(0);
  load(s, n, M, q);
  double qn = 1.0;
  for (int i = 0; i < n; ++i)
    if (fabs(q[i]) > qn) qn = fabs(q[i]);
  SolverOptions* o = s->enumo;
  o->dparam[SICONOS_DPARAM_TOL] = 1e-9 * qn;        /* basic variables >= -tol are accepted */
  o->iparam[SICONOS_LCP_IPARAM_ENUM_SEED] = 0;       /* start at "all z basic" */
  int info = 1;
  lcp_enum(s->lcp, z, s->w, &info, o);
  for (int i = 0; i < n; ++i) z[i] += 0.0;          /* -0 -> +0 (cosmetic) */
  if (info == 0 && s->check && !(svi_siconos_residual(n, M, q, z) <= 1e-7))
    return SVI_SICONOS_BAD_SOLUTION;
  return info;
}
