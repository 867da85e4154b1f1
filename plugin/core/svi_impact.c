/* svi_impact.c -- the impact problem in contact space.
 *
 * Given M, J_n, J_t, mu and v^-, build J_D (each tangent row t gives directions +t and -t, so
 * the linearised cone of eq. (32)-(33) is the pyramid spanned by them), G = M^-1 Jbar^T, the
 * Delassus matrix W = Jbar M^-1 Jbar^T, and the two constant LCP matrices:
 *
 *   eq. (31)-(33), Anitescu-Potra, z = [l_n; l_D; gamma]:
 *       [ W_nn  W_nD  0 ]          [ J_n v ]
 *       [ W_Dn  W_DD  E ]  ,  q =  [ J_D v ]
 *       [ mu   -E^T   0 ]          [   0   ]
 *   eq. (75b), Routh step, z = [beta; l_n; l_D; gamma]:
 *       [ 0  -I    0    0 ]        [ l_n,max ]
 *       [ I  W_nn  W_nD 0 ]        [ J_n v   ]
 *       [ 0  W_Dn  W_DD E ]  , q = [ J_D v   ]
 *       [ 0  mu   -E^T  0 ]        [   0     ]
 * Only q changes between the steps of one impact, so the matrices are built once per event.
 */
#define _DEFAULT_SOURCE   /* MAP_ANONYMOUS */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__unix__) || defined(__APPLE__)
#include <sys/mman.h>
#endif

#include "svi_internal.h"

/* SVI_SOLVER_AUTO: the low-rank Lemke only from this many impulse rows (lowrank_pays) */
#define LOWRANK_MIN_NB 40
/* handover_neta: no handover of a long dense path beyond this many velocities */
#define HANDOVER_MAX_NV 30
/* G's columns solved together (usolve_env_cols_u, _ut) from this many, one by one (usolve_env_u,
 * _ut) below:
 * a column alone skips the dofs of the tree's other branches, the columns together run as
 * vectors (a two-legged robot on 98 contacts: 2.1 k instructions a column alone, 0.5 k together;
 * a humanoid of 62 dofs on 2 contacts, 6 columns: 3x dearer together) */
#define GCOLS_MIN 16
/* when the low-rank Lemke fails on a (75) of at most this size, the dense one tries */
#define LOWRANK_DENSE_FALLBACK 256

void svi_matvec(int r, int c, const double* A, const double* x, double* y) {
  for (int i = 0; i < r; i++) {
    double s = 0;
    const double* a = A + (size_t)i * c;
    for (int j = 0; j < c; j++) s += a[j] * x[j];
    y[i] = s;
  }
}

void svi_matvec_add(int r, int c, const double* A, const double* x, double* y) {
  for (int i = 0; i < r; i++) {
    double s = 0;
    const double* a = A + (size_t)i * c;
    for (int j = 0; j < c; j++) s += a[j] * x[j];
    y[i] += s;
  }
}

/* the pairs of an enumerated step's (75): 3 + nd per contact, nc <= 4, rounded up to 4 */
#define PAIRS_MAX (7 * 4 + 4)

/* Lay out every array of the workspace in one block; with block == NULL only count.  s->block_size
 * is set (workspace_alloc) before the block is carved. */
static size_t carve(svi_impact* s, double* block) {
  int nb = s->nc_max * (1 + 2 * s->nt_max), nr = s->nc_max * (3 + 2 * s->nt_max);
  int nv = s->nv_max;
  struct { double** p; size_t n; } parts[] = {
    {&s->M, nv * nv}, {&s->U, nv * nv}, {&s->Jbar, nb * nv},
    {&s->Jt, s->nc_max * s->nt_max * nv}, {&s->G, nv * nb}, {&s->Gt, nb * nv}, {&s->Gp, nv * nb}, {&s->W, nb * nb},
    {&s->mu, s->nc_max}, {&s->v0, nv}, {&s->u0, nb}, {&s->A_ap, nr * nr},
    {&s->A_routh, nr * nr}, {&s->q, nr}, {&s->z, nr}, {&s->d, nr}, {&s->lam, nb},
    {&s->Lam, nb}, {&s->u, nb}, {&s->v, nv}, {&s->A_one, nr * nr}, {&s->lmax, s->nc_max}, {&s->vn, nb},
    {&s->sols, SVI_ENUM_MAX_SOLS * nr}, {&s->dv, SVI_ENUM_MAX_SOLS * nv}, {&s->sign, nr}, {&s->seen, SVI_ENUM_MAX_SOLS * 3 * s->nc_max},
    {&s->Wr, 9 * s->nc_max * s->nc_max}, {&s->Wr4, 12 * 12}, {&s->kappa, s->nc_max}, {&s->zunit, nr},
    {&s->wunit, nr}, {&s->lr_scratch, 2 * nr + 2 * nv}, {&s->u_next, nb},
    {&s->pair_units, 3 * PAIRS_MAX}, {&s->pair_w, nr}, {&s->pair_mag, nr}};
  size_t used = 0;
  for (size_t i = 0; i < sizeof(parts) / sizeof(parts[0]); i++) {
    if (block) {
      *parts[i].p = block + used;
      /* fresh pages (workspace_alloc): the first 64 KiB of each array made resident now, the
       * part a small event uses, so that its first impact step does not take their page faults */
      if (s->block_size) memset(*parts[i].p, 0, sizeof(double) * (parts[i].n < 8192 ? parts[i].n : 8192));
    }
    used += (parts[i].n + 7) & ~(size_t)7;   /* every array from a cache line (svi_alloc64) */
  }
  return used;
}

/* The workspace: n zeroed bytes from a cache line (s->block, s->block_size for the release).
 * From 1 MiB on, fresh anonymous pages (mmap): zero without being written, so only the pages an
 * event touches become resident.  The dense matrices are sized for max_contacts (7 rows a
 * contact), and aligned_alloc + memset wrote zeros through all of them at mj_makeData: 1.5 GB
 * resident and 1.8 s for an instance of 1 024 contacts, whose event of 98 contacts uses 1/50 of
 * them (calloc maps such blocks too, but below its dynamic threshold, up to 32 MB, it may take
 * them from the heap and clear them).  Smaller blocks keep aligned_alloc, so the small examples'
 * heap layout (and their per-sample times) does not move. */
