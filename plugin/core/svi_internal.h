/* svi_internal.h -- the impact workspace shared by the core's files (not installed). */
#ifndef SVI_INTERNAL_H_
#define SVI_INTERNAL_H_

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "svi/svi_core.h"

/* the shuffle of svi_random_perturbation alone (svi_routh.c) */
void svi_random_order(uint64_t key_order, uint64_t index0, int n, int* order);

/* The order of a random perturbation, drawn (svi_random_order into v) when a ratio test first
 * reads it: only a tie in the ratio test does, and about half the Routh steps' solves have none.
 * The values are those of svi_random_perturbation whenever they are read. */
typedef struct {
  int      pending;   /* not drawn yet */
  int      n;
  uint64_t key, index0;
  int*     v;
} svi_lazy_order;
static inline void svi_order_ready(svi_lazy_order* o) {
  if (o && o->pending) {
    svi_random_order(o->key, o->index0, o->n, o->v);
    o->pending = 0;
  }
}

#define SVI_ENUM_MAX_SOLS 64
/* budget cells per contact of the first-step candidate table (svi_modes.c, pattern_cells) */
#define SVI_CELLS(nc) ((nc) == 1 ? 64 : (nc) == 2 ? 16 : 6)
#define SVI_CELL_WORDS_MAX (6 * 6 * 6 * 6)   /* 6^3 cells of 343 patterns (6 words) */

/* Arrays the AVX2 kernels stream through (the eta file, the pattern rows and maps, the
 * workspace): n bytes from a cache-line boundary, the size rounded up to whole lines (C11
 * aligned_alloc; released by free).  malloc gives 16-byte alignment, and 0x10 past a page for
 * the large blocks it maps, so half of the kernels' 32-byte loads straddled two cache lines,
 * and the per-sample times moved with wherever the heap happened to place them. */
static inline size_t svi_lines64(size_t n) { return n ? (n + 63) & ~(size_t)63 : 64; }
static inline void* svi_alloc64(size_t n) { return aligned_alloc(64, svi_lines64(n)); }

/* Hot O(n) kernels get an AVX2 clone chosen at load time (the build sets no -march).  ISO C11
 * (-std=c11) keeps -ffp-contract=off and no kernel reorders a sum, so every clone returns the
 * same bits.  A scalar helper that AVX code calls gets the clone too (GCC then calls the AVX2
 * clone from AVX2 code): GCC puts no vzeroupper before a call of a local function that leaves the
 * YMM registers alone, nor before a tail call, and legacy SSE code run with the upper YMM state
 * dirty pays a merge an instruction on Intel cores (tests/check_avx_transitions.py). */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && !defined(SVI_NO_MULTIVERSION)
#define SVI_SIMD __attribute__((target_clones("avx2", "default")))
/* and kernels written with fma(): a clone with the FMA instructions (and AVX), the default one
 * calls the C library's fma, which rounds the same, once */
#define SVI_SIMD_FMA __attribute__((target_clones("fma", "default")))
/* and the hand-written AVX2 kernels (svi_lcp.c, svi_modes.c), with scalar twins, picked at run
 * time by svi_have_avx2 */
#define SVI_AVX2_KERNELS 1
#else
#define SVI_SIMD
#define SVI_SIMD_FMA
#endif

/* four doubles as a GCC vector (AVX in the AVX2 clones, SSE2 pairs in the default ones: the same
 * operations lane by lane), and its bits or a comparison's lanes (-1 true, 0 false) */
typedef double svi_v4d __attribute__((vector_size(32)));
typedef long long svi_v4i __attribute__((vector_size(32)));

/* the structure-exploiting Lemke of svi_lowrank.c (per-contact blocks + the rank-nv coupling) */
typedef struct svi_lr svi_lr;
svi_lr* svi_lr_create(int nc_max, int nv_max);
void    svi_lr_destroy(svi_lr* w);
/* svi_impact_setup, once an event: forgets the runs of contacts that reach the same velocities,
 * which every low-rank direction of an event sums by (svi_lowrank.c, contact_runs); the event's
 * first low-rank solve makes them from its Jbar */
void    svi_lr_event(svi_lr* w);
/* tests and benchmarks: the pivots kept as etas between two refactors of the low-rank basis
 * (svi_lowrank.c, lr_eta_max), k > 0 that many, at most 32 (1: a refactor every pivot), k <= 0
 * the rule */
void    svi_lr_set_eta_max(svi_lr* w, int k);
/* since w was made: directions that went through at least one eta, refactors of the basis after
 * pivots (lr_rebase), and of those the ones a small pivot brought early */
void    svi_lr_eta_counts(const svi_lr* w, long long* dirs, long long* rebases, long long* early);
/* tests: on, every column of B^-1 the lexicographic test forms from etas, or takes as a unit
 * column, is formed again through every position and compared (svi_lowrank.c, verify_column,
 * verify_unit), and every column it filters as a local one (lex_filter_local) is filtered again
 * as a whole one and the lists compared (lex_filter_verified); the checks made and failed since
 * w was made, and of the checks the local filters' */
