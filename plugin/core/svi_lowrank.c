/* svi_lowrank.c -- Lemke's method on the impact LCPs (31) and (75) without forming them.
 *
 * Both LCP matrices are a per-contact part plus a low-rank part:
 *     A = A0 + P Jbar M^-1 Jbar^T P^T,
 * A0 block diagonal (one (3 + nd) block per contact for (75), (2 + nd) for (31): the -I / I
 * budget blocks, E, mu, -E^T), P the embedding of the nb = nc (1 + nd) impulse rows, and the
 * Delassus part of rank <= nv however many contacts there are.  With the velocity change
 * dv = M^-1 Jbar^T lambda_bar as nv extra unknowns (always basic), a Lemke basis B is the
 * bordered system
 *     D_i x_i - (P Jbar)_i dv - d_i z0 = b_i         per contact i   (D_i: its basic columns of
 *     dv - sum_i G_B,i x_i            = b_g                              [I | -A0])
 * G_B,i: the columns of G = M^-1 Jbar^T of contact i's basic impulses.  Each D_i (<= 7 x 7) is
 * reduced by Gauss-Jordan elimination with complete pivoting: x_i = E_i r_i + N_i f_i with the
 * constraints C_i r_i = 0, r_i = b_i + (P Jbar)_i dv + d_i z0 (N_i: its column null space, f_i
 * free, C_i: its left null space).  What remains is a dense system in (dv, z0, f) of size
 * s <= 2 nv + 1 (a singular D_i can only be made up by the rank-nv coupling).  A pivot changes
 * one or two contacts' columns.  The pivots are kept as etas on a base (B = B_base E_1 ... E_k,
 * the product form of svi_lcp.c on top of this factorisation): every k pivots, k about
 * sqrt(2 s^3 / 3 n) (lr_eta_max), the contacts they changed are re-reduced (O(p^3 + p nv^2)),
 * the running sums sum_i G_B,i E_i (P Jbar)_i updated and the small system refactored (O(s^3)).
 * The entering column costs O(n nv + s^2) in the base and O(n) an eta, the ratio test O(n).  No
 * n x n matrix is formed.
 *
 * The pivoting rule is the dense solver's (svi_lcp.c): covering vector d, the lexicographic
 * ratio test on rows of [x_B | B^-1] in the perturbation's order and signs (columns of B^-1 are
 * computed on demand, one small solve each), z0 leaving on ties, the same tolerances, iteration
 * cap and regularised retry, and the same physical residual as the acceptance test.
 * docs/theory.md 5.2 has the derivation.
 */
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "svi_internal.h"

#define LR_P 7                        /* pairs per contact: 3 + nd <= 7 */
#define LR_SORT_INSERT 32             /* ratio_test: ties of up to this many rows by insertion */
#define LR_SMAX (2 * SVI_LR_MAX_NV + 2 + LR_P)   /* the global system's largest size */
#define LR_ETA_MAX 32                 /* pivots between two refactors at most (lr_eta_max) */
#define LR_ETA_PIVTOL 1e-2            /* a smaller pivot, relative to its eta, refactors at once */
enum { ST_NONE = 0, ST_W = 1, ST_Z = 2 };

/* One reduction of a contact's basic columns (factor_contact), kept by what it depends on: the
 * statuses of its pairs, mu, the regularisation, nd and the law (A0's block) */
#define LR_CACHE_BITS 7
#define LR_CACHE (1 << LR_CACHE_BITS)
typedef struct {
  uint32_t code;                     /* statuses, nd, routh; UINT32_MAX: empty */
  uint64_t mu, alpha;                /* their bits */
  int nf, ncn, fc[LR_P];
  double E[LR_P * LR_P], N[LR_P * LR_P], C[LR_P * LR_P];
} lr_reduced;

struct svi_lr {
  int nc_max, nv_max, n_max, s_max;
  /* the current LCP */
  const svi_impact* s;
  int nc, nv, nd, p, n, routh;
  double alpha;                      /* regularisation added to A0's diagonal */
  /* per slot (slot = contact * p + local pair) */
  int *orig, *slot_of, *jrow, *rowpos, *cont;   /* cont: a slot's contact, slot / p */
  signed char* st;                   /* the path's statuses (the current basis) */
  signed char* sb;                   /* the statuses the reductions and S were made for (the base) */
  double *x, *dir, *q, *d, *y0, *Yt, *Yt0, *Ys, *bslot;
  /* per contact */
  double *E, *N, *C, *CJ, *Cd, *GN;
  int *nfree, *ncons, *freecol, *dpos;
  unsigned char* ident;              /* the contact's basic columns are the identity (E = I) */
  /* global system */
  double *Sv, *S0, *Slu, *Slt, *R, *u;   /* Slt: Slu's multipliers by column (solve_global) */
  int *piv, *defect;
  int ndefect, z0_active, sdim, sld, singular;
  /* lexicographic scratch */
  int *cand, *byrow;                 /* byrow: n, zeros between tests (ratio_test) */
  double *lexcol, *lexdir;           /* lexdir: dir at the candidates, compacted with them */
  unsigned char* mark;
  lr_reduced* cache;                 /* LR_CACHE reductions, direct-mapped */
  /* the pivots since the base (lr_rebase): B = B_base E_1 ... E_neta in positions 0 .. n (a slot's
   * place in the base, z0's n) */
  double *eta, *lval;                /* eta: LR_ETA_MAX columns of n + 1 (stride ldeta) */
  int *eta_pos, *pos_of, *lidx, *llist, *dirty, *moved;   /* moved: slots whose pos_of the etas changed */
  unsigned char *touched, *isdirty;  /* touched: an eta pivoted at this position */
  int neta, eta_max, ldeta, ndirty, nmoved;
  int eta_req;                       /* svi_lr_set_eta_max: > 0 that many, else lr_eta_max's rule */
  long long eta_dirs, rebases, early; /* svi_lr_eta_counts */
  int verify;                        /* svi_lr_set_verify: check each column of B^-1 (tests) */
  long long vchecks, vfails, vlocal;   /* vlocal: of the checks, lex_filter_local's */
  int* vcand;                        /* verify's scratch: two lists of candidates */
  double* vcol;                      /* verify's scratch: the path's dir kept, and the column */
  /* runs of contacts that direction() combines over the velocities they reach only (run r:
   * contacts run_start[r] to run_start[r + 1] - 1, velocities run_mask[r], bit k: dof k) */
  uint64_t* run_mask;
  int *run_start, nrun;
  int runs_off;                      /* svi_lr_set_runs(w, 0): one run over every velocity (tests) */
  const svi_impact* ev;              /* the event the runs are for (svi_lr_event) */
};

static void* xalloc(size_t n) { return calloc(n ? n : 1, 1); }

svi_lr* svi_lr_create(int nc_max, int nv_max) {
  svi_lr* w = calloc(1, sizeof(*w));
  if (!w) return NULL;
  int n = nc_max * LR_P, s = 2 * nv_max + 2 + LR_P;
  w->nc_max = nc_max;
  w->nv_max = nv_max;
  w->n_max = n;
  w->s_max = s;
  w->orig = xalloc(sizeof(int) * n);
  w->slot_of = xalloc(sizeof(int) * n);
  w->jrow = xalloc(sizeof(int) * n);
  w->rowpos = xalloc(sizeof(int) * n);
  w->cont = xalloc(sizeof(int) * n);
  w->st = xalloc((size_t)n);
  w->x = xalloc(sizeof(double) * (n + 4));   /* x[n]: z0; to n + 3 read by ratio_test's scan */
  w->dir = xalloc(sizeof(double) * (n + 4));  /* zeros from n to a multiple of 4 (ratio_test) */
  w->q = xalloc(sizeof(double) * n);
  w->d = xalloc(sizeof(double) * n);
  w->y0 = xalloc(sizeof(double) * n);
  w->bslot = xalloc(sizeof(double) * n);
  w->Yt = xalloc(sizeof(double) * n * nv_max);
  w->Yt0 = xalloc(sizeof(double) * n * nv_max);
  w->Ys = xalloc(sizeof(double) * n * nv_max);
  w->E = xalloc(sizeof(double) * nc_max * LR_P * LR_P);
  w->N = xalloc(sizeof(double) * nc_max * LR_P * LR_P);
  w->C = xalloc(sizeof(double) * nc_max * LR_P * LR_P);
  w->CJ = xalloc(sizeof(double) * nc_max * LR_P * nv_max);
  w->Cd = xalloc(sizeof(double) * nc_max * LR_P);
  w->GN = xalloc(sizeof(double) * nc_max * LR_P * nv_max);
  w->nfree = xalloc(sizeof(int) * nc_max);
  w->ncons = xalloc(sizeof(int) * nc_max);
  w->freecol = xalloc(sizeof(int) * nc_max * LR_P);
  w->dpos = xalloc(sizeof(int) * nc_max);
  w->ident = xalloc((size_t)nc_max);
  w->defect = xalloc(sizeof(int) * nc_max);
  w->Sv = xalloc(sizeof(double) * nv_max * nv_max);
  w->S0 = xalloc(sizeof(double) * nv_max);
  w->Slu = xalloc(sizeof(double) * s * (s + 6));
  w->Slt = xalloc(sizeof(double) * s * (s + 6));
  w->R = xalloc(sizeof(double) * s);
  w->u = xalloc(sizeof(double) * s);
  w->piv = xalloc(sizeof(int) * s);
  w->cand = xalloc(sizeof(int) * n);
  w->byrow = xalloc(sizeof(int) * n);
  w->lexcol = xalloc(sizeof(double) * n);
  w->lexdir = xalloc(sizeof(double) * n);
  w->mark = xalloc((size_t)n);
  w->cache = xalloc(sizeof(lr_reduced) * LR_CACHE);
  w->sb = xalloc((size_t)n);
  w->ldeta = (n + 1 + 3) & ~3;
  w->eta = xalloc(sizeof(double) * (size_t)w->ldeta * LR_ETA_MAX);
  w->lval = xalloc(sizeof(double) * (n + 1 + LR_ETA_MAX));
  w->eta_pos = xalloc(sizeof(int) * LR_ETA_MAX);
  w->moved = xalloc(sizeof(int) * 2 * LR_ETA_MAX);
  w->pos_of = xalloc(sizeof(int) * n);
  w->lidx = xalloc(sizeof(int) * (n + 1));
  w->llist = xalloc(sizeof(int) * (n + 1 + LR_ETA_MAX));
  w->dirty = xalloc(sizeof(int) * nc_max);
  w->touched = xalloc((size_t)n + 1);
  w->isdirty = xalloc((size_t)nc_max);
  w->vcol = xalloc(sizeof(double) * 2 * (n + 8));
  w->vcand = xalloc(sizeof(int) * 2 * (size_t)n);
  w->run_mask = xalloc(sizeof(uint64_t) * nc_max);
  w->run_start = xalloc(sizeof(int) * (nc_max + 1));
  for (int k = 0; w->lidx && k <= n; k++) w->lidx[k] = -1;
  for (int k = 0; w->cache && k < LR_CACHE; k++) w->cache[k].code = UINT32_MAX;
  if (!w->orig || !w->slot_of || !w->jrow || !w->rowpos || !w->cont || !w->st || !w->x || !w->dir || !w->q ||
      !w->d || !w->y0 || !w->bslot || !w->Yt || !w->Yt0 || !w->Ys || !w->E || !w->N || !w->C || !w->CJ ||
      !w->Cd || !w->GN || !w->nfree || !w->ncons || !w->freecol || !w->dpos || !w->ident || !w->defect ||
      !w->Sv || !w->S0 || !w->Slu || !w->Slt || !w->R || !w->u || !w->piv || !w->cand || !w->byrow ||
      !w->lexcol || !w->lexdir || !w->mark || !w->cache || !w->sb || !w->eta || !w->lval ||
      !w->eta_pos || !w->moved || !w->pos_of || !w->lidx || !w->llist || !w->dirty || !w->touched || !w->isdirty || !w->vcol || !w->vcand ||
      !w->run_mask || !w->run_start) {
    svi_lr_destroy(w);
    return NULL;
  }
  return w;
}

