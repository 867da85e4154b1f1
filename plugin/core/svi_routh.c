/* svi_routh.c -- the Routh step LCP (eq. 73-75) and Algorithm 1 (one sample).
 *
 * A step from velocity v with normal-impulse budget l_max (eq. 73-74):
 *     0 <= beta  _|_ l_max - l_n >= 0,
 *     0 <= l_n   _|_ J_n v' + beta >= 0,          v' = v + M^-1 Jbar^T lambda_bar   (75c)
 * plus the friction rows of (32)-(33).  Every still-approaching contact receives its full
 * budget, a contact that would separate takes less.  Algorithm 1 repeats steps with fresh
 * random budgets h p, p in [0,1]^nc, until J_n v >= -tol (non-colliding) or N steps.
 *
 * The velocity is tracked in contact space, u = Jbar v, updated by u += W lambda_bar; the
 * generalised velocity is formed once at the end, v+ = v0 + G Lambda.
 */
#include <math.h>
#include <string.h>

#include "svi_internal.h"

enum { STREAM_BUDGET = 1, STREAM_BRANCH = 2 };

svi_routh_config svi_routh_default_config(void) {
  svi_routh_config c;
  memset(&c, 0, sizeof(c));
  c.step = 1.0;
  c.step_abs = 0;
  c.max_steps = 10;
  c.budget = SVI_BUDGET_UNIFORM;
  c.branch = SVI_BRANCH_AUTO;
  c.seed = 1;
  c.lcp = svi_lcp_default_options();
  return c;
}

/* q of eq. (75a) from the contact-space velocity u and the budget */
static void routh_q(const svi_impact* s, const double* u, const double* lmax, double* q) {
  int nc = s->nc;
  memcpy(q, lmax, sizeof(double) * nc);
  memcpy(q + nc, u, sizeof(double) * s->nb);
  memset(q + nc + s->nb, 0, sizeof(double) * nc);
}

/* Pick uniformly among the distinct outcomes (by Delta v) of all solutions of the step LCP.
 * Returns the LCP status; lam receives the chosen lambda_bar. */
static int step_enumerate(svi_impact* s, const double* q, double r01, double* lam,
                          svi_lcp_info* info) {
  int nr = s->n_routh, nc = s->nc, nb = s->nb, nv = s->nv, count = 0;
  if (svi_modes_supported(s)) {
    count = svi_modes_enumerate(s, q + nc, q);
    if (count > 0) {
      int k = (int)(r01 * count);
      if (k >= count) k = count - 1;
      memcpy(lam, s->sols + k * nb, sizeof(double) * nb);
      /* complete z = [beta; lambda_bar; gamma] and check it against (75) itself */
      double* z = s->z;
      memcpy(z + nc, lam, sizeof(double) * nb);
      double* up = s->vn;                          /* scratch: u' = u + W lambda */
      memcpy(up, q + nc, sizeof(double) * nb);
      svi_matvec_add(nb, nb, s->W, lam, up);
      for (int i = 0; i < nc; i++) {
        z[i] = up[i] < 0 ? -up[i] : 0;
        z[nc + nb + i] = fabs(up[nc + 2 * i]);
      }
      if (info) {
        memset(info, 0, sizeof(*info));
        info->residual = svi_lcp_residual(nr, s->A_routh, q, z);
      }
      return SVI_OK;
    }
  }
  int st = svi_lcp_enumerate(nr, s->A_routh, q, 1e-9, s->sols, SVI_ENUM_MAX_SOLS, &count);
  if (st != SVI_OK) return st;
  if (count > SVI_ENUM_MAX_SOLS) count = SVI_ENUM_MAX_SOLS;
  int distinct = 0, pick_from[SVI_ENUM_MAX_SOLS];
  for (int k = 0; k < count; k++) {
    double* dv = s->dv + distinct * nv;
    svi_matvec(nv, nb, s->G, s->sols + k * nr + nc, dv);
    double scale = 0;
    for (int i = 0; i < nv; i++) scale = fmax(scale, fabs(dv[i]));
    int dup = 0;
    for (int j = 0; j < distinct && !dup; j++) {
      double d = 0;
      for (int i = 0; i < nv; i++) d = fmax(d, fabs(s->dv[j * nv + i] - dv[i]));
      if (d <= 1e-7 * fmax(scale, 1e-12)) dup = 1;
    }
    if (!dup) pick_from[distinct++] = k;
  }
  if (distinct == 0) return SVI_ERR_RESIDUAL;
  int k = pick_from[(int)(r01 * distinct) < distinct ? (int)(r01 * distinct) : distinct - 1];
  memcpy(lam, s->sols + k * nr + nc, sizeof(double) * nb);
  if (info) {
    memset(info, 0, sizeof(*info));
    info->residual = svi_lcp_residual(nr, s->A_routh, q, s->sols + k * nr);
  }
  return SVI_OK;
}

