/* svi_modes.c -- every outcome of one planar Routh step, by contact-mode enumeration.
 *
 * For nt = 1 the step LCP (73)-(75) splits per contact into seven modes in the reduced
 * unknowns (l_n, l_t), l_t = l_D+ - l_D- (v' depends on l_D only through l_t):
 *   SEP         l_n = 0,  l_t = 0                       needs  u_n' >= 0
 *   BUD-STICK   l_n = l_max,           u_t' = 0         needs  u_n' <= 0, |l_t| <= mu l_n
 *   BUD-SLIDE+- l_n = l_max, l_t = +-mu l_n             needs  u_n' <= 0, +-u_t' <= 0
 *   INT-STICK   u_n' = 0,              u_t' = 0         needs  0 <= l_n <= l_max, |l_t| <= mu l_n
 *   INT-SLIDE+- u_n' = 0,   l_t = +-mu l_n              needs  0 <= l_n <= l_max, +-u_t' <= 0
 * (from (73)-(74): beta > 0 iff l_n = l_max; from (32)-(33): gamma > 0 iff sliding on the cone
 * edge opposite to the slip).  Every LCP solution maps to one mode pattern and back, so the
 * 7^nc patterns give every distinct v' -- including the ones Lemke's ray never reaches when
 * Assumption 6 fails (compass gait).  Singular patterns (redundant contacts) are solved in the
 * least-squares sense and kept only if they satisfy the equations.
 *
 * Spatial contacts (nt = 2, the four-sided pyramid D = [t1, -t1, t2, -t2], eq. 32-33) split the
 * same way into 19 modes in (l_n, l_t1, l_t2): SEP, and for each of BUD (l_n = l_max) and INT
 * (u_n' = 0, l_n free):
 *   STICK       u_t' = 0                                  needs  |l_t1| + |l_t2| <= mu l_n
 *   VERTEX j,s  l_tj = s mu l_n, other l_t = 0             needs  s u_tj' <= 0, |u_t(other)'| <= |u_tj'|
 *   FACE s1,s2  l_t = mu (s1 a, s2 b), a + b = l_n, a,b>=0 needs  s1 u_t1' = s2 u_t2' <= 0
 * From (32)-(33): gamma = max_k(-d_k . u_t') = |u_t'|_inf, and friction lies on the pyramid's
 * faces or vertices that face the slip most.  So every LCP solution is one of 19^nc patterns,
 * each linear in its unknowns (INT + FACE is linear in (a, b)), and the feasible patterns give
 * every distinct v' of the step (tests/test_physics.c compares with basis enumeration).
 */
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "svi_internal.h"

enum { SEP, BUD_STICK, BUD_SLIP_P, BUD_SLIP_M, INT_STICK, INT_SLIP_P, INT_SLIP_M, NMODES };

#define MODE_MAX_NC 4
/* the packed rows are picked after 16, 64, 256 and this many steps of an event, then kept */
#define PATTERN_LEARN_STEPS 1024
#define KMAX (3 * MODE_MAX_NC)   /* unknowns of one pattern: 2 per planar, 3 per spatial contact */
/* the factors of K kept per pattern for the event (sm_fac, sm_kf): up to SM_FAC_NC spatial
 * contacts (19^2 patterns of at most 6 unknowns) or PM_FAC_NC planar ones (7^3 patterns of at
 * most 6) */
#define SM_FAC_NC 2
#define PM_FAC_NC 3
#define SM_FAC_K (3 * SM_FAC_NC)
enum { SM_FAC_PATTERNS = 19 * 19 };

/* rows of Jbar for contact i: normal i, tangent +t at nc + 2 i (nt = 1) */
static int row_n(const svi_impact* s, int i) { (void)s; return i; }
static int row_t(const svi_impact* s, int i) { return s->nc + 2 * i; }

/* Solve K y = r (k x k) by Gaussian elimination with partial pivoting; singular systems by
 * the regularised normal equations.  The elimination is split in two: mode_factor does
 * everything that depends on K only (the pivots, the multipliers, U; for a singular K the
 * Cholesky factor of K^T K + delta I), mode_solve the operations on r, in the order the combined
 * elimination made them, so a factor kept for a pattern (spatial_pattern: K is a per-event
 * constant) solves every later right-hand side with the same bits. */
enum { MF_NONE, MF_LU, MF_SING, MF_FAIL };   /* not factored, LU, singular (Cholesky), no solution */
struct svi_mode_fac {
  int state, k;
  int piv[KMAX];   /* the row swapped with row c at column c */
  double kn;       /* max |K_ij| */
};

/* the singular K of mode_factor: (K^T K + delta I) y = K^T r, the minimum-norm solution as
 * delta -> 0 (F: the Cholesky factor of that matrix) */
static void mode_factor_singular(struct svi_mode_fac* h, int k, const double* K, double* F) {
  double kn = h->kn;
  for (int i = 0; i < k; i++) {
    for (int j = 0; j < k; j++) {
      double sum = 0;
      for (int m = 0; m < k; m++) sum += K[m * k + i] * K[m * k + j];
      F[i * k + j] = sum;
    }
    F[i * k + i] += 1e-13 * kn * kn + 1e-300;
  }
  h->state = svi_cholesky(k, F) ? MF_SING : MF_FAIL;
}

/* mode_factor's elimination with k a constant in each inlined copy (k <= 6: its loops unroll; the
 * same operations in the same order as with k a variable, so the same bits) */
static inline __attribute__((always_inline)) void mode_factor_k(struct svi_mode_fac* h, const double* K,
                                                                double* F, const int k) {
  double kn = 0;
  for (int i = 0; i < k * k; i++) { double a = fabs(K[i]); if (a > kn) kn = a; }
  h->k = k;
  h->kn = kn;
  memcpy(F, K, sizeof(double) * k * k);
  double sing = 1e-10 * kn;
  for (int c = 0; c < k; c++) {
    int p = c;
    double best = fabs(F[c * k + c]);
    for (int i = c + 1; i < k; i++) if (fabs(F[i * k + c]) > best) { best = fabs(F[i * k + c]); p = i; }
    if (!(best > sing)) { mode_factor_singular(h, k, K, F); return; }
    h->piv[c] = p;
    if (p != c)
      for (int j = c; j < k; j++) { double t = F[c * k + j]; F[c * k + j] = F[p * k + j]; F[p * k + j] = t; }
    double inv = 1.0 / F[c * k + c];
    for (int i = c + 1; i < k; i++) {
      double f = F[i * k + c] * inv;
      F[i * k + c] = f;
      if (f == 0) continue;
      for (int j = c + 1; j < k; j++) F[i * k + j] -= f * F[c * k + j];
    }
  }
  h->state = MF_LU;
}

/* F (k x k): the multipliers below the diagonal (each written at its column's step and never
 * swapped after it: the later swaps move columns >= their own only) and U on and above it; or,
 * for a singular K, the Cholesky factor of N = K^T K + (1e-13 kn^2 + 1e-300) I */
static void mode_factor(struct svi_mode_fac* h, int k, const double* K, double* F) {
  switch (k) {
  case 1: mode_factor_k(h, K, F, 1); return;
  case 2: mode_factor_k(h, K, F, 2); return;
  case 3: mode_factor_k(h, K, F, 3); return;
  case 4: mode_factor_k(h, K, F, 4); return;
  case 5: mode_factor_k(h, K, F, 5); return;
  case 6: mode_factor_k(h, K, F, 6); return;
  default: mode_factor_k(h, K, F, k); return;
  }
}

/* the LU solve of mode_solve with k a constant in each inlined copy (as mode_factor_k) */
static inline __attribute__((always_inline)) void lu_solve_k(const struct svi_mode_fac* h, const double* F,
                                                             const double* r, double* y, const int k) {
  double b[KMAX];
  for (int i = 0; i < k; i++) b[i] = r[i];
  for (int c = 0; c < k; c++) {
    int p = h->piv[c];
    if (p != c) { double t = b[c]; b[c] = b[p]; b[p] = t; }
    for (int i = c + 1; i < k; i++) {
      double f = F[i * k + c];
      if (f == 0) continue;
      b[i] -= f * b[c];
    }
  }
  for (int c = k - 1; c >= 0; c--) {
    double sum = b[c];
    for (int j = c + 1; j < k; j++) sum -= F[c * k + j] * y[j];
    y[c] = sum / F[c * k + c];
  }
}

/* y with K y = r from mode_factor's h, F (and K for a singular K).  Returns 0 if no y satisfies
 * K y = r to tol. */
static int mode_solve(const struct svi_mode_fac* h, const double* K, const double* F, const double* r,
                      double* y, double tol) {
  int k = h->k;
  if (h->state == MF_FAIL) return 0;
  if (h->state == MF_LU) {
    switch (k) {
    case 1: lu_solve_k(h, F, r, y, 1); break;
    case 2: lu_solve_k(h, F, r, y, 2); break;
    case 3: lu_solve_k(h, F, r, y, 3); break;
    case 4: lu_solve_k(h, F, r, y, 4); break;
    case 5: lu_solve_k(h, F, r, y, 5); break;
    case 6: lu_solve_k(h, F, r, y, 6); break;
    default: lu_solve_k(h, F, r, y, k); break;
    }
    return 1;
  }
  double kn = h->kn;
  for (int i = 0; i < k; i++) {
    y[i] = 0;
    for (int m = 0; m < k; m++) y[i] += K[m * k + i] * r[m];
  }
  svi_cholesky_solve(k, F, y);
  /* Iterated Tikhonov: y += (K^T K + delta I)^-1 K^T (r - K y) removes the delta bias, so a
   * consistent singular pattern is solved to rounding (what the physical residual asks).  Only
   * while needed: most singular patterns are either solved to rounding at once or clearly
   * inconsistent. */
  for (int it = 0;; it++) {
    double e[KMAX], g[KMAX], emax = 0, rmax = 0, ymax = 0;
    for (int i = 0; i < k; i++) {
      double sum = r[i];
      for (int j = 0; j < k; j++) sum -= K[i * k + j] * y[j];
      e[i] = sum;
      if (fabs(sum) > emax) emax = fabs(sum);
      if (fabs(r[i]) > rmax) rmax = fabs(r[i]);
      if (fabs(y[i]) > ymax) ymax = fabs(y[i]);
    }
    /* 1e-12 of the terms: three decades below the 1e-9 the step's physical residual asks */
    if (emax <= 1e-12 * (rmax + kn * ymax)) return 1;
    if (it == 3 || emax > 1e3 * tol) return emax <= tol;
    for (int i = 0; i < k; i++) {
      double sum = 0;
      for (int m = 0; m < k; m++) sum += K[m * k + i] * e[m];
      g[i] = sum;
    }
    svi_cholesky_solve(k, F, g);
    for (int i = 0; i < k; i++) y[i] += g[i];
  }
}

/* both halves at once, for a K solved once */
static int solve_mode(int k, const double* K, const double* r, double* y, double tol, int* was_singular) {
  struct svi_mode_fac h;
  double F[KMAX * KMAX];
  mode_factor(&h, k, K, F);
  *was_singular = h.state != MF_LU;
  return mode_solve(&h, K, F, r, y, tol);
}

/* A pattern's K and its factor: the event's kept slot (sm_fac, sm_kf) or the caller's locals */
typedef struct { struct svi_mode_fac* h; double *K, *F; } fac_ref;

/* the kept slot of a pattern of nc contacts, each in one of nmodes modes (the same index for
 * every path: contact 0 fastest) */
static fac_ref kept_factor(svi_impact* s, const int* mode, int nc, int nmodes) {
  int pat = 0;
  for (int i = nc - 1; i >= 0; i--) pat = pat * nmodes + mode[i];
  double* K = s->sm_kf + (size_t)pat * 2 * SM_FAC_K * SM_FAC_K;
  fac_ref f = {s->sm_fac + pat, K, K + SM_FAC_K * SM_FAC_K};
  return f;
}

/* factor f.K (k x k, just formed) into f, counted for the tests */
static void factor_pattern(svi_impact* s, fac_ref f, int k) {
  mode_factor(f.h, k, f.K, f.F);
  s->patterns_factored++;
  s->patterns_singular += f.h->state != MF_LU;
}

/* Step outcomes are told apart by their velocity change du (m values): a new one (no kept outcome
 * within dtol in every entry, and room for it) is appended to s->seen and 1 returned. */
static inline __attribute__((always_inline)) int new_outcome(svi_impact* s, int count, int m,
                                                             const double* du, double dtol) {
  int dup = 0;
  for (int c = 0; c < count && !dup; c++) {
    const double* o = s->seen + c * m;
    int same = 1;
    for (int a = 0; a < m && same; a++) same = fabs(o[a] - du[a]) <= dtol;
    dup = same;
  }
  if (dup || count >= SVI_ENUM_MAX_SOLS) return 0;
  for (int a = 0; a < m; a++) s->seen[count * m + a] = du[a];
  return 1;
}

/* Contact i's unknowns in mode md, appended at k: unknown j moves x[col[j]] by 1 and
 * x[col[j] + 1] by slip[j] (sliding: l_t = +-mu l_n), and forces reduced row eq[j] to zero
 * velocity.  Returns the new count. */
static int mode_unknowns(int i, int md, double mu, int k, int* col, double* slip, int* eq) {
  switch (md) {
  case BUD_STICK: col[k] = 2 * i + 1; slip[k] = 0; eq[k++] = 2 * i + 1; break;
  case INT_STICK:
    col[k] = 2 * i; slip[k] = 0; eq[k++] = 2 * i;
    col[k] = 2 * i + 1; slip[k] = 0; eq[k++] = 2 * i + 1;
    break;
  case INT_SLIP_P: col[k] = 2 * i; slip[k] = mu; eq[k++] = 2 * i; break;
  case INT_SLIP_M: col[k] = 2 * i; slip[k] = -mu; eq[k++] = 2 * i; break;
  default: break;
  }
  return k;
}

/* x for one mode pattern (before the sign checks): fixed impulses from the budgets plus the
 * unknowns that zero the pattern's velocity rows.  Returns 0 if no x satisfies the equations. */
static int pattern_impulse(svi_impact* s, const int* mode, const double* ur,
                           const double* lmax, double* x, int* singular) {
  int nc = s->nc, m2 = 2 * nc, k = 0;
  const double* Wr = s->Wr;
  int col[2 * MODE_MAX_NC];      /* unknown j moves x[col[j]] by 1 ... */
  double slip[2 * MODE_MAX_NC];  /* ... and x[col[j] + 1] by slip[j] (sliding: l_t = +-mu l_n) */
  int eq[2 * MODE_MAX_NC];       /* reduced rows forced to zero velocity */
  for (int i = 0; i < nc; i++) {
    double mu = s->mu[i];
    int md = mode[i];
    x[2 * i] = md >= BUD_STICK && md <= BUD_SLIP_M ? lmax[i] : 0;
    x[2 * i + 1] = md == BUD_SLIP_P ? mu * lmax[i] : md == BUD_SLIP_M ? -mu * lmax[i] : 0;
    k = mode_unknowns(i, md, mu, k, col, slip, eq);
  }
  if (singular) *singular = 0;
  if (k == 0) return 1;
  double r[2 * MODE_MAX_NC], y[2 * MODE_MAX_NC];
  for (int e = 0; e < k; e++) {
    const double* w = Wr + eq[e] * m2;
    double rhs = -ur[eq[e]];
    for (int a = 0; a < m2; a++) rhs -= w[a] * x[a];
    r[e] = rhs;
  }
  /* K and its factor: kept per pattern for up to three contacts (K depends on the modes and the
   * event only; the same factor, so the same bits as factoring it again) */
  struct svi_mode_fac local = {.state = MF_NONE};
  double Kl[KMAX * KMAX], Fl[KMAX * KMAX];
  fac_ref f = {&local, Kl, Fl};
  if (nc <= PM_FAC_NC && s->sm_fac) f = kept_factor(s, mode, nc, NMODES);
  if (f.h->state == MF_NONE) {
    for (int e = 0; e < k; e++) {
      const double* w = Wr + eq[e] * m2;
      for (int j = 0; j < k; j++) {
        int c = col[j];
        f.K[e * k + j] = w[c] + (slip[j] != 0 ? slip[j] * w[c + 1] : 0);
      }
    }
    factor_pattern(s, f, k);
  }
  if (!mode_solve(f.h, f.K, f.F, r, y, s->sep_tol * 10)) return 0;
  if (singular) *singular = f.h->state != MF_LU;
  for (int j = 0; j < k; j++) {
    x[col[j]] += y[j];
    if (slip[j] != 0) x[col[j] + 1] += slip[j] * y[j];
  }
  return 1;
}