void svi_lr_destroy(svi_lr* w) {
  if (!w) return;
  void* p[] = {w->orig, w->slot_of, w->jrow, w->rowpos, w->cont, w->st, w->x, w->dir, w->q, w->d, w->y0,
               w->bslot, w->Yt, w->Yt0, w->Ys, w->E, w->N, w->C, w->CJ, w->Cd, w->GN, w->nfree, w->ncons,
               w->freecol, w->dpos, w->ident, w->defect, w->Sv, w->S0, w->Slu, w->Slt, w->R, w->u, w->piv,
               w->cand, w->byrow, w->lexcol, w->lexdir, w->mark, w->cache, w->sb, w->eta, w->lval,
               w->eta_pos, w->moved, w->pos_of, w->lidx, w->llist, w->dirty, w->touched, w->isdirty, w->vcol, w->vcand,
               w->run_mask, w->run_start};
  for (size_t i = 0; i < sizeof(p) / sizeof(p[0]); i++) free(p[i]);
  free(w);
}

/* ---- layout ---------------------------------------------------------------------------------
 * Local pairs of contact i, (75): 0 beta, 1 l_n, 2..1+nd l_D, 2+nd gamma; (31): the same without
 * beta.  Original indices: (75) [beta; l_n; l_D; gamma], (31) [l_n; l_D; gamma]. */
static int local_n(const svi_lr* w) { return w->routh ? 1 : 0; }
static int local_gamma(const svi_lr* w) { return local_n(w) + 1 + w->nd; }

static void layout(svi_lr* w) {
  int nc = w->nc, nd = w->nd, p = w->p, nb = nc * (1 + nd), ln = local_n(w);
  for (int i = 0; i < nc; i++) {
    for (int l = 0; l < p; l++) {
      int slot = i * p + l, o, jr = -1;
      if (w->routh && l == 0) o = i;
      else if (l == ln) { o = (w->routh ? nc : 0) + i; jr = i; }
      else if (l < ln + 1 + nd) {
        int k = l - ln - 1;
        o = (w->routh ? 2 * nc : nc) + i * nd + k;
        jr = nc + i * nd + k;
      } else o = (w->routh ? nc : 0) + nb + i;
      w->orig[slot] = o;
      w->slot_of[o] = slot;
      w->jrow[slot] = jr;
      w->cont[slot] = i;
    }
  }
}

/* A0[a][b] of contact i (local indices), regularisation included */
static double a0(const svi_lr* w, int i, int a, int b) {
  double v = a == b ? w->alpha : 0.0;
  int ln = local_n(w), lg = local_gamma(w);
  if (w->routh) {
    if (a == 0 && b == 1) return v - 1.0;
    if (a == 1 && b == 0) return v + 1.0;
  }
  if (a > ln && a < lg && b == lg) return v + 1.0;      /* E */
  if (a == lg && b == ln) return v + w->s->mu[i];         /* mu */
  if (a == lg && b > ln && b < lg) return v - 1.0;      /* -E^T */
  return v;
}

/* ---- the per-contact reduction -------------------------------------------------------------- */

/* row l of contact i's E times a local vector b, and one entry of E */
static double e_dot(const svi_lr* w, int i, int l, const double* b) {
  if (w->ident[i]) return b[l];
  const double* E = w->E + (size_t)i * LR_P * LR_P + l * LR_P;
  double a = 0;
  for (int k = 0; k < w->p; k++) a += E[k] * b[k];
  return a;
}

static double e_at(const svi_lr* w, int i, int l, int c) {
  if (w->ident[i]) return l == c ? 1.0 : 0.0;
  return w->E[(size_t)i * LR_P * LR_P + l * LR_P + c];
}

static const double* gcol(const svi_lr* w, int r) { return w->s->Gt + (size_t)r * w->nv; }

/* contact i's contribution sum_l G_B(l) (x) Y_l to Sv, and to S0, with sign sg (Y_l: the slot's
 * row of Y, contiguous in Ys; only a non-identity contact has basic impulses) */
SVI_SIMD static void contribution(svi_lr* w, int i, double sg) {
  int p = w->p, nv = w->nv;
  for (int l = 0; l < p; l++) {
    int slot = i * p + l;
    if (w->sb[slot] != ST_Z || w->jrow[slot] < 0) continue;
    const double* g = gcol(w, w->jrow[slot]);
    const double* restrict ys = w->Ys + (size_t)slot * nv;
    for (int a = 0; a < nv; a++) {
      double ga = sg * g[a];
      if (ga == 0) continue;
      double* restrict row = w->Sv + a * nv;
      for (int b = 0; b < nv; b++) row[b] += ga * ys[b];
      w->S0[a] += ga * w->y0[slot];
    }
  }
}

static void defect_set(svi_lr* w, int i, int on) {
  if (on && w->dpos[i] < 0) {
    w->dpos[i] = w->ndefect;
    w->defect[w->ndefect++] = i;
  } else if (!on && w->dpos[i] >= 0) {
    int k = w->dpos[i], last = w->defect[--w->ndefect];
    w->defect[k] = last;
    w->dpos[last] = k;
    w->dpos[i] = -1;
  }
}

/* Reduce contact i's basic columns D_i (p x nbasic) by Gauss-Jordan with complete pivoting into
 * cr: E (rows: basic local pairs), N (free columns), C (left null space).  A function of the
 * statuses of i's pairs, mu_i, alpha, nd and the law only (factor_contact keeps it by them). */
static void reduce_contact(const svi_lr* w, int i, lr_reduced* cr) {
  int p = w->p, base = i * p;
  /* T = [D | I_p], p x (nbasic + p) */
  double T[LR_P][2 * LR_P];
  int col[LR_P], nbasic = 0;
  for (int l = 0; l < p; l++)
    if (w->sb[base + l] != ST_NONE) col[nbasic++] = l;
  double dmax = 0;
  for (int r = 0; r < p; r++) {
    for (int c = 0; c < nbasic; c++) {
      int l = col[c];
      double v = w->sb[base + l] == ST_W ? (r == l ? 1.0 : 0.0) : -a0(w, i, r, l);
      T[r][c] = v;
      if (fabs(v) > dmax) dmax = fabs(v);
    }
    for (int c = 0; c < p; c++) T[r][nbasic + c] = r == c ? 1.0 : 0.0;
  }
  double tol = 1e-10 * (dmax > 0 ? dmax : 1.0);
  int pivcol[LR_P], used[LR_P] = {0}, rank = 0, ncol = nbasic + p;
  for (int t = 0; t < p && t < nbasic; t++) {
    int br = -1, bc = -1;
    double best = tol;
    for (int r = t; r < p; r++)
      for (int c = 0; c < nbasic; c++) {
        if (used[c]) continue;
        double a = fabs(T[r][c]);
        if (a > best) { best = a; br = r; bc = c; }
      }
    if (br < 0) break;
    if (br != t)
      for (int c = 0; c < ncol; c++) { double tmp = T[t][c]; T[t][c] = T[br][c]; T[br][c] = tmp; }
    double inv = 1.0 / T[t][bc];
    for (int c = 0; c < ncol; c++) T[t][c] *= inv;
    T[t][bc] = 1.0;
    for (int r = 0; r < p; r++) {
      if (r == t) continue;
      double f = T[r][bc];
      if (f == 0) continue;
      for (int c = 0; c < ncol; c++) T[r][c] -= f * T[t][c];
      T[r][bc] = 0.0;
    }
    used[bc] = 1;
    pivcol[t] = bc;
    rank++;
  }
  /* E: basic pair col[pivcol[t]] = (R r)_t, free pairs 0 */
  double* E = cr->E;
  memset(E, 0, sizeof(double) * LR_P * LR_P);
  for (int t = 0; t < rank; t++) {
    int l = col[pivcol[t]];
    for (int c = 0; c < p; c++) E[l * LR_P + c] = T[t][nbasic + c];
  }
  /* N: one column per free basic pair */
  int nf = 0;
  double* Nf = cr->N;
  memset(Nf, 0, sizeof(double) * LR_P * LR_P);
  for (int c = 0; c < nbasic; c++) {
    if (used[c]) continue;
    Nf[col[c] * LR_P + nf] = 1.0;
    for (int t = 0; t < rank; t++) Nf[col[pivcol[t]] * LR_P + nf] = -T[t][c];
    cr->fc[nf++] = col[c];
  }
  /* C: the zero rows of the reduced D */
  int ncn = p - rank;
  for (int t = 0; t < ncn; t++)
    for (int c = 0; c < p; c++) cr->C[t * LR_P + c] = T[rank + t][nbasic + c];
  cr->nf = nf;
  cr->ncn = ncn;
}

/* Contact i's reduction E, N, C (reduce_contact, or the same one kept from an earlier pivot),
 * then Y_i = E (P Jbar)_i, y0_i = E d_i and the products the global system needs. */