/* Random covering vector and random signed lexicographic perturbation (Fisher-Yates order),
 * all drawn from the counter-based stream of this (sample, step). */
static void random_branch(svi_impact* s, uint64_t seed, uint64_t bidx) {
  int nr = s->n_routh;
  for (int i = 0; i < nr; i++) {
    uint64_t x = svi_rng_u64(seed, STREAM_BRANCH, bidx + i);
    s->d[i] = 0.05 + 0.95 * ((double)(x >> 11) + 0.5) * 0x1.0p-53;
    s->sign[i] = (x & 1) ? 1.0 : -1.0;
    s->order[i] = i;
  }
  for (int i = nr - 1; i > 0; i--) {
    int j = (int)(svi_rng_u64(seed, STREAM_BRANCH + 1, bidx + i) % (uint64_t)(i + 1));
    int t = s->order[i];
    s->order[i] = s->order[j];
    s->order[j] = t;
  }
}

int svi_routh_step(svi_impact* s, const double* v, const double* lmax, const double* d,
                   const svi_lcp_options* opt, double* lambda, double* v_next,
                   svi_lcp_info* info) {
  if (!s || !v || !lmax || !lambda || !v_next) return SVI_ERR_ARG;
  svi_matvec(s->nb, s->nv, s->Jbar, v, s->u);
  routh_q(s, s->u, lmax, s->q);
  int st = svi_lcp_lemke(s->lcp, s->n_routh, s->A_routh, s->q, d, opt, s->z, info);
  memcpy(lambda, s->z + s->nc, sizeof(double) * s->nb);
  memcpy(v_next, v, sizeof(double) * s->nv);
  if (st >= 0) svi_matvec_add(s->nv, s->nb, s->G, lambda, v_next);
  return st;
}

/* Apply the simultaneous law (31) from contact velocity u; adds its impulse to Lam and u. */
static int finish_with_ap(svi_impact* s, svi_sample_info* info) {
  int na = s->n_ap, nb = s->nb;
  memcpy(s->q, s->u, sizeof(double) * nb);
  memset(s->q + nb, 0, sizeof(double) * s->nc);
  svi_lcp_info li;
  int st = svi_lcp_lemke(s->lcp, na, s->A_ap, s->q, NULL, NULL, s->z, &li);
  info->lcps++;
  if (st < 0) return st;
  if (st == SVI_OK_REGULARIZED) info->regularized++;
  info->residual = fmax(info->residual, li.residual);
  for (int i = 0; i < nb; i++) s->Lam[i] += s->z[i];
  svi_matvec_add(nb, nb, s->W, s->z, s->u);
  return SVI_OK;
}

double svi_routh_h(const svi_impact* s, const svi_routh_config* cfg) {
  if (cfg->step_abs > 0) return cfg->step_abs;
  double ref = s->ref_impulse > 0 ? s->ref_impulse : 1.0;
  return (cfg->step > 0 ? cfg->step : 1.0) * ref;
}

/* One run of the step loop.  finish_ap: whether an unterminated run is completed with (31).
 * extra_budget > 0: after the loop, one more step with l_max = extra_budget 1 if still colliding
 * (the final step of Algorithm 2). */