/* The sign conditions of the pattern at impulse x and post-step reduced velocity up. */
static int pattern_feasible(const svi_impact* s, const int* mode, const double* lmax,
                            const double* x, const double* up) {
  double vtol = s->sep_tol * 10;
  double itol = 1e-9 * (s->ref_impulse > 0 ? s->ref_impulse : 1.0);
  for (int i = 0; i < s->nc; i++) {
    double un = up[2 * i], ut = up[2 * i + 1], ln = x[2 * i], lt = x[2 * i + 1];
    int md = mode[i];
    if (md == SEP) { if (un < -vtol) return 0; continue; }
    if (md <= BUD_SLIP_M) { if (un > vtol) return 0; }
    else if (ln < -itol || ln > lmax[i] + itol) return 0;
    if ((md == BUD_STICK || md == INT_STICK) && fabs(lt) > s->mu[i] * ln + itol) return 0;
    if ((md == BUD_SLIP_P || md == INT_SLIP_P) && ut > vtol) return 0;
    if ((md == BUD_SLIP_M || md == INT_SLIP_M) && ut < -vtol) return 0;
  }
  return 1;
}

static void reduced_velocity(const svi_impact* s, const double* ur, const double* x, double* up) {
  int m2 = 2 * s->nc;
  for (int a = 0; a < m2; a++) {
    const double* w = s->Wr + a * m2;
    double sum = ur[a];
    for (int b = 0; b < m2; b++) sum += w[b] * x[b];
    up[a] = sum;
  }
}

/* Direct evaluation of one pattern (used where no precomputed map exists). */
static int try_pattern(svi_impact* s, const int* mode, const double* ur, const double* lmax,
                       double* x, double* up) {
  if (!pattern_impulse(s, mode, ur, lmax, x, NULL)) return 0;
  reduced_velocity(s, ur, x, up);
  return pattern_feasible(s, mode, lmax, x, up);
}

/* Pseudo-inverse of a small k x k matrix by one-sided Jacobi (K V = A, columns of A = sigma_j
 * u_j): K^+ = sum_j v_j a_j^T / sigma_j^2 over sigma_j > 1e-10 sigma_max. */
static void pinv_small(int k, const double* K, double* Kp) {
  double A[KMAX][KMAX], V[KMAX][KMAX];
  for (int i = 0; i < k; i++)
    for (int j = 0; j < k; j++) { A[i][j] = K[i * k + j]; V[i][j] = i == j; }
  for (int sweep = 0; sweep < 60; sweep++) {
    int rotated = 0;
    for (int p = 0; p < k; p++)
      for (int q = p + 1; q < k; q++) {
        double a = 0, b = 0, c = 0;
        for (int i = 0; i < k; i++) { a += A[i][p] * A[i][p]; b += A[i][q] * A[i][q]; c += A[i][p] * A[i][q]; }
        if (!(fabs(c) > 1e-15 * sqrt(a * b))) continue;
        rotated = 1;
        double cs, sn;   /* the rotation of A^T A's 2 x 2 block (p, q) */
        svi_jacobi_rotation(a, b, c, &cs, &sn);
        for (int i = 0; i < k; i++) {
          double ap = A[i][p], aq = A[i][q];
          A[i][p] = cs * ap - sn * aq;
          A[i][q] = sn * ap + cs * aq;
          double vp = V[i][p], vq = V[i][q];
          V[i][p] = cs * vp - sn * vq;
          V[i][q] = sn * vp + cs * vq;
        }
      }
    if (!rotated) break;
  }
  double s2[KMAX], smax = 0;
  for (int j = 0; j < k; j++) {
    s2[j] = 0;
    for (int i = 0; i < k; i++) s2[j] += A[i][j] * A[i][j];
    smax = fmax(smax, s2[j]);
  }
  for (int i = 0; i < k; i++)
    for (int m = 0; m < k; m++) {
      double sum = 0;
      for (int j = 0; j < k; j++)
        if (s2[j] > 1e-20 * smax && s2[j] > 0) sum += V[i][j] * A[m][j] / s2[j];
      Kp[i * k + m] = sum;
    }
}

/* x = X g and up = U g for one pattern, g = [ur; lmax] (the step's data).  X depends only on Wr,
 * mu and the pattern, all constant during an impact event.  A singular pattern (redundant
 * contacts) takes the minimum-norm least-squares solution, which is linear in g too, and its
 * equations hold iff E g = 0 (E: the residual of the least-squares solve).  Returns the number
 * of rows of E (0 for a nonsingular pattern). */
static int pattern_linear_map(const svi_impact* s, const int* mode, double* X, double* U, double* E) {
  int nc = s->nc, m2 = 2 * nc, ng = m2 + nc, k = 0;
  const double* Wr = s->Wr;
  int col[2 * MODE_MAX_NC], eq[2 * MODE_MAX_NC];
  double slip[2 * MODE_MAX_NC];
  double Xf[2 * MODE_MAX_NC][3 * MODE_MAX_NC];   /* the impulses fixed by the budgets */
  memset(Xf, 0, sizeof(Xf));
  for (int i = 0; i < nc; i++) {
    double mu = s->mu[i];
    int md = mode[i];
    if (md >= BUD_STICK && md <= BUD_SLIP_M) Xf[2 * i][m2 + i] = 1;
    if (md == BUD_SLIP_P) Xf[2 * i + 1][m2 + i] = mu;
    if (md == BUD_SLIP_M) Xf[2 * i + 1][m2 + i] = -mu;
    k = mode_unknowns(i, md, mu, k, col, slip, eq);
  }
  for (int a = 0; a < m2; a++)
    for (int j = 0; j < ng; j++) X[a * ng + j] = Xf[a][j];
  int ne = 0;
  if (k > 0) {
    double K[4 * MODE_MAX_NC * MODE_MAX_NC], R[2 * MODE_MAX_NC][3 * MODE_MAX_NC];
    for (int e = 0; e < k; e++) {
      const double* w = Wr + eq[e] * m2;
      for (int j = 0; j < ng; j++) {   /* r = -ur[eq] - Wr[eq] x_fixed */
        double rhs = j == eq[e] ? -1.0 : 0.0;
        for (int a = 0; a < m2; a++) rhs -= w[a] * Xf[a][j];
        R[e][j] = rhs;
      }
      for (int j = 0; j < k; j++) {
        int c = col[j];
        K[e * k + j] = w[c] + (slip[j] != 0 ? slip[j] * w[c + 1] : 0);
      }
    }
    /* nonsingular: Gaussian elimination column by column, as the step used to solve it */
    double Y[2 * MODE_MAX_NC][3 * MODE_MAX_NC], y[2 * MODE_MAX_NC], r[2 * MODE_MAX_NC], Kc[4 * MODE_MAX_NC * MODE_MAX_NC];
    int singular = 0;
    for (int j = 0; j < ng && !singular; j++) {
      for (int e = 0; e < k; e++) r[e] = R[e][j];
      memcpy(Kc, K, sizeof(double) * k * k);
      int sg = 0;
      solve_mode(k, Kc, r, y, INFINITY, &sg);
      if (sg) singular = 1;
      for (int e = 0; e < k; e++) Y[e][j] = y[e];
    }
    if (singular) {
      double Kp[4 * MODE_MAX_NC * MODE_MAX_NC];
      pinv_small(k, K, Kp);
      for (int e = 0; e < k; e++)
        for (int j = 0; j < ng; j++) {
          double sum = 0;
          for (int m = 0; m < k; m++) sum += Kp[e * k + m] * R[m][j];
          Y[e][j] = sum;
        }
      /* E = R - K Y: the equations' residual, zero iff the pattern is solvable at g */
      for (int e = 0; e < k; e++) {
        double emax = 0;
        for (int j = 0; j < ng; j++) {
          double sum = R[e][j];
          for (int m = 0; m < k; m++) sum -= K[e * k + m] * Y[m][j];
          E[ne * ng + j] = sum;
          emax = fmax(emax, fabs(sum));
        }
        double rmax = 0;
        for (int j = 0; j < ng; j++) rmax = fmax(rmax, fabs(R[e][j]));
        if (emax > 1e-12 * rmax) ne++;   /* rows that vanish up to rounding are dropped */
      }
    }
    for (int j = 0; j < k; j++)
      for (int g = 0; g < ng; g++) {
        X[col[j] * ng + g] += Y[j][g];
        if (slip[j] != 0) X[(col[j] + 1) * ng + g] += slip[j] * Y[j][g];
      }
  }
  for (int a = 0; a < m2; a++)       /* U = [I 0] + Wr X */
    for (int j = 0; j < ng; j++) {
      double sum = j == a ? 1.0 : 0.0;
      for (int b = 0; b < m2; b++) sum += Wr[a * m2 + b] * X[b * ng + j];
      U[a * ng + j] = sum;
    }
  return ne;
}

static void pick_packed_rows(svi_impact* s);

/* acc = fma(a, b, acc) lane by lane: the scalar twin of the AVX2 kernels' _mm256_fmadd_pd (in
 * place, by pointer: a vector argument or return needs AVX in the ABI) */
static inline void fma4(svi_v4d* acc, const svi_v4d* a, const svi_v4d* b) {
  for (int l = 0; l < 4; l++) (*acc)[l] = fma((*a)[l], (*b)[l], (*acc)[l]);
}

/* sum_j a_j g0_j over g's velocity part (j < m2) in the full sum's order, t = a_0 g0_0, then
 * t = fma(a_j, g0_j, t) left to right (dot_ng): the full sum at g = [g0; l_max] is this partial
 * sum continued over the budget terms, the same operations, so the same bits.  stride: between
 * a's coefficients. */
static double prefix_sum(const double* a, size_t stride, const double* g0, int m2) {
  double t = a[0] * g0[0];
  for (int j = 1; j < m2; j++) t = fma(a[(size_t)j * stride], g0[j], t);
  return t;
}

/* pattern_pk: group p / 4, packed row k (0, 1): coefficients j at (ng + 2) 4 k + 4 j, tau at
 * (ng + 2) 4 k + 4 ng, the first step's partial sum at (ng + 2) 4 k + 4 ng + 4; lane p % 4 */
static inline double* pk_at(const svi_impact* s, int p, int k, int j) {
  int ng = 3 * s->nc;
  return s->pattern_pk + (size_t)(p / 4) * 8 * (ng + 2) + 4 * ((ng + 2) * k + j) + p % 4;
}

/* pattern_pre's parts: the block rows' partial sums (4 a block), then U's (m2pad a pattern), then
 * X's (2nc a pattern) */
static inline double* pre_u(const svi_impact* s) { return s->pattern_pre + 4 * s->pattern_blk0[s->n_patterns]; }
static inline double* pre_x(const svi_impact* s) {
  return pre_u(s) + (size_t)s->n_patterns * ((2 * s->nc + 3) & ~3);
}

/* The partial sums at the event's first step: the packed rows' (into pattern_pk), every block
 * row's, U's and X's (pattern_pre). */
static void pattern_prefix(svi_impact* s) {
  int nc = s->nc, m2 = 2 * nc, ng = 3 * nc, npad = s->pattern_npad, m2pad = (m2 + 3) & ~3;
  const double* g0 = s->pattern_g0;
  for (int k = 0; k < 2; k++)
    for (int p = 0; p < npad; p++)
      *pk_at(s, p, k, ng + 1) = prefix_sum(pk_at(s, p, k, 0), 4, g0, m2);
  int total = s->n_patterns, nblk = s->pattern_blk0[total], bs = 4 * ng + 4;
  double* bp = s->pattern_pre;
  for (int b = 0; b < nblk; b++)
    for (int k = 0; k < 4; k++) bp[4 * b + k] = prefix_sum(s->pattern_blk + (size_t)b * bs + k, 4, g0, m2);
  double *up = pre_u(s), *xp = pre_x(s);
  for (int p = 0; p < total; p++) {
    const double* Uc = s->pattern_uc + (size_t)p * ng * m2pad;
    const double* X = s->pattern_map + (size_t)p * 2 * m2 * ng;
    for (int a = 0; a < m2pad; a++) up[(size_t)p * m2pad + a] = prefix_sum(Uc + a, (size_t)m2pad, g0, m2);
    for (int a = 0; a < m2; a++) xp[(size_t)p * m2 + a] = prefix_sum(X + a * ng, 1, g0, m2);
  }
}

/* The first step's candidates by budget cell.  Every first step has g = [u0; l_max], so a row's
 * value is its partial sum at u0 (pattern_pre, the value the kernels start from) continued by
 * fma over the budget terms: within rounding (nc fused roundings), pre + sum_i F_i l_i, linear
 * in l_max.  On a cell [lo, hi] of budgets its smallest value is pre + sum_i min(F_i lo_i,
 * F_i hi_i); if that exceeds tau by more than 1e-12 of the terms' magnitude (a bound on the
 * rounding some 10^3 times over), the row fails at every l_max of the cell as the kernels compute
 * it, and the pattern is not feasible there.  A cell's candidates are the patterns no row
 * excludes; a first step in the cell checks every row of those only (feasible_avx2_ng), and gets
 * the same feasible patterns as the scan of all of them.  The box is [0, lhi), lhi the largest
 * first-step budget seen in the learning steps, the cells widened by 1e-9 lhi against the
 * rounding of the cell index; a budget outside the box, or not finite, scans every pattern. */
