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
 * rows exactly, and K(y) = 1/2 y^T M_r y = K(N y).  Group by group, over the dofs T the rows touch,
 * N's columns are Q's last |T| - r in a Householder QR with column pivoting of the rows' transpose
 * (Golub & Van Loan, Algorithm 5.4.1; rows scaled to unit norm, r the numerical rank, so the
 * redundant rows of closed loops drop out); every other dof keeps its unit column, stored as the
 * dof alone, so N is applied at the cost of the touched dofs.  Nothing is allocated here: the
 * buffers are made at init for models with equality constraints.
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

/* N's column c applied: sum_i x[i * stride] N[i][c] (a unit vector's one entry, or the rows the
 * equality rows touch) */
static double col_dot(const svi_instance* in, int c, const double* x, int stride) {
  if (in->eqid[c] >= 0) return x[(size_t)in->eqid[c] * stride];
  const int* col = in->eqcol + 3 * c;
  const int* rows = in->eqrows + col[0];
  const double* val = in->eqN + col[2];
  double t = 0;
  for (int a = 0; a < col[1]; a++) t += x[(size_t)rows[a] * stride] * val[a];
  return t;
}

int svi_equality_reduce(svi_instance* in, const mjModel* m, int nc, int nt, int ngroup, double ke,
                        double* removed) {
  int n = in->nve, ne = 0;
  *removed = 0;
  for (int i = 0; i < in->nside; i++) ne += in->side_eq[i];
  if (ne == 0) return 0;
  /* group by group (one group: every event dof): the dofs T its equality rows touch, the rows on
   * them scaled to unit norm (the rank test compares rows), their null space in N's columns over
   * T; every other dof keeps its unit column (flagged in eqid), so its entries of M_r and J_r
   * are the unreduced ones, bit for bit, and so are its y- where its tree has no touched dof
   * (eqexact) */
  double *A = in->eqA, *x = in->eqtmp;
  int *map = in->eqmap, *id = in->eqid, *lab = in->eqlab, *touch = in->eqrows, nr = 0, nt0 = 0, nval = 0;
  for (int g = 0; g < ngroup; g++) {
    int ng = 0, nrow = 0, t0 = nt0;
    for (int j = 0; j < n; j++) if (ngroup == 1 || in->gdof[j] == g) map[ng++] = j;
    for (int a = 0; a < ng; a++) {   /* T: the group's dofs some equality row touches */
      int hit = 0;
      for (int i = 0; i < in->nside && !hit; i++) hit = in->side_eq[i] && in->Jside[(size_t)i * n + map[a]] != 0;
      if (hit) touch[nt0++] = map[a];
      else { id[nr] = map[a]; lab[nr++] = g; }
    }
    int nT = nt0 - t0;
    if (nT == 0) continue;
    const int* T = touch + t0;
    for (int i = 0; i < in->nside; i++) {
      if (!in->side_eq[i]) continue;
      const double* row = in->Jside + (size_t)i * n;
      double s = 0;
      for (int a = 0; a < nT; a++) s += row[T[a]] * row[T[a]];
      if (!(s > 0)) continue;   /* another group's row */
      double sc = 1 / sqrt(s);
      for (int a = 0; a < nT; a++) A[(size_t)nrow * nT + a] = sc * row[T[a]];
      nrow++;
    }
    int r = householder_qr(nT, nrow, A, in->eqbeta, in->eqnrm);
    if (nT - r <= 0 && ng - nT <= 0) return -1;   /* the group cannot move */
    for (int j = r; j < nT; j++) {   /* Q e_j: Q = H_0 ... H_{r-1}, applied from the last */
      memset(x, 0, sizeof(double) * (size_t)nT);
      x[j] = 1;
      for (int k = r - 1; k >= 0; k--) {
        const double* v = A + (size_t)k * nT;
        double t = 0;
        for (int i = k; i < nT; i++) t += v[i] * x[i];
        t *= in->eqbeta[k];
        for (int i = k; i < nT; i++) x[i] -= t * v[i];
      }
      memcpy(in->eqN + nval, x, sizeof(double) * (size_t)nT);
      int* col = in->eqcol + 3 * nr;
      col[0] = t0;
      col[1] = nT;
      col[2] = nval;
      nval += nT;
      id[nr] = -1;
      lab[nr++] = g;
    }
  }
  if (nr <= 0) return -1;
  /* A unit column's y- is v-'s own entry only where M_r does not couple it to a touched dof's
   * column: M is block diagonal by kinematic tree, so where its tree has no touched dof.  A free
   * base under a legged robot's tendon rows is coupled: v-'s drift off the rows (J_e v- != 0,
   * at most 1e-3 of the energy, else refused) moves its y- too, and keeping v-'s own entry there
   * would make N y- no projection (more energy than the M-orthogonal one, or even than v-). */
  for (int c = 0; c < nr; c++) {
    int j = id[c], exact = j >= 0;
    for (int a = 0; exact && a < nt0; a++) exact = m->dof_treeid[in->edof[touch[a]]] != m->dof_treeid[in->edof[j]];
    in->eqexact[c] = exact;
  }
  /* MN = M N (n x nr), then M_r = N^T M N (symmetrised) into in->M */
  double *M = in->M, *MN = in->eqMN, *L = in->eqL;
  for (int i = 0; i < n; i++)
    for (int c = 0; c < nr; c++) MN[(size_t)i * nr + c] = col_dot(in, c, M + (size_t)i * n, 1);
  for (int a = 0; a < nr; a++)
    for (int b = 0; b <= a; b++) L[(size_t)a * nr + b] = L[(size_t)b * nr + a] = col_dot(in, a, MN + b, nr);
  for (int a = 0; a < nr; a++)
    for (int b = 0; b < nr; b++) M[(size_t)a * nr + b] = L[(size_t)a * nr + b];
  if (!svi_cholesky(nr, L)) return -1;
  in->np = nr;
  svi_equality_project(in, in->ve, x);   /* y- = M_r^-1 N^T M v- (eqexact's columns: v-'s own) */
  memcpy(in->ve, x, sizeof(double) * (size_t)nr);
  *removed = ke - svi_problem_energy(M, nr, x);   /* what the projection took off */
  /* J_r = J N, row by row in place (row k's output ends before row k + 1's input starts) */
  int rows[2] = {nc, nc * nt};
  double* J[2] = {in->Jn, in->Jt};
  for (int q = 0; q < 2; q++)
    for (int k = 0; k < rows[q]; k++) {
      const double* row = J[q] + (size_t)k * n;
      for (int c = 0; c < nr; c++) x[c] = col_dot(in, c, row, 1);
      memcpy(J[q] + (size_t)k * nr, x, sizeof(double) * (size_t)nr);
    }
  if (ngroup > 1) memcpy(in->gdof, lab, sizeof(int) * (size_t)nr);
  return 1;
}

