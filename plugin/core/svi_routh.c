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
#include <limits.h>
#include <math.h>
#include <string.h>

#include "svi_internal.h"

enum { STREAM_BUDGET = 1, STREAM_BRANCH = 2, STREAM_RETRY = 4, STREAM_MIXED = 5, STREAM_RETRY_AP = 8 };

/* A step LCP whose solution fails the physical residual is re-solved with up to this many fresh
 * random perturbations; a sample whose outcome fails svi_impact_check_outcome (or whose LCPs fail
 * even so) is re-run up to SAMPLE_ATTEMPTS - 1 times with fresh budgets and perturbations.  Both
 * draw from counter-based streams of (seed, sample, attempt), so results stay deterministic. */
#define STEP_RETRIES 3
#define AP_PLAIN_PIVOTS 4
#define SAMPLE_ATTEMPTS 4

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

/* Pick uniformly among the distinct outcomes (by Delta v) of all solutions of the step LCP at
 * velocity u and budget lmax.  Returns the LCP status; lam receives the chosen lambda_bar.  The
 * mode enumeration reads u and lmax as they are; only the general enumeration forms q (s->q). */
static int step_enumerate(svi_impact* s, const double* u, const double* lmax, double r01, double tol,
                          double* lam, svi_lcp_info* info) {
  int nr = s->n_routh, nc = s->nc, nb = s->nb, nv = s->nv, count = 0;
  if (svi_modes_for_sampling(s)) {
    count = svi_modes_enumerate_pick(s, u, lmax, r01, lam);
    if (count > 0) {
      /* complete z = [beta; lambda_bar; gamma] and check it against (75) itself */
      if (info) memset(info, 0, sizeof(*info));
      double res = svi_routh_residual(s, lmax, u, lam, NULL, s->u_next);
      if (info) info->residual = res;
      s->u_next_ok = res <= tol;
      return res <= tol ? SVI_OK : SVI_ERR_RESIDUAL;
    }
  }
  double* q = s->q;
  routh_q(s, u, lmax, q);
  const double* A = svi_impact_routh(s);
  int st = svi_lcp_enumerate(nr, A, q, 1e-9, s->sols, SVI_ENUM_MAX_SOLS, &count);
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
  int k = pick_from[svi_pick_index(r01, distinct)];
  memcpy(lam, s->sols + k * nr + nc, sizeof(double) * nb);
  double res = svi_lcp_residual_units(nr, A, q, s->sols + k * nr, s->zunit, s->wunit);
  if (info) {
    memset(info, 0, sizeof(*info));
    info->residual = res;
  }
  return res <= tol ? SVI_OK : SVI_ERR_RESIDUAL;
}

#ifdef SVI_AVX2_KERNELS
#include <immintrin.h>

/* x * c mod 2^64 in each lane from 32-bit products (AVX2 has no 64-bit multiply) */
__attribute__((target("avx2"))) static inline __m256i mul64(__m256i x, uint64_t c) {
  __m256i lo = _mm256_set1_epi64x((long long)(c & 0xffffffffu)), hi = _mm256_set1_epi64x((long long)(c >> 32));
  __m256i cross = _mm256_add_epi64(_mm256_mul_epu32(_mm256_srli_epi64(x, 32), lo), _mm256_mul_epu32(x, hi));
  return _mm256_add_epi64(_mm256_mul_epu32(x, lo), _mm256_slli_epi64(cross, 32));
}

/* svi_rng_mix64 in each lane */
__attribute__((target("avx2"))) static inline __m256i mix64x4(__m256i x) {
  x = _mm256_xor_si256(x, _mm256_srli_epi64(x, 30));
  x = mul64(x, SVI_MIX_C1);
  x = _mm256_xor_si256(x, _mm256_srli_epi64(x, 27));
  x = mul64(x, SVI_MIX_C2);
  return _mm256_xor_si256(x, _mm256_srli_epi64(x, 31));
}

/* svi_random_covering four rows at a time: the same integers, (double)(x >> 11) exactly (below
 * 2^53: its high 21 and low 32 bits through the 2^52 exponent, then hi 2^32 + lo, exact), then
 * the scalar's operations in its order */