static double* workspace_alloc(svi_impact* s, size_t n) {
  n = svi_lines64(n);
#if defined(MAP_ANONYMOUS)
  if (n >= ((size_t)1 << 20)) {
    void* p = mmap(NULL, n, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return NULL;
    s->block = p;
    s->block_size = n;
    return p;
  }
#endif
  s->block = svi_alloc64(n);
  s->block_size = 0;
  if (s->block) memset(s->block, 0, n);
  return s->block;
}

static void workspace_free(svi_impact* s) {
#if defined(MAP_ANONYMOUS)
  if (s->block_size) {
    munmap(s->block, s->block_size);
    s->block = NULL;
    return;
  }
#endif
  free(s->block);
  s->block = NULL;
}

/* The arrays of the per-event pattern maps (planar, up to 3 contacts: 343 patterns of 2 x 6 x 9
 * doubles and their feasibility rows, about 1.5 MB at nc_max >= 3), allocated while the maps may
 * be used (not under svi_impact_set_step_solve).  patterns_alloc returns 0 (nothing allocated)
 * if memory runs out. */
static void patterns_free(svi_impact* s) {
  void* p[] = {s->pattern_map, s->pattern_ok, s->pattern_row0, s->pattern_F, s->pattern_tau,
               s->pattern_hits, s->pattern_pass, s->pattern_idx,
               s->pattern_blk0, s->pattern_blk, s->pattern_frow, s->pattern_uc,
               s->pattern_pre, s->pattern_pk, s->pattern_cell};
  for (size_t i = 0; i < sizeof(p) / sizeof(p[0]); i++) free(p[i]);
  s->pattern_map = NULL; s->pattern_ok = NULL; s->pattern_row0 = NULL; s->pattern_F = NULL;
  s->pattern_tau = NULL; s->pattern_hits = NULL;
  s->pattern_pass = NULL; s->pattern_idx = NULL; s->pattern_blk0 = NULL; s->pattern_blk = NULL;
  s->pattern_frow = NULL; s->pattern_uc = NULL; s->pattern_pre = NULL;
  s->pattern_pk = NULL;
  s->pattern_cell = NULL;
  s->pattern_cells_ok = 0;
  free(s->smap);
  free(s->smap_kind);
  s->smap = NULL;
  s->smap_kind = NULL;
  s->smap_ready = 0;
  s->pattern_cap = 0;
  s->pattern_pre_ok = 0;
  s->n_patterns = 0;
}

static int patterns_alloc(svi_impact* s) {
  int pc = s->nc_max < 3 ? s->nc_max : 3, np = 1;
  for (int i = 0; i < pc; i++) np *= 7;
  int npad = (np + 3) & ~3;
  s->pattern_map = svi_alloc64(sizeof(double) * (size_t)np * 2 * (2 * pc) * (3 * pc));
  s->pattern_ok = malloc((size_t)np);
  /* at most 8 rows per contact: 4 sign conditions, 4 consistency rows of a singular pattern */
  s->pattern_row0 = malloc(sizeof(int) * (size_t)(np + 1));
  s->pattern_F = svi_alloc64(sizeof(double) * (size_t)np * 8 * pc * 3 * pc);
  s->pattern_tau = svi_alloc64(sizeof(double) * (size_t)np * 8 * pc);
  s->pattern_hits = malloc(sizeof(int) * (size_t)np * 8 * pc);
  s->pattern_pass = malloc(sizeof(int) * (size_t)npad * 2);
  s->pattern_idx = malloc(sizeof(int) * (size_t)(npad + 4));
  s->pattern_blk0 = malloc(sizeof(int) * (size_t)(np + 1));
  s->pattern_blk = svi_alloc64(sizeof(double) * (size_t)np * 2 * pc * (4 * 3 * pc + 4));
  s->pattern_frow = malloc(sizeof(int) * (size_t)npad * 2);
  s->pattern_uc = svi_alloc64(sizeof(double) * (size_t)np * (3 * pc) * (pc <= 2 ? 4 : 8));
  /* the prefixes: blocks 4 x np 2 pc, U np x m2pad, X np x 2 pc; the packed groups */
  s->pattern_pre = svi_alloc64(sizeof(double) * (size_t)np * (8 * pc + (pc <= 2 ? 4 : 8) + 2 * pc));
  s->pattern_pk = svi_alloc64(sizeof(double) * (size_t)(npad / 4) * 2 * (3 * pc + 2) * 4);
  s->pattern_cell = svi_alloc64(sizeof(uint64_t) * SVI_CELL_WORDS_MAX);
  if (s->nt_max == 2) {   /* the spatial maps of up to two contacts (svi_modes.c) */
    s->smap = svi_alloc64(sizeof(double) * SVI_SMAP_PATTERNS * SVI_SMAP_STRIDE);
    s->smap_kind = malloc(sizeof(int) * SVI_SMAP_PATTERNS);
    if (!s->smap || !s->smap_kind) { patterns_free(s); return 0; }
  }
  if (!s->pattern_map || !s->pattern_ok || !s->pattern_row0 || !s->pattern_F || !s->pattern_tau ||
      !s->pattern_hits || !s->pattern_pass ||
      !s->pattern_idx || !s->pattern_blk0 || !s->pattern_blk || !s->pattern_frow ||
      !s->pattern_uc || !s->pattern_pre || !s->pattern_pk || !s->pattern_cell) {
    patterns_free(s);
    return 0;
  }
  s->pattern_cap = np;
  return 1;
}

svi_impact* svi_impact_create(int nv_max, int nc_max, int nt_max) {
  if (nv_max <= 0 || nc_max <= 0 || nt_max <= 0 || nt_max > 2) return NULL;
  svi_impact* s = calloc(1, sizeof(*s));
  if (!s) return NULL;
  s->nv_max = nv_max;
  s->nc_max = nc_max;
  s->nt_max = nt_max;
  s->handover_req = -1;
  double* block = workspace_alloc(s, sizeof(double) * carve(s, NULL));
  s->lcp = svi_lcp_work_create(nc_max * (3 + 2 * nt_max));
  s->lr = svi_lr_create(nc_max, nv_max);
  if (!block || !s->lcp || !s->lr) {
    workspace_free(s);
    svi_lcp_work_destroy(s->lcp);
    svi_lr_destroy(s->lr);
    free(s);
    return NULL;
  }
  carve(s, block);
  s->order = malloc(sizeof(int) * (size_t)(nc_max * (3 + 2 * nt_max)));
  patterns_alloc(s);
  int nrt = nc_max * (3 + 2 * nt_max);
  if (nrt > SVI_AT_NMAX) nrt = SVI_AT_NMAX;
  s->Ant_routh = malloc(sizeof(double) * (size_t)nrt * nrt);
  s->Ant_ap = malloc(sizeof(double) * (size_t)nrt * nrt);
  s->Ant_nz = malloc(sizeof(int) * 2 * SVI_AT_NMAX);
  s->routh_nz = malloc(sizeof(int) * 2 * (size_t)(nc_max * (3 + 2 * nt_max)));
  {   /* per-pattern velocity bounds of the directly solved enumerations, up to 4 contacts */
    int sc = nc_max < 4 ? nc_max : 4;
    s->sm_c = malloc(sizeof(double) * (size_t)sc * 19 * 3 * sc * 3);
    if (!s->sm_c) { svi_impact_destroy(s); return NULL; }
  }
  if (nt_max == 2) {   /* spatial enumeration tables, up to 4 contacts of 19 modes */
    int sc = nc_max < 4 ? nc_max : 4;
    s->smode = svi_smode_alloc(sc);
    s->sm_wd = malloc(sizeof(double) * (size_t)sc * 19 * 3 * 3 * sc);
    s->sm_vf = malloc(sizeof(double) * (size_t)sc * 19 * 3 * sc);
    s->sm_xf = malloc(sizeof(double) * (size_t)sc * 19 * 3);
    if (!s->smode || !s->sm_wd || !s->sm_vf || !s->sm_xf || !svi_smode_event_alloc(s)) {
      svi_impact_destroy(s);
      return NULL;
    }
  } else if (!svi_smode_event_alloc(s)) {   /* the planar patterns' kept factors */
    svi_impact_destroy(s);
    return NULL;
  }
  /* last: an allocation earlier in this sequence moves the pattern maps' heap addresses, which
   * moved the per-sample medians of the small examples by 10-15 % (svi_lcp.c, the eta file) */
  s->lo = malloc(sizeof(int) * (size_t)nv_max);
  s->hi = malloc(sizeof(int) * (size_t)nv_max);
  s->w_row_ok = malloc((size_t)nc_max * (1 + 2 * nt_max));
  s->Hp = svi_alloc64(sizeof(double) * (size_t)nv_max * nc_max * (1 + nt_max));
  if (!s->order || !s->lo || !s->hi || !s->w_row_ok || !s->Hp || !s->pattern_map || !s->Ant_routh ||
      !s->Ant_ap || !s->Ant_nz ||
      !s->routh_nz) {
    svi_impact_destroy(s);
    return NULL;
  }
  return s;
}

void svi_impact_destroy(svi_impact* s) {
  if (!s) return;
  workspace_free(s);   /* M, U, ... are carved from it */
  free(s->order);
  free(s->lo);
  free(s->hi);
  free(s->w_row_ok);
  free(s->Hp);
  free(s->smode);
  free(s->sm_c);
  free(s->sm_wd);
  free(s->sm_vf);
  free(s->sm_xf);
  free(s->sm_fac);
  free(s->sm_kf);
  free(s->sm_test);
  free(s->sm_pp);
  patterns_free(s);

  free(s->Ant_routh);
  free(s->Ant_ap);
  free(s->Ant_nz);
  free(s->routh_nz);
  svi_lcp_work_destroy(s->lcp);
  svi_lr_destroy(s->lr);
  free(s);
}

void svi_impact_set_solver(svi_impact* s, svi_solver solver) {
  if (s) s->solver = solver;
}

void svi_impact_set_handover(svi_impact* s, int neta) {
  if (s) s->handover_req = neta < 0 ? -1 : neta;
}

void svi_impact_set_step_solve(svi_impact* s, int on) {
  if (!s) return;
  s->step_solve = on != 0;
  if (s->step_solve) patterns_free(s);   /* the maps' memory is not kept for nothing */
  else if (!s->pattern_map && !patterns_alloc(s)) s->step_solve = 1;   /* no memory: solve at the step */
}

static int fail(char* err, int errlen, int status, const char* msg) {
  if (err && errlen > 0) snprintf(err, (size_t)errlen, "%s", msg);
  return status;
}

/* A = L L^T in place (lower triangle, row-major; the upper is zeroed); 0 if A is not positive
 * definite.  The small dense systems of the mode enumeration and the pseudo-impulse. */
int svi_cholesky(int n, double* L) {
  for (int j = 0; j < n; j++) {
    double d = L[j * n + j];
    for (int k = 0; k < j; k++) d -= L[j * n + k] * L[j * n + k];
    if (!(d > 0)) return 0;
    d = sqrt(d);
    L[j * n + j] = d;
    for (int i = j + 1; i < n; i++) {
      double s = L[i * n + j];
      for (int k = 0; k < j; k++) s -= L[i * n + k] * L[j * n + k];
      L[i * n + j] = s / d;
    }
    for (int k = j + 1; k < n; k++) L[j * n + k] = 0;
  }
  return 1;
}

/* Row envelopes: lo_i the first nonzero of row i's lower part, and hi_i the last nonzero of its
 * upper part, both read from the row itself (a mass matrix the set-up accepts is symmetric to
 * 1e-10 only, not bit for bit). */
static void envelope(int n, const double* M, int* lo, int* hi) {
  for (int i = 0; i < n; i++) {
    int k = 0;
    while (k < i && M[i * n + k] == 0) k++;
    lo[i] = k;
    k = n - 1;
    while (k > i && M[i * n + k] == 0) k--;
    hi[i] = k;
  }
}

/* x <- A^-1 x with A = L L^T (svi_cholesky): L y = x from the first nonzero of x on, L^T x = y
 * from the last nonzero of y down (the products skipped are exact zeros) */
void svi_cholesky_solve(int n, const double* L, double* x) {
  int i0 = 0;
  while (i0 < n && x[i0] == 0) i0++;
  for (int i = i0; i < n; i++) {
    double s = x[i];
    for (int k = i0; k < i; k++) s -= L[i * n + k] * x[k];
    x[i] = s / L[i * n + i];
  }
  int i1 = n - 1;
  while (i1 >= i0 && x[i1] == 0) i1--;
  for (int i = i1; i >= 0; i--) {
    double s = x[i];
    for (int k = i + 1; k <= i1; k++) s -= L[k * n + i] * x[k];
    x[i] = s / L[i * n + i];
  }
}

/* The mass matrix as M = U U^T, U upper triangular (row-major, in place; the strictly lower part
 * is zeroed), eliminated from the last dof to the first (the Cholesky factor of M with its rows
 * and columns reversed); 0 if M is not positive definite.  For i = nv - 1 .. 0:
 *     U_ii = sqrt(M_ii - sum_{k > i} U_ik^2),   U_ji = (M_ji - sum_{k > i} U_jk U_ik) / U_ii  (j < i).
 * hi_i (envelope) is the last nonzero of row i's upper part; U_jk = 0 beyond hi_j (an entry right of
 * the envelope sums products of entries right of it), so every sum stops at the envelope.  A
 * kinematic tree numbers each body's dofs before its descendants' and a subtree's dofs
 * contiguously, so row i's upper part is its own subtree: U has M's nonzeros and no fill (a
 * floating base's rows span the tree, a limb's its chain below), where the factor eliminated from
 * the first dof fills every row that shares an ancestor.  MuJoCo's mj_factorM eliminates in the
 * same order for the same reason.  Only exact zeros are left out. */
static int ucholesky_env(int n, double* U, const int* hi) {
  for (int i = n - 1; i >= 0; i--) {
    double* ui = U + (size_t)i * n;
    int hii = hi[i];
    double d = ui[i];
    for (int k = i + 1; k <= hii; k++) d -= ui[k] * ui[k];
    if (!(d > 0)) return 0;
    d = sqrt(d);
    ui[i] = d;
    for (int j = i - 1; j >= 0; j--) {
      if (hi[j] < i) continue;   /* right of row j's envelope: U_ji = M_ji = 0 */
      double* uj = U + (size_t)j * n;
      int e = hii < hi[j] ? hii : hi[j];
      double s = uj[i];
      for (int k = i + 1; k <= e; k++) s -= uj[k] * ui[k];
      uj[i] = s / d;
    }
    for (int k = 0; k < i; k++) ui[k] = 0;
  }
  return 1;
}

static void build_jbar(svi_impact* s, const svi_problem_def* def) {
  int nv = s->nv, nc = s->nc, nt = s->nt, nd = s->nd;
  memcpy(s->Jbar, def->Jn, sizeof(double) * nc * nv);
  memcpy(s->Jt, def->Jt, sizeof(double) * nc * nt * nv);
  for (int i = 0; i < nc; i++) {
    for (int t = 0; t < nt; t++) {
      const double* jt = def->Jt + (size_t)(i * nt + t) * nv;
      double* plus = s->Jbar + (size_t)(nc + i * nd + 2 * t) * nv;
      double* minus = plus + nv;
      for (int k = 0; k < nv; k++) { plus[k] = jt[k]; minus[k] = -jt[k]; }
    }
  }
}

/* The reference impulse of the Routh step h = step * Lambda_ref (docs/theory.md 4.3):
 *
 *   Lambda_ref = max over approaching contacts i of lambda_n,i,
 *
 * lambda_n,i the normal impulse that stops contact i's approach on its own: the sticking impulse
 * lambda = -W_c^-1 u_c on its rows c = [n; t_1 (; t_2)] (W_c = J_c M^-1 J_c^T, u_c = J_c v-; W_c^-1 by
 * its cofactors, a determinant below 1e-12 of its diagonal's product taken as singular) where it
 * lies in the pyramid (lambda_n > 0, sum_k |lambda_t,k| <= mu lambda_n); outside it the sliding one,
 * the friction saturated along the sticking impulse's tangential part d = lambda_t / |lambda_t|_1:
 * lambda_n = -u_n / (W_nn + mu W_nt . d) (where that denominator is positive); the frictionless
 * -u_n / W_nn where either is smaller or neither applies, and at most SVI_STEP_REF_MAX times it
 * (a guard against a near-zero denominator).  Until the thirty-second session it was the
 * frictionless one alone, which friction can make several times too small: a rimless wheel's
 * landing spoke sticks with 5.9 times its frictionless impulse, and 84 % of its samples ran out
 * of max_steps = 10 steps (finished by (31)); the paper's examples' h are 0.8 to 2.7 times this
 * reference, 1.1 to 6.9 times the frictionless one. */
#define SVI_STEP_REF_MAX 100   /* a contact's reference at most this many frictionless impulses */
static inline __attribute__((always_inline)) double contact_stop_impulse(const svi_impact* s, int i, const int k) {
  int nc = s->nc, nd = s->nd, nv = s->nv, nbp = n_plus(s);
  int r[3] = {i, nc + i * nd, nc + i * nd + 2};   /* n, +t1, +t2: Jbar's rows */
  double w[3][3] = {{0}};   /* W_c's upper triangle */
  if (s->gram && !s->dense) {   /* H_a . H_b in one pass over Hp's rows (svi_impact_w's sums) */
    int p[3];
    for (int a = 0; a < k; a++) p[a] = plus_index(s, r[a]);
    for (int q = 0; q < nv; q++) {
      const double* h = s->Hp + (size_t)q * nbp;
      for (int a = 0; a < k; a++)
        for (int b = a; b < k; b++) w[a][b] += h[p[a]] * h[p[b]];
    }
  } else
    for (int a = 0; a < k; a++)
      for (int b = a; b < k; b++) w[a][b] = svi_impact_w(s, r[a], r[b]);
  double un = s->u0[i], rhs[3] = {-un, -s->u0[r[1]], k == 3 ? -s->u0[r[2]] : 0};
  if (!(w[0][0] > 0)) return 0;
  double l0 = -un / w[0][0], x[3] = {0, 0, 0};
  if (k == 2) {   /* W_c^-1 by cofactors (det <= a d; a small det: singular) */
    double a = w[0][0], b = w[0][1], d = w[1][1], det = a * d - b * b;
    if (det > 1e-12 * a * d) {
      x[0] = (d * rhs[0] - b * rhs[1]) / det;
      x[1] = (a * rhs[1] - b * rhs[0]) / det;
    }
  } else {
    double a = w[0][0], b = w[0][1], c = w[0][2], d = w[1][1], e = w[1][2], f = w[2][2];
    double c00 = d * f - e * e, c01 = c * e - b * f, c02 = b * e - c * d;
    double c11 = a * f - c * c, c12 = b * c - a * e, c22 = a * d - b * b;
    double det = a * c00 + b * c01 + c * c02;
    if (det > 1e-12 * a * d * f) {
      x[0] = (c00 * rhs[0] + c01 * rhs[1] + c02 * rhs[2]) / det;
      x[1] = (c01 * rhs[0] + c11 * rhs[1] + c12 * rhs[2]) / det;
      x[2] = (c02 * rhs[0] + c12 * rhs[1] + c22 * rhs[2]) / det;
    }
  }
  /* a singular W_c (a tangent with no mobility of its own) left x = 0: the frictionless one */
  double tsum = fabs(x[1]) + fabs(x[2]), ln = l0;
  if (!(isfinite(x[0]) && isfinite(tsum)) || tsum == 0) return l0;
  if (tsum <= s->mu[i] * x[0]) ln = x[0];   /* sticking, inside the pyramid */
  else {   /* sliding: the friction impulse saturated along the sticking one's, lambda_t = mu lambda_n x_t / |x_t|_1 */
    double den = w[0][0] + s->mu[i] * (w[0][1] * x[1] + (k == 3 ? w[0][2] * x[2] : 0)) / tsum;
    if (den > 1e-12 * w[0][0]) ln = -un / den;
  }
  return ln > l0 ? fmin(ln, SVI_STEP_REF_MAX * l0) : l0;
}

static double step_reference(const svi_impact* s) {
  double ref = 0;
  for (int i = 0; i < s->nc; i++) {
    if (!(s->u0[i] < 0)) continue;
    double l = s->nt == 2 ? contact_stop_impulse(s, i, 3) : contact_stop_impulse(s, i, 2);
    ref = fmax(ref, l);
  }
  return ref;
}

/* x <- M^-1 x with M = U U^T (ucholesky_env, hi its envelope), in two halves.  usolve_env_u: U y = x
 * from the last nonzero of x up: y_i = (x_i - sum_{i < k <= hi_i} U_ik y_k) / U_ii, 0 after that
 * nonzero (a Jbar row's dofs end with its bodies') and 0 where x_i = 0 and y is 0 over row i's
 * envelope (a dof whose subtree holds none of the row's).  usolve_env_ut: U^T x = y from the
 * first nonzero of y on, by columns of U^T (rows of U): x_k = y_k / U_kk, then y_j -= U_kj x_k
 * for k < j <= hi_k, one contiguous update (vectorised; each entry's operations in the same order
 * in every clone), skipped for x_k = 0. */
SVI_SIMD static void usolve_env_u(int n, const double* U, const int* hi, double* x) {
  int i1 = n - 1, nzlo = n;   /* nzlo: the first nonzero of y below row i */
  while (i1 >= 0 && x[i1] == 0) i1--;
  for (int i = i1; i >= 0; i--) {
    if (x[i] == 0 && hi[i] < nzlo) continue;   /* y_i = 0: not an ancestor of the row's dofs */
    const double* ui = U + (size_t)i * n;
    int e = hi[i] < i1 ? hi[i] : i1;
    double s = x[i];
    for (int k = i + 1; k <= e; k++) s -= ui[k] * x[k];
    x[i] = s / ui[i];
    if (x[i] != 0) nzlo = i;
  }
}

SVI_SIMD static void usolve_env_ut(int n, const double* U, const int* hi, double* x) {
  int i0 = 0;
  while (i0 < n && x[i0] == 0) i0++;
  for (int k = i0; k < n; k++) {
    const double* uk = U + (size_t)k * n;
    double xk = x[k] / uk[k];
    x[k] = xk;
    if (xk == 0) continue;   /* another tree's dofs: the update subtracts zeros */
    for (int j = k + 1; j <= hi[k]; j++) x[j] -= uk[j] * xk;
  }
}

/* usolve_env_u and usolve_env_ut on the m columns of X (n x m, rows contiguous) at once, each
 * row's update one contiguous run over the columns (vectorised), in their order per column:
 * U Y = X from the last row up, Y_i = (X_i - sum_{i < k <= hi_i} U_ik Y_k) / U_ii in increasing
 * k; then U^T X = Y by rows of U, X_k = Y_k / U_kk, then X_j -= U_kj X_k for k < j <= hi_k.  The
 * one-column solves leave out the terms of a column's zero entries and of U's zeros; these only
 * U's: a term U_ik 0 subtracts a zero, which changes no value (only the sign of a zero result). */
SVI_SIMD static void usolve_env_cols_u(int n, const double* U, const int* hi, int m, double* restrict X) {
  for (int i = n - 1; i >= 0; i--) {
    const double* ui = U + (size_t)i * n;
    double* restrict xi = X + (size_t)i * m;
    for (int k = i + 1; k <= hi[i]; k++) {
      double u = ui[k];
      if (u == 0) continue;
      const double* restrict xk = X + (size_t)k * m;
      for (int c = 0; c < m; c++) xi[c] -= u * xk[c];
    }
    double d = ui[i];
    for (int c = 0; c < m; c++) xi[c] = xi[c] / d;
  }
}

SVI_SIMD static void usolve_env_cols_ut(int n, const double* U, const int* hi, int m, double* restrict X) {
  for (int k = 0; k < n; k++) {
    const double* uk = U + (size_t)k * n;
    double* restrict xk = X + (size_t)k * m;
    double d = uk[k];
    for (int c = 0; c < m; c++) xk[c] = xk[c] / d;
    for (int j = k + 1; j <= hi[k]; j++) {
      double u = uk[j];
      if (u == 0) continue;
      double* restrict xj = X + (size_t)j * m;
      for (int c = 0; c < m; c++) xj[c] -= u * xk[c];
    }
  }
}

/* u = Jbar v, or u += Jbar v with add (svi_matvec's and svi_matvec_add's sums); a -t row's
 * product is its +t row's negated, exactly */
static void jbar_times(const svi_impact* s, const double* v, double* u, int add) {
  int nv = s->nv, nb = s->nb;
  double tp = 0;   /* the last +t row's product */
  for (int i = 0; i < nb; i++) {
    double t = 0;
    if (jbar_minus_row(s, i)) t = -tp;
    else {
      const double* a = s->Jbar + (size_t)i * nv;
      for (int k = 0; k < nv; k++) t += a[k] * v[k];
      tp = t;
    }
    u[i] = add ? u[i] + t : t;
  }
}

/* Jbar_p^T (nv x nbp: Jbar's rows other than the -t ones, transposed) into X */
static void jbar_p_t(const svi_impact* s, double* X) {
  int nv = s->nv, nb = s->nb, nbp = n_plus(s);
  for (int c = 0, cp = 0; c < nb; c++)
    if (!jbar_minus_row(s, c)) {
      const double* j = s->Jbar + (size_t)c * nv;
      for (int k = 0; k < nv; k++) X[(size_t)k * nbp + cp] = j[k];
      cp++;
    }
}

/* a[j] = f w[j] over the nb columns of Jbar's rows from the nbp values r on the columns other than
 * the -t ones (a row of Wp or of Gp): the normal columns, then each +t column and its -t one negated
 * (f = 1: the values themselves, exactly) */
SVI_SIMD static void spread_row(int nc, int np, double f, const double* restrict r, double* restrict a) {
  for (int j = 0; j < nc; j++) a[j] = f * r[j];
  for (int m = 0; m < np; m++) {
    double x = f * r[nc + m];
    a[nc + 2 * m] = x;
    a[nc + 2 * m + 1] = -x;
  }
}

/* Hp = U^-1 Jbar_p^T and Gp = U^-T Hp = M^-1 Jbar_p^T (nv x nbp: the columns other than the -t
 * ones, solved together from GCOLS_MIN columns, usolve_env_cols_u / _ut, one by one below), then
 * G = M^-1 Jbar^T (nv x nb) and its transpose Gt: a -t column is its +t one negated.  Hp (kept
 * under gram) is W's factor (W = Jbar U^-T U^-1 Jbar^T = Hp^T Hp on the +t columns: wp_row). */
static void build_g(svi_impact* s) {
  int nv = s->nv, nb = s->nb, nc = s->nc, nbp = n_plus(s);
  double *Gp = s->Gp, *Hp = s->Hp;
  jbar_p_t(s, Gp);
  if (nbp >= GCOLS_MIN) {
    usolve_env_cols_u(nv, s->U, s->hi, nbp, Gp);
    if (s->gram) memcpy(Hp, Gp, sizeof(double) * nv * nbp);
    usolve_env_cols_ut(nv, s->U, s->hi, nbp, Gp);
  } else
    for (int cp = 0; cp < nbp; cp++) {   /* few columns: each skips the dofs its rows leave out */
      double* g = s->lr_scratch;        /* nv */
      for (int k = 0; k < nv; k++) g[k] = Gp[(size_t)k * nbp + cp];
      usolve_env_u(nv, s->U, s->hi, g);
      if (s->gram) for (int k = 0; k < nv; k++) Hp[(size_t)k * nbp + cp] = g[k];
      usolve_env_ut(nv, s->U, s->hi, g);
      for (int k = 0; k < nv; k++) Gp[(size_t)k * nbp + cp] = g[k];
    }
  for (int k = 0; k < nv; k++)   /* G's row k: Gp's with the -t columns */
    spread_row(nc, nbp - nc, 1.0, Gp + (size_t)k * nbp, s->G + (size_t)k * nb);
  for (int c = 0, cp = 0; c < nb; c++) {
    double* g = s->Gt + (size_t)c * nv;
    if (jbar_minus_row(s, c)) for (int k = 0; k < nv; k++) g[k] = -g[k - nv];
    else {
      for (int k = 0; k < nv; k++) g[k] = Gp[(size_t)k * nbp + cp];
      cp++;
    }
  }
}

/* w_j = sum_{k < n} ji_k G_kj for every j, each sum in increasing k from 0 (the order of a dot
 * product of ji with column j of G), the terms of ji's zeros left out (exact zeros: the same sum,
 * up to the sign of a zero): G's rows are contiguous in j, so the AVX2 clone runs four columns
 * per vector with each lane's sum in that order, the same bits */
SVI_SIMD static void kern_row_times_g(int nb, int n, const double* restrict ji, const double* restrict G,
                                      double* restrict w) {
  int k = 0;
  while (k < n && ji[k] == 0) k++;   /* a dof of another branch of the tree: its terms are zeros */
  if (k == n) {
    for (int j = 0; j < nb; j++) w[j] = 0;
    return;
  }
  const double a0 = ji[k], *g0 = G + (size_t)k * nb;
  for (int j = 0; j < nb; j++) w[j] = 0.0 + a0 * g0[j];   /* the first term added to a zero */
  for (k++; k < n; k++) {
    double a = ji[k];
    if (a == 0) continue;
    const double* g = G + (size_t)k * nb;
    for (int j = 0; j < nb; j++) w[j] += a * g[j];
  }
}

/* Wp's row ip: h_ip^T Hp (kern_row_times_g), h_ip = Hp's column ip.  Entry
 * jp is the sum over k in increasing order of h_ip,k h_jp,k, and row jp's entry ip the sum of the
 * same products (h_jp,k h_ip,k: a product does not depend on its order) in the same order, the
 * one leaving out the terms where h_ip is zero and the other those where h_jp is, terms that
 * change no sum (only the sign of a zero one): Wp is symmetric bit for bit without a
 * symmetrisation, and a row formed alone (wp_row_on_use) is the whole Wp's. */
static void wp_row(const svi_impact* s, int ip, double* wp) {
  int nv = s->nv, nbp = n_plus(s);
  double* h = s->lr_scratch + s->n_routh;   /* nv (lr_scratch: 2 n_routh + 2 nv) */
  for (int k = 0; k < nv; k++) h[k] = s->Hp[(size_t)k * nbp + ip];
  kern_row_times_g(nbp, nv, h, s->Hp, wp);
}

/* W (nb x nb), as Wp on the nbp rows and columns other than the -t ones (jbar_minus_row: the
 * -t rows and columns are the negated +t ones), in the scratch A_one, then written out with the
 * negated ones in one pass.  Two forms, both leaving out the terms of each row's zeros (a contact
 * row touches its bodies' dofs and their ancestors in the tree: 12 of 36 in a tower of six boxes;
 * the terms left out are exact zeros, so each sum in increasing k is the same, up to the sign of
 * a zero, as over all nv):
 *   - gram (the events whose rows are formed on use, wrows_pay): W = Hp^T Hp, symmetric bit for
 *     bit as formed (wp_row);
 *   - else W_ij = Jbar_i . G_j (wp_row_jg), then symmetrised, 0.5 (W_ij + W_ji).  On degenerate
 *     piles of free boxes (a diagonal M: G = Jbar^T / m exactly) this form's exact ties kept
 *     Lemke's paths shorter than the Gram form's: the tower of 25 boxes took 11 342 pivots
 *     against 15 116 (three seeds: 4-68 % more instructions), so it stays where rows are not
 *     formed on use. */
static void wp_row_jg(const svi_impact* s, int i, double* wp) {
  kern_row_times_g(n_plus(s), s->nv, s->Jbar + (size_t)i * s->nv, s->Gp, wp);
}

static void build_delassus(svi_impact* s) {
  int nb = s->nb, nc = s->nc, nbp = n_plus(s);
  double* W = s->W;
  double* Wp = s->A_one;   /* nbp x nbp <= nr x nr; A_one is a solve's scratch (svi_laws.c) */
  if (s->gram)
    for (int ip = 0; ip < nbp; ip++) wp_row(s, ip, Wp + (size_t)ip * nbp);
  else {
    for (int ip = 0; ip < nbp; ip++) wp_row_jg(s, plus_row(s, ip), Wp + (size_t)ip * nbp);
    /* the negated rows and columns follow exactly, as 0.5 (-a - b) = -(0.5 (a + b)) */
    for (int ip = 0; ip < nbp; ip++)
      for (int jp = 0; jp < ip; jp++) {
        double a = 0.5 * (Wp[(size_t)ip * nbp + jp] + Wp[(size_t)jp * nbp + ip]);
        Wp[(size_t)ip * nbp + jp] = Wp[(size_t)jp * nbp + ip] = a;
      }
  }
  for (int ip = 0; ip < nbp; ip++) {
    const double* wp = Wp + (size_t)ip * nbp;
    double* wi = W + (size_t)plus_row(s, ip) * nb;
    spread_row(nc, nbp - nc, 1.0, wp, wi);
    if (ip >= nc)   /* the -t row after it */
      for (int j = 0; j < nb; j++) wi[nb + j] = -wi[j];
  }
  s->w_full = 1;
}

/* Row b of W formed on its first use (wrows: the plugin's dense Lemke on many contacts enters a
 * fraction of (75)'s columns, so most rows of the O(nb^2 nv) product are never needed), as Wp's
 * row ip (wp_row: build_delassus's values; nbp values, the -t columns left out: routh_column
 * spreads them) at the start of W's row b.  Not for a -t row (its +t row negated). */
static const double* wp_row_on_use(svi_impact* s, int b) {
  double* r = s->W + (size_t)b * s->nb;
  if (s->w_row_ok[b]) return r;
  wp_row(s, plus_index(s, b), r);
  s->w_row_ok[b] = 1;
  return r;
}

/* every row of W (wrows), for a consumer of the whole matrix (the refinement's and the tableau's
 * (75), (31)): build_delassus, whose rows are wp_row_on_use's (the same values) */
static void w_complete(svi_impact* s) {
  if (!s->w_full) build_delassus(s);
}

/* Write the Anitescu-Potra block [[W, [0;E]], [mu, -E^T, 0]] into A (leading dim ld) at (o,o). */
static void build_ap_block(const svi_impact* s, double* A, int ld, int o) {
  int nc = s->nc, nd = s->nd, nb = s->nb;
  for (int i = 0; i < nb; i++)
    for (int j = 0; j < nb; j++) A[(o + i) * ld + o + j] = s->W[i * nb + j];
  for (int i = 0; i < nc; i++) {
    for (int k = 0; k < nd; k++) {
      int r = nc + i * nd + k;             /* friction row of contact i */
      A[(o + r) * ld + o + nb + i] = 1.0;  /* E */
      A[(o + nb + i) * ld + o + r] = -1.0; /* -E^T */
    }
    A[(o + nb + i) * ld + o + i] = s->mu[i];
  }
}

/* The velocity unit of every tolerance: the largest pre-impact approach speed, but not less than
 * 1e-4 of the largest contact speed |Jbar v-|_inf, so that the rounding of sliding speeds
 * (eps |Jbar v-|) stays far below 1e-9 of it when an event barely approaches. */
static double impact_speed_unit(const svi_impact* s) {
  double u = fmax(s->v_app, 1e-4 * s->vscale);
  return u > 0 ? u : 1.0;
}

/* Units of the physical residual (docs/theory.md 5).  Every complementary pair of (75) is a
 * velocity against an impulse; the impulse is turned into a velocity with kappa_i, the largest
 * diagonal entry of W over contact i's rows (the speed a unit impulse gives that contact), and
 * every velocity is divided by the largest pre-impact approach speed.  A residual of 1e-9 then
 * means "1e-9 of the impact speed", whatever the units and mass ratios. */
static void build_units(svi_impact* s) {
  int nc = s->nc, nd = s->nd, nb = s->nb;
  double kmax = 0;
  for (int i = 0; i < nc; i++) {
    double k = svi_impact_w(s, i, i);
    for (int r = 0; r < nd; r++) k = fmax(k, svi_impact_w(s, nc + i * nd + r, nc + i * nd + r));
    s->kappa[i] = k;
    kmax = fmax(kmax, k);
  }
  double vr = impact_speed_unit(s);
  for (int i = 0; i < nc; i++) {
    if (!(s->kappa[i] > 0)) s->kappa[i] = kmax > 0 ? kmax : 1.0;
    double ki = s->kappa[i] / vr, vi = 1.0 / vr;
    /* layout of (75): [beta; l_n; l_D; gamma] against [l_max - l_n; J_n v'+beta; J_D v'+E gamma;
     * mu l_n - E^T l_D] */
    s->zunit[i] = vi;                 s->wunit[i] = ki;
    s->zunit[nc + i] = ki;            s->wunit[nc + i] = vi;
    for (int r = 0; r < nd; r++) {
      s->zunit[2 * nc + i * nd + r] = ki;
      s->wunit[2 * nc + i * nd + r] = vi;
    }
    s->zunit[nc + nb + i] = vi;       s->wunit[nc + nb + i] = ki;
  }
  /* the pairs of svi_routh_residual in its order: (75)'s rows i, nc + i, 2 nc + i nd + r, nc + nb + i */
  double *pz = s->pair_units, *pw = pz + PAIRS_MAX, *pe = pw + PAIRS_MAX;
  memset(pz, 0, sizeof(double) * 3 * PAIRS_MAX);
  for (int i = 0, k = 0; i < nc && nc <= 4; i++) {
    int rows[7], nr = 0;
    rows[nr++] = i;
    rows[nr++] = nc + i;
    for (int r = 0; r < nd; r++) rows[nr++] = 2 * nc + i * nd + r;
    rows[nr++] = nc + nb + i;
    for (int t = 0; t < nr; t++, k++) {
      pz[k] = s->zunit[rows[t]];
      pw[k] = s->wunit[rows[t]];
      pe[k] = 4 * DBL_EPSILON * s->wunit[rows[t]];
    }
  }
}

svi_lcp_options svi_impact_lcp_options(const svi_impact* s, const svi_lcp_options* base, int routh) {
  svi_lcp_options o = base ? *base : svi_lcp_default_options();
  int off = routh ? 0 : s->nc;   /* (31) is (75) without the beta block */
  o.zunit = s->zunit + off;
  o.wunit = s->wunit + off;
  return o;
}

/* The nonzero rows of a column of n values when it has at most two (-1 pads), else {-2, -2}:
 * the entering columns of beta (a unit vector) and gamma (E) in the revised Lemke, whose FTRAN
 * can start at the first eta that touches them. */
static void column_nz(int n, const double* a, int* nz) {
  int k = 0;
  nz[0] = nz[1] = -1;
  for (int i = 0; i < n && k <= 2; i++)   /* a third nonzero decides: not sparse */
    if (a[i] != 0) {
      if (k < 2) nz[k] = i;
      k++;
    }
  if (k > 2) nz[0] = nz[1] = -2;
}

/* column_nz of each column of an n x n column-major matrix */
static void sparse_columns(int n, const double* Ct, int* nz) {
  for (int j = 0; j < n; j++) column_nz(n, Ct + (size_t)j * n, nz + 2 * j);
}


/* -A^T of build_ap_block's block, row-major (the columns of -A contiguous), written directly:
 * W is symmetric bit for bit (build_delassus), so its block is -W, and the E, -E^T, mu blocks
 * are transposed.  Every other entry is -0.0, the negated zero the transpose of -A had. */
static void build_ap_block_nt(const svi_impact* s, double* X, int ld, int o) {
  int nc = s->nc, nd = s->nd, nb = s->nb;
  for (int i = 0; i < nb; i++)
    for (int j = 0; j < nb; j++) X[(o + i) * ld + o + j] = -s->W[i * nb + j];
  for (int i = 0; i < nc; i++) {
    for (int k = 0; k < nd; k++) {
      int r = nc + i * nd + k;
      X[(o + nb + i) * ld + o + r] = -1.0;   /* -(E)^T */
      X[(o + r) * ld + o + nb + i] = 1.0;    /* -(-E^T)^T */
    }
    X[(o + i) * ld + o + nb + i] = -s->mu[i];
  }
}

static void fill_neg_zero(double* X, size_t n) {
  for (size_t k = 0; k < n; k++) X[k] = -0.0;
}

/* |A|_inf of build_ap_block's matrix (31) and of (75)'s (with the beta rows and columns) from W's
 * rows, both in one pass: each row's sum of |entries| in increasing column order as norm_inf
 * forms it, its zeros left out (adding +0 changes no sum), so the same bits in O(nb^2) instead
 * of O(n^2).  The two sums differ only on the normal rows, where (75)'s starts with its beta
 * column's 1.  A -t row has its +t row's sum (the same magnitudes in the same order), so only the
 * +t rows are summed, four at a time (independent sums, each in its own order). */
static void lcp_norms(const svi_impact* s, double* ap, double* routh) {
  int nc = s->nc, nd = s->nd, nb = s->nb;
  double ra = 0.0, rr = 1.0;   /* (75)'s beta rows: |-1| */
  for (int i = 0; i < nc; i++) {   /* J_n v' (+ beta): (75)'s beta column comes first */
    const double* w = s->W + (size_t)i * nb;
    double ta = 0.0, tr = 1.0;
    for (int j = 0; j < nb; j++) {
      double a = fabs(w[j]);
      ta += a;
      tr += a;
    }
    ra = fmax(ra, ta);
    rr = fmax(rr, tr);
  }
  double rf = 0.0;   /* friction rows: the same sum in both, then E's 1 */
  int i = nc;
  for (; i + 6 < nb; i += 8) {
    const double* w = s->W + (size_t)i * nb;
    double t0 = 0, t1 = 0, t2 = 0, t3 = 0;
    for (int j = 0; j < nb; j++) {
      t0 += fabs(w[j]);
      t1 += fabs(w[2 * nb + j]);
      t2 += fabs(w[4 * nb + j]);
      t3 += fabs(w[6 * nb + j]);
    }
    rf = fmax(rf, fmax(fmax(t0 + 1.0, t1 + 1.0), fmax(t2 + 1.0, t3 + 1.0)));
  }
  for (; i < nb; i += 2) {
    const double* w = s->W + (size_t)i * nb;
    double t = 0;
    for (int j = 0; j < nb; j++) t += fabs(w[j]);
    rf = fmax(rf, t + 1.0);
  }
  ra = fmax(ra, rf);
  rr = fmax(rr, rf);
  for (int c = 0; c < nc; c++) {   /* mu l_n - E^T l_D: mu's column comes first */
    double t = fabs(s->mu[c]);
    for (int k = 0; k < nd; k++) t += 1.0;
    ra = fmax(ra, t);
    rr = fmax(rr, t);
  }
  *ap = ra;
  *routh = rr;
}

/* (31)'s matrix and its transpose, on first use (svi_impact_ap): an event of the set-valued
 * law solves (75) only, unless a sample is finished by (31) or falls back to it; forming both
 * matrices and transposes was half the set-up's O(n^2) work */
static void build_ap_matrices(svi_impact* s) {
  int na = s->n_ap;
  memset(s->A_ap, 0, sizeof(double) * na * na);
  build_ap_block(s, s->A_ap, na, 0);
  if (na <= SVI_AT_NMAX) {
    fill_neg_zero(s->Ant_ap, (size_t)na * na);
    build_ap_block_nt(s, s->Ant_ap, na, 0);
    sparse_columns(na, s->Ant_ap, s->Ant_nz);
  }
  s->ap_built = 1;
}

/* (75)'s matrix, on first need (routh_matrix: the refinement, the tableau, the regularised retry,
 * the enumerations of complementary bases); the revised Lemke takes its columns from W
 * (routh_column) */
static void build_routh_matrix(svi_impact* s) {
  int nc = s->nc, nr = s->n_routh;
  memset(s->A_routh, 0, sizeof(double) * nr * nr);
  build_ap_block(s, s->A_routh, nr, nc);
  for (int i = 0; i < nc; i++) {
    s->A_routh[i * nr + nc + i] = -1.0;   /* l_max - l_n >= 0 */
    s->A_routh[(nc + i) * nr + i] = 1.0;  /* J_n v' + beta >= 0 */
  }
  s->routh_built = 1;
}

static const double* routh_matrix(void* ctx) {
  svi_impact* s = ctx;
  w_complete(s);
  if (!s->routh_built) build_routh_matrix(s);
  return s->A_routh;
}

/* column_nz of routh_column's column j from its blocks instead of a scan of its n_routh rows:
 * beta_j's one -1, gamma_i's nd -1s, lambda_b's beta entry, W's row b (w: the column's lambda
 * rows, -W's row b) up to its third nonzero and its gamma entry, in increasing row order */
SVI_SIMD static void routh_column_nz(const svi_impact* s, int j, const double* w, int* nz) {
  int nc = s->nc, nb = s->nb, nd = s->nd, k = 0;
  nz[0] = nz[1] = -1;
#define NZ_PUSH(r) do { if (k < 2) nz[k] = (r); k++; } while (0)
  if (j < nc) NZ_PUSH(nc + j);
  else if (j >= nc + nb)
    for (int r = 0; r < nd; r++) NZ_PUSH(2 * nc + (j - nc - nb) * nd + r);
  else {
    int b = j - nc;
    if (b < nc) NZ_PUSH(b);
    for (int m = 0; m < nb && k <= 2; m++)
      if (w[m] != 0) NZ_PUSH(nc + m);
    if (b >= nc || s->mu[b] != 0) NZ_PUSH(nc + nb + (b < nc ? b : (b - nc) / nd));
  }
#undef NZ_PUSH
  if (k > 2) nz[0] = nz[1] = -2;
}

/* Column j of -A for (75), the revised Lemke's entering column, from A's blocks (build_ap_block
 * and the beta rows and columns): W's row b for lambda_b (W is symmetric bit for bit,
 * build_delassus; formed on use under wrows, wp_row_on_use), -0.0 wherever A has a zero: the values
 * -A^T's row held when it was formed per event (an O(n^2) matrix and its scan).  nz: its nonzero
 * rows when at most 2 (-1 pads), else {-2, -2}, as sparse_columns finds them, on the column's
 * first use in the event (routh_column_nz). */
SVI_SIMD static void routh_column(void* ctx, int j, double* a, int* nz) {
  svi_impact* s = ctx;
  int nc = s->nc, nb = s->nb, nd = s->nd, nr = s->n_routh;
  if (j < nc || j >= nc + nb) {
    for (int i = 0; i < nr; i++) a[i] = -0.0;
    if (j < nc) a[nc + j] = -1.0;                    /* beta_j: -(I) in the l_n rows */
    else                                             /* gamma_i: -(E) in its friction rows */
      for (int k = 0; k < nd; k++) a[2 * nc + (j - nc - nb) * nd + k] = -1.0;
  } else {                                           /* lambda_b */
    int b = j - nc;
    for (int i = 0; i < nc; i++) a[i] = a[nc + nb + i] = -0.0;
    if (s->w_full) {   /* the same values as the rows on use: -(1.0 x) = -1.0 x */
      const double* w = s->W + (size_t)b * nb;
      for (int k = 0; k < nb; k++) a[nc + k] = -w[k];
    } else if (jbar_minus_row(s, b))                 /* W's row b = -(row b - 1) */
      spread_row(nc, nb - n_plus(s), 1.0, wp_row_on_use(s, b - 1), a + nc);
    else spread_row(nc, nb - n_plus(s), -1.0, wp_row_on_use(s, b), a + nc);
    if (b < nc) {
      a[b] = 1.0;                                    /* -(-I) in beta_b's row */
      a[nc + nb + b] = -s->mu[b];                    /* -mu in gamma_b's row */
    } else a[nc + nb + (b - nc) / nd] = 1.0;         /* -(-E^T) in gamma's row */
  }
  int* c = s->routh_nz + 2 * j;   /* found once an event (-3: not yet) */
  if (c[0] == -3) routh_column_nz(s, j, a + nc, c);
  nz[0] = c[0];
  nz[1] = c[1];
}

/* (31)'s and (75)'s matrices are formed on first need, each column's nonzeros on first use */
static void matrices_reset(svi_impact* s) {
  s->ap_built = 0;
  s->routh_built = 0;
  s->routh_t_built = 0;   /* (build_lcp_matrices builds it; never kept from an earlier event) */
  for (int j = 0; j < 2 * s->n_routh; j++) s->routh_nz[j] = -3;
}

/* Both norms (the dense Lemke's tolerances); (75)'s matrix and (31)'s wait for their first need.
 * An event sampled many times (svi_impact_set_step_solve off: Algorithm 2, the examples) keeps
 * -A^T of (75) when it fits, its rows routh_column's columns, so that an entering column is one
 * copy (the O(n^2) build is shared by the samples; a column from W costs the disc stack 9 % more
 * instructions a sample); the plugin's one sample an event takes its columns from W. */
static void build_lcp_matrices(svi_impact* s) {
  int nr = s->n_routh;
  matrices_reset(s);
  lcp_norms(s, &s->anorm_ap, &s->anorm_routh);
  s->routh_t_built = !s->step_solve && nr <= SVI_AT_NMAX;
  for (int j = 0; s->routh_t_built && j < nr; j++) {
    int nz[2];
    routh_column(s, j, s->Ant_routh + (size_t)j * nr, nz);
  }
}

/* Without the matrices: |A|_inf bounded through sum_c |W_rc| <= sum_k |Jbar_rk| sum_c |G_kc|
 * (the low-rank solver's pivot tolerance; an upper bound, so never a smaller tolerance) */
static void lcp_norm_bounds(svi_impact* s) {
  int nc = s->nc, nb = s->nb, nv = s->nv, nd = s->nd;
  double gs[SVI_LR_MAX_NV] = {0}, wmax = 0;
  for (int k = 0; k < nv; k++)
    for (int c = 0; c < nb; c++) gs[k] += fabs(s->G[k * nb + c]);
  for (int r = 0; r < nb; r++) {
    if (jbar_minus_row(s, r)) continue;   /* the +t row's magnitudes */
    double t = 0;
    for (int k = 0; k < nv; k++) t += fabs(s->Jbar[r * nv + k]) * gs[k];
    t += r < nc ? 0 : 1;   /* E */
    wmax = fmax(wmax, t);
  }
  double gam = 0;
  for (int i = 0; i < nc; i++) gam = fmax(gam, s->mu[i] + nd);
  s->anorm_ap = fmax(wmax, gam);
  s->anorm_routh = fmax(fmax(wmax + 1, gam), 1.0);
}

/* SVI_SOLVER_AUTO's choice.  A pivot of the low-rank Lemke costs O(n nv) plus a refactor of its
 * system in (dv, z0, f), up to 2 nv + 1 unknowns (since the thirty-sixth speed session one every
 * k pivots, etas in between: svi_lowrank.c); one of the revised dense Lemke O(n k), k the
 * pivots so far.  So the low-rank one pays on few velocities under many contacts.  The ninth
 * speed session measured towers of 1 to 10 free boxes with 4 to 36 contacts per face
 * (`svi-bench --only=5` keeps 1 to 8 boxes and 4 to 25 contacts, benchmarks-log.md table 5) and
 * set nb >= 4 nv for one body, 16 nv from two bodies on.  The dense path's set-up and pivots have
 * since become cheaper, and the sixteenth session measured the crossover again, in the plugin's
 * impact step (instructions): a plate on N supports (nv = 6) between nb = 80 (dense 15 % cheaper)
 * and 125 (the low-rank one 5 % cheaper), a two-legged robot (nv = 18) between nb = 490 (dense 7 %)
 * and 640 (low-rank 24 %); table 5 then has the dense one faster in every cell below nb = 21 nv
 * from two boxes on.  So nb >= 20 nv at nv <= 6, 30 nv from nv = 18, interpolated between.
 * Since the seventeenth, the plugin's per-step solve (step_solve) forms W's rows on use (wrows_pay:
 * nb >= 4 nv, so wherever the rule above would pick the low-rank Lemke), and the dense Lemke is
 * then the cheaper up to the product form's limit on every plate from 25 to 144 supports (8-22 %)
 * and the robot on 128 contacts (26 %): there only beyond it.  Beyond the dense solver's product
 * form (n > SVI_PFI_NMAX) its pivots cost O(n^2) on the explicit tableau, and the low-rank one is
 * 10-100x faster wherever it applies (nv <= SVI_LR_MAX_NV). */
static int lowrank_pays(int nb, int nv, int n_routh, int step_solve) {
  if (nb < LOWRANK_MIN_NB) return 0;
  if (n_routh > SVI_PFI_NMAX) return 1;
  if (step_solve) return 0;
  int ratio = nv <= 6 ? 20 : nv >= 18 ? 30 : 20 + 5 * (nv - 6) / 6;
  return nb >= ratio * nv;
}

/* The eta count k at which the dense Lemke's product form hands its path over to the low-rank one
 * (svi_impact_lemke, svi_lr_lemke_from: the same path from the same basis).  A pivot of the
 * product form costs about n k (the FTRANs of the entering column and of a tie's columns through
 * k etas; k grows along the path, a rebuild brings it back to the basis' structural columns).
 * One of the low-rank Lemke costs O(n nv) and, above all on these sizes, work that does not grow
 * with n: its contacts' reductions, the sums over their basic impulses and the refactor of its
 * system of s <= 2 nv + 1 unknowns, O((nv + 1)^3).  So a long path pays to go on there once k
 * exceeds about C (nv + 1)^3 / n etas, C = 160 fit in instructions (callgrind, the plugin's impact
 * step; thirty-fourth speed session, docs/benchmarks-log.md) on 25 models of two new users and
 * this session: plates and tables on 36 to 144 sphere or capsule feet landing while they slide
 * or spin (nv = 6; 55 etas at 144 contacts, 79 at 100, 123 at 64, 218 at 36), two stacked
 * plates (nv = 12, 628 etas at 80 contacts: never reached), a two-legged robot on 98 contacts
 * (nv = 18), mesh piles (nv = 54-60) beyond the eta file.  A handover that comes early on a
 * path that ends soon after costs more than it saves (36 feet: +10-13 % at 60-100 etas); one that
 * comes late leaves a long path in the product form (a plate sliding onto 100 feet: 264 M
 * instructions for two impact steps without it, 48 M at 80 etas).  Short paths (a flat landing,
 * 10 pivots) never get there.
 * From nv = 7 on the cube gave way to C 49 (nv + 1) / n (thirty-fifth speed session): the
 * refactor no longer dominates the low-rank pivot there, its O(n nv) passes do, and the dense
 * pivot's n k etas outgrow the core's L2 cache (1-2 MB: k of 190-370 at n = 700), where it runs at
 * the cache's bandwidth.  On 63 models of a new user (quadrupeds, hexapods, humanoids, stacked
 * plates on 64-150 points, nv = 12-30, landing as they slide or spin) 15 changed their path:
 * wall time 0.10-1.01 of before on an AMD EPYC (Zen 5, 1 MB L2), instructions 0.12-1.10 (six
 * 3-10 % above).  The cube would have handed over at 2 781 etas on a quadruped of nv = 22 on 700
 * rows, never reached; this rule at 258 (188 under the bound below).  Not beyond nv = 30
 * (HANDOVER_MAX_NV): there the low-rank system of up to 2 nv + 1 unknowns, then refactored every
 * pivot, was the low-rank pivot's cost (a chain
 * of 25 links, nv = 54: 6.7x the dense path's instructions, 4.3x its wall time); with etas
 * between its refactors (svi_lowrank.c, thirty-sixth speed session) the chain still gains
 * nothing (31x a native step handed over at 300 etas, 33x without).  An earlier handover from
 * nv = 7 (100 for 160) was faster on new users' robots (0.79-1.01 of this rule's wall time) but
 * left the quadruped of tests/data/quad_slide_100.xml 9 regularised solves in 200 samples
 * against 5: kept as it is (docs/benchmarks-log.md, the thirty-sixth session).
 * Since the fortieth speed session the path hands over once its eta file reaches
 * SVI_HANDOVER_ETA_BYTES: k_h <= ceil(131 072 / n), 188 etas at n = 700 (the file's columns are
 * padded to a multiple of 4 rows: 1.05 MB there), which binds from nv = 16 on.  Where the rule
 * sets no handover (its point beyond 2 n + 16 etas: n up to 253-344 rows at nv = 16-30) the bound
 * sets none either; no model measured reached that point.  The rule above was fit in
 * instructions; in wall time a dense pivot whose n k etas no longer fit a core's L2 cache runs at
 * the next level's bandwidth, while the low-rank pivot's Y (n nv doubles) still fits.  On the 45
 * of 255 models whose path it changes (quadrupeds, hexapods, humanoids and three stacked plates,
 * nv = 16-30, landing on 64-144 points while they slide or spin, among them
 * tests/data/quad_slide_100.xml) the impact step took 0.79-1.03 of its wall time (geometric mean
 * 0.92; an H1 humanoid spinning onto 98 points 25.7x -> 21.3x a native step); 512 KiB gave a mean
 * of 0.89 but up to 1.13.  The quadruped's 200 samples in test_lexcols take 8 regularised solves
 * against 6 (5 on the dense path alone). */
static int handover_neta(int nv, int n) {
  if (nv > HANDOVER_MAX_NV) return 0;
  double c = nv + 1.0;
  double h = 160.0 * c * fmin(c * c, 49.0) / n;
  return h < 2 * n + 16 ? (int)ceil(fmin(h, SVI_HANDOVER_ETA_BYTES / 8.0 / n)) : 0;
}

/* W's rows on use (wp_row_on_use) instead of the whole W at set-up: for the dense Lemke's step solve
 * (one LCP's path a step) on many contacts, where the path's entering columns are a fraction of
 * (75)'s and W's O(nb^2 nv) product, its norms and the O(nb^2) residuals were 40 % of an impact
 * step (a two-legged robot on 98 contacts, sixteenth session).  Not on fewer than 4 nv impulse
 * rows, where a path enters most columns (a robot with 8 contacts and a humanoid lost 5-8 % when a
 * row cost a row and a column pass, before W's Gram form), nor where the event is sampled many
 * times with (75)'s transpose kept (routh_t_built), nor for the mode enumerations' few contacts,
 * nor beyond the low-rank residual's nv (svi_lr_residual) or the product form's n. */
static int wrows_pay(const svi_impact* s) {
  return s->nb >= LOWRANK_MIN_NB && s->nb >= 4 * s->nv && s->nv <= SVI_LR_MAX_NV &&
         s->n_routh <= SVI_PFI_NMAX && !svi_modes_supported(s) &&
         (s->step_solve || s->n_routh > SVI_AT_NMAX);
}

int svi_impact_setup(svi_impact* s, const svi_problem_def* def, char* err, int errlen) {
  if (!s || !def) return fail(err, errlen, SVI_ERR_ARG, "NULL impact workspace or problem");
  if (!def->M || !def->Jn || !def->mu || !def->v || (def->nt > 0 && !def->Jt))
    return fail(err, errlen, SVI_ERR_ARG, "problem has a NULL array (M, Jn, Jt, mu and v are required)");
  if (def->nv <= 0 || def->nc <= 0 || def->nt < 1 || def->nt > 2) {
    char m[160];
    snprintf(m, sizeof(m), "bad sizes nv=%d nc=%d nt=%d (need nv>=1, nc>=1, nt in {1,2})",
             def->nv, def->nc, def->nt);
    return fail(err, errlen, SVI_ERR_ARG, m);
  }
  if (def->nv > s->nv_max || def->nc > s->nc_max || def->nt > s->nt_max) {
    char m[200];
    snprintf(m, sizeof(m), "problem nv=%d nc=%d nt=%d exceeds workspace capacity %d/%d/%d",
             def->nv, def->nc, def->nt, s->nv_max, s->nc_max, s->nt_max);
    return fail(err, errlen, SVI_ERR_CAPACITY, m);
  }
  int nv = def->nv, nc = def->nc, nt = def->nt;
  if (!svi_all_finite(nv * nv, def->M) || !svi_all_finite(nc * nv, def->Jn) ||
      !svi_all_finite(nc * nt * nv, def->Jt) || !svi_all_finite(nc, def->mu) || !svi_all_finite(nv, def->v))
    return fail(err, errlen, SVI_ERR_NONFINITE, "problem data contains NaN or Inf");
  for (int i = 0; i < nc; i++)
    if (def->mu[i] < 0) {
      char m[120];
      snprintf(m, sizeof(m), "friction coefficient mu[%d] = %g is negative (need mu >= 0)", i,
               def->mu[i]);
      return fail(err, errlen, SVI_ERR_NEG_MU, m);
    }
  double mmax = 0;
  for (int i = 0; i < nv * nv; i++) {
    double a = fabs(def->M[i]);
    if (a > mmax) mmax = a;   /* as fmax: a NaN is passed over (the finiteness check is above) */
  }
  for (int i = 0; i < nv; i++)
    for (int j = 0; j < i; j++)
      if (fabs(def->M[i * nv + j] - def->M[j * nv + i]) > 1e-10 * fmax(mmax, 1e-300))
        return fail(err, errlen, SVI_ERR_NOT_SPD, "mass matrix is not symmetric");

  s->nv = nv; s->nc = nc; s->nt = nt; s->nd = 2 * nt;
  s->nb = nc * (1 + s->nd);
  s->n_ap = nc * (2 + s->nd);
  s->n_routh = nc * (3 + s->nd);
  memcpy(s->M, def->M, sizeof(double) * nv * nv);
  memcpy(s->U, def->M, sizeof(double) * nv * nv);
  envelope(nv, s->M, s->lo, s->hi);
  if (!ucholesky_env(nv, s->U, s->hi))
    return fail(err, errlen, SVI_ERR_NOT_SPD, "mass matrix is not positive definite");
  memcpy(s->mu, def->mu, sizeof(double) * nc);
  memcpy(s->v0, def->v, sizeof(double) * nv);
  /* many contacts on few velocities: the low-rank Lemke, and no nb x nb matrix unless the
   * mode enumeration (nc <= 4) needs one */
  s->lowrank = nv <= SVI_LR_MAX_NV &&
               (s->solver == SVI_SOLVER_LOWRANK ||
                (s->solver == SVI_SOLVER_AUTO && lowrank_pays(s->nb, nv, s->n_routh, s->step_solve)));
  s->handover = !s->lowrank && s->solver == SVI_SOLVER_AUTO && s->handover_req != 0 &&
                nv <= SVI_LR_MAX_NV && s->nb >= LOWRANK_MIN_NB && s->n_routh <= SVI_PFI_NMAX
                    ? (s->handover_req > 0 ? s->handover_req : handover_neta(nv, s->n_routh))
                    : 0;
  s->dense = 0;
  s->w_full = 0;
  s->gram = !s->lowrank && wrows_pay(s);   /* W's Gram form (build_delassus) */
  s->wrows = s->gram && !s->no_wrows;
  build_jbar(s, def);
  svi_lr_event(s->lr);   /* the runs of the last event forgotten: the first low-rank solve makes them */
  build_g(s);
  jbar_times(s, s->v0, s->u0, 0);
  if (s->wrows) memset(s->w_row_ok, 0, (size_t)s->nb);
  else if (!s->lowrank || svi_modes_supported(s)) {
    build_delassus(s);
    s->dense = 1;
  }

  s->max_mu = 0;
  for (int i = 0; i < nc; i++) s->max_mu = fmax(s->max_mu, s->mu[i]);
  s->vscale = 0;
  s->ref_impulse = 0;
  for (int i = 0; i < s->nb; i++) s->vscale = fmax(s->vscale, fabs(s->u0[i]));
  for (int i = 0; i < nc; i++) {
    double wii = svi_impact_w(s, i, i);
    if (wii > 0 && s->u0[i] < 0) s->ref_impulse = fmax(s->ref_impulse, -s->u0[i] / wii);
  }
  s->step_ref = step_reference(s);
  /* "non-colliding" is J_n v >= -1e-8 in the paper (absolute); we make it relative to the
   * pre-impact contact speeds so that the test is unit-free */
  s->sep_tol = 1e-8 * fmax(s->vscale, 1e-6);
  s->v_app = 0;
  for (int i = 0; i < nc; i++) s->v_app = fmax(s->v_app, -s->u0[i]);
  s->pen_tol = 1e-6 * impact_speed_unit(s);
  s->ke0 = svi_impact_kinetic_energy(s, s->v0);
  build_units(s);

  if (s->dense) build_lcp_matrices(s);
  else {
    lcp_norm_bounds(s);
    if (s->wrows) matrices_reset(s);
  }
  svi_modes_setup(s);
  return SVI_OK;
}

/* W and the norms, if setup skipped them (many contacts: O(nb^2 nv)) */
static void dense_ready(svi_impact* s) {
  if (s->w_full) return;   /* (dense: built at set-up) */
  build_delassus(s);
  if (!s->wrows) {   /* the low-rank solver's: (75)'s and (31)'s matrices for its tableau fallback */
    double ap = s->anorm_ap, routh = s->anorm_routh;
    build_lcp_matrices(s);
    s->anorm_ap = ap;
    s->anorm_routh = routh;
  }
  /* the norms' bounds stay the event's (the tolerances of its solves, the low-rank one's
   * included): W built for one sample's need changes no other sample's path or bits */
}

const double* svi_impact_ap(svi_impact* s) {
  dense_ready(s);
  if (!s->ap_built) build_ap_matrices(s);
  return s->A_ap;
}

const double* svi_impact_routh(svi_impact* s) {
  dense_ready(s);
  return routh_matrix(s);
}

void svi_impact_dense(svi_impact* s) {
  if (!s || s->nc <= 0) return;
  svi_impact_ap(s);
  svi_impact_routh(s);
}

/* The physical residual of an impulse lambda_bar as a solution of the step (75) at q, for the
 * enumerated steps (nc <= 4, the reduced Delassus matrix Wr of svi_modes_setup): every pair of
 * (75) measured as svi_lcp_residual_units does, with z = [beta; lambda_bar; gamma] completed from
 * the post-step velocity (beta = (-u_n')^+, gamma = max_k (-u_D,k')^+, eq. 73-75).  u' is formed
 * in the reduced coordinates (normal and tangents per contact: the directions -t are the
 * negatives of +t) as u_r + Wr x, x the reduced impulse, and the rounding term of each row is
 * that evaluation's, |q_i| + sum_b |Wr_ab x_b| + |beta| or |gamma|. */

#ifdef SVI_AVX2_KERNELS
#include <immintrin.h>
/* svi_pair_violation on four pairs: |min(a, b)| (as a < b ? a : b), then max with -a and -b,
 * each as the scalar's comparison (max_pd(x, y) = x > y ? x : y) */
__attribute__((target("avx2"))) static inline __m256d viol4(__m256d a, __m256d b, __m256d sgn) {
  __m256d m = _mm256_andnot_pd(sgn, _mm256_min_pd(a, b));
  m = _mm256_max_pd(_mm256_xor_pd(a, sgn), m);
  return _mm256_max_pd(_mm256_xor_pd(b, sgn), m);
}

/* The pairs of svi_routh_residual from their values and units, four a vector: a = zu z, b = wu w,
 * e = ew m (ew = 4 eps wu), then max(0, svi_pair_interval(a, b, e)); INFINITY if any a, b or e is
 * not finite (x - x is 0 for a finite x, NaN for an infinite or NaN one, and a NaN stays in a
 * sum).  n is a multiple of 4 (padding pairs are zero: their interval is 0). */
__attribute__((target("avx2"))) static double pairs_max_avx2(int n, const double* u, const double* z,
                                                             const double* w, const double* m) {
  __m256d sgn = _mm256_set1_pd(-0.0), vr = _mm256_setzero_pd(), fin = _mm256_setzero_pd();
  for (int k = 0; k < n; k += 4) {
    __m256d va = _mm256_mul_pd(_mm256_loadu_pd(u + k), _mm256_loadu_pd(z + k));
    __m256d vb = _mm256_mul_pd(_mm256_loadu_pd(u + PAIRS_MAX + k), _mm256_loadu_pd(w + k));
    __m256d ve = _mm256_mul_pd(_mm256_loadu_pd(u + 2 * PAIRS_MAX + k), _mm256_loadu_pd(m + k));
    fin = _mm256_add_pd(fin, _mm256_add_pd(_mm256_add_pd(_mm256_sub_pd(va, va), _mm256_sub_pd(vb, vb)),
                                           _mm256_sub_pd(ve, ve)));
    __m256d m1 = viol4(va, _mm256_sub_pd(vb, ve), sgn), m2 = viol4(va, _mm256_add_pd(vb, ve), sgn);
    vr = _mm256_max_pd(_mm256_max_pd(m1, m2), vr);
  }
  if (_mm256_movemask_pd(_mm256_cmp_pd(fin, fin, _CMP_UNORD_Q))) return INFINITY;
  double v[4], r = 0;
  _mm256_storeu_pd(v, vr);
  for (int j = 0; j < 4; j++) r = v[j] > r ? v[j] : r;
  return r;
}
#endif
/* the same from the scalar twin: the same products and intervals (the maximum of the same values) */
static inline __attribute__((always_inline)) double pairs_max(int n, const double* u, const double* z,
                                                              const double* w, const double* m) {
#ifdef SVI_AVX2_KERNELS
  if (svi_have_avx2()) return pairs_max_avx2(n, u, z, w, m);
#endif
  double r = 0;
  int bad = 0;
  for (int k = 0; k < n; k++) {
    double a = u[k] * z[k], b = u[PAIRS_MAX + k] * w[k], e = u[2 * PAIRS_MAX + k] * m[k];
    bad |= !(a - a == 0) | !(b - b == 0) | !(e - e == 0);
    double v = svi_pair_interval(a, b, e);
    r = v > r ? v : r;
  }
  return bad ? INFINITY : r;
}

/* the body, inlined for each (nc, nt) of the enumerated steps so that the loops unroll: the same
 * sums in the same order, so the same bits as one generic loop.  Each pair (a, b, e) of
 * svi_pair_interval is (z unit * z, w unit * w, (4 eps w unit) * |w|'s rounding terms): the values
 * z, w and the magnitudes are formed per contact, then multiplied by pair_units four pairs a
 * vector (the products svi_lcp_residual_units forms: (4 eps wu) m is 4 eps wu m, left to right).
 * A NaN or an infinity in any pair makes the residual INFINITY (x - x is 0 only for finite x). */
static inline __attribute__((always_inline)) double routh_residual(const svi_impact* s, const double* lmax,
                                                                   const double* u, const double* lam, double* z,
                                                                   double* un, const int nc, const int nt) {
  int nd = 2 * nt, nb = nc * (1 + nd), m = (1 + nt) * nc;
  const int np = (3 + nd) * nc, np4 = (np + 3) & ~3;
  double x[12], up[12], mg[12];
  for (int i = 0; i < nc; i++) {   /* reduced impulse and velocity (n, t1[, t2]) */
    x[(1 + nt) * i] = lam[i];
    up[(1 + nt) * i] = u[i];
    for (int t = 0; t < nt; t++) {
      int r = nc + i * nd + 2 * t;
      x[(1 + nt) * i + 1 + t] = lam[r] - lam[r + 1];
      up[(1 + nt) * i + 1 + t] = u[r];
    }
  }
  /* up += Wr x and mg = sum |Wr_ab x_b| by columns (Wr is symmetric), four rows a vector: each
   * lane the scalar sum over b in its order */
  const int m4 = (m + 3) & ~3;
  svi_v4d upv[3], mgv[3];
  const svi_v4i nosign = {INT64_MAX, INT64_MAX, INT64_MAX, INT64_MAX};
  for (int a = m; a < m4; a++) up[a] = 0;
  for (int c = 0; c < m4 / 4; c++) {
    memcpy(&upv[c], up + 4 * c, sizeof(svi_v4d));
    mgv[c] = (svi_v4d){0, 0, 0, 0};
  }
  for (int b = 0; b < m; b++) {
    const svi_v4d xb = {x[b], x[b], x[b], x[b]};
    for (int c = 0; c < m4 / 4; c++) {
      svi_v4d w;
      memcpy(&w, s->Wr4 + b * m4 + 4 * c, sizeof(w));
      svi_v4d t = w * xb;
      upv[c] += t;
      mgv[c] += (svi_v4d)((svi_v4i)t & nosign);
    }
  }
  for (int c = 0; c < m4 / 4; c++) {
    memcpy(up + 4 * c, &upv[c], sizeof(svi_v4d));
    memcpy(mg + 4 * c, &mgv[c], sizeof(svi_v4d));
  }
  double zv[PAIRS_MAX], wv[PAIRS_MAX], mv[PAIRS_MAX];
  int k = 0;
  for (int i = 0; i < nc; i++) {
    const double *ui = up + (1 + nt) * i, *mi = mg + (1 + nt) * i;
    double ln = lam[i], beta = ui[0] < 0 ? -ui[0] : 0, gam = 0;
    for (int t = 0; t < nt; t++) {
      double a = ui[1 + t] < 0 ? -ui[1 + t] : ui[1 + t];   /* max(-u_t, u_t) over +t, -t */
      gam = a > gam ? a : gam;
    }
    /* beta against l_max - l_n, l_n against J_n v' + beta */
    zv[k] = beta; wv[k] = lmax[i] - ln; mv[k++] = fabs(lmax[i]) + fabs(ln);
    zv[k] = ln; wv[k] = ui[0] + beta; mv[k++] = fabs(u[i]) + mi[0] + beta;
    /* l_D (+t, -t per tangent) against J_D v' + gamma; gamma against mu l_n - E^T l_D */
    double fr = s->mu[i] * ln, fm = fabs(fr);
    for (int t = 0; t < nt; t++) {
      int row = nc + i * nd + 2 * t;
      double ut = ui[1 + t], mt = mi[1 + t], lp = lam[row], lm = lam[row + 1];
      zv[k] = lp; wv[k] = ut + gam; mv[k++] = fabs(u[row]) + mt + gam;
      zv[k] = lm; wv[k] = gam - ut; mv[k++] = fabs(u[row + 1]) + mt + gam;
      fr -= lp + lm;
      fm += fabs(lp) + fabs(lm);
    }
    zv[k] = gam; wv[k] = fr; mv[k++] = fm;
    if (z) { z[i] = beta; z[nc + nb + i] = gam; }
  }
  for (int t = np; t < np4; t++) zv[t] = wv[t] = mv[t] = 0;
  double r = pairs_max(np4, s->pair_units, zv, wv, mv);
  if (z) for (int b = 0; b < nb; b++) z[nc + b] = lam[b];
  if (un)   /* u' in every row of Jbar: the -t rows are the negated +t rows */
    for (int i = 0; i < nc; i++) {
      un[i] = up[(1 + nt) * i];
      for (int t = 0; t < nt; t++) {
        int row = nc + i * nd + 2 * t;
        un[row] = up[(1 + nt) * i + 1 + t];
        un[row + 1] = -up[(1 + nt) * i + 1 + t];
      }
    }
  return r;
}

SVI_SIMD double svi_routh_residual(const svi_impact* s, const double* lmax, const double* u,
                                   const double* lam, double* z, double* u_next) {
  switch (s->nt == 1 ? s->nc : s->nt == 2 ? 4 + s->nc : 0) {
  case 1: return routh_residual(s, lmax, u, lam, z, u_next, 1, 1);
  case 2: return routh_residual(s, lmax, u, lam, z, u_next, 2, 1);
  case 3: return routh_residual(s, lmax, u, lam, z, u_next, 3, 1);
  case 4: return routh_residual(s, lmax, u, lam, z, u_next, 4, 1);
  case 5: return routh_residual(s, lmax, u, lam, z, u_next, 1, 2);
  case 6: return routh_residual(s, lmax, u, lam, z, u_next, 2, 2);
  case 7: return routh_residual(s, lmax, u, lam, z, u_next, 3, 2);
  case 8: return routh_residual(s, lmax, u, lam, z, u_next, 4, 2);
  default: return INFINITY;   /* more than 4 contacts: not an enumerated step */
  }
}

/* u += lambda_j W(:, j) = lambda_j W(j, :) (W symmetric), inlined for the small nb of the
 * enumerated steps so that the loops unroll (the same sums in the same order) */
static inline __attribute__((always_inline)) void add_w_dense(const double* restrict W,
                                                              const double* restrict lambda,
                                                              double* restrict u, const int nb) {
  for (int j = 0; j < nb; j++) {
    double l = lambda[j];
    const double* w = W + (size_t)j * nb;
    for (int i = 0; i < nb; i++) u[i] += w[i] * l;
  }
}

/* the same loop for any nb, in an AVX2 clone that vectorises it over the rows.  Zero impulses
 * are not skipped: which are zero is data, and a mispredicted branch costs more than the
 * column's few vector operations. */
SVI_SIMD static void kern_add_w(int nb, const double* W, const double* lambda, double* u) {
  add_w_dense(W, lambda, u, nb);
}

void svi_impact_add_w(const svi_impact* s, const double* lambda, double* u) {
  int nb = s->nb, nv = s->nv;
  if (s->dense) {
    switch (nb) {
    case 6: add_w_dense(s->W, lambda, u, 6); return;     /* 2 planar contacts */
    case 9: add_w_dense(s->W, lambda, u, 9); return;     /* 3 planar contacts */
    case 10: add_w_dense(s->W, lambda, u, 10); return;   /* 2 spatial contacts */
    default: kern_add_w(nb, s->W, lambda, u); return;
    }
  }
  double dv[SVI_LR_MAX_NV] = {0};
  for (int c = 0; c < nb; c++) {
    double l = lambda[c];
    if (l == 0) continue;
    const double* g = s->Gt + (size_t)c * nv;
    for (int k = 0; k < nv; k++) dv[k] += g[k] * l;
  }
  jbar_times(s, dv, u, 1);
}

/* y = y0 + W lambda and m = |W| |lambda| over the rows (dense W, by its symmetric columns): the
 * sums of svi_impact_add_w in its order, so y0 = u gives its bits */
SVI_SIMD static void kern_w_times(int nb, const double* restrict W, const double* restrict lam,
                                  const double* restrict y0, double* restrict y, double* restrict m) {
  for (int i = 0; i < nb; i++) { y[i] = y0[i]; m[i] = 0; }
  for (int c = 0; c < nb; c++) {
    const double* w = W + (size_t)c * nb;
    double l = lam[c];
    for (int i = 0; i < nb; i++) {
      double t = w[i] * l;
      y[i] += t;
      m[i] += fabs(t);
    }
  }
}

#ifdef SVI_AVX2_KERNELS
#include <immintrin.h>

/* the masks of rows 0..n-1 (n <= 16) in four blocks of four */
__attribute__((target("avx2"))) static inline void rows16(int n, __m256i mk[4]) {
  static const long long lanes[20] = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1,
                                      0, 0, 0, 0};
  for (int b = 0; b < 4; b++) {
    int rem = n - 4 * b;   /* rows of block b: min(max(rem, 0), 4) */
    rem = rem < 0 ? 0 : rem > 4 ? 4 : rem;
    mk[b] = _mm256_loadu_si256((const __m256i*)(lanes + 16 - rem));
  }
}

