/* svi_laws.c -- comparison laws: Anitescu-Potra simultaneous impact (eq. 31-33), all of its
 * solutions, and sequential single-contact impacts (Section 2.2.2). */
#include <math.h>
#include <string.h>

#include "svi_internal.h"

int svi_law_simultaneous(svi_impact* s, const svi_lcp_options* opt, double* v_out,
                         svi_lcp_info* info) {
  if (!s || !v_out) return SVI_ERR_ARG;
  int nb = s->nb;
  memcpy(s->q, s->u0, sizeof(double) * nb);
  memset(s->q + nb, 0, sizeof(double) * s->nc);
  svi_lcp_options o = svi_impact_lcp_options(s, opt, 0);
  int retries, rejects;
  /* the plain Lemke path; if its solution fails the residual, a few perturbed paths (fixed
   * draws: the law stays deterministic) */
  int st = svi_ap_lemke(s, &o, 0x53494d554cULL, info, &retries, &rejects);
  memcpy(v_out, s->v0, sizeof(double) * s->nv);
  memset(s->Lam, 0, sizeof(double) * nb);
  if (st >= 0) {
    memcpy(s->Lam, s->z, sizeof(double) * nb);
    svi_impact_g_add(s, s->z, v_out);
    if (svi_impact_check_outcome(s, v_out, s->Lam)) {   /* never hand back what (31) forbids */
      memcpy(v_out, s->v0, sizeof(double) * s->nv);
      memset(s->Lam, 0, sizeof(double) * nb);
      st = SVI_ERR_REJECTED;
    }
  }
  return st;
}

/* z = [l_n; l_D; gamma] of (31) from lambda_bar: gamma_i = max_k (-J_D,k v+)^+ (eq. 32-33) */
static void complete_ap(const svi_impact* s, const double* lam, double* z) {
  int nc = s->nc, nb = s->nb, nd = s->nd;
  double* up = s->vn;   /* scratch, nb */
  memcpy(z, lam, sizeof(double) * nb);
  memcpy(up, s->u0, sizeof(double) * nb);
  svi_impact_add_w(s, lam, up);
  for (int i = 0; i < nc; i++) {
    double g = 0;
    for (int r = 0; r < nd; r++) g = fmax(g, -up[nc + i * nd + r]);
    z[nb + i] = g;
  }
}

/* Every outcome of (31): the contact-mode enumeration where it applies (nc <= 4; it also finds
 * the outcomes whose complementary basis is singular), else all 2^n complementary bases
 * (n = nc (2 + nd) <= 24).  Each candidate must pass the physical residual and the outcome
 * checks before it counts. */
int svi_law_simultaneous_all(svi_impact* s, double* v_out, int max_out, int* count) {
  if (!s || !count || (max_out > 0 && !v_out)) return SVI_ERR_ARG;
  int na = s->n_ap, nb = s->nb, nv = s->nv, nsol = 0, stride = na;
  const double* A = na <= 24 ? svi_impact_ap(s) : NULL;   /* W and (31)'s matrix */
  memcpy(s->q, s->u0, sizeof(double) * nb);
  memset(s->q + nb, 0, sizeof(double) * s->nc);
  if (svi_modes_supported(s)) {
    nsol = svi_modes_enumerate_ap(s, s->u0);
    stride = nb;
  } else {
    if (na > 24) return SVI_ERR_CAPACITY;
    int st = svi_lcp_enumerate(na, A, s->q, 1e-9, s->sols, SVI_ENUM_MAX_SOLS, &nsol);
    if (st != SVI_OK) return st;
  }
  if (nsol > SVI_ENUM_MAX_SOLS) nsol = SVI_ENUM_MAX_SOLS;
  double scale = fmax(s->vscale, 1e-12);
  svi_lcp_options o = svi_impact_lcp_options(s, NULL, 0);
  *count = 0;
  for (int k = 0; k < nsol; k++) {
    const double* lam = s->sols + k * stride;
    complete_ap(s, lam, s->z);
    if (svi_lcp_residual_units(na, A, s->q, s->z, o.zunit, o.wunit) > o.res_tol) continue;
    double* v = s->dv + (*count < SVI_ENUM_MAX_SOLS ? *count : SVI_ENUM_MAX_SOLS - 1) * nv;
    memcpy(v, s->v0, sizeof(double) * nv);
    svi_impact_g_add(s, lam, v);
    if (svi_impact_check_outcome(s, v, lam)) continue;
    int dup = 0;
    for (int j = 0; j < *count && j < SVI_ENUM_MAX_SOLS && !dup; j++) {
      if (s->dv + j * nv == v) continue;
      double d = 0;
      for (int i = 0; i < nv; i++) d = fmax(d, fabs(s->dv[j * nv + i] - v[i]));
      if (d <= 1e-7 * scale) dup = 1;
    }
    if (dup) continue;
    if (*count < max_out) memcpy(v_out + (*count) * nv, v, sizeof(double) * nv);
    (*count)++;
  }
  return SVI_OK;
}

