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
#include <math.h>
#include <string.h>

#include "svi_internal.h"

enum { SEP, BUD_STICK, BUD_SLIP_P, BUD_SLIP_M, INT_STICK, INT_SLIP_P, INT_SLIP_M, NMODES };

#define MODE_MAX_NC 4
#define KMAX (3 * MODE_MAX_NC)   /* unknowns of one pattern: 2 per planar, 3 per spatial contact */

/* rows of Jbar for contact i: normal i, tangent +t at nc + 2 i (nt = 1) */
static int row_n(const svi_impact* s, int i) { (void)s; return i; }
static int row_t(const svi_impact* s, int i) { return s->nc + 2 * i; }

/* Solve K y = r (k x k) by Gaussian elimination with partial pivoting; singular systems by
 * the regularised normal equations.  Returns 0 if no y satisfies K y = r to tol. */
static int solve_mode(int k, double* K, double* r, double* y, double tol, int* was_singular) {
  double kn = 0;
  for (int i = 0; i < k * k; i++) { double a = fabs(K[i]); if (a > kn) kn = a; }
  double A[KMAX][KMAX], b[KMAX];
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
  double N[KMAX * KMAX];
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
    svi_cholesky_solve(k, N, g);
    for (int i = 0; i < k; i++) y[i] += g[i];
  }
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

/* ---- spatial contacts (nt = 2) ------------------------------------------------------------ */

static void reduced_velocity3(const svi_impact* s, const double* ur, const double* x, double* up);

enum { S_SEP = 0, S_PER_NORMAL = 9, S_MODES = 1 + 2 * S_PER_NORMAL };
enum { F_STICK = 0, F_VERTEX = 1, F_FACE = 5 };   /* friction part: 1 stick, 4 vertices, 4 faces */

/* Wr in (n_0, t1_0, t2_0, n_1, ...) order: rows i, nc + 4 i (+t1), nc + 4 i + 2 (+t2) of W */
static int spatial_row(int nc, int a) {
  int i = a / 3, c = a % 3;
  return c == 0 ? i : nc + 4 * i + 2 * (c - 1);
}

static void spatial_setup(svi_impact* s) {
  int nc = s->nc, m3 = 3 * nc, nb = s->nb;
  for (int a = 0; a < m3; a++)
    for (int b = 0; b < m3; b++) s->Wr[a * m3 + b] = s->W[spatial_row(nc, a) * nb + spatial_row(nc, b)];
}

/* a sparse combination of reduced coordinates: sum_k c[k] e_{idx[k]} */
typedef struct { int n; int idx[3]; double c[3]; } combo;

static combo combo1(int a, double ca) { combo r = {1, {a, 0, 0}, {ca, 0, 0}}; return r; }
static combo combo2(int a, double ca, int b, double cb) { combo r = {2, {a, b, 0}, {ca, cb, 0}}; return r; }

/* x and the post-step reduced velocity up of one spatial pattern, before its sign checks.
 * Returns 0 if the pattern's equations have no solution. */