int svi_routh_run(svi_impact* s, const svi_routh_config* cfg, const svi_sobol* sobol,
                  uint64_t k, int finish_ap, double extra_budget, double* v_out,
                  svi_sample_info* info, double* traj, int traj_cap, int* traj_len) {
  int nc = s->nc, nb = s->nb, nv = s->nv, nr = s->n_routh;
  double h = svi_routh_h(s, cfg);
  int N = cfg->max_steps > 0 ? cfg->max_steps : 10;
  double* lmax = s->lmax;
  memset(info, 0, sizeof(*info));
  memcpy(s->u, s->u0, sizeof(double) * nb);
  memset(s->Lam, 0, sizeof(double) * nb);
  if (traj_len) *traj_len = 0;
  if (traj && traj_cap > 0) { memcpy(traj, s->v0, sizeof(double) * nv); *traj_len = 1; }

  int use_sobol = cfg->budget == SVI_BUDGET_SOBOL && sobol && sobol->dim >= nc * N;
  int st = SVI_OK;
  while (svi_min_normal(s, s->u) < -s->sep_tol) {
    int last = info->steps >= N;
    if (last && extra_budget <= 0) break;
    for (int i = 0; i < nc; i++) {
      double p = last ? 1.0
               : use_sobol ? svi_sobol_point(sobol, k, info->steps * nc + i)
               : svi_rng_uniform(cfg->seed, STREAM_BUDGET, (k * (uint64_t)N + info->steps) * nc + i);
      lmax[i] = last ? extra_budget : h * p;
    }
    routh_q(s, s->u, lmax, s->q);
    svi_lcp_info li;
    uint64_t bidx = (k * (uint64_t)(N + 1) + info->steps) * nr;
    svi_branch br = cfg->branch;
    if (br == SVI_BRANCH_AUTO) br = svi_modes_supported(s) && nc <= 3 ? SVI_BRANCH_ENUMERATE : SVI_BRANCH_RANDOM;
    if (br == SVI_BRANCH_ENUMERATE && (svi_modes_supported(s) || nr <= 16)) {
      st = step_enumerate(s, s->q, svi_rng_uniform(cfg->seed, STREAM_BRANCH, bidx), s->lam, &li);
    } else {
      const double *d = NULL, *sign = NULL;
      const int* order = NULL;
      if (cfg->branch == SVI_BRANCH_RANDOM) {
        random_branch(s, cfg->seed, bidx);
        d = s->d;
        order = s->order;
        sign = s->sign;
      }
      st = svi_lcp_lemke_perturbed(s->lcp, nr, s->A_routh, s->q, d, order, sign, &cfg->lcp,
                                   s->z, &li);
      memcpy(s->lam, s->z + nc, sizeof(double) * nb);
    }
    info->lcps++;
    if (st < 0) break;
    if (st == SVI_OK_REGULARIZED) info->regularized++;
    info->residual = fmax(info->residual, li.residual);
    info->steps++;
    for (int i = 0; i < nb; i++) s->Lam[i] += s->lam[i];
    svi_matvec_add(nb, nb, s->W, s->lam, s->u);
    if (traj && *traj_len < traj_cap) {
      double* vt = traj + (size_t)(*traj_len) * nv;
      memcpy(vt, s->v0, sizeof(double) * nv);
      svi_matvec_add(nv, nb, s->G, s->Lam, vt);
      (*traj_len)++;
    }
    if (last) break;
  }

  int colliding = svi_min_normal(s, s->u) < -s->sep_tol;
  info->finish = SVI_FINISH_NONE;
  if (colliding || st < 0) {
    int st2 = finish_ap ? finish_with_ap(s, info) : SVI_ERR_MAXITER;
    info->finish = (finish_ap && st2 == SVI_OK) ? SVI_FINISH_AP : SVI_FINISH_FAIL;
  }
  info->status = st < 0 && info->finish == SVI_FINISH_FAIL ? st : SVI_OK;

  memcpy(v_out, s->v0, sizeof(double) * nv);
  svi_matvec_add(nv, nb, s->G, s->Lam, v_out);
  if (traj && traj_len && info->finish == SVI_FINISH_AP && *traj_len < traj_cap) {
    memcpy(traj + (size_t)(*traj_len) * nv, v_out, sizeof(double) * nv);
    (*traj_len)++;
  }
  double* vn = s->vn;
  svi_matvec(nc, nv, s->Jbar, v_out, vn);
  info->min_vn = INFINITY;
  for (int i = 0; i < nc; i++) info->min_vn = fmin(info->min_vn, vn[i]);
  info->ke_before = svi_impact_kinetic_energy(s, s->v0);
  info->ke_after = svi_impact_kinetic_energy(s, v_out);
  return info->status;
}

int svi_routh_sample(svi_impact* s, const svi_routh_config* cfg, const svi_sobol* sobol,
                     uint64_t sample_index, double* v_out, svi_sample_info* info,
                     double* traj, int traj_cap, int* traj_len) {
  svi_sample_info local;
  if (!info) info = &local;
  if (!s || !cfg || !v_out) return SVI_ERR_ARG;
  return svi_routh_run(s, cfg, sobol, sample_index, 1, 0, v_out, info, traj, traj_cap, traj_len);
}