/* (31) with only contact j active: unknowns [l_n,j; l_D,j; gamma_j] */
static int single_impact(svi_impact* s, int j, svi_lcp_info* info) {
  int nc = s->nc, nd = s->nd, nb = s->nb, n1 = 2 + nd;
  int rows[1 + 4];
  rows[0] = j;
  for (int k = 0; k < nd; k++) rows[1 + k] = nc + j * nd + k;
  double* A = s->A_one;
  memset(A, 0, sizeof(double) * n1 * n1);
  for (int a = 0; a <= nd; a++) {
    for (int b = 0; b <= nd; b++) A[a * n1 + b] = svi_impact_w(s, rows[a], rows[b]);
    s->q[a] = s->u[rows[a]];
  }
  for (int k = 0; k < nd; k++) {
    A[(1 + k) * n1 + nd + 1] = 1.0;
    A[(nd + 1) * n1 + 1 + k] = -1.0;
  }
  A[(nd + 1) * n1] = s->mu[j];
  s->q[nd + 1] = 0;
  /* the physical units of (31) restricted to contact j: [l_n; l_D; gamma] */
  double zu[1 + 4 + 1], wu[1 + 4 + 1];
  int nr = s->n_routh, nb0 = nc;   /* (75) layout: beta (nc), l_n (nc), l_D (nc nd), gamma (nc) */
  zu[0] = s->zunit[nb0 + j];
  wu[0] = s->wunit[nb0 + j];
  for (int k = 0; k < nd; k++) {
    zu[1 + k] = s->zunit[2 * nc + j * nd + k];
    wu[1 + k] = s->wunit[2 * nc + j * nd + k];
  }
  zu[nd + 1] = s->zunit[nr - nc + j];
  wu[nd + 1] = s->wunit[nr - nc + j];
  svi_lcp_options o = svi_lcp_default_options();
  o.zunit = zu;
  o.wunit = wu;
  int st = svi_lcp_lemke(s->lcp, n1, A, s->q, NULL, &o, s->z, info);
  if (st < 0) return st;
  for (int a = 0; a <= nd; a++) {
    double l = s->z[a];
    if (l == 0) continue;
    s->Lam[rows[a]] += l;
    for (int i = 0; i < nb; i++) s->u[i] += svi_impact_w(s, i, rows[a]) * l;
  }
  return SVI_OK;
}

int svi_law_sequential(svi_impact* s, const int* order, int max_rounds, double* v_out,
                       int* rounds) {
  if (!s || !order || !v_out) return SVI_ERR_ARG;
  int nc = s->nc, nb = s->nb, st = SVI_OK, r = 0, ptr = 0;
  for (int i = 0; i < nc; i++) if (order[i] < 0 || order[i] >= nc) return SVI_ERR_ARG;
  memcpy(s->u, s->u0, sizeof(double) * nb);
  memset(s->Lam, 0, sizeof(double) * nb);
  while (svi_min_normal(s, s->u) < -s->sep_tol) {
    if (r >= max_rounds) { st = SVI_ERR_MAXITER; break; }
    /* next approaching contact in the cyclic order; an impact at a contact that is not
     * approaching would be the zero impulse */
    int j = order[ptr];
    ptr = (ptr + 1) % nc;
    if (s->u[j] >= -s->sep_tol) continue;
    svi_lcp_info li;
    st = single_impact(s, j, &li);
    r++;
    if (st < 0) break;
    st = SVI_OK;
  }
  memcpy(v_out, s->v0, sizeof(double) * s->nv);
  svi_impact_g_add(s, s->Lam, v_out);
  if (rounds) *rounds = r;
  if (st == SVI_OK && svi_impact_check_outcome(s, v_out, s->Lam)) {
    memcpy(v_out, s->v0, sizeof(double) * s->nv);
    memset(s->Lam, 0, sizeof(double) * nb);
    st = SVI_ERR_REJECTED;
  }
  return st;
}

