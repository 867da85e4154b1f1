/* svi_propagative.c -- restitution: the propagative impact law of Seghete & Murphey,
 * "A propagative model of simultaneous impact" (arXiv:1709.02296).  Equation numbers are that
 * paper's; docs/theory.md section 8 carries the derivations.
 *
 * Everything runs in contact space on the normal rows only (digest 004, section 11):
 *     A  = J_n M^-1 J_n^T          A_ij = <u_i, u_j>_g, the metric of eq. (5), from the
 *                                  normal block of svi_impact's Delassus matrix W
 *     vn = J_n v                   <p, u_i>_g; vn_i < 0 is approaching (eq. 6)
 * so one single-contact elastic impact, the reflection p Gamma(u_i) of eq. (7), is
 *     d = -2 vn_i / A_ii,   lambda_i += d,   vn += d A[:, i]           (O(nc))
 * and the generalised velocity is formed once at the end, v+ = v- + M^-1 J_n^T lambda.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "svi_internal.h"

#define PROP_ENUM_NC_MAX 16    /* exhaustive branching is offered up to this many contacts */
#define PROP_DEPTH_MAX 256     /* longest branch the depth-first stack holds */
#define PROP_SET_DEFAULT 256
#define PROP_KE_TOL 1e-9       /* valid iff KE(v+) <= KE(v-) (1 + PROP_KE_TOL) */
#define PROP_DUP_TOL 1e-9      /* outcomes equal iff ||v_i - v_j||_M <= PROP_DUP_TOL ||v-||_M */
#define PROP_FLOOR 1e-12       /* tolerances never below this x the largest normal speed the energy
                                  allows, max_i ||u_i||_g ||p||_g: the round-off level of J_n v */

/* counter-based stream of outcome k: draw (attempt, step) is index (attempt << 32) | step */
static const uint64_t PROP_STREAM = 0x50524f5000000000ULL;   /* "PROP" */

struct svi_propagative {
  int nv_max, nc_max, set_max, enc;   /* enc: contacts the depth-first stack is sized for */
  svi_lcp_work* lcp;
  double *A;      /* nc x nc normal Delassus block, contiguous (for the plastic LCP) */
  double *isd;    /* 1 / sqrt(A_ii) (0 for a zero row) */
  double *vn0;    /* J_n v- */
  double *vn, *lam;      /* propagation state */
  double *lam_p;  /* plastic impulse */
  double *lam_b;  /* blended impulse of the current outcome */
  double *v;      /* nv: current outcome */
  double *vn_chk; /* nc: J_n v+ recomputed from v+ */
  double *y;      /* nv: L^T v (Euclidean norm = M-norm) */
  double *set_y;  /* set_max x nv: L^T v of the distinct outcomes found */
  double *st_vn, *st_lam;   /* (PROP_DEPTH_MAX + 1) x enc: depth-first stack */
  int *nxt;       /* PROP_DEPTH_MAX + 1: next branch to follow at each level */
  int *idx;       /* nc: approaching contacts */
};

/* per-call quantities of one problem */
typedef struct {
  int    nc, nv, nb;
  double e;
  double speed;   /* s = max_i (-J_n,i v-)^+, m/s */
  double tol;     /* approaching: vn_i < -tol (m/s) */
  double vtol;    /* valid: J_n v+ >= -vtol (m/s) */
  int    impact;  /* some contact approaches: vn_i < -tol */
  double ke0, norm0;
  int    plastic;  /* 0 not yet solved, 1 solved, < 0 the LCP's failure status */
} prep;

svi_propagative_config svi_propagative_default_config(void) {
  svi_propagative_config c;
  memset(&c, 0, sizeof(c));
  c.restitution = 1.0;
  c.order = SVI_ORDER_RANDOM;
  c.seed = 1;
  c.max_reflections = 10000;
  c.max_retries = 3;
  c.tol = 1e-9;
  c.valid_tol = 1e-6;
  c.enum_max_contacts = 8;
  c.enum_budget = 1LL << 20;
  c.samples = 4096;
  return c;
}

