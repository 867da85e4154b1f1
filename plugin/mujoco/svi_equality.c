/* svi_equality.c -- equality constraints in the impact law: the event's problem in coordinates
 * that satisfy them (docs/theory.md section 6, "Equality constraints").
 *
 * MuJoCo's equality rows on the event's dofs (a weld, a connect, coupled joints or tendons),
 * J_e v = 0, are bilateral: at the impact they take whatever impulse keeps them.  With N an
 * orthonormal basis of null(J_e) (nve x nr) every admissible velocity is v = N y, and the
 * constrained impact is the unconstrained one in y:
 *   M_r = N^T M N,   J_r = J N,   y- = M_r^-1 N^T M v-   (the M-orthogonal projection of v-)
 * W_r = J_r M_r^-1 J_r^T = J (M^-1 - M^-1 J_e^T (J_e M^-1 J_e^T)^-1 J_e M^-1) J^T is the
 * constrained Delassus matrix, so every law sees the constrained system; v+ = N y+ satisfies the
 * rows exactly, and K(y) = 1/2 y^T M_r y = K(N y).  N is Q's last nve - r columns in a Householder
 * QR with column pivoting of J_e^T (Golub & Van Loan, Algorithm 5.4.1), r its numerical rank
 * (redundant rows, as closed loops make, drop out).  Nothing is allocated here: the buffers are
 * made at init for models with equality constraints.
 */
#include <math.h>
#include <string.h>

#include "svi/svi_mujoco.h"
#include "svi_internal.h"
#include "svi_mujoco_internal.h"

/* Householder QR with column pivoting of A^T, A's ne rows of length n in A (overwritten: column k
 * of A^T holds reflector k's vector from entry k on), beta[k] = 2 / (v_k^T v_k); returns the rank
 * r (|R_kk| > 1e-10 |R_00|).  nrm: ne scratch. */
static int householder_qr(int n, int ne, double* A, double* beta, double* nrm) {
  int kmax = ne < n ? ne : n, r = 0;
  double r00 = 0;
  for (int c = 0; c < ne; c++) {
    double s = 0;
    for (int i = 0; i < n; i++) s += A[(size_t)c * n + i] * A[(size_t)c * n + i];
    nrm[c] = s;
  }
  for (int k = 0; k < kmax; k++) {
    int p = k;
    for (int c = k + 1; c < ne; c++) if (nrm[c] > nrm[p]) p = c;
    if (p != k) {   /* swap columns k and p of A^T (rows of A) */
      for (int i = 0; i < n; i++) {
        double t = A[(size_t)k * n + i];
        A[(size_t)k * n + i] = A[(size_t)p * n + i];
        A[(size_t)p * n + i] = t;
      }
      double t = nrm[k]; nrm[k] = nrm[p]; nrm[p] = t;
    }
    double* x = A + (size_t)k * n;
    double s = 0;
    for (int i = k; i < n; i++) s += x[i] * x[i];
    double alpha = x[k] >= 0 ? -sqrt(s) : sqrt(s);
    if (k == 0) r00 = fabs(alpha);
    if (!(fabs(alpha) > 1e-10 * r00) || r00 == 0) break;
    x[k] -= alpha;   /* v = x - alpha e_k, v^T v = 2 (s - alpha x_k) */
    double vv = 0;
    for (int i = k; i < n; i++) vv += x[i] * x[i];
    beta[k] = 2 / vv;
    for (int c = k + 1; c < ne; c++) {
      double* y = A + (size_t)c * n;
      double t = 0;
      for (int i = k; i < n; i++) t += x[i] * y[i];
      t *= beta[k];
      for (int i = k; i < n; i++) y[i] -= t * x[i];
      double q = 0;   /* the remaining norm, recomputed (no downdating) */
      for (int i = k + 1; i < n; i++) q += y[i] * y[i];
      nrm[c] = q;
    }
    r = k + 1;
  }
  return r;
}

