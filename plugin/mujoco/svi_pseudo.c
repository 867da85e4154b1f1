/* svi_pseudo.c -- Johnson, Burden & Koditschek's pseudo-impulse (paper 003, Sec. 2.7): after the
 * impact law, contacts pressed by the continuous forces are kept instead of lifted.
 *
 * Physical signs (p >= 0 pushes, J_n v > 0 separates).  For a row set R:
 *   W_RR = J_R M^-1 J_R^T,   plastic impulse  p_R(v) = -W_RR^+ J_R v          (eq. 25-26)
 *   pseudo-impulse   pt_R = -dt W_RR^+ J_R a_s,   a_s = M^-1 tau = qacc_smooth  (eq. 56; no Jdot v)
 * Keep rule (eq. 58, PIV), applied as a second stage at the law's v+ (docs/theory.md section 7):
 *   J0 = contacts the law leaves closed (J_n v+ <= eps), with their tangential rows if they stick;
 *   candidates J = J0 u A, A within the contacts that were resting or approaching before the impact;
 *   a member k needs U_k(P) >= 0 or U_k(P + pt) >= 0, where P is its total impulse (the law's plus
 *   the projection's) and U_k is admissibility (eq. 49): P_n >= 0 and, for a contact that keeps
 *   its tangential rows (sticking), the Coulomb cone |P_t|_1 <= mu P_n (the law's friction pyramid);
 *   a non-member must separate both after the plastic projection and after the continuous forces
 *   act for dt.
 * Friction-cone demotion: a sticking member whose impulse leaves the cone in both tests is demoted
 * to sliding -- its tangential rows leave the mode, the contact stays (A12: sliding contacts resist
 * no tangential motion) -- and the mode is evaluated again, until no member is demoted.
 * The pseudo-impulse only selects the mode: the velocity is the M-orthogonal projection of v+ onto
 * the kept rows (eq. 80), so energy never increases and kept contacts end at J_n v = 0.
 * No contact limit: the workspace is sized for max_contacts at mj_makeData.  Up to 10 eligible
 * contacts every subset is tried (the largest valid one wins); beyond, a greedy search adds one
 * contact at a time (documented in docs/theory.md; counted in the event record as nkept).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "svi/svi_mujoco.h"
#include "svi_internal.h"
#include "svi_mujoco_internal.h"

#define PSEUDO_MAX_ENUM 10

struct svi_pseudo_work {
  int rows_max, nc_max, nv_max;
  double *A, *b, *c, *pt, *ca, *asr, *dp, *best_dp, *plaw, *vf;
  int *rows, *best_rows, *rows0, *in_j0, *eligible, *inA, *elig, *stick;
};

static void pseudo_free(svi_pseudo_work* w) {
  if (!w) return;
  free(w->A); free(w->b); free(w->c); free(w->pt); free(w->ca); free(w->asr); free(w->dp);
  free(w->best_dp); free(w->plaw); free(w->vf); free(w->rows); free(w->best_rows); free(w->rows0);
  free(w->in_j0); free(w->eligible); free(w->inA); free(w->elig); free(w->stick);
  free(w);
}

svi_pseudo_work* svi_pseudo_create(int nv, int nc_max) {
  svi_pseudo_work* w = calloc(1, sizeof(*w));
  if (!w) return NULL;
  int r = 3 * nc_max;   /* a normal and at most two tangent rows per contact */
  w->rows_max = r;
  w->nc_max = nc_max;
  w->nv_max = nv;
  size_t rr = (size_t)r;
  w->A = malloc(sizeof(double) * rr * rr);
  double** d[] = {&w->b, &w->c, &w->pt, &w->ca, &w->asr, &w->dp, &w->best_dp};
  for (size_t i = 0; i < sizeof(d) / sizeof(d[0]); i++) *d[i] = malloc(sizeof(double) * rr);
  w->plaw = malloc(sizeof(double) * (size_t)nc_max);
  w->vf = malloc(sizeof(double) * (size_t)(nv > 0 ? nv : 1));
  int** n[] = {&w->rows, &w->best_rows, &w->rows0};
  for (size_t i = 0; i < sizeof(n) / sizeof(n[0]); i++) *n[i] = malloc(sizeof(int) * rr);
  int** k[] = {&w->in_j0, &w->eligible, &w->inA, &w->elig, &w->stick};
  for (size_t i = 0; i < sizeof(k) / sizeof(k[0]); i++) *k[i] = calloc((size_t)nc_max, sizeof(int));
  if (!w->A || !w->b || !w->c || !w->pt || !w->ca || !w->asr || !w->dp || !w->best_dp || !w->plaw ||
      !w->vf || !w->rows || !w->best_rows || !w->rows0 || !w->in_j0 || !w->eligible || !w->inA ||
      !w->elig || !w->stick) {
    pseudo_free(w);
    return NULL;
  }
  return w;
}