svi_propagative* svi_propagative_create(int nv_max, int nc_max, int set_max) {
  if (nv_max <= 0 || nc_max <= 0) return NULL;
  if (set_max <= 0) set_max = PROP_SET_DEFAULT;
  svi_propagative* w = calloc(1, sizeof(*w));
  if (!w) return NULL;
  w->nv_max = nv_max;
  w->nc_max = nc_max;
  w->set_max = set_max;
  w->enc = nc_max < PROP_ENUM_NC_MAX ? nc_max : PROP_ENUM_NC_MAX;
  size_t nc = (size_t)nc_max, nv = (size_t)nv_max, st = (size_t)(PROP_DEPTH_MAX + 1) * w->enc;
  w->lcp = svi_lcp_work_create(nc_max);
  w->A = malloc(sizeof(double) * (nc * nc + 7 * nc + 2 * nv + (size_t)set_max * nv + 2 * st));
  w->nxt = malloc(sizeof(int) * (PROP_DEPTH_MAX + 1 + nc));
  if (!w->lcp || !w->A || !w->nxt) {
    svi_propagative_destroy(w);
    return NULL;
  }
  double* p = w->A + nc * nc;
  w->isd = p;    p += nc;
  w->vn0 = p;    p += nc;
  w->vn = p;     p += nc;
  w->lam = p;    p += nc;
  w->lam_p = p;  p += nc;
  w->lam_b = p;  p += nc;
  w->vn_chk = p; p += nc;
  w->v = p;      p += nv;
  w->y = p;      p += nv;
  w->set_y = p;  p += (size_t)set_max * nv;
  w->st_vn = p;  p += st;
  w->st_lam = p;
  w->idx = w->nxt + PROP_DEPTH_MAX + 1;
  return w;
}

void svi_propagative_destroy(svi_propagative* w) {
  if (!w) return;
  svi_lcp_work_destroy(w->lcp);
  free(w->A);
  free(w->nxt);
  free(w);
}

static int config_ok(const svi_propagative_config* c) {
  return isfinite(c->restitution) && c->restitution >= 0 && c->restitution <= 1 &&
         c->max_reflections >= 1 && c->max_retries >= 0 && isfinite(c->tol) && c->tol >= 0 &&
         isfinite(c->valid_tol) && c->valid_tol >= 0 && c->enum_max_contacts >= 0 &&
         c->enum_budget >= 0 && c->samples >= 0 &&
         (c->order == SVI_ORDER_RANDOM || c->order == SVI_ORDER_MOST_VIOLATED ||
          c->order == SVI_ORDER_LEAST_VIOLATED);
}

/* U^T v, so that ||v||_M = ||U^T v||_2 (M = U U^T, U upper, row-major: svi_impact_setup) */
static void chol_t(const svi_impact* s, const double* v, double* y) {
  int nv = s->nv;
  for (int j = 0; j < nv; j++) {
    double a = 0;
    for (int i = 0; i <= j; i++) a += s->U[i * nv + j] * v[i];
    y[j] = a;
  }
}

static int prepare(svi_propagative* w, const svi_impact* s, const svi_propagative_config* cfg,
                   prep* p) {
  if (!w || !s || !cfg || s->nc <= 0) return SVI_ERR_ARG;
  if (!config_ok(cfg)) return SVI_ERR_ARG;
  if (s->nc > w->nc_max || s->nv > w->nv_max) return SVI_ERR_CAPACITY;
  int nc = s->nc, nb = s->nb;
  p->nc = nc;
  p->nv = s->nv;
  p->nb = nb;
  p->e = cfg->restitution;
  p->speed = 0;
  for (int i = 0; i < nc; i++) {
    for (int j = 0; j < nc; j++) w->A[i * nc + j] = svi_impact_w(s, i, j);
    double a = w->A[i * nc + i];
    w->isd[i] = a > 0 ? 1.0 / sqrt(a) : 0;
    w->vn0[i] = s->u0[i];
    if (-w->vn0[i] > p->speed) p->speed = -w->vn0[i];
  }
  p->ke0 = svi_impact_kinetic_energy(s, s->v0);
  p->norm0 = sqrt(2 * p->ke0);
  double gmax = 0;
  for (int i = 0; i < nc; i++) if (w->isd[i] > 0) gmax = fmax(gmax, 1.0 / w->isd[i]);
  double floor = PROP_FLOOR * gmax * p->norm0;
  p->tol = fmax(cfg->tol * p->speed, floor);
  p->vtol = fmax(cfg->valid_tol * p->speed, floor);
  p->impact = p->speed > p->tol;
  p->plastic = 0;
  return SVI_OK;
}