void    svi_lr_set_verify(svi_lr* w, int on);
/* tests: off, the direction sums over every velocity in one run, as before the runs of contacts
 * that reach the same velocities (svi_lowrank.c, contact_runs; made again by the next solve); the
 * runs of w's event once a low-rank solve has made them, else 0 */
void    svi_lr_set_runs(svi_lr* w, int on);
int     svi_lr_runs(const svi_lr* w);
void    svi_lr_verify_counts(const svi_lr* w, long long* checks, long long* fails);
long long svi_lr_verify_local(const svi_lr* w);

/* Which Lemke solves the impact LCPs (31) and (75): SVI_SOLVER_AUTO picks the low-rank solver
 * when the contacts outnumber the velocities (svi_impact_setup, docs/theory.md 5.2). */
typedef enum { SVI_SOLVER_AUTO = 0, SVI_SOLVER_DENSE = 1, SVI_SOLVER_LOWRANK = 2 } svi_solver;
#define SVI_LR_MAX_NV 64   /* the low-rank solver's largest nv */
/* the lexicographic ratio test's tolerance on the scaled components of B^-1 / a: both Lemkes
 * (svi_lcp.c, svi_lowrank.c) compare with it, so a handed-over path keeps the dense one's rule */
#define SVI_LEX_TOL 1e-13
#define SVI_PFI_NMAX 1024  /* the dense Lemke's product form up to this n, the explicit tableau beyond */
/* svi_impact.c's handover_neta: a long dense path hands over to the low-rank Lemke once its eta file
 * reaches about this many bytes (a core's L2 cache on the project's hosts; a constant, not the
 * host's size, so the path is the same on any host) */
#define SVI_HANDOVER_ETA_BYTES 1048576.0
#define SVI_AT_NMAX 128    /* transposed LCP matrices kept up to this size */
#define SVI_SMAP_PATTERNS 361   /* spatial pattern maps: 19^2 patterns of up to two contacts */
#define SVI_SMAP_STRIDE 96      /* doubles a pattern: [X; U] by columns, 8 x 12 */