/* kern_w_times for nb <= 16: the rows in four blocks of four held in registers across the columns
 * (the rows past nb masked off: loaded as 0, never stored).  Each entry is the scalar loop's
 * product, sum and sum of |t| in the same column order, so the same bits. */
__attribute__((target("avx2"))) static void w_times16_avx2(int nb, const double* W, const double* lam,
                                                          const double* y0, double* y, double* m) {
  __m256i mk[4];
  __m256d vy[4], vm[4], sgn = _mm256_set1_pd(-0.0);
  rows16(nb, mk);
  for (int b = 0; b < 4; b++) {
    vy[b] = _mm256_maskload_pd(y0 + 4 * b, mk[b]);
    vm[b] = _mm256_setzero_pd();
  }
  for (int c = 0; c < nb; c++) {
    const double* w = W + (size_t)c * nb;
    __m256d l = _mm256_broadcast_sd(lam + c);
    for (int b = 0; b < 4; b++) {
      __m256d t = _mm256_mul_pd(_mm256_maskload_pd(w + 4 * b, mk[b]), l);
      vy[b] = _mm256_add_pd(vy[b], t);
      vm[b] = _mm256_add_pd(vm[b], _mm256_andnot_pd(sgn, t));
    }
  }
  for (int b = 0; b < 4; b++) {
    _mm256_maskstore_pd(y + 4 * b, mk[b], vy[b]);
    _mm256_maskstore_pd(m + 4 * b, mk[b], vm[b]);
  }
}