/* The frictionless plastic outcome, eq. (10)-(11) as an LCP (the projection (11) when every
 * lambda_p >= 0; digest errata 7):  0 <= lambda_p _|_ J_n v- + A lambda_p >= 0.
 * It is the M-orthogonal projection of v- onto {v : J_n v >= 0}, unique in v. */
static int solve_plastic(svi_propagative* w, prep* p) {
  if (p->plastic) return p->plastic > 0 ? SVI_OK : p->plastic;
  int st = svi_lcp_lemke(w->lcp, p->nc, w->A, w->vn0, NULL, NULL, w->lam_p, NULL);
  p->plastic = st >= 0 ? 1 : st;
  return st >= 0 ? SVI_OK : st;
}

/* Locked contacts: no nonzero normal motion is feasible, so no elastic outcome exists when
 * something approaches.  By Stiemke's alternative for the symmetric A, there is no mu with
 * A mu >= 0, A mu != 0 (no x in span(M^-1 J_n^T) with J_n x >= 0, J_n x != 0) iff some y > 0 has
 * A y = 0, i.e. J_n^T y = 0: the normals are positively dependent with every contact involved.
 * Test: minimise y^T A y over y >= 1, the LCP 0 <= z _|_ A z + A 1 >= 0 with y = 1 + z.
 * Uses w->vn and w->lam as scratch. */
static int locked(svi_propagative* w, const prep* p) {
  int nc = p->nc;
  double* q = w->vn;
  double* z = w->lam;
  double y1 = 0, s1 = 0;
  for (int i = 0; i < nc; i++) {
    q[i] = 0;
    for (int j = 0; j < nc; j++) q[i] += w->A[i * nc + j];
    y1 += q[i];
    s1 += w->A[i * nc + i];
  }
  /* y = 1 already gives y^T A y ~ 0 (A 1 ~ 0: the LCP below would be posed on round-off) */
  if (y1 <= 1e-12 * s1) return 1;
  if (svi_lcp_lemke(w->lcp, nc, w->A, q, NULL, NULL, z, NULL) < 0) return 0;
  double yay = 0, scale = 0;
  for (int i = 0; i < nc; i++) {
    double ayi = 0;
    for (int j = 0; j < nc; j++) ayi += w->A[i * nc + j] * (1 + z[j]);
    yay += (1 + z[i]) * ayi;
    scale += (1 + z[i]) * (1 + z[i]) * w->A[i * nc + i];
  }
  return yay <= 1e-12 * scale;
}

/* approaching contacts of vn into w->idx; returns their number */
static int approaching(const svi_propagative* w, const prep* p, const double* vn) {
  int m = 0;
  for (int i = 0; i < p->nc; i++)
    if (vn[i] < -p->tol && w->isd[i] > 0) w->idx[m++] = i;
  return m;
}

/* One single-contact elastic impact at contact i, eq. (4) and (7) in contact space:
 * lambda = -2 <p,u_i>_g / ||u_i||_g^2 is the non-trivial root of (4), and the reflection maps
 * <p,u_i>_g to its negative (set exactly, so the contact leaves at +|vn_i|). */
static void reflect(const double* A, int nc, double* vn, double* lam, int i) {
  double vi = vn[i], d = -2.0 * vi / A[i * nc + i];
  lam[i] += d;
  for (int j = 0; j < nc; j++) vn[j] += d * A[j * nc + i];
  vn[i] = -vi;
}