void svi_pseudo_destroy(svi_pseudo_work* w) { pseudo_free(w); }

/* x = (W_RR + eps I)^-1 b by Cholesky; W_RR is PSD and may be singular (redundant contacts):
 * the tiny regularisation gives the minimum-norm impulse in the limit. */
static int solve_rr(svi_pseudo_work* w, const svi_impact* s, const int* rows, int n, const double* b,
                    double* x) {
  double* A = w->A, dmax = 0;
  for (int i = 0; i < n; i++) {
    for (int j = 0; j < n; j++) A[i * n + j] = svi_impact_w(s, rows[i], rows[j]);
    dmax = fmax(dmax, A[i * n + i]);
  }
  for (int i = 0; i < n; i++) A[i * n + i] += 1e-12 * dmax + 1e-300;
  if (!svi_cholesky(n, A)) return 0;
  memcpy(x, b, sizeof(double) * (size_t)n);
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
  const double *vplus, *as, *lam;   /* lam: the law's impulse lambda_bar (normal, then directions) */
  double dt, eps_v, eps_p;
  int nc;
} keep_problem;

/* the mode's rows: J0's normals, the tangential rows of its sticking contacts, A's normals */
static int mode_rows(const keep_problem* kp, svi_pseudo_work* w, const int* inA) {
  const svi_impact* s = kp->s;
  int n = 0;
  for (int k = 0; k < kp->nc; k++) {
    if (!w->in_j0[k] && !inA[k]) continue;
    w->rows[n++] = k;
    if (w->in_j0[k] && w->stick[k])
      for (int t = 0; t < s->nt; t++) w->rows[n++] = kp->nc + k * s->nd + 2 * t;
  }
  return n;
}

/* Contact k's total impulse in the mode: the law's plus the projection's correction x (the
 * correction on row r is x[i] for rows[i] == r); tangential as the net impulse along t_1, t_2. */
static void contact_impulse(const keep_problem* kp, const int* rows, int n, const double* x, int k,
                            double* pn, double* pt1, double* pt2) {
  const svi_impact* s = kp->s;
  int nd = s->nd;
  *pn = kp->lam[k];
  double t[2] = {0, 0};
  for (int q = 0; q < s->nt; q++)
    t[q] = kp->lam[kp->nc + k * nd + 2 * q] - kp->lam[kp->nc + k * nd + 2 * q + 1];
  for (int i = 0; i < n; i++) {
    int r = rows[i];
    if (r == k) *pn += x[i];
    for (int q = 0; q < s->nt; q++)
      if (r == kp->nc + k * nd + 2 * q) t[q] += x[i];   /* the +t row's correction is a net impulse */
  }
  *pt1 = t[0];
  *pt2 = t[1];
}

/* U_k >= 0 (eq. 49): the normal impulse pushes and, for a sticking contact, the impulse is inside
 * the law's friction pyramid |P_t1| + |P_t2| <= mu P_n (up to eps_p) */
static int admissible(const keep_problem* kp, double pn, double pt1, double pt2, double mu, int stick,
                      int* cone_ok) {
  *cone_ok = !stick || fabs(pt1) + fabs(pt2) <= mu * pn + kp->eps_p;
  return pn >= -kp->eps_p && *cone_ok;
}

/* Evaluate candidate J = J0 u A (A as a contact mask) with the current sticking flags; on success
 * the rows are in w->rows (n) and the projection's impulse in w->dp.  *demote: a sticking member
 * whose impulse leaves the cone in both tests (-1 if none). */