struct svi_impact {
  /* capacity */
  int nv_max, nc_max, nt_max;
  /* sizes of the current problem */
  int nv, nc, nt, nd, nb;   /* nd = 2 nt friction directions, nb = nc (1 + nd) rows of Jbar */
  int n_ap, n_routh;        /* LCP sizes: eq. (31) nc (2 + nd), eq. (75) nc (3 + nd) */
  void* block;    /* the workspace M, U, ... are carved from (workspace_alloc) */
  size_t block_size;
  /* problem data */
  double* M;      /* nv x nv */
  double* U;      /* M = U U^T, U upper (row-major; ucholesky_env in svi_impact.c) */
  double* Jbar;   /* nb x nv: [Jn; JD], eq. (35) */
  double* Jt;     /* nc nt x nv */
  double* G;      /* nv x nb: M^-1 Jbar^T */
  double* Gt;     /* nb x nv: G transposed (the low-rank solver reads its columns) */
  double* Gp;     /* nv x nbp: G's columns other than the -t ones (jbar_minus_row) */
  double* Hp;     /* nv x nbp: U^-1 Jbar_p^T (M = U U^T), W's factor on them: W = Hp^T Hp */
  double* W;      /* nb x nb: Jbar M^-1 Jbar^T (Delassus); valid iff dense (svi_impact_dense) */
  double* mu;     /* nc */
  double* v0;     /* nv */
  double* u0;     /* nb: Jbar v0 */
  double* A_ap;   /* n_ap^2, eq. (31)-(33) */
  double* A_routh;/* n_routh^2, eq. (75b); valid iff routh_built */
  double *Ant_routh, *Ant_ap; /* -A^T (columns of -A contiguous) when n <= SVI_AT_NMAX: the revised
                               * Lemke's columns; (75)'s only for an event sampled many times */
  int* Ant_nz;                /* (31)'s columns' nonzero rows when at most 2 (svi_lcp_prepared.Mnt_nz) */
  int* routh_nz;    /* 2 n_routh: (75)'s columns' nonzero rows, as Ant_nz, found on a column's
                     * first use (routh_column; -3: not yet) */
  int     dense;    /* W was built at set-up: the dense forms of W lambda and of the residual are
                     * this event's (A_routh: routh_built, A_ap: ap_built).  Decided at set-up and
                     * never changed by a later need of the whole W (w_full): a sample's bits must
                     * not depend on the samples the workspace ran before it */
  int     w_full;   /* W holds every row, as build_delassus spreads them (set-up, or the first
                     * consumer of the whole matrix: a tableau, (31)'s matrices, a refinement) */
  int     gram;     /* W = Hp^T Hp (build_delassus; the events of wrows_pay), else Jbar G symmetrised */
  int     wrows;    /* W's rows are formed on first use (wp_row_on_use in svi_impact.c: the dense
                     * Lemke's step solve on many contacts); until w_full, row b of W holds Wp's
                     * row (its nbp columns other than the -t ones) where w_row_ok[b] is set */
  unsigned char* w_row_ok;   /* nb: row b of W is formed (wrows) */
  int     ap_built; /* A_ap and Ant_ap are built (svi_impact_ap: on first use) */
  int     routh_built; /* A_routh is built (routh_matrix: on first need) */
  int     routh_t_built; /* Ant_routh is built (build_lcp_matrices: not step_solve, n_routh <=
                          * SVI_AT_NMAX); else the revised Lemke's columns come from W (routh_column) */
  int     lowrank;  /* the LCPs are solved by svi_lr_lemke (no n x n matrix) */
  int     handover; /* > 0: the dense Lemke hands a path over to svi_lr_lemke_from at this many
                     * etas (svi_lcp_prepared.handover_neta); 0: never */
  int     handover_req; /* svi_impact_set_handover: -1 (default) the rule, 0 never, > 0 at that */
  svi_solver solver;/* requested at create (svi_impact_set_solver), resolved at setup */
  int     step_solve;   /* svi_impact_set_step_solve: no per-event pattern maps */
  int     no_prune;     /* tests only: the direct enumerations solve every pattern */
  int     no_wrows;     /* tests only: W whole at set-up (its form still gram), never by rows on use */
  long long patterns_solved;   /* patterns the direct enumerations have solved (tests) */
  long long handovers;  /* dense paths handed over to the low-rank Lemke (tests, benchmarks) */
  long long patterns_factored, patterns_singular;   /* of which factored, singular (tests) */
  double  anorm_routh, anorm_ap;   /* |A|_inf of (75), (31) (an upper bound without dense) */
  svi_lr* lr;
  double* lr_scratch;   /* 2 n_routh + 2 nv */
  /* Algorithm 2: the current sample's Sobol coordinates, generated for a batch of consecutive
   * samples at once (the same values as svi_sobol_point); NULL: evaluate them directly */
  const uint32_t* sobol_row;
  double  ref_impulse, vscale, sep_tol, max_mu;   /* ref_impulse: the frictionless one (tolerances) */
  double  step_ref; /* the reference impulse of the step h (svi_impact_reference_impulse) */
  double  v_app;    /* largest pre-impact approach speed max_i (-J_n,i v-)^+, m/s */
  double  pen_tol;  /* outcome check: J_n v+ >= -pen_tol = -1e-6 v_app */
  double  ke0;      /* kinetic energy of v- */
  double* kappa;    /* nc: largest diagonal of W over contact i's rows, m/s per N s */
  /* the units of (75)'s pairs in the enumerated steps' residual order (svi_routh_residual:
   * per contact beta, l_n, l_D (+t, -t per tangent), gamma; nc <= 4): the z unit, the w unit
   * and 4 eps times the w unit, each 3 + nd a contact, zero padding to a multiple of 4 */
  double* pair_units;
  double *pair_w, *pair_mag;   /* nr: lcp_residual's pairs (w and its rounding magnitude) */
  double* zunit;    /* n_routh: units of z in (75) for the physical residual (AP: + nc) */
  double* wunit;    /* n_routh: units of w in (75) */
  /* scratch, sized once */
  svi_lcp_work* lcp;
  double *q, *z, *d, *lam, *Lam, *u, *v, *A_one, *lmax, *vn;
  double* u_next;   /* nb: u + W lam of a step, formed by its residual (u_next_ok) */
  int     u_next_ok;
  double* sols;   /* SVI_ENUM_MAX_SOLS x n_routh */
  double* dv;     /* SVI_ENUM_MAX_SOLS x nv */
  double* sign;   /* n_routh: lexicographic perturbation signs */
  int*    order;  /* n_routh: lexicographic perturbation order */
  svi_lazy_order order_lazy;   /* order's pending draw (svi_routh.c random_branch_n) */
  int*    lo;     /* nv: first nonzero of each row of M, for K(v) */
  int*    hi;     /* nv: last nonzero of each row of M: K(v), and U's envelope */
  double* seen;   /* SVI_ENUM_MAX_SOLS x 2 nc: outcomes kept by the mode enumeration */
  double* Wr;     /* (2 nc)^2 reduced Delassus matrix for the mode enumeration (nt = 1) */
  double* Wr4;    /* Wr (m x m, m = (1 + nt) nc <= 12) with its rows padded to a multiple of 4 by zeros */
  int     pattern_cap;     /* patterns with a precomputed linear map (7^min(nc_max, 3)) */
  int     n_patterns;      /* = 7^nc when the maps of the current problem are valid, else 0 */
  double* pattern_map;     /* per pattern: X (2nc x 3nc) then U (2nc x 3nc) */
  unsigned char* pattern_ok;
  /* per pattern p, its feasibility as rows F g <= tau, g = [u_r; l_max] (3nc values): rows
   * pattern_row0[p] .. pattern_row0[p + 1] - 1 of pattern_F (3nc each) and pattern_tau */
  int*    pattern_row0;
  double* pattern_F;
  double* pattern_tau;
  int*    pattern_hits;    /* how often each row rejected */
  /* each pattern's two most rejecting rows, packed for evaluating all patterns at once: in
   * pattern_pk (below), their indices in pattern_F in pattern_frow (2 per pattern) */
  int*    pattern_frow;
  int*    pattern_pass;    /* 2 per pattern: steps passing the first, and both packed rows */
  int*    pattern_idx;     /* scratch: the patterns that pass both (npad + 4) */
  int*    pattern_blk0;    /* per pattern: its first block of 4 rows in pattern_blk */
  double* pattern_blk;     /* every pattern's rows in blocks of 4, by coordinate, then 4 tau */
  double* pattern_uc;      /* per pattern U by columns (3nc x m2pad, m2pad = 2nc rounded up to 4) */
  int     pattern_npad, pattern_total;
  /* The event's first step starts from u0 for every sample: each row's and map's partial sum
   * over g's velocity part (j < 2nc) at u0, in the order of the full sum (svi_modes.c,
   * pattern_prefix): every block row's (4 a block), U's (m2pad a pattern) and X's (2nc a
   * pattern); the packed rows' are in pattern_pk */
  double* pattern_pre;
  double  pattern_g0[8];   /* g's velocity part at u0 (2nc values) */
  /* the packed rows by groups of 4 patterns: per group and packed row its 3nc coefficients, tau
   * and the first step's partial sum, 4 values each (one pointer a group, constant offsets) */
  double* pattern_pk;
  int     pattern_pre_ok;
  /* The first step's candidates by budget cell (svi_modes.c, pattern_cells): the box [0, lhi) of
   * the first steps' budgets l_max cut into SVI_CELLS(nc)^nc cells; per cell, as bits of
   * pattern_cell_words words, the patterns not excluded on the whole cell by one of their rows. */
  uint64_t* pattern_cell;
  double  pattern_lhi[4];  /* the largest first-step budget of each contact seen while learning */
  double  pattern_cell_inv[4];   /* SVI_CELLS(nc) / lhi */
  int     pattern_cells_ok, pattern_cell_words;
  int     pattern_cells_off;      /* tests: never build the table (every first step scans all) */
  long long pattern_cell_steps;   /* first steps that took their cell's candidates */
  /* spatial enumeration (nt = 2), per contact and mode (svi_modes.c): the mode's unknowns and
   * equations (per event), Wr times each unknown's direction (per event), the impulse fixed by
   * the budget and Wr times it (per step) */
  struct svi_smode* smode;
  double *sm_wd, *sm_vf, *sm_xf;
  struct svi_mode_fac* sm_fac;   /* per pattern of up to two contacts: K's factor (per event) */
  double* sm_kf;                 /* and K and the factor's values */
  struct svi_smode_test* sm_test;   /* per mode: its tests on the velocity bounds (per event) */
  void* sm_pp;                      /* contact 0's of those tests as vector lanes, for two spatial
                                     * contacts (svi_modes.c pp_tests0; per event, 64-aligned) */
  /* per pattern of up to two spatial contacts (19^2), with the pattern maps (not under
   * svi_impact_set_step_solve): [X; U] (2 x 3nc x 4nc), x = X g, up = U g (svi_modes.c,
   * spatial_maps) */
  double* smap;
  int*    smap_kind;   /* 0: mapped, -1: never feasible (a non-finite map), -2: singular, solved directly */
  int     smap_direct; /* patterns solved directly */
  int     smap_ready;  /* built for the current event */
  int     smode_ready;   /* the per-event tables are built for the current problem */
  double* sm_c;   /* per contact and mode, per reduced row: [min, max] of Wr x over the mode's
                   * impulses and a magnitude (svi_modes.c, mode_bounds; per step) */
  long long pattern_steps, pattern_picked;

};