/* The contact resolved next among the m approaching ones (w->idx). */
static int choose(const svi_propagative* w, const svi_propagative_config* cfg, const double* vn,
                  int m, uint64_t k, int attempt, int step) {
  if (cfg->order == SVI_ORDER_RANDOM) {
    double r = svi_rng_uniform(cfg->seed, PROP_STREAM ^ k, ((uint64_t)attempt << 32) | (uint32_t)step);
    int j = (int)(r * m);
    return w->idx[j < m ? j : m - 1];
  }
  int best = w->idx[0];
  double bv = vn[best] * w->isd[best];
  for (int a = 1; a < m; a++) {
    int i = w->idx[a];
    double x = vn[i] * w->isd[i];   /* <p, u_i / ||u_i||_g>_g */
    if (cfg->order == SVI_ORDER_MOST_VIOLATED ? x < bv : x > bv) { best = i; bv = x; }
  }
  return best;
}

/* The elastic propagation of eq. (14) in one order: reflect an approaching contact until none is
 * approaching.  Never reflects a feasible momentum and never the same contact twice in a row
 * (it leaves separating): the consequences of Definition 1 the paper uses (Lemma 1).  Two
 * contacts end within ceil(pi / (2 gamma)) reflections, cos 2 gamma = -c_12 (Theorem 1 gives
 * ceil(pi / gamma)); three or more have no proven bound, hence max_reflections.
 * Result in w->lam, its length in *len.  Returns 1 if it terminated within max_reflections. */
static int propagate(svi_propagative* w, const prep* p, const svi_propagative_config* cfg,
                     uint64_t k, int attempt, int* len) {
  int nc = p->nc;
  memcpy(w->vn, w->vn0, sizeof(double) * nc);
  memset(w->lam, 0, sizeof(double) * nc);
  for (int step = 0;; step++) {
    int m = approaching(w, p, w->vn);
    if (m == 0) { *len = step; return 1; }
    if (step >= cfg->max_reflections) { *len = step; return 0; }
    reflect(w->A, nc, w->vn, w->lam, choose(w, cfg, w->vn, m, k, attempt, step));
  }
}

/* Blend with the plastic outcome, eq. (17) with alpha = e (the printed alpha = (1-R^2)^1/2 swaps
 * the ends; digest 004 errata 1):
 *     lambda = (1 - e) lambda_p + e lambda_e,   v+ = v- + M^-1 J_n^T lambda = v_p + e (v_e - v_p)
 * Energy: KE(v-) - KE(v+) = (1 - e^2) E_p - 2 e (1 - e) sigma, sigma = (J_n v_p) . lambda_e >= 0,
 * so the (1 - e^2) E_p of (16)-(18) is an upper bound, exact iff sigma = 0 (docs/theory.md 8.2).
 * Then the validity check in physical units.  Writes w->lam_b and w->v.  SVI_OK iff valid. */
static int finish(svi_propagative* w, const svi_impact* s, const prep* p, const double* lam_e,
                  double* min_vn, double* ke) {
  int nc = p->nc, nv = p->nv;
  double e = p->e;
  for (int i = 0; i < nc; i++)
    w->lam_b[i] = e == 1 ? lam_e[i] : e == 0 ? w->lam_p[i] : (1 - e) * w->lam_p[i] + e * lam_e[i];
  memcpy(w->v, s->v0, sizeof(double) * nv);
  for (int r = 0; r < nv; r++) {
    double a = 0;
    for (int i = 0; i < nc; i++) a += s->G[r * p->nb + i] * w->lam_b[i];
    w->v[r] += a;
  }
  int ok = 1;
  for (int r = 0; r < nv; r++) ok &= isfinite(w->v[r]);
  for (int i = 0; i < nc; i++) ok &= w->lam_b[i] >= 0;
  svi_matvec(nc, nv, s->Jbar, w->v, w->vn_chk);
  double mv = INFINITY;
  for (int i = 0; i < nc; i++) mv = fmin(mv, w->vn_chk[i]);
  double k1 = svi_impact_kinetic_energy(s, w->v);
  ok &= mv >= -p->vtol && k1 <= p->ke0 * (1 + PROP_KE_TOL);
  if (min_vn) *min_vn = mv;
  if (ke) *ke = k1;
  return ok ? SVI_OK : SVI_ERR_RESIDUAL;
}