static void pattern_cells(svi_impact* s) {
  enum { RMAX = 8 * 3, AMAX = 512 };   /* rows of a pattern (8 a contact); max of 8 nc nc G: 512 */
  int nc = s->nc, m2 = 2 * nc, ng = 3 * nc, G = SVI_CELLS(nc), total = s->n_patterns, ncell = 1;
  int words = (s->pattern_npad + 63) / 64;
  double w[MODE_MAX_NC], d[MODE_MAX_NC];
  if (s->pattern_cells_off) return;
  for (int i = 0; i < nc; i++) {
    double l = s->pattern_lhi[i];
    if (!(l > 0 && l < INFINITY)) return;
    s->pattern_cell_inv[i] = G / l;
    w[i] = l / G;
    d[i] = 1e-9 * l;
    ncell *= G;
  }
  if (ncell * words > SVI_CELL_WORDS_MAX) return;
  memset(s->pattern_cell, 0, sizeof(uint64_t) * (size_t)ncell * words);
  const double* pre = s->pattern_pre;
  /* per pattern, per row: the budget terms' smallest value on each contact's cell c, A[r][i][c],
   * and the row's threshold: excluded on a cell iff sum_i A[r][i][c_i] > tau - pre + margin (the
   * margin from the whole box's magnitude, at least the cell's) */
  double A[AMAX], thr[RMAX];   /* A[(q nc + i) G + c] */
  for (int p = 0; p < total; p++) {
    int r0 = s->pattern_row0[p], nr = s->pattern_row0[p + 1] - r0, b0 = s->pattern_blk0[p];
    if (nr > 8 * nc || nc > 3) nr = 0;   /* never (8 rows a contact, nc <= 3): no row excludes */
    for (int q = 0; q < nr; q++) {
      const double* F = s->pattern_F + (size_t)(r0 + q) * ng;
      double v = pre[4 * (b0 + q / 4) + q % 4], mag = fabs(v);
      for (int i = 0; i < nc; i++) {
        double f = F[m2 + i];
        mag += fabs(f) * (s->pattern_lhi[i] + d[i]);
        for (int c = 0; c < G; c++) A[(q * nc + i) * G + c] = f >= 0 ? f * (c * w[i] - d[i]) : f * ((c + 1) * w[i] + d[i]);
      }
      thr[q] = s->pattern_tau[r0 + q] - v + 1e-12 * mag;   /* NaN: never excluded */
    }
    uint64_t *cw = s->pattern_cell + p / 64, bit = 1ULL << (p % 64);
    for (int cell = 0; cell < ncell; cell++) {   /* cell = c0 + G c1 + G^2 c2 */
      int c0 = cell % G, c1 = cell / G % G, c2 = cell / G / G, q = 0;
      switch (nc) {   /* the first row that excludes the pattern on the cell, if any */
      case 1: while (q < nr && !(A[q * G + c0] > thr[q])) q++; break;
      case 2: while (q < nr && !(A[2 * q * G + c0] + A[(2 * q + 1) * G + c1] > thr[q])) q++; break;
      default:
        while (q < nr && !(A[3 * q * G + c0] + A[(3 * q + 1) * G + c1] + A[(3 * q + 2) * G + c2] > thr[q])) q++;
        break;
      }
      if (q == nr) cw[(size_t)cell * words] |= bit;
    }
  }
  s->pattern_cell_words = words;
  s->pattern_cells_ok = 1;
}

/* the candidates of the first step's budget cell (pattern_cells), or NULL: scan every pattern */
static inline const uint64_t* cell_of(const svi_impact* s, const double* lmax, int nc) {
  int G = SVI_CELLS(nc), cell = 0, stride = 1;
  for (int i = 0; i < nc; i++) {
    double t = lmax[i] * s->pattern_cell_inv[i];
    if (!(t >= 0 && t < G)) return NULL;
    cell += stride * (int)t;
    stride *= G;
  }
  return s->pattern_cell + (size_t)cell * s->pattern_cell_words;
}

/* append the row f g <= tau unless it holds for every g */
static void add_row(svi_impact* s, int* nrow, const double* f, double sign, double tau, int ng) {
  double* F = s->pattern_F + (size_t)(*nrow) * ng;
  int nz = 0;
  for (int j = 0; j < ng; j++) { F[j] = sign * f[j]; nz |= F[j] != 0; }
  if (!nz && tau >= 0) return;
  s->pattern_tau[*nrow] = tau;
  (*nrow)++;
}

/* Every pattern's maps and its feasibility as rows F g <= tau (the sign conditions of
 * pattern_feasible, and E g = 0 to the equations' tolerance for a singular pattern), once per
 * event; a step then evaluates rows until one fails, and the maps only for feasible patterns. */
static void precompute_patterns(svi_impact* s) {
  int nc = s->nc, m2 = 2 * nc, ng = m2 + nc, total = 1, m2pad = (m2 + 3) & ~3;
  for (int i = 0; i < nc; i++) total *= NMODES;
  if (total > s->pattern_cap) return;
  double vtol = s->sep_tol * 10, ctol = s->sep_tol * 10;
  double itol = 1e-9 * (s->ref_impulse > 0 ? s->ref_impulse : 1.0);
  int mode[MODE_MAX_NC] = {0}, nrow = 0;
  s->pattern_pre_ok = 0;
  s->pattern_cells_ok = 0;
  for (int i = 0; i < 4; i++) s->pattern_lhi[i] = 0;
  for (int i = 0; i < nc; i++) {   /* g's velocity part at u0, as planar_fast_nc forms it */
    s->pattern_g0[2 * i] = s->u0[row_n(s, i)];
    s->pattern_g0[2 * i + 1] = s->u0[row_t(s, i)];
  }
  double E[2 * MODE_MAX_NC * 3 * MODE_MAX_NC], f[3 * MODE_MAX_NC];
  for (int p = 0; p < total; p++) {
    if (p > 0) for (int i = 0; i < nc && ++mode[i] == NMODES; i++) mode[i] = 0;
    double* X = s->pattern_map + (size_t)p * 2 * m2 * ng;
    double* U = X + m2 * ng;
    int ne = pattern_linear_map(s, mode, X, U, E);
    double* Uc = s->pattern_uc + (size_t)p * ng * m2pad;   /* U by columns, for outcomes_avx2 */
    for (int j = 0; j < ng; j++)
      for (int a = 0; a < m2pad; a++) Uc[j * m2pad + a] = a < m2 ? U[a * ng + j] : 0.0;
    int ok = 1;
    for (int j = 0; j < 2 * m2 * ng; j++) ok &= isfinite(X[j]) != 0;
    s->pattern_ok[p] = (unsigned char)ok;
    s->pattern_row0[p] = nrow;
    if (!ok) { add_row(s, &nrow, f, 0, -1, ng); continue; }   /* never feasible */
    for (int i = 0; i < nc; i++) {
      int md = mode[i];
      const double *xn = X + 2 * i * ng, *xt = xn + ng, *un = U + 2 * i * ng, *ut = un + ng;
      if (md == SEP) { add_row(s, &nrow, un, -1, vtol, ng); continue; }
      if (md <= BUD_SLIP_M) add_row(s, &nrow, un, 1, vtol, ng);
      else {
        add_row(s, &nrow, xn, -1, itol, ng);
        for (int j = 0; j < ng; j++) f[j] = xn[j] - (j == m2 + i);
        add_row(s, &nrow, f, 1, itol, ng);
      }
      if (md == BUD_STICK || md == INT_STICK) {
        for (int j = 0; j < ng; j++) f[j] = xt[j] - s->mu[i] * xn[j];
        add_row(s, &nrow, f, 1, itol, ng);
        for (int j = 0; j < ng; j++) f[j] = -xt[j] - s->mu[i] * xn[j];
        add_row(s, &nrow, f, 1, itol, ng);
      }
      if (md == BUD_SLIP_P || md == INT_SLIP_P) add_row(s, &nrow, ut, 1, vtol, ng);
      if (md == BUD_SLIP_M || md == INT_SLIP_M) add_row(s, &nrow, ut, -1, vtol, ng);
    }
    for (int e = 0; e < ne; e++) {   /* a singular pattern's equations: they seldom reject */
      add_row(s, &nrow, E + e * ng, 1, ctol, ng);
      add_row(s, &nrow, E + e * ng, -1, ctol, ng);
    }
  }
  s->pattern_total = total;
  s->pattern_row0[total] = nrow;
  memset(s->pattern_hits, 0, sizeof(int) * (size_t)nrow);
  s->pattern_npad = (total + 3) & ~3;
  s->pattern_steps = 0;
  memset(s->pattern_pass, 0, sizeof(int) * (size_t)2 * s->pattern_npad);
  s->pattern_picked = 0;
  for (int p = 0; p < total; p++) s->pattern_frow[2 * p] = s->pattern_frow[2 * p + 1] = -1;
  memset(s->pattern_pk, 0, sizeof(double) * (size_t)(s->pattern_npad / 4) * 8 * (ng + 2));
  for (int p = total; p < s->pattern_npad; p++) *pk_at(s, p, 0, ng) = *pk_at(s, p, 1, ng) = -1;
  s->n_patterns = total;
  pick_packed_rows(s);   /* no counts yet: the first two rows */
  /* every pattern's rows again, in blocks of 4 laid out by coordinate (padding rows hold) */
  int nblk = 0, bs = 4 * ng + 4;
  for (int p = 0; p < total; p++) {
    s->pattern_blk0[p] = nblk;
    int r0 = s->pattern_row0[p], r1 = s->pattern_row0[p + 1];
    for (int r = r0; r < r1; r += 4, nblk++) {
      double* B = s->pattern_blk + (size_t)nblk * bs;
      for (int k = 0; k < 4; k++) {
        int rr = r + k;
        for (int j = 0; j < ng; j++) B[4 * j + k] = rr < r1 ? s->pattern_F[(size_t)rr * ng + j] : 0.0;
        B[4 * ng + k] = rr < r1 ? s->pattern_tau[rr] : 1.0;
      }
    }
  }
  s->pattern_blk0[total] = nblk;
  s->n_patterns = total;
}

/* ---- spatial contacts (nt = 2) ------------------------------------------------------------ */


enum { S_SEP = 0, S_PER_NORMAL = 9, S_MODES = 1 + 2 * S_PER_NORMAL, S_MODES_MAX = S_MODES };
_Static_assert(SM_FAC_PATTERNS == S_MODES * S_MODES && NMODES * NMODES * NMODES <= SM_FAC_PATTERNS &&
                   2 * PM_FAC_NC <= SM_FAC_K,
               "the kept factors hold every pattern of SM_FAC_NC spatial or PM_FAC_NC planar contacts");
enum { F_STICK = 0, F_VERTEX = 1, F_FACE = 5 };   /* friction part: 1 stick, 4 vertices, 4 faces */

/* Wr in (n_0, t1_0, t2_0, n_1, ...) order: rows i, nc + 4 i (+t1), nc + 4 i + 2 (+t2) of W */
static int spatial_row(int nc, int a) {
  int i = a / 3, c = a % 3;
  return c == 0 ? i : nc + 4 * i + 2 * (c - 1);
}

/* a sparse combination of reduced coordinates: sum_k c[k] e_{idx[k]} */
typedef struct { int n; int idx[3]; double c[3]; } combo;

static combo combo1(int a, double ca) { combo r = {1, {a, 0, 0}, {ca, 0, 0}}; return r; }
static combo combo2(int a, double ca, int b, double cb) { combo r = {2, {a, b, 0}, {ca, cb, 0}}; return r; }

/* One mode of one spatial contact, in the contact's own coordinates (0 = n, 1 = t1, 2 = t2):
 * the unknowns y_j move x by dir[j], the equations eq[e] . u' = 0 fix them, and with a budget
 * x starts at fix * l_max (the table of spatial_pattern's header). */
struct svi_smode {
  int k, fixed;
  combo dir[3], eq[3];
  double fix[3];
};

struct svi_smode* svi_smode_alloc(int nc) { return malloc(sizeof(struct svi_smode) * (size_t)nc * S_MODES); }

/* The tests a spatial mode's sign conditions and equations put on its contact's post-step
 * velocity rows (n, t1, t2) over [l, h]: row e must have l_e <= lt[e] where tl[e] and h_e >= ht[e]
 * where th[e] (SEP: u_n' >= -vtol; BUD: u_n' <= vtol; INT, STICK: = 0 to 3 vtol; a vertex or a
 * face of sign s: s u_t' <= vtol, and the face's equation s1 u_t1' = s2 u_t2' on t2 to 4 vtol) */
struct svi_smode_test { double lt[3], ht[3]; int tl[3], th[3]; };
typedef struct svi_smode_test smode_test;

static inline void smode_test_row(smode_test* t, int e, double sg, double tol) {
  if (sg > 0) { t->tl[e] = 1; t->lt[e] = tol; }
  else { t->th[e] = 1; t->ht[e] = -tol; }
}

static inline smode_test smode_tests(int md, double vtol) {
  double etol = 3 * vtol;
  smode_test t;
  memset(&t, 0, sizeof(t));
  if (md == S_SEP) { smode_test_row(&t, 0, -1, vtol); return t; }
  int integ = (md - 1) / S_PER_NORMAL, f = (md - 1) % S_PER_NORMAL;
  if (integ) { smode_test_row(&t, 0, 1, etol); smode_test_row(&t, 0, -1, etol); }
  else smode_test_row(&t, 0, 1, vtol);
  if (f == F_STICK) {
    for (int e = 1; e <= 2; e++) { smode_test_row(&t, e, 1, etol); smode_test_row(&t, e, -1, etol); }
  } else if (f < F_FACE) {
    smode_test_row(&t, 1 + (f - F_VERTEX) / 2, (f - F_VERTEX) % 2 ? -1.0 : 1.0, vtol);
  } else {
    smode_test_row(&t, 1, ((f - F_FACE) & 1) ? -1.0 : 1.0, vtol);
    smode_test_row(&t, 2, ((f - F_FACE) & 2) ? -1.0 : 1.0, etol + vtol);
  }
  return t;
}


/* pattern_possible2's tables for two spatial contacts (below).  Row e of a mode's tests as lane
 * values: the threshold's bits and an all-ones mask where the mode tests that end of the row, zero
 * bits where it does not (smode_tests) */
static inline void smode_lanes(const smode_test* m, int e, long long* tl, long long* th, long long* ml,
                               long long* mh) {
  *tl = *th = *ml = *mh = 0;
  if (m->tl[e]) { memcpy(tl, &m->lt[e], sizeof(*tl)); *ml = -1; }
  if (m->th[e]) { memcpy(th, &m->ht[e], sizeof(*th)); *mh = -1; }
}

/* contact 0's tests on its three rows with its modes across the lanes: row a, modes 4 g .. 4 g + 3
 * in vector g (the padding mode 19 tests nothing); per event, in sm_pp */
enum { PP_G = (S_MODES + 3) / 4 };
typedef struct { svi_v4i tl[3][PP_G], th[3][PP_G], ml[3][PP_G], mh[3][PP_G]; } pp_tests0;
/* contact 0's intervals on the six rows, the same way (per step, mode_bounds2) */
typedef struct { svi_v4d lo[6][PP_G], hi[6][PP_G], mag[6][PP_G]; } pp_bounds0;

/* per event (spatial_tables) */
static void pp_tests_setup(svi_impact* s) {
  pp_tests0* T0 = (pp_tests0*)s->sm_pp;
  memset(T0, 0, sizeof(*T0));
  for (int md = 0; md < S_MODES; md++)
    for (int a = 0; a < 3; a++) {
      long long tl, th, ml, mh;
      smode_lanes(s->sm_test + md, a, &tl, &th, &ml, &mh);
      T0->tl[a][md / 4][md % 4] = tl;
      T0->th[a][md / 4][md % 4] = th;
      T0->ml[a][md / 4][md % 4] = ml;
      T0->mh[a][md / 4][md % 4] = mh;
    }
}

int svi_smode_event_alloc(svi_impact* s) {
  s->sm_fac = calloc(SM_FAC_PATTERNS, sizeof(struct svi_mode_fac));   /* MF_NONE */
  s->sm_kf = malloc(sizeof(double) * SM_FAC_PATTERNS * 2 * SM_FAC_K * SM_FAC_K);
  s->sm_test = malloc(sizeof(struct svi_smode_test) * S_MODES);
  s->sm_pp = svi_alloc64(sizeof(pp_tests0));
  return s->sm_fac && s->sm_kf && s->sm_test && s->sm_pp;
}