/* Next permutation in lexicographic order; 0 after the last one. */
static int next_permutation(int n, int* a) {
  int i = n - 2;
  while (i >= 0 && a[i] >= a[i + 1]) i--;
  if (i < 0) return 0;
  int j = n - 1;
  while (a[j] <= a[i]) j--;
  int t = a[i]; a[i] = a[j]; a[j] = t;
  for (int l = i + 1, r = n - 1; l < r; l++, r--) { t = a[l]; a[l] = a[r]; a[r] = t; }
  return 1;
}

/* Order number k of the seeded sample: a Fisher-Yates shuffle from the counter-based stream, so
 * order k depends only on (seed, k). */
static void sampled_order(int n, uint64_t seed, uint64_t k, int* a) {
  for (int i = 0; i < n; i++) a[i] = i;
  for (int i = n - 1; i > 0; i--) {
    int j = (int)(svi_rng_u64(seed, 7, k * (uint64_t)n + (uint64_t)i) % (uint64_t)(i + 1));
    int t = a[i]; a[i] = a[j]; a[j] = t;
  }
}

static long long factorial_capped(int n, long long cap) {
  long long f = 1;
  for (int i = 2; i <= n; i++) {
    if (f > cap / i) return cap + 1;
    f *= i;
  }
  return f;
}

/* Add v to the distinct outcomes in out (dedup at 1e-7 of the contact-speed scale, as
 * svi_law_simultaneous_all). */
static void add_distinct(const svi_impact* s, const double* v, double* out, int max_out, int* count) {
  int nv = s->nv, stored = *count < max_out ? *count : max_out;
  double tol = 1e-7 * fmax(s->vscale, 1e-12);
  for (int j = 0; j < stored; j++) {
    double d = 0;
    for (int i = 0; i < nv; i++) d = fmax(d, fabs(out[j * nv + i] - v[i]));
    if (d <= tol) return;
  }
  if (*count < max_out) memcpy(out + (size_t)(*count) * nv, v, sizeof(double) * nv);
  (*count)++;
}

int svi_law_sequential_all(svi_impact* s, int max_rounds, long long max_orders, uint64_t seed,
                           double* v_out, int max_out, int* count, svi_sequential_stats* stats) {
  if (!s || !count || (max_out > 0 && !v_out)) return SVI_ERR_ARG;
  int nc = s->nc;
  long long cap = max_orders > 0 ? max_orders : SVI_SEQUENTIAL_MAX_ORDERS;
  long long total = factorial_capped(nc, cap);
  int exhaustive = total <= cap;
  long long runs = exhaustive ? total : cap;
  svi_sequential_stats st;
  memset(&st, 0, sizeof(st));
  st.exhaustive = exhaustive;
  *count = 0;
  int* order = s->order;   /* scratch of n_routh >= nc ints */
  for (int i = 0; i < nc; i++) order[i] = i;
  for (long long k = 0; k < runs; k++) {
    if (!exhaustive) sampled_order(nc, seed, (uint64_t)k, order);
    else if (k > 0) next_permutation(nc, order);
    int r = svi_law_sequential(s, order, max_rounds, s->v, NULL);
    st.orders++;
    if (r == SVI_ERR_MAXITER) st.unterminated++;
    else if (r == SVI_ERR_REJECTED) st.rejected++;
    else if (r == SVI_OK) add_distinct(s, s->v, v_out, max_out, count);
    else st.failed++;
  }
  if (stats) *stats = st;
  return SVI_OK;
}
