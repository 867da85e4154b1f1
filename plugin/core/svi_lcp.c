/* svi_lcp.c -- dense Lemke solver with a lexicographic ratio test.
 *
 * Tableau form (Cottle, Pang & Stone, "The Linear Complementarity Problem", Sec. 4.4):
 *     w - M z - d z0 = q,   w, z, z0 >= 0,   w'z = 0.
 * The tableau T = B^-1 [ I | -M | -d | q ] is kept explicitly (n rows, 2n+2 columns), so the
 * columns of the w block hold B^-1, which the lexicographic ratio test needs: ties in the
 * minimum ratio are broken by comparing rows of [q_bar | B^-1] / a_i, equivalent to solving the
 * problem with q perturbed by (eps, eps^2, ...) -- no cycling on degenerate problems.
 *
 * The impact laws' entry (svi_lcp_lemke_prepared) runs the same path in revised form for
 * n <= PFI_NMAX: B^-1 as a product of eta matrices (one per pivot: the entering column and its
 * row), the entering column formed on demand (FTRAN), and rows of B^-1 only for the rows that tie
 * in the ratio test and only when their comparison reaches a component of a row some eta pivoted
 * on (BTRAN, pfi_lex_ties).  A pivot costs O(n k)
 * (k pivots so far) instead of the tableau's O(n^2); a path longer than PFI_KMAX pivots is
 * restarted on the tableau.
 */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "svi_internal.h"

#define PFI_NMAX SVI_PFI_NMAX
#define PFI_KMAX(n) (2 * (n) + 16)
#define LEX_ROWS 4   /* rows of B^-1 one BTRAN pass forms at most */

struct svi_lcp_work {
  int     nmax;
  int     pfi_n;   /* largest n of the product form (min(nmax, PFI_NMAX)) */
  int     ld;      /* of the current solve: n rounded up to a multiple of 4 (pfi_ld) */
  double* eta;     /* PFI_KMAX(pfi_n) + 1 columns of pfi_ld(pfi_n): eta columns (the last one
                    * refine's scratch) */
  int*    eta_row; /* their pivot rows */
  double* eta_inv; /* 1 / their pivot entries */
  double* xb;      /* pfi_ld(pfi_n): basic values */
  double* lexrow;  /* (LEX_ROWS + 1) x pfi_n: rows of B^-1 for the lexicographic test */
  int*    lexpos;  /* pfi_n, zeros between tests: 1 + a row's place in the order while free */
  int*    lexneed; /* 2 pfi_n: the tied rows whose rows of B^-1 a test needs, in their order */
  int*    cand;    /* pfi_ld(pfi_n): the rows that tie in the ratio test */
  int     neta, use_pfi;
  int     pend_r;      /* the last pivot's row whose update of xb waits for the next scan, or -1 */
  double  pend_theta;  /* and its step: xb -= theta (last eta), then xb[pend_r] = theta */
  const svi_lcp_prepared* prep;   /* of the current solve */
  double* T;       /* nmax x (2 nmax + 2) tableau */
  double* Mreg;    /* nmax x nmax regularised copy */
  int*    basis;   /* basic variable of each row: w_i = i, z_j = n + j, z0 = 2n */
  int*    first_eta; /* 2 nmax + 2 (n + 1 used): per row the first eta that pivots on it, or
                      * INT_MAX (the last entry: none, for a column's absent second row) */
  /* the product form rebuilt from the current basis (pfi_rebuild): its etas are made in T, with
   * these, then copied over the eta file's */
  int*    rb_row;    /* pfi_n: the new etas' pivot rows */
  double* rb_inv;    /* pfi_n: their reciprocal pivots */
  int*    rb_first;  /* pfi_n + 1: their first eta of each row */
  int*    rb_var;    /* pfi_n: the basic variables that need an eta (columns of -M and -d) */
  int*    rb_orow;   /* pfi_n: their rows before the rebuild */
  int*    rb_free;   /* pfi_n: the rows not yet taken by a new eta */
  int*    rb_new;    /* pfi_n: the new basis (a row's basic variable), -1 while unassigned */
  double* rb_xb;     /* pfi_n: the basic values in the new rows */
  int     rebuilds;  /* rebuilds in the current solve (svi_lcp_info.rebuilds) */
  int     no_rebuild;   /* tests only (svi_lcp_set_rebuild) */
  int     no_lexcols;   /* tests only (svi_lcp_set_lexcols) */
  int     hand_neta;    /* of the current path: svi_lcp_prepared.handover_neta, or INT_MAX */
  int     hand_entering, hand_pivots;   /* svi_lcp_handover */
  long long paths_large, rebuilds_all;   /* tests only (svi_lcp_counts): product-form paths of at
                                          * least 64 rows, rebuilds, since the work was made */
  long long lex_rows_all, lex_cols_all;  /* tests only (svi_lcp_lex_counts): rows of B^-1 formed by
                                          * BTRAN and columns by FTRAN for ties, since then */
  double* scratch; /* 3 nmax: refinement residual, basic values, kept z */
};

/* The product form's vectors (eta columns, basic values) are padded with zeros to a multiple of
 * 4 rows, so that its loops run in whole AVX2 vectors with no scalar tail: a padding row has
 * a_i = 0 in every column, so it never enters a ratio test, and it changes no other row. */
static inline int pfi_ld(int n) { return (n + 3) & ~3; }

svi_lcp_options svi_lcp_default_options(void) {
  svi_lcp_options o;
  o.max_iter = 0;
  o.piv_tol = 0;
  o.res_tol = 1e-9;
  o.regularize = 1;
  o.reg_tol = 1e-6;
  o.zunit = NULL;
  o.wunit = NULL;
  return o;
}

svi_lcp_work* svi_lcp_work_create(int nmax) {
  if (nmax <= 0) return NULL;
  svi_lcp_work* w = calloc(1, sizeof(*w));
  if (!w) return NULL;
  w->nmax = nmax;
  w->hand_neta = INT_MAX;
  int pn = nmax < PFI_NMAX ? nmax : PFI_NMAX;
  w->T = svi_alloc64(sizeof(double) * nmax * (2 * nmax + 2));
  w->Mreg = svi_alloc64(sizeof(double) * nmax * nmax);
  w->basis = malloc(sizeof(int) * nmax);
  w->first_eta = malloc(sizeof(int) * (2 * nmax + 2));
  w->scratch = svi_alloc64(sizeof(double) * 3 * nmax);
  w->pfi_n = pn;
  /* The tableau and the eta file are never live at once (a path that fills the eta file restarts
   * on the tableau), so they could share one block, 0.8 MB less at 32 spatial contacts.  They do
   * not: without this allocation the heap addresses of everything allocated after it move, and
   * that alone took the box and wall's and the compass gait's per-sample medians from 0.35 / 0.61
   * to 0.40 / 0.65 us (table 1, runs alternating with the build before), on paths that never run
   * Lemke: a cache or aliasing effect of where the pattern maps land, not of this code. */
  w->eta = svi_alloc64(sizeof(double) * (size_t)(PFI_KMAX(pn) + 1) * pfi_ld(pn));
  w->eta_row = malloc(sizeof(int) * (size_t)PFI_KMAX(pn));
  w->eta_inv = malloc(sizeof(double) * (size_t)PFI_KMAX(pn));
  w->xb = svi_alloc64(sizeof(double) * pfi_ld(pn));
  w->lexrow = svi_alloc64(sizeof(double) * (LEX_ROWS + 1) * pn);
  w->cand = malloc(sizeof(int) * pfi_ld(pn));
  w->lexpos = calloc((size_t)pn, sizeof(int));
  w->lexneed = malloc(sizeof(int) * 2 * pn);
  w->rb_row = malloc(sizeof(int) * pn);
  w->rb_inv = malloc(sizeof(double) * pn);
  w->rb_first = malloc(sizeof(int) * (pn + 1));
  w->rb_var = malloc(sizeof(int) * pn);
  w->rb_orow = malloc(sizeof(int) * pn);
  w->rb_free = malloc(sizeof(int) * pn);
  w->rb_new = malloc(sizeof(int) * pn);
  w->rb_xb = malloc(sizeof(double) * pn);
  if (!w->T || !w->Mreg || !w->basis || !w->scratch || !w->first_eta || !w->eta || !w->eta_row || !w->eta_inv || !w->xb ||
      !w->lexrow || !w->cand || !w->lexpos || !w->lexneed || !w->rb_row || !w->rb_inv || !w->rb_first ||
      !w->rb_var || !w->rb_orow || !w->rb_free || !w->rb_new || !w->rb_xb) {
    svi_lcp_work_destroy(w);
    return NULL;
  }
  return w;
}

void svi_lcp_work_destroy(svi_lcp_work* w) {
  if (!w) return;
  free(w->T);
  free(w->Mreg);
  free(w->basis);
  free(w->first_eta);
  free(w->scratch);
  free(w->eta);
  free(w->eta_row);
  free(w->eta_inv);
  free(w->xb);
  free(w->lexrow);
  free(w->cand);
  free(w->lexpos);
  free(w->lexneed);
  free(w->rb_row);
  free(w->rb_inv);
  free(w->rb_first);
  free(w->rb_var);
  free(w->rb_orow);
  free(w->rb_free);
  free(w->rb_new);
  free(w->rb_xb);
  free(w);
}

static double norm_inf_mat(int n, const double* M) {
  double r = 0;
  for (int i = 0; i < n; i++) {
    double s = 0;
    for (int j = 0; j < n; j++) s += fabs(M[i * n + j]);
    if (s > r) r = s;
  }
  return r;
}

static double norm_inf_vec(int n, const double* x) {
  double r = 0;
  for (int i = 0; i < n; i++) if (fabs(x[i]) > r) r = fabs(x[i]);
  return r;
}

/* The residual of z in a common unit, a forward error: pair i is (a, b) = (zu_i z_i, wu_i w_i),
 * w = M z + q, and the violation is taken at the worse end of [b - e, b + e], where
 * e = 4 eps wu_i (|q_i| + sum_j |M_ij z_j|) is the rounding error of computing w_i.  The rounding
 * term is what rejects a huge z whose terms cancel: its w (and the velocity built from it) is not
 * known to the tolerance even when the computed value happens to look complementary.
 * row_violation: row i's pair, z_i in units zu and w_i = q_i + M_i z in units wu (INFINITY if
 * anything is NaN). */
static double row_violation(int n, const double* Mi, double qi, const double* z, double zi, double zu,
                            double wu) {
  double wi = qi, mag = fabs(qi);
  for (int j = 0; j < n; j++) {
    double t = Mi[j] * z[j];
    wi += t;
    mag += fabs(t);
  }
  double a = zu * zi, b = wu * wi, e = 4 * DBL_EPSILON * wu * mag;
  return svi_pair_residual(a, b, e);   /* INFINITY on NaN */
}

double svi_lcp_residual_units(int n, const double* M, const double* q, const double* z,
                              const double* zu, const double* wu) {
  double r = 0;
  for (int i = 0; i < n; i++) {
    double m = row_violation(n, M + (size_t)i * n, q[i], z, z[i], zu[i], wu[i]);
    if (m > r) r = m;
  }
  return r;
}

/* Without physical units every quantity is measured against the data: z and w in units of
 * |q|_inf.  (Dividing by |M| |z| instead, as before, made the test scale with the answer, so a
 * solution with |z| = 1e14 and a violation of 357 passed.) */
double svi_lcp_residual(int n, const double* M, const double* q, const double* z) {
  double qn = norm_inf_vec(n, q);
  double u = qn > 0 ? 1.0 / qn : 1.0;
  double r = 0;
  for (int i = 0; i < n; i++) {
    double m = row_violation(n, M + (size_t)i * n, q[i], z, z[i], u, u);
    if (m > r) r = m;
  }
  return r;
}

/* M of a solve: the prepared matrix is formed on first need when the preparation left it out
 * (svi_lcp_prepared.matrix) */