static void smode_build(struct svi_smode* q, int md, double mu) {
  memset(q, 0, sizeof(*q));
  if (md == S_SEP) return;
  int integ = (md - 1) / S_PER_NORMAL, f = (md - 1) % S_PER_NORMAL, k = 0, ne = 0;
  if (!integ) { q->fixed = 1; q->fix[0] = 1; }
  if (f == F_STICK) {
    if (integ) { q->dir[k++] = combo1(0, 1); q->eq[ne++] = combo1(0, 1); }
    q->dir[k++] = combo1(1, 1); q->eq[ne++] = combo1(1, 1);
    q->dir[k++] = combo1(2, 1); q->eq[ne++] = combo1(2, 1);
  } else if (f < F_FACE) {
    int tj = 1 + (f - F_VERTEX) / 2;
    double sg = (f - F_VERTEX) % 2 ? -1.0 : 1.0;
    if (integ) { q->dir[k++] = combo2(0, 1, tj, sg * mu); q->eq[ne++] = combo1(0, 1); }
    else q->fix[tj] = sg * mu;
  } else {
    double s1 = ((f - F_FACE) & 1) ? -1.0 : 1.0, s2 = ((f - F_FACE) & 2) ? -1.0 : 1.0;
    if (integ) {
      q->dir[k++] = combo2(0, 1, 1, s1 * mu);
      q->dir[k++] = combo2(0, 1, 2, s2 * mu);
      q->eq[ne++] = combo1(0, 1);
    } else {
      q->fix[2] = s2 * mu;
      q->dir[k++] = combo2(1, s1 * mu, 2, -s2 * mu);
    }
    q->eq[ne++] = combo2(1, s1, 2, -s2);
  }
  q->k = k;   /* = ne: every spatial mode has as many equations as unknowns */
}

/* Wr4: Wr's rows padded to a multiple of 4 (svi_routh_residual) */
static void pad_wr(svi_impact* s, int m) {
  int m4 = (m + 3) & ~3;
  for (int a = 0; a < m; a++)
    for (int b = 0; b < m4; b++) s->Wr4[a * m4 + b] = b < m ? s->Wr[a * m + b] : 0.0;
}

/* Wr; the mode tables are built by the event's first enumeration (spatial_tables): events
 * under the RANDOM rule never need them */
static void spatial_setup(svi_impact* s) {
  int nc = s->nc, m3 = 3 * nc, nb = s->nb;
  for (int a = 0; a < m3; a++)
    for (int b = 0; b < m3; b++) s->Wr[a * m3 + b] = s->W[spatial_row(nc, a) * nb + spatial_row(nc, b)];
  pad_wr(s, m3);
  for (int md = 0; md < S_MODES; md++) s->sm_test[md] = smode_tests(md, s->sep_tol * 10);
  s->smode_ready = 0;
  s->smap_ready = 0;
}

/* per contact and mode its unknowns and Wr times their directions (sm_wd), once per event */
static void spatial_tables(svi_impact* s) {
  int nc = s->nc, m3 = 3 * nc;
  s->smode_ready = 1;
  for (int p = 0; p < SM_FAC_PATTERNS; p++) s->sm_fac[p].state = MF_NONE;   /* a new event */
  if (nc == 2) pp_tests_setup(s);
  for (int i = 0; i < nc; i++)
    for (int md = 0; md < S_MODES; md++) {
      struct svi_smode* q = s->smode + i * S_MODES + md;
      smode_build(q, md, s->mu[i]);
      for (int j = 0; j < q->k; j++) {
        double* wd = s->sm_wd + ((size_t)(i * S_MODES + md) * 3 + j) * m3;
        for (int a = 0; a < m3; a++) {   /* Wr symmetric: row a times dir = its column entries */
          double sum = 0;
          for (int p = 0; p < q->dir[j].n; p++) sum += q->dir[j].c[p] * s->Wr[a * m3 + 3 * i + q->dir[j].idx[p]];
          wd[a] = sum;
        }
      }
    }
}

/* per step: each budgeted mode's fixed impulse and Wr times it (sm_xf, sm_vf).  This and the
 * three helpers below that spatial_fast and spatial_enumerate call have an AVX2 clone too, called
 * from their AVX2 clones (SVI_SIMD in svi_internal.h: a quarter of a box-on-an-edge impact step) */
SVI_SIMD static void spatial_step_slot(svi_impact* s, int i, int md, double lmax_i) {
  int m3 = 3 * s->nc;
  const struct svi_smode* q = s->smode + i * S_MODES + md;
  if (!q->fixed) return;
  double *xf = s->sm_xf + (i * S_MODES + md) * 3, *vf = s->sm_vf + (size_t)(i * S_MODES + md) * m3;
  for (int c = 0; c < 3; c++) xf[c] = q->fix[c] * lmax_i;
  for (int a = 0; a < m3; a++) {
    const double* w = s->Wr + a * m3 + 3 * i;
    vf[a] = w[0] * xf[0] + w[1] * xf[1] + w[2] * xf[2];
  }
}

static void spatial_step_setup(svi_impact* s, const double* lmax) {
  for (int i = 0; i < s->nc; i++)
    for (int md = 0; md < S_MODES; md++) spatial_step_slot(s, i, md, lmax[i]);
}

/* K_ej = eq_e . (Wr dir_j) over contact e's rows (the tables of spatial_tables) */
static void spatial_k(int k, const combo* const* eq, const double* const* wd, const int* base, double* K) {
  for (int e = 0; e < k; e++) {
    const combo* c = eq[e];
    for (int j = 0; j < k; j++) {
      double sum = 0;
      for (int p = 0; p < c->n; p++) sum += c->c[p] * wd[j][base[e] + c->idx[p]];
      K[e * k + j] = sum;
    }
  }
}

/* contact i's unknowns in its mode (slot i S_MODES + mode, q its table), appended at k: Wr times
 * each one's direction (wd, m3 rows), the direction, its equation and the contact's first reduced
 * row (base); returns the new count */
static inline int spatial_unknowns(const svi_impact* s, const struct svi_smode* q, int i, int slot, int m3,
                                   int k, const double** wd, const combo** dir, const combo** eq, int* base) {
  for (int j = 0; j < q->k; j++, k++) {
    wd[k] = s->sm_wd + ((size_t)slot * 3 + j) * m3;
    dir[k] = &q->dir[j];
    eq[k] = &q->eq[j];
    base[k] = 3 * i;
  }
  return k;
}

/* x and the post-step reduced velocity up of one spatial pattern, before its sign checks:
 * x = x_fixed + sum_j dir_j y_j with the unknowns y from the pattern's equations
 * eq_e . (u + Wr x_fixed + sum_j (Wr dir_j) y_j) = 0, every product with Wr taken from the
 * tables (spatial_setup, spatial_step_setup).  Returns 0 if the equations have no solution. */
static inline __attribute__((always_inline)) int spatial_pattern_nc(svi_impact* s, const int* mode,
                                                                     const double* ur, double* x,
                                                                     double* up, const int nc) {
  int m3 = 3 * nc, k = 0;
  const double* wd[KMAX];
  const combo *dir[KMAX], *eq[KMAX];
  int base[KMAX];
  memset(x, 0, sizeof(double) * m3);
  for (int a = 0; a < m3; a++) up[a] = ur[a];
  for (int i = 0; i < nc; i++) {
    int slot = i * S_MODES + mode[i];
    const struct svi_smode* q = s->smode + slot;
    if (q->fixed) {
      const double *xf = s->sm_xf + slot * 3, *vf = s->sm_vf + (size_t)slot * m3;
      for (int c = 0; c < 3; c++) x[3 * i + c] = xf[c];
      for (int a = 0; a < m3; a++) up[a] += vf[a];
    }
    k = spatial_unknowns(s, q, i, slot, m3, k, wd, dir, eq, base);
  }
  if (k == 0) return 1;
  double r[KMAX], y[KMAX];
  for (int e = 0; e < k; e++) {
    const combo* c = eq[e];
    double rhs = 0;
    for (int p = 0; p < c->n; p++) rhs -= c->c[p] * up[base[e] + c->idx[p]];
    r[e] = rhs;
  }
  /* K and its factor: kept per pattern for up to two contacts (K depends on the event only) */
  struct svi_mode_fac local = {.state = MF_NONE};
  double Kl[KMAX * KMAX], Fl[KMAX * KMAX];
  fac_ref f = {&local, Kl, Fl};
  if (nc <= SM_FAC_NC) f = kept_factor(s, mode, nc, S_MODES);
  if (f.h->state == MF_NONE) {
    spatial_k(k, eq, wd, base, f.K);
    factor_pattern(s, f, k);
  }
  if (!mode_solve(f.h, f.K, f.F, r, y, s->sep_tol * 10)) return 0;
  for (int j = 0; j < k; j++) {
    for (int p = 0; p < dir[j]->n; p++) x[base[j] + dir[j]->idx[p]] += dir[j]->c[p] * y[j];
    for (int a = 0; a < m3; a++) up[a] += wd[j][a] * y[j];
  }
  return 1;
}

/* spatial_pattern_nc for the problem's nc, with two contacts (the plugin's enumerated events of a
 * box on an edge or two feet) a constant, so that its loops over the 6 reduced rows unroll: the
 * same operations in the same order */
SVI_SIMD static int spatial_pattern(svi_impact* s, const int* mode, const double* ur, double* x, double* up) {
  return s->nc == 2 ? spatial_pattern_nc(s, mode, ur, x, up, 2) : spatial_pattern_nc(s, mode, ur, x, up, s->nc);
}

/* The sign conditions of the spatial modes (header comment), in two parts: the normal ones
 * (spatial_normal_ok: the post-step normal velocity of SEP and BUD, the normal impulse of INT in
 * [0, l_max]) and the friction ones (spatial_friction_ok).  The normal ones are intervals of
 * contact i's budget l_max,i (spatial_normal_interval): x_n in [b0, b1], up_n in [b2, b3], +-inf
 * where a mode has no condition; a NaN passes, as a failed comparison rejects nothing. */
static inline void spatial_normal_interval(const svi_impact* s, int md, double lmax_i, double* b) {
  double vtol = s->sep_tol * 10;
  double itol = 1e-9 * (s->ref_impulse > 0 ? s->ref_impulse : 1.0);
  b[0] = b[2] = -INFINITY;
  b[1] = b[3] = INFINITY;
  if (md == S_SEP) b[2] = -vtol;
  else if ((md - 1) / S_PER_NORMAL == 0) b[3] = vtol;
  else { b[0] = -itol; b[1] = lmax_i + itol; }
}

static inline int spatial_normal_ok(const svi_impact* s, int md, double lmax_i, double xn, double un) {
  double b[4];
  spatial_normal_interval(s, md, lmax_i, b);
  return !(xn < b[0]) & !(xn > b[1]) & !(un < b[2]) & !(un > b[3]);
}
static inline __attribute__((always_inline)) int spatial_friction_ok(const svi_impact* s, int nc, const int* mode,
                                                                     const double* x, const double* up) {
  double vtol = s->sep_tol * 10;
  double itol = 1e-9 * (s->ref_impulse > 0 ? s->ref_impulse : 1.0);
  for (int i = 0; i < nc; i++) {
    const double* xi = x + 3 * i;
    const double* ui = up + 3 * i;
    if (mode[i] == S_SEP) continue;
    int f = (mode[i] - 1) % S_PER_NORMAL;
    double mu = s->mu[i];
    if (f == F_STICK) {
      if (fabs(xi[1]) + fabs(xi[2]) > mu * xi[0] + itol) return 0;
    } else if (f < F_FACE) {
      int j = (f - F_VERTEX) / 2;
      double sg = (f - F_VERTEX) % 2 ? -1.0 : 1.0;
      if (sg * ui[1 + j] > vtol || fabs(ui[2 - j]) > fabs(ui[1 + j]) + vtol) return 0;
    } else {
      double s1 = ((f - F_FACE) & 1) ? -1.0 : 1.0, s2 = ((f - F_FACE) & 2) ? -1.0 : 1.0;
      if (s1 * xi[1] < -mu * itol || s2 * xi[2] < -mu * itol || s1 * ui[1] > vtol) return 0;
    }
  }
  return 1;
}

static inline __attribute__((always_inline)) int spatial_feasible_nc(const svi_impact* s, const int* mode,
                                                                      const double* lmax, const double* x,
                                                                      const double* up, const int nc) {
  for (int i = 0; i < nc; i++)
    if (!spatial_normal_ok(s, mode[i], lmax[i], x[3 * i], up[3 * i])) return 0;
  return spatial_friction_ok(s, nc, mode, x, up);
}

/* spatial_feasible_nc, with two contacts a constant (as spatial_pattern) */
SVI_SIMD static int spatial_feasible(const svi_impact* s, const int* mode, const double* lmax,
                                     const double* x, const double* up) {
  return s->nc == 2 ? spatial_feasible_nc(s, mode, lmax, x, up, 2)
                    : spatial_feasible_nc(s, mode, lmax, x, up, s->nc);
}

/* ---- exact pruning of the modes of the directly solved enumerations --------------------------
 *
 * Every pattern that passes pattern_feasible / spatial_feasible has, for each contact j, a normal
 * impulse x_n in [-itol, l_max,j + itol] (SEP: 0, BUD: l_max, INT: checked) and friction of
 * 1-norm at most T_j = mu_j (l_max,j + 5 itol) + itol (STICK: checked against mu x_n + itol;
 * VERTEX and SLIDE: mu |x_n|; FACE: a, b >= -itol with a + b = x_n or l_max).  So each post-step
 * reduced velocity up_a = u_a + sum_b Wr_ab x_b of a feasible pattern lies in
 *     [lo_a, hi_a] = u_a + sum_j ( [min, max] of Wr_a,nj [-itol, l_max,j + itol]
 *                                  +- max_k |Wr_a,tkj| T_j ),
 * widened by 1e-12 of the magnitudes for rounding.  A mode whose sign condition cannot hold
 * anywhere in that interval (SEP: u_n' >= -vtol; BUD: u_n' <= vtol; slip s: s u_t' <= vtol) or
 * whose equation cannot (INT: u_n' = 0, STICK: u_t' = 0, FACE: s1 u_t1' = s2 u_t2', each solved
 * to within vtol; tested with 3 vtol) belongs to no feasible pattern.  Skipping the patterns
 * that use it, in the enumeration's own order, leaves the feasible patterns, their order, and so
 * the outcomes and the pick, exactly as they were.  With an unbounded budget ((31)) or anything
 * non-finite nothing is pruned. */
static int velocity_bounds(const svi_impact* s, const double* ur, const double* lmax, int per,
                           double* lo, double* hi) {
  int nc = s->nc, m = per * nc;
  double itol = 1e-9 * (s->ref_impulse > 0 ? s->ref_impulse : 1.0);
  for (int j = 0; j < nc; j++) if (!isfinite(lmax[j])) return 0;
  for (int a = 0; a < m; a++) {
    const double* w = s->Wr + (size_t)a * m;
    double l = ur[a], h = ur[a], mag = fabs(ur[a]);
    for (int j = 0; j < nc; j++) {
      double wn = w[per * j], e1 = -wn * itol, e2 = wn * (lmax[j] + itol), wt = 0;
      l += e1 < e2 ? e1 : e2;
      h += e1 < e2 ? e2 : e1;
      mag += fabs(e1) + fabs(e2);
      for (int k = 1; k < per; k++) wt = fmax(wt, fabs(w[per * j + k]));
      double f = wt * (s->mu[j] * (lmax[j] + 5 * itol) + itol);
      l -= f;
      h += f;
      mag += f;
    }
    double err = 1e-12 * mag;
    lo[a] = l - err;
    hi[a] = h + err;
    if (!isfinite(lo[a]) || !isfinite(hi[a])) return 0;
  }
  return 1;
}