SVI_SIMD static void factor_contact(svi_lr* w, int i) {
  int p = w->p, nv = w->nv, n = w->n;
  int base = i * p;
  double* E = w->E + (size_t)i * LR_P * LR_P;
  double* Nf = w->N + (size_t)i * LR_P * LR_P;
  double* Cm = w->C + (size_t)i * LR_P * LR_P;
  int* fc = w->freecol + i * LR_P;
  int allw = 1;
  for (int l = 0; l < p; l++) allw &= w->sb[base + l] == ST_W;
  w->ident[i] = (unsigned char)allw;
  if (allw) {   /* identity block: the common case, no elimination */
    for (int l = 0; l < p; l++) {
      int slot = base + l;
      for (int b = 0; b < nv; b++) w->Yt[(size_t)b * n + slot] = w->Yt0[(size_t)b * n + slot];
      w->y0[slot] = w->d[slot];
    }
    w->nfree[i] = w->ncons[i] = 0;
    defect_set(w, i, 0);
    return;
  }
  /* the reduction of D_i: from the cache, or made and kept there */
  uint32_t code = (uint32_t)w->nd << 14 | (uint32_t)w->routh << 18;
  for (int l = 0; l < p; l++) code |= (uint32_t)w->sb[base + l] << (2 * l);
  uint64_t mb, ab;
  memcpy(&mb, &w->s->mu[i], sizeof(mb));
  memcpy(&ab, &w->alpha, sizeof(ab));
  uint32_t h = (code ^ (uint32_t)(mb >> 32) ^ (uint32_t)mb ^ (uint32_t)(ab >> 32)) * 2654435761u;
  lr_reduced* cr = w->cache + (h >> (32 - LR_CACHE_BITS));   /* Fibonacci hashing */
  if (cr->code != code || cr->mu != mb || cr->alpha != ab) {
    cr->code = code;
    cr->mu = mb;
    cr->alpha = ab;
    reduce_contact(w, i, cr);
  }
  memcpy(E, cr->E, sizeof(cr->E));
  memcpy(Nf, cr->N, sizeof(cr->N));
  memcpy(Cm, cr->C, sizeof(cr->C));
  memcpy(fc, cr->fc, sizeof(cr->fc));
  int nf = cr->nf, ncn = cr->ncn;
  w->nfree[i] = nf;
  w->ncons[i] = ncn;
  /* Y = E (P Jbar)_i, y0 = E d_i: each slot's row of Y in Ys (contiguous, from the rows of Jbar),
   * then scattered into its column of Yt */
  for (int l = 0; l < p; l++) {
    int slot = base + l;
    double yd = 0;
    double* restrict ys = w->Ys + (size_t)slot * nv;
    for (int b = 0; b < nv; b++) ys[b] = 0;
    if (w->sb[slot] != ST_NONE) {
      for (int c = 0; c < p; c++) {
        double e = E[l * LR_P + c];
        if (e == 0) continue;
        yd += e * w->d[base + c];
        if (w->jrow[base + c] < 0) continue;
        const double* restrict jb = w->s->Jbar + (size_t)w->jrow[base + c] * nv;
        for (int b = 0; b < nv; b++) ys[b] += e * jb[b];
      }
    }
    for (int b = 0; b < nv; b++) w->Yt[(size_t)b * n + slot] = ys[b];
    w->y0[slot] = yd;
  }
  /* GN = G_B N (nv x nf), CJ = C (P Jbar)_i (ncn x nv), Cd = C d_i */
  double* GN = w->GN + (size_t)i * LR_P * w->nv_max;
  double* CJ = w->CJ + (size_t)i * LR_P * w->nv_max;
  double* Cd = w->Cd + (size_t)i * LR_P;
  for (int f = 0; f < nf; f++) {
    for (int a = 0; a < nv; a++) GN[f * nv + a] = 0;
    for (int l = 0; l < p; l++) {
      int slot = base + l;
      double c = Nf[l * LR_P + f];
      if (c == 0 || w->sb[slot] != ST_Z || w->jrow[slot] < 0) continue;
      const double* g = gcol(w, w->jrow[slot]);
      for (int a = 0; a < nv; a++) GN[f * nv + a] += c * g[a];
    }
  }
  for (int t = 0; t < ncn; t++) {
    double cd = 0;
    for (int a = 0; a < nv; a++) CJ[t * nv + a] = 0;
    for (int c = 0; c < p; c++) {
      double cc = Cm[t * LR_P + c];
      if (cc == 0) continue;
      cd += cc * w->d[base + c];
      if (w->jrow[base + c] < 0) continue;
      const double* restrict jb = w->s->Jbar + (size_t)w->jrow[base + c] * nv;
      for (int a = 0; a < nv; a++) CJ[t * nv + a] += cc * jb[a];
    }
    Cd[t] = cd;
  }
  defect_set(w, i, nf > 0 || ncn > 0);
}


/* y += a x over n contiguous values */
SVI_SIMD static void kern_axpy(int n, double a, const double* restrict x, double* restrict y) {
  for (int j = 0; j < n; j++) y[j] += a * x[j];
}

/* max(m, |v|) (the order of a max does not change its value) */
static inline double amax(double m, double v) {
  double a = fabs(v);
  return a > m ? a : m;
}

/* ---- the global system in (dv, z0, f) -------------------------------------------------------- */

/* Column c's elimination of the rows listed (multipliers in column c): row r -= f_r row c on
 * columns c + 1 .. s - 1, each entry as y += (-f_r) x (kern_axpy's bits).  Rows have the stride
 * ld >= s + 3, so every row is updated in whole vectors from column c + 1 on: the last one runs
 * into the padding columns, whose values (zeros, and zeros times multipliers) nothing reads.
 * Four rows a pass over the pivot row; inlined into build_global's clones. */
static inline void lu_rows_update(int s, int ld, int c, double* L, const int* rows, int nr) {
  const double* x = L + c * ld;
  int j0 = c + 1;
  int m = 0;
  for (; m + 4 <= nr; m += 4) {
    double *y0 = L + rows[m] * ld, *y1 = L + rows[m + 1] * ld, *y2 = L + rows[m + 2] * ld,
           *y3 = L + rows[m + 3] * ld;
    double a0v = -y0[c], a1v = -y1[c], a2v = -y2[c], a3v = -y3[c];
    const svi_v4d f0 = {a0v, a0v, a0v, a0v}, f1 = {a1v, a1v, a1v, a1v}, f2 = {a2v, a2v, a2v, a2v},
                  f3 = {a3v, a3v, a3v, a3v};
    for (int j = j0; j < s; j += 4) {
      svi_v4d xv, yv;
      memcpy(&xv, x + j, sizeof(xv));
      memcpy(&yv, y0 + j, sizeof(yv)); yv += f0 * xv; memcpy(y0 + j, &yv, sizeof(yv));
      memcpy(&yv, y1 + j, sizeof(yv)); yv += f1 * xv; memcpy(y1 + j, &yv, sizeof(yv));
      memcpy(&yv, y2 + j, sizeof(yv)); yv += f2 * xv; memcpy(y2 + j, &yv, sizeof(yv));
      memcpy(&yv, y3 + j, sizeof(yv)); yv += f3 * xv; memcpy(y3 + j, &yv, sizeof(yv));
    }
  }
  for (; m < nr; m++) {
    double* y = L + rows[m] * ld;
    double a = -y[c];
    const svi_v4d f = {a, a, a, a};
    for (int j = j0; j < s; j += 4) {
      svi_v4d xv, yv;
      memcpy(&xv, x + j, sizeof(xv));
      memcpy(&yv, y + j, sizeof(yv));
      yv += f * xv;
      memcpy(y + j, &yv, sizeof(yv));
    }
  }
}

/* Assemble S straight into its LU array, every entry written once, with max |S_ij| taken on the
 * way, and LU-factor it with partial pivoting; w->singular when a pivot vanishes.
 *       [ I - Sv   -S0   -G_B N_1 ... ]   rows of the velocity change
 *   S = [ C_1 J     Cd_1    0     ... ]   each defect contact's constraint rows
 *       [ ...                         ]
 * (the -S0 / Cd column only while z0 is basic).  Row stride w->sld = s + 3 .. s + 6, a multiple
 * of 4, the padding zeros (lu_rows_update). */
SVI_SIMD static void build_global(svi_lr* w) {
  int nv = w->nv, zc = w->z0_active, s = nv + zc, nrow = nv;
  for (int k = 0; k < w->ndefect; k++) s += w->nfree[w->defect[k]];
  for (int k = 0; k < w->ndefect; k++) nrow += w->ncons[w->defect[k]];
  w->sdim = s;
  w->singular = s != nrow || s > w->s_max || s > LR_SMAX;
  if (w->singular) return;
  int ld = (s + 6) & ~3;
  w->sld = ld;
  double* L = w->Slu;
  double smax = 0;
  for (int a = 0; a < nv; a++) {
    double* row = L + a * ld;
    const double* sv = w->Sv + a * nv;
    for (int b = 0; b < nv; b++) {
      double v = (a == b ? 1.0 : 0.0) - sv[b];
      row[b] = v;
      smax = amax(smax, v);
    }
    if (zc) {
      row[nv] = -w->S0[a];
      smax = amax(smax, row[nv]);
    }
    for (int c = s; c < ld; c++) row[c] = 0.0;
  }
  int fcol = nv + zc, crow = nv;
  for (int k = 0; k < w->ndefect; k++) {
    int i = w->defect[k];
    const double* GN = w->GN + (size_t)i * LR_P * w->nv_max;
    const double* CJ = w->CJ + (size_t)i * LR_P * w->nv_max;
    const double* Cd = w->Cd + (size_t)i * LR_P;
    for (int f = 0; f < w->nfree[i]; f++, fcol++)
      for (int a = 0; a < nv; a++) {
        double v = -GN[f * nv + a];
        L[a * ld + fcol] = v;
        smax = amax(smax, v);
      }
    for (int t = 0; t < w->ncons[i]; t++, crow++) {
      double* row = L + crow * ld;
      for (int a = 0; a < nv; a++) {
        row[a] = CJ[t * nv + a];
        smax = amax(smax, row[a]);
      }
      if (zc) {
        row[nv] = Cd[t];
        smax = amax(smax, row[nv]);
      }
      for (int c = nv + zc; c < ld; c++) row[c] = 0.0;
    }
  }
  /* LU with partial pivoting; the multipliers also by column in Slt's lower part (solve_global's
   * forward pass reads them contiguously), swapped with the rows, and at the end U by column in
   * its upper part (the back pass) */
  double* Lt = w->Slt;
  for (int c = 0; c < s; c++) {
    int pr = c;
    double best = fabs(L[c * ld + c]);
    for (int r = c + 1; r < s; r++)
      if (fabs(L[r * ld + c]) > best) { best = fabs(L[r * ld + c]); pr = r; }
    w->piv[c] = pr;
    if (!(best > 1e-14 * smax)) { w->singular = 1; return; }
    if (pr != c) {
      for (int k = 0; k < s; k++) { double t = L[c * ld + k]; L[c * ld + k] = L[pr * ld + k]; L[pr * ld + k] = t; }
      for (int k = 0; k < c; k++) {   /* the same swap in the multipliers kept by column */
        double t = Lt[k * ld + c]; Lt[k * ld + c] = Lt[k * ld + pr]; Lt[k * ld + pr] = t;
      }
    }
    double inv = 1.0 / L[c * ld + c];
    int rows[LR_SMAX], nr = 0;
    for (int r = c + 1; r < s; r++) {
      double f = L[r * ld + c] * inv;
      L[r * ld + c] = f;
      Lt[c * ld + r] = f;
      if (f != 0) rows[nr++] = r;   /* a zero multiplier leaves its row as it is */
    }
    lu_rows_update(s, ld, c, L, rows, nr);
  }
  for (int c = 0; c < s; c++)   /* U by column into Slt's upper part (solve_global's back pass) */
    for (int r = 0; r <= c; r++) Lt[c * ld + r] = L[r * ld + c];
}

SVI_SIMD static void solve_global(const svi_lr* w, double* x) {
  int s = w->sdim, ld = w->sld;
  for (int c = 0; c < s; c++) {   /* P b: the factorisation swapped whole rows */
    int pr = w->piv[c];
    if (pr != c) { double t = x[c]; x[c] = x[pr]; x[pr] = t; }
  }
  /* forward: column c's multipliers contiguous in Slt, every x_r updated in increasing c as by
   * rows of Slu (the same products and differences in the same order) */
  const double* Lt = w->Slt;
  for (int c = 0; c < s; c++) {
    const double xc = x[c];
    const double* restrict lc = Lt + c * ld;
    for (int r = c + 1; r < s; r++) x[r] -= lc[r] * xc;
  }
  /* back: U x = y by columns (x_r = y_r / U_rr, then x_i -= U_ir x_r for every i < r), so each
   * x_i takes its terms in decreasing k: x_i = (((y_i - U_i,s-1 x_s-1) - ...) - U_i,i+1 x_i+1) / U_ii.
   * By rows (a dot product a row, increasing k) every difference waited for the one before it and
   * the first for the row just solved: one chain of s^2 / 2 subtractions, 60 % of solve_global on a
   * new user's hexapod (nv = 30).  By columns the chain is one multiply, one subtraction and the
   * division a row, the rest in vectors. */
  for (int r = s - 1; r >= 0; r--) {
    const double* restrict uc = Lt + r * ld;   /* U's column r: rows 0 .. r */
    const double xr = x[r] / uc[r];
    x[r] = xr;
    for (int i = 0; i < r; i++) x[i] -= uc[i] * xr;
  }
}