static const double* need_m(const svi_lcp_work* w, const double* M) {
  return M ? M : w->prep->matrix(w->prep->ctx);
}

static double residual_of(const svi_lcp_work* w, const svi_lcp_options* o, int n, const double* M,
                          const double* q, const double* z) {
  if (w->prep && w->prep->residual) return w->prep->residual(w->prep->ctx, q, z);
  M = need_m(w, M);
  if (o->zunit && o->wunit) return svi_lcp_residual_units(n, M, q, z, o->zunit, o->wunit);
  return svi_lcp_residual(n, M, q, z);
}

/* row_i -= f row_r over [lo, hi): one contiguous run the compiler vectorises (AVX2 clone) */
SVI_SIMD static void kern_row_update(int len, double f, const double* restrict pr, double* restrict pi) {
  for (int k = 0; k < len; k++) pi[k] -= f * pr[k];
}

/* Gauss-Jordan pivot of the whole tableau on (r, c).  The update of each row runs over the
 * contiguous span of the pivot row's nonzero columns (the impact tableaux are sparse early on:
 * identity blocks, E, mu), and rows whose entry in the pivot column is 0 are skipped.  A zero of
 * the pivot row inside the span changes nothing: x - f * 0 = x. */
static void pivot(double* T, int n, int ncol, int r, int c) {
  double* pr = T + r * ncol;
  double inv = 1.0 / pr[c];
  int lo = ncol, hi = 0;
  for (int k = 0; k < ncol; k++) {
    if (pr[k] == 0) continue;
    pr[k] *= inv;
    if (k < lo) lo = k;
    hi = k + 1;
  }
  pr[c] = 1.0;
  for (int i = 0; i < n; i++) {
    if (i == r) continue;
    double* pi = T + i * ncol;
    double f = pi[c];
    if (f == 0) continue;
    kern_row_update(hi - lo, f, pr + lo, pi + lo);
    pi[c] = 0.0;
  }
}

typedef struct {
  const int* order;       /* perturbation q + sum_k eps^(k+1) sign_k e_order[k]; NULL = identity */
  const double* sign;     /* NULL = all +1 */
  svi_lazy_order* lazy;   /* order is drawn on first read, or NULL */
} perturbation;

/* Lexicographic comparison of two rows ri, rj of B^-1 (the tableau's w block, or formed by BTRAN)
 * scaled by 1/a_i, 1/a_j, in the perturbation's order and signs, after the rhs (which tied).
 * Returns <0 if row i is lexicographically smaller. */
static int lexico_cmp_from(const double* ri, const double* rj, int n, double ai, double aj, double tol,
                           const perturbation* pt, int k0) {
  svi_order_ready(pt->lazy);
  for (int k = k0; k < n; k++) {
    int c = pt->order ? pt->order[k] : k;
    double sg = pt->sign ? pt->sign[k] : 1.0;
    double x = sg * ri[c] / ai, y = sg * rj[c] / aj;
    if (x < y - tol) return -1;
    if (x > y + tol) return 1;
  }
  return 0;
}

static int lexico_cmp(const double* ri, const double* rj, int n, double ai, double aj, double tol,
                      const perturbation* pt) {
  return lexico_cmp_from(ri, rj, n, ai, aj, tol, pt, 0);
}

/* Leaving row for entering column c, lexicographic minimum ratio over rows with a_i > tol.
 * The artificial z0 leaves whenever it ties, so the path ends as early as possible. */
static int ratio_test(const double* T, const int* basis, int n, int ncol, int c, double piv_tol,
                      const perturbation* pt) {
  const int rhs = ncol - 1, z0 = 2 * n;
  double best = INFINITY;
  for (int i = 0; i < n; i++) {
    double a = T[i * ncol + c];
    if (a > piv_tol) {
      double t = T[i * ncol + rhs] / a;
      if (t < best) best = t;
    }
  }
  if (best == INFINITY) return -1;
  double tie = 1e-11 * (1 + fabs(best));
  int r = -1;
  double ar = 0;
  for (int i = 0; i < n; i++) {
    double a = T[i * ncol + c];
    if (a <= piv_tol || T[i * ncol + rhs] / a > best + tie) continue;
    if (basis[i] == z0) return i;
    if (r < 0 || lexico_cmp(T + i * ncol, T + r * ncol, n, a, ar, SVI_LEX_TOL, pt) < 0) {
      r = i;
      ar = a;
    }
  }
  return r;
}

/* Lemke's path from the ray z0 -> inf.  Returns status; z holds the solution on success. */
static int lemke_path(svi_lcp_work* w, int n, const double* M, const double* q, const double* d,
                      const perturbation* pt, int max_iter, double piv_tol, double* z,
                      int* pivots) {
  const int ncol = 2 * n + 2, rhs = ncol - 1, z0 = 2 * n;
  double* T = w->T;
  int* basis = w->basis;

  for (int i = 0; i < n; i++) {
    double* ti = T + i * ncol;
    memset(ti, 0, sizeof(double) * n);
    ti[i] = 1.0;
    for (int j = 0; j < n; j++) ti[n + j] = -M[i * n + j];
    ti[z0] = d ? -d[i] : -1.0;
    ti[rhs] = q[i];
    basis[i] = i;
  }

  /* first pivot: z0 enters where q_i / d_i is (lexicographically) most negative */
  int r = -1;
  double best = INFINITY, dr = 1;
  for (int i = 0; i < n; i++) {
    double di = -T[i * ncol + z0];
    double t = q[i] / di;
    if (r < 0 || t < best - 1e-11 * (1 + fabs(best)) ||
        (t <= best + 1e-11 * (1 + fabs(best)) && lexico_cmp(T + i * ncol, T + r * ncol, n, di, dr, SVI_LEX_TOL, pt) < 0)) {
      if (t < best) best = t;
      r = i;
      dr = di;
    }
  }
  int leaving = basis[r];
  pivot(T, n, ncol, r, z0);
  basis[r] = z0;
  int it = 1;

  for (;;) {
    int entering = leaving < n ? leaving + n : leaving - n;   /* complement */
    if (it >= max_iter) { *pivots = it; return SVI_ERR_MAXITER; }
    r = ratio_test(T, basis, n, ncol, entering, piv_tol, pt);
    if (r < 0) { *pivots = it; return SVI_ERR_RAY; }
    leaving = basis[r];
    pivot(T, n, ncol, r, entering);
    basis[r] = entering;
    it++;
    if (leaving == z0) break;
  }
  *pivots = it;

  memset(z, 0, sizeof(double) * n);
  for (int i = 0; i < n; i++) {
    if (basis[i] >= n && basis[i] < 2 * n) {
      double x = T[i * ncol + rhs];
      z[basis[i] - n] = x > 0 ? x : 0;
    }
  }
  return SVI_OK;
}

/* ---- the same path in revised (product) form -------------------------------------------- */

/* Etas t .. t + 3 of ftran_body in one pass over x where neither of their pairs would be
 * skipped (large problems: x read and written once for four etas; a pass of two reads the eta file
 * the same, so this takes instructions, not memory traffic, off).  The four pivot rows' values are
 * followed in scalars through the etas in order as two passes of two leave them (the row an eta
 * pivots on takes its multiplier, any other row fma(-e_r, x_t, .)) and written back after the
 * pass, whose other rows get the four fused multiply-adds in the pairs' order: the same bits as
 * two passes.  0 (nothing done) when a pair would be skipped: its multipliers are zero (x_r3 = 0
 * after the first pair exactly when m3 = 0; an underflow to 0 there only sends it to the pairs). */
static inline __attribute__((always_inline)) int ftran_quad(const svi_lcp_work* w, double* restrict x, int t) {
  const int ld = w->ld;
  int pr[4];
  const double* e[4];
  double pv[4], m[4];
  for (int j = 0; j < 4; j++) {
    pr[j] = w->eta_row[t + j];
    e[j] = w->eta + (size_t)(t + j) * ld;
    pv[j] = x[pr[j]];
  }
  if (pv[0] == 0 && pv[1] == 0) return 0;   /* the first pair is skipped */
  for (int q = 0; q < 4; q++) {
    m[q] = pv[q] * w->eta_inv[t + q];
    for (int j = 0; j < 4; j++) pv[j] = pr[j] == pr[q] ? m[q] : fma(-e[q][pr[j]], m[q], pv[j]);
  }
  if (m[2] == 0 && m[3] == 0) return 0;     /* the second would be (x_r3 = 0 after the first) */
  const double *restrict e1 = e[0], *restrict e2 = e[1], *restrict e3 = e[2], *restrict e4 = e[3];
  const double x1 = m[0], x2 = m[1], x3 = m[2], x4 = m[3];
#pragma GCC unroll 4
  for (int i = 0; i < ld; i += 4)
    for (int k = 0; k < 4; k++)
      x[i + k] = fma(-e4[i + k], x4, fma(-e3[i + k], x3, fma(-e2[i + k], x2, fma(-e1[i + k], x1, x[i + k]))));
  for (int j = 0; j < 4; j++) x[pr[j]] = pv[j];
  return 1;
}

/* x <- B^-1 x: the eta matrices in order (x_r *= 1 / eta_r, then x_i = fma(-eta_i, x_r, x_i)), two
 * at a time.  The reciprocal is taken once, when the eta is made (eta_inv): x_r is the one value
 * each eta passes to the next, so a division there sat on FTRAN's dependency chain (one more
 * rounding than x_r / eta_r, the same in both clones; about 4 % off a disc-stack sample's wall
 * time).  The update is one fused multiply-add (one rounding, not two): the FMA clone's
 * instruction, the default clone's C library fma, the same bits (3.3 % fewer instructions a disc
 * stack sample than a multiply and a subtract).
 * Two at a time:
 * fma(-e2_i, x_r2, fma(-e1_i, x_r1, x_i)) is one eta after the other, with x_r2 taken after the
 * first (one pass over x instead of two).
 * x has w->ld rows (its padding rows zero) and the loops run over whole blocks of 4.
 * skip: a constant in each inlined copy (n >= SVI_PFI_LARGE_NMIN), see below; there four at a time
 * where no pair is skipped (ftran_quad). */
static inline __attribute__((always_inline)) void ftran_body_ld(const svi_lcp_work* w, double* restrict x, int t,
                                                                const int skip, const int ldc) {
  int ne = w->neta, ld = ldc ? ldc : w->ld;
  for (; t + 1 < ne; t += 2) {
    if (skip && t + 3 < ne && ftran_quad(w, x, t)) {
      t += 2;
      continue;
    }
    int r1 = w->eta_row[t], r2 = w->eta_row[t + 1];
    const double* restrict e1 = w->eta + (size_t)t * ld;
    const double* restrict e2 = e1 + ld;
    double x1 = x[r1] * w->eta_inv[t];
    double y2 = r2 == r1 ? x1 : fma(-e1[r2], x1, x[r2]);
    double x2 = y2 * w->eta_inv[t + 1];
    /* a zero subtracts a zero: no branch on x_r1 = x_r2 = 0 (which they are is data) in the small
     * problems, a skipped pass in the large ones (n >= SVI_PFI_LARGE_NMIN: a pass costs more than a
     * mispredicted branch; then x1 = x2 = 0 and the pass would change only the sign of zeros) */
    if (skip && x[r1] == 0 && x[r2] == 0) continue;
    if (ldc)   /* a constant: the loop unrolls completely */
      for (int i = 0; i < ldc; i += 4)
        for (int k = 0; k < 4; k++) x[i + k] = fma(-e2[i + k], x2, fma(-e1[i + k], x1, x[i + k]));
    else
#pragma GCC unroll 4
      for (int i = 0; i < ld; i += 4)
        for (int k = 0; k < 4; k++) x[i + k] = fma(-e2[i + k], x2, fma(-e1[i + k], x1, x[i + k]));
    x[r1] = r1 == r2 ? x1 : fma(-e2[r1], x2, x1);
    x[r2] = x2;
  }
  if (t < ne) {
    int r = w->eta_row[t];
    const double* restrict e = w->eta + (size_t)t * ld;
    double xr = x[r] * w->eta_inv[t];
    if (xr != 0) {
      if (ldc)
        for (int i = 0; i < ldc; i += 4)
          for (int k = 0; k < 4; k++) x[i + k] = fma(-e[i + k], xr, x[i + k]);
      else
#pragma GCC unroll 4
        for (int i = 0; i < ld; i += 4)
          for (int k = 0; k < 4; k++) x[i + k] = fma(-e[i + k], xr, x[i + k]);
    }
    x[r] = xr;
  }
}