/* may the velocity in [lo, hi] satisfy s u <= tol (s = +-1), or u = 0 to within tol */
static int can_le(double lo, double hi, double sg, double tol) { return sg > 0 ? lo <= tol : hi >= -tol; }
static int can_zero(double lo, double hi, double tol) { return lo <= tol && hi >= -tol; }

/* whether contact mode md can meet its sign conditions and equations with the contact's
 * post-step velocities (n, t[, t2]) anywhere in [l, h] (the header of velocity_bounds) */
static inline int mode_possible(const svi_impact* s, int spatial, int md, const double* l, const double* h,
                                double vtol) {
  double etol = 3 * vtol;
  if (!spatial) {
    int ok = 1;
    if (md == SEP) ok = can_le(l[0], h[0], -1, vtol);
    if (md >= BUD_STICK && md <= BUD_SLIP_M) ok = can_le(l[0], h[0], 1, vtol);
    if (md >= INT_STICK) ok = can_zero(l[0], h[0], etol);
    if (md == BUD_STICK || md == INT_STICK) ok = ok && can_zero(l[1], h[1], etol);
    if (md == BUD_SLIP_P || md == INT_SLIP_P) ok = ok && can_le(l[1], h[1], 1, vtol);
    if (md == BUD_SLIP_M || md == INT_SLIP_M) ok = ok && can_le(l[1], h[1], -1, vtol);
    return ok;
  }
  const smode_test* t = s->sm_test + md;   /* smode_tests at this vtol, per event (spatial_setup) */
  for (int e = 0; e < 3; e++)
    if ((t->tl[e] && !(l[e] <= t->lt[e])) || (t->th[e] && !(h[e] >= t->ht[e]))) return 0;
  return 1;
}
/* the modes of each contact that survive the bounds, in increasing order; 0 if a contact has none.
 * *bounded: whether the bounds exist (a finite budget and finite data) */
static int allowed_modes(const svi_impact* s, const double* ur, const double* lmax, int spatial,
                         int list[][S_MODES_MAX], int* cnt, int* bounded) {
  int nc = s->nc, per = spatial ? 3 : 2, nm = spatial ? S_MODES_MAX : NMODES;
  double lo[3 * MODE_MAX_NC], hi[3 * MODE_MAX_NC], vtol = s->sep_tol * 10;
  *bounded = !s->no_prune && velocity_bounds(s, ur, lmax, per, lo, hi);
  for (int i = 0; i < nc; i++) {
    cnt[i] = 0;
    for (int md = 0; md < nm; md++)
      if (!*bounded || mode_possible(s, spatial, md, lo + per * i, hi + per * i, vtol)) list[i][cnt[i]++] = md;
    if (cnt[i] == 0) return 0;
  }
  return 1;
}

/* The same bound per pattern: the impulses contact i can have in mode md lie in the convex hull
 * of a few points (mode_hull), so Wr times them lies, row by row, in [min, max] over those points
 * (mode_bounds, per step for the allowed modes).  A pattern is skipped when, with every contact's
 * interval of its own mode summed, some contact's mode is impossible (pattern_possible). */
SVI_SIMD static int mode_hull(int spatial, int md, double lmax, double mu, double eps, double pt[8][3]) {
  double L = lmax + eps;
  memset(pt, 0, sizeof(double) * 24);
  if (!spatial) {
    double R = mu * L + eps;
    switch (md) {
    case SEP: return 1;
    case BUD_STICK: pt[0][0] = pt[1][0] = lmax; pt[0][1] = mu * lmax + eps; pt[1][1] = -pt[0][1]; return 2;
    case BUD_SLIP_P: case BUD_SLIP_M:
      pt[0][0] = lmax; pt[0][1] = (md == BUD_SLIP_P ? 1 : -1) * mu * lmax; return 1;
    case INT_STICK:
      for (int k = 0; k < 4; k++) { pt[k][0] = k < 2 ? -eps : L; pt[k][1] = k % 2 ? -R : R; }
      return 4;
    default: {   /* INT_SLIP+- */
      double sg = md == INT_SLIP_P ? 1 : -1;
      pt[0][0] = -eps; pt[0][1] = -sg * mu * eps; pt[1][0] = L; pt[1][1] = sg * mu * L;
      return 2;
    }
    }
  }
  if (md == S_SEP) return 1;
  int integ = (md - 1) / S_PER_NORMAL, f = (md - 1) % S_PER_NORMAL;
  if (f == F_STICK) {
    double R = integ ? mu * L + eps : mu * lmax + eps;
    int np = 0;
    for (int e = 0; e < (integ ? 2 : 1); e++)
      for (int k = 0; k < 4; k++, np++) {
        pt[np][0] = integ ? (e ? L : -eps) : lmax;
        pt[np][1 + k / 2] = k % 2 ? -R : R;
      }
    return np;
  }
  if (f < F_FACE) {
    int j = 1 + (f - F_VERTEX) / 2;
    double sg = (f - F_VERTEX) % 2 ? -1.0 : 1.0;
    if (!integ) { pt[0][0] = lmax; pt[0][j] = sg * mu * lmax; return 1; }
    pt[0][0] = -eps; pt[0][j] = -sg * mu * eps; pt[1][0] = L; pt[1][j] = sg * mu * L;
    return 2;
  }
  double s1 = ((f - F_FACE) & 1) ? -1.0 : 1.0, s2 = ((f - F_FACE) & 2) ? -1.0 : 1.0;
  if (!integ) {   /* t = mu (s1 y, s2 (l_max - y)), y in [-eps, l_max + eps] */
    for (int k = 0; k < 2; k++) {
      double y = k ? lmax + eps : -eps;
      pt[k][0] = lmax; pt[k][1] = s1 * mu * y; pt[k][2] = s2 * mu * (lmax - y);
    }
    return 2;
  }
  double ab[3][2] = {{-eps, -eps}, {L + eps, -eps}, {-eps, L + eps}};   /* a, b >= -eps, a + b <= L */
  for (int k = 0; k < 3; k++) {
    pt[k][0] = ab[k][0] + ab[k][1]; pt[k][1] = s1 * mu * ab[k][0]; pt[k][2] = s2 * mu * ab[k][1];
  }
  return 3;
}

/* per allowed mode of each contact, row by row: [min, max] of Wr x over its hull and a magnitude
 * (into sm_c; mode_bounds2 below is the two-spatial-contact copy).  Each row's sums and running
 * extremes over the hull's points are formed point by point, all rows of a point together: Wr is
 * exactly symmetric (build_delassus), so row a's entries for contact i's columns are the contiguous
 * entries of those columns.  Per row the same operations in the same order as row by row. */
SVI_SIMD static void mode_bounds(svi_impact* s, const double* lmax, int spatial, int list[][S_MODES_MAX],
                                 const int* cnt) {
  const int nc = s->nc, per = spatial ? 3 : 2, m = per * nc;
  double eps = 1e-9 * (s->ref_impulse > 0 ? s->ref_impulse : 1.0), pt[8][3];
  double lo[3 * MODE_MAX_NC], hi[3 * MODE_MAX_NC], mag[3 * MODE_MAX_NC];
  for (int i = 0; i < nc; i++)
    for (int c = 0; c < cnt[i]; c++) {
      int md = list[i][c], np = mode_hull(spatial, md, lmax[i], s->mu[i], eps, pt);
      double* b = s->sm_c + ((size_t)(i * S_MODES_MAX + md) * m) * 3;
      const double* wc = s->Wr + (size_t)per * i * m;   /* column per i + e at wc + e m */
      for (int a = 0; a < m; a++) { lo[a] = INFINITY; hi[a] = -INFINITY; mag[a] = 0; }
      for (int k = 0; k < np; k++)
        for (int a = 0; a < m; a++) {
          double v = 0, g = 0;
          for (int e = 0; e < per; e++) { v += wc[e * m + a] * pt[k][e]; g += fabs(wc[e * m + a] * pt[k][e]); }
          lo[a] = v < lo[a] ? v : lo[a];
          hi[a] = v > hi[a] ? v : hi[a];
          mag[a] = g > mag[a] ? g : mag[a];
        }
      for (int a = 0; a < m; a++) { b[3 * a] = lo[a]; b[3 * a + 1] = hi[a]; b[3 * a + 2] = mag[a]; }
    }
}

/* lane by lane: *b = a where mask (all ones), else *b unchanged (pointers: no vector in the ABI) */
static inline void pick4(svi_v4d* b, const svi_v4i* mask, const svi_v4d* a) {
  *b = (svi_v4d)((*mask & (svi_v4i)*a) | (~*mask & (svi_v4i)*b));
}

/* mode_bounds for two spatial contacts, written where pattern_possible2 reads them (contact 0's
 * into B0, its modes across the lanes; contact 1's into B1[md][lo, hi, mag][row]) instead of into
 * sm_c.  The six rows are two GCC vectors here (rows 0-3, then 4-5 and two lanes of zeros): per
 * row the same operations in the same order. */
static inline __attribute__((always_inline)) void mode_bounds2(const svi_impact* s, const double* lmax,
                                                               int list[][S_MODES_MAX], const int* cnt,
                                                               pp_bounds0* B0, double B1[S_MODES][3][6]) {
  double eps = 1e-9 * (s->ref_impulse > 0 ? s->ref_impulse : 1.0), pt[8][3];
  const svi_v4d zero = {0, 0, 0, 0}, inf = {INFINITY, INFINITY, INFINITY, INFINITY};
  for (int i = 0; i < 2; i++) {
    svi_v4d w[3][2] = {{zero, zero}, {zero, zero}, {zero, zero}};   /* column 3 i + e of Wr: rows 0-3, 4-5 */
    for (int e = 0; e < 3; e++)
      for (int a = 0; a < 6; a++) w[e][a / 4][a % 4] = s->Wr[(size_t)(3 * i + e) * 6 + a];
    for (int c = 0; c < cnt[i]; c++) {
      int md = list[i][c], np = mode_hull(1, md, lmax[i], s->mu[i], eps, pt);
      svi_v4d lo[2] = {inf, inf}, hi[2] = {-inf, -inf}, mag[2] = {zero, zero};
      for (int k = 0; k < np; k++)
        for (int h = 0; h < 2; h++) {
          svi_v4d v = zero, g = zero;
          for (int e = 0; e < 3; e++) {
            svi_v4d p = w[e][h] * pt[k][e];
            v += p;
            g += (svi_v4d)((svi_v4i)p & ~(svi_v4i){LLONG_MIN, LLONG_MIN, LLONG_MIN, LLONG_MIN});   /* |p| */
          }
          svi_v4i lt = v < lo[h], gt = v > hi[h], gm = g > mag[h];
          pick4(&lo[h], &lt, &v);   /* lo = v < lo ? v : lo, lane by lane */
          pick4(&hi[h], &gt, &v);
          pick4(&mag[h], &gm, &g);
        }
      for (int a = 0; a < 6; a++) {
        double l = lo[a / 4][a % 4], u = hi[a / 4][a % 4], m = mag[a / 4][a % 4];
        if (i == 0) {
          B0->lo[a][md / 4][md % 4] = l;
          B0->hi[a][md / 4][md % 4] = u;
          B0->mag[a][md / 4][md % 4] = m;
        } else {
          B1[md][0][a] = l;
          B1[md][1][a] = u;
          B1[md][2][a] = m;
        }
      }
    }
  }
}

static inline int pattern_possible(const svi_impact* s, const int* mode, const double* ur, int spatial) {
  int nc = s->nc, per = spatial ? 3 : 2, m = per * nc;
  double vtol = s->sep_tol * 10;
  const double* bi[MODE_MAX_NC];
  for (int i = 0; i < nc; i++) bi[i] = s->sm_c + (size_t)(i * S_MODES_MAX + mode[i]) * m * 3;
  for (int j = 0; j < nc; j++) {
    double l[3], h[3];
    for (int e = 0; e < per; e++) {
      int a = per * j + e;
      double lo = ur[a], hi = ur[a], mag = fabs(ur[a]);
      for (int i = 0; i < nc; i++) {
        const double* b = bi[i] + 3 * a;
        lo += b[0]; hi += b[1]; mag += b[2];
      }
      l[e] = lo - 1e-12 * mag;
      h[e] = hi + 1e-12 * mag;
    }
    if (!mode_possible(s, spatial, mode[j], l, h, vtol)) return 0;
  }
  return 1;
}

/* pattern_possible for two spatial contacts, four of contact 0's modes at a time (one a lane) for one
 * mode of contact 1: on each of the six rows, S = u + contact 1's interval (per row, broadcast) plus
 * contact 0's (per mode), widened by 1e-12 of the magnitudes, against the tests of the contact the
 * row belongs to (smode_tests as lane thresholds: l <= tl where the mode tests the row's lower end,
 * h >= th where it tests the upper end; a NaN fails a test, as in mode_possible).  The sums are
 * pattern_possible's in another order (u + contact 1's, then + contact 0's): the interval may
 * differ from its by rounding, some 1e-16 of the magnitudes, against the 1e-12 of them it is
 * widened by, so it holds every feasible pattern's velocities as well, and what is skipped is still
 * only patterns that cannot be feasible: the outcomes and their order are the same.  Returns the
 * lanes of group g that pass, as bits. */
typedef struct { svi_v4d lo[6], hi[6], mag[6]; svi_v4i tl[3], th[3], ml[3], mh[3]; } pp_row1;

static inline unsigned pattern_possible2(const pp_row1* S, const pp_bounds0* B0, const pp_tests0* T0, int g) {
  svi_v4i bad = {0, 0, 0, 0};
  for (int a = 0; a < 6; a++) {
    svi_v4d lo = S->lo[a] + B0->lo[a][g], hi = S->hi[a] + B0->hi[a][g], mag = S->mag[a] + B0->mag[a][g];
    svi_v4d l = lo - 1e-12 * mag, h = hi + 1e-12 * mag, tl, th;
    svi_v4i tli = a < 3 ? T0->tl[a][g] : S->tl[a - 3], thi = a < 3 ? T0->th[a][g] : S->th[a - 3];
    svi_v4i ml = a < 3 ? T0->ml[a][g] : S->ml[a - 3], mh = a < 3 ? T0->mh[a][g] : S->mh[a - 3];
    memcpy(&tl, &tli, sizeof(tl));
    memcpy(&th, &thi, sizeof(th));
    bad |= (~(l <= tl) & ml) | (~(h >= th) & mh);
  }
  return (unsigned)(bad[0] == 0) | (unsigned)(bad[1] == 0) << 1 | (unsigned)(bad[2] == 0) << 2 |
         (unsigned)(bad[3] == 0) << 3;
}

/* per mode of contact 1: u + its intervals (b1, from mode_bounds2), each row broadcast, and its
 * tests (m) on rows 3-5 */
static inline void pp_row1_of(const double* ur, const double b1[3][6], const smode_test* m, pp_row1* S) {
  for (int a = 0; a < 3; a++) {
    long long tl, th, ml, mh;
    smode_lanes(m, a, &tl, &th, &ml, &mh);
    S->tl[a] = (svi_v4i){tl, tl, tl, tl};
    S->th[a] = (svi_v4i){th, th, th, th};
    S->ml[a] = (svi_v4i){ml, ml, ml, ml};
    S->mh[a] = (svi_v4i){mh, mh, mh, mh};
  }
  for (int a = 0; a < 6; a++) {
    double lo = ur[a] + b1[0][a], hi = ur[a] + b1[1][a], mag = fabs(ur[a]) + b1[2][a];
    S->lo[a] = (svi_v4d){lo, lo, lo, lo};
    S->hi[a] = (svi_v4d){hi, hi, hi, hi};
    S->mag[a] = (svi_v4d){mag, mag, mag, mag};
  }
}