/* W, A_ap and A_routh of the problem set up, each formed if it is not yet (setup skips W for many
 * contacts, O(nb^2 nv), and leaves both matrices to their first need) */
void svi_impact_dense(svi_impact* s);
/* (31)'s A_ap (and Ant_ap), formed on the first call: the dense Lemke on (31), the simultaneous
 * law's enumeration */
const double* svi_impact_ap(svi_impact* s);
/* (75)'s A_routh, formed on the first call (the solvers take its columns from W or Ant_routh;
 * tests and the enumeration of complementary bases read the matrix) */
const double* svi_impact_routh(svi_impact* s);
/* for tests: force a solver for the following setups */
void svi_impact_set_solver(svi_impact* s, svi_solver solver);
/* tests and benchmarks only: -1 (the default) hands a long dense path over to the low-rank Lemke
 * where the rule of svi_impact.c (handover_neta) says, 0 never, k > 0 at k etas wherever the
 * low-rank Lemke applies (SVI_SOLVER_AUTO only) */
void svi_impact_set_handover(svi_impact* s, int neta);
/* The Jacobi rotation (c, s) that zeroes apq in the symmetric [[app, apq], [apq, aqq]] (Golub &
 * Van Loan's symmetric Schur decomposition of a 2 x 2 block): zeta = (aqq - app) / (2 apq), t = sign(zeta) / (|zeta| +
 * sqrt(1 + zeta^2)), the smaller root, c = 1 / sqrt(1 + t^2), s = t c.  Its users apply it to
 * their own rows and columns (svi_approx.c, svi_modes.c). */