/* Right-hand side of the global system for a local right-hand side b (p values) at contact c
 * (c < 0: none) and a global one bg (NULL: 0); then solve into w->u. */
static void global_solve_local(svi_lr* w, int c, const double* b, const double* bg) {
  int nv = w->nv, p = w->p, s = w->sdim;
  double* R = w->R;
  memset(R, 0, sizeof(double) * s);
  if (bg) memcpy(R, bg, sizeof(double) * nv);
  if (c >= 0) {
    for (int l = 0; l < p; l++) {   /* G_B E b */
      int slot = c * p + l;
      if (w->sb[slot] != ST_Z || w->jrow[slot] < 0) continue;
      double e = e_dot(w, c, l, b);
      if (e == 0) continue;
      const double* g = gcol(w, w->jrow[slot]);
      for (int a = 0; a < nv; a++) R[a] += g[a] * e;
    }
    if (w->dpos[c] >= 0) {
      int crow = nv;
      for (int k = 0; k < w->dpos[c]; k++) crow += w->ncons[w->defect[k]];
      const double* Cm = w->C + (size_t)c * LR_P * LR_P;
      for (int t = 0; t < w->ncons[c]; t++) {
        double a = 0;
        for (int k = 0; k < p; k++) a += Cm[t * LR_P + k] * b[k];
        R[crow + t] = -a;
      }
    }
  }
  memcpy(w->u, R, sizeof(double) * s);
  solve_global(w, w->u);
}

/* The change of the basic variable in the slots cand[0 .. nc) for the global solution w->u,
 * without the local term of the right-hand side's own contact: velocity by velocity over all of
 * them (one pass over each row of Yt, not nv strided reads a slot; ties of hundreds of rows come
 * with a degenerate landing), then z0's term, then the free columns of a defect contact. */
static void slot_values(const svi_lr* w, const int* restrict cand, int nc, double* restrict out) {
  int nv = w->nv, n = w->n;
  const double* restrict Yt = w->Yt;
  const double* restrict u = w->u;
  double uz = w->z0_active ? u[nv] : 0.0;
  for (int k = 0; k < nc; k++) {   /* each slot's sum in registers, velocity by velocity */
    const double* restrict y = Yt + cand[k];
    double a = 0.0;
    for (int b = 0; b < nv; b++) a += y[(size_t)b * n] * u[b];
    if (w->z0_active) a += w->y0[cand[k]] * uz;
    out[k] = a;
  }
  if (w->ndefect == 0) return;
  for (int k = 0; k < nc; k++) {
    int j = cand[k], i = w->cont[j], l = j - i * w->p;   /* no division a slot */
    if (w->dpos[i] < 0 || w->nfree[i] == 0) continue;
    int fcol = nv + w->z0_active;
    for (int m = 0; m < w->dpos[i]; m++) fcol += w->nfree[w->defect[m]];
    const double* Nf = w->N + (size_t)i * LR_P * LR_P;
    double a = out[k];
    for (int f = 0; f < w->nfree[i]; f++) a += Nf[l * LR_P + f] * w->u[fcol + f];
    out[k] = a;
  }
}

/* dir = a y0 + sum_m um[m] rows[m] (rows of n values), in one pass over dir: per entry the same
 * products and sums in the same order as y = a x and then one y += um x a row */
SVI_SIMD static void combine_columns(int n, double a, const double* restrict y0, int nk,
                                     const double* const* rows, const double* um,
                                     double* restrict dir) {
  const svi_v4d av = {a, a, a, a};
  int j = 0;
  for (; j + 16 <= n; j += 16) {
    svi_v4d t[4], y;
    for (int l = 0; l < 4; l++) {
      memcpy(&y, y0 + j + 4 * l, sizeof(y));
      t[l] = av * y;
    }
    for (int m = 0; m < nk; m++) {
      const double* r = rows[m] + j;
      const svi_v4d uv = {um[m], um[m], um[m], um[m]};
      for (int l = 0; l < 4; l++) {
        memcpy(&y, r + 4 * l, sizeof(y));
        t[l] += uv * y;
      }
    }
    memcpy(dir + j, t, sizeof(t));
  }
  for (; j + 4 <= n; j += 4) {   /* a run's last vectors (direction) */
    svi_v4d t, y;
    memcpy(&y, y0 + j, sizeof(y));
    t = av * y;
    for (int m = 0; m < nk; m++) {
      const svi_v4d uv = {um[m], um[m], um[m], um[m]};
      memcpy(&y, rows[m] + j, sizeof(y));
      t += uv * y;
    }
    memcpy(dir + j, &t, sizeof(t));
  }
  for (; j < n; j++) {
    double v = a * y0[j];
    for (int m = 0; m < nk; m++) v += um[m] * rows[m][j];
    dir[j] = v;
  }
}

#ifdef SVI_AVX2_KERNELS
/* combine_columns in 512-bit vectors where the CPU has the AVX-512 kernels (svi_have_avx512): 64
 * entries a block, eight vectors, then combine_columns' blocks of 16 and its tail.  Each entry
 * gets the same product and sums in the same order (a product, then a sum: -ffp-contract=off), so
 * the same bits.  The 256-bit kernel's block of 16 waits on the adder's latency, nk sums in a row;
 * at nv = 6 (a plate: Yt, 34 KB, in L1) this takes a direction of 704 entries from 0.69 to 0.20 us
 * on the Zen 5 host, at nv = 18 (Yt in L2) from 1.02 to 0.75 us (an isolated loop). */
typedef double lr_v8d __attribute__((vector_size(64)));
__attribute__((target("avx512f"))) static void combine_columns_512(int n, double a, const double* restrict y0,
                                                                   int nk, const double* const* rows,
                                                                   const double* um, double* restrict dir) {
  const lr_v8d av = {a, a, a, a, a, a, a, a};
  int j = 0;
  for (; j + 64 <= n; j += 64) {
    lr_v8d t[8], y;
    for (int l = 0; l < 8; l++) {
      memcpy(&y, y0 + j + 8 * l, sizeof(y));
      t[l] = av * y;
    }
    for (int m = 0; m < nk; m++) {
      const double* r = rows[m] + j;
      const double u = um[m];
      const lr_v8d uv = {u, u, u, u, u, u, u, u};
      for (int l = 0; l < 8; l++) {
        memcpy(&y, r + 8 * l, sizeof(y));
        t[l] += uv * y;
      }
    }
    memcpy(dir + j, t, sizeof(t));
  }
  if (j < n) {
    const double* rest[64];
    for (int m = 0; m < nk; m++) rest[m] = rows[m] + j;
    combine_columns(n - j, a, y0 + j, nk, rest, um, dir + j);
  }
}
#endif

/* dir = B^-1 a for the column a with local part b at contact c and global part bg, every slot
 * (Y and y0 are zero on the missing slot, so is dir).  The sum over velocities runs by the runs
 * of contact_runs, each over its own velocities: a velocity no row of the run reaches has Y = 0
 * there, and adding u_k 0 changes no entry but the sign of an exact zero (for a finite u; a
 * non-finite one fails the solve's residual either way). */
static void direction(svi_lr* w, int c, const double* b, const double* bg) {
  int nv = w->nv, n = w->n, p = w->p;
  global_solve_local(w, c, b, bg);
  double* dir = w->dir;
  const double* u = w->u;
  double a = w->z0_active ? u[nv] : 0.0;
  uint64_t nz = 0;   /* the velocities with u_k != 0 */
  for (int k = 0; k < nv; k++) nz |= (uint64_t)(u[k] != 0) << k;
  for (int r = 0; r < w->nrun; r++) {
    int j0 = w->run_start[r] * p, len = (w->run_start[r + 1] - w->run_start[r]) * p;
    const double* rows[64];
    double um[64];
    int nk = 0;
    for (uint64_t m = w->run_mask[r] & nz; m; m &= m - 1) {   /* in increasing k */
      int k = __builtin_ctzll(m);
      rows[nk] = w->Yt + (size_t)k * n + j0;
      um[nk++] = u[k];
    }
#ifdef SVI_AVX2_KERNELS
    if (svi_have_avx512()) combine_columns_512(len, a, w->y0 + j0, nk, rows, um, dir + j0);
    else
#endif
    combine_columns(len, a, w->y0 + j0, nk, rows, um, dir + j0);
  }
  int fcol = nv + w->z0_active;
  for (int k = 0; k < w->ndefect; k++) {
    int i = w->defect[k];
    const double* Nf = w->N + (size_t)i * LR_P * LR_P;
    for (int f = 0; f < w->nfree[i]; f++, fcol++)
      for (int l = 0; l < p; l++) dir[i * p + l] += Nf[l * LR_P + f] * u[fcol];
  }
  if (c >= 0)
    for (int l = 0; l < p; l++) dir[c * p + l] += e_dot(w, c, l, b);
}

/* ---- Lemke ------------------------------------------------------------------------------------ */

typedef struct {
  const int* order;
  const double* sign;
} lr_pert;

/* v <- E_neta^-1 ... E_1^-1 v over positions 0 .. len - 1 (len >= n + 1; the padding past n is
 * zero in every eta): x_q = v_q / e_q, then v_i -= e_i x_q; an eta whose x_q is 0 changes nothing
 * but the sign of zeros and is passed over */
static inline void eta_solve(const svi_lr* w, double* restrict v, int len) {
  for (int t = 0; t < w->neta; t++) {
    const double* restrict e = w->eta + (size_t)t * w->ldeta;
    int q = w->eta_pos[t];
    double xr = v[q] / e[q];
    if (xr != 0)
      for (int i = 0; i < len; i++) v[i] -= e[i] * xr;
    v[q] = xr;
  }
}

/* svi_lr_set_verify (tests): the column B^-1 e_c at the candidates (out) against the same column
 * through every position: the base's whole direction (direction(), the path's own kept aside)
 * and then every eta on all of it.  A wrong list of positions or a wrong eta shows as a wrong
 * entry of the column's size.  The two sum the base's terms in different orders, so they agree
 * only to the rounding of the base's solve, times its condition: up to 6e-8 of the column on
 * 54 million columns of test_lowrank's problems (SVI_TEST_SCALE=10); 1e-6 is the bound. */