/* the next pattern in odometer order over the allowed lists (contact 0 fastest); 0 after the last */
static int next_pattern(int nc, const int list[][S_MODES_MAX], const int* cnt, int* pos, int* mode) {
  for (int i = 0; i < nc; i++) {
    if (++pos[i] < cnt[i]) { mode[i] = list[i][pos[i]]; return 1; }
    pos[i] = 0;
    mode[i] = list[i][0];
  }
  return 0;
}

/* Every distinct outcome of one spatial step: 19^nc patterns, solved directly (no precomputed
 * maps: 361 patterns for 2 contacts, 130321 for 4). */
static int spatial_has_budget(const int* mode, int nc) {
  for (int i = 0; i < nc; i++) if (mode[i] != S_SEP && (mode[i] - 1) / S_PER_NORMAL == 0) return 1;
  return 0;
}

/* x = X g and up = U g for one spatial pattern, g = [ur; lmax] (3nc + nc values), as the
 * planar pattern_linear_map: the budgets' fixed impulses Xf, up0 = [I 0] g + Wr Xf g, the
 * equations eq_e . up = 0 give K y = R g with K from the same tables as spatial_pattern, solved
 * column by column with one factor (mode_factor).  Returns 0, or SMAP_DIRECT for a singular K
 * (its minimum-norm solution, and whether the equations hold, are left to the step's direct
 * solve, spatial_pattern) and SMAP_NEVER for a map that is not finite. */
enum { SMAP_DIRECT = -2, SMAP_NEVER = -1 };
static int spatial_linear_map(const svi_impact* s, const int* mode, double* X, double* U) {
  int nc = s->nc, m3 = 3 * nc, ng = m3 + nc;
  const double* Wr = s->Wr;
  const double* wd[KMAX];
  const combo *dir[KMAX], *eq[KMAX];
  int base[KMAX];
  double U0[KMAX][KMAX];   /* m3 x ng (ng <= 8 for two contacts) */
  memset(X, 0, sizeof(double) * m3 * ng);
  int k = 0;
  for (int i = 0; i < nc; i++) {
    int slot = i * S_MODES + mode[i];
    const struct svi_smode* q = s->smode + slot;
    if (q->fixed)
      for (int c = 0; c < 3; c++) X[(3 * i + c) * ng + m3 + i] = q->fix[c];
    k = spatial_unknowns(s, q, i, slot, m3, k, wd, dir, eq, base);
  }
  for (int a = 0; a < m3; a++)
    for (int j = 0; j < ng; j++) {
      double sum = j == a ? 1.0 : 0.0;
      for (int b = 0; b < m3; b++) sum += Wr[a * m3 + b] * X[b * ng + j];
      U0[a][j] = sum;
    }
  if (k > 0) {
    double K[KMAX * KMAX], R[KMAX][KMAX], F[KMAX * KMAX], r[KMAX], y[KMAX];
    for (int e = 0; e < k; e++) {
      const combo* c = eq[e];
      for (int j = 0; j < ng; j++) {
        double rhs = 0;
        for (int p = 0; p < c->n; p++) rhs -= c->c[p] * U0[base[e] + c->idx[p]][j];
        R[e][j] = rhs;
      }
    }
    spatial_k(k, eq, wd, base, K);
    struct svi_mode_fac h;
    mode_factor(&h, k, K, F);
    if (h.state != MF_LU) return SMAP_DIRECT;
    for (int j = 0; j < ng; j++) {
      for (int e = 0; e < k; e++) r[e] = R[e][j];
      mode_solve(&h, K, F, r, y, INFINITY);
      for (int e = 0; e < k; e++)
        for (int p = 0; p < dir[e]->n; p++) X[(base[e] + dir[e]->idx[p]) * ng + j] += dir[e]->c[p] * y[e];
    }
  }
  for (int a = 0; a < m3; a++)   /* U = [I 0] + Wr X */
    for (int j = 0; j < ng; j++) {
      double sum = j == a ? 1.0 : 0.0;
      for (int b = 0; b < m3; b++) sum += Wr[a * m3 + b] * X[b * ng + j];
      U[a * ng + j] = sum;
    }
  int ok = 1;
  for (int j = 0; j < m3 * ng; j++) ok &= isfinite(X[j]) && isfinite(U[j]);
  return ok ? 0 : SMAP_NEVER;
}

/* The maps' layout: per pattern and column j of g, 1 + nc vectors of four rows: first the
 * normal rows (x_n of each contact, then up_n of each; zero padding for one contact), then the
 * tangent rows (x_t1, x_t2 of each contact, then up_t1, up_t2 of each). */

/* slot k of the vectors: row a of X (w = 0) or U (w = 1), or padding (a < 0) */
static void smap_slot(int nc, int k, int* w, int* a) {
  *a = -1;
  *w = 0;
  if (k < 4) {   /* the normal vector */
    if (k < 2 * nc) { *w = k >= nc; *a = 3 * (k % nc); }
    return;
  }
  k -= 4;   /* tangents: 2 nc of X, then 2 nc of U */
  *w = k >= 2 * nc;
  k %= 2 * nc;
  *a = 3 * (k / 2) + 1 + k % 2;
}

/* every pattern's map for this event (up to two contacts), by the first enumeration that uses them */
static void spatial_maps(svi_impact* s) {
  int nc = s->nc, m3 = 3 * nc, ng = m3 + nc, nvec = 1 + nc;
  int total = nc == 1 ? S_MODES : S_MODES * S_MODES, mode[2] = {0, 0};
  double XU[2][KMAX * KMAX];
  s->smap_direct = 0;
  for (int p = 0; p < total; p++) {
    mode[0] = p % S_MODES;
    mode[1] = p / S_MODES;
    double* B = s->smap + (size_t)p * SVI_SMAP_STRIDE;
    s->smap_kind[p] = spatial_linear_map(s, mode, XU[0], XU[1]);
    s->smap_direct += s->smap_kind[p] == SMAP_DIRECT;
    for (int j = 0; j < ng; j++)
      for (int k = 0; k < 4 * nvec; k++) {
        int w, a;
        smap_slot(nc, k, &w, &a);
        B[j * 4 * nvec + k] = a >= 0 ? XU[w][a * ng + j] : 0.0;
      }
  }
  s->smap_ready = 1;
}

/* the nvec vectors of one pattern's map at g (gv: g_j in every lane), four rows a GCC vector,
 * each row's sum over j left to right: the same bits in every clone */
static inline __attribute__((always_inline)) void smap_eval(const double* B, const svi_v4d* gv, const int ng,
                                                             const int nvec, svi_v4d* acc) {
  svi_v4d c;
  for (int v = 0; v < nvec; v++) {
    memcpy(&c, B + 4 * v, sizeof(c));
    acc[v] = c * gv[0];
  }
  for (int j = 1; j < ng; j++)
    for (int v = 0; v < nvec; v++) {
      memcpy(&c, B + (j * nvec + v) * 4, sizeof(c));
      acc[v] += c * gv[j];
    }
}

/* a step outcome's impulse x (3 per contact) as lambda_bar (nb values) */
static void spatial_lambda(int nc, int nb, const double* x, double* lam) {
  memset(lam, 0, sizeof(double) * nb);
  for (int i = 0; i < nc; i++) {
    double l1 = x[3 * i + 1], l2 = x[3 * i + 2];
    lam[i] = x[3 * i] > 0 ? x[3 * i] : 0;
    lam[nc + 4 * i] = l1 > 0 ? l1 : 0;
    lam[nc + 4 * i + 1] = l1 < 0 ? -l1 : 0;
    lam[nc + 4 * i + 2] = l2 > 0 ? l2 : 0;
    lam[nc + 4 * i + 3] = l2 < 0 ? -l2 : 0;
  }
}

/* the step outcome (x, up) from ur: kept as impulse number `count` (s->sols) if it is a new one
 * (new_outcome); returns the new count */
static inline __attribute__((always_inline)) int keep_spatial_outcome(svi_impact* s, int count, const int nc,
                                                                      const double* x, const double* up,
                                                                      const double* ur, double dtol) {
  double du[KMAX];
  for (int a = 0; a < 3 * nc; a++) du[a] = up[a] - ur[a];
  if (!new_outcome(s, count, 3 * nc, du, dtol)) return count;
  spatial_lambda(nc, s->nb, x, s->sols + count * s->nb);
  return count + 1;
}

#ifdef SVI_AVX2_KERNELS
#include <immintrin.h>
/* The patterns of the allowed modes (contact 0 fastest, the enumeration's order) that the
 * pattern loop of spatial_fast_nc goes on with, into out: the singular ones (solved directly)
 * and the mapped ones whose normal rows pass their bounds; *mapped counts the patterns that are
 * not SMAP_NEVER (patterns_solved).  Each normal row four lanes an AVX2 vector, its sum over j
 * left to right as dot_ng's chain of fused multiply-adds, as the scalar loop's test forms it
 * (fma4), and the same comparisons (ordered: a NaN passes), so the same patterns. */
__attribute__((target("avx2,fma"), always_inline)) static inline int spatial_normals_nc(
    const svi_impact* s, const double* g, const int nc, int list[][S_MODES_MAX], const int* cnt,
    svi_v4i lo[][S_MODES], svi_v4i hi[][S_MODES], int* out, long long* mapped) {
  const int ng = 4 * nc, ld = 4 * (1 + nc);   /* g's length; a map row's doubles (B[j ld + k]) */
  __m256d gv[8];
  for (int j = 0; j < ng; j++) gv[j] = _mm256_broadcast_sd(g + j);
  int n = 0;
  long long m = 0;
  for (int k1 = 0; k1 < cnt[1]; k1++) {
    int m1 = list[1][k1];
    __m256d l1 = _mm256_setzero_pd(), h1 = _mm256_setzero_pd();
    if (nc == 2) {
      l1 = _mm256_loadu_pd((const double*)&lo[1][m1]);
      h1 = _mm256_loadu_pd((const double*)&hi[1][m1]);
    }
    for (int k0 = 0; k0 < cnt[0]; k0++) {
      int m0 = list[0][k0], p = m0 + S_MODES * m1, kind = s->smap_kind[p];
      if (kind == SMAP_NEVER) continue;
      m++;
      if (kind == SMAP_DIRECT) { out[n++] = p; continue; }
      const double* B = s->smap + (size_t)p * SVI_SMAP_STRIDE;
      __m256d a = _mm256_mul_pd(_mm256_loadu_pd(B), gv[0]);
      for (int j = 1; j < ng; j++) a = _mm256_fmadd_pd(_mm256_loadu_pd(B + j * ld), gv[j], a);
      __m256d l = _mm256_or_pd(_mm256_loadu_pd((const double*)&lo[0][m0]), l1);
      __m256d h = _mm256_or_pd(_mm256_loadu_pd((const double*)&hi[0][m0]), h1);
      __m256d bad = _mm256_or_pd(_mm256_cmp_pd(a, l, _CMP_LT_OQ), _mm256_cmp_pd(a, h, _CMP_GT_OQ));
      out[n] = p;
      n += _mm256_movemask_pd(bad) == 0;
    }
  }
  *mapped = m;
  return n;
}

/* inlined for one and two contacts: g in registers, the sums unrolled (the same operations) */
__attribute__((target("avx2,fma"))) static int spatial_normals_avx2(const svi_impact* s, const double* g, int nc,
                                                               int list[][S_MODES_MAX], const int* cnt,
                                                               svi_v4i lo[][S_MODES], svi_v4i hi[][S_MODES],
                                                               int* out, long long* mapped) {
  if (nc == 1) return spatial_normals_nc(s, g, 1, list, cnt, lo, hi, out, mapped);
  return spatial_normals_nc(s, g, 2, list, cnt, lo, hi, out, mapped);
}
#endif

/* The step outcomes of up to two spatial contacts through the event's pattern maps
 * (spatial_maps), for events sampled many times (not under svi_impact_set_step_solve): the
 * modes the velocity bounds allow (allowed_modes), each pattern of them in the enumeration's
 * order evaluated as x = X g, up = U g (the normal rows first, against the intervals of
 * spatial_normal_interval; the rest only for the patterns that pass), with the sign conditions of
 * spatial_feasible; a singular pattern solved as spatial_enumerate solves it.  The same
 * patterns and conditions as the direct solve, whose outcomes it gives to rounding (a map's
 * sums are not the solve's).  Without the per-pattern bounds of pattern_possible: a map costs
 * less than that test. */
static inline __attribute__((always_inline)) int spatial_fast_nc(svi_impact* s, const double* u,
                                                                 const double* lmax, const int nc) {
  const int m3 = 3 * nc, ng = m3 + nc, nvec = 1 + nc;
  int count = 0;
  int mode[2] = {0, 0};
  double g[8], x[6], up[6], v[12];
  for (int a = 0; a < m3; a++) g[a] = u[spatial_row(nc, a)];
  for (int i = 0; i < nc; i++) g[m3 + i] = lmax[i];
  double dtol = 1e-7 * (s->vscale > 1e-12 ? s->vscale : 1e-12);
  int list[MODE_MAX_NC][S_MODES_MAX], cnt[MODE_MAX_NC];
  int bounded;
  if (!allowed_modes(s, g, lmax, 1, list, cnt, &bounded)) return 0;
  if (!s->smode_ready) spatial_tables(s);
  if (!s->smap_ready) spatial_maps(s);
  /* the normal conditions as lane bounds of the normal vector (x_n of each contact, then up_n):
   * contact i's mode sets its two lanes and leaves the others all zero bits, so a pattern's
   * bounds are its contacts' or-ed (one contact: the padding lanes -inf, +inf); a NaN value
   * fails no comparison and passes, as in spatial_normal_ok */
  double b[4], lb[4], hb[4];
  svi_v4i lo[2][S_MODES], hi[2][S_MODES];
  svi_v4d gv[8];
  for (int i = 0; i < nc; i++)
    for (int md = 0; md < S_MODES; md++) {
      spatial_normal_interval(s, md, lmax[i], b);
      for (int l = 0; l < 4; l++) { lb[l] = nc == 1 ? -INFINITY : 0.0; hb[l] = nc == 1 ? INFINITY : 0.0; }
      lb[i] = b[0]; hb[i] = b[1];
      lb[nc + i] = b[2]; hb[nc + i] = b[3];
      memcpy(&lo[i][md], lb, sizeof(lb));
      memcpy(&hi[i][md], hb, sizeof(hb));
    }
  for (int j = 0; j < ng; j++) gv[j] = (svi_v4d){g[j], g[j], g[j], g[j]};
  unsigned char stepped[2][S_MODES] = {{0}};   /* spatial_step_slot made this step, for the direct solves */
  if (nc == 1) { list[1][0] = 0; cnt[1] = 1; }
  int order[S_MODES * S_MODES], norder = -1;   /* the AVX2 scan's patterns */
#ifdef SVI_AVX2_KERNELS
  if (svi_have_avx2()) {
    long long mapped;
    norder = spatial_normals_avx2(s, g, nc, list, cnt, lo, hi, order, &mapped);
    s->patterns_solved += mapped;
  }
#endif
  /* the enumeration's order, contact 0 fastest: the AVX2 scan's patterns, or every pattern with
   * its normal rows checked here */
  int n = norder >= 0 ? norder : cnt[0] * cnt[1];
  for (int k = 0; k < n; k++) {
    int p;
    if (norder >= 0) p = order[k];
    else {
      p = list[0][k % cnt[0]] + S_MODES * list[1][k / cnt[0]];
      if (s->smap_kind[p] == SMAP_NEVER) continue;
      s->patterns_solved++;
    }
    mode[0] = p % S_MODES;
    mode[1] = p / S_MODES;
    if (s->smap_kind[p] == SMAP_DIRECT) {   /* a singular pattern: as spatial_enumerate solves it */
      for (int i = 0; i < nc; i++)
        if (!stepped[i][mode[i]]) { spatial_step_slot(s, i, mode[i], lmax[i]); stepped[i][mode[i]] = 1; }
      if (!spatial_pattern(s, mode, g, x, up) || !spatial_feasible(s, mode, lmax, x, up)) continue;
    } else {
      const double* B = s->smap + (size_t)p * SVI_SMAP_STRIDE;
      if (norder < 0) {   /* the normal rows first, most patterns fail there: the AVX2 scan's test */
        svi_v4i li = lo[0][mode[0]], hi_ = hi[0][mode[0]];
        if (nc == 2) { li |= lo[1][mode[1]]; hi_ |= hi[1][mode[1]]; }
        svi_v4d l, h, a, c;
        memcpy(&l, &li, sizeof(l));
        memcpy(&h, &hi_, sizeof(h));
        memcpy(&c, B, sizeof(c));
        a = c * gv[0];
        for (int j = 1; j < ng; j++) {
          memcpy(&c, B + j * 4 * nvec, sizeof(c));
          fma4(&a, &c, &gv[j]);
        }
        svi_v4i bad = (a < l) | (a > h);
        if (bad[0] | bad[1] | bad[2] | bad[3]) continue;
      }
      svi_v4d acc[3];   /* the outcome's rows (the normal ones by multiply and add, as before) */
      smap_eval(B, gv, ng, nvec, acc);
      memcpy(v, &acc[0], sizeof(acc[0]) * nvec);
      for (int i = 0; i < nc; i++) {
        x[3 * i] = v[i];
        up[3 * i] = v[nc + i];
        x[3 * i + 1] = v[4 + 2 * i];
        x[3 * i + 2] = v[4 + 2 * i + 1];
        up[3 * i + 1] = v[4 + 2 * nc + 2 * i];
        up[3 * i + 2] = v[4 + 2 * nc + 2 * i + 1];
      }
      if (!spatial_friction_ok(s, nc, mode, x, up)) continue;
    }
    count = keep_spatial_outcome(s, count, nc, x, up, g, dtol);
  }
  return count;
}