/* svi_matvec_add(r, c, A, x, y) for r <= 16 from A's transpose At (c x r): each row's sum
 * 0 + a_0 x_0 + a_1 x_1 + ... in four registers across the columns, then added to y, as the
 * scalar loop does it */
__attribute__((target("avx2"), always_inline)) static inline void matvec_add_t16_k(int r, int c, const double* At,
                                                                                  const double* x, double* y,
                                                                                  const int nblk) {
  __m256i mk[4];
  __m256d s[4];
  rows16(r, mk);
  for (int b = 0; b < nblk; b++) s[b] = _mm256_setzero_pd();
  for (int j = 0; j < c; j++) {
    const double* a = At + (size_t)j * r;
    __m256d l = _mm256_broadcast_sd(x + j);
    for (int b = 0; b < nblk; b++) s[b] = _mm256_add_pd(s[b], _mm256_mul_pd(_mm256_maskload_pd(a + 4 * b, mk[b]), l));
  }
  for (int b = 0; b < nblk; b++)
    _mm256_maskstore_pd(y + 4 * b, mk[b], _mm256_add_pd(_mm256_maskload_pd(y + 4 * b, mk[b]), s[b]));
}

/* only the blocks that hold rows (a constant in each inlined copy) */
__attribute__((target("avx2"))) static void matvec_add_t16(int r, int c, const double* At, const double* x,
                                                          double* y) {
  switch ((r + 3) / 4) {
  case 1: matvec_add_t16_k(r, c, At, x, y, 1); break;
  case 2: matvec_add_t16_k(r, c, At, x, y, 2); break;
  case 3: matvec_add_t16_k(r, c, At, x, y, 3); break;
  default: matvec_add_t16_k(r, c, At, x, y, 4); break;
  }
}
#endif