static void verify_column(svi_lr* w, int ci, const double* b, const int* cand, int ncand, const double* out) {
  int n = w->n;
  double *save = w->vcol, *v = w->vcol + n + 8;
  memcpy(save, w->dir, sizeof(double) * (n + 4));
  direction(w, ci, b, NULL);
  memcpy(v, w->dir, sizeof(double) * n);
  v[n] = w->z0_active ? w->u[w->nv] : 0.0;
  memcpy(w->dir, save, sizeof(double) * (n + 4));
  eta_solve(w, v, n + 1);
  double vmax = 0, dmax = 0;
  for (int i = 0; i <= n; i++) vmax = amax(vmax, v[i]);
  for (int k = 0; k < ncand; k++) dmax = amax(dmax, v[w->pos_of[cand[k]]] - out[k]);
  w->vchecks++;
  w->vfails += !(dmax <= 1e-6 * fmax(vmax, 1.0));
}

/* Whether the base's column B_base^-1 e_c (c in contact ci's local pair cl) reaches the global
 * system: ci's constraint rows see it (a defect contact), or one of its basic impulses does (a
 * basic z slot with a row of Jbar on which E's column cl is not 0).  If not, the global system's
 * right-hand side is 0, so is its solution, and the column is E_ci e_cl on ci's slots, 0 on
 * every other one. */
static int column_global(const svi_lr* w, int ci, int cl) {
  if (w->dpos[ci] >= 0) return 1;
  for (int l = 0; l < w->p; l++) {
    int slot = ci * w->p + l;
    if (w->sb[slot] == ST_Z && w->jrow[slot] >= 0 && e_at(w, ci, l, cl) != 0) return 1;
  }
  return 0;
}

/* The base's column B_base^-1 e_c (c: contact ci's local pair cl, b = e_cl) on the slots
 * list[0 .. nl): its global part (one solve with S, then slot_values) where column_global says
 * it has one, then E_ci e_cl on ci's own slots */
static void base_column(svi_lr* w, int ci, int cl, const double* b, const int* list, int nl, double* out) {
  if (column_global(w, ci, cl)) {
    global_solve_local(w, ci, b, NULL);
    slot_values(w, list, nl, out);
  } else
    for (int k = 0; k < nl; k++) out[k] = 0.0;
  const int base = ci * w->p;   /* contact ci's slots: base .. base + p - 1, without a division */
  for (int k = 0; k < nl; k++) {
    int l = list[k] - base;
    if ((unsigned)l < (unsigned)w->p) out[k] += e_at(w, ci, l, cl);
  }
}

/* (B^-1)_{j, c} for the candidate slots, c an original index (one global solve) */
static void binv_column(svi_lr* w, int corig, const int* cand, int ncand, double* out) {
  int cs = w->slot_of[corig], ci = w->cont[cs], cl = cs - ci * w->p;
  double b[LR_P] = {0};
  b[cl] = 1.0;
  if (w->neta == 0) {   /* the base is the basis: its column at the candidates */
    base_column(w, ci, cl, b, cand, ncand, out);
    return;
  }
  /* B^-1 e_c = E_neta^-1 ... E_1^-1 B_base^-1 e_c, needed at the candidates' positions only: the
   * base's column at those and at the etas' pivot positions (whose values the etas pass on),
   * then the etas on that list.  Position n (z0's) is neither. */
  int *L = w->llist, *lidx = w->lidx, nl = 0;
  for (int t = 0; t < w->neta; t++) {
    int q = w->eta_pos[t];
    if (lidx[q] < 0) { lidx[q] = nl; L[nl++] = q; }
  }
  for (int k = 0; k < ncand; k++) {
    int q = w->pos_of[cand[k]];
    if (lidx[q] < 0) { lidx[q] = nl; L[nl++] = q; }
  }
  double* y = w->lval;
  base_column(w, ci, cl, b, L, nl, y);   /* a position below n is the slot of the base's variable there */
  for (int t = 0; t < w->neta; t++) {
    const double* e = w->eta + (size_t)t * w->ldeta;
    int q = w->eta_pos[t], mq = lidx[q];
    double xr = y[mq] / e[q];
    if (xr != 0)
      for (int m = 0; m < nl; m++) y[m] -= e[L[m]] * xr;
    y[mq] = xr;
  }
  for (int k = 0; k < ncand; k++) out[k] = y[lidx[w->pos_of[cand[k]]]];
  for (int m = 0; m < nl; m++) lidx[L[m]] = -1;
  if (w->verify) verify_column(w, ci, b, cand, ncand, out);
}

/* svi_lr_set_verify (tests): the column of B^-1 the ratio test takes as e_cs (a contact whose base
 * is the identity, no eta on cs) formed and checked to be that on the candidates */
static void verify_unit(svi_lr* w, int c, int cs, const int* cand, int ncand, double* col) {
  binv_column(w, c, cand, ncand, col);
  int bad = 0;
  for (int m = 0; m < ncand; m++) bad |= col[m] != (cand[m] == cs ? 1.0 : 0.0);
  w->vchecks++;
  w->vfails += bad;
}

/* col[m] <- sg col[m] / dc[m]: a lexicographic column's ratios on the candidates, in whole vectors
 * in the AVX2 clone (each value one product and one quotient, rounded as the scalar ones) */
SVI_SIMD static void lex_ratios(int nc, double sg, double* restrict col, const double* restrict dc) {
  for (int m = 0; m < nc; m++) col[m] = sg * col[m] / dc[m];
}

/* The index the scan "rb = m where col[m] < col[rb] - SVI_LEX_TOL" ends on, for m = 1 .. nc - 1 from
 * rb = 0: the threshold is formed only when rb moves, so the search between two moves carries no
 * dependency from one value to the next (the same comparisons; a NaN never moves rb) */
static int lex_first_min(int nc, const double* col) {
  int rb = 0;
  double thr = col[0] - SVI_LEX_TOL;
  for (int m = 1; m < nc; m++)
    if (col[m] < thr) {
      rb = m;
      thr = col[m] - SVI_LEX_TOL;
    }
  return rb;
}

/* One column's filter of the lexicographic test (ratio_test): each candidate's ratio
 * col[m] = sg (B^-1)_{cand[m], c} / dc[m], the value yb the scan of lex_first_min ends on, and the
 * candidates above yb + SVI_LEX_TOL dropped (mark cleared, the list and dc compacted in order).
 * Returns the candidates left; *alive counts the drops. */
static int lex_filter(svi_lr* w, int c, double sg, int nc, int* alive) {
  int *cand = w->cand;
  double *col = w->lexcol, *dc = w->lexdir;
  unsigned char* mark = w->mark;
  binv_column(w, c, cand, nc, col);
  lex_ratios(nc, sg, col, dc);   /* each candidate's ratio */
  double yb = col[lex_first_min(nc, col)];
  int keep = 0;   /* drop the candidates above the minimum, compacting the list */
  for (int m = 0; m < nc; m++) {
    if (col[m] > yb + SVI_LEX_TOL) {
      mark[cand[m]] = 0;
      (*alive)--;
    } else {
      dc[keep] = dc[m];
      cand[keep++] = cand[m];
    }
  }
  return keep;
}

/* lex_filter for a column of the base (no eta) that does not reach the global system
 * (column_global): it is 0 on every candidate outside contact ci, and (0 + E_ci[l, cl]) on
 * candidate slot ci p + l.  Its ratios are then sg 0 / dc = +-0 outside ci, which compare as 0, and
 * the at most p of ci's candidates, found by their rows (the list is in increasing rowpos).  The
 * scan of lex_first_min over a run of zeros can stop only on the run's first zero (after it, thr
 * is -SVI_LEX_TOL or a zero did not pass it), so the scan over ci's candidates and the first zero
 * of each run between them ends on the same value yb, and the same candidates are above
 * yb + SVI_LEX_TOL: O(p log nc) and the compaction, against O(nc) products, quotients and
 * compares (a sliding landing ties hundreds of rows through most of its columns). */
static int lex_filter_local(svi_lr* w, int ci, int cl, double sg, int nc, int* alive) {
  int *cand = w->cand, p = w->p, base = ci * p;
  double* dc = w->lexdir;
  unsigned char* mark = w->mark;
  int si[LR_P], ns = 0;   /* ci's candidates: their places in the list, increasing */
  double sv[LR_P];        /* and their ratios */
  for (int l = 0; l < p; l++) {
    int slot = base + l;
    if (!mark[slot]) continue;
    int lo = 0, hi = nc, rp = w->rowpos[slot];   /* the candidate of row rp */
    while (lo < hi) {
      int mid = (lo + hi) >> 1;
      if (w->rowpos[cand[mid]] < rp) lo = mid + 1;
      else hi = mid;
    }
    int k = ns++;
    for (; k > 0 && si[k - 1] > lo; k--) { si[k] = si[k - 1]; sv[k] = sv[k - 1]; }
    si[k] = lo;
    sv[k] = sg * (0.0 + e_at(w, ci, l, cl)) / dc[lo];
  }
  if (ns == 0) return nc;   /* 0 on every candidate: none is above 0 + SVI_LEX_TOL */
  /* lex_first_min's scan over ci's candidates and the first zero of each run of zeros */
  double yb = 0.0, thr = 0.0;
  int started = 0, at = 0;
  for (int k = 0; k <= ns; k++) {
    if ((k < ns ? si[k] : nc) > at) {   /* a run of zeros from place at */
      if (!started || 0.0 < thr) { yb = 0.0; thr = -SVI_LEX_TOL; }
      started = 1;
    }
    if (k == ns) break;
    if (!started || sv[k] < thr) { yb = sv[k]; thr = sv[k] - SVI_LEX_TOL; }
    started = 1;
    at = si[k] + 1;
  }
  double lim = yb + SVI_LEX_TOL;
  if (0.0 > lim) {   /* every zero dropped: ci's candidates at or below lim are left */
    for (int m = 0; m < nc; m++) mark[cand[m]] = 0;
    int keep = 0;
    for (int k = 0; k < ns; k++)
      if (!(sv[k] > lim)) {
        int slot = cand[si[k]];
        mark[slot] = 1;
        dc[keep] = dc[si[k]];
        cand[keep++] = slot;
      }
    *alive -= nc - keep;
    return keep;
  }
  int keep = si[0] < nc ? si[0] : nc, from = keep;   /* the zeros stay; ci's above lim go */
  for (int k = 0; k < ns; k++) {
    int end = k + 1 < ns ? si[k + 1] : nc;
    if (sv[k] > lim) {
      mark[cand[si[k]]] = 0;
      (*alive)--;
      from = si[k] + 1;
    } else
      from = si[k];
    if (keep != from) {
      memmove(cand + keep, cand + from, sizeof(int) * (size_t)(end - from));
      memmove(dc + keep, dc + from, sizeof(double) * (size_t)(end - from));
    }
    keep += end - from;
  }
  return keep;
}

/* svi_lr_set_verify (tests): lex_filter_local checked against lex_filter on the same list: the
 * same candidates left, in the same order with the same dc, and the same drops */