static void emit(const svi_propagative* w, const prep* p, double* v_out, double* lambda_n) {
  memcpy(v_out, w->v, sizeof(double) * p->nv);
  if (lambda_n) memcpy(lambda_n, w->lam_b, sizeof(double) * p->nc);
}

int svi_propagative_outcome(svi_propagative* w, const svi_impact* s,
                            const svi_propagative_config* cfg, uint64_t k, double* v_out,
                            double* lambda_n, svi_propagative_info* info) {
  svi_propagative_info local;
  if (!info) info = &local;
  memset(info, 0, sizeof(*info));
  prep p;
  int st = v_out ? prepare(w, s, cfg, &p) : SVI_ERR_ARG;
  if (st < 0) return info->status = st;
  info->ke_before = p.ke0;
  info->tol = p.vtol;
  if (!p.impact) {                           /* nothing approaches: no impulse */
    memcpy(v_out, s->v0, sizeof(double) * p.nv);
    if (lambda_n) memset(lambda_n, 0, sizeof(double) * p.nc);
    info->ke_after = p.ke0;
    info->min_vn = INFINITY;
    for (int i = 0; i < p.nc; i++) info->min_vn = fmin(info->min_vn, w->vn0[i]);
    return info->status = SVI_OK;
  }
  int fail = SVI_OK;
  if (p.e < 1 && (st = solve_plastic(w, &p)) < 0) {
    fail = st;                               /* no plastic reference: nothing to blend with */
  } else if (p.e > 0) {
    int tries = cfg->order == SVI_ORDER_RANDOM ? 1 + cfg->max_retries : 1;
    for (int a = 0; a < tries; a++) {
      int len = 0;
      info->attempts++;
      if (!propagate(w, &p, cfg, k, a, &len)) {
        info->rejected++;
        fail = SVI_ERR_MAXITER;
        if (a == 0 && (info->locked = locked(w, &p))) break;   /* no order can end */
        continue;
      }
      if (finish(w, s, &p, w->lam, &info->min_vn, &info->ke_after) == SVI_OK) {
        info->reflections = len;
        emit(w, &p, v_out, lambda_n);
        return info->status = SVI_OK;
      }
      info->rejected++;
      fail = SVI_ERR_RESIDUAL;
    }
  } else {
    info->attempts = 1;
    if (finish(w, s, &p, w->lam_p, &info->min_vn, &info->ke_after) == SVI_OK) {
      emit(w, &p, v_out, lambda_n);
      return info->status = SVI_OK;
    }
    info->rejected = 1;
    fail = SVI_ERR_RESIDUAL;
  }
  /* no valid outcome: the plastic one if it is valid (it is the e = 0 member of the law), else v- */
  if (solve_plastic(w, &p) == SVI_OK) {
    prep pp = p;
    pp.e = 0;
    if (finish(w, s, &pp, w->lam_p, &info->min_vn, &info->ke_after) == SVI_OK) {
      info->fallback = 1;
      emit(w, &p, v_out, lambda_n);
      return info->status = fail;
    }
  }
  info->fallback = 2;
  memcpy(v_out, s->v0, sizeof(double) * p.nv);
  if (lambda_n) memset(lambda_n, 0, sizeof(double) * p.nc);
  info->ke_after = p.ke0;
  info->min_vn = INFINITY;
  for (int i = 0; i < p.nc; i++) info->min_vn = fmin(info->min_vn, w->vn0[i]);
  return info->status = fail;
}

/* ---- the set ------------------------------------------------------------------------------ */

typedef struct {
  svi_propagative* w;
  const svi_impact* s;
  prep* p;
  double* v_out;
  double* lambda_n;
  int max_out;
  svi_propagative_set_info* info;
} set_ctx;