static int candidate_ok(const keep_problem* kp, svi_pseudo_work* w, const int* inA, int* nrow,
                        int* demote, int* worst) {
  const svi_impact* s = kp->s;
  *demote = -1;
  *worst = -1;
  double worst_p = INFINITY;
  int n = mode_rows(kp, w, inA);
  *nrow = n;
  if (n == 0) return 0;
  for (int i = 0; i < n; i++) {
    w->b[i] = -row_dot(s, w->rows[i], kp->vplus);
    w->c[i] = -kp->dt * row_dot(s, w->rows[i], kp->as);
  }
  if (!solve_rr(w, s, w->rows, n, w->b, w->dp) || !solve_rr(w, s, w->rows, n, w->c, w->pt)) return 0;
  /* (a) members: the impulse, plastic or plastic + pseudo, must be admissible.  On failure *worst
   * names the member of A with the least admissible normal impulse (J0 is the law's and stays) */
  int failed = 0;
  for (int k = 0; k < kp->nc; k++) {
    if (!w->in_j0[k] && !inA[k]) continue;
    double pn, t1, t2, qn, q1, q2;
    contact_impulse(kp, w->rows, n, w->dp, k, &pn, &t1, &t2);
    if (!w->in_j0[k]) pn -= kp->lam[k];   /* A: the law left it open, its impulse is the projection's */
    for (int i = 0; i < n; i++) w->ca[i] = w->dp[i] + w->pt[i];
    contact_impulse(kp, w->rows, n, w->ca, k, &qn, &q1, &q2);
    if (!w->in_j0[k]) qn -= kp->lam[k];
    int stick = w->in_j0[k] && w->stick[k], cone1, cone2;
    int ok = admissible(kp, pn, t1, t2, s->mu[k], stick, &cone1) ||
             admissible(kp, qn, q1, q2, s->mu[k], stick, &cone2);
    /* the normal test passes in one of the two but the cone fails in both: demote, not drop */
    if (!ok && stick && (pn >= -kp->eps_p || qn >= -kp->eps_p) && !cone1 && !cone2) { *demote = k; return 0; }
    failed |= !ok;
    if (inA[k] && fmax(pn, qn) < worst_p) { worst_p = fmax(pn, qn); *worst = k; }
  }
  if (failed) return 0;
  *worst = -1;
  /* (b) eligible non-members must separate with and without the continuous forces */
  for (int i = 0; i < n; i++) w->asr[i] = row_dot(s, w->rows[i], kp->as);
  if (!solve_rr(w, s, w->rows, n, w->asr, w->ca)) return 0;   /* W_RR^+ J_R a_s */
  for (int k = 0; k < kp->nc; k++) {
    if (!w->eligible[k] || inA[k]) continue;
    double u0 = row_dot(s, k, kp->vplus), ua = row_dot(s, k, kp->as);
    for (int i = 0; i < n; i++) {
      double wkr = svi_impact_w(s, k, w->rows[i]);
      u0 += wkr * w->dp[i];
      ua -= wkr * w->ca[i];
    }
    if (!(u0 > kp->eps_v && u0 + kp->dt * ua > kp->eps_v)) return 0;
  }
  return 1;
}

/* candidate_ok with friction-cone demotion: demote and retry until valid or nothing to demote;
 * *worst: the least admissible member of A when that is why it failed */
static int candidate_demote_worst(const keep_problem* kp, svi_pseudo_work* w, const int* inA,
                                  int* nrow, int* demoted, int* worst) {
  for (;;) {
    int d = -1;
    if (candidate_ok(kp, w, inA, nrow, &d, worst)) return 1;
    if (d < 0) return 0;
    w->stick[d] = 0;
    (*demoted)++;
  }
}

static int candidate_demote(const keep_problem* kp, svi_pseudo_work* w, const int* inA, int* nrow,
                            int* demoted) {
  int worst;
  return candidate_demote_worst(kp, w, inA, nrow, demoted, &worst);
}

/* Returns the number of contacts kept by the pseudo-impulse (beyond the law's); vplus is updated
 * in place (projection onto the kept rows); kept[k] = 1 for those contacts.  lam: the law's
 * impulse lambda_bar. */
