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
 */
#include <math.h>
#include <string.h>

#include "svi_internal.h"

enum { SEP, BUD_STICK, BUD_SLIP_P, BUD_SLIP_M, INT_STICK, INT_SLIP_P, INT_SLIP_M, NMODES };

#define MODE_MAX_NC 4

/* rows of Jbar for contact i: normal i, tangent +t at nc + 2 i (nt = 1) */
static int row_n(const svi_impact* s, int i) { (void)s; return i; }
static int row_t(const svi_impact* s, int i) { return s->nc + 2 * i; }

/* Solve K y = r (k x k) by Gaussian elimination with partial pivoting; singular systems by
 * the regularised normal equations.  Returns 0 if no y satisfies K y = r to tol. */
static int solve_mode(int k, double* K, double* r, double* y, double tol, int* was_singular) {
  double kn = 0;
  for (int i = 0; i < k * k; i++) { double a = fabs(K[i]); if (a > kn) kn = a; }
  double A[2 * MODE_MAX_NC][2 * MODE_MAX_NC], b[2 * MODE_MAX_NC];
  for (int i = 0; i < k; i++) { b[i] = r[i]; for (int j = 0; j < k; j++) A[i][j] = K[i * k + j]; }
  double sing = 1e-10 * kn;
  int singular = 0;
  for (int c = 0; c < k; c++) {
    int p = c;
    double best = fabs(A[c][c]);
    for (int i = c + 1; i < k; i++) if (fabs(A[i][c]) > best) { best = fabs(A[i][c]); p = i; }
    if (!(best > sing)) { singular = 1; break; }
    if (p != c) {
      for (int j = c; j < k; j++) { double t = A[c][j]; A[c][j] = A[p][j]; A[p][j] = t; }
      double t = b[c]; b[c] = b[p]; b[p] = t;
    }
    double inv = 1.0 / A[c][c];
    for (int i = c + 1; i < k; i++) {
      double f = A[i][c] * inv;
      if (f == 0) continue;
      for (int j = c + 1; j < k; j++) A[i][j] -= f * A[c][j];
      b[i] -= f * b[c];
    }
  }
  *was_singular = singular;
  if (!singular) {
    for (int c = k - 1; c >= 0; c--) {
      double sum = b[c];
      for (int j = c + 1; j < k; j++) sum -= A[c][j] * y[j];
      y[c] = sum / A[c][c];
    }
    return 1;
  }
  /* (K^T K + delta I) y = K^T r: the minimum-norm solution in the limit delta -> 0 */
  double N[4 * MODE_MAX_NC * MODE_MAX_NC];
  for (int i = 0; i < k; i++) {
    y[i] = 0;
    for (int m = 0; m < k; m++) y[i] += K[m * k + i] * r[m];
    for (int j = 0; j < k; j++) {
      double sum = 0;
      for (int m = 0; m < k; m++) sum += K[m * k + i] * K[m * k + j];
      N[i * k + j] = sum;
    }
    N[i * k + i] += 1e-13 * kn * kn + 1e-300;
  }
  if (!svi_cholesky(k, N)) return 0;
  svi_cholesky_solve(k, N, y);
  for (int i = 0; i < k; i++) {
    double e = -r[i];
    for (int j = 0; j < k; j++) e += K[i * k + j] * y[j];
    if (fabs(e) > tol) return 0;
  }
  return 1;
}

/* x for one mode pattern (before the sign checks): fixed impulses from the budgets plus the
 * unknowns that zero the pattern's velocity rows.  Returns 0 if no x satisfies the equations. */
static int pattern_impulse(const svi_impact* s, const int* mode, const double* ur,
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
  }
  if (singular) *singular = 0;
  if (k == 0) return 1;
  double K[4 * MODE_MAX_NC * MODE_MAX_NC], r[2 * MODE_MAX_NC], y[2 * MODE_MAX_NC];
  for (int e = 0; e < k; e++) {
    const double* w = Wr + eq[e] * m2;
    double rhs = -ur[eq[e]];
    for (int a = 0; a < m2; a++) rhs -= w[a] * x[a];
    r[e] = rhs;
    for (int j = 0; j < k; j++) {
      int c = col[j];
      K[e * k + j] = w[c] + (slip[j] != 0 ? slip[j] * w[c + 1] : 0);
    }
  }
  int sg = 0;
  if (!solve_mode(k, K, r, y, s->sep_tol * 10, &sg)) return 0;
  if (singular) *singular = sg;
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
static int try_pattern(const svi_impact* s, const int* mode, const double* ur, const double* lmax,
                       double* x, double* up) {
  if (!pattern_impulse(s, mode, ur, lmax, x, NULL)) return 0;
  reduced_velocity(s, ur, x, up);
  return pattern_feasible(s, mode, lmax, x, up);
}

/* For a nonsingular pattern, x and the reduced post-step velocity are linear in
 * g = [ur; lmax]:  x = X g,  up = ur + Wr X g.  X depends only on Wr, mu and the pattern, which
 * are constant during an impact event, so the 7^nc solves happen once per event and each step
 * costs two small products per pattern.  Singular patterns (redundant contacts) keep the direct
 * least-squares path. */