/* v += G lam (G = M^-1 Jbar^T, nv x nb): svi_matvec_add's bits */
void svi_impact_g_add(const svi_impact* s, const double* lam, double* v) {
#ifdef SVI_AVX2_KERNELS
  if (s->nv <= 16 && svi_have_avx2()) {
    matvec_add_t16(s->nv, s->nb, s->Gt, lam, v);
    return;
  }
#endif
  svi_matvec_add(s->nv, s->nb, s->G, lam, v);
}

/* The pairs of lcp_residual, formed in the order of z (s->pair_w, pair_mag), then measured: pair o is
 * a = zu_o z_o against b = wu_o w_o, rounding term e = 4 eps wu_o mag_o (svi_pair_interval), the
 * residual their maximum, INFINITY if any pair's a + b + e is not finite (NaN or infinite).  The
 * test was once on the sum of all the pairs' a + b + e being NaN; per pair and on finiteness it
 * is stricter: an infinite velocity or rounding term (w = -inf with mag = +inf makes b - e and
 * b + e NaN, and the interval then drops out of the maximum) is never a residual that passes.  An
 * AVX2 twin and a scalar one: a maximum and a flag do not depend on the order. */
typedef struct {
  const double *w, *mag;   /* pair k's w and rounding magnitude (k = 0 .. cnt-1) */
  int cnt, nan;
  double r;
  const double *zu, *wu, *z;
} pair_acc;