static inline __attribute__((always_inline)) void ftran_body(const svi_lcp_work* w, double* restrict x, int t,
                                                             const int skip) {
  ftran_body_ld(w, x, t, skip, 0);
}

/* FTRAN on 64 rows or more in 512-bit vectors: the same C (ftran_body with skip) compiled for
 * AVX-512F with GCC's 512-bit vector width preferred, so its passes x_i = fma(-e_i, x_r, x_i) run
 * eight rows a vector instead of four.  A pass sums nothing across rows: each row gets the same
 * fused multiply-adds in the same order, so the same bits as the 4-wide clone.  Picked at run time
 * (svi_have_avx512) where the CPU has AVX-512F, VL, DQ and VBMI: Ice Lake and later Intel cores, AMD
 * Zen 4 and later.  Skylake-derived server cores (AVX-512 without VBMI) lower their clock under 512-bit
 * multiply-adds and keep the 4-wide clone (a judgement, not measured: this project's hosts have
 * been Zen 1, Zen 3 and Emerald Rapids).  Not below 64 rows: a 28-row column took no less time
 * eight-wide on the Emerald Rapids host (docs/benchmarks-log.md, the twenty-third session).  The
 * choice is made by the callers (pfi_entering, pfi_ftran), not in ftran_body: a call inside it
 * (tried with explicit 512-bit kernels) cost its small problems' copy 6 % more instructions, run-
 * time alias checks in the passes that the restrict qualifiers otherwise spare. */
#ifdef SVI_AVX2_KERNELS
__attribute__((target("avx512f,fma,prefer-vector-width=512"))) static void pfi_ftran_large_512(const svi_lcp_work* w,
                                                                                            double* x, int t) {
  ftran_body(w, x, t, 1);
}
#endif
SVI_SIMD_FMA static void pfi_ftran_small(const svi_lcp_work* w, double* x, int t) { ftran_body(w, x, t, 0); }
SVI_SIMD_FMA static void pfi_ftran_large(const svi_lcp_work* w, double* x, int t) { ftran_body(w, x, t, 1); }

/* x <- B^-1 x from eta t0 on (refine's from the first, the lexicographic test's columns from the
 * first eta that touches them; the entering column inlines ftran_body) */
static void pfi_ftran_from(const svi_lcp_work* w, int n, double* x, int t0) {
#ifdef SVI_AVX2_KERNELS
  if (n >= SVI_PFI_LARGE_NMIN && svi_have_avx512()) pfi_ftran_large_512(w, x, t0);
  else
#endif
  if (n >= SVI_PFI_LARGE_NMIN) pfi_ftran_large(w, x, t0);
  else pfi_ftran_small(w, x, t0);
}

static void pfi_ftran(const svi_lcp_work* w, int n, double* x) { pfi_ftran_from(w, n, x, 0); }

/* The first eta that can change x = a column with nonzeros only in rows r0, r1 (-1: none):
 * the etas before it divide and subtract zeros.  From the first eta of each row, kept by the
 * pivots (no search, no branch on the data). */
static int pfi_first_touch(const svi_lcp_work* w, int n, int r0, int r1) {
  int a = w->first_eta[r0 < 0 ? n : r0], b = w->first_eta[r1 < 0 ? n : r1];   /* a zero column: {-1, -1} */
  int t = a < b ? a : b;
  return t < w->neta ? t : w->neta;
}

/* Rows of B^-1 in one pass over the eta file (y[b] <- row rows[b], b < K; K = 1, 2 or 4, a
 * constant in each inlined copy so that the loops unroll): the tied rows of a degenerate ratio
 * test (pfi_lex_ties).  Each row's arithmetic is one BTRAN's,
 * y^T = e_r0^T E_k^-1 ... E_1^-1, in which only component r_t changes at eta t; the dot products
 * in four interleaved partial sums (then (s0 + s1) + (s2 + s3)): an order the AVX2 clone vectorises
 * and the default clone repeats, so both return the same bits, and a row has the same bits
 * whichever rows it is formed with.  The pass reads each eta once for all K rows. */
static inline __attribute__((always_inline)) void btran_rows(const svi_lcp_work* w, int n, int K,
                                                             const int* rows, double* const* y) {
  for (int b = 0; b < K; b++) {
    memset(y[b], 0, sizeof(double) * n);
    if (rows[b] >= 0) y[b][rows[b]] = 1.0;
  }
  for (int t = w->neta - 1; t >= 0; t--) {
    int r = w->eta_row[t];
    const double* restrict e = w->eta + (size_t)t * w->ld;
    svi_v4d acc[LEX_ROWS];   /* lane k: the partial sum over i = k (mod 4), one register a row */
    double* restrict yb[LEX_ROWS];
    for (int b = 0; b < K; b++) { acc[b] = (svi_v4d){0, 0, 0, 0}; yb[b] = y[b]; }
    int i = 0;
    for (; i + 4 <= n; i += 4) {
      svi_v4d ev;
      memcpy(&ev, e + i, sizeof(ev));
      for (int b = 0; b < K; b++) {
        svi_v4d yv;
        memcpy(&yv, yb[b] + i, sizeof(yv));
        acc[b] += yv * ev;
      }
    }
    double s[LEX_ROWS][4];
    for (int b = 0; b < K; b++) memcpy(s[b], &acc[b], sizeof(acc[b]));
    for (; i < n; i++)
      for (int b = 0; b < K; b++) s[b][0] += y[b][i] * e[i];
    for (int b = 0; b < K; b++) {
      double dot = (s[b][0] + s[b][1]) + (s[b][2] + s[b][3]), yr = y[b][r];
      y[b][r] = (yr - (dot - yr * e[r])) * w->eta_inv[t];
    }
  }
}

SVI_SIMD static void pfi_btran_row1(const svi_lcp_work* w, int n, const int* rows, double* const* y) {
  btran_rows(w, n, 1, rows, y);
}

SVI_SIMD static void pfi_btran_rows2(const svi_lcp_work* w, int n, const int* rows, double* const* y) {
  btran_rows(w, n, 2, rows, y);
}

SVI_SIMD static void pfi_btran_rows4(const svi_lcp_work* w, int n, const int* rows, double* const* y) {
  btran_rows(w, n, LEX_ROWS, rows, y);
}

/* The entering column B^-1 a is formed in the next free slot of the eta file, which the pivot
 * then keeps as its eta (no copy). */
static inline double* pfi_col(const svi_lcp_work* w) { return w->eta + (size_t)w->neta * w->ld; }

/* the pivot on row r with the entering column pfi_col: a new eta; the basic values' update
 * xb -= theta a, xb_r = theta is left pending for the next ratio scan, which makes it in the same
 * pass (the same operations: x_i - theta a_i, then the pivot row's value), or for pfi_settle */
static void pfi_pivot(svi_lcp_work* w, int r) {
  const double* a = pfi_col(w);
  w->eta_inv[w->neta] = 1.0 / a[r];
  int f = w->first_eta[r];
  w->first_eta[r] = f < w->neta ? f : w->neta;
  w->eta_row[w->neta++] = r;
  w->pend_theta = w->xb[r] / a[r];
  w->pend_r = r;
}

/* the pending update of the basic values, made now */
static void pfi_settle(svi_lcp_work* w) {
  if (w->pend_r < 0) return;
  kern_row_update(w->ld, w->pend_theta, w->eta + (size_t)(w->neta - 1) * w->ld, w->xb);
  w->xb[w->pend_r] = w->pend_theta;
  w->pend_r = -1;
}

/* ---- the ratio test's two passes, shared with svi_lowrank.c ------------------------------
 * min over a_i > tol of x_i / a_i (INFINITY if none), then the rows with a_i > tol and
 * x_i <= lim a_i, in increasing order.  An AVX2 twin (compare + movemask, as the mode rows of
 * svi_modes.c) and a scalar one; a minimum and a set do not depend on the order they are taken
 * in, so both return the same bits.
 *
 * The scalar passes from row i0 on: the whole of the scalar twins, and the AVX2 kernels' tails. */
static inline double min_ratio_tail(int i0, int n, const double* x, const double* a, double tol,
                                    double best) {
  for (int i = i0; i < n; i++) {
    double t = a[i] > tol ? x[i] / a[i] : INFINITY;
    best = t < best ? t : best;
  }
  return best;
}

static inline int ratio_ties_tail(int i0, int n, const double* x, const double* a, double tol,
                                  double lim, int* cand, int nc) {
  for (int i = i0; i < n; i++) if (a[i] > tol && x[i] <= lim * a[i]) cand[nc++] = i;
  return nc;
}

/* t of row i into the smallest value so far m1 (its first row i1) and the next smallest m2 (a NaN t
 * leaves m1 and i1, and makes m2 the smallest) */
static inline void min_two(double t, int i, double* m1, double* m2, int* i1) {
  double hi = t > *m1 ? t : *m1;
  *m2 = hi < *m2 ? hi : *m2;
  if (t < *m1) { *m1 = t; *i1 = i; }
}

/* One pass for the product form's test: the minimum ratio (as min_ratio), a row that attains it,
 * and the second smallest ratio (the minimum over the other rows; INFINITY if none).  The ratios
 * are min_ratio's quotients, so the minimum is its bits.  A NaN quotient (x and a both infinite:
 * the tie test x <= lim a may still count that row) makes the second value -INFINITY in both
 * twins, so the caller takes the two-pass test.
 * First, in the same pass, the last pivot's pending update of x (rp >= 0): x_i -= f ap_i as
 * kern_row_update, x_rp = f, stored back. */
static double ratio_scan_scalar(int n, double* x, const double* a, double tol, double* sec, int* arg,
                                const double* ap, double f, int rp) {
  double m1 = INFINITY, m2 = INFINITY;
  int i1 = -1;
  if (rp >= 0) {
    kern_row_update(n, f, ap, x);
    x[rp] = f;
  }
  int nan = 0;
  for (int i = 0; i < n; i++) {
    double t = a[i] > tol ? x[i] / a[i] : INFINITY;
    nan |= t != t;
    min_two(t, i, &m1, &m2, &i1);
  }
  *sec = nan ? -INFINITY : m2;
  *arg = i1;
  return m1;
}

#ifdef SVI_AVX2_KERNELS
#include <immintrin.h>

/* the minimum over the four lanes, in every lane (the same operations in both ratio scans) */
__attribute__((target("avx2"))) static inline __attribute__((always_inline)) __m256d lanes_min(__m256d v) {
  v = _mm256_min_pd(v, _mm256_permute4x64_pd(v, 0x4e));
  return _mm256_min_pd(v, _mm256_permute_pd(v, 5));
}

/* ratio_scan_scalar over n4 rows, a multiple of 4: per lane the smallest quotient, its row and the
 * next smallest, then across the lanes (upd: a constant in each inlined copy, rp >= 0) */