/* Add the outcome of one ended branch (elastic impulse lam_e, sequence length len). */
static void add_outcome(set_ctx* c, const double* lam_e, int len) {
  svi_propagative* w = c->w;
  svi_propagative_set_info* info = c->info;
  int nv = c->p->nv;
  info->orders++;
  if (finish(w, c->s, c->p, lam_e, NULL, NULL) != SVI_OK) {
    info->rejected++;
    return;
  }
  if (info->min_length < 0 || len < info->min_length) info->min_length = len;
  if (len > info->max_length) info->max_length = len;
  chol_t(c->s, w->v, w->y);
  double tol2 = PROP_DUP_TOL * c->p->norm0;
  tol2 *= tol2;
  int stored = info->count < w->set_max ? info->count : w->set_max;
  for (int j = 0; j < stored; j++) {
    const double* yj = w->set_y + (size_t)j * nv;
    double d2 = 0;
    for (int r = 0; r < nv && d2 <= tol2; r++) d2 += (yj[r] - w->y[r]) * (yj[r] - w->y[r]);
    if (d2 <= tol2) return;
  }
  if (info->count >= w->set_max) {
    info->truncated = 1;
    return;
  }
  memcpy(w->set_y + (size_t)info->count * nv, w->y, sizeof(double) * nv);
  if (info->count < c->max_out) {
    memcpy(c->v_out + (size_t)info->count * nv, w->v, sizeof(double) * nv);
    if (c->lambda_n) memcpy(c->lambda_n + (size_t)info->count * c->p->nc, w->lam_b, sizeof(double) * c->p->nc);
  }
  info->count++;
}

/* Depth-first over every order: at each level, branch on every approaching contact.  Returns 1
 * if every branch ended, 0 if the tree was explored but some branches reached the depth cap
 * min(max_reflections, PROP_DEPTH_MAX) (counted as rejected), -1 if the reflection budget ran
 * out first. */
static int enumerate(set_ctx* c, const svi_propagative_config* cfg) {
  svi_propagative* w = c->w;
  const prep* p = c->p;
  int nc = p->nc, enc = w->enc, lvl = 0, capped = 0;
  int depth = cfg->max_reflections < PROP_DEPTH_MAX ? cfg->max_reflections : PROP_DEPTH_MAX;
  memcpy(w->st_vn, w->vn0, sizeof(double) * nc);
  memset(w->st_lam, 0, sizeof(double) * nc);
  w->nxt[0] = -1;
  while (lvl >= 0) {
    double* vn = w->st_vn + (size_t)lvl * enc;
    double* lam = w->st_lam + (size_t)lvl * enc;
    if (w->nxt[lvl] < 0) {                  /* first visit of this node */
      if (approaching(w, p, vn) == 0) { add_outcome(c, lam, lvl); lvl--; continue; }
      if (lvl == depth) { c->info->orders++; c->info->rejected++; capped = 1; lvl--; continue; }
      w->nxt[lvl] = 0;
    }
    int i = w->nxt[lvl];
    while (i < nc && !(vn[i] < -p->tol && w->isd[i] > 0)) i++;
    if (i == nc) { lvl--; continue; }
    w->nxt[lvl] = i + 1;
    if (c->info->reflections >= cfg->enum_budget) return -1;
    c->info->reflections++;
    double* vn1 = vn + enc;
    double* lam1 = lam + enc;
    memcpy(vn1, vn, sizeof(double) * nc);
    memcpy(lam1, lam, sizeof(double) * nc);
    reflect(w->A, nc, vn1, lam1, i);
    w->nxt[++lvl] = -1;
  }
  return !capped;
}