int svi_equality_reduce(svi_instance* in, int nc, int nt, int ngroup, double* removed) {
  int n = in->nve, ne = 0;
  *removed = 0;
  for (int i = 0; i < in->nside; i++) ne += in->side_eq[i];
  if (ne == 0) return 0;
  /* group by group (one group: every event dof): a group's equality rows on its own dofs, each
   * scaled to unit norm (the rank test compares rows), their null space in its columns of N; a
   * group without them keeps its dofs as they are (identity columns, flagged in eqid) */
  double *N = in->eqN, *A = in->eqA, *x = in->eqtmp;
  int *map = in->eqmap, *id = in->eqid, nr = 0;
  memset(N, 0, sizeof(double) * (size_t)n * n);
  for (int g = 0; g < ngroup; g++) {
    int ng = 0, nrow = 0;
    for (int j = 0; j < n; j++) if (ngroup == 1 || in->gdof[j] == g) map[ng++] = j;
    for (int i = 0; i < in->nside; i++) {
      if (!in->side_eq[i]) continue;
      const double* row = in->Jside + (size_t)i * n;
      double s = 0;
      for (int a = 0; a < ng; a++) s += row[map[a]] * row[map[a]];
      if (!(s > 0)) continue;   /* another group's row */
      double sc = 1 / sqrt(s);
      for (int a = 0; a < ng; a++) A[(size_t)nrow * ng + a] = sc * row[map[a]];
      nrow++;
    }
    if (nrow == 0) {
      for (int a = 0; a < ng; a++) {
        N[(size_t)map[a] * n + nr] = 1;   /* N's row stride is n until compacted below */
        id[nr++] = map[a];
      }
      continue;
    }
    int r = householder_qr(ng, nrow, A, in->eqbeta, in->eqnrm);
    if (ng - r <= 0) return -1;
    for (int j = r; j < ng; j++) {   /* Q e_j: Q = H_0 ... H_{r-1}, applied from the last */
      memset(x, 0, sizeof(double) * (size_t)ng);
      x[j] = 1;
      for (int k = r - 1; k >= 0; k--) {
        const double* v = A + (size_t)k * ng;
        double t = 0;
        for (int i = k; i < ng; i++) t += v[i] * x[i];
        t *= in->eqbeta[k];
        for (int i = k; i < ng; i++) x[i] -= t * v[i];
      }
      for (int a = 0; a < ng; a++) N[(size_t)map[a] * n + nr] = x[a];
      id[nr++] = -1 - g;
    }
  }
  for (int i = 0; i < n; i++)   /* compact N to n x nr (row i's entries move left, never right) */
    memmove(N + (size_t)i * nr, N + (size_t)i * n, sizeof(double) * (size_t)nr);
  /* the new coordinates' groups (gdof over them) */
  if (ngroup > 1)
    for (int c = 0; c < nr; c++) in->eqlab[c] = id[c] >= 0 ? in->gdof[id[c]] : -1 - id[c];
  /* MN = M N, then M_r = N^T M N (symmetrised) into in->M; between identity columns the sums have
   * one nonzero term, so those entries are M's own, bit for bit */
  double *M = in->M, *MN = in->eqMN, *L = in->eqL;
  for (int i = 0; i < n; i++)
    for (int c = 0; c < nr; c++) {
      double t = 0;
      for (int k = 0; k < n; k++) t += M[(size_t)i * n + k] * N[(size_t)k * nr + c];
      MN[(size_t)i * nr + c] = t;
    }
  double ke = 0;   /* the energy of v- before (removed: what the projection takes off) */
  for (int i = 0; i < n; i++) {
    double t = 0;
    for (int k = 0; k < n; k++) t += M[(size_t)i * n + k] * in->ve[k];
    ke += in->ve[i] * t;
  }
  ke *= 0.5;
  for (int a = 0; a < nr; a++)
    for (int b = 0; b <= a; b++) {
      double t = 0;
      for (int i = 0; i < n; i++) t += N[(size_t)i * nr + a] * MN[(size_t)i * nr + b];
      L[(size_t)a * nr + b] = L[(size_t)b * nr + a] = t;
    }
  for (int a = 0; a < nr; a++)
    for (int b = 0; b < nr; b++) M[(size_t)a * nr + b] = L[(size_t)a * nr + b];
  if (!svi_cholesky(nr, L)) return -1;
  in->np = nr;
  svi_equality_project(in, in->ve, x);   /* y- = M_r^-1 N^T M v- (identity coordinates: v-'s own) */
  memcpy(in->ve, x, sizeof(double) * (size_t)nr);
  double kr = 0;
  for (int a = 0; a < nr; a++) {
    double t = 0;
    for (int b = 0; b < nr; b++) t += M[(size_t)a * nr + b] * x[b];
    kr += x[a] * t;
  }
  *removed = ke - 0.5 * kr;
  /* J_r = J N, row by row in place (row k's output ends before row k + 1's input starts) */
  int rows[2] = {nc, nc * nt};
  double* J[2] = {in->Jn, in->Jt};
  for (int q = 0; q < 2; q++)
    for (int k = 0; k < rows[q]; k++) {
      const double* row = J[q] + (size_t)k * n;
      for (int c = 0; c < nr; c++) {
        double t = 0;
        for (int i = 0; i < n; i++) t += row[i] * N[(size_t)i * nr + c];
        x[c] = t;
      }
      memcpy(J[q] + (size_t)k * nr, x, sizeof(double) * (size_t)nr);
    }
  if (ngroup > 1) memcpy(in->gdof, in->eqlab, sizeof(int) * (size_t)nr);
  return 1;
}

void svi_equality_expand(const svi_instance* in, const double* y, double* v) {
  int n = in->nve, nr = in->np;
  for (int i = 0; i < n; i++) {
    double t = 0;
    for (int c = 0; c < nr; c++) t += in->eqN[(size_t)i * nr + c] * y[c];
    v[i] = t;
  }
}

void svi_equality_project(svi_instance* in, const double* a, double* y) {
  int n = in->nve, nr = in->np;
  double* t = in->eqtmp2;
  for (int c = 0; c < nr; c++) {
    double s = 0;
    for (int i = 0; i < n; i++) s += in->eqMN[(size_t)i * nr + c] * a[i];
    t[c] = s;
  }
  svi_cholesky_solve(nr, in->eqL, t);
  for (int c = 0; c < nr; c++) if (in->eqid[c] >= 0) t[c] = a[in->eqid[c]];   /* exactly a's own */
  memcpy(y, t, sizeof(double) * (size_t)nr);
}