__attribute__((target("avx2"))) static inline __attribute__((always_inline)) double ratio_scan_body(
    int n4, double* x, const double* a, double tol, double* sec, int* arg, const double* ap, double f,
    int rp, const int upd) {
  __m256d vt = _mm256_set1_pd(tol), inf = _mm256_set1_pd(INFINITY);
  __m256d m1 = inf, m2 = inf, i1 = _mm256_set1_pd(-1), idx = _mm256_set_pd(3, 2, 1, 0);
  __m256d four = _mm256_set1_pd(4), vf = _mm256_set1_pd(f), vrp = _mm256_set1_pd(rp);
  __m256d vnan = _mm256_setzero_pd();
  for (int i = 0; i < n4; i += 4) {
    __m256d va = _mm256_loadu_pd(a + i);
    __m256d ok = _mm256_cmp_pd(va, vt, _CMP_GT_OQ);
    __m256d vx = _mm256_loadu_pd(x + i);
    if (upd) {
      vx = _mm256_sub_pd(vx, _mm256_mul_pd(vf, _mm256_loadu_pd(ap + i)));
      vx = _mm256_blendv_pd(vx, vf, _mm256_cmp_pd(idx, vrp, _CMP_EQ_OQ));
      _mm256_storeu_pd(x + i, vx);
    }
    /* the divisor max(a, tol): a where a > tol; tol in the rows the next line sets to INFINITY
     * (a positive normal number in every caller, the pivot tolerance: never a zero nor a
     * subnormal divisor there, as the 1 of a blend before; the same bits, one instruction for a
     * blend's three micro-ops on Intel cores) */
    __m256d t = _mm256_div_pd(vx, _mm256_max_pd(va, vt));
    t = _mm256_blendv_pd(inf, t, ok);
    vnan = _mm256_or_pd(vnan, _mm256_cmp_pd(t, t, _CMP_UNORD_Q));
    __m256d lt = _mm256_cmp_pd(t, m1, _CMP_LT_OQ);
    m2 = _mm256_min_pd(_mm256_max_pd(m1, t), m2);   /* a NaN t: max gives t, min then m2 */
    m1 = _mm256_min_pd(t, m1);                      /* a NaN t: m1 */
    i1 = _mm256_blendv_pd(i1, idx, lt);
    idx = _mm256_add_pd(idx, four);
  }
  /* across the lanes without a branch: the minimum in every lane, the first lane k1 that holds it,
   * the second value the minimum of m2 and of m1 without lane k1 */
  __m256d b = lanes_min(m1);
  int k1 = __builtin_ctz((unsigned)_mm256_movemask_pd(_mm256_cmp_pd(m1, b, _CMP_EQ_OQ)) | 16u) & 3;
  __m256d lane = _mm256_set_pd(3, 2, 1, 0);
  __m256d s = lanes_min(_mm256_min_pd(m2, _mm256_blendv_pd(m1, inf, _mm256_cmp_pd(lane, _mm256_set1_pd(k1), _CMP_EQ_OQ))));
  double vi[4];
  _mm256_storeu_pd(vi, i1);
  *sec = _mm256_movemask_pd(vnan) ? -INFINITY : _mm256_cvtsd_f64(s);
  *arg = (int)vi[k1];
  return _mm256_cvtsd_f64(b);
}

__attribute__((target("avx2"))) static double ratio_scan_avx2(int n4, double* x, const double* a, double tol,
                                                             double* sec, int* arg, const double* ap,
                                                             double f, int rp) {
  if (rp >= 0) return ratio_scan_body(n4, x, a, tol, sec, arg, ap, f, rp, 1);
  return ratio_scan_body(n4, x, a, tol, sec, arg, ap, f, rp, 0);
}

/* The four lanes of the 256-bit kernels combined with AVX-512VL's masks, as ratio_scan_body does
 * with blends: the minimum b in every lane, the first lane k1 that holds it, the second value the
 * minimum of m2 and of m1 without lane k1; the row is lane k1's (rows: the lanes' rows).  A NaN
 * quotient (knan) makes the second value -INFINITY. */
__attribute__((target("avx2,avx512f,avx512vl"))) static inline __attribute__((always_inline)) double
lanes_combine_vl(__m256d m1, __m256d m2, const double* rows, __mmask8 knan, double* sec, int* arg) {
  __m256d b = lanes_min(m1);
  int k1 = __builtin_ctz((unsigned)_mm256_cmp_pd_mask(m1, b, _CMP_EQ_OQ) | 16u) & 3;
  __m256d s = lanes_min(_mm256_min_pd(m2, _mm256_mask_mov_pd(m1, (__mmask8)(1u << k1), _mm256_set1_pd(INFINITY))));
  *sec = knan ? -INFINITY : _mm256_cvtsd_f64(s);
  *arg = (int)rows[k1];
  return _mm256_cvtsd_f64(b);
}

/* ratio_scan_body with AVX-512VL's mask registers (where svi_have_avx512): the same lanes, the same
 * operations and quotients, so the same minimum, second value and row; the three blends (three
 * micro-ops each on Intel cores) become masked moves and the masked-out quotients a masked division */
__attribute__((target("avx2,avx512f,avx512vl"))) static inline __attribute__((always_inline)) double
ratio_scan_body_vl(int n4, double* x, const double* a, double tol, double* sec, int* arg, const double* ap,
                   double f, int rp, const int upd) {
  __m256d vt = _mm256_set1_pd(tol), inf = _mm256_set1_pd(INFINITY);
  __m256d m1 = inf, m2 = inf, i1 = _mm256_set1_pd(-1), idx = _mm256_set_pd(3, 2, 1, 0);
  __m256d four = _mm256_set1_pd(4), vf = _mm256_set1_pd(f), vrp = _mm256_set1_pd(rp);
  __mmask8 knan = 0;
  for (int i = 0; i < n4; i += 4) {
    __m256d va = _mm256_loadu_pd(a + i);
    __mmask8 ok = _mm256_cmp_pd_mask(va, vt, _CMP_GT_OQ);
    __m256d vx = _mm256_loadu_pd(x + i);
    if (upd) {
      vx = _mm256_sub_pd(vx, _mm256_mul_pd(vf, _mm256_loadu_pd(ap + i)));
      vx = _mm256_mask_mov_pd(vx, _mm256_cmp_pd_mask(idx, vrp, _CMP_EQ_OQ), vf);
      _mm256_storeu_pd(x + i, vx);
    }
    __m256d t = _mm256_mask_div_pd(inf, ok, vx, _mm256_max_pd(va, vt));   /* INFINITY where a <= tol */
    knan |= _mm256_cmp_pd_mask(t, t, _CMP_UNORD_Q);
    __mmask8 lt = _mm256_cmp_pd_mask(t, m1, _CMP_LT_OQ);
    m2 = _mm256_min_pd(_mm256_max_pd(m1, t), m2);
    m1 = _mm256_min_pd(t, m1);
    i1 = _mm256_mask_mov_pd(i1, lt, idx);
    idx = _mm256_add_pd(idx, four);
  }
  double vi[4];
  _mm256_storeu_pd(vi, i1);
  return lanes_combine_vl(m1, m2, vi, knan, sec, arg);
}

__attribute__((target("avx2,avx512f,avx512vl"))) static double ratio_scan_vl(int n4, double* x, const double* a,
                                                                            double tol, double* sec, int* arg,
                                                                            const double* ap, double f, int rp) {
  if (rp >= 0) return ratio_scan_body_vl(n4, x, a, tol, sec, arg, ap, f, rp, 1);
  return ratio_scan_body_vl(n4, x, a, tol, sec, arg, ap, f, rp, 0);
}

/* ratio_scan_body_vl eight rows a vector.  Its cost is the division: vdivpd on a 512-bit vector
 * takes as long as on a 256-bit one on the Zen 5 host (a measured throughput of one every ~4
 * cycles for either width), so eight quotients cost what four did (the robot of table C: 686 rows,
 * 112 pivots).  Each row's quotient and the update of x are ratio_scan_body_vl's (the same
 * operations, lane by lane), so the values are the same; what changes is which lane a row is in:
 * lane l of eight holds the rows i = l (mod 8), the 256-bit kernels' lane j the rows i = j (mod 4),
 * the union of lanes j and j + 4.  So the eight lanes are folded into the four before the lanes
 * are combined:
 * - the smallest value of lane j of four: the smaller of lanes j and j + 4 (a minimum is the same
 *   whatever the order it is taken in; a NaN quotient is passed over in both kernels);
 * - its row: the first row that attains it in the four-lane kernel (its update is on t < m1, strict),
 *   so the row of the lane that holds the smaller value, and on equal values the smaller of the two
 *   rows (each the first in its own lane);
 * - the next smallest: each lane keeps the two smallest values of what it has seen (m2 <- min(max(m1,
 *   t), m2) keeps that order statistic), and the second smallest of a union is min(m2_j, m2_j+4,
 *   max(m1_j, m1_j+4)).
 * Then the four lanes are combined as ratio_scan_body_vl's are (lanes_combine_vl): the same minimum,
 * second value and row (test_lcp: against the 256-bit kernel, the row on ties too).  n4 a multiple of 4: the last
 * four rows of an odd count of fours are a masked vector (a = 0 there, never above tol; x is not
 * stored there). */
__attribute__((target("avx2,avx512f,avx512vl"))) static inline __attribute__((always_inline)) double
ratio_scan_body_512(int n4, double* x, const double* a, double tol, double* sec, int* arg, const double* ap,
                    double f, int rp, const int upd) {
  __m512d vt = _mm512_set1_pd(tol), inf = _mm512_set1_pd(INFINITY);
  __m512d m1 = inf, m2 = inf, i1 = _mm512_set1_pd(-1), idx = _mm512_set_pd(7, 6, 5, 4, 3, 2, 1, 0);
  __m512d eight = _mm512_set1_pd(8), vf = _mm512_set1_pd(f), vrp = _mm512_set1_pd(rp);
  __mmask8 knan = 0;
  for (int i = 0; i < n4; i += 8) {
    __mmask8 in = n4 - i >= 8 ? (__mmask8)0xff : (__mmask8)0x0f;
    __m512d va = _mm512_maskz_loadu_pd(in, a + i);
    __mmask8 ok = _mm512_cmp_pd_mask(va, vt, _CMP_GT_OQ);
    __m512d vx = _mm512_maskz_loadu_pd(in, x + i);
    if (upd) {
      vx = _mm512_sub_pd(vx, _mm512_mul_pd(vf, _mm512_maskz_loadu_pd(in, ap + i)));
      vx = _mm512_mask_mov_pd(vx, _mm512_cmp_pd_mask(idx, vrp, _CMP_EQ_OQ), vf);
      _mm512_mask_storeu_pd(x + i, in, vx);
    }
    __m512d t = _mm512_mask_div_pd(inf, ok, vx, _mm512_max_pd(va, vt));
    knan |= _mm512_cmp_pd_mask(t, t, _CMP_UNORD_Q);
    __mmask8 lt = _mm512_cmp_pd_mask(t, m1, _CMP_LT_OQ);
    m2 = _mm512_min_pd(_mm512_max_pd(m1, t), m2);
    m1 = _mm512_min_pd(t, m1);
    i1 = _mm512_mask_mov_pd(i1, lt, idx);
    idx = _mm512_add_pd(idx, eight);
  }
  double v1[8], v2[8], vi[8];
  _mm512_storeu_pd(v1, m1);
  _mm512_storeu_pd(v2, m2);
  _mm512_storeu_pd(vi, i1);
  double f1[4], f2[4], fi[4];
  for (int j = 0; j < 4; j++) {   /* lanes j and j + 4 into the four-lane kernel's lane j */
    double lo = v1[j], hi = v1[j + 4];
    fi[j] = lo < hi ? vi[j] : hi < lo ? vi[j + 4] : (vi[j] < vi[j + 4] ? vi[j] : vi[j + 4]);
    f1[j] = lo < hi ? lo : hi;
    double mx = lo > hi ? lo : hi, s = v2[j] < v2[j + 4] ? v2[j] : v2[j + 4];
    f2[j] = mx < s ? mx : s;
  }
  return lanes_combine_vl(_mm256_loadu_pd(f1), _mm256_loadu_pd(f2), fi, knan, sec, arg);
}

__attribute__((target("avx2,avx512f,avx512vl"))) static double ratio_scan_512(int n4, double* x, const double* a,
                                                                             double tol, double* sec, int* arg,
                                                                             const double* ap, double f, int rp) {
  if (rp >= 0) return ratio_scan_body_512(n4, x, a, tol, sec, arg, ap, f, rp, 1);
  return ratio_scan_body_512(n4, x, a, tol, sec, arg, ap, f, rp, 0);
}