static int lex_filter_verified(svi_lr* w, int c, int ci, int cl, double sg, int nc, int* alive) {
  int *cand = w->cand, *saved = w->vcand, *got = w->vcand + w->n;
  double *dsaved = w->vcol, *dgot = w->vcol + w->n + 8;
  memcpy(saved, cand, sizeof(int) * (size_t)nc);
  memcpy(dsaved, w->lexdir, sizeof(double) * (size_t)nc);
  int alive_local = *alive;
  int nl = lex_filter_local(w, ci, cl, sg, nc, &alive_local);
  memcpy(got, cand, sizeof(int) * (size_t)nl);
  memcpy(dgot, w->lexdir, sizeof(double) * (size_t)nl);
  for (int m = 0; m < nc; m++) w->mark[saved[m]] = 1;   /* the list as it was */
  memcpy(cand, saved, sizeof(int) * (size_t)nc);
  memcpy(w->lexdir, dsaved, sizeof(double) * (size_t)nc);
  int nf = lex_filter(w, c, sg, nc, alive);
  int bad = nl != nf || alive_local != *alive;
  for (int m = 0; m < nf && !bad; m++)
    bad = got[m] != cand[m] || memcmp(dgot + m, w->lexdir + m, sizeof(double)) != 0;
  w->vchecks++;
  w->vlocal++;
  w->vfails += bad;
  return nf;
}

/* Ratio test with the dense solver's lexicographic rule.  Returns the leaving slot, n for z0,
 * -1 for a ray. */
static int ratio_test(svi_lr* w, double z0dir, double piv_tol, const lr_pert* pt) {
  int n = w->n;
  const double* dir = w->dir;
  /* the product form's one-pass scan (svi_lcp.c, pfi_ratio_test): the minimum (min_ratio's bits),
   * a row that attains it and the second smallest ratio, over n rounded up to whole vectors (dir
   * is zero on the padding, lr_solve) */
  double sec;
  int r1;
  double best = svi_kern_ratio_scan(2, (n + 3) & ~3, w->x, dir, piv_tol, &sec, &r1, NULL, 0.0, -1);
  int z0_cand = 0;
  if (z0dir > piv_tol) {
    double t = w->x[n] / z0dir;
    if (t < best) best = t;
  }
  if (best == INFINITY) return -1;
  double tie = 1e-11 * (1 + fabs(best)), lim = best + tie;
  if (z0dir > piv_tol && w->x[n] / z0dir <= lim) z0_cand = 1;
  if (z0_cand) return n;
  /* best is the rows' minimum here (a smaller z0 ratio would have been a candidate): when no other
   * row's ratio comes within the tie tolerance, r1 is the two-pass test's one row (the proof at
   * pfi_ratio_test) */
  if (lim >= 1e-290 && sec > lim * (1 + 8 * DBL_EPSILON) && w->x[r1] <= lim * dir[r1]) return r1;
  int nc = svi_kern_ratio_ties(n, w->x, dir, piv_tol, lim, w->cand);
  if (nc == 1) return w->cand[0];
  /* the dense solver scans candidates in tableau row order: few by insertion, many (a tie of
   * hundreds of rows on a degenerate sliding landing, O(nc^2)) by their rows in one pass
   * (O(n); the basic slots' rows are distinct) */
  if (nc <= LR_SORT_INSERT)
    for (int a = 1; a < nc; a++)
      for (int b = a; b > 0 && w->rowpos[w->cand[b]] < w->rowpos[w->cand[b - 1]]; b--) {
        int t = w->cand[b]; w->cand[b] = w->cand[b - 1]; w->cand[b - 1] = t;
      }
  else {
    int* byrow = w->byrow;
    for (int m = 0; m < nc; m++) byrow[w->rowpos[w->cand[m]]] = w->cand[m] + 1;
    for (int r = 0, m = 0; r < n; r++)
      if (byrow[r]) {
        w->cand[m++] = byrow[r] - 1;
        byrow[r] = 0;
      }
  }
  /* lexicographic minimum of rows of B^-1 / a in the perturbation's order: filter the candidates
   * column by column (the dense rule's pairwise scan keeps the same row whenever the tolerance
   * comparisons are consistent).  A column of a contact whose basic columns are the identity is
   * e_c: it only separates the candidate in slot c itself, O(1). */
  int* cand = w->cand;
  double* col = w->lexcol;
  double* dc = w->lexdir;
  unsigned char* mark = w->mark;   /* 1: still a candidate */
  for (int m = 0; m < nc; m++) {
    mark[cand[m]] = 1;
    dc[m] = dir[cand[m]];
  }
  int alive = nc, r = -1, dropped = 0;
  for (int k = 0; k < n && alive > 1; k++) {
    int c = pt->order ? pt->order[k] : k;
    double sg = pt->sign ? pt->sign[k] : 1.0;
    int cs = w->slot_of[c], ci = w->cont[cs], cl = cs - ci * w->p;
    if (w->ident[ci] && !w->touched[cs]) {   /* the base's w_c, no eta pivoted on it */
      if (w->verify) verify_unit(w, c, cs, cand, nc, col);
      if (!mark[cs]) continue;                  /* zero on every candidate */
      /* sg / a on candidate cs, 0 on the others */
      if (sg < 0) { r = cs; alive = 1; break; }
      mark[cs] = 0;
      alive--;
      dropped = 1;
      continue;
    }
    if (dropped) {   /* compact the list (the identity columns above dropped candidates) */
      int keep = 0;
      for (int m = 0; m < nc; m++)
        if (mark[cand[m]]) {
          dc[keep] = dc[m];
          cand[keep++] = cand[m];
        }
      nc = keep;
      dropped = 0;
    }
    if (w->neta == 0 && !column_global(w, ci, cl))
      nc = w->verify ? lex_filter_verified(w, c, ci, cl, sg, nc, &alive)
                     : lex_filter_local(w, ci, cl, sg, nc, &alive);
    else
      nc = lex_filter(w, c, sg, nc, &alive);
  }
  for (int m = 0; m < nc; m++) {
    if (r < 0 && mark[cand[m]]) r = cand[m];
    mark[cand[m]] = 0;
  }
  return r;
}


/* ---- the pivots since the base ------------------------------------------------------------------
 * A pivot changes one column of B.  Rather than reduce its contacts again and refactor S at once
 * (O(s^3) a pivot), the pivots are kept as etas on the base, B = B_base E_1 ... E_k, in
 * positions: a slot's place in the base (its row of B_base^-1), z0's n.  The entering variable
 * takes the leaving one's position; eta t is its column B_{t-1}^-1 a in positions.  Every
 * lr_eta_max pivots the base is made again from the statuses (lr_rebase: the contacts the pivots
 * changed reduced again, the sums updated, S refactored).  A direction then costs the base's
 * O(n nv + s^2) and O(n) an eta. */

/* The etas between two refactors: S's LU (about s^3 / 3 multiply-adds) against n + 1 an eta
 * for each direction after it, least on average at k = sqrt(2 s^3 / (3 (n + 1))). */
static int lr_eta_max(const svi_lr* w) {
  double s3 = (double)w->sdim * w->sdim * w->sdim;
  int k = (int)lround(sqrt(2.0 * s3 / (3.0 * (w->n + 1))));
  if (w->eta_req > 0) k = w->eta_req;
  return k < 1 ? 1 : k > LR_ETA_MAX ? LR_ETA_MAX : k;
}

void svi_lr_set_eta_max(svi_lr* w, int k) {
  if (w) w->eta_req = k > 0 ? k : 0;   /* lr_eta_max bounds it */
}

void svi_lr_set_verify(svi_lr* w, int on) {
  if (w) w->verify = on;
}

void svi_lr_verify_counts(const svi_lr* w, long long* checks, long long* fails) {
  *checks = w ? w->vchecks : 0;
  *fails = w ? w->vfails : 0;
}

long long svi_lr_verify_local(const svi_lr* w) { return w ? w->vlocal : 0; }

void svi_lr_eta_counts(const svi_lr* w, long long* dirs, long long* rebases, long long* early) {
  *dirs = w ? w->eta_dirs : 0;
  *rebases = w ? w->rebases : 0;
  *early = w ? w->early : 0;
}

/* The velocities each contact of s reaches, and the runs direction() sums over (theory 5.2, "Each
 * contact's own velocities").  Y_i = E_i (P Jbar)_i mixes only contact i's rows of Jbar, so its
 * column k is zero wherever none of them reaches velocity k (a leg's contact and the other legs'
 * joints, a box and the other boxes).  Consecutive contacts that reach the same velocities make a
 * run; a run of fewer than LR_RUN_MIN contacts joins the run before it (the first the run after
 * it), with the union of their velocities, so that no run is shorter than a few vectors.  Under
 * svi_lr_set_runs(w, 0) one run of every contact over every velocity. */
#define LR_RUN_MIN 8
static void contact_runs(svi_lr* w, const svi_impact* s) {
  int nc = s->nc, nv = s->nv, nd = s->nd, nr = 0;
  if (w->runs_off) {
    w->run_start[0] = 0;
    w->run_start[1] = nc;
    w->run_mask[0] = nv == 64 ? ~(uint64_t)0 : ((uint64_t)1 << nv) - 1;
    w->nrun = nc > 0;
    return;
  }
  for (int i = 0; i < nc; i++) {
    uint64_t m = 0;
    for (int r = -1; r < nd; r++) {   /* the normal row, then the friction rows (layout's jrow) */
      const double* row = s->Jbar + (size_t)(r < 0 ? i : nc + i * nd + r) * nv;
      for (int k = 0; k < nv; k++) m |= (uint64_t)(row[k] != 0) << k;
    }
    if (nr > 0 && m == w->run_mask[nr - 1]) continue;
    w->run_start[nr] = i;
    w->run_mask[nr++] = m;
  }
  w->run_start[nr] = nc;
  int m = 0;   /* the merged runs, in place (m <= r: run_start[r + 1] is still the original) */
  for (int r = 0; r < nr; r++) {
    if (m > 0 && w->run_start[r + 1] - w->run_start[r] < LR_RUN_MIN) {
      w->run_mask[m - 1] |= w->run_mask[r];
      continue;
    }
    w->run_start[m] = w->run_start[r];
    w->run_mask[m++] = w->run_mask[r];
  }
  w->run_start[m] = nc;
  if (m > 1 && w->run_start[1] < LR_RUN_MIN) {   /* a short first run joins the second */
    w->run_mask[1] |= w->run_mask[0];
    w->run_start[1] = 0;
    memmove(w->run_start, w->run_start + 1, sizeof(int) * (size_t)m);
    memmove(w->run_mask, w->run_mask + 1, sizeof(uint64_t) * (size_t)(m - 1));
    m--;
  }
  w->nrun = m;
}

/* The runs of an event are made by its first low-rank solve (lr_solve) and kept by the rest:
 * svi_impact_setup forgets them here, so that an event solved by the dense Lemke alone (its path
 * never handed over) does not make them (the robot on 98 contacts of table C: 1.8 % of its impact
 * step's instructions) */
void svi_lr_event(svi_lr* w) {
  if (w) w->ev = NULL;
}

void svi_lr_set_runs(svi_lr* w, int on) {
  if (!w) return;
  w->runs_off = !on;
  w->ev = NULL;   /* made again by the next solve */
}
int svi_lr_runs(const svi_lr* w) { return w && w->ev ? w->nrun : 0; }

/* no etas: every basic slot in its own position (all: a new basis; moved: only the slots the
 * pivots since the base moved, O(k) instead of O(n)) */
static void lr_reset_etas(svi_lr* w, int all) {
  for (int t = 0; t < w->neta; t++) w->touched[w->eta_pos[t]] = 0;
  w->neta = 0;
  if (all)
    for (int j = 0; j < w->n; j++) w->pos_of[j] = w->st[j] != ST_NONE ? j : -1;
  else
    for (int k = 0; k < w->nmoved; k++) {
      int j = w->moved[k];
      w->pos_of[j] = w->st[j] != ST_NONE ? j : -1;
    }
  w->nmoved = 0;
  w->eta_max = lr_eta_max(w);
}