static int spatial_pattern(const svi_impact* s, const int* mode, const double* ur, const double* lmax,
                           double* x, double* up) {
  int nc = s->nc, m3 = 3 * nc, k = 0, ne = 0;
  combo dir[KMAX], eq[KMAX];
  memset(x, 0, sizeof(double) * m3);
  for (int i = 0; i < nc; i++) {
    if (mode[i] == S_SEP) continue;
    int integ = (mode[i] - 1) / S_PER_NORMAL, f = (mode[i] - 1) % S_PER_NORMAL;
    int n = 3 * i, t1 = n + 1, t2 = n + 2;
    double mu = s->mu[i];
    if (!integ) x[n] = lmax[i];
    if (f == F_STICK) {
      if (integ) { dir[k++] = combo1(n, 1); eq[ne++] = combo1(n, 1); }
      dir[k++] = combo1(t1, 1); eq[ne++] = combo1(t1, 1);
      dir[k++] = combo1(t2, 1); eq[ne++] = combo1(t2, 1);
    } else if (f < F_FACE) {
      int tj = n + 1 + (f - F_VERTEX) / 2;
      double sg = (f - F_VERTEX) % 2 ? -1.0 : 1.0;
      if (integ) { dir[k++] = combo2(n, 1, tj, sg * mu); eq[ne++] = combo1(n, 1); }
      else x[tj] = sg * mu * lmax[i];
    } else {
      double s1 = ((f - F_FACE) & 1) ? -1.0 : 1.0, s2 = ((f - F_FACE) & 2) ? -1.0 : 1.0;
      if (integ) {
        dir[k++] = combo2(n, 1, t1, s1 * mu);
        dir[k++] = combo2(n, 1, t2, s2 * mu);
        eq[ne++] = combo1(n, 1);
      } else {
        x[t2] = s2 * mu * lmax[i];
        dir[k++] = combo2(t1, s1 * mu, t2, -s2 * mu);
      }
      eq[ne++] = combo2(t1, s1, t2, -s2);
    }
  }
  reduced_velocity3(s, ur, x, up);
  if (k == 0) return 1;
  double K[KMAX * KMAX], r[KMAX], y[KMAX];
  const double* Wr = s->Wr;
  for (int e = 0; e < ne; e++) {
    double rhs = 0;
    for (int p = 0; p < eq[e].n; p++) rhs -= eq[e].c[p] * up[eq[e].idx[p]];
    r[e] = rhs;
    for (int j = 0; j < k; j++) {
      double sum = 0;
      for (int p = 0; p < eq[e].n; p++)
        for (int q = 0; q < dir[j].n; q++)
          sum += eq[e].c[p] * dir[j].c[q] * Wr[eq[e].idx[p] * m3 + dir[j].idx[q]];
      K[e * k + j] = sum;
    }
  }
  int sg = 0;
  if (!solve_mode(k, K, r, y, s->sep_tol * 10, &sg)) return 0;
  for (int j = 0; j < k; j++)
    for (int q = 0; q < dir[j].n; q++) x[dir[j].idx[q]] += dir[j].c[q] * y[j];
  reduced_velocity3(s, ur, x, up);
  return 1;
}