__attribute__((target("avx2"))) static double min_ratio_avx2(int n, const double* x, const double* a,
                                                            double tol) {
  __m256d vt = _mm256_set1_pd(tol), inf = _mm256_set1_pd(INFINITY);
  __m256d vb = inf;
  int i = 0;
  for (; i + 4 <= n; i += 4) {
    __m256d va = _mm256_loadu_pd(a + i);
    __m256d ok = _mm256_cmp_pd(va, vt, _CMP_GT_OQ);
    __m256d t = _mm256_div_pd(_mm256_loadu_pd(x + i), _mm256_max_pd(va, vt));   /* as ratio_scan_body */
    vb = _mm256_min_pd(_mm256_blendv_pd(inf, t, ok), vb);
  }
  double b4[4], best = INFINITY;
  _mm256_storeu_pd(b4, vb);
  for (int k = 0; k < 4; k++) best = b4[k] < best ? b4[k] : best;
  return min_ratio_tail(i, n, x, a, tol, best);
}

__attribute__((target("avx2"))) static int ratio_ties_avx2(int n, const double* x, const double* a,
                                                          double tol, double lim, int* cand) {
  static const signed char pos[16][4] = {{0}, {0}, {1}, {0, 1}, {2}, {0, 2}, {1, 2}, {0, 1, 2}, {3}, {0, 3},
                                         {1, 3}, {0, 1, 3}, {2, 3}, {0, 2, 3}, {1, 2, 3}, {0, 1, 2, 3}};
  __m256d vt = _mm256_set1_pd(tol), vl = _mm256_set1_pd(lim);
  int nc = 0, i = 0;
  for (; i + 4 <= n; i += 4) {
    __m256d va = _mm256_loadu_pd(a + i);
    __m256d ok = _mm256_and_pd(_mm256_cmp_pd(va, vt, _CMP_GT_OQ),
                               _mm256_cmp_pd(_mm256_loadu_pd(x + i), _mm256_mul_pd(vl, va), _CMP_LE_OQ));
    int m = _mm256_movemask_pd(ok);   /* no branch on m: which rows tie is data */
    for (int k = 0; k < 4; k++) cand[nc + k] = i + pos[m][k];
    nc += __builtin_popcount((unsigned)m);
  }
  return ratio_ties_tail(i, n, x, a, tol, lim, cand, nc);
}
#endif

/* inline here: the ratio kernels ask once per pivot */
_Atomic int svi_avx2_flag = -1;

int svi_have_avx2_probe(void) {
#ifdef SVI_AVX2_KERNELS
  int f = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") ? 1 : 0;
#else
  int f = 0;
#endif
  atomic_store_explicit(&svi_avx2_flag, f, memory_order_relaxed);   /* every thread stores the same */
  return f;
}

_Atomic int svi_avx512_flag = -1;

int svi_have_avx512_probe(void) {
#ifdef SVI_AVX2_KERNELS
  int f = svi_have_avx2() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
          __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vbmi") ? 1 : 0;
#else
  int f = 0;
#endif
  atomic_store_explicit(&svi_avx512_flag, f, memory_order_relaxed);   /* every thread stores the same */
  return f;
}

void svi_kern_set_avx512(int on) {
  atomic_store_explicit(&svi_avx512_flag, -1, memory_order_relaxed);
  if (!on || !svi_have_avx512()) atomic_store_explicit(&svi_avx512_flag, 0, memory_order_relaxed);
}

/* the kernels of this file: the flag in a plain static (read once, kept in a register where a
 * loop calls them) */
static inline int have_avx2(void) {
  static int known = -1;
  if (known < 0) known = svi_have_avx2();
  return known;
}

/* the minimum ratio through the AVX2 kernel (avx2 = 1, where the CPU and the build have it) or
 * the scalar twin (tests ask for both) */
static inline double min_ratio(int avx2, int n, const double* x, const double* a, double tol) {
#ifdef SVI_AVX2_KERNELS
  if (avx2 && have_avx2()) return min_ratio_avx2(n, x, a, tol);
#endif
  (void)avx2;
  return min_ratio_tail(0, n, x, a, tol, INFINITY);
}

double svi_kern_min_ratio(int n, const double* x, const double* a, double tol) {
  return min_ratio(1, n, x, a, tol);
}

double svi_kern_min_ratio_as(int avx2, int n, const double* x, const double* a, double tol) {
  return min_ratio(avx2, n, x, a, tol);
}

/* the product form's one-pass ratio scan: level 1 the AVX2 kernel, 2 its AVX-512VL copy, 3 the
 * copy eight rows a vector (ratio_level_rows: from SVI_PFI_LARGE_NMIN rows), else the scalar twin;
 * the same bits in all of them.  Level 1 is tested first: the one compare a pivot it had before the
 * eight-row copy (a disc-stack sample 104 instructions longer with the large copy's test first) */
static inline double ratio_scan(int level, int n4, double* x, const double* a, double tol, double* sec, int* arg,
                                const double* ap, double f, int rp) {
#ifdef SVI_AVX2_KERNELS
  if (level == 1) return ratio_scan_avx2(n4, x, a, tol, sec, arg, ap, f, rp);
  if (level == 2) return ratio_scan_vl(n4, x, a, tol, sec, arg, ap, f, rp);
  if (level == 3) return ratio_scan_512(n4, x, a, tol, sec, arg, ap, f, rp);
#endif
  (void)level;
  return ratio_scan_scalar(n4, x, a, tol, sec, arg, ap, f, rp);
}

/* the highest level of ratio_scan at most max that this CPU runs (asked once a path: testing the
 * flags at every pivot cost a disc-stack sample 1 % more instructions) */
static int ratio_level(int max) {
  int level = 0;
#ifdef SVI_AVX2_KERNELS
  if (max >= 1 && have_avx2()) level = max >= 2 && svi_have_avx512() ? 2 : 1;
#endif
  (void)max;
  return level;
}

/* ratio_level for a scan of n4 rows: the AVX-512 level is the eight-row copy's (3) from
 * SVI_PFI_LARGE_NMIN rows */
static int ratio_level_rows(int max, int n4) {
  int level = ratio_level(max);
  return level == 2 && n4 >= SVI_PFI_LARGE_NMIN ? 3 : level;
}

/* tests and the low-rank Lemke: ratio_scan at a given level (as svi_kern_min_ratio_as; 2: the
 * AVX-512 copies where the CPU has them) */
double svi_kern_ratio_scan(int level, int n4, double* x, const double* a, double tol, double* sec,
                           int* arg, const double* ap, double f, int rp) {
  return ratio_scan(ratio_level_rows(level, n4), n4, x, a, tol, sec, arg, ap, f, rp);
}

int svi_kern_ratio_ties(int n, const double* x, const double* a, double tol, double lim, int* cand) {
#ifdef SVI_AVX2_KERNELS
  if (have_avx2()) return ratio_ties_avx2(n, x, a, tol, lim, cand);
#endif
  return ratio_ties_tail(0, n, x, a, tol, lim, cand, 0);
}

/* pfi_ratio_test's lexicographic test of tied rows, the tableau's rule: the running best r
 * against each tied row i in turn, replaced when row i of [B^-1] / a_i comes first in the
 * perturbation's order and signs (lexico_cmp, tolerance SVI_LEX_TOL).
 *
 * Component c of those rows needs no BTRAN while no eta has pivoted on row c: BTRAN never changes
 * component c of a row, so it is 1 in row c and 0 in every other, exactly.  The components before
 * the first pivoted one in the order are such "free" components (kfree of them); a comparison in
 * which row i or row r has its own place among them is decided there (free_cmp), and one in which
 * neither has goes on from component kfree on the two rows, by BTRAN.  The same values and
 * decisions as comparing whole rows, so the same leaving row.
 *
 * Which comparisons need rows is known before any row is formed: a comparison needs them exactly
 * when neither row has a free place, and whether the best has one follows from the free decisions
 * alone (a row without a free place loses to or beats one with a free place whichever of the rows
 * without it holds the best).  So the rows needed are listed first (lexneed) and formed LEX_ROWS
 * to a pass (one read of the eta file; each row's bits do not depend on the rows formed with it),
 * the best's row kept.  On degenerate LCPs, where ties of tens of rows recur at every pivot (equal
 * contacts landing flat: the simultaneous law (31) for a plate on 100 supports, a robot's feet of
 * 7 x 7 points), most comparisons end on a free component (docs/benchmarks-log.md, the nineteenth
 * session, has the figures). */

/* i against r on the free components (their places pi, pr, 0: none): < 0, > 0, or 0 (no free
 * component decides) */
static int free_cmp(const perturbation* pt, int pi, int pr, double ai, double ar, double tol) {
  int p[2] = {pi, pr};
  if (pi && pr && pr < pi) { p[0] = pr; p[1] = pi; }
  for (int t = 0; t < 2; t++) {
    if (!p[t]) continue;
    int k = p[t] - 1;
    double sg = pt->sign ? pt->sign[k] : 1.0;
    double x = sg * (p[t] == pi ? 1.0 : 0.0) / ai, y = sg * (p[t] == pr ? 1.0 : 0.0) / ar;
    if (x < y - tol) return -1;
    if (x > y + tol) return 1;
  }
  return 0;
}

/* i against r on the free components, read in the order only as far as a decision or the first
 * pivoted component (*kstop: that component, when it returns 0; n when every one is free) */
static int free_scan(const svi_lcp_work* w, int n, const perturbation* pt, int i, int r, double ai, double ar,
                     int* kstop) {
  svi_order_ready(pt->lazy);
  int c = 0, k = 0;
  for (; k < n && !c; k++) {
    int col = pt->order ? pt->order[k] : k;
    if (w->first_eta[col] < w->neta) break;
    if (col != i && col != r) continue;   /* 0 in both rows */
    c = free_cmp(pt, col == i ? k + 1 : 0, col == r ? k + 1 : 0, ai, ar, SVI_LEX_TOL);
  }
  *kstop = k;
  return c;
}

/* The same test by columns of B^-1, for ties that would need many rows (more than LEX_COLS_FROM;
 * the low-rank solver's rule, svi_lowrank.c's ratio_test).  The lexicographic minimum of the rows
 * (B^-1)_i / a_i over the tied rows S is found component by component in the perturbation's
 * order: at component c (sign s) the values v_i = s (B^-1)_ic / a_i of the rows still in S, a best
 * b (the first row, replaced by one below it by more than SVI_LEX_TOL), and S keeps b and the rows
 * with v_i <= v_b + SVI_LEX_TOL; it stops when one row is left.  Column c of B^-1 is B^-1 e_c: one
 * FTRAN for every tied row at once (from the first eta that touches row c; e_c itself, no FTRAN,
 * while no eta has pivoted on c), where the tournament forms one row of B^-1 a tied row by BTRAN.
 * A plate sliding onto 100 supports (tests/data/plate_slide_100.xml) ties 237 rows on average at
 * 146 of the 1 175 pivots of an impact step, and 3.6 columns decide a tie; the tournament's BTRAN
 * was 95 % of the step's 7.2 billion instructions (docs/benchmarks-log.md, the thirty-third
 * session).  The nineteenth session tried columns for every tie and kept the rows: where few rows
 * are needed, entries that are zero in exact arithmetic come out of FTRAN and BTRAN as different
 * 1e-14s, and the path follows the rounding either way; from LEX_COLS_FROM rows on, the rows'
 * cost decides.
 * With SVI_LEX_TOL the two rules agree but for rows within a few SVI_LEX_TOL of each other in a
 * component, where both comparisons depend on the order of the rows (tolerance comparisons are
 * not transitive): either picks a row whose ratio ties, a valid pivot.  The rows keep cand's
 * order, and a tie that no component breaks (not reached: B^-1 has independent rows) returns the
 * first.  A NaN value never replaces the best and always stays. */