__attribute__((target("avx2"))) static int covering_avx2(uint64_t key_d, uint64_t index0, int n, double* d,
                                                        double* sign) {
  const __m256i key = _mm256_set1_epi64x((long long)key_d);
  const __m256i mag = _mm256_set1_epi64x(0x4330000000000000LL), lo32 = _mm256_set1_epi64x(0xffffffffLL);
  const __m256d two52 = _mm256_set1_pd(0x1.0p52), two32 = _mm256_set1_pd(0x1.0p32);
  int i = 0;
  for (; i + 4 <= n; i += 4) {
    uint64_t b = index0 + (uint64_t)i + SVI_KEYED_OFFSET;
    __m256i idx = _mm256_set_epi64x((long long)(b + 3), (long long)(b + 2), (long long)(b + 1), (long long)b);
    __m256i x = mix64x4(_mm256_xor_si256(key, mix64x4(idx)));
    __m256i v = _mm256_srli_epi64(x, 11);
    __m256d dlo = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(_mm256_and_si256(v, lo32), mag)), two52);
    __m256d dhi = _mm256_sub_pd(_mm256_castsi256_pd(_mm256_or_si256(_mm256_srli_epi64(v, 32), mag)), two52);
    __m256d u = _mm256_add_pd(_mm256_mul_pd(dhi, two32), dlo);
    u = _mm256_mul_pd(_mm256_add_pd(u, _mm256_set1_pd(0.5)), _mm256_set1_pd(0x1.0p-53));
    _mm256_storeu_pd(d + i, _mm256_add_pd(_mm256_set1_pd(0.05), _mm256_mul_pd(_mm256_set1_pd(0.95), u)));
    __m256i odd = _mm256_cmpeq_epi64(_mm256_and_si256(x, _mm256_set1_epi64x(1)), _mm256_set1_epi64x(1));
    _mm256_storeu_pd(sign + i, _mm256_blendv_pd(_mm256_set1_pd(-1.0), _mm256_set1_pd(1.0), _mm256_castsi256_pd(odd)));
  }
  return i;
}

/* covering_avx2 with AVX-512VL and DQ (where svi_have_avx512): the 64-bit multiplies in one
 * instruction each (vpmullq: the same product mod 2^64) and (double)(x >> 11) by vcvtuqq2pd (exact
 * below 2^53, as the two halves' sum), the rest the same operations: the same bits */
__attribute__((target("avx2,avx512f,avx512vl,avx512dq"))) static inline __m256i mix64x4_dq(__m256i x) {
  x = _mm256_xor_si256(x, _mm256_srli_epi64(x, 30));
  x = _mm256_mullo_epi64(x, _mm256_set1_epi64x((long long)SVI_MIX_C1));
  x = _mm256_xor_si256(x, _mm256_srli_epi64(x, 27));
  x = _mm256_mullo_epi64(x, _mm256_set1_epi64x((long long)SVI_MIX_C2));
  return _mm256_xor_si256(x, _mm256_srli_epi64(x, 31));
}

__attribute__((target("avx2,avx512f,avx512vl,avx512dq"))) static int covering_dq(uint64_t key_d, uint64_t index0, int n,
                                                                               double* d, double* sign) {
  const __m256i key = _mm256_set1_epi64x((long long)key_d);
  int i = 0;
  for (; i + 4 <= n; i += 4) {
    uint64_t b = index0 + (uint64_t)i + SVI_KEYED_OFFSET;
    __m256i idx = _mm256_set_epi64x((long long)(b + 3), (long long)(b + 2), (long long)(b + 1), (long long)b);
    __m256i x = mix64x4_dq(_mm256_xor_si256(key, mix64x4_dq(idx)));
    __m256d u = _mm256_cvtepu64_pd(_mm256_srli_epi64(x, 11));
    u = _mm256_mul_pd(_mm256_add_pd(u, _mm256_set1_pd(0.5)), _mm256_set1_pd(0x1.0p-53));
    _mm256_storeu_pd(d + i, _mm256_add_pd(_mm256_set1_pd(0.05), _mm256_mul_pd(_mm256_set1_pd(0.95), u)));
    __mmask8 odd = _mm256_test_epi64_mask(x, _mm256_set1_epi64x(1));
    _mm256_storeu_pd(sign + i, _mm256_mask_mov_pd(_mm256_set1_pd(-1.0), odd, _mm256_set1_pd(1.0)));
  }
  return i;
}
#endif

