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
static int solve_mode(int k, double* K, double* r, double* y, double tol) {
  double A[2 * MODE_MAX_NC][2 * MODE_MAX_NC], b[2 * MODE_MAX_NC], kn = 0;
  for (int i = 0; i < k * k; i++) kn = fmax(kn, fabs(K[i]));
  for (int i = 0; i < k; i++) { b[i] = r[i]; for (int j = 0; j < k; j++) A[i][j] = K[i * k + j]; }
  int singular = 0;
  for (int c = 0; c < k && !singular; c++) {
    int p = c;
    for (int i = c + 1; i < k; i++) if (fabs(A[i][c]) > fabs(A[p][c])) p = i;
    if (fabs(A[p][c]) <= 1e-10 * fmax(kn, 1e-300)) { singular = 1; break; }
    for (int j = 0; j < k; j++) { double t = A[c][j]; A[c][j] = A[p][j]; A[p][j] = t; }
    double t = b[c]; b[c] = b[p]; b[p] = t;
    for (int i = c + 1; i < k; i++) {
      double f = A[i][c] / A[c][c];
      for (int j = c; j < k; j++) A[i][j] -= f * A[c][j];
      b[i] -= f * b[c];
    }
  }
  if (!singular) {
    for (int c = k - 1; c >= 0; c--) {
      double sum = b[c];
      for (int j = c + 1; j < k; j++) sum -= A[c][j] * y[j];
      y[c] = sum / A[c][c];
    }
    return 1;
  }
  /* (K^T K + delta I) y = K^T r: the minimum-norm solution in the limit delta -> 0 */
  double N[2 * MODE_MAX_NC][2 * MODE_MAX_NC], c[2 * MODE_MAX_NC];
  for (int i = 0; i < k; i++) {
    c[i] = 0;
    for (int m = 0; m < k; m++) c[i] += K[m * k + i] * r[m];
    for (int j = 0; j < k; j++) {
      double sum = 0;
      for (int m = 0; m < k; m++) sum += K[m * k + i] * K[m * k + j];
      N[i][j] = sum;
    }
    N[i][i] += 1e-13 * kn * kn + 1e-300;
  }
  for (int j = 0; j < k; j++) {                       /* Cholesky of N in place */
    double d = N[j][j];
    for (int m = 0; m < j; m++) d -= N[j][m] * N[j][m];
    if (!(d > 0)) return 0;
    N[j][j] = sqrt(d);
    for (int i = j + 1; i < k; i++) {
      double sum = N[i][j];
      for (int m = 0; m < j; m++) sum -= N[i][m] * N[j][m];
      N[i][j] = sum / N[j][j];
    }
  }
  for (int i = 0; i < k; i++) {
    double sum = c[i];
    for (int m = 0; m < i; m++) sum -= N[i][m] * y[m];
    y[i] = sum / N[i][i];
  }
  for (int i = k - 1; i >= 0; i--) {
    double sum = y[i];
    for (int m = i + 1; m < k; m++) sum -= N[m][i] * y[m];
    y[i] = sum / N[i][i];
  }
  for (int i = 0; i < k; i++) {
    double e = -r[i];
    for (int j = 0; j < k; j++) e += K[i * k + j] * y[j];
    if (fabs(e) > tol) return 0;
  }
  return 1;
}

/* Reduced Delassus entry between contact-space rows a and b */
static double wr(const svi_impact* s, int a, int b) { return s->W[a * s->nb + b]; }