#define LEX_COLS_FROM 8
static int pfi_lex_cols(svi_lcp_work* w, int n, const double* a, int* S, int ns, const perturbation* pt) {
  double* col = w->eta + (size_t)PFI_KMAX(w->pfi_n) * w->ld;   /* the spare column (refine's, later) */
  int* in = w->lexpos;   /* zeros between tests: 1 while a row is in S */
  for (int m = 0; m < ns; m++) in[S[m]] = 1;
  for (int k = 0; k < n && ns > 1; k++) {
    int c = pt->order ? pt->order[k] : k, keep = 0, unit = w->first_eta[c] >= w->neta;
    double sg = pt->sign ? pt->sign[k] : 1.0;
    if (unit && !in[c]) continue;   /* e_c, no eta on c: 0 in every row of S */
    memset(col, 0, sizeof(double) * w->ld);
    col[c] = 1.0;
    if (!unit) {
      pfi_ftran_from(w, n, col, pfi_first_touch(w, n, c, -1));
      w->lex_cols_all++;
    }
    int rb = 0;   /* the running best, replaced by a row below it by more than SVI_LEX_TOL */
    double best = sg * col[S[0]] / a[S[0]];
    for (int m = 1; m < ns; m++) {
      double v = sg * col[S[m]] / a[S[m]];
      if (v < best - SVI_LEX_TOL) { rb = m; best = v; }
    }
    for (int m = 0; m < ns; m++) {
      int i = S[m];
      if (m == rb || !(sg * col[i] / a[i] > best + SVI_LEX_TOL)) S[keep++] = i;
      else in[i] = 0;
    }
    ns = keep;
  }
  for (int m = 0; m < ns; m++) in[S[m]] = 0;
  return S[0];
}

static int pfi_lex_ties(svi_lcp_work* w, int n, const double* a, const int* cand, int ncand,
                        const perturbation* pt) {
  const double tol = SVI_LEX_TOL;
  svi_order_ready(pt->lazy);
  if (ncand == 2) {   /* one comparison (the small LCPs' usual tie): the order read only as far as it decides */
    int i = cand[1], r = cand[0], k;
    int c = free_scan(w, n, pt, i, r, a[i], a[r], &k);
    if (!c && k < n) {
      int rows[2] = {i, r};
      double* y[2] = {w->lexrow, w->lexrow + n};
      pfi_btran_rows2(w, n, rows, y);
      w->lex_rows_all += 2;
      c = lexico_cmp_from(y[0], y[1], n, a[i], a[r], tol, pt, k);
    }
    return c < 0 ? i : r;
  }
  int *pos = w->lexpos, *need = w->lexneed, kfree = 0;
  for (; kfree < n; kfree++) {
    int col = pt->order ? pt->order[kfree] : kfree;
    if (w->first_eta[col] < w->neta) break;
    pos[col] = kfree + 1;
  }
  /* the rows the comparisons will need, in the order they are needed: per run of comparisons
   * between rows without a free place, the best's at its start and every challenger's */
  int nneed = 0, best = cand[0], listed = 0, ok = 1;
  for (int m = 1; m < ncand && ok; m++) {
    int i = cand[m], c = 0;
    if (pos[i] || pos[best]) {
      c = free_cmp(pt, pos[i], pos[best], a[i], a[best], tol);
      ok = c != 0 || kfree == n;   /* (a tie on a free place: 1 / a_i within SVI_LEX_TOL, not met) */
      if (c < 0) { best = i; listed = 0; }
    } else if (kfree < n) {
      if (!listed) need[nneed++] = best;
      need[nneed++] = i;
      listed = 1;   /* the best is one of the rows listed, which one only the rows tell */
    }
  }
  if (nneed > LEX_COLS_FROM && !w->no_lexcols) {   /* many rows: by columns, over every tied row */
    for (int k = 0; k < kfree; k++) pos[pt->order ? pt->order[k] : k] = 0;
    memcpy(need, cand, sizeof(int) * ncand);
    return pfi_lex_cols(w, n, a, need, ncand, pt);
  }
  double* buf[LEX_ROWS + 1];
  int held[LEX_ROWS + 1], next = 0, r = cand[0], rb = -1;   /* rb: the best's buffer, or -1 */
  for (int b = 0; b <= LEX_ROWS; b++) { buf[b] = w->lexrow + (size_t)b * n; held[b] = -1; }
  double ar = a[r];
  for (int m = 1; m < ncand; m++) {
    int i = cand[m], c = 0, ib = -1;
    double ai = a[i];
    if (pos[i] || pos[r]) c = free_cmp(pt, pos[i], pos[r], ai, ar, tol);
    if (!c && kfree < n) {   /* the rows, from component kfree on */
      for (int b = 0; b <= LEX_ROWS; b++) {
        if (held[b] == i) ib = b;
        if (held[b] == r) rb = b;
      }
      if (ib < 0 || rb < 0) {
        /* a pass: i's row, the best's if it is not kept, then the rows listed after i's; the
         * buffers of rows already compared are free (each row is compared once, the best's is
         * kept).  Where the list does not hold i (ok == 0), the two rows alone. */
        int rows[LEX_ROWS], nr = 0, freeb[LEX_ROWS + 1], nfree = 0;
        double* y[LEX_ROWS];
        for (int b = 0; b <= LEX_ROWS; b++)
          if (b != rb && b != ib) { held[b] = -1; freeb[nfree++] = b; }
        if (ib < 0) { rows[nr] = i; held[freeb[nr]] = i; ib = freeb[nr]; y[nr] = buf[ib]; nr++; }
        if (rb < 0) { rows[nr] = r; held[freeb[nr]] = r; rb = freeb[nr]; y[nr] = buf[rb]; nr++; }
        while (ok && next < nneed && need[next] != i) next++;
        for (int t = next + 1; ok && t < nneed && nr < LEX_ROWS && nr < nfree - 1; t++) {
          if (need[t] == r) continue;
          rows[nr] = need[t];
          held[freeb[nr]] = need[t];
          y[nr] = buf[freeb[nr]];
          nr++;
        }
        w->lex_rows_all += nr;
        if (nr == 1) pfi_btran_row1(w, n, rows, y);
        else if (nr == 2) pfi_btran_rows2(w, n, rows, y);
        else {
          for (int t = nr; t < LEX_ROWS; t++) { rows[t] = -1; y[t] = buf[freeb[nfree - 1]]; }
          pfi_btran_rows4(w, n, rows, y);
        }
      }
      c = lexico_cmp_from(buf[ib], buf[rb], n, ai, ar, tol, pt, kfree);
    }
    if (c < 0) {
      if (rb >= 0) held[rb] = -1;
      r = i;
      ar = ai;
      rb = ib;   /* -1 when a free component decided: the new best's row is not formed here */
    } else if (ib >= 0) held[ib] = -1;
  }
  for (int k = 0; k < kfree; k++) pos[pt->order ? pt->order[k] : k] = 0;
  return r;
}

/* ratio_test on (xb, pfi_col), the same rule; rows of B^-1 by BTRAN only where a tie needs them
 * (pfi_lex_ties).
 * One pass first (ratio_scan over the padded rows, whose a_i = 0 never qualify): when the second
 * smallest ratio t_j exceeds lim (1 + 8 eps), no row but the minimum's can pass the tie test
 * x_j <= fl(lim a_j): with u = eps / 2, x_j >= t_j a_j / (1 + u) > lim (1 + 16 u) a_j / (1 + u)
 * >= lim a_j (1 + u) >= fl(lim a_j), for lim > 0 and a_j > 0 (and t_j finite: x_j finite bounds
 * lim a_j, so it does not overflow; a NaN quotient sets sec = -INFINITY; lim >= 1e-290 keeps the
 * quotients normal, a guard only: lim = t* + 1e-11 (1 + |t*|) is <= 0 or above ~1e-27).  The minimum's
 * own row is tested exactly.  So the one-row answer is the two-pass test's, in far fewer steps;
 * anything else (ties, lim <= 0) takes the two passes.  level: ratio_scan's kernel, chosen once a path
 * (ratio_level). */
static int pfi_ratio_test(svi_lcp_work* w, int n, double piv_tol, const perturbation* pt, int level) {
  const int z0 = 2 * n;
  const double* a = pfi_col(w);
  double* x = w->xb;
  double sec;
  int r1, rp = w->pend_r;
  const double* ap = rp >= 0 ? w->eta + (size_t)(w->neta - 1) * w->ld : NULL;
  w->pend_r = -1;   /* the scan makes the pending update */
  double best = ratio_scan(level, w->ld, x, a, piv_tol, &sec, &r1, ap, w->pend_theta, rp);
  if (best == INFINITY) return -1;
  double tie = 1e-11 * (1 + fabs(best)), lim = best + tie;
  if (lim >= 1e-290 && sec > lim * (1 + 8 * DBL_EPSILON) && x[r1] <= lim * a[r1]) return r1;
  int *cand = w->cand, ncand = svi_kern_ratio_ties(n, x, a, piv_tol, lim, cand);
  if (ncand == 1) return cand[0];
  /* z0 leaves on a tie: the first tied row that holds it (the sequential test below would return
   * it the moment it reached it, whatever the rows before it) */
  for (int m = 0; m < ncand; m++) if (w->basis[cand[m]] == z0) return cand[m];
  return pfi_lex_ties(w, n, a, cand, ncand, pt);
}

/* the column of variable v of [I | -M | -d] into pfi_col, then B^-1 times it (FTRAN inlined: this
 * is its clone, one call a pivot) */
SVI_SIMD_FMA static void pfi_entering(svi_lcp_work* w, int n, const double* M, const double* d, int v) {
  double* a = pfi_col(w);
  for (int k = 0; k < 4; k++) a[w->ld - 4 + k] = 0;   /* the padding rows (n <= ld < n + 4) */
  int t0 = 0;   /* a unit or 2-sparse column skips the etas that do not touch it */
  if (v < n) {
    memset(a, 0, sizeof(double) * n);
    a[v] = 1.0;
    t0 = pfi_first_touch(w, n, v, -1);
  } else if (v < 2 * n) {
    const double* Mnt = w->prep ? w->prep->Mnt : NULL;
    if (w->prep && w->prep->column && M == w->prep->M) {   /* from the problem's structure */
      int nz[2];
      w->prep->column(w->prep->ctx, v - n, a, nz);
      if (nz[0] != -2) t0 = pfi_first_touch(w, n, nz[0], nz[1]);
    } else if (Mnt && M == w->prep->M) {
      memcpy(a, Mnt + (size_t)(v - n) * n, sizeof(double) * n);
      const int* nz = w->prep->Mnt_nz ? w->prep->Mnt_nz + 2 * (v - n) : NULL;
      if (nz && nz[0] != -2) t0 = pfi_first_touch(w, n, nz[0], nz[1]);
    } else for (int i = 0; i < n; i++) a[i] = -M[i * n + (v - n)];
  }
  else for (int i = 0; i < n; i++) a[i] = d ? -d[i] : -1.0;
#ifdef SVI_AVX2_KERNELS
  if (n >= SVI_PFI_LARGE_NMIN && svi_have_avx512()) pfi_ftran_large_512(w, a, t0);
  else
#endif
  if (n >= SVI_PFI_LARGE_NMIN) ftran_body(w, a, t0, 1);
  else switch (w->ld) {   /* below SVI_PFI_LARGE_NMIN rows a copy for each column length, unrolled */
#define FTRAN_LD(L) case L: ftran_body_ld(w, a, t0, 0, L); break;
    FTRAN_LD(4) FTRAN_LD(8) FTRAN_LD(12) FTRAN_LD(16) FTRAN_LD(20) FTRAN_LD(24) FTRAN_LD(28) FTRAN_LD(32)
    FTRAN_LD(36) FTRAN_LD(40) FTRAN_LD(44) FTRAN_LD(48) FTRAN_LD(52) FTRAN_LD(56) FTRAN_LD(60) FTRAN_LD(64)
#undef FTRAN_LD
    default: ftran_body(w, a, t0, 0);   /* not reached: ld = pfi_ld(n) <= 64 */
  }
}