void svi_equality_expand(const svi_instance* in, const double* y, double* v) {
  int n = in->nve, nr = in->np;
  memset(v, 0, sizeof(double) * (size_t)n);
  for (int c = 0; c < nr; c++) {   /* a unit column writes its dof alone: v's entry is y's, bit for bit */
    if (in->eqid[c] >= 0) { v[in->eqid[c]] = y[c]; continue; }
    const int* col = in->eqcol + 3 * c;
    const int* rows = in->eqrows + col[0];
    const double* val = in->eqN + col[2];
    for (int a = 0; a < col[1]; a++) v[rows[a]] += val[a] * y[c];
  }
}

void svi_equality_project(svi_instance* in, const double* a, double* y) {
  int n = in->nve, nr = in->np;
  double* t = in->eqtmp2;
  for (int c = 0; c < nr; c++) {   /* (M N)^T a */
    double s = 0;
    for (int i = 0; i < n; i++) s += in->eqMN[(size_t)i * nr + c] * a[i];
    t[c] = s;
  }
  svi_cholesky_solve(nr, in->eqL, t);
  for (int c = 0; c < nr; c++) if (in->eqexact[c]) t[c] = a[in->eqid[c]];   /* exactly a's own */
  memcpy(y, t, sizeof(double) * (size_t)nr);
}