static inline void svi_jacobi_rotation(double app, double aqq, double apq, double* c, double* s) {
  double zeta = (aqq - app) / (2 * apq);
  double t = (zeta >= 0 ? 1.0 : -1.0) / (fabs(zeta) + sqrt(1 + zeta * zeta));
  *c = 1 / sqrt(1 + t * t);
  *s = *c * t;
}

/* Row c of Jbar is the negated row c - 1 (a -t friction direction after its +t one): then so are
 * its columns of G and its row and column of W, exactly (a solve or a dot product with a negated
 * vector negates every rounded step), so they are copied negated, not computed. */
static inline int jbar_minus_row(const svi_impact* s, int c) { return c >= s->nc && (c - s->nc) % 2 == 1; }
/* the columns that are not -t ones: nc normal ones, then every other friction one (Gp, Hp, Wp) */
static inline int n_plus(const svi_impact* s) { return s->nc + (s->nb - s->nc) / 2; }
/* Jbar's row of the ip-th of those columns, and the reverse (a -t row maps to its +t row's) */
static inline int plus_row(const svi_impact* s, int ip) { return ip < s->nc ? ip : s->nc + 2 * (ip - s->nc); }
static inline int plus_index(const svi_impact* s, int b) { return b < s->nc ? b : s->nc + (b - s->nc) / 2; }
/* W_ab without the dense matrix (H_a . H_b under gram, else Jbar_a . G_b) */
static inline double svi_impact_w(const svi_impact* s, int a, int b) {
  if (s->dense) return s->W[(size_t)a * s->nb + b];
  if (!s->gram) {
    const double *x = s->Jbar + (size_t)a * s->nv, *y = s->Gt + (size_t)b * s->nv;
    double t = 0;
    for (int k = 0; k < s->nv; k++) t += x[k] * y[k];
    return t;
  }
  /* W_ab = H_a . H_b (svi_impact.c, wp_row: the same value as the whole W's entry); a -t row of
   * H is its +t row negated */
  int nbp = n_plus(s), ia = plus_index(s, a), ib = plus_index(s, b);
  const double* h = s->Hp;
  double t = 0;
  for (int k = 0; k < s->nv; k++) t += h[(size_t)k * nbp + ia] * h[(size_t)k * nbp + ib];
  return jbar_minus_row(s, a) != jbar_minus_row(s, b) ? -t : t;
}
/* the physical residual of lambda_bar (nb) as a solution of the step (75) at q = [lmax; u; 0]
 * (nc budgets, nb contact velocities: q is not formed), dense W only; z (n_routh) receives
 * [beta; lambda_bar; gamma], u_next (nb) the post-step contact velocity u + W lambda_bar as the
 * residual formed it (either may be NULL) */
double svi_routh_residual(const svi_impact* s, const double* lmax, const double* u, const double* lam,
                          double* z, double* u_next);
/* u += W lambda (nb values) */
void svi_impact_add_w(const svi_impact* s, const double* lambda, double* u);
/* v += G lambda, svi_matvec_add(nv, nb, G, lambda, v)'s bits (AVX2 from Gt for nv <= 16) */
void svi_impact_g_add(const svi_impact* s, const double* lambda, double* v);
/* Lemke on (75) (routh = 1) or (31) (routh = 0) of s, dense or low-rank as resolved at setup;
 * arguments as svi_lcp_lemke_perturbed, opt with the physical units */
int svi_impact_lemke(svi_impact* s, int routh, const double* q, const double* d, const int* order,
                     const double* sign, const svi_lcp_options* opt, double* z, svi_lcp_info* info);
int svi_lr_lemke(svi_lr* w, const svi_impact* s, int routh, const double* q, const double* d,
                 const int* order, const double* sign, const svi_lcp_options* opt, double* z,
                 svi_lcp_info* info);
/* physical residual of z on (75)/(31) evaluated through Jbar and G; wout (may be NULL) = A z + q;
 * scratch: 2 nv */
double svi_lr_residual(const svi_impact* s, int routh, const double* q, const double* z,
                       const double* zu, const double* wu, double* wout, double* scratch);
/* A matrix prepared once per event for the dense Lemke (svi_lcp.c): checked finite, its norm,
 * optionally its transpose (the revised form reads columns) and a residual that replaces
 * svi_lcp_residual_units (the same quantity, computed from the problem's structure).  When a
 * solve returns a solution, the residual's last call was on that solution (so what the call
 * formed on the side belongs to it). */