/* The product form rebuilt from the current basis.  The path adds one eta a pivot, but its basis
 * holds only kstruct columns that are not unit columns (columns of -M and -d): variables enter,
 * leave and enter again (a mesh cube landing on 2 x 2 x 2 mesh cubes, table E of svi-bench-plugin:
 * 242 such columns after 1 466 pivots on 700 rows).  FTRAN applies every eta, so it costs about
 * n neta a pivot; the rebuilt form has kstruct etas.
 *
 * The rebuild is Gauss-Jordan on the basis in product form: start from B = I; each basic w_j
 * keeps the unit column e_j in row j (no eta); each other basic column a_v, taken in the order of
 * its current row and z0's column -d last (so the etas before it keep the zeros of -M's columns,
 * which FTRAN's skip test passes over), is put through the etas made so far
 * (a = E_t^-1 ... E_1^-1 a_v, pfi_entering on the new file) and pivots on the row, among the rows
 * whose w is nonbasic and not yet taken, where |a_r| is largest (partial pivoting): then E_t+1
 * replaces e_r by a.  The result is B P = E_1 ... E_k for the permutation P that moves each basic
 * variable to its new row; the basic values are the variables' own (xb, its pending update made),
 * moved to their rows.  A row of
 * B^-1 belongs to its basic variable, not to its place, so the lexicographic test compares the
 * same rows as before; B^-1 is the same matrix rounded differently, and the path is the same
 * exactly where no decision of the ratio test lies within the rounding of B^-1.
 *
 * Cost: about n kstruct^2 / 2 multiply-adds (each column through the etas before it) and kstruct
 * columns formed.  With m pivots between rebuilds, FTRAN and the rebuilds cost about
 * n (kstruct + m / 2 + kstruct^2 / (2 m)) a pivot, least at m = kstruct (2 n kstruct), against
 * n neta without them.  Made when neta reaches 2 kstruct + PFI_REBUILD_SLACK (m = kstruct + 32).
 * From the twenty-first speed session to the twenty-fifth the trigger was 2.5 kstruct, picked by
 * instructions (a rebuild's FTRANs skip fewer etas than the path's: at 2 kstruct the tower of 25
 * boxes took 3 % more); in wall time the smaller eta file pays on the large paths, whose FTRANs
 * stream it from L2 and beyond: the tower of 25 boxes at 0.89 of its time, the mesh piles of
 * table E at 0.81-0.84, the bin pile (301 rows) 1.02 (docs/benchmarks-log.md, the twenty-sixth
 * session).  Only from n >= PFI_REBUILD_NMIN (the small LCPs' paths are short, and
 * their bits stay those of the path without it).  0 and the product form untouched when a pivot
 * is below PFI_REBUILD_PIVTOL times the column's largest entry (the basis near singular), or when
 * an entry is not finite. */
#define PFI_REBUILD_NMIN 64
#define PFI_REBUILD_SLACK 32
#define PFI_REBUILD_PIVTOL 1e-12
__attribute__((noinline)) static int pfi_rebuild(svi_lcp_work* w, int n, const double* M, const double* d) {
  const int ld = w->ld, z0 = 2 * n;
  int *var = w->rb_var, *orow = w->rb_orow, *nb = w->rb_new, *fr = w->rb_free, k = 0, rz = -1, nf = 0;
  pfi_settle(w);
  for (int i = 0; i < n; i++) nb[i] = -1;
  for (int i = 0; i < n; i++) {
    int v = w->basis[i];
    if (v == z0) rz = i;
    else if (v >= n) { var[k] = v; orow[k++] = i; }
    else nb[v] = v;   /* a basic w_v: row v */
  }
  if (rz >= 0) { var[k] = z0; orow[k++] = rz; }   /* -d last: the etas before it keep -M's zeros */
  for (int i = 0; i < n; i++) if (nb[i] < 0) fr[nf++] = i;   /* the rows the etas take, k of them */
  /* the new file in T, with its own rows, reciprocal pivots and first etas */
  svi_lcp_work t = *w;
  t.eta = w->T;
  t.eta_row = w->rb_row;
  t.eta_inv = w->rb_inv;
  t.first_eta = w->rb_first;
  t.neta = 0;
  for (int i = 0; i <= n; i++) t.first_eta[i] = INT_MAX;
  for (int j = 0; j < k; j++) {
    pfi_entering(&t, n, M, d, var[j]);
    const double* a = pfi_col(&t);
    /* the largest |a_i| (a NaN anywhere makes it NaN: amax > NaN is false), then the largest on
     * the rows still free, in the order of the rows (the first of equal ones) */
    double amax = 0, best = 0;
    for (int i = 0; i < n; i++) {
      double m = fabs(a[i]);
      amax = amax > m ? amax : m;
    }
    int f = -1;
    for (int u = 0; u < nf; u++) {
      double m = fabs(a[fr[u]]);
      if (m > best) { best = m; f = u; }
    }
    if (f < 0 || !(best > PFI_REBUILD_PIVTOL * amax) || !(amax <= DBL_MAX)) return 0;
    int r = fr[f];
    memmove(fr + f, fr + f + 1, sizeof(int) * (size_t)(--nf - f));   /* r taken */
    pfi_pivot(&t, r);   /* the eta (its pending update of the basic values stays in the copy t) */
    nb[r] = var[j];
  }
  /* each basic variable's value to its new row: a w_v to row v, the others to the rows their
   * etas pivot on */
  for (int i = 0; i < n; i++)
    if (w->basis[i] < n) w->rb_xb[w->basis[i]] = w->xb[i];
  for (int j = 0; j < k; j++) w->rb_xb[t.eta_row[j]] = w->xb[orow[j]];
  memcpy(w->eta, t.eta, sizeof(double) * (size_t)k * ld);
  memcpy(w->eta_row, t.eta_row, sizeof(int) * k);
  memcpy(w->eta_inv, t.eta_inv, sizeof(double) * k);
  memcpy(w->first_eta, t.first_eta, sizeof(int) * (n + 1));
  memcpy(w->basis, nb, sizeof(int) * n);
  memcpy(w->xb, w->rb_xb, sizeof(double) * n);
  w->neta = k;
  w->rebuilds++;
  w->rebuilds_all++;
  return 1;
}

/* pfi_path's look at the eta file, made when it holds `lim` etas: k = the basic variables that are
 * not a w; a rebuild when neta >= 2 k + PFI_REBUILD_SLACK (PFI_REBUILD_SLACK pivots later again if
 * it fails).  Returns the next eta count to look at (at most kmax, the capacity): k falls by at most
 * one a pivot, so neta - 2 k grows by at most 3 a pivot, and the trigger cannot be met before
 * ceil((2 k + PFI_REBUILD_SLACK - neta) / 3) more pivots.  So the path's loop tests one count a
 * pivot (with the capacity's, the test it made before) and scans the basis only now and then. */
__attribute__((noinline)) static int pfi_rebuild_look(svi_lcp_work* w, int n, const double* M, const double* d,
                                                            int kmax) {
  int k = 0;
  for (int i = 0; i < n; i++) k += w->basis[i] >= n;
  int next;
  if (w->neta >= 2 * k + PFI_REBUILD_SLACK && !pfi_rebuild(w, n, M, d))
    next = w->neta + PFI_REBUILD_SLACK;   /* near singular: the path goes on, tried later */
  else {   /* (after a rebuild the basis is the same and neta = k) */
    int gap = 2 * k + PFI_REBUILD_SLACK - w->neta;
    next = w->neta + (gap > 3 ? (gap + 2) / 3 : 1);
  }
  return next < kmax ? next : kmax;
}

void svi_lcp_set_rebuild(svi_lcp_work* w, int on) {
  if (w) w->no_rebuild = !on;
}

void svi_lcp_set_lexcols(svi_lcp_work* w, int on) {
  if (w) w->no_lexcols = !on;
}

void svi_lcp_lex_counts(const svi_lcp_work* w, long long* rows, long long* cols) {
  *rows = w ? w->lex_rows_all : 0;
  *cols = w ? w->lex_cols_all : 0;
}

void svi_lcp_counts(const svi_lcp_work* w, long long* paths_large, long long* rebuilds) {
  *paths_large = w ? w->paths_large : 0;
  *rebuilds = w ? w->rebuilds_all : 0;
}

/* lemke_path in revised form; SVI_ERR_CAPACITY when the eta file is full (the caller restarts on
 * the tableau); SVI_LCP_HANDOVER where it reaches w->hand_neta etas (svi_lcp_handover) */
static int pfi_path(svi_lcp_work* w, int n, const double* M, const double* q, const double* d,
                    const perturbation* pt, int max_iter, double piv_tol, double* z, int* pivots) {
  const int z0 = 2 * n, kmax = PFI_KMAX(w->pfi_n), level = ratio_level_rows(2, pfi_ld(n));
  int* basis = w->basis;
  w->paths_large += n >= SVI_PFI_LARGE_NMIN;
  w->neta = 0;
  w->pend_r = -1;
  for (int i = 0; i <= n; i++) w->first_eta[i] = INT_MAX;
  w->ld = pfi_ld(n);
  for (int i = 0; i < n; i++) { basis[i] = i; w->xb[i] = q[i]; }
  for (int i = n; i < w->ld; i++) w->xb[i] = 0;
  /* first pivot: as the tableau's, with B^-1 = I.
   * One pass first for the smallest ratio t_i1 = q_i1 / d_i1 (its first row) and the next smallest
   * t2 over the other rows.  When t2 - t_i1 > 2e-11 (1 + |t_i1| + |t2|), the scan below returns
   * i1: its running best is always one of the t_j >= t2 until it reaches i1, and
   * b - 1e-11 (1 + |b|) increases with b, so t_i1 is "better"; no later t_j >= t2 is better or
   * within the tie tolerance 1e-11 (1 + |t_i1|) of t_i1.  Otherwise (or with an infinite ratio),
   * the scan. */
  int r = -1;
  double best = INFINITY, dr = 1;
  {
    double m1 = INFINITY, m2 = INFINITY;
    int i1 = 0;
    for (int i = 0; i < n; i++) min_two(q[i] / (d ? d[i] : 1.0), i, &m1, &m2, &i1);
    if (m2 - m1 > 2e-11 * (1 + fabs(m1) + fabs(m2))) r = i1;
  }
  for (int i = 0, scan = r < 0; scan && i < n; i++) {
    double di = d ? d[i] : 1.0, t = q[i] / di;
    int better = r < 0 || t < best - 1e-11 * (1 + fabs(best));
    if (!better && t <= best + 1e-11 * (1 + fabs(best))) {   /* rows i and r of I scaled by 1/d */
      int k;
      better = free_scan(w, n, pt, i, r, di, dr, &k) < 0;
    }
    if (better) {
      if (t < best) best = t;
      r = i;
      dr = di;
    }
  }
  int leaving = basis[r];
  pfi_entering(w, n, M, d, z0);
  pfi_pivot(w, r);
  basis[r] = z0;
  /* the eta count at which the loop stops: the capacity, or before it a look for a rebuild
   * (pfi_rebuild_look; from n >= PFI_REBUILD_NMIN, first at PFI_REBUILD_SLACK + 2 etas, the least
   * count that can reach 2 k + PFI_REBUILD_SLACK with z0 basic, k >= 1) */
  int lim = n >= PFI_REBUILD_NMIN && !w->no_rebuild && PFI_REBUILD_SLACK + 2 < kmax ? PFI_REBUILD_SLACK + 2 : kmax;
  if (w->hand_neta < lim) lim = w->hand_neta;   /* a handover is a stop as lim is */
  int it = 1;
  for (;;) {
    int entering = leaving < n ? leaving + n : leaving - n;
    if (it >= max_iter) { *pivots = it; return SVI_ERR_MAXITER; }
    if (w->neta >= lim) {
      if (w->neta >= w->hand_neta) {   /* the low-rank Lemke goes on from here (svi_lcp_handover) */
        pfi_settle(w);
        w->hand_entering = entering;
        w->hand_pivots = *pivots = it;
        return SVI_LCP_HANDOVER;
      }
      if (w->neta >= kmax) { *pivots = it; return SVI_ERR_CAPACITY; }
      lim = pfi_rebuild_look(w, n, M, d, kmax);
      if (w->hand_neta < lim) lim = w->hand_neta;
    }
    pfi_entering(w, n, M, d, entering);
    r = pfi_ratio_test(w, n, piv_tol, pt, level);
    if (r < 0) { *pivots = it; return SVI_ERR_RAY; }
    leaving = basis[r];
    pfi_pivot(w, r);
    basis[r] = entering;
    it++;
    if (leaving == z0) break;
  }
  *pivots = it;
  pfi_settle(w);
  /* z from the basic values without a branch on which variables are basic (a w or z0 row
   * writes to the spare slot n) */
  double* zs = w->scratch;   /* n + 1 */
  memset(zs, 0, sizeof(double) * (n + 1));
  for (int i = 0; i < n; i++) {
    int b = basis[i] - n, isz = (unsigned)b < (unsigned)n;
    zs[isz * b + (1 - isz) * n] = svi_pos_part(w->xb[i]);
  }
  memcpy(z, zs, sizeof(double) * n);
  return SVI_OK;
}