/* pairs k0 .. cnt-1 (an AVX2 clone: see SVI_SIMD) */
SVI_SIMD static void pairs_scalar(pair_acc* p, int k0) {
  double r = p->r;
  int nan = p->nan;
  for (int k = k0; k < p->cnt; k++) {
    double a = p->zu[k] * p->z[k], b = p->wu[k] * p->w[k], e = 4 * DBL_EPSILON * p->wu[k] * p->mag[k];
    double sum = a + b + e;
    nan |= !(fabs(sum) <= DBL_MAX);
    double m = svi_pair_interval(a, b, e);
    r = m > r ? m : r;
  }
  p->r = r;
  p->nan = nan;
}

#ifdef SVI_AVX2_KERNELS
__attribute__((target("avx2"))) static void pairs_avx2(pair_acc* p) {
  int k = 0;
  __m256d sgn = _mm256_set1_pd(-0.0), c4 = _mm256_set1_pd(4 * DBL_EPSILON);
  __m256d vr = _mm256_setzero_pd(), vnan = _mm256_setzero_pd();
  for (; k + 4 <= p->cnt; k += 4) {
    __m256d wu = _mm256_loadu_pd(p->wu + k);
    __m256d a = _mm256_mul_pd(_mm256_loadu_pd(p->zu + k), _mm256_loadu_pd(p->z + k));
    __m256d b = _mm256_mul_pd(wu, _mm256_loadu_pd(p->w + k));
    __m256d e = _mm256_mul_pd(_mm256_mul_pd(c4, wu), _mm256_loadu_pd(p->mag + k));
    __m256d sum = _mm256_andnot_pd(sgn, _mm256_add_pd(_mm256_add_pd(a, b), e));   /* |a + b + e| */
    vnan = _mm256_or_pd(vnan, _mm256_cmp_pd(sum, _mm256_set1_pd(DBL_MAX), _CMP_NLE_UQ));
    __m256d m1 = viol4(a, _mm256_sub_pd(b, e), sgn), m2 = viol4(a, _mm256_add_pd(b, e), sgn);
    /* interval: m1 > m2 ? m1 : m2; then the running r = m > r ? m : r */
    vr = _mm256_max_pd(_mm256_max_pd(m1, m2), vr);
  }
  double v[4], r = p->r;
  _mm256_storeu_pd(v, vr);
  for (int j = 0; j < 4; j++) r = v[j] > r ? v[j] : r;
  p->r = r;
  p->nan |= _mm256_movemask_pd(vnan) != 0;
  pairs_scalar(p, k);   /* the rest, fewer than 4 */
}
#endif