SVI_SIMD static int spatial_fast(svi_impact* s, const double* u, const double* lmax) {
  return s->nc == 1 ? spatial_fast_nc(s, u, lmax, 1) : spatial_fast_nc(s, u, lmax, 2);
}

SVI_SIMD static int spatial_enumerate(svi_impact* s, const double* u, const double* lmax, int ap) {
  if (!ap && s->nc <= 2 && s->smap && !s->step_solve) return spatial_fast(s, u, lmax);
  int nc = s->nc, m3 = 3 * nc, count = 0;
  int mode[MODE_MAX_NC] = {0};
  double ur[KMAX], x[KMAX], up[KMAX];
  for (int a = 0; a < m3; a++) ur[a] = u[spatial_row(nc, a)];
  double dtol = 1e-7 * (s->vscale > 1e-12 ? s->vscale : 1e-12);
  int list[MODE_MAX_NC][S_MODES_MAX], cnt[MODE_MAX_NC], pos[MODE_MAX_NC] = {0};
  int bounded;
  if (!allowed_modes(s, ur, lmax, 1, list, cnt, &bounded)) return 0;
  if (!s->smode_ready) spatial_tables(s);
  if (!ap) spatial_step_setup(s, lmax);
  /* two contacts, bounded: the enumeration's order (contact 1's modes, then contact 0's in increasing
   * order), four of contact 0's modes a test.  Not for (31) (ap): it skips the budgeted modes,
   * which this branch does not (its infinite budgets leave the bounds off anyway) */
  if (bounded && nc == 2 && !ap) {
    pp_bounds0 B0;               /* contact 0's intervals, its modes across the lanes */
    double B1[S_MODES][3][6];    /* contact 1's */
    memset(&B0, 0, sizeof(B0));  /* the modes not allowed: zeros, their lanes masked below */
    mode_bounds2(s, lmax, list, cnt, &B0, B1);
    unsigned allowed0 = 0;
    for (int c = 0; c < cnt[0]; c++) allowed0 |= 1u << list[0][c];
    const pp_tests0* T0 = (const pp_tests0*)s->sm_pp;
    pp_row1 S;
    memset(&S, 0, sizeof(S));
    for (int p1 = 0; p1 < cnt[1]; p1++) {
      mode[1] = list[1][p1];
      pp_row1_of(ur, B1[mode[1]], s->sm_test + mode[1], &S);
      for (int g = 0; g < PP_G; g++) {
        unsigned ok = (allowed0 >> (4 * g)) & 15u;
        if (ok) ok &= pattern_possible2(&S, &B0, T0, g);
        for (; ok; ok &= ok - 1) {
          mode[0] = 4 * g + __builtin_ctz(ok);
          s->patterns_solved++;
          if (!spatial_pattern(s, mode, ur, x, up) || !spatial_feasible(s, mode, lmax, x, up)) continue;
          count = keep_spatial_outcome(s, count, nc, x, up, ur, dtol);
        }
      }
    }
    return count;
  }
  if (bounded) mode_bounds(s, lmax, 1, list, cnt);
  for (int i = 0; i < nc; i++) mode[i] = list[i][0];
  for (int more = 1; more; more = next_pattern(nc, list, cnt, pos, mode)) {
    if (ap && spatial_has_budget(mode, nc)) continue;
    if (bounded && nc > 1 && !pattern_possible(s, mode, ur, 1)) continue;
    s->patterns_solved++;
    if (!spatial_pattern(s, mode, ur, x, up) || !spatial_feasible(s, mode, lmax, x, up)) continue;
    count = keep_spatial_outcome(s, count, nc, x, up, ur, dtol);
  }
  return count;
}

/* Wr: the reduced Delassus matrix in (n_0, t_0, n_1, t_1, ...) order, built once per event */
void svi_modes_setup(svi_impact* s) {
  s->n_patterns = 0;
  if (!svi_modes_supported(s)) return;
  if (s->nt == 2) { spatial_setup(s); return; }
  int nc = s->nc, m2 = 2 * nc, nb = s->nb;
  for (int a = 0; a < m2; a++) {
    int ra = a % 2 ? nc + 2 * (a / 2) : a / 2;
    for (int b = 0; b < m2; b++) {
      int rb = b % 2 ? nc + 2 * (b / 2) : b / 2;
      s->Wr[a * m2 + b] = s->W[ra * nb + rb];
    }
  }
  pad_wr(s, m2);
  if (s->sm_fac)   /* a new event: no factor of K kept (pattern_impulse) */
    for (int p = 0; p < SM_FAC_PATTERNS; p++) s->sm_fac[p].state = MF_NONE;
  if (!s->step_solve) precompute_patterns(s);
}

int svi_modes_supported(const svi_impact* s) { return s->nc <= MODE_MAX_NC; }

/* All distinct step outcomes; writes up to SVI_ENUM_MAX_SOLS reduced impulses to s->sols as
 * lambda_bar (nb values each) and returns their number. */
/* A pattern of (31) has no budget: only SEP and INT modes. */
static int planar_has_budget(const int* mode, int nc) {
  for (int i = 0; i < nc; i++) if (mode[i] >= BUD_STICK && mode[i] <= BUD_SLIP_M) return 1;
  return 0;
}

/* a . g for the 3, 6 or 9 values of one pattern row: t = a_0 g_0, then t = fma(a_j, g_j, t) for
 * j = 1 .. ng - 1, left to right; every row, map and partial sum of the pattern maps is this
 * chain (one rounding a term), in the AVX2 kernels as in their scalar twins (ng is a constant
 * where it is inlined, so the loop unrolls; fma is one instruction in the FMA clones) */
static inline double dot_ng(const double* a, const double* g, int ng) {
  double t = a[0] * g[0];
  for (int j = 1; j < ng; j++) t = fma(a[j], g[j], t);
  return t;
}

/* The patterns that pass both packed rows, in increasing order, into idx; returns how many.
 * Both rows of a group of four patterns (pattern_pk) four lanes a GCC vector, each lane's sum
 * over j in increasing order as the AVX2 kernel forms it (dot_ng's chain of fused multiply-adds),
 * compared exactly: both give the same set.  Padding patterns (np .. npad-1) have zero rows and tau = -1:
 * they never pass.  pass (learning steps, else NULL): counts the patterns that pass the first. */
static inline __attribute__((always_inline)) int alive_ng(const svi_impact* s, const double* g, int* idx,
                                                          int* pass, const int ng) {
  const int gs = 8 * (ng + 2), k1 = 4 * (ng + 2);   /* a group's doubles; packed row 1's offset */
  int npad = s->pattern_npad, total = s->n_patterns, na = 0;
  for (int p = 0; p < npad; p += 4) {
    const double* P = s->pattern_pk + (size_t)(p / 4) * gs;
    svi_v4d f, a, b, t;
    svi_v4d gj = {g[0], g[0], g[0], g[0]};
    memcpy(&f, P, sizeof(f));
    a = f * gj;
    memcpy(&f, P + k1, sizeof(f));
    b = f * gj;
    for (int j = 1; j < ng; j++) {
      gj = (svi_v4d){g[j], g[j], g[j], g[j]};
      memcpy(&f, P + 4 * j, sizeof(f));
      fma4(&a, &f, &gj);
      memcpy(&f, P + k1 + 4 * j, sizeof(f));
      fma4(&b, &f, &gj);
    }
    memcpy(&t, P + 4 * ng, sizeof(t));
    svi_v4i ok1 = a <= t;
    memcpy(&t, P + k1 + 4 * ng, sizeof(t));
    svi_v4i ok = ok1 & (b <= t);
    for (int l = 0; l < 4; l++) {
      idx[na] = p + l;
      na += (int)(ok[l] & 1);
      if (pass && p + l < total) pass[2 * (p + l)] += (int)(ok1[l] & 1);
    }
  }
  return na;
}

SVI_SIMD_FMA static int alive_scalar(const svi_impact* s, const double* g, int* idx, int* pass) {
  switch (3 * s->nc) {
  case 3: return alive_ng(s, g, idx, pass, 3);
  case 6: return alive_ng(s, g, idx, pass, 6);
  case 9: return alive_ng(s, g, idx, pass, 9);
  default: return alive_ng(s, g, idx, pass, 3 * s->nc);
  }
}

#ifdef SVI_AVX2_KERNELS
#include <immintrin.h>
/* Both kernels are inlined for each contact count (ng = 3, 6, 9) so that the j loops unroll;
 * the sums and their order are the same. */
#define SVI_AVX2_INLINE __attribute__((target("avx2,fma"), always_inline)) static inline
/* The patterns that pass both packed rows as bits of words (pattern p: bit p % 64 of word p / 64;
 * npad <= 64 PATTERN_WORDS): four patterns a vector from their group in pattern_pk, their bits
 * or-ed in without a branch. */
#define PATTERN_WORDS 6   /* 7^3 = 343 patterns */
SVI_AVX2_INLINE void alive_avx2_ng(int npad, const int ng, const double* pk, const __m256d* gv,
                                   const int first, uint64_t* bits) {
  const int j0 = first ? 2 * ng / 3 : 1;   /* first: the group holds the sums over j < 2nc */
  const int gs = 8 * (ng + 2), k1 = 4 * (ng + 2);   /* a group's doubles; packed row 1's offset */
  for (int w = 0; 64 * w < npad; w++) {
    uint64_t acc = 0;
    int p1 = npad - 64 * w < 64 ? npad - 64 * w : 64;
    const double* P = pk + (size_t)(16 * w) * gs;
    for (int p = 0; p < p1; p += 4, P += gs) {
      __m256d a = first ? _mm256_loadu_pd(P + 4 * ng + 4) : _mm256_mul_pd(_mm256_loadu_pd(P), gv[0]);
      __m256d b = first ? _mm256_loadu_pd(P + k1 + 4 * ng + 4) : _mm256_mul_pd(_mm256_loadu_pd(P + k1), gv[0]);
      for (int j = j0; j < ng; j++) {
        a = _mm256_fmadd_pd(_mm256_loadu_pd(P + 4 * j), gv[j], a);
        b = _mm256_fmadd_pd(_mm256_loadu_pd(P + k1 + 4 * j), gv[j], b);
      }
      __m256d ok = _mm256_and_pd(_mm256_cmp_pd(a, _mm256_loadu_pd(P + 4 * ng), _CMP_LE_OQ),
                                 _mm256_cmp_pd(b, _mm256_loadu_pd(P + k1 + 4 * ng), _CMP_LE_OQ));
      acc |= (uint64_t)_mm256_movemask_pd(ok) << p;
    }
    bits[w] = acc;
  }
}

/* Every row of pattern p in blocks of 4 (padding rows always hold): 1 if all hold at g.  Each
 * row's value is the same sum in the same order as dot_ng's. */
SVI_AVX2_INLINE int rows_hold_avx2_ng(const svi_impact* s, int p, const __m256d* gv, const int ng,
                                      const int first, const double* pre) {
  int b0 = s->pattern_blk0[p], b1 = s->pattern_blk0[p + 1], bs = 4 * ng + 4;
  const int j0 = first ? 2 * ng / 3 : 1;
  for (int b = b0; b < b1; b++) {
    const double* B = s->pattern_blk + (size_t)b * bs;
    __m256d a = first ? _mm256_loadu_pd(pre + 4 * b) : _mm256_mul_pd(_mm256_loadu_pd(B), gv[0]);
    for (int j = j0; j < ng; j++) a = _mm256_fmadd_pd(_mm256_loadu_pd(B + 4 * j), gv[j], a);
    if (_mm256_movemask_pd(_mm256_cmp_pd(a, _mm256_loadu_pd(B + 4 * ng), _CMP_LE_OQ)) != 15) return 0;
  }
  return 1;
}


/* The feasible patterns at g, in increasing order, into idx: both packed rows of every pattern,
 * then every row of the survivors (the same decisions as the scalar path). */
SVI_AVX2_INLINE int feasible_avx2_ng(const svi_impact* s, const __m256d* gv, int* idx, const int ng,
                                     const int first, const uint64_t* cand) {
  int npad = s->pattern_npad;
  const double* pre = s->pattern_pre;
  uint64_t bits[PATTERN_WORDS];
  if (cand)   /* a first step's candidates by budget cell (pattern_cells): every row of each */
    for (int w = 0; w < (npad + 63) / 64; w++) bits[w] = cand[w];
  else
    alive_avx2_ng(npad, ng, s->pattern_pk, gv, first, bits);
  int nf = 0;
  for (int w = 0; w < (npad + 63) / 64; w++)
    for (uint64_t m = bits[w]; m; m &= m - 1) {   /* the survivors in increasing order */
      int p = 64 * w + __builtin_ctzll(m);
      idx[nf] = p;
      nf += rows_hold_avx2_ng(s, p, gv, ng, first, pre);
    }
  return nf;
}

#endif

#ifdef SVI_AVX2_KERNELS
/* The post-step velocities up = U g of the feasible patterns idx[0 .. na) and their distinct
 * outcomes by du = up - u (new_outcome's test, in the same order): four rows of U a vector from its
 * copy by columns, each lane's sum dot_ng's in its order, so the same du and the same decisions.
 * found: the patterns of the distinct outcomes; returns their number. */