/* The sign conditions of the spatial modes (header comment). */
static int spatial_feasible(const svi_impact* s, const int* mode, const double* lmax,
                            const double* x, const double* up) {
  double vtol = s->sep_tol * 10;
  double itol = 1e-9 * (s->ref_impulse > 0 ? s->ref_impulse : 1.0);
  for (int i = 0; i < s->nc; i++) {
    const double* xi = x + 3 * i;
    const double* ui = up + 3 * i;
    if (mode[i] == S_SEP) { if (ui[0] < -vtol) return 0; continue; }
    int integ = (mode[i] - 1) / S_PER_NORMAL, f = (mode[i] - 1) % S_PER_NORMAL;
    double mu = s->mu[i];
    if (!integ) { if (ui[0] > vtol) return 0; }
    else if (xi[0] < -itol || xi[0] > lmax[i] + itol) return 0;
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

static void reduced_velocity3(const svi_impact* s, const double* ur, const double* x, double* up) {
  int m3 = 3 * s->nc;
  for (int a = 0; a < m3; a++) {
    const double* w = s->Wr + a * m3;
    double sum = ur[a];
    for (int b = 0; b < m3; b++) sum += w[b] * x[b];
    up[a] = sum;
  }
}

/* Every distinct outcome of one spatial step: 19^nc patterns, solved directly (no precomputed
 * maps: 361 patterns for 2 contacts, 130321 for 4). */
static int spatial_has_budget(const int* mode, int nc) {
  for (int i = 0; i < nc; i++) if (mode[i] != S_SEP && (mode[i] - 1) / S_PER_NORMAL == 0) return 1;
  return 0;
}

static int spatial_enumerate(svi_impact* s, const double* u, const double* lmax, int ap) {
  int nc = s->nc, nb = s->nb, m3 = 3 * nc, count = 0;
  int mode[MODE_MAX_NC] = {0};
  double ur[KMAX], x[KMAX], up[KMAX], du[KMAX];
  for (int a = 0; a < m3; a++) ur[a] = u[spatial_row(nc, a)];
  double dtol = 1e-7 * (s->vscale > 1e-12 ? s->vscale : 1e-12);
  int total = 1;
  for (int i = 0; i < nc; i++) total *= S_MODES;
  for (int p = 0; p < total; p++) {
    if (p > 0)
      for (int i = 0; i < nc && ++mode[i] == S_MODES; i++) mode[i] = 0;
    if (ap && spatial_has_budget(mode, nc)) continue;
    if (!spatial_pattern(s, mode, ur, lmax, x, up) || !spatial_feasible(s, mode, lmax, x, up)) continue;
    for (int a = 0; a < m3; a++) du[a] = up[a] - ur[a];
    int dup = 0;
    for (int c = 0; c < count && !dup; c++) {
      const double* o = s->seen + c * m3;
      int same = 1;
      for (int a = 0; a < m3 && same; a++) same = fabs(o[a] - du[a]) <= dtol;
      dup = same;
    }
    if (dup || count >= SVI_ENUM_MAX_SOLS) continue;
    memcpy(s->seen + count * m3, du, sizeof(double) * m3);
    double* lam = s->sols + count * nb;
    memset(lam, 0, sizeof(double) * nb);
    for (int i = 0; i < nc; i++) {
      double l1 = x[3 * i + 1], l2 = x[3 * i + 2];
      lam[i] = x[3 * i] > 0 ? x[3 * i] : 0;
      lam[nc + 4 * i] = l1 > 0 ? l1 : 0;
      lam[nc + 4 * i + 1] = l1 < 0 ? -l1 : 0;
      lam[nc + 4 * i + 2] = l2 > 0 ? l2 : 0;
      lam[nc + 4 * i + 3] = l2 < 0 ? -l2 : 0;
    }
    count++;
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
  precompute_patterns(s);
}

int svi_modes_supported(const svi_impact* s) { return s->nc <= MODE_MAX_NC; }

/* Patterns per step: 7^nc planar (precomputed maps up to 3 contacts), 19^nc spatial (solved at
 * the step).  The ENUMERATE rule uses the enumeration up to 7^4 = 2401 planar and 19^3 = 6859
 * spatial patterns; AUTO only where a step costs about as much as a few Lemke solves. */
int svi_modes_for_sampling(const svi_impact* s) { return s->nt == 1 ? s->nc <= 4 : s->nc <= 3; }
int svi_modes_cheap(const svi_impact* s) { return s->nt == 1 ? s->nc <= 3 : s->nc <= 2; }

/* All distinct step outcomes; writes up to SVI_ENUM_MAX_SOLS reduced impulses to s->sols as
 * lambda_bar (nb values each) and returns their number. */
/* A pattern of (31) has no budget: only SEP and INT modes. */
static int planar_has_budget(const int* mode, int nc) {
  for (int i = 0; i < nc; i++) if (mode[i] >= BUD_STICK && mode[i] <= BUD_SLIP_M) return 1;
  return 0;
}

static int planar_enumerate(svi_impact* s, const double* u, const double* lmax, int ap) {
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
    if (ap && planar_has_budget(mode, nc)) continue;
    if (!ap && s->n_patterns == total && s->pattern_ok[p]) {
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

int svi_modes_enumerate(svi_impact* s, const double* u, const double* lmax) {
  return s->nt == 2 ? spatial_enumerate(s, u, lmax, 0) : planar_enumerate(s, u, lmax, 0);
}

/* The solutions of (31) are those of (75) with an unbounded budget, i.e. the patterns of SEP and
 * INT modes only (0 <= l_n _|_ J_n v+ >= 0, eq. 31c). */
int svi_modes_enumerate_ap(svi_impact* s, const double* u) {
  double inf[MODE_MAX_NC];
  for (int i = 0; i < MODE_MAX_NC; i++) inf[i] = INFINITY;
  return s->nt == 2 ? spatial_enumerate(s, u, inf, 1) : planar_enumerate(s, u, inf, 1);
}
