/* svi_enum.c -- all solutions of a small LCP by enumerating complementary bases.
 *
 * For every index set a (z_a basic, w_rest basic) solve M_aa z_a = -q_a; accept when z_a >= 0 and
 * w = M z + q >= 0 off a (within a relative tolerance).  Bases with a (numerically) singular
 * M_aa are skipped, as in Remy's brute-force solver used by Halm & Posa.  O(2^n n^3): for tests
 * and the "all simultaneous outcomes" comparison only.  No heap allocation.
 */
#include <math.h>
#include <string.h>

#include "svi/svi_core.h"

#define ENUM_NMAX 24

/* Solve A x = b in place (k x k, row-major, leading dimension ENUM_NMAX), partial pivoting.
 * Returns 0 if the pivot ratio signals singularity. */
static int solve_small(int k, double A[][ENUM_NMAX], double* b, double sing_tol) {
  for (int c = 0; c < k; c++) {
    int p = c;
    for (int i = c + 1; i < k; i++) if (fabs(A[i][c]) > fabs(A[p][c])) p = i;
    if (fabs(A[p][c]) <= sing_tol) return 0;
    if (p != c) {
      for (int j = 0; j < k; j++) { double t = A[c][j]; A[c][j] = A[p][j]; A[p][j] = t; }
      double t = b[c]; b[c] = b[p]; b[p] = t;
    }
    for (int i = c + 1; i < k; i++) {
      double f = A[i][c] / A[c][c];
      if (f == 0) continue;
      for (int j = c; j < k; j++) A[i][j] -= f * A[c][j];
      b[i] -= f * b[c];
    }
  }
  for (int c = k - 1; c >= 0; c--) {
    double s = b[c];
    for (int j = c + 1; j < k; j++) s -= A[c][j] * b[j];
    b[c] = s / A[c][c];
  }
  return 1;
}

int svi_lcp_enumerate(int n, const double* M, const double* q, double tol,
                      double* sols, int max_sols, int* count) {
  if (!M || !q || !count || n <= 0 || n > ENUM_NMAX || (max_sols > 0 && !sols))
    return SVI_ERR_ARG;
  for (int i = 0; i < n * n; i++) if (!isfinite(M[i])) return SVI_ERR_NONFINITE;
  for (int i = 0; i < n; i++) if (!isfinite(q[i])) return SVI_ERR_NONFINITE;
  if (tol <= 0) tol = 1e-9;

  double mnorm = 0, qnorm = 0;
  for (int i = 0; i < n; i++) {
    double s = 0;
    for (int j = 0; j < n; j++) s += fabs(M[i * n + j]);
    if (s > mnorm) mnorm = s;
    if (fabs(q[i]) > qnorm) qnorm = fabs(q[i]);
  }
  double sing_tol = 1e-12 * (mnorm > 1 ? mnorm : 1);
  *count = 0;

  double A[ENUM_NMAX][ENUM_NMAX], x[ENUM_NMAX], z[ENUM_NMAX];
  int idx[ENUM_NMAX];
  for (unsigned long mask = 0; mask < (1ul << n); mask++) {
    int k = 0;
    for (int i = 0; i < n; i++) if (mask & (1ul << i)) idx[k++] = i;
    for (int a = 0; a < k; a++) {
      for (int b = 0; b < k; b++) A[a][b] = M[idx[a] * n + idx[b]];
      x[a] = -q[idx[a]];
    }
    if (k > 0 && !solve_small(k, A, x, sing_tol)) continue;
    memset(z, 0, sizeof(double) * n);
    double zn = 0;
    for (int a = 0; a < k; a++) { z[idx[a]] = x[a]; if (fabs(x[a]) > zn) zn = fabs(x[a]); }
    double scale = 1 + qnorm + mnorm * zn;
    int ok = 1;
    for (int i = 0; i < n && ok; i++) {
      if (z[i] < -tol * scale) ok = 0;
      double wi = q[i];
      for (int j = 0; j < n; j++) wi += M[i * n + j] * z[j];
      if (wi < -tol * scale) ok = 0;
    }
    if (!ok) continue;
    for (int i = 0; i < n; i++) if (z[i] < 0) z[i] = 0;

    /* merge duplicates (degenerate solutions appear under several bases) */
    int dup = 0, stored = *count < max_sols ? *count : max_sols;
    for (int s = 0; s < stored && !dup; s++) {
      double d = 0;
      for (int i = 0; i < n; i++) d = fmax(d, fabs(sols[s * n + i] - z[i]));
      if (d <= 1e3 * tol * scale) dup = 1;
    }
    if (dup) continue;
    if (*count < max_sols) memcpy(sols + (*count) * n, z, sizeof(double) * n);
    (*count)++;
  }
  return SVI_OK;
}