static void pairs_run(pair_acc* p) {
#ifdef SVI_AVX2_KERNELS
  if (svi_have_avx2()) pairs_avx2(p);
  else
#endif
    pairs_scalar(p, 0);
}

/* The physical residual of z on (75) (routh) or (31), as svi_lcp_residual_units measures it
 * (pairs in the caller's units, the rounding term |q_i| + sum_j |A_ij z_j|), without the zeros
 * of the matrices: J v' = q + W lambda by columns of the symmetric W (vectorised), then O(n) per
 * pair.  For (75), q's rows of J v are u, so J v' is u + W lambda with svi_impact_add_w's bits:
 * it goes to s->u_next for the step's update (u_next_ok). */
SVI_SIMD static double lcp_residual(svi_impact* s, int routh, const double* q, const double* z) {
  int nc = s->nc, nb = s->nb, nd = s->nd, off = routh ? nc : 0;
  const double *zu = s->zunit + (routh ? 0 : nc), *wu = s->wunit + (routh ? 0 : nc), *lam = z + off;
  double* wl = routh ? s->u_next : s->lr_scratch;   /* nb: J v' = q + W lambda */
  double* wm = s->lr_scratch + nb;                  /* nb: |W| |lambda| */
  if (!s->dense) {   /* W's rows on use (wrows), or the low-rank solver's: J v' from G lambda, O(n nv) */
    s->u_next_ok = 0;
    return s->wrows || s->lowrank ? svi_lr_residual(s, routh, q, z, zu, wu, NULL, s->lr_scratch) : INFINITY;
  }
#ifdef SVI_AVX2_KERNELS
  if (nb <= 16 && svi_have_avx2()) w_times16_avx2(nb, s->W, lam, q + off, wl, wm);
  else
#endif
    kern_w_times(nb, s->W, lam, q + off, wl, wm);
  s->u_next_ok = routh;
  /* every pair's w and magnitude in the order of z, each section a loop without branches (the
   * compiler vectorises them in the AVX2 clone: each pair's own sums in their order), then the
   * pairs as svi_pair_residual (pair_acc) */
  double* restrict pw = s->pair_w;
  double* restrict pm = s->pair_mag;
  for (int i = 0; i < off; i++) {         /* (75): l_max - l_n against beta */
    double t = -lam[i];
    pw[i] = q[i] + t;
    pm[i] = fabs(q[i]) + fabs(t);
  }
  if (routh)                              /* J_n v' (+ beta) against l_n */
    for (int i = 0; i < nc; i++) {
      int o = off + i;
      pw[o] = wl[i] + z[i];
      pm[o] = fabs(q[o]) + wm[i] + fabs(z[i]);
    }
  else
    for (int i = 0; i < nc; i++) {
      pw[i] = wl[i];
      pm[i] = fabs(q[i]) + wm[i];
    }
  /* J_D v' + E gamma against l_D: row nc + j of J v' (contact j / nd) is pair off + nc + j */
  {
    const double *qd = q + off + nc, *wld = wl + nc, *wmd = wm + nc, *gam = z + off + nb;
    double* restrict pwd = pw + off + nc;
    double* restrict pmd = pm + off + nc;
    const int sh = nd >> 1;   /* nd = 2 nt, 2 or 4: contact j >> sh */
    for (int j = 0; j < nd * nc; j++) {
      double g = gam[j >> sh];
      pwd[j] = wld[j] + g;
      pmd[j] = fabs(qd[j]) + wmd[j] + fabs(g);
    }
  }
  for (int i = 0; i < nc; i++) {          /* mu l_n - E^T l_D against gamma */
    int o = off + nb + i;
    double t = s->mu[i] * lam[i], wi = q[o] + t, mag = fabs(q[o]) + fabs(t);
    for (int k = 0; k < nd; k++) { t = -lam[nc + i * nd + k]; wi += t; mag += fabs(t); }
    pw[o] = wi;
    pm[o] = mag;
  }
  pair_acc p = {.w = pw, .mag = pm, .cnt = off + nb + nc, .zu = zu, .wu = wu, .z = z};
  pairs_run(&p);
  return p.nan ? INFINITY : p.r;
}