int svi_propagative_all(svi_propagative* w, const svi_impact* s,
                        const svi_propagative_config* cfg, double* v_out, double* lambda_n,
                        int max_out, svi_propagative_set_info* info) {
  if (!info) return SVI_ERR_ARG;
  memset(info, 0, sizeof(*info));
  info->min_length = -1;
  prep p;
  int st = (max_out > 0 && !v_out) || max_out < 0 ? SVI_ERR_ARG : prepare(w, s, cfg, &p);
  if (st < 0) return info->status = st;
  set_ctx c = {w, s, &p, v_out, lambda_n, max_out, info};
  if (!p.impact) {
    /* nothing approaches: the one outcome is v- */
    p.e = 1;
    memset(w->lam, 0, sizeof(double) * p.nc);
    add_outcome(&c, w->lam, 0);
    info->exhaustive = 1;
  } else if (p.e < 1 && (st = solve_plastic(w, &p)) < 0) {
    return info->status = st;
  } else if (p.e == 0) {
    /* one outcome whatever the order: the plastic one */
    add_outcome(&c, w->lam_p, 0);
    info->exhaustive = 1;
  } else if ((info->locked = locked(w, &p))) {
    /* no elastic outcome exists: an empty set, reported (one LCP instead of the whole budget) */
  } else {
    int done = -1;
    if (p.nc <= cfg->enum_max_contacts && p.nc <= w->enc) done = enumerate(&c, cfg);
    info->exhaustive = done == 1;
    if (done != 1) {
      /* too many contacts, budget exhausted or branches deeper than the stack: add the outcomes
       * k = 0..samples-1 of random orders (capped at max_reflections each) */
      svi_propagative_config rc = *cfg;
      rc.order = SVI_ORDER_RANDOM;
      for (long long k = 0; k < cfg->samples; k++) {
        int len = 0;
        int ok = propagate(w, &p, &rc, (uint64_t)k, 0, &len);
        info->reflections += len;
        if (ok) {
          add_outcome(&c, w->lam, len);
        } else {
          info->orders++;
          info->rejected++;
        }
      }
    }
  }
  if (info->min_length < 0) info->min_length = 0;
  /* xi over the stored distinct outcomes (Euclidean in L^T v = M-norm) */
  int n = info->count < w->set_max ? info->count : w->set_max;
  double dmax = 0;
  for (int a = 0; a < n; a++)
    for (int b = a + 1; b < n; b++) {
      double d2 = 0;
      for (int r = 0; r < p.nv; r++) {
        double d = w->set_y[(size_t)a * p.nv + r] - w->set_y[(size_t)b * p.nv + r];
        d2 += d * d;
      }
      dmax = fmax(dmax, d2);
    }
  info->xi = p.norm0 > 0 ? sqrt(dmax) / p.norm0 : 0;
  return info->status = info->count > 0 ? SVI_OK : SVI_ERR_MAXITER;
}

/* ---- indeterminacy and coupling ----------------------------------------------------------- */

double svi_indeterminacy(const svi_impact* s, const double* v_set, int count) {
  if (!s || !v_set || count < 2) return 0;
  int nv = s->nv;
  double n0 = 0, dmax = 0;
  for (int i = 0; i < nv; i++)
    for (int j = 0; j < nv; j++) n0 += s->v0[i] * s->M[i * nv + j] * s->v0[j];
  if (!(n0 > 0)) return 0;
  for (int a = 0; a < count; a++)
    for (int b = a + 1; b < count; b++) {
      const double *x = v_set + (size_t)a * nv, *y = v_set + (size_t)b * nv;
      double d2 = 0;
      for (int i = 0; i < nv; i++) {
        double r = 0;
        for (int j = 0; j < nv; j++) r += s->M[i * nv + j] * (x[j] - y[j]);
        d2 += (x[i] - y[i]) * r;
      }
      dmax = fmax(dmax, d2);
    }
  return sqrt(dmax / n0);
}

double svi_normal_coupling(const svi_impact* s, double* c) {
  if (!s || s->nc <= 0) return 0;
  int nc = s->nc;
  double m = 0;
  for (int i = 0; i < nc; i++)
    for (int j = 0; j < nc; j++) {
      double aii = svi_impact_w(s, i, i), ajj = svi_impact_w(s, j, j);
      double x = aii > 0 && ajj > 0 ? svi_impact_w(s, i, j) / sqrt(aii * ajj) : 0;
      if (c) c[i * nc + j] = x;
      if (i != j) m = fmax(m, fabs(x));
    }
  return m;
}