static void precompute_patterns(svi_impact* s) {
  int nc = s->nc, m2 = 2 * nc, ng = m2 + nc, total = 1;
  for (int i = 0; i < nc; i++) total *= NMODES;
  if (total > s->pattern_cap) return;
  int mode[MODE_MAX_NC] = {0};
  double g[3 * MODE_MAX_NC], x[2 * MODE_MAX_NC];
  for (int p = 0; p < total; p++) {
    if (p > 0) for (int i = 0; i < nc && ++mode[i] == NMODES; i++) mode[i] = 0;
    double* X = s->pattern_map + (size_t)p * 2 * m2 * ng;
    double* U = X + m2 * ng;
    int ok = 1, singular = 0;
    for (int j = 0; j < ng && ok; j++) {
      memset(g, 0, sizeof(double) * ng);
      g[j] = 1;
      ok = pattern_impulse(s, mode, g, g + m2, x, &singular) && !singular;
      for (int a = 0; a < m2; a++) X[a * ng + j] = x[a];
    }
    s->pattern_ok[p] = (unsigned char)ok;
    if (!ok) continue;
    for (int a = 0; a < m2; a++)       /* U = [I 0] + Wr X */
      for (int j = 0; j < ng; j++) {
        double sum = j == a ? 1.0 : 0.0;
        for (int b = 0; b < m2; b++) sum += s->Wr[a * m2 + b] * X[b * ng + j];
        U[a * ng + j] = sum;
      }
  }
  s->n_patterns = total;
}

/* Wr: the reduced Delassus matrix in (n_0, t_0, n_1, t_1, ...) order, built once per event */
void svi_modes_setup(svi_impact* s) {
  s->n_patterns = 0;
  if (!svi_modes_supported(s)) return;
  int nc = s->nc, m2 = 2 * nc, nb = s->nb;
  for (int a = 0; a < m2; a++) {
    int ra = a % 2 ? nc + 2 * (a / 2) : a / 2;
    for (int b = 0; b < m2; b++) {
      int rb = b % 2 ? nc + 2 * (b / 2) : b / 2;
      s->Wr[a * m2 + b] = s->W[ra * nb + rb];
    }
  }
  precompute_patterns(s);
}

int svi_modes_supported(const svi_impact* s) { return s->nt == 1 && s->nc <= MODE_MAX_NC; }

/* All distinct step outcomes; writes up to SVI_ENUM_MAX_SOLS reduced impulses to s->sols as
 * lambda_bar (nb values each) and returns their number. */
int svi_modes_enumerate(svi_impact* s, const double* u, const double* lmax) {
  int nc = s->nc, nb = s->nb, m2 = 2 * nc, count = 0;
  int mode[MODE_MAX_NC] = {0};
  double ur[2 * MODE_MAX_NC], x[2 * MODE_MAX_NC], up[2 * MODE_MAX_NC], du[2 * MODE_MAX_NC];
  double g[3 * MODE_MAX_NC];
  int ng = m2 + nc;
  for (int i = 0; i < nc; i++) { ur[2 * i] = u[row_n(s, i)]; ur[2 * i + 1] = u[row_t(s, i)]; }
  memcpy(g, ur, sizeof(double) * m2);
  memcpy(g + m2, lmax, sizeof(double) * nc);
  double dtol = 1e-7 * (s->vscale > 1e-12 ? s->vscale : 1e-12);
  int total = 1;
  for (int i = 0; i < nc; i++) total *= NMODES;
  for (int p = 0; p < total; p++) {
    if (p > 0)                                /* next pattern: odometer over the contacts */
      for (int i = 0; i < nc && ++mode[i] == NMODES; i++) mode[i] = 0;
    if (s->n_patterns == total && s->pattern_ok[p]) {
      const double* X = s->pattern_map + (size_t)p * 2 * m2 * ng;
      const double* U = X + m2 * ng;
      for (int a = 0; a < m2; a++) {
        double sx = 0, su = 0;
        for (int j = 0; j < ng; j++) { sx += X[a * ng + j] * g[j]; su += U[a * ng + j] * g[j]; }
        x[a] = sx;
        up[a] = su;
      }
      if (!pattern_feasible(s, mode, lmax, x, up)) continue;
    } else if (!try_pattern(s, mode, ur, lmax, x, up)) {
      continue;
    }
    for (int a = 0; a < m2; a++) du[a] = up[a] - ur[a];
    int dup = 0;
    for (int c = 0; c < count && !dup; c++) {
      const double* o = s->seen + c * m2;
      int same = 1;
      for (int a = 0; a < m2 && same; a++) same = fabs(o[a] - du[a]) <= dtol;
      dup = same;
    }
    if (dup || count >= SVI_ENUM_MAX_SOLS) continue;
    memcpy(s->seen + count * m2, du, sizeof(double) * m2);
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
