/* svi_pseudo.c -- Johnson, Burden & Koditschek's pseudo-impulse (paper 003, Sec. 2.7): after the
 * impact law, contacts pressed by the continuous forces are kept instead of lifted.
 *
 * Physical signs (p >= 0 pushes, J_n v > 0 separates).  For a row set R:
 *   W_RR = J_R M^-1 J_R^T,   plastic impulse  p_R(v) = -W_RR^+ J_R v          (eq. 25-26)
 *   pseudo-impulse   pt_R = -dt W_RR^+ J_R a_s,   a_s = M^-1 tau = qacc_smooth  (eq. 56; no Jdot v)
 * Keep rule (eq. 58, PIV), applied as a second stage at the law's v+ (spec: docs/theory.md):
 *   J0 = contacts the law leaves closed (J_n v+ <= eps); candidates J = J0 u A, A within the contacts
 *   that were resting or approaching before the impact; a member k needs P_k >= 0 or
 *   P_k + pt_k >= 0 (P_k its total normal impulse); a non-member must separate both after the
 *   plastic projection and after the continuous forces act for dt.
 * The pseudo-impulse only selects the mode: the velocity is the M-orthogonal projection of v+
 * onto the kept rows (eq. 80), so energy never increases and kept contacts end at J_n v = 0.
 */
#include <math.h>
#include <string.h>

#include "svi/svi_mujoco.h"
#include "svi_internal.h"
#include "svi_mujoco_internal.h"

#define PSEUDO_MAX_ROWS 64
#define PSEUDO_MAX_ENUM 10

typedef struct {
  int rows[PSEUDO_MAX_ROWS];   /* Jbar rows of the candidate */
  int nrow;
} rowset;

/* x = (W_RR + eps I)^-1 b by Cholesky; W_RR is PSD and may be singular (redundant contacts):
 * the tiny regularisation gives the minimum-norm impulse in the limit. */
static int solve_rr(const svi_impact* s, const rowset* R, const double* b, double* x) {
  int n = R->nrow, nb = s->nb;
  double A[PSEUDO_MAX_ROWS * PSEUDO_MAX_ROWS], dmax = 0;
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < n; j++) A[i * n + j] = s->W[R->rows[i] * nb + R->rows[j]];
    dmax = fmax(dmax, A[i * n + i]);
  }
  for (int i = 0; i < n; i++) A[i * n + i] += 1e-12 * dmax + 1e-300;
  if (!svi_cholesky(n, A)) return 0;
  memcpy(x, b, sizeof(double) * n);
  svi_cholesky_solve(n, A, x);
  return 1;
}

/* J_r x for a Jbar row r and a generalised vector x */
static double row_dot(const svi_impact* s, int r, const double* x) {
  double t = 0;
  for (int j = 0; j < s->nv; j++) t += s->Jbar[r * s->nv + j] * x[j];
  return t;
}

typedef struct {
  const svi_impact* s;
  const double *vplus, *vminus, *as, *plaw;  /* plaw: the law's normal impulse per contact */
  double dt, eps_v, eps_p;
  int nc;
  const int* in_j0;
} keep_problem;

/* Evaluate candidate J = J0 u A (A as a contact mask); on success write the correction dp. */
static int candidate_ok(const keep_problem* kp, const rowset* R0, const int* inA, const int* eligible,
                        rowset* R, double* dp) {
  const svi_impact* s = kp->s;
  *R = *R0;
  for (int k = 0; k < kp->nc; k++)
    if (inA[k]) {
      if (R->nrow == PSEUDO_MAX_ROWS) return 0;
      R->rows[R->nrow++] = k;   /* normal row of contact k */
    }
  int n = R->nrow;
  double b[PSEUDO_MAX_ROWS], c[PSEUDO_MAX_ROWS], pt[PSEUDO_MAX_ROWS], ca[PSEUDO_MAX_ROWS];
  for (int i = 0; i < n; i++) {
    b[i] = -row_dot(s, R->rows[i], kp->vplus);
    c[i] = -kp->dt * row_dot(s, R->rows[i], kp->as);
  }
  if (!solve_rr(s, R, b, dp) || !solve_rr(s, R, c, pt)) return 0;
  /* (a) members: the normal impulse, plastic or plastic + pseudo, must push */
  for (int i = 0; i < n; i++) {
    int r = R->rows[i];
    if (r >= kp->nc) continue;   /* tangential row */
    double P = (kp->in_j0[r] ? kp->plaw[r] : 0) + dp[i];
    if (!(P >= -kp->eps_p || P + pt[i] >= -kp->eps_p)) return 0;
  }
  /* (b) eligible non-members must separate with and without the continuous forces */
  double as_r[PSEUDO_MAX_ROWS];
  for (int i = 0; i < n; i++) as_r[i] = row_dot(s, R->rows[i], kp->as);
  if (!solve_rr(s, R, as_r, ca)) return 0;   /* W_RR^+ J_R a_s */
  for (int k = 0; k < kp->nc; k++) {
    if (!eligible[k] || inA[k]) continue;
    double u0 = row_dot(s, k, kp->vplus), ua = row_dot(s, k, kp->as);
    for (int i = 0; i < n; i++) {
      double wkr = s->W[k * s->nb + R->rows[i]];
      u0 += wkr * dp[i];
      ua -= wkr * ca[i];
    }
    if (!(u0 > kp->eps_v && u0 + kp->dt * ua > kp->eps_v)) return 0;
  }
  return 1;
}