SVI_AVX2_INLINE int outcomes_avx2_ng(const svi_impact* s, int na, const int* idx, const double* g,
                                     const __m256d* gv, const int ng, double dtol, const int first,
                                     int* found) {
  enum { VMAX = 2 };   /* m2 <= 6: two vectors */
  const int m2 = 2 * ng / 3, nvec = (m2 + 3) / 4, m2pad = 4 * nvec, j0 = first ? m2 : 1;
  int count = 0;
  const double* upre = pre_u(s);
  double gu[4 * VMAX] = {0}, seen[SVI_ENUM_MAX_SOLS * 4 * VMAX];
  for (int a = 0; a < m2; a++) gu[a] = g[a];
  __m256d sgn = _mm256_set1_pd(-0.0), tol = _mm256_set1_pd(dtol);
  for (int k = 0; k < na; k++) {
    int p = idx[k];
    const double* Uc = s->pattern_uc + (size_t)p * ng * m2pad;
    __m256d du[VMAX];
    for (int v = 0; v < nvec; v++) {
      __m256d acc = first ? _mm256_loadu_pd(upre + (size_t)p * m2pad + 4 * v)
                          : _mm256_mul_pd(_mm256_loadu_pd(Uc + 4 * v), gv[0]);
      for (int j = j0; j < ng; j++) acc = _mm256_fmadd_pd(_mm256_loadu_pd(Uc + j * m2pad + 4 * v), gv[j], acc);
      du[v] = _mm256_sub_pd(acc, _mm256_loadu_pd(gu + 4 * v));
    }
    int dup = 0;
    for (int c = 0; c < count && !dup; c++) {
      int same = 1;
      for (int v = 0; v < nvec; v++) {
        __m256d d = _mm256_andnot_pd(sgn, _mm256_sub_pd(_mm256_loadu_pd(seen + c * m2pad + 4 * v), du[v]));
        same &= _mm256_movemask_pd(_mm256_cmp_pd(d, tol, _CMP_LE_OQ)) == 15;
      }
      dup = same;
    }
    if (dup || count >= SVI_ENUM_MAX_SOLS) continue;
    for (int v = 0; v < nvec; v++) _mm256_storeu_pd(seen + count * m2pad + 4 * v, du[v]);
    found[count++] = p;
  }
  return count;
}

/* One step's distinct outcomes through the packed rows (feasible_avx2_ng, then outcomes_avx2_ng,
 * g broadcast once for both), inlined for each contact count; first: g's velocity part is the
 * event's u0 (pattern_g0), the partial sums over it are precomputed. */
SVI_AVX2_INLINE int step_avx2_ng(const svi_impact* s, const double* g, const int ng, const int first,
                                 const uint64_t* cand, double dtol, int* found) {
  __m256d gv[3 * MODE_MAX_NC];   /* registers when ng is a constant */
  for (int j = 0; j < ng; j++) gv[j] = _mm256_broadcast_sd(g + j);
  int na = feasible_avx2_ng(s, gv, s->pattern_idx, ng, first, cand);
  return outcomes_avx2_ng(s, na, s->pattern_idx, g, gv, ng, dtol, first, found);
}

__attribute__((target("avx2,fma"))) static int step_avx2(const svi_impact* s, const double* g, int ng, int first,
                                                          const uint64_t* cand, double dtol, int* found) {
  if (first) {
    switch (ng) {
    case 3: return step_avx2_ng(s, g, 3, 1, cand, dtol, found);
    case 6: return step_avx2_ng(s, g, 6, 1, cand, dtol, found);
    default: return step_avx2_ng(s, g, 9, 1, cand, dtol, found);
    }
  }
  switch (ng) {
  case 3: return step_avx2_ng(s, g, 3, 0, NULL, dtol, found);
  case 6: return step_avx2_ng(s, g, 6, 0, NULL, dtol, found);
  default: return step_avx2_ng(s, g, 9, 0, NULL, dtol, found);
  }
}
#endif

/* put row r of pattern p in packed slot k (0 or 1) of pattern_pk; r < 0: a row that never rejects */
static void set_packed_row(svi_impact* s, int k, int p, int r, int ng) {
  s->pattern_frow[2 * p + k] = r;
  for (int j = 0; j < ng; j++) *pk_at(s, p, k, j) = r >= 0 ? s->pattern_F[(size_t)r * ng + j] : 0.0;
  *pk_at(s, p, k, ng) = r >= 0 ? s->pattern_tau[r] : 1.0;
}

/* each pattern's packed rows: the two that rejected it most often so far.  Since the last pick
 * the first row rejected (steps - pass1) times, the second (pass1 - pass2) times, the others
 * their hits. */
static void pick_packed_rows(svi_impact* s) {
  int ng = 3 * s->nc;
  long long steps = s->pattern_steps - s->pattern_picked;
  for (int p = 0; p < s->n_patterns; p++) {
    int r1 = s->pattern_frow[2 * p], r2 = s->pattern_frow[2 * p + 1];
    if (r1 >= 0) s->pattern_hits[r1] += (int)(steps - s->pattern_pass[2 * p]);
    if (r2 >= 0) s->pattern_hits[r2] += s->pattern_pass[2 * p] - s->pattern_pass[2 * p + 1];
    s->pattern_pass[2 * p] = s->pattern_pass[2 * p + 1] = 0;
    int b1 = -1, b2 = -1;
    for (int r = s->pattern_row0[p]; r < s->pattern_row0[p + 1]; r++) {
      if (b1 < 0 || s->pattern_hits[r] > s->pattern_hits[b1]) { b2 = b1; b1 = r; }
      else if (b2 < 0 || s->pattern_hits[r] > s->pattern_hits[b2]) b2 = r;
    }
    set_packed_row(s, 0, p, b1, ng);
    set_packed_row(s, 1, p, b2, ng);
  }
  s->pattern_picked = s->pattern_steps;
  /* the first step's partial sums for the AVX2 path, which starts after the last pick: only
   * events sampled that long pay for them */
  if (s->pattern_steps >= PATTERN_LEARN_STEPS) {
    pattern_prefix(s);
    s->pattern_pre_ok = 1;
    pattern_cells(s);
  }
}


static inline int same_bits(double a, double b) {
  uint64_t x, y;
  memcpy(&x, &a, sizeof(x));
  memcpy(&y, &b, sizeof(y));
  return x == y;
}

/* The outcomes of one step through the precomputed rows (nc <= 3): both packed rows of every
 * pattern at once, the patterns that pass them as the bits of a word (AVX2), their other rows
 * until one fails, and the maps only for the feasible ones.  Which rows are packed adapts to how
 * often they reject (pick_packed_rows); the order in which rows are tested never changes a row's
 * value, so the outcome does not depend on the history.  Same outcomes, in the same order, as
 * the direct evaluation of every pattern. */
static inline __attribute__((always_inline)) int planar_fast_nc(svi_impact* s, const double* u,
                                                                const double* lmax, double r01,
                                                                double* pick, const int nc) {
  int nb = 3 * nc, m2 = 2 * nc, ng = 3 * nc;
  double g[3 * MODE_MAX_NC], x[2 * MODE_MAX_NC], up[2 * MODE_MAX_NC], du[2 * MODE_MAX_NC];
  for (int i = 0; i < nc; i++) {
    g[2 * i] = u[i];
    g[2 * i + 1] = u[nc + 2 * i];
    g[m2 + i] = lmax[i];
  }
  int *idx = s->pattern_idx, *pass = s->pattern_pass, na, count = 0, found[SVI_ENUM_MAX_SOLS];
  long long st = ++s->pattern_steps;
  int learning = st <= PATTERN_LEARN_STEPS;   /* the packed rows are still being chosen */
  /* the event's first step: g's velocity part is u0 bit for bit, the partial sums over it are
   * precomputed (pattern_prefix) */
  int at_u0 = 1;
  for (int a = 0; a < m2; a++) at_u0 &= same_bits(g[a], s->pattern_g0[a]);
  int first = s->pattern_pre_ok & at_u0;
  if (learning && at_u0)   /* the first steps' budgets, for the box of pattern_cells */
    for (int i = 0; i < nc; i++)
      if (g[m2 + i] > s->pattern_lhi[i]) s->pattern_lhi[i] = g[m2 + i];
  double dtol = 1e-7 * (s->vscale > 1e-12 ? s->vscale : 1e-12);
#ifdef SVI_AVX2_KERNELS
  if (!learning && svi_have_avx2()) {   /* every row of every pattern checked, the outcomes found */
    const uint64_t* cand = first && s->pattern_cells_ok ? cell_of(s, g + m2, nc) : NULL;
    s->pattern_cell_steps += cand != NULL;
    count = step_avx2(s, g, ng, first, cand, dtol, found);
    na = 0;
  } else
#endif
  {
    na = alive_scalar(s, g, idx, learning ? pass : NULL);
  }
  for (int k = 0; k < na; k++) {   /* the scalar path: the other rows, then the maps */
    int p = idx[k];
    pass[2 * p + 1] += learning;
    int r = s->pattern_row0[p], r1 = s->pattern_row0[p + 1];
    int f1 = s->pattern_frow[2 * p], f2 = s->pattern_frow[2 * p + 1];
    for (; r < r1; r++)
      if (r != f1 && r != f2 && dot_ng(s->pattern_F + (size_t)r * ng, g, ng) > s->pattern_tau[r]) break;
    if (r < r1) { s->pattern_hits[r] += learning; continue; }
    const double* X = s->pattern_map + (size_t)p * 2 * m2 * ng;
    const double* U = X + m2 * ng;
    for (int a = 0; a < m2; a++) {   /* the impulses only for a new outcome (below) */
      up[a] = dot_ng(U + a * ng, g, ng);
      du[a] = up[a] - g[a];
    }
    if (!new_outcome(s, count, m2, du, dtol)) continue;
    found[count++] = p;
  }
  if (st == 16 || st == 64 || st == 256 || st == PATTERN_LEARN_STEPS) pick_packed_rows(s);
  /* the impulses: of every outcome into s->sols, or (pick) only of the one chosen by r01 */
  int k0 = 0, k1 = count;
  if (pick && count > 0) {
    k0 = svi_pick_index(r01, count);
    k1 = k0 + 1;
  }
  const double* xpre = pre_x(s);
  for (int k = k0; k < k1; k++) {
    const double* X = s->pattern_map + (size_t)found[k] * 2 * m2 * ng;
    if (first)   /* the rest of dot_ng's sum after its first m2 terms */
      for (int a = 0; a < m2; a++) {
        double t = xpre[(size_t)found[k] * m2 + a];
        for (int j = m2; j < ng; j++) t = fma(X[a * ng + j], g[j], t);
        x[a] = t;
      }
    else
      for (int a = 0; a < m2; a++) x[a] = dot_ng(X + a * ng, g, ng);
    double* lam = pick ? pick : s->sols + k * nb;
    for (int i = 0; i < nc; i++) {
      double lt = x[2 * i + 1];
      lam[i] = x[2 * i];
      lam[nc + 2 * i] = lt > 0 ? lt : 0;
      lam[nc + 2 * i + 1] = lt < 0 ? -lt : 0;
    }
  }
  return count;
}

/* inlined per contact count (the loops over contacts and rows unroll; the same arithmetic); the
 * FMA clone makes dot_ng's fma one instruction */
SVI_SIMD_FMA static int planar_fast(svi_impact* s, const double* u, const double* lmax, double r01, double* pick) {
  switch (s->nc) {
  case 1: return planar_fast_nc(s, u, lmax, r01, pick, 1);
  case 2: return planar_fast_nc(s, u, lmax, r01, pick, 2);
  case 3: return planar_fast_nc(s, u, lmax, r01, pick, 3);
  default: return planar_fast_nc(s, u, lmax, r01, pick, s->nc);
  }
}

/* every planar pattern's map is precomputed for this event (precompute_patterns) */
static int maps_ready(const svi_impact* s) {
  return s->nt == 1 && s->n_patterns > 0 && s->n_patterns == s->pattern_total;
}

static int planar_enumerate(svi_impact* s, const double* u, const double* lmax, int ap) {
  if (!ap && maps_ready(s)) return planar_fast(s, u, lmax, 0, NULL);
  int nc = s->nc, nb = s->nb, m2 = 2 * nc, count = 0;
  int mode[MODE_MAX_NC] = {0};
  double ur[2 * MODE_MAX_NC], x[2 * MODE_MAX_NC], up[2 * MODE_MAX_NC], du[2 * MODE_MAX_NC];
  for (int i = 0; i < nc; i++) { ur[2 * i] = u[row_n(s, i)]; ur[2 * i + 1] = u[row_t(s, i)]; }
  double dtol = 1e-7 * (s->vscale > 1e-12 ? s->vscale : 1e-12);
  int list[MODE_MAX_NC][S_MODES_MAX], cnt[MODE_MAX_NC], pos[MODE_MAX_NC] = {0};
  int bounded;
  if (!allowed_modes(s, ur, lmax, 0, list, cnt, &bounded)) return 0;
  if (bounded) mode_bounds(s, lmax, 0, list, cnt);
  for (int i = 0; i < nc; i++) mode[i] = list[i][0];
  for (int more = 1; more; more = next_pattern(nc, list, cnt, pos, mode)) {   /* odometer */
    if (ap && planar_has_budget(mode, nc)) continue;
    if (bounded && nc > 1 && !pattern_possible(s, mode, ur, 0)) continue;
    s->patterns_solved++;
    if (!try_pattern(s, mode, ur, lmax, x, up)) continue;
    for (int a = 0; a < m2; a++) du[a] = up[a] - ur[a];
    if (!new_outcome(s, count, m2, du, dtol)) continue;
    double* lam = s->sols + count * nb;
    memset(lam, 0, sizeof(double) * nb);
    for (int i = 0; i < nc; i++) {
      double lt = x[2 * i + 1];
      lam[i] = x[2 * i];
      lam[nc + 2 * i] = lt > 0 ? lt : 0;
      lam[nc + 2 * i + 1] = lt < 0 ? -lt : 0;
    }
    count++;
  }
  return count;
}

int svi_modes_enumerate(svi_impact* s, const double* u, const double* lmax) {
  return s->nt == 2 ? spatial_enumerate(s, u, lmax, 0) : planar_enumerate(s, u, lmax, 0);
}

/* The outcome k = floor(r01 count) of svi_modes_enumerate (k < count) into lam (nb values), the
 * same bits; with the precomputed maps only that outcome's impulse is formed. */
int svi_modes_enumerate_pick(svi_impact* s, const double* u, const double* lmax, double r01, double* lam) {
  if (maps_ready(s)) return planar_fast(s, u, lmax, r01, lam);
  int count = svi_modes_enumerate(s, u, lmax);
  if (count > 0)
    memcpy(lam, s->sols + (size_t)svi_pick_index(r01, count) * s->nb, sizeof(double) * (size_t)s->nb);
  return count;
}

/* The solutions of (31) are those of (75) with an unbounded budget, i.e. the patterns of SEP and
 * INT modes only (0 <= l_n _|_ J_n v+ >= 0, eq. 31c). */
int svi_modes_enumerate_ap(svi_impact* s, const double* u) {
  double inf[MODE_MAX_NC];
  for (int i = 0; i < MODE_MAX_NC; i++) inf[i] = INFINITY;
  return s->nt == 2 ? spatial_enumerate(s, u, inf, 1) : planar_enumerate(s, u, inf, 1);
}