void svi_random_covering(uint64_t key_d, uint64_t index0, int n, double* d, double* sign) {
  int i0 = 0;
#ifdef SVI_AVX2_KERNELS
  if (svi_have_avx512()) i0 = covering_dq(key_d, index0, n, d, sign);
  else if (svi_have_avx2()) i0 = covering_avx2(key_d, index0, n, d, sign);
#endif
  for (int i = i0; i < n; i++) {
    uint64_t x = svi_rng_keyed(key_d, index0 + i);
    d[i] = 0.05 + 0.95 * ((double)(x >> 11) + 0.5) * 0x1.0p-53;
    sign[i] = (double)(2 * (int)(x & 1) - 1);   /* +-1 without a branch on a random bit */
  }
}

void svi_random_order(uint64_t key_order, uint64_t index0, int n, int* order) {
  for (int i = 0; i < n; i++) order[i] = i;
  for (int i = n - 1; i > 0; i--) {
    int j = (int)(svi_rng_keyed(key_order, index0 + i) % (uint64_t)(i + 1));
    int t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
}

void svi_random_perturbation(uint64_t key_d, uint64_t key_order, uint64_t index0, int n, double* d,
                             double* sign, int* order) {
  svi_random_covering(key_d, index0, n, d, sign);
  svi_random_order(key_order, index0, n, order);
}

/* Random covering vector and random signed lexicographic perturbation (Fisher-Yates order),
 * all drawn from the counter-based stream of this (sample, step); the order when the solve first
 * reads it (s->order_lazy: svi_impact_lemke passes it on with s->order). */
static void random_branch_n(svi_impact* s, uint64_t seed, uint64_t bidx, int nr) {
  svi_random_covering(svi_rng_key(seed, STREAM_BRANCH), bidx, nr, s->d, s->sign);
  svi_lazy_order lz = {1, nr, svi_rng_key(seed, STREAM_BRANCH + 1), bidx, s->order};
  s->order_lazy = lz;
}

/* ... for the step LCP (75) */
static void random_branch(svi_impact* s, uint64_t seed, uint64_t bidx) { random_branch_n(s, seed, bidx, s->n_routh); }

int svi_routh_step(svi_impact* s, const double* v, const double* lmax, const double* d,
                   const svi_lcp_options* opt, double* lambda, double* v_next,
                   svi_lcp_info* info) {
  if (!s || !v || !lmax || !lambda || !v_next) return SVI_ERR_ARG;
  svi_lcp_options o = svi_impact_lcp_options(s, opt, 1);
  svi_matvec(s->nb, s->nv, s->Jbar, v, s->u);
  routh_q(s, s->u, lmax, s->q);
  int st = svi_impact_lemke(s, 1, s->q, d, NULL, NULL, &o, s->z, info);
  memcpy(lambda, s->z + s->nc, sizeof(double) * s->nb);
  memcpy(v_next, v, sizeof(double) * s->nv);
  if (st >= 0) svi_impact_g_add(s, lambda, v_next);
  return st;
}

/* (31) at s->q by Lemke with a covering vector of ones; a solution rejected by the physical
 * residual (or a ray) is re-solved with random covering vectors and signed lexicographic
 * perturbations drawn from key (STEP_RETRIES more at most), as a Routh step is.  On piles of
 * redundant contacts the plain path can end on a basis that fails the residual where another
 * passes.  li may be NULL.  *retries: the extra solves, *rejects: the solutions the residual
 * rejected. */
int svi_ap_lemke(svi_impact* s, const svi_lcp_options* o, uint64_t key, svi_lcp_info* li,
                 int* retries, int* rejects) {
  svi_lcp_options plain = *o;
  int cap = AP_PLAIN_PIVOTS * s->n_ap + 10;
  if (plain.max_iter <= 0 || plain.max_iter > cap) plain.max_iter = cap;
  plain.regularize = 0;   /* its failures go to the random retries, which keep the regularised ones */
  int st = svi_impact_lemke(s, 0, s->q, NULL, NULL, NULL, &plain, s->z, li);
  *retries = *rejects = 0;
  for (int r = 1; st < 0 && r <= STEP_RETRIES; r++) {
    *rejects += st == SVI_ERR_RESIDUAL;
    (*retries)++;
    random_branch_n(s, svi_rng_u64(key, STREAM_RETRY, (uint64_t)r), 0, s->n_ap);
    st = svi_impact_lemke(s, 0, s->q, s->d, s->order, s->sign, o, s->z, li);
  }
  *rejects += st == SVI_ERR_RESIDUAL;
  return st;
}

/* Apply the simultaneous law (31) from contact velocity u; adds its impulse to Lam and u. */
static int finish_with_ap(svi_impact* s, const svi_routh_config* cfg, uint64_t retry_key,
                          svi_sample_info* info) {
  int nb = s->nb;
  memcpy(s->q, s->u, sizeof(double) * nb);
  memset(s->q + nb, 0, sizeof(double) * s->nc);
  svi_lcp_options o = svi_impact_lcp_options(s, &cfg->lcp, 0);
  svi_lcp_info li;
  int retries = 0, rejects = 0;
  int st = svi_ap_lemke(s, &o, retry_key, &li, &retries, &rejects);
  info->lcps += 1 + retries;
  info->step_retries += retries;
  info->lcp_rejects += rejects;
  if (st < 0) return st;
  if (st == SVI_OK_REGULARIZED) info->regularized++;
  info->residual = fmax(info->residual, li.residual);
  for (int i = 0; i < nb; i++) s->Lam[i] += s->z[i];
  svi_impact_add_w(s, s->z, s->u);
  return SVI_OK;
}

/* The budget growth of a sample's second half (docs/theory.md 4.2): step_growth taken in [1, 1000]
 * (the MJCF key's range); 0, a negative value or NaN: the default, 4 under a relative step and 1
 * (the paper's constant h) under step_abs. */
double svi_routh_growth(const svi_routh_config* cfg) {
  double g = cfg->step_growth;
  if (!(g > 0)) return cfg->step_abs > 0 ? 1.0 : 4.0;
  return g < 1 ? 1.0 : g > 1e3 ? 1e3 : g;
}

double svi_routh_h(const svi_impact* s, const svi_routh_config* cfg) {
  if (cfg->step_abs > 0) return cfg->step_abs;
  double ref = s->step_ref > 0 ? s->step_ref : 1.0;
  return (cfg->step > 0 ? cfg->step : 1.0) * ref;
}

/* What a branch rule means on this problem (docs/theory.md 4.4).  AUTO is ENUMERATE where the
 * enumeration is cheap, else RANDOM; ENUMERATE where no enumeration applies is RANDOM. */
static svi_branch resolve_branch(const svi_impact* s, svi_branch b) {
  int can_enumerate = svi_modes_for_sampling(s) || s->n_routh <= 16;
  if (b == SVI_BRANCH_AUTO) return svi_modes_cheap(s) ? SVI_BRANCH_ENUMERATE : SVI_BRANCH_RANDOM;
  if (b == SVI_BRANCH_ENUMERATE && !can_enumerate) return SVI_BRANCH_RANDOM;
  return b;
}

/* The random streams of one attempt of one sample.  Attempt 0 draws exactly what a run without
 * retries draws; a retry draws from a seed derived from (seed, sample, attempt). */
typedef struct {
  uint64_t seed, k;
  int attempt;
  svi_branch rule;
  uint64_t key_budget, key_branch;   /* svi_rng_key(seed, STREAM_BUDGET / STREAM_BRANCH), once */
} draws;

/* svi_rng_uniform(seed, stream, index) with the stream's key computed once */
static double uniform_keyed(uint64_t key, uint64_t index) {
  return ((double)(svi_rng_keyed(key, index) >> 11) + 0.5) * 0x1.0p-53;
}

static double budget_fraction(const svi_impact* s, const svi_routh_config* cfg, const svi_sobol* sobol,
                              const draws* dr, int N, int step, int i, int nc) {
  if (dr->attempt == 0) {
    if (cfg->budget == SVI_BUDGET_SOBOL && sobol && sobol->dim >= nc * N)
      return s->sobol_row ? svi_sobol_value(s->sobol_row[step * nc + i]) : svi_sobol_point(sobol, dr->k, step * nc + i);
    return uniform_keyed(dr->key_budget, (dr->k * (uint64_t)N + step) * nc + i);
  }
  return uniform_keyed(dr->key_budget, (uint64_t)step * nc + i);
}

/* SVI_BUDGET_MIXED, one contact at a time: the contact being resolved keeps a budget fraction
 * in (1 - delta, 1) until it stops approaching, every other one gets less than delta; the next
 * contact is drawn uniformly among the approaching ones.  As delta -> 0 this is the sequential
 * law in a random order (the sequential outcomes lie in the closure of the Routh set), which
 * i.i.d. uniform budgets reach only with probability ~ delta^((nc - 1) rounds). */
#define MIXED_DELTA 1e-3

static int mixed_one_at_a_time(const draws* dr) {
  return svi_rng_uniform(dr->seed, STREAM_MIXED, dr->k * 4 + (uint64_t)dr->attempt) < 0.5;
}

static void mixed_budgets(svi_impact* s, const draws* dr, double h, int N, int step, int* current) {
  int nc = s->nc;
  if (*current < 0 || s->u[*current] >= -s->sep_tol) {
    int approaching = 0;
    for (int i = 0; i < nc; i++) approaching += s->u[i] < -s->sep_tol;
    int pick = (int)(svi_rng_uniform(dr->seed, STREAM_MIXED + 1, dr->k * (uint64_t)(N + 1) + step) * approaching);
    for (int i = 0; i < nc; i++)
      if (s->u[i] < -s->sep_tol && pick-- == 0) { *current = i; break; }
  }
  for (int i = 0; i < nc; i++) {
    double u = svi_rng_uniform(dr->seed, STREAM_MIXED + 2, (dr->k * (uint64_t)(N + 1) + step) * nc + i);
    s->lmax[i] = h * (i == *current ? 1 - MIXED_DELTA * u : MIXED_DELTA * u);
  }
}

/* One Routh step LCP at s->u and s->lmax by the attempt's rule, with the physical residual as the
 * acceptance test; a rejected solution is re-solved with fresh random perturbations
 * (STEP_RETRIES).  s->lam receives lambda_bar.  q = [lmax; u; 0] (s->q) is formed only for a
 * solve that reads it: the mode enumeration does not. */
static int solve_step(svi_impact* s, const svi_routh_config* cfg, const draws* dr, int step,
                      svi_sample_info* info, svi_lcp_info* li) {
  int nr = s->n_routh, nc = s->nc, nb = s->nb, N = cfg->max_steps > 0 ? cfg->max_steps : 10;
  uint64_t bidx = dr->attempt == 0 ? (dr->k * (uint64_t)(N + 1) + step) * nr : (uint64_t)step * nr;
  double tol = cfg->lcp.res_tol > 0 ? cfg->lcp.res_tol : 1e-9;
  int st = SVI_OK;
  info->lcps++;
  s->u_next_ok = 0;   /* an enumerated step sets it from its residual, a Lemke solve from its own */
  if (dr->rule == SVI_BRANCH_ENUMERATE) {
    st = step_enumerate(s, s->u, s->lmax, uniform_keyed(dr->key_branch, bidx), tol, s->lam, li);
    if (st >= 0) return st;
  }
  routh_q(s, s->u, s->lmax, s->q);
  svi_lcp_options o = svi_impact_lcp_options(s, &cfg->lcp, 1);
  if (dr->rule != SVI_BRANCH_ENUMERATE) {
    const double *d = NULL, *sign = NULL;
    const int* order = NULL;
    if (dr->rule == SVI_BRANCH_RANDOM) {
      random_branch(s, dr->seed, bidx);
      d = s->d;
      order = s->order;
      sign = s->sign;
    }
    st = svi_impact_lemke(s, 1, s->q, d, order, sign, &o, s->z, li);
    memcpy(s->lam, s->z + nc, sizeof(double) * nb);
  }
  for (int r = 1; st < 0 && r <= STEP_RETRIES; r++) {
    info->lcp_rejects += st == SVI_ERR_RESIDUAL;
    info->step_retries++;
    info->lcps++;
    random_branch(s, svi_rng_u64(dr->seed, STREAM_RETRY, bidx + (uint64_t)r), 0);
    st = svi_impact_lemke(s, 1, s->q, s->d, s->order, s->sign, &o, s->z, li);
    memcpy(s->lam, s->z + nc, sizeof(double) * nb);
  }
  if (st < 0) info->lcp_rejects += st == SVI_ERR_RESIDUAL;
  return st;
}

/* Algorithm 1's loop for one attempt: accumulates Lam and u.  Returns the status of the last LCP
 * (< 0: a step failed even after its retries). */
static int run_steps(svi_impact* s, const svi_routh_config* cfg, const svi_sobol* sobol,
                     const draws* dr, double extra_budget, svi_sample_info* info, double* traj,
                     int traj_cap, int* traj_len) {
  int nc = s->nc, nb = s->nb, nv = s->nv;
  double h = svi_routh_h(s, cfg);
  int N = cfg->max_steps > 0 ? cfg->max_steps : 10;
  double* lmax = s->lmax;
  int st = SVI_OK, current = -1;
  int one_at_a_time = cfg->budget == SVI_BUDGET_MIXED && mixed_one_at_a_time(dr);
  /* step k's budgets: h p for the first K = ceil(N/2) steps, then (h p) g^(k - K + 1) (theory 4.2): a
   * sample that ends within K steps is the constant-h sample, bit for bit; one that does not (a
   * stack of boxes, whose bottom contacts must stop the whole stack with budgets one contact's
   * impulse sets) takes coarser steps instead of running out of N and being finished by (31) */
  double g = svi_routh_growth(cfg), grown = 1;
  int k0 = g != 1 ? (N + 1) / 2 : INT_MAX;
  while (svi_min_normal(s, s->u) < -s->sep_tol) {
    int last = info->steps >= N;
    if (last && extra_budget <= 0) break;
    if (!last && one_at_a_time) mixed_budgets(s, dr, h, N, info->steps, &current);
    else
      for (int i = 0; i < nc; i++)
        lmax[i] = last ? extra_budget : h * budget_fraction(s, cfg, sobol, dr, N, info->steps, i, nc);
    if (__builtin_expect(info->steps >= k0 && !last, 0)) {   /* (h p) g^(k - K + 1), after the draw */
      grown *= g;
      for (int i = 0; i < nc; i++) lmax[i] *= grown;
    }
    svi_lcp_info li;
    st = solve_step(s, cfg, dr, info->steps, info, &li);
    if (st < 0) break;
    if (st == SVI_OK_REGULARIZED) info->regularized++;
    if (li.residual > info->residual) info->residual = li.residual;   /* fmax (residuals are not NaN) */
    info->steps++;
    for (int i = 0; i < nb; i++) s->Lam[i] += s->lam[i];
    /* u += W lam: the step's residual has formed it already, unless the step was z = 0 or
     * solved on the low-rank path */
    if (s->u_next_ok) {   /* the two arrays trade places (both nb of the workspace block) */
      double* t = s->u;
      s->u = s->u_next;
      s->u_next = t;
    } else {
      svi_impact_add_w(s, s->lam, s->u);
    }
    if (traj && *traj_len < traj_cap) {
      double* vt = traj + (size_t)(*traj_len) * nv;
      memcpy(vt, s->v0, sizeof(double) * nv);
      svi_impact_g_add(s, s->Lam, vt);
      (*traj_len)++;
    }
    if (last) break;
  }
  return st;
}

/* One attempt: the step loop, the (31) finish if asked, v_out.  Returns the status; *numerical
 * is set when an LCP failed (as opposed to the run simply not terminating). */
static int run_attempt(svi_impact* s, const svi_routh_config* cfg, const svi_sobol* sobol,
                       const draws* dr, int finish_ap, double extra_budget, double* v_out,
                       svi_sample_info* info, double* traj, int traj_cap, int* traj_len,
                       int* numerical) {
  int nb = s->nb, nv = s->nv;
  memcpy(s->u, s->u0, sizeof(double) * nb);
  memset(s->Lam, 0, sizeof(double) * nb);
  info->steps = 0;
  info->residual = 0;
  if (traj_len) *traj_len = 0;
  if (traj && traj_cap > 0) { memcpy(traj, s->v0, sizeof(double) * nv); *traj_len = 1; }

  int st = run_steps(s, cfg, sobol, dr, extra_budget, info, traj, traj_cap, traj_len);
  int colliding = svi_min_normal(s, s->u) < -s->sep_tol;
  info->finish = SVI_FINISH_NONE;
  *numerical = st < 0;
  if (colliding || st < 0) {
    uint64_t key = svi_rng_u64(dr->seed, STREAM_RETRY_AP, dr->k * SAMPLE_ATTEMPTS + (uint64_t)dr->attempt);
    int st2 = finish_ap ? finish_with_ap(s, cfg, key, info) : SVI_ERR_MAXITER;
    info->finish = (finish_ap && st2 == SVI_OK) ? SVI_FINISH_AP : SVI_FINISH_FAIL;
    if (finish_ap && st2 < 0) *numerical = 1;
  }
  memcpy(v_out, s->v0, sizeof(double) * nv);
  svi_impact_g_add(s, s->Lam, v_out);
  if (traj && traj_len && info->finish == SVI_FINISH_AP && *traj_len < traj_cap) {
    memcpy(traj + (size_t)(*traj_len) * nv, v_out, sizeof(double) * nv);
    (*traj_len)++;
  }
  return st < 0 && info->finish == SVI_FINISH_FAIL ? st : SVI_OK;
}

/* One sample (Algorithm 1; with extra_budget > 0 and finish_ap = 0, one sample of Algorithm 2).
 * finish_ap: whether an unterminated run is completed with (31).  extra_budget > 0: after the
 * loop, one more step with l_max = extra_budget 1 if still colliding (Algorithm 2's final step).
 *
 * Every attempt's outcome goes through svi_impact_check_outcome; one that fails it, or whose
 * LCPs fail even after their retries, is re-run with fresh draws (SAMPLE_ATTEMPTS in all).  If
 * every attempt fails the checks, v_out = v- and the status is SVI_ERR_REJECTED: an outcome the
 * law does not allow is never returned as accepted. */
int svi_routh_run(svi_impact* s, const svi_routh_config* cfg, const svi_sobol* sobol,
                  uint64_t k, int finish_ap, double extra_budget, double* v_out,
                  svi_sample_info* info, double* traj, int traj_cap, int* traj_len) {
  memset(info, 0, sizeof(*info));
  svi_branch rule = resolve_branch(s, cfg->branch);
  int st = SVI_OK, bad = 0, numerical = 0;
  for (int a = 0; a < SAMPLE_ATTEMPTS; a++) {
    /* a retry must not repeat the deterministic Lemke path that just failed */
    draws dr = {a == 0 ? cfg->seed : svi_rng_u64(cfg->seed, STREAM_RETRY, k * SAMPLE_ATTEMPTS + (uint64_t)a),
                k, a, a > 0 && rule == SVI_BRANCH_LEMKE ? SVI_BRANCH_RANDOM : rule, 0, 0};
    dr.key_budget = svi_rng_key(dr.seed, STREAM_BUDGET);
    dr.key_branch = svi_rng_key(dr.seed, STREAM_BRANCH);
    if (a > 0) info->sample_retries++;
    st = run_attempt(s, cfg, sobol, &dr, finish_ap, extra_budget, v_out, info, traj, traj_cap,
                     traj_len, &numerical);
    bad = svi_outcome_check(s, v_out, s->Lam, &info->ke_after, &info->min_vn);
    /* a run that simply did not terminate (Algorithm 2 without the (31) finish) is still
     * approaching by definition: it is not accepted (the C(q0) removal), not retried */
    if (info->finish == SVI_FINISH_FAIL && !numerical) bad &= ~SVI_CHECK_APPROACH;
    info->failed_checks |= bad;
    if (!bad && !numerical) break;
  }
  if (bad) {
    /* nothing admissible was found: say so, and hand back the pre-impact velocity */
    memcpy(v_out, s->v0, sizeof(double) * s->nv);
    memset(s->Lam, 0, sizeof(double) * s->nb);
    if (traj_len) *traj_len = 0;
    info->finish = SVI_FINISH_FAIL;
    st = SVI_ERR_REJECTED;
    svi_outcome_check(s, v_out, NULL, &info->ke_after, &info->min_vn);
  }
  info->status = st;
  info->ke_before = s->ke0;
  info->accepted = st == SVI_OK && !numerical && info->finish == SVI_FINISH_NONE &&
                   info->min_vn >= -s->sep_tol;
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