typedef struct {
  const double* M;       /* n x n row-major, or NULL: formed by matrix() on first need */
  const double* Mnt;     /* -M^T (the columns of -M, contiguous), or NULL */
  const int*    Mnt_nz;  /* per column of -M its nonzero rows when at most 2 (-1 pads), else
                          * {-2, -2}; or NULL */
  /* column j of -M into a (n values) and its nonzero rows as Mnt_nz has them, from the
   * problem's structure; or NULL (then Mnt, else M) */
  void (*column)(void* ctx, int j, double* a, int* nz);
  /* M when the field is NULL: the refinement, the tableau, the regularised retry and a residual
   * without .residual ask for it */
  const double* (*matrix)(void* ctx);
  double        mnorm;   /* |M|_inf */
  double (*residual)(void* ctx, const double* q, const double* z);   /* or NULL */
  void*         ctx;
  svi_lazy_order* lazy;  /* the order argument is drawn on first read (svi_order_ready), or NULL */
  /* > 0: the product form's first path stops with SVI_LCP_HANDOVER where its eta file holds this
   * many etas (an FTRAN then costs about a pivot of the low-rank Lemke, which goes on from the
   * basis: svi_lcp_handover, svi_lr_lemke_from); 0: never */
  int           handover_neta;
} svi_lcp_prepared;
/* svi_lcp_lemke_prepared's status when its path handed over (svi_lcp_prepared.handover_neta):
 * not a solution, nor a failure; never leaves svi_impact_lemke */
#define SVI_LCP_HANDOVER (-100)
/* The basis a path handed over with: per row its basic variable (w_i = i, z_j = n + j,
 * z0 = 2 n) and value, the variable that enters next and the pivots made */
typedef struct {
  const int*    basis;
  const double* xb;
  int           entering;
  int           pivots;
} svi_lcp_basis;
void svi_lcp_handover(const svi_lcp_work* w, svi_lcp_basis* b);
/* svi_lr_lemke going on from the basis the dense Lemke's product form handed over on the same
 * LCP, q, d and perturbation (svi_lcp_handover: the same path, its pivots counted in info);
 * a regularised retry starts afresh */
int svi_lr_lemke_from(svi_lr* w, const svi_impact* s, int routh, const double* q, const double* d,
                      const int* order, const double* sign, const svi_lcp_options* opt,
                      const svi_lcp_basis* start, double* z, svi_lcp_info* info);
int svi_lcp_lemke_prepared(svi_lcp_work* w, int n, const svi_lcp_prepared* P, const double* q,
                           const double* d, const int* order, const double* sign,
                           const svi_lcp_options* opt, double* z, svi_lcp_info* info);
/* tests only: 0 turns the product form's rebuilds (pfi_rebuild) off in w's solves, 1 on (default) */
void svi_lcp_set_rebuild(svi_lcp_work* w, int on);
/* From this many rows the product form's FTRAN (svi_lcp.c) skips the passes whose multipliers are
 * zero, takes four etas a pass where none is skipped (ftran_quad) and runs its AVX-512 copy where
 * the CPU has it; below it, one unrolled copy per column length (ftran_body_ld). */
#define SVI_PFI_LARGE_NMIN 64
/* tests only: product-form paths of at least SVI_PFI_LARGE_NMIN rows (those take the large
 * problems' FTRAN) and rebuilds, counted since w was made */
void svi_lcp_counts(const svi_lcp_work* w, long long* paths_large, long long* rebuilds);
/* tests only: 0 breaks every tie of the product form's ratio test by rows of B^-1 (BTRAN), 1 (the
 * default) ties that need more than 8 rows by columns (FTRAN; svi_lcp.c, pfi_lex_cols); and the
 * rows and columns of B^-1 so formed since w was made */
void svi_lcp_set_lexcols(svi_lcp_work* w, int on);
void svi_lcp_lex_counts(const svi_lcp_work* w, long long* rows, long long* cols);

/* Both Lemke solvers' ratio test (svi_lcp.c): min over a_i > tol of x_i / a_i (INFINITY if
 * none), and the rows with a_i > tol and x_i <= lim a_i into cand (their count), in order.
 * AVX2 where the CPU has it (svi_have_avx2), the same bits either way. */
double svi_kern_min_ratio(int n, const double* x, const double* a, double tol);
int    svi_kern_ratio_ties(int n, const double* x, const double* a, double tol, double lim, int* cand);
/* tests: the product form's ratio scan (n4 a multiple of 4; x updated by x -= f ap, x_rp = f when
 * rp >= 0) through its AVX-512VL copy (level 2, where svi_have_avx512), the AVX2 kernel (level 1,
 * where the CPU has AVX2) or the scalar twin (0); the minimum ratio through the AVX2 kernel
 * (avx2 = 1, if available) or the scalar twin */
double svi_kern_ratio_scan(int level, int n4, double* x, const double* a, double tol, double* sec,
                           int* arg, const double* ap, double f, int rp);