/* Returns the number of contacts kept by the pseudo-impulse (beyond the law's); vplus is updated
 * in place (projection onto the kept rows); kept[k] = 1 for those contacts. */
int svi_pseudo_impulse(svi_instance* in, const double* vminus, const double* as, double* vplus,
                       int* kept) {
  const svi_impact* s = in->imp;
  int nc = s->nc, nb = s->nb, nd = s->nd;
  double dt = in->cfg.pseudo_impulse;
  for (int k = 0; k < nc; k++) kept[k] = 0;
  if (dt <= 0 || nc > PSEUDO_MAX_ROWS / 3) return 0;

  double vref = 0, wmax = 0;
  for (int k = 0; k < nc; k++) {
    vref = fmax(vref, fabs(row_dot(s, k, vminus)));
    wmax = fmax(wmax, s->W[k * nb + k]);
  }
  double eps_v = fmax(1e-9, 1e-6 * vref), eps_p = eps_v / fmax(wmax, 1e-300);

  int in_j0[PSEUDO_MAX_ROWS / 3], eligible[PSEUDO_MAX_ROWS / 3], inA[PSEUDO_MAX_ROWS / 3];
  double plaw[PSEUDO_MAX_ROWS / 3];
  rowset R0 = {{0}, 0};
  int nelig = 0, elig_idx[PSEUDO_MAX_ROWS / 3];
  for (int k = 0; k < nc; k++) {
    double vn = row_dot(s, k, vplus);
    in_j0[k] = vn <= eps_v;
    plaw[k] = in->lam[k];
    inA[k] = 0;
    eligible[k] = !in_j0[k] && row_dot(s, k, vminus) <= in->cfg.impact_speed;
    if (eligible[k]) elig_idx[nelig++] = k;
    if (in_j0[k]) {
      R0.rows[R0.nrow++] = k;
      /* a sticking contact keeps its tangential rows */
      int stick = s->mu[k] > 0;
      for (int t = 0; t < s->nt && stick; t++)
        if (fabs(row_dot(s, nc + k * nd + 2 * t, vplus)) > eps_v) stick = 0;
      for (int t = 0; t < s->nt && stick; t++) R0.rows[R0.nrow++] = nc + k * nd + 2 * t;
    }
  }
  if (nelig == 0) return 0;

  keep_problem kp = {s, vplus, vminus, as, plaw, dt, eps_v, eps_p, nc, in_j0};
  rowset R, best_R = R0;
  double dp[PSEUDO_MAX_ROWS], best_dp[PSEUDO_MAX_ROWS];
  int best_size = -1, nvalid = 0;
  if (nelig <= PSEUDO_MAX_ENUM) {
    /* every subset of the eligible contacts: the largest valid one wins, ties by the lowest mask */
    for (unsigned mask = 0; mask < (1u << nelig); mask++) {
      int size = 0;
      for (int e = 0; e < nelig; e++) { inA[elig_idx[e]] = (mask >> e) & 1; size += inA[elig_idx[e]]; }
      if (!candidate_ok(&kp, &R0, inA, eligible, &R, dp)) continue;
      nvalid++;
      if (size > best_size) {
        best_size = size;
        best_R = R;
        memcpy(best_dp, dp, sizeof(double) * R.nrow);
        for (int k = 0; k < nc; k++) kept[k] = inA[k];
      }
    }
  } else {
    /* greedy: add the eligible contact whose addition stays valid, until none does */
    for (int it = 0; it < 2 * nelig; it++) {
      int added = 0;
      for (int e = 0; e < nelig && !added; e++) {
        int k = elig_idx[e];
        if (inA[k]) continue;
        inA[k] = 1;
        if (candidate_ok(&kp, &R0, inA, eligible, &R, dp)) {
          added = 1;
          best_size = 0;
          for (int j = 0; j < nc; j++) best_size += inA[j];
          best_R = R;
          memcpy(best_dp, dp, sizeof(double) * R.nrow);
        } else {
          inA[k] = 0;
        }
      }
      if (!added) break;
    }
    for (int k = 0; k < nc; k++) kept[k] = inA[k];
  }
  in->pseudo_ambiguous += nvalid > 1;
  int nkept = 0;
  for (int k = 0; k < nc; k++) nkept += kept[k];
  if (best_size <= 0 || nkept == 0) { for (int k = 0; k < nc; k++) kept[k] = 0; return 0; }

  /* v_final = v+ + M^-1 J_R^T dp  (G holds M^-1 Jbar^T column-wise) */
  double vf[1024];
  if (s->nv > 1024) return 0;
  memcpy(vf, vplus, sizeof(double) * s->nv);
  for (int i = 0; i < best_R.nrow; i++)
    for (int j = 0; j < s->nv; j++) vf[j] += s->G[j * nb + best_R.rows[i]] * best_dp[i];
  for (int j = 0; j < s->nv; j++) if (!isfinite(vf[j])) return 0;
  memcpy(vplus, vf, sizeof(double) * s->nv);
  return nkept;
}