static double residual_routh(void* s, const double* q, const double* z) { return lcp_residual(s, 1, q, z); }
static double residual_ap(void* s, const double* q, const double* z) { return lcp_residual(s, 0, q, z); }

/* the dense Lemke on (75) or (31) with the matrix prepared at setup; handover: as
 * svi_lcp_prepared.handover_neta */
static int dense_lemke(svi_impact* s, int routh, const double* q, const double* d, const int* order,
                       const double* sign, const svi_lcp_options* opt, double* z, svi_lcp_info* info,
                       int handover) {
  int n = routh ? s->n_routh : s->n_ap;
  if (!routh) svi_impact_ap(s);
  svi_lcp_prepared P = {.M = routh ? (s->routh_built ? s->A_routh : NULL) : s->A_ap,
                        .mnorm = routh ? s->anorm_routh : s->anorm_ap,
                        .ctx = s, .lazy = order && order == s->order ? &s->order_lazy : NULL,
                        .handover_neta = handover};
  if (routh) {
    P.matrix = routh_matrix;
    if (s->routh_t_built) {
      P.Mnt = s->Ant_routh;
      P.Mnt_nz = s->routh_nz;
    } else P.column = routh_column;
  } else if (n <= SVI_AT_NMAX) {
    P.Mnt = s->Ant_ap;
    P.Mnt_nz = s->Ant_nz;
  }
  /* the structured residual is the same quantity only in the physical units the laws pass */
  if (opt && opt->zunit == s->zunit + (routh ? 0 : s->nc) && opt->wunit == s->wunit + (routh ? 0 : s->nc))
    P.residual = routh ? residual_routh : residual_ap;
  return svi_lcp_lemke_prepared(s->lcp, n, &P, q, d, order, sign, opt, z, info);
}

/* the dense Lemke's whole solve after a low-rank path that failed, info counting both paths' pivots */
static int dense_after_lowrank(svi_impact* s, int routh, const double* q, const double* d, const int* order,
                               const double* sign, const svi_lcp_options* opt, double* z, svi_lcp_info* info) {
  int piv = info->pivots;
  int st = dense_lemke(s, routh, q, d, order, sign, opt, z, info, 0);
  info->pivots += piv;
  return st;
}

int svi_impact_lemke(svi_impact* s, int routh, const double* q, const double* d, const int* order,
                     const double* sign, const svi_lcp_options* opt, double* z, svi_lcp_info* info) {
  s->u_next_ok = 0;   /* set again by the residual of the solution this call returns, if any */
  if (s->lowrank) {
    svi_lcp_info li;
    if (!info) info = &li;
    if (order && order == s->order) svi_order_ready(&s->order_lazy);   /* drawn now: few solves here */
    int st = svi_lr_lemke(s->lr, s, routh, q, d, order, sign, opt, z, info);
    if (st >= 0 || s->n_routh > LOWRANK_DENSE_FALLBACK) return st;
    /* a mid-sized LCP the low-rank path could not solve (Lemke stalls on friction loops now
     * and then, not always on the same ones as the dense tableau): the dense tableau, with the
     * same rule and checks (W is formed once per event for it) */
    dense_ready(s);
    return dense_after_lowrank(s, routh, q, d, order, sign, opt, z, info);
  }
  if (!s->handover) return dense_lemke(s, routh, q, d, order, sign, opt, z, info, 0);
  /* a long path goes on in the low-rank Lemke from the basis the product form reached (the same
   * path; handover_neta); should that fail, the dense Lemke's whole solve as before */
  svi_lcp_info li;
  if (!info) info = &li;
  int st = dense_lemke(s, routh, q, d, order, sign, opt, z, info, s->handover);
  if (st != SVI_LCP_HANDOVER) return st;
  if (order && order == s->order) svi_order_ready(&s->order_lazy);
  svi_lcp_basis b;
  svi_lcp_handover(s->lcp, &b);
  s->handovers++;
  st = svi_lr_lemke_from(s->lr, s, routh, q, d, order, sign, opt, &b, z, info);
  if (st >= 0) return st;
  return dense_after_lowrank(s, routh, q, d, order, sign, opt, z, info);   /* u_next_ok is still 0 */
}

int svi_impact_nv(const svi_impact* s) { return s->nv; }
int svi_impact_nc(const svi_impact* s) { return s->nc; }
int svi_impact_lcp_rows(const svi_impact* s) { return s->n_routh; }
int svi_impact_tableau_only(const svi_impact* s) { return !s->lowrank && s->n_routh > SVI_PFI_NMAX; }

void svi_impact_normal_velocity(const svi_impact* s, const double* v, double* vn) {
  svi_matvec(s->nc, s->nv, s->Jbar, v, vn);
}

void svi_impact_tangent_velocity(const svi_impact* s, const double* v, double* vt) {
  svi_matvec(s->nc * s->nt, s->nv, s->Jt, v, vt);
}

/* K = 1/2 v^T M v, row by row over each row's nonzero span [lo_i, hi_i] (envelope): the terms
 * left out are exact zeros of M, so the same bits as over all nv (a non-finite v is caught by the
 * outcome check's own finiteness test, not through K) */
double svi_impact_kinetic_energy(const svi_impact* s, const double* v) {
  double k = 0;
  for (int i = 0; i < s->nv; i++) {
    double r = 0;
    for (int j = s->lo[i]; j <= s->hi[i]; j++) r += s->M[i * s->nv + j] * v[j];
    k += v[i] * r;
  }
  return 0.5 * k;
}

/* The invariants every returned outcome must satisfy, checked on the velocity actually returned
 * (v_ref = max(v_app, 1e-4 |Jbar v-|), v_app = max_i (-J_n,i v-)^+, impact_speed_unit):
 *   finite;  K(v+) <= K(v-) (1 + 1e-9)                    (Theorem 7, eq. 76)
 *   J_n v+ >= -1e-6 v_ref                                  (non-colliding, eq. 74 at the end)
 *   per contact: sum_k l_D,ik <= mu_i l_n,i (1 + 1e-9) + 1e-6 v_ref / kappa_i, all l >= -that
 *                                                          (linearised cone, eq. 33)
 * The cone's absolute slack is the impulse that changes contact i's velocity by the approach
 * tolerance (kappa_i: the speed per unit impulse), i.e. the same 1e-6 v_ref, and what a
 * regularised LCP solution accepted at residual 1e-6 may carry.  The cone is checked on the
 * total impulse, which lies in the cone when every step's does (the cone is convex). */
int svi_outcome_check(const svi_impact* s, const double* v, const double* lambda, double* ke,
                      double* min_vn) {
  int bad = 0, nv = s->nv, nc = s->nc, nd = s->nd;
  double k = svi_impact_kinetic_energy(s, v), m = INFINITY;
  for (int i = 0; i < nc; i++) {
    double vn = 0;
    for (int j = 0; j < nv; j++) vn += s->Jbar[i * nv + j] * v[j];
    if (vn < m || vn != vn) m = vn;
  }
  if (ke) *ke = k;
  if (min_vn) *min_vn = m;
  for (int i = 0; i < nv; i++) if (!isfinite(v[i])) return SVI_CHECK_FINITE;
  if (lambda)
    for (int i = 0; i < s->nb; i++) if (!isfinite(lambda[i])) return SVI_CHECK_FINITE;
  if (!(k <= s->ke0 * (1 + 1e-9))) bad |= SVI_CHECK_ENERGY;
  if (!(m >= -s->pen_tol)) bad |= SVI_CHECK_APPROACH;
  if (lambda) {
    double vr = impact_speed_unit(s);
    for (int i = 0; i < nc && !(bad & SVI_CHECK_CONE); i++) {
      double ln = lambda[i], lt = 0, floor = 1e-6 * vr / s->kappa[i];
      if (ln < -floor) bad |= SVI_CHECK_CONE;
      for (int r = 0; r < nd; r++) {
        double l = lambda[nc + i * nd + r];
        if (l < -floor) bad |= SVI_CHECK_CONE;
        lt += l;
      }
      if (lt > s->mu[i] * ln * (1 + 1e-9) + floor) bad |= SVI_CHECK_CONE;
    }
  }
  return bad;
}

int svi_impact_check_outcome(const svi_impact* s, const double* v, const double* lambda) {
  return svi_outcome_check(s, v, lambda, NULL, NULL);
}

double svi_impact_approach_speed(const svi_impact* s) { return s->v_app; }

double svi_impact_reference_impulse(const svi_impact* s) { return s->step_ref; }
double svi_impact_sep_tol(const svi_impact* s) { return s->sep_tol; }

void svi_classify(const svi_impact* s, const double* v, char* buf) {
  double tol = 1e-6 * fmax(s->vscale, 1e-6);
  for (int i = 0; i < s->nc; i++) {
    double vn = 0, vt2 = 0;
    for (int k = 0; k < s->nv; k++) vn += s->Jbar[i * s->nv + k] * v[k];
    for (int t = 0; t < s->nt; t++) {
      double vt = 0;
      for (int k = 0; k < s->nv; k++) vt += s->Jt[(i * s->nt + t) * s->nv + k] * v[k];
      vt2 += vt * vt;
    }
    buf[i] = vn > tol ? 'L' : (sqrt(vt2) > tol ? 'D' : 'S');
  }
  buf[s->nc] = 0;
}

void svi_impact_last_impulse(const svi_impact* s, double* lambda) {
  memcpy(lambda, s->Lam, sizeof(double) * s->nb);
}