static void lr_clear_dirty(svi_lr* w) {
  for (int k = 0; k < w->ndirty; k++) w->isdirty[w->dirty[k]] = 0;
  w->ndirty = 0;
}

static void lr_mark_dirty(svi_lr* w, int i) {
  if (!w->isdirty[i]) {
    w->isdirty[i] = 1;
    w->dirty[w->ndirty++] = i;
  }
}

/* contact i's base made the path's: its statuses, then its reduction for them */
static void base_contact(svi_lr* w, int i) {
  memcpy(w->sb + i * w->p, w->st + i * w->p, (size_t)w->p);
  factor_contact(w, i);
}

/* The base made again from the path's statuses: each contact a pivot changed loses its old
 * contribution to the sums (its old statuses and Y), is reduced for its new statuses and adds its
 * new one; then S is refactored and the etas dropped. */
static void lr_rebase(svi_lr* w) {
  for (int k = 0; k < w->ndirty; k++) contribution(w, w->dirty[k], -1.0);
  for (int k = 0; k < w->ndirty; k++) {
    base_contact(w, w->dirty[k]);
    contribution(w, w->dirty[k], 1.0);
  }
  lr_clear_dirty(w);
  build_global(w);
  lr_reset_etas(w, 0);
  w->rebases++;
}

/* The direction of the base (w->dir by position, z0's in *z0dir) through the etas, kept as the
 * next eta in positions, and then by slot in w->dir (0 on the missing slot) */
SVI_SIMD static void lr_ftran(svi_lr* w, double* z0dir) {
  int n = w->n, ld = w->ldeta, n1 = (n + 1 + 3) & ~3;   /* the etas' stride, this LCP's rows */
  double* restrict v = w->eta + (size_t)w->neta * ld;
  if (w->neta == 0 && w->eta_max == 1) return;   /* positions are slots, and no eta is kept */
  memcpy(v, w->dir, sizeof(double) * n);
  v[n] = *z0dir;
  for (int i = n + 1; i < n1; i++) v[i] = 0.0;
  if (w->neta == 0) return;   /* positions are slots */
  w->eta_dirs++;
  eta_solve(w, v, n1);
  for (int j = 0; j < n; j++) w->dir[j] = w->pos_of[j] >= 0 ? v[w->pos_of[j]] : 0.0;
  *z0dir = v[n];
}

static int pair_complement_kind(int kind) { return kind == ST_W ? ST_Z : ST_W; }

/* Column of variable (slot j, kind) of [I | -A]: local part b (p), global part bg (nv) */
static void column_of(const svi_lr* w, int j, int kind, double* b, double* bg, int* has_bg) {
  int p = w->p, i = j / p, l = j % p;
  for (int r = 0; r < p; r++) b[r] = kind == ST_W ? (r == l ? 1.0 : 0.0) : -a0(w, i, r, l);
  *has_bg = 0;
  if (kind == ST_Z && w->jrow[j] >= 0) {
    const double* g = gcol(w, w->jrow[j]);
    for (int a = 0; a < w->nv; a++) bg[a] = -g[a];
    *has_bg = 1;
  }
}

static void refactor_all(svi_lr* w);

/* The per-contact state of a basis with z0 basic and no contact reduced yet: every contact the
 * identity, no defect (factor_contact and build_global then form what the basis needs) */
static void reset_contacts(svi_lr* w) {
  w->z0_active = 1;
  w->ndefect = 0;
  for (int i = 0; i < w->nc; i++) {
    w->dpos[i] = -1;
    w->nfree[i] = w->ncons[i] = 0;
    w->ident[i] = 1;
  }
}

/* The first pivot: z0 enters where q_i / d_i is (lexicographically) most negative; B = I.
 * *missing, *kind: the slot and kind that enter next (that row's z); *z0row: z0's row. */
static void first_pivot(svi_lr* w, const lr_pert* pt, int* missing, int* kind, int* z0row) {
  int n = w->n, r = -1;
  double best = INFINITY, dr = 1;
  for (int o = 0; o < n; o++) {
    int j = w->slot_of[o];
    double di = w->d[j], t = w->q[j] / di;
    int better = r < 0 || t < best - 1e-11 * (1 + fabs(best));
    if (!better && t <= best + 1e-11 * (1 + fabs(best))) {
      /* lexico_cmp of rows o and r of B^-1 = I scaled by 1/d */
      for (int k = 0; k < n; k++) {
        int c = pt->order ? pt->order[k] : k;
        double sg = pt->sign ? pt->sign[k] : 1.0;
        double xv = sg * (c == o ? 1.0 : 0.0) / di, yv = sg * (c == r ? 1.0 : 0.0) / dr;
        if (xv < yv - SVI_LEX_TOL) { better = 1; break; }
        if (xv > yv + SVI_LEX_TOL) break;
      }
    }
    if (better) {
      if (t < best) best = t;
      r = o;
      dr = di;
    }
  }
  int rs = w->slot_of[r];
  double z0 = -w->q[rs] / w->d[rs];
  for (int j = 0; j < n; j++) {
    w->st[j] = ST_W;
    w->x[j] = w->q[j] + w->d[j] * z0;
    w->rowpos[j] = w->orig[j];
  }
  w->st[rs] = ST_NONE;
  w->x[rs] = 0;
  w->x[n] = z0;
  *z0row = r;
  memcpy(w->sb, w->st, (size_t)n);
  lr_clear_dirty(w);
  reset_contacts(w);
  memset(w->Sv, 0, sizeof(double) * w->nv * w->nv);
  memset(w->S0, 0, sizeof(double) * w->nv);
  memcpy(w->Yt, w->Yt0, sizeof(double) * (size_t)n * w->nv);
  memcpy(w->y0, w->d, sizeof(double) * n);
  factor_contact(w, rs / w->p);   /* the identity with one column missing */
  build_global(w);
  lr_reset_etas(w, 1);
  *missing = rs;
  *kind = ST_Z;
}

/* The state of a basis the product form handed over (svi_lcp_handover: per row its basic
 * variable and value): each slot's status, value and row, z0's value and row, every contact
 * reduced and S factored as after a pivot (refactor_all: the sums formed afresh).  *missing and
 * *kind: the slot and the kind of the variable that enters next, the complement of the one that
 * left last (as the product form's loop has it). */
static void start_from(svi_lr* w, const svi_lcp_basis* b, int* missing, int* kind, int* z0row) {
  int n = w->n;
  for (int j = 0; j < n; j++) {
    w->st[j] = ST_NONE;
    w->x[j] = 0;
    w->rowpos[j] = w->orig[j];
  }
  w->x[n] = 0;
  *z0row = -1;
  for (int r = 0; r < n; r++) {
    int v = b->basis[r];
    if (v == 2 * n) {
      w->x[n] = b->xb[r];
      *z0row = r;
      continue;
    }
    int j = w->slot_of[v < n ? v : v - n];
    w->st[j] = v < n ? ST_W : ST_Z;
    w->x[j] = b->xb[r];
    w->rowpos[j] = r;
  }
  reset_contacts(w);
  refactor_all(w);
  int e = b->entering;
  *missing = w->slot_of[e < n ? e : e - n];
  *kind = e < n ? ST_W : ST_Z;
}

/* Lemke's path, from its first pivot or (start) from a basis the product form handed over; on
 * success w->st / w->x hold the final complementary basis */
static int lemke_path(svi_lr* w, const lr_pert* pt, int max_iter, double piv_tol,
                      const svi_lcp_basis* start, int* pivots) {
  int n = w->n, p = w->p, missing, kind, z0row;
  if (start) start_from(w, start, &missing, &kind, &z0row);
  else first_pivot(w, pt, &missing, &kind, &z0row);
  int it = start ? start->pivots : 1;
  double b[LR_P], bg[64 > LR_P ? 64 : LR_P];
  double* bgp = w->nv <= 64 ? bg : NULL;
  if (!bgp) return SVI_ERR_CAPACITY;
  for (;;) {
    if (it >= max_iter) { *pivots = it; return SVI_ERR_MAXITER; }
    if (w->singular) { *pivots = it; return SVI_ERR_RESIDUAL; }
    int has_bg;
    column_of(w, missing, kind, b, bgp, &has_bg);
    direction(w, missing / p, b, has_bg ? bgp : NULL);
    double z0dir = w->u[w->nv];
    lr_ftran(w, &z0dir);
    int lv = ratio_test(w, z0dir, piv_tol, pt);
    if (lv < 0) { *pivots = it; return SVI_ERR_RAY; }
    double theta = lv == n ? w->x[n] / z0dir : w->x[lv] / w->dir[lv];
    kern_axpy(n, -theta, w->dir, w->x);   /* dir is 0 on the missing slot */
    w->x[n] -= theta * z0dir;
    it++;
    int ce = missing / p, cl = lv == n ? ce : lv / p;
    lr_mark_dirty(w, ce);
    if (lv == n) {   /* z0 leaves: the basis is complementary */
      w->st[missing] = (signed char)kind;
      w->x[missing] = theta;
      w->rowpos[missing] = z0row;
      w->z0_active = 0;
      /* the changed contacts reduced for the final statuses, as a pivot did before the etas:
       * refactor_all (refinement) recomputes the sums but keeps the order of the defect list
       * (defect_set), which lays out S and so fixes its rounding; the sums are left to it */
      for (int k = 0; k < w->ndirty; k++) base_contact(w, w->dirty[k]);
      lr_clear_dirty(w);
      break;
    }
    lr_mark_dirty(w, cl);
    int lkind = w->st[lv];
    w->st[missing] = (signed char)kind;
    w->x[missing] = theta;
    w->rowpos[missing] = w->rowpos[lv];
    w->st[lv] = ST_NONE;
    w->x[lv] = 0;
    /* the entering variable takes the leaving one's position: the next eta */
    int q = w->pos_of[lv];
    w->eta_pos[w->neta++] = q;
    w->touched[q] = 1;
    w->pos_of[missing] = q;
    w->pos_of[lv] = -1;
    w->moved[w->nmoved++] = missing;
    w->moved[w->nmoved++] = lv;
    int rebase = w->neta >= w->eta_max;
    if (!rebase) {
      double vmax = 0;
      const double* ev = w->eta + (size_t)(w->neta - 1) * w->ldeta;
      for (int i = 0; i <= n; i++) vmax = amax(vmax, ev[i]);
      rebase = fabs(ev[q]) < LR_ETA_PIVTOL * vmax;
      w->early += rebase;
    }
    if (rebase) lr_rebase(w);
    missing = lv;
    kind = pair_complement_kind(lkind);
  }
  *pivots = it;
  return SVI_OK;
}

/* ---- residual and refinement ------------------------------------------------------------------ */

/* w = A z + q in original indices (wout, may be NULL) and the physical residual of
 * svi_lcp_residual_units with the rounding bound of this evaluation:
 * |q| + |A0| |z| + sum_k |Jbar_rk| (|G| |lambda|)_k */