/* Outcome of one mode pattern: fills ln, lt (nc each) and returns 1 if it is an LCP solution. */
static int try_pattern(const svi_impact* s, const int* mode, const double* u, const double* lmax,
                       double* ln, double* lt) {
  int nc = s->nc, k = 0;
  int var_of[2 * MODE_MAX_NC];          /* unknown index -> (contact, 0 = l_n | 1 = l_t) */
  int eq_row[2 * MODE_MAX_NC];          /* equation -> Jbar row forced to zero velocity */
  int neq = 0;
  double vtol = s->sep_tol * 10;
  for (int i = 0; i < nc; i++) {
    switch (mode[i]) {
    case SEP: break;
    case BUD_STICK: var_of[k++] = 2 * i + 1; eq_row[neq++] = row_t(s, i); break;
    case BUD_SLIP_P: case BUD_SLIP_M: break;
    case INT_STICK:
      var_of[k++] = 2 * i; var_of[k++] = 2 * i + 1;
      eq_row[neq++] = row_n(s, i); eq_row[neq++] = row_t(s, i);
      break;
    default: var_of[k++] = 2 * i; eq_row[neq++] = row_n(s, i); break;
    }
  }
  /* fixed parts and the coefficient of each unknown in (l_n, l_t) */
  double fn[MODE_MAX_NC], ft[MODE_MAX_NC];             /* fixed impulse */
  double cn[2 * MODE_MAX_NC][2], ct[2 * MODE_MAX_NC][2]; /* per unknown: (contact) l_n, l_t coeffs */
  int cc[2 * MODE_MAX_NC];
  for (int i = 0; i < nc; i++) {
    double m = s->mu[i];
    fn[i] = ft[i] = 0;
    if (mode[i] >= BUD_STICK && mode[i] <= BUD_SLIP_M) fn[i] = lmax[i];
    if (mode[i] == BUD_SLIP_P) ft[i] = m * lmax[i];
    if (mode[i] == BUD_SLIP_M) ft[i] = -m * lmax[i];
  }
  for (int j = 0; j < k; j++) {
    int i = var_of[j] / 2;
    cc[j] = i;
    cn[j][0] = ct[j][0] = 0;
    if (var_of[j] % 2) { ct[j][0] = 1; continue; }
    cn[j][0] = 1;
    if (mode[i] == INT_SLIP_P) ct[j][0] = s->mu[i];
    if (mode[i] == INT_SLIP_M) ct[j][0] = -s->mu[i];
  }
  double K[4 * MODE_MAX_NC * MODE_MAX_NC], r[2 * MODE_MAX_NC], y[2 * MODE_MAX_NC];
  for (int e = 0; e < neq; e++) {
    int a = eq_row[e];
    double rhs = -u[a];
    for (int i = 0; i < nc; i++) rhs -= wr(s, a, row_n(s, i)) * fn[i] + wr(s, a, row_t(s, i)) * ft[i];
    r[e] = rhs;
    for (int j = 0; j < k; j++)
      K[e * k + j] = wr(s, a, row_n(s, cc[j])) * cn[j][0] + wr(s, a, row_t(s, cc[j])) * ct[j][0];
  }
  if (k > 0 && !solve_mode(k, K, r, y, vtol)) return 0;
  for (int i = 0; i < nc; i++) { ln[i] = fn[i]; lt[i] = ft[i]; }
  for (int j = 0; j < k; j++) { ln[cc[j]] += cn[j][0] * y[j]; lt[cc[j]] += ct[j][0] * y[j]; }

  double itol = 1e-9 * fmax(1e-300, s->ref_impulse > 0 ? s->ref_impulse : 1.0);
  for (int i = 0; i < nc; i++) {
    double un = u[row_n(s, i)], ut = u[row_t(s, i)];
    for (int b = 0; b < nc; b++) {
      un += wr(s, row_n(s, i), row_n(s, b)) * ln[b] + wr(s, row_n(s, i), row_t(s, b)) * lt[b];
      ut += wr(s, row_t(s, i), row_n(s, b)) * ln[b] + wr(s, row_t(s, i), row_t(s, b)) * lt[b];
    }
    int md = mode[i];
    if (md == SEP && un < -vtol) return 0;
    if (md >= BUD_STICK && md <= BUD_SLIP_M && un > vtol) return 0;
    if (md >= INT_STICK && (ln[i] < -itol || ln[i] > lmax[i] + itol)) return 0;
    if ((md == BUD_STICK || md == INT_STICK) && fabs(lt[i]) > s->mu[i] * ln[i] + itol) return 0;
    if ((md == BUD_SLIP_P || md == INT_SLIP_P) && ut > vtol) return 0;
    if ((md == BUD_SLIP_M || md == INT_SLIP_M) && ut < -vtol) return 0;
  }
  return 1;
}

int svi_modes_supported(const svi_impact* s) { return s->nt == 1 && s->nc <= MODE_MAX_NC; }

/* All distinct step outcomes; writes up to SVI_ENUM_MAX_SOLS reduced impulses to s->sols as
 * lambda_bar (nb values each) and returns their number. */
int svi_modes_enumerate(svi_impact* s, const double* u, const double* lmax) {
  int nc = s->nc, nb = s->nb, count = 0;
  int mode[MODE_MAX_NC] = {0};
  double ln[MODE_MAX_NC], lt[MODE_MAX_NC], du[2 * MODE_MAX_NC];
  double* seen = s->seen;               /* reduced velocity changes of kept outcomes */
  int total = 1;
  for (int i = 0; i < nc; i++) total *= NMODES;
  for (int p = 0; p < total; p++) {
    for (int i = 0, x = p; i < nc; i++, x /= NMODES) mode[i] = x % NMODES;
    if (!try_pattern(s, mode, u, lmax, ln, lt)) continue;
    double scale = 0;
    for (int i = 0; i < nc; i++) {
      double dn = 0, dt = 0;
      for (int b = 0; b < nc; b++) {
        dn += wr(s, row_n(s, i), row_n(s, b)) * ln[b] + wr(s, row_n(s, i), row_t(s, b)) * lt[b];
        dt += wr(s, row_t(s, i), row_n(s, b)) * ln[b] + wr(s, row_t(s, i), row_t(s, b)) * lt[b];
      }
      du[2 * i] = dn;
      du[2 * i + 1] = dt;
      scale = fmax(scale, fmax(fabs(dn), fabs(dt)));
    }
    int dup = 0;
    for (int c = 0; c < count && !dup; c++) {
      double d = 0;
      for (int j = 0; j < 2 * nc; j++) d = fmax(d, fabs(seen[c * 2 * nc + j] - du[j]));
      if (d <= 1e-7 * fmax(s->vscale, 1e-12)) dup = 1;
    }
    if (dup || count >= SVI_ENUM_MAX_SOLS) continue;
    memcpy(seen + count * 2 * nc, du, sizeof(double) * 2 * nc);
    double* lam = s->sols + count * nb;
    memset(lam, 0, sizeof(double) * nb);
    for (int i = 0; i < nc; i++) {
      lam[i] = ln[i];
      lam[nc + 2 * i] = lt[i] > 0 ? lt[i] : 0;
      lam[nc + 2 * i + 1] = lt[i] < 0 ? -lt[i] : 0;
    }
    count++;
  }
  return count;
}