void svi_lcp_handover(const svi_lcp_work* w, svi_lcp_basis* b) {
  b->basis = w->basis;
  b->xb = w->xb;
  b->entering = w->hand_entering;
  b->pivots = w->hand_pivots;
}

/* the path on the product form when it applies, else (or when its eta file fills up) the
 * tableau; *pfi tells refine which B^-1 to use.  SVI_LCP_HANDOVER from the product form is
 * returned as it is. */
static int any_path(svi_lcp_work* w, int n, const double* M, const double* q, const double* d,
                    const perturbation* pt, int max_iter, double piv_tol, double* z, int* pivots) {
  if (w->use_pfi && n <= w->pfi_n) {
    int st = pfi_path(w, n, M, q, d, pt, max_iter, piv_tol, z, pivots);
    if (st != SVI_ERR_CAPACITY) return st;
    int p0 = *pivots;
    w->use_pfi = 0;
    st = lemke_path(w, n, need_m(w, M), q, d, pt, max_iter, piv_tol, z, pivots);
    *pivots += p0;
    w->use_pfi = 1;
    w->neta = -1;   /* refine: the tableau's B^-1 */
    return st;
  }
  w->neta = -1;
  return lemke_path(w, n, need_m(w, M), q, d, pt, max_iter, piv_tol, z, pivots);
}

/* One step of iterative refinement with the tableau's B^-1:  x_B += B^-1 (q - B x_B).
 * B has column e_i for a basic w_i and -M(:,j) for a basic z_j. */
static void refine(svi_lcp_work* w, int n, const double* M, const double* q, double* z) {
  const int ncol = 2 * n + 2;
  double* res = w->scratch;        /* q - B x_B = -(w - M z - q) with w = M z + q on basis */
  double* xb = w->scratch + n;
  for (int i = 0; i < n; i++) {
    int b = w->basis[i];
    if (b < n) {
      double wi = q[b];
      for (int j = 0; j < n; j++) wi += M[b * n + j] * z[j];
      xb[i] = wi;
    } else {
      xb[i] = z[b - n];
    }
  }
  for (int i = 0; i < n; i++) {
    double bx = 0;   /* (B x_B)_i */
    for (int k = 0; k < n; k++) {
      int b = w->basis[k];
      if (b < n) bx += (b == i) ? xb[k] : 0.0;
      else bx -= M[i * n + (b - n)] * xb[k];
    }
    res[i] = q[i] - bx;
  }
  if (w->neta >= 0) {   /* the product form: res <- B^-1 res, in the eta file's spare column */
    double* x = pfi_col(w);
    memcpy(x, res, sizeof(double) * n);
    for (int i = n; i < w->ld; i++) x[i] = 0;
    pfi_ftran(w, n, x);
    memcpy(res, x, sizeof(double) * n);
  }
  for (int i = 0; i < n; i++) {
    double dx = 0;
    if (w->neta >= 0) dx = res[i];
    else {
      const double* Binv = w->T + i * ncol;
      for (int k = 0; k < n; k++) dx += Binv[k] * res[k];
    }
    int b = w->basis[i];
    if (b >= n && b < 2 * n) {
      double x = xb[i] + dx;
      z[b - n] = x > 0 ? x : 0;
    }
  }
}

/* The residual of z, after up to two steps of iterative refinement with the tableau's B^-1 while
 * it is above tol (kept only when a step lowers it). */
static double refined_residual(svi_lcp_work* w, const svi_lcp_options* o, int n, const double* M,
                               const double* q, double* z, double tol) {
  double res = residual_of(w, o, n, M, q, z);
  double* keep = w->scratch + 2 * w->nmax;
  for (int k = 0; k < 2 && res > tol; k++) {
    memcpy(keep, z, sizeof(double) * n);
    M = need_m(w, M);
    refine(w, n, M, q, z);
    double r2 = residual_of(w, o, n, M, q, z);
    if (!(r2 < res)) {   /* back to the kept z, evaluated last (svi_lcp_prepared.residual) */
      memcpy(z, keep, sizeof(double) * n);
      res = residual_of(w, o, n, M, q, z);
      break;
    }
    res = r2;
  }
  return res;
}

int svi_lcp_lemke(svi_lcp_work* w, int n, const double* M, const double* q, const double* d,
                  const svi_lcp_options* opt, double* z, svi_lcp_info* info) {
  return svi_lcp_lemke_perturbed(w, n, M, q, d, NULL, NULL, opt, z, info);
}

static int lemke_solve(svi_lcp_work* w, int n, const svi_lcp_prepared* P, const double* q,
                       const double* d, const perturbation* pt, const svi_lcp_options* opt,
                       double* z, svi_lcp_info* info);

/* The checks of both Lemke entries: arguments, capacity, M (only if check_m: the prepared entry
 * had it checked per event), q and d finite, d > 0; clears info and z. */
SVI_SIMD static int check_entry(const svi_lcp_work* w, int n, const double* M, int check_m, const double* q,
                                const double* d, double* z, svi_lcp_info* info) {
  memset(info, 0, sizeof(*info));
  if (!w || (check_m && !M) || !q || !z || n <= 0) return info->status = SVI_ERR_ARG;
  if (n > w->nmax) return info->status = SVI_ERR_CAPACITY;
  memset(z, 0, sizeof(double) * n);
  if ((check_m && !svi_all_finite(n * n, M)) || !svi_all_finite(n, q) || (d && !svi_all_finite(n, d)))
    return info->status = SVI_ERR_NONFINITE;
  /* a subnormal d_i would make the first eta's reciprocal pivot infinite */
  if (d) {
    int ok = 1;   /* every d_i >= DBL_MIN (a NaN was rejected above); no branch, vectorised */
    for (int i = 0; i < n; i++) ok &= d[i] >= DBL_MIN;
    if (!ok) return info->status = SVI_ERR_ARG;
  }
  return SVI_OK;
}

int svi_lcp_lemke_perturbed(svi_lcp_work* w, int n, const double* M, const double* q,
                            const double* d, const int* order, const double* sign,
                            const svi_lcp_options* opt, double* z, svi_lcp_info* info) {
  perturbation pt = {order, sign, NULL};
  svi_lcp_info local;
  if (!info) info = &local;
  int st = check_entry(w, n, M, 1, q, d, z, info);
  if (st != SVI_OK) return st;
  w->use_pfi = 0;   /* the public entry keeps the explicit tableau (the tests' oracle) */
  svi_lcp_prepared P = {.M = M, .mnorm = norm_inf_mat(n, M)};
  return lemke_solve(w, n, &P, q, d, &pt, opt, z, info);
}

/* The impact laws' entry: M was checked finite and its norm taken once per event
 * (svi_impact_setup), so a solve checks only the O(n) data. */
int svi_lcp_lemke_prepared(svi_lcp_work* w, int n, const svi_lcp_prepared* P, const double* q,
                           const double* d, const int* order, const double* sign,
                           const svi_lcp_options* opt, double* z, svi_lcp_info* info) {
  perturbation pt = {order, sign, P ? P->lazy : NULL};
  svi_lcp_info local;
  if (!info) info = &local;
  if (!P || (!P->M && !P->matrix)) {
    memset(info, 0, sizeof(*info));
    return info->status = SVI_ERR_ARG;
  }
  int st = check_entry(w, n, P->M, 0, q, d, z, info);
  if (st != SVI_OK) return st;
  w->use_pfi = 1;
  return lemke_solve(w, n, P, q, d, &pt, opt, z, info);
}

static int lemke_solve(svi_lcp_work* w, int n, const svi_lcp_prepared* P, const double* q,
                       const double* d, const perturbation* ptp, const svi_lcp_options* opt,
                       double* z, svi_lcp_info* info) {
  perturbation pt = *ptp;
  const double* M = P->M;
  double mnorm = P->mnorm;
  w->prep = P;
  svi_lcp_options o = opt ? *opt : svi_lcp_default_options();
  int max_iter = o.max_iter > 0 ? o.max_iter : 50 * n + 10;
  double piv_tol = o.piv_tol > 0 ? o.piv_tol : n * fmax(1.0, mnorm) * 1e2 * DBL_EPSILON;
  double res_tol = o.res_tol > 0 ? o.res_tol : 1e-9;

  /* trivial solution z = 0 */
  int trivial = 1;
  for (int i = 0; i < n; i++) if (q[i] < 0) { trivial = 0; break; }
  if (trivial) return info->status = SVI_OK;

  int piv = 0;
  w->rebuilds = 0;
  if (P->handover_neta > 0) w->hand_neta = P->handover_neta;
  int st = any_path(w, n, M, q, d, &pt, max_iter, piv_tol, z, &piv);
  w->hand_neta = INT_MAX;   /* the retries below run to their end */
  info->pivots = piv;
  info->rebuilds = w->rebuilds;
  if (st == SVI_OK) {
    info->residual = refined_residual(w, &o, n, M, q, z, res_tol);
    if (info->residual <= res_tol) return info->status = SVI_OK;
    st = SVI_ERR_RESIDUAL;
  } else if (st == SVI_LCP_HANDOVER)
    return info->status = st;
  info->status = st;
  if (!o.regularize) { memset(z, 0, sizeof(double) * n); return st; }

  /* regularised retry (Drake's SolveLcpLemkeRegularized): Lemke on M + alpha I, then iterative
   * refinement of its basis on the ORIGINAL problem.  Accepted only if the residual on the
   * original problem -- in the caller's units, rounding included -- is at most reg_tol: the
   * regularisation may choose the basis, never excuse the answer. */
  double reg_tol = fmax(res_tol, o.reg_tol > 0 ? o.reg_tol : 1e-6);
  double scale = fmax(1.0, mnorm);
  M = need_m(w, M);
  for (double a = 1e-12; a <= 1.01e-6; a *= 100) {
    memcpy(w->Mreg, M, sizeof(double) * n * n);
    for (int i = 0; i < n; i++) w->Mreg[i * n + i] += a * scale;
    int p = 0;
    int s2 = any_path(w, n, w->Mreg, q, d, &pt, max_iter, piv_tol, z, &p);
    info->pivots += p;
    info->rebuilds = w->rebuilds;
    if (s2 != SVI_OK) continue;
    double res = refined_residual(w, &o, n, M, q, z, res_tol);
    if (res <= reg_tol) {
      info->residual = res;
      info->alpha = a * scale;
      return info->status = SVI_OK_REGULARIZED;
    }
  }
  memset(z, 0, sizeof(double) * n);
  return info->status;
}