double svi_lr_residual(const svi_impact* s, int routh, const double* q, const double* z,
                       const double* zu, const double* wu, double* wout, double* scratch) {
  int nc = s->nc, nd = s->nd, nb = s->nb, nv = s->nv, off = routh ? nc : 0;
  int n = routh ? s->n_routh : s->n_ap;
  const double* lam = z + off;
  double* dv = scratch;          /* nv */
  double* mg = scratch + nv;     /* nv: |G| |lambda| */
  for (int k = 0; k < nv; k++) { dv[k] = 0; mg[k] = 0; }
  for (int c = 0; c < nb; c++) {
    double l = lam[c];
    if (l == 0) continue;
    const double* g = s->Gt + (size_t)c * nv;
    for (int k = 0; k < nv; k++) { dv[k] += g[k] * l; mg[k] += fabs(g[k] * l); }
  }
  double r = 0, ap = 0, mp = 0;   /* the last +t row's Jbar dv and |Jbar| |G| |lambda|: its -t
                                   * row's are -ap and mp exactly */
  for (int o = 0; o < n; o++) {
    double wi = q[o], mag = fabs(q[o]);
    int row = o - off;   /* Jbar row for l_n / l_D rows */
    if (routh && o < nc) {                 /* beta row: l_max - l_n */
      wi -= z[nc + o];
      mag += fabs(z[nc + o]);
    } else if (row < nb) {                 /* impulse row: Jbar dv + (beta) + (E gamma) */
      const double* jr = s->Jbar + (size_t)row * nv;
      double a = 0;
      if (jbar_minus_row(s, row)) a = -ap;   /* a -t row: the +t row negated, mp its */
      else {
        mp = 0;
        for (int k = 0; k < nv; k++) { a += jr[k] * dv[k]; mp += fabs(jr[k]) * mg[k]; }
        ap = a;
      }
      wi += a;
      mag += mp;
      if (row < nc) {
        if (routh) { wi += z[o - nc]; mag += fabs(z[o - nc]); }
      } else {
        int i = (row - nc) / nd;
        double g = z[off + nb + i];
        wi += g;
        mag += fabs(g);
      }
    } else {                               /* gamma row: mu l_n - sum l_D */
      int i = row - nb;
      double a = s->mu[i] * lam[i], m = fabs(a);
      for (int k = 0; k < nd; k++) { a -= lam[nc + i * nd + k]; m += fabs(lam[nc + i * nd + k]); }
      wi += a;
      mag += m;
    }
    if (wout) wout[o] = wi;
    double m = svi_pair_residual(zu[o] * z[o], wu[o] * wi, 4 * DBL_EPSILON * wu[o] * mag);
    if (m > r) r = m;
  }
  return r;
}

/* z (original indices) from the final basis */
static void extract_z(const svi_lr* w, double* z) {
  memset(z, 0, sizeof(double) * w->n);
  for (int j = 0; j < w->n; j++)
    if (w->st[j] == ST_Z) z[w->orig[j]] = w->x[j] > 0 ? w->x[j] : 0;
}

/* One step of iterative refinement in the final basis (as svi_lcp.c refine): the residual of the
 * basic equations is w on the rows whose z is basic; x_B += B^-1 res. */
static void refine(svi_lr* w, const double* wv, double* z) {
  int n = w->n, p = w->p, nv = w->nv, s = w->sdim;
  double* res = w->bslot;
  for (int j = 0; j < n; j++) res[j] = w->st[j] == ST_Z ? wv[w->orig[j]] : 0.0;
  /* global right-hand side from every contact's local part */
  double* R = w->R;
  memset(R, 0, sizeof(double) * s);
  int crow = nv;
  for (int k = 0; k < w->ndefect; k++) {
    int i = w->defect[k];
    const double* Cm = w->C + (size_t)i * LR_P * LR_P;
    for (int t = 0; t < w->ncons[i]; t++) {
      double a = 0;
      for (int c = 0; c < p; c++) a += Cm[t * LR_P + c] * res[i * p + c];
      R[crow + t] = -a;
    }
    crow += w->ncons[i];
  }
  for (int i = 0; i < w->nc; i++) {
    for (int l = 0; l < p; l++) {
      int slot = i * p + l;
      if (w->st[slot] != ST_Z || w->jrow[slot] < 0) continue;
      double e = e_dot(w, i, l, res + i * p);
      if (e == 0) continue;
      const double* g = gcol(w, w->jrow[slot]);
      for (int a = 0; a < nv; a++) R[a] += g[a] * e;
    }
  }
  memcpy(w->u, R, sizeof(double) * s);
  solve_global(w, w->u);
  for (int j = 0; j < n; j++) {
    if (w->st[j] != ST_Z) continue;
    int i = j / p, l = j % p;
    double sv;
    slot_values(w, &j, 1, &sv);
    double dx = sv + e_dot(w, i, l, res + i * p);
    double v = z[w->orig[j]] + dx;
    z[w->orig[j]] = v > 0 ? v : 0;
  }
}

/* exact sums and factorisation of the final basis at the current alpha */
static void refactor_all(svi_lr* w) {
  memcpy(w->sb, w->st, (size_t)w->n);
  lr_clear_dirty(w);
  memset(w->Sv, 0, sizeof(double) * w->nv * w->nv);
  memset(w->S0, 0, sizeof(double) * w->nv);
  for (int i = 0; i < w->nc; i++) {
    factor_contact(w, i);
    contribution(w, i, 1.0);
  }
  build_global(w);
  lr_reset_etas(w, 1);
}

static double refined_residual(svi_lr* w, const svi_lcp_options* o, const double* q, double* z,
                               double tol, double* wv, double* keep, double* scratch) {
  const svi_impact* s = w->s;
  double res = svi_lr_residual(s, w->routh, q, z, o->zunit, o->wunit, wv, scratch);
  if (res > tol) refactor_all(w);   /* exact sums (no drift) for the refinement */
  for (int k = 0; k < 2 && res > tol && !w->singular; k++) {
    memcpy(keep, z, sizeof(double) * w->n);
    refine(w, wv, z);
    double r2 = svi_lr_residual(s, w->routh, q, z, o->zunit, o->wunit, wv, scratch);
    if (!(r2 < res)) {
      memcpy(z, keep, sizeof(double) * w->n);
      svi_lr_residual(s, w->routh, q, z, o->zunit, o->wunit, wv, scratch);
      break;
    }
    res = r2;
  }
  return res;
}

/* Drop-in for svi_lcp_lemke_perturbed on the impact LCP of s: (75) when routh, else (31).
 * q, d, order, sign, z in the LCP's own (original) indices.  opt must carry the physical units
 * (svi_impact_lcp_options). */
static int lr_solve(svi_lr* w, const svi_impact* s, int routh, const double* q, const double* d,
                    const int* order, const double* sign, const svi_lcp_options* opt, double* z,
                    svi_lcp_info* info, const svi_lcp_basis* start) {
  svi_lcp_info local;
  if (!info) info = &local;
  memset(info, 0, sizeof(*info));
  int nc = s->nc, nd = s->nd, n = routh ? s->n_routh : s->n_ap;
  if (!w || nc > w->nc_max || s->nv > w->nv_max || s->nv > 64) return info->status = SVI_ERR_CAPACITY;
  if (w->ev != s) {   /* the event's first low-rank solve: its runs (svi_lr_event) */
    w->ev = s;
    contact_runs(w, s);
  }
  memset(z, 0, sizeof(double) * n);
  for (int i = 0; i < n; i++)
    if (!isfinite(q[i]) || (d && !(d[i] > 0 && isfinite(d[i])))) return info->status = SVI_ERR_NONFINITE;
  int trivial = 1;
  for (int i = 0; i < n; i++) if (q[i] < 0) { trivial = 0; break; }
  if (trivial) return info->status = SVI_OK;

  w->s = s;
  w->nc = nc;
  w->nv = s->nv;
  w->nd = nd;
  w->routh = routh;
  w->p = (routh ? 3 : 2) + nd;
  w->n = n;
  w->alpha = 0;
  layout(w);
  for (int i = n; i < ((n + 3) & ~3); i++) w->dir[i] = 0.0;   /* the scan's padding rows */
  /* Y of the all-w basis: the Jbar rows, by slot */
  for (int j = 0; j < n; j++) {
    int r = w->jrow[j];
    for (int k = 0; k < w->nv; k++) w->Yt0[(size_t)k * n + j] = r >= 0 ? s->Jbar[(size_t)r * w->nv + k] : 0.0;
    w->q[j] = q[w->orig[j]];
    w->d[j] = d ? d[w->orig[j]] : 1.0;
  }
  svi_lcp_options o = opt ? *opt : svi_lcp_default_options();
  double mnorm = routh ? s->anorm_routh : s->anorm_ap;
  int max_iter = o.max_iter > 0 ? o.max_iter : 50 * n + 10;
  double piv_tol = o.piv_tol > 0 ? o.piv_tol : n * fmax(1.0, mnorm) * 1e2 * DBL_EPSILON;
  double res_tol = o.res_tol > 0 ? o.res_tol : 1e-9;
  lr_pert pt = {order, sign};
  /* scratch in the impact workspace: w (n), keep (n), 2 nv */
  double *wv = s->lr_scratch, *keep = wv + n, *scr = keep + n;

  int piv = 0;
  int st = lemke_path(w, &pt, max_iter, piv_tol, start, &piv);
  info->pivots = piv;
  if (st == SVI_OK) {
    extract_z(w, z);
    info->residual = refined_residual(w, &o, q, z, res_tol, wv, keep, scr);
    if (info->residual <= res_tol) return info->status = SVI_OK;
    st = SVI_ERR_RESIDUAL;
  }
  info->status = st;
  if (!o.regularize) { memset(z, 0, sizeof(double) * n); return st; }
  /* regularised retry on A0 + alpha I (the block part carries the diagonal), refined on the
   * original problem in the final basis; accepted only at reg_tol in the caller's units */
  double reg_tol = fmax(res_tol, o.reg_tol > 0 ? o.reg_tol : 1e-6);
  double scale = fmax(1.0, mnorm);
  for (double a = 1e-12; a <= 1.01e-6; a *= 100) {
    w->alpha = a * scale;
    int p2 = 0;
    int s2 = lemke_path(w, &pt, max_iter, piv_tol, NULL, &p2);
    info->pivots += p2;
    if (s2 != SVI_OK) continue;
    w->alpha = 0;
    extract_z(w, z);
    double res = refined_residual(w, &o, q, z, res_tol, wv, keep, scr);
    if (res <= reg_tol) {
      info->residual = res;
      info->alpha = a * scale;
      return info->status = SVI_OK_REGULARIZED;
    }
  }
  w->alpha = 0;
  memset(z, 0, sizeof(double) * n);
  return info->status;
}

int svi_lr_lemke(svi_lr* w, const svi_impact* s, int routh, const double* q, const double* d,
                 const int* order, const double* sign, const svi_lcp_options* opt, double* z,
                 svi_lcp_info* info) {
  return lr_solve(w, s, routh, q, d, order, sign, opt, z, info, NULL);
}

int svi_lr_lemke_from(svi_lr* w, const svi_impact* s, int routh, const double* q, const double* d,
                      const int* order, const double* sign, const svi_lcp_options* opt,
                      const svi_lcp_basis* start, double* z, svi_lcp_info* info) {
  return lr_solve(w, s, routh, q, d, order, sign, opt, z, info, start);
}