double svi_kern_min_ratio_as(int avx2, int n, const double* x, const double* a, double tol);
int    svi_have_avx2_probe(void);
/* 1 if the CPU has AVX2 and FMA (and the build has the kernels): the probe once, then one load
 * of a flag (the per-step paths ask several times a step) */
extern _Atomic int svi_avx2_flag;   /* -1 until probed */
static inline int svi_have_avx2(void) {
  int f = atomic_load_explicit(&svi_avx2_flag, memory_order_relaxed);
  return f >= 0 ? f : svi_have_avx2_probe();
}
/* 1 if the AVX-512 kernels run (svi_lcp.c: the product form's FTRAN on 64 rows or more in its
 * 512-bit copy pfi_ftran_large_512, the ratio scan in its AVX-512VL copy ratio_scan_vl, eight rows a
 * vector from 64 rows in ratio_scan_512; svi_routh.c: the random covering vector in covering_dq;
 * svi_lowrank.c: the direction's sum over Y's rows in combine_columns_512): the CPU has AVX2,
 * AVX-512F, VL, DQ and VBMI, and the
 * build has the kernels; read as svi_have_avx2; the same bits
 * either way.  svi_kern_set_avx512(0) turns it off for the process
 * (tests compare the two), svi_kern_set_avx512(1) back on where the CPU has it. */
int  svi_have_avx512_probe(void);
extern _Atomic int svi_avx512_flag;   /* -1 until probed */
static inline int svi_have_avx512(void) {
  int f = atomic_load_explicit(&svi_avx512_flag, memory_order_relaxed);
  return f >= 0 ? f : svi_have_avx512_probe();
}
void svi_kern_set_avx512(int on);

/* 1 if every x_i is finite: x_i 0 is NaN exactly when x_i is not finite, and a NaN stays in a sum;
 * four independent sums, no branch per entry (vectorised; the validity checks of the LCP inputs and
 * of an impact problem's matrices) */
static inline int svi_all_finite(int n, const double* x) {
  double s[4] = {0, 0, 0, 0};
  int i = 0;
  for (; i + 4 <= n; i += 4)
    for (int k = 0; k < 4; k++) s[k] += x[i + k] * 0.0;
  for (; i < n; i++) s[0] += x[i] * 0.0;
  double t = (s[0] + s[1]) + (s[2] + s[3]);
  return t == t;
}

/* x > 0 ? x : 0 without a branch (maxsd returns its second operand unless the first is
 * greater: +0 for -0 and for NaN, as the comparison does) */
#if defined(__x86_64__)
#include <emmintrin.h>
static inline double svi_pos_part(double x) {
  return _mm_cvtsd_f64(_mm_max_sd(_mm_set_sd(x), _mm_setzero_pd()));
}
#else
static inline double svi_pos_part(double x) { return x > 0 ? x : 0; }
#endif

/* The violation of one complementary pair a _|_ b, max(|min(a, b)|, -a, -b), over b's rounding
 * interval [b - e, b + e]: the value at its worse end; INFINITY if anything is NaN.  Inline
 * comparisons (libm's fmin and fmax are calls). */
static inline double svi_pair_violation(double a, double b) {
  double mn = a < b ? a : b, m = mn < 0 ? -mn : mn;
  if (-a > m) m = -a;
  if (-b > m) m = -b;
  return m;
}
/* the same without the NaN test, for callers that test a whole sum once */
static inline double svi_pair_interval(double a, double b, double e) {
  double m1 = svi_pair_violation(a, b - e), m2 = svi_pair_violation(a, b + e);
  return m1 > m2 ? m1 : m2;
}
static inline double svi_pair_residual(double a, double b, double e) {
  if (!(a == a && b == b && e == e)) return INFINITY;
  return svi_pair_interval(a, b, e);
}

/* svi_rng_u64(seed, stream, index) = svi_rng_keyed(svi_rng_key(seed, stream), index): the key of a
 * stream computed once for many draws */
uint64_t svi_rng_key(uint64_t seed, uint64_t stream);
/* SplitMix64 finaliser (Steele, Lea & Flood 2014): a bijective 64-bit mixer.  Inline, with
 * svi_rng_keyed: a Lemke step draws two per LCP row. */
#define SVI_MIX_C1 0xbf58476d1ce4e5b9ULL   /* (also svi_routh.c's four-lane mix64x4) */
#define SVI_MIX_C2 0x94d049bb133111ebULL
#define SVI_KEYED_OFFSET 0x632be59bd9b4e019ULL
static inline uint64_t svi_rng_mix64(uint64_t x) {
  x ^= x >> 30;
  x *= SVI_MIX_C1;
  x ^= x >> 27;
  x *= SVI_MIX_C2;
  x ^= x >> 31;
  return x;
}
static inline uint64_t svi_rng_keyed(uint64_t key, uint64_t index) {
  return svi_rng_mix64(key ^ svi_rng_mix64(index + SVI_KEYED_OFFSET));
}