int svi_pseudo_impulse(svi_instance* in, const svi_impact* s, double* lam, const double* vminus,
                       const double* as, double* vplus, int* kept) {
  svi_pseudo_work* w = in->pseudo;
  int nc = s->nc, nb = s->nb, nd = s->nd;
  double dt = in->cfg.pseudo_impulse;
  for (int k = 0; k < nc; k++) kept[k] = 0;
  if (dt <= 0 || !w || nc > w->nc_max) return 0;

  double vref = 0, wmax = 0;
  for (int k = 0; k < nc; k++) {
    vref = fmax(vref, fabs(row_dot(s, k, vminus)));
    wmax = fmax(wmax, svi_impact_w(s, k, k));
  }
  double eps_v = fmax(1e-9, 1e-6 * vref), eps_p = eps_v / fmax(wmax, 1e-300);

  int nelig = 0;
  for (int k = 0; k < nc; k++) {
    double vn = row_dot(s, k, vplus);
    w->in_j0[k] = vn <= eps_v;
    w->inA[k] = 0;
    w->eligible[k] = !w->in_j0[k] && row_dot(s, k, vminus) <= in->cfg.impact_speed;
    if (w->eligible[k]) w->elig[nelig++] = k;
    /* a contact the law leaves closed and sticking keeps its tangential rows */
    int stick = w->in_j0[k] && s->mu[k] > 0;
    for (int t = 0; t < s->nt && stick; t++)
      if (fabs(row_dot(s, nc + k * nd + 2 * t, vplus)) > eps_v) stick = 0;
    w->stick[k] = stick;
  }
  if (nelig == 0) return 0;

  keep_problem kp = {s, vplus, as, lam, dt, eps_v, eps_p, nc};
  int best_size = -1, nvalid = 0, best_n = 0, n = 0, demoted = 0;
  if (nelig <= PSEUDO_MAX_ENUM) {
    /* every subset of the eligible contacts: the largest valid one wins, ties by the lowest mask */
    for (unsigned mask = 0; mask < (1u << nelig); mask++) {
      int size = 0;
      for (int e = 0; e < nelig; e++) { w->inA[w->elig[e]] = (mask >> e) & 1; size += w->inA[w->elig[e]]; }
      if (!candidate_demote(&kp, w, w->inA, &n, &demoted)) continue;
      nvalid++;
      if (size > best_size) {
        best_size = size;
        best_n = n;
        memcpy(w->best_rows, w->rows, sizeof(int) * (size_t)n);
        memcpy(w->best_dp, w->dp, sizeof(double) * (size_t)n);
        for (int k = 0; k < nc; k++) kept[k] = w->inA[k];
      }
    }
  } else {
    /* more than 10 eligible contacts (redundant rows of them, typically): start from keeping them
     * all, the largest candidate, and drop the member whose impulse is least admissible until the
     * mode passes or nothing is left to drop -- adding contacts one at a time would fail on
     * redundant rows, whose members only pass together */
    for (int e = 0; e < nelig; e++) w->inA[w->elig[e]] = 1;
    for (int left = nelig; left > 0; left--) {
      int worst = -1;
      if (candidate_demote_worst(&kp, w, w->inA, &n, &demoted, &worst)) {
        best_size = left;
        best_n = n;
        memcpy(w->best_rows, w->rows, sizeof(int) * (size_t)n);
        memcpy(w->best_dp, w->dp, sizeof(double) * (size_t)n);
        nvalid = 1;
        break;
      }
      if (worst < 0) break;   /* an eligible non-member would not separate: no smaller mode helps */
      w->inA[worst] = 0;
    }
    for (int k = 0; k < nc; k++) kept[k] = best_size > 0 && w->inA[k];
  }
  in->pseudo_ambiguous += nvalid > 1;
  in->pseudo_demoted += demoted;
  int nkept = 0;
  for (int k = 0; k < nc; k++) nkept += kept[k];
  if (best_size <= 0 || nkept == 0) { for (int k = 0; k < nc; k++) kept[k] = 0; return 0; }

  /* v_final = v+ + M^-1 J_R^T dp  (G holds M^-1 Jbar^T column-wise) */
  double* vf = w->vf;
  memcpy(vf, vplus, sizeof(double) * (size_t)s->nv);
  for (int i = 0; i < best_n; i++)
    for (int j = 0; j < s->nv; j++) vf[j] += s->G[j * nb + w->best_rows[i]] * w->best_dp[i];
  for (int j = 0; j < s->nv; j++) if (!isfinite(vf[j])) return 0;
  memcpy(vplus, vf, sizeof(double) * (size_t)s->nv);
  /* the event's impulse: the projection's on each kept row (a +t row's correction is net along t) */
  for (int i = 0; i < best_n; i++) lam[w->best_rows[i]] += w->best_dp[i];
  return nkept;
}