/* A random covering vector d in [0.05, 1), signs +-1 and a Fisher-Yates order of n rows: the
 * random-perturbation Lemke of a step (svi_routh.c), row i drawn at index index0 + i of the
 * streams keyed key_d (d and the sign) and key_order (the shuffle); svi_random_covering and
 * svi_random_order are its two parts */
void svi_random_perturbation(uint64_t key_d, uint64_t key_order, uint64_t index0, int n, double* d,
                             double* sign, int* order);
void svi_random_covering(uint64_t key_d, uint64_t index0, int n, double* d, double* sign);

/* the outcome floor(r01 count) of count >= 1 (r01 in [0, 1]; r01 = 1 picks the last): the uniform
 * choice of an enumerated step */
static inline int svi_pick_index(double r01, int count) {
  int k = (int)(r01 * count);
  return k < count ? k : count - 1;
}

/* y = A x, A r x c row-major */
void svi_matvec(int r, int c, const double* A, const double* x, double* y);
/* y += A x */
void svi_matvec_add(int r, int c, const double* A, const double* x, double* y);
/* min_i u_i over the normal rows (inline: the step loop asks once a step) */
static inline double svi_min_normal(const svi_impact* s, const double* u) {
  double m = INFINITY;
  for (int i = 0; i < s->nc; i++) if (u[i] < m) m = u[i];
  return m;
}
/* dense Cholesky of an n x n row-major SPD matrix in place (0 if not positive definite), and the
 * solve x <- A^-1 x with the factor */
int  svi_cholesky(int n, double* A);
void svi_cholesky_solve(int n, const double* L, double* x);
/* h in N s from the config (relative to the reference impulse unless step_abs > 0) */
double svi_routh_h(const svi_impact* s, const svi_routh_config* cfg);
int svi_routh_run(svi_impact* s, const svi_routh_config* cfg, const svi_sobol* sobol,
                  uint64_t k, int finish_ap, double extra_budget, double* v_out,
                  svi_sample_info* info, double* traj, int traj_cap, int* traj_len);

/* Coordinates 0 .. dim-1 of the Sobol points first .. first + count - 1 into out (count x dim),
 * the same values as svi_sobol_point, generated incrementally: O(dim) per point */
void svi_sobol_points(const svi_sobol* so, uint64_t first, int count, uint32_t* out);
/* a coordinate's digits (with the shift) as svi_sobol_point returns it */
static inline double svi_sobol_value(uint32_t x) { return ((double)x + 0.5) * 0x1.0p-32; }

/* svi_impact_check_outcome that also hands back K(v) and min_i J_n,i v (either may be NULL) */
int svi_outcome_check(const svi_impact* s, const double* v, const double* lambda, double* ke,
                      double* min_vn);
/* lcp options with the physical units of eq. (75) (routh = 1) or eq. (31) (routh = 0) */
svi_lcp_options svi_impact_lcp_options(const svi_impact* s, const svi_lcp_options* base, int routh);

/* contact-mode enumeration of one Routh step (svi_modes.c): every distinct outcome, planar (7
 * modes per contact) or spatial (19 modes per contact, the four-sided pyramid), nc <= 4 */
int svi_modes_supported(const svi_impact* s);
/* Patterns per step: 7^nc planar (precomputed maps up to 3 contacts), 19^nc spatial (solved at
 * the step).  The ENUMERATE rule uses the enumeration up to 7^4 = 2401 planar and 19^3 = 6859
 * spatial patterns; AUTO only where a step costs about as much as a few Lemke solves. */
static inline int svi_modes_for_sampling(const svi_impact* s) { return s->nt == 1 ? s->nc <= 4 : s->nc <= 3; }
static inline int svi_modes_cheap(const svi_impact* s) { return s->nt == 1 ? s->nc <= 3 : s->nc <= 2; }
void svi_modes_setup(svi_impact* s);
struct svi_smode* svi_smode_alloc(int nc);   /* the spatial mode table of nc contacts (malloc) */
int svi_smode_event_alloc(svi_impact* s);   /* sm_fac, sm_kf, sm_test (malloc); 0 on failure */
/* (31) at s->q (z into s->z): plain Lemke, then up to 3 randomly perturbed retries drawn from key
 * while the physical residual rejects the solution (svi_routh.c) */
int svi_ap_lemke(svi_impact* s, const svi_lcp_options* o, uint64_t key, svi_lcp_info* li,
                 int* retries, int* rejects);
int svi_modes_enumerate(svi_impact* s, const double* u, const double* lmax);
/* outcome floor(r01 count) of the enumeration into lam (nb); returns count (0: none) */
int svi_modes_enumerate_pick(svi_impact* s, const double* u, const double* lmax, double r01, double* lam);
/* every distinct outcome of (31) the same way (SEP and INT modes only); lambda_bar in s->sols */
int svi_modes_enumerate_ap(svi_impact* s, const double* u);

#endif
