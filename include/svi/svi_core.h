/* svi_core.h -- set-valued impacts: the MuJoCo-free core.
 *
 * Contact-space impact problems (Halm & Posa 2021, "Set-valued rigid-body dynamics for simultaneous,
 * inelastic, frictional impacts"), their LCPs, Algorithm 1 (one sample), Algorithm 2 (set
 * approximation) and the comparison laws.  All matrices are dense and row-major.
 * Equation numbers refer to that paper; docs/theory.md carries the derivations.
 */
#ifndef SVI_CORE_H_
#define SVI_CORE_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SVI_VERSION_STRING "0.1.0"

/* ---------------------------------------------------------------------------------------------
 * Status codes.  Negative = failure, 0 = success, positive = success with a remark.
 */
typedef enum {
  SVI_OK              = 0,
  SVI_OK_REGULARIZED  = 1,   /* solved only after a regularised retry (residual still checked) */
  SVI_ERR_ARG         = -1,  /* NULL pointer, size out of range, mismatched sizes */
  SVI_ERR_NONFINITE   = -2,  /* NaN or Inf in the input */
  SVI_ERR_NOT_SPD     = -3,  /* mass matrix not symmetric positive definite */
  SVI_ERR_NEG_MU      = -4,  /* friction coefficient < 0 */
  SVI_ERR_RAY         = -5,  /* Lemke: secondary ray (no blocking variable) */
  SVI_ERR_MAXITER     = -6,  /* Lemke: iteration cap reached */
  SVI_ERR_RESIDUAL    = -7,  /* a candidate solution failed the residual check */
  SVI_ERR_NOMEM       = -8,
  SVI_ERR_CAPACITY    = -9,  /* problem larger than the workspace was created for */
  SVI_ERR_REJECTED    = -10  /* every attempt at an outcome failed the outcome checks
                                (svi_impact_check_outcome); nothing is returned as accepted */
} svi_status;

const char* svi_status_string(int status);

/* ---------------------------------------------------------------------------------------------
 * Dense LCP:  find z >= 0 with w = M z + q >= 0 and z'w = 0.   M is n x n, row-major.
 */
typedef struct {
  int    max_iter;     /* pivot cap; 0 = automatic (50 n + 10) */
  double piv_tol;      /* pivot tolerance; 0 = automatic (n * max(1,|M|_inf) * 1e2 * DBL_EPSILON) */
  double res_tol;      /* accept iff the residual (below) <= res_tol; default 1e-9 */
  int    regularize;   /* on failure retry on M + alpha I, alpha = 1e-12 .. 1e-6 (x 100); default 1 */
  double reg_tol;      /* a regularised solution is accepted iff its residual on the ORIGINAL
                          problem is <= max(res_tol, reg_tol); default 1e-6 */
  /* Optional units (n values each, both or neither): pair i is measured as
   * (zunit_i z_i, wunit_i w_i) in one common unit, and the residual is svi_lcp_residual_units.
   * The impact laws pass velocity units relative to the largest approach speed (docs/theory.md
   * 5).  NULL: svi_lcp_residual, i.e. z and w in units of |q|_inf. */
  const double* zunit;
  const double* wunit;
} svi_lcp_options;

svi_lcp_options svi_lcp_default_options(void);

typedef struct {
  int    status;       /* svi_status */
  int    pivots;       /* complementary pivots, all attempts */
  double residual;     /* residual of the returned z on the ORIGINAL problem, in the units of the
                          options (svi_lcp_residual_units or svi_lcp_residual) */
  double alpha;        /* regularisation that succeeded (0 if none) */
  int    rebuilds;     /* times the product form of B^-1 was rebuilt from its basis, all attempts
                          (paths of at least 64 rows much longer than their basis: svi_lcp.c) */
} svi_lcp_info;

typedef struct svi_lcp_work svi_lcp_work;          /* Lemke tableau and scratch for n <= nmax */

svi_lcp_work* svi_lcp_work_create(int nmax);
void          svi_lcp_work_destroy(svi_lcp_work* w);

/* Lemke's complementary pivoting with a lexicographic ratio test (never cycles on degenerate
 * problems).  d is the covering vector (d > 0 elementwise, normal numbers: d >= DBL_MIN), NULL = all ones.  On failure z is
 * left at 0 and info->status < 0.  No allocation. */
int svi_lcp_lemke(svi_lcp_work* w, int n, const double* M, const double* q, const double* d,
                  const svi_lcp_options* opt, double* z, svi_lcp_info* info);

/* Lemke on the symbolically perturbed problem q + sum_k eps^(k+1) sign[k] e_order[k] (eps -> 0):
 * the lexicographic rule with a chosen order and signs.  On a degenerate problem with several
 * solutions the perturbation decides which one the path reaches; drawing order and signs at
 * random reaches others, not necessarily all (used by SVI_BRANCH_RANDOM).  order: a permutation of 0..n-1,
 * sign: +-1 each; either may be NULL (identity / all +1). */
int svi_lcp_lemke_perturbed(svi_lcp_work* w, int n, const double* M, const double* q,
                            const double* d, const int* order, const double* sign,
                            const svi_lcp_options* opt, double* z, svi_lcp_info* info);

/* Forward residual in a common unit: max_i max(|min(a_i, b_i)|, -a_i, -b_i) with a_i = zu_i z_i,
 * b_i = wu_i (M z + q)_i, where b_i is taken at the worse end of its rounding interval
 * +- 4 eps wu_i (|q_i| + sum_j |M_ij z_j|), so a huge z whose terms cancel never passes. */
double svi_lcp_residual_units(int n, const double* M, const double* q, const double* z,
                              const double* zu, const double* wu);
/* The same with zu = wu = 1/|q|_inf: every quantity measured against the data. */
double svi_lcp_residual(int n, const double* M, const double* q, const double* z);

/* Every solution of a small LCP whose complementary basis is nonsingular, by enumerating all 2^n
 * index sets (n <= 24).  Solutions are written to sols (max_sols x n); *count receives how many
 * were found (possibly more than max_sols: only the first max_sols are stored).  tol is the
 * relative feasibility tolerance (0 = 1e-9).  Duplicates (same z within tol) are merged. */
int svi_lcp_enumerate(int n, const double* M, const double* q, double tol,
                      double* sols, int max_sols, int* count);

/* ---------------------------------------------------------------------------------------------
 * Random numbers: counter-based (stateless) so that every draw is a pure function of
 * (seed, stream, index) -- the basis of bit-identical results for any thread count.
 */
uint64_t svi_rng_u64(uint64_t seed, uint64_t stream, uint64_t index);
double   svi_rng_uniform(uint64_t seed, uint64_t stream, uint64_t index);   /* in (0,1) */

/* Sobol low-discrepancy points in [0,1)^dim with a seeded random digital shift.  Direction
 * numbers come from primitive polynomials over GF(2) found at set-up, with odd initial
 * direction integers drawn from a fixed generator (any such choice gives a (t,s)-sequence). */
#define SVI_SOBOL_MAXDIM 256
typedef struct {
  int      dim;
  uint64_t seed;
  uint32_t v[SVI_SOBOL_MAXDIM][32];
  uint32_t shift[SVI_SOBOL_MAXDIM];
  /* flip[t][k] = v[k][0] ^ ... ^ v[k][t]: from point i to i + 1 the digits of bits 0 .. t flip,
   * t = the trailing ones of i (consecutive points, O(1) a coordinate) */
  uint32_t flip[32][SVI_SOBOL_MAXDIM];
} svi_sobol;

int    svi_sobol_init(svi_sobol* s, int dim, uint64_t seed);
/* coordinate k of point index (Gray-code free: direct evaluation, O(32)) */
double svi_sobol_point(const svi_sobol* s, uint64_t index, int k);

/* ---------------------------------------------------------------------------------------------
 * The impact problem in contact space.
 *
 * nv generalised velocities, nc active contacts, nt tangent directions per contact (1 planar,
 * 2 spatial).  Each tangent row t gives two friction directions +t, -t, so nd = 2 nt directions
 * per contact and J_D (eq. 35) has nc*nd rows ordered contact-major: [+t1,-t1,+t2,-t2,...].
 * Signs: J_n v > 0 is separating.  Units are SI (kg, m, s; impulses N s).
 */
typedef struct {
  int           nv, nc, nt;
  const double* M;     /* nv x nv, symmetric positive definite */
  const double* Jn;    /* nc x nv  contact normal rows */
  const double* Jt;    /* (nc*nt) x nv tangent rows, contact-major */
  const double* mu;    /* nc friction coefficients (>= 0) */
  const double* v;     /* nv pre-impact velocity */
} svi_problem_def;

typedef struct svi_impact svi_impact;     /* workspace + precomputed Delassus and LCP matrices */

svi_impact* svi_impact_create(int nv_max, int nc_max, int nt_max);
void        svi_impact_destroy(svi_impact* s);

/* Validates def (finite, sizes, SPD M, mu >= 0), factors M, forms G = M^-1 Jbar^T, the Delassus
 * matrix W = Jbar M^-1 Jbar^T and the constant LCP matrices of eq. (31) and eq. (75b).
 * err (may be NULL) receives a one-line message on failure.  No allocation. */
int svi_impact_setup(svi_impact* s, const svi_problem_def* def, char* err, int errlen);

/* The per-step mode enumeration either precomputes every pattern's maps and feasibility rows once
 * per event (svi_modes_setup, docs/theory.md 4: about 365 000 instructions for two planar
 * contacts, then about 4 000 per step) or solves each pattern at the step (about 28 000 per
 * step).  The first pays from about five samples of one event on (Algorithms 1 and 2, the tools:
 * the default); a host that draws one sample per event (the plugin inside mj_step) sets on = 1.
 * Both give the same set of outcomes; the values may differ in the last bits.  Setting on = 1
 * frees the maps' arrays (about 1.5 MB when nc_max >= 3), on = 0 allocates them again (if that
 * fails, steps keep being solved at the step); not meant for the per-step path. */
void svi_impact_set_step_solve(svi_impact* s, int on);

int    svi_impact_nv(const svi_impact* s);
int    svi_impact_nc(const svi_impact* s);
/* The rows of the step LCP (75) of the problem set up, and 1 if its Lemke solves can only run on
 * the explicit tableau: more than 1024 rows (the dense solver's product form) and more than 64
 * velocities (the low-rank solver's limit).  Each pivot then rewrites n x (2n + 2) doubles (70 MB
 * at n = 2 086), and one event takes minutes (docs/usage.md, "Cost"). */
int    svi_impact_lcp_rows(const svi_impact* s);
int    svi_impact_tableau_only(const svi_impact* s);
/* J_n v for a velocity v (nc values) */
void   svi_impact_normal_velocity(const svi_impact* s, const double* v, double* vn);
/* J_t v (nc*nt values) */
void   svi_impact_tangent_velocity(const svi_impact* s, const double* v, double* vt);
double svi_impact_kinetic_energy(const svi_impact* s, const double* v);
/* Largest pre-impact approach speed v_app = max_i (-J_n,i v-)^+, m/s.  Every velocity tolerance
 * is relative to v_ref = max(v_app, 1e-4 |Jbar v-|_inf) (docs/theory.md 5.1). */
double svi_impact_approach_speed(const svi_impact* s);

/* Outcome checks: bits of the invariants an outcome v+ (with its total impulse lambda_bar, nc (1 +
 * nd) values, or NULL to skip the cone) violates; 0 = admissible.  Tolerances in
 * docs/theory.md 5. */
enum {
  SVI_CHECK_FINITE   = 1,   /* NaN or Inf in v+ or lambda */
  SVI_CHECK_ENERGY   = 2,   /* K(v+) > K(v-) (1 + 1e-9)  (Theorem 7) */
  SVI_CHECK_APPROACH = 4,   /* some J_n,i v+ < -1e-6 v_ref  (a contact left approaching) */
  SVI_CHECK_CONE     = 8    /* impulse outside the linearised friction cone (33) */
};
int svi_impact_check_outcome(const svi_impact* s, const double* v, const double* lambda);
/* Reference impulse (docs/theory.md 4.3), N s: the largest normal impulse that stops one
 * approaching contact on its own, sticking where the sticking impulse lies in the friction pyramid
 * and exceeds the frictionless one (-J_n,i v / J_n,i M^-1 J_n,i^T), else the frictionless one.
 * Used to make the step dimensionless (h = step x this). */
double svi_impact_reference_impulse(const svi_impact* s);
/* Separation tolerance used for "non-colliding": J_n v >= -tol (m/s) */
double svi_impact_sep_tol(const svi_impact* s);

/* ---------------------------------------------------------------------------------------------
 * Set-valued law: Routh step LCP (eq. 73-75) and Algorithm 1.
 */
typedef enum {
  SVI_BUDGET_UNIFORM = 0,   /* lambda_n,max = h p, p_i ~ U(0,1) i.i.d. per contact per step */
  SVI_BUDGET_SOBOL   = 1,   /* p from a Sobol point of dimension nc*N (paper's Algorithm 2 setting) */
  SVI_BUDGET_MIXED   = 2    /* half of the samples UNIFORM, half one contact at a time: the contact
                               being resolved gets p in (1 - 1e-3, 1) until it stops approaching,
                               the others p < 1e-3, the next one drawn among the approaching.
                               Reaches the sequential orderings (the corners of the budget cube)
                               that uniform budgets almost never reach beyond 2 contacts. */
} svi_budget;

typedef enum {
  SVI_BRANCH_LEMKE     = 0, /* one deterministic solution per step (covering vector of ones) */
  SVI_BRANCH_RANDOM    = 1, /* random covering vector and random signed lexicographic perturbation
                               per step; does not reach every solution of a non-unique step (the
                               compass gait; random 3-contact spatial steps: docs/theory.md 4.4) */
  SVI_BRANCH_ENUMERATE = 2, /* uniform among all distinct step outcomes: contact-mode enumeration
                               (planar nc <= 4, 7 modes per contact; spatial nc <= 3, 19 modes per
                               contact) or complementary-basis enumeration (LCP n <= 16); larger
                               problems use RANDOM */
  SVI_BRANCH_AUTO      = 3  /* ENUMERATE where it is cheap (planar nc <= 3, spatial nc <= 2), else
                               RANDOM */
} svi_branch;

typedef enum {
  SVI_FINISH_NONE  = 0,     /* sample ended non-colliding within N steps */
  SVI_FINISH_AP    = 1,     /* N steps did not terminate: finished with the simultaneous law (31),
                               which is one LCP and always terminates */
  SVI_FINISH_FAIL  = 2      /* could not finish; v_out = last iterate (still energy-bounded) */
} svi_finish;

typedef struct {
  double          step;        /* h as a multiple of svi_impact_reference_impulse(); default 1 */
  double          step_abs;    /* if > 0: h in N s, overrides step (paper's Table 4-8 values) */
  int             max_steps;   /* N; default 10 */
  double          step_growth; /* a sample still approaching after its first ceil(N/2) steps takes
                                  each later step's budgets this many times the last's (docs/
                                  theory.md 4.2), taken in [1, 1000]; 1: h throughout (the paper's
                                  Algorithm 1); 0 (the default; also a negative value or NaN): 4
                                  under a relative step, 1 under step_abs */
  svi_budget      budget;
  svi_branch      branch;
  uint64_t        seed;
  svi_lcp_options lcp;
} svi_routh_config;

svi_routh_config svi_routh_default_config(void);
/* The budget growth cfg's samples take after their first ceil(N/2) steps: step_growth in [1, 1000],
 * or the default where it is 0, negative or NaN (4 under a relative step, 1 under step_abs). */
double svi_routh_growth(const svi_routh_config* cfg);

typedef struct {
  int    status;        /* SVI_OK, or an error (SVI_ERR_REJECTED: every attempt failed the outcome
                           checks, v_out = v-; another error: an LCP failed even after retries and
                           the fallback, v_out = the last iterate if it passes the checks, else v-) */
  int    accepted;      /* 1 iff v_out is an outcome of the set-valued law: every step LCP passed
                           the physical residual, the run terminated (finish == NONE) and v_out
                           passed svi_impact_check_outcome */
  int    steps;         /* Routh step LCPs solved (returned attempt) */
  int    lcps;          /* all LCP solves, every attempt and retry included */
  int    finish;        /* svi_finish */
  int    regularized;   /* LCP solves that needed regularisation */
  int    lcp_rejects;   /* LCP solutions that failed the physical residual check */
  int    step_retries;  /* step LCPs re-solved with another random perturbation after a reject */
  int    sample_retries;/* whole-sample re-runs (fresh budgets and perturbations) after a failed
                           outcome check or an unrecoverable LCP failure */
  int    failed_checks; /* SVI_CHECK_* bits seen over all attempts */
  double residual;      /* max LCP residual seen (returned attempt), physical units */
  double ke_before, ke_after;
  double min_vn;        /* min_i J_n,i v+ */
} svi_sample_info;

/* Solve one Routh step LCP (75) from velocity v with budget lmax (nc values, N s).  Writes
 * the contact impulse lambda_bar = [lambda_n; lambda_D] (nc*(1+nd)) and v' (nv). d: covering
 * vector (n_lcp values) or NULL. */
int svi_routh_step(svi_impact* s, const double* v, const double* lmax, const double* d,
                   const svi_lcp_options* opt, double* lambda, double* v_next, svi_lcp_info* info);

/* Algorithm 1: one sample, number sample_index of the stream fixed by cfg->seed.  When sobol is
 * non-NULL and cfg->budget == SVI_BUDGET_SOBOL, budgets come from it (dim >= nc*N).  Optional
 * trajectory output: traj (capacity traj_cap velocities of nv) receives v0, v1, ...; *traj_len
 * gets the count.  Deterministic: same (cfg, sample_index) -> bit-identical v_out. */
int svi_routh_sample(svi_impact* s, const svi_routh_config* cfg, const svi_sobol* sobol,
                     uint64_t sample_index, double* v_out, svi_sample_info* info,
                     double* traj, int traj_cap, int* traj_len);

/* ---------------------------------------------------------------------------------------------
 * Algorithm 2: approximate the post-impact set with M samples, a final step with budget
 * eps/(3 psi), psi = sigma_max(M^-1 Jbar^T) nc (1 + max mu) + 1, and removal of colliding
 * velocities.  Threads split the sample index range; every sample depends only on its index, so
 * the output is identical for any thread count.
 */
typedef struct {
  svi_routh_config routh;
  long long        samples;    /* M */
  double           eps;        /* epsilon of Algorithm 2 in m/s; 0 = 1e-3 * max|J_n v0| */
  int              threads;    /* 0 = number of online cores */
} svi_approx_config;

svi_approx_config svi_approx_default_config(void);
/* 1 if Sobol budgets fit a problem of nc contacts under r: nc N <= SVI_SOBOL_MAXDIM, N =
 * r->max_steps (10 if <= 0).  svi_approximate refuses SVI_BUDGET_SOBOL otherwise
 * (SVI_ERR_CAPACITY); its callers fall back to SVI_BUDGET_UNIFORM. */
int svi_sobol_fits(const svi_routh_config* r, int nc);

typedef struct {
  long long samples, accepted, finished_by_ap, failed, lcps;   /* finished_by_ap: 0 here (Algorithm 2
                                                                  finishes no sample by (31): see colliding) */
  long long colliding;       /* not accepted: still approaching after N steps and the final step */
  long long rejected;        /* not accepted: failed the outcome checks on every attempt */
  long long limit_refused;   /* not accepted: would close a joint or tendon limit MuJoCo holds active,
                                which mj_step leaves to MuJoCo (svi_event_approximate and svi-sample
                                --model only; 0 from svi_approximate) */
  long long lcp_rejects, step_retries, sample_retries;   /* sums of svi_sample_info's counters */
  double    psi, eps, h;
  double    max_residual;
  double    max_energy_ratio;  /* max KE(v+)/KE(v0) over every returned v+ (Theorem 7: <= 1) */
  double    wall_seconds;
} svi_approx_stats;

/* v_out: samples x nv.  accepted (may be NULL): samples flags, 1 = kept in the set (non-colliding
 * after the final step and residual ok).  lcps_per_sample (may be NULL): per-sample LCP count. */
int svi_approximate(const svi_problem_def* def, const svi_approx_config* cfg, double* v_out,
                    unsigned char* accepted, int* lcps_per_sample, svi_approx_stats* stats);

/* Group g of def (dof_group: def->nv labels, -1 for a dof in none; contact_group: def->nc labels)
 * as its own problem: its dofs' and contacts' indices in def, increasing, into dofs and contacts,
 * and its rows and columns of M, J_n, J_t, mu and v copied into the buffers (M ndof^2, Jn ncon
 * ndof, Jt ncon nt ndof, mu ncon, v ndof): the same values, in the same order, whatever else def
 * holds.  Used by svi_approximate_groups and the plugin's sample_groups. */
svi_problem_def svi_problem_group(const svi_problem_def* def, const int* dof_group, const int* contact_group,
                                  int g, int* dofs, int* contacts, double* M, double* Jn, double* Jt,
                                  double* mu, double* v);

/* A group's random stream: its seed is svi_rng_u64(seed, SVI_STREAM_GROUP, its key). */
#define SVI_STREAM_GROUP 0x67726f7570ULL   /* "group" */

/* Algorithm 2 group by group: def's problem is ngroup independent ones (no contact couples two,
 * M is block-diagonal by group), dof_group[j] (nv, -1: in none, keeps v) and contact_group[k]
 * (nc) say which.  Each is approximated on its own by svi_approximate with cfg and the seed
 * svi_rng_u64(cfg->routh.seed, SVI_STREAM_GROUP, key[g]) (Sobol budgets where its own nc fits,
 * else uniform), and sample k is every group's sample k: accepted if every group's is, its LCPs
 * their sum.  stats: counts summed over the groups' samples (accepted: whole samples), maxima
 * over them, h / eps / psi the largest group's.  ngroup <= 1: svi_approximate. */
int svi_approximate_groups(const svi_problem_def* def, const svi_approx_config* cfg, int ngroup,
                           const int* dof_group, const int* contact_group, const uint64_t* key,
                           double* v_out, unsigned char* accepted, int* lcps_per_sample,
                           svi_approx_stats* stats);

/* ---------------------------------------------------------------------------------------------
 * Comparison laws.
 */
/* Anitescu-Potra simultaneous inelastic impact, eq. (31)-(33): one solution by Lemke. */
int svi_law_simultaneous(svi_impact* s, const svi_lcp_options* opt, double* v_out,
                         svi_lcp_info* info);
/* All solutions of (31), deduplicated by the post-impact velocity: the contact-mode enumeration
 * for nc <= 4 (also the solutions with a singular complementary basis), else every complementary
 * basis (nc (2 + nd) <= 24).  Only candidates that pass the physical residual and
 * svi_impact_check_outcome count.  v_out: max_out x nv; *count = number of distinct outcomes. */
int svi_law_simultaneous_all(svi_impact* s, double* v_out, int max_out, int* count);
/* Sequential single-contact impacts (Section 2.2.2): contacts taken in the cyclic order
 * order[0..nc-1]; each round applies (31) with only the current contact active if it is
 * approaching; stops when no contact approaches or after max_rounds single impacts.
 * *rounds (may be NULL) receives the number of single impacts; returns SVI_OK, or
 * SVI_ERR_MAXITER if max_rounds did not terminate (v_out = last iterate). */
int svi_law_sequential(svi_impact* s, const int* order, int max_rounds, double* v_out,
                       int* rounds);

/* The sequential law under every contact order (Section 2.2.2 leaves the order open): all nc!
 * orders of svi_law_sequential when nc! <= max_orders, otherwise max_orders orders drawn
 * uniformly (Fisher-Yates from the counter-based generator: order k depends only on (seed, k)).
 * max_orders <= 0 means SVI_SEQUENTIAL_MAX_ORDERS (5040 = 7!, so every order up to 7 contacts).
 * v_out (max_out x nv) receives the distinct terminated outcomes, deduplicated by v+ at 1e-7 of
 * the contact-speed scale; *count = their number (may exceed max_out).  Orders that hit
 * max_rounds, or whose outcome fails svi_impact_check_outcome, are counted, not stored. */
#define SVI_SEQUENTIAL_MAX_ORDERS 5040
typedef struct {
  long long orders;         /* orders run */
  long long unterminated;   /* hit max_rounds (SVI_ERR_MAXITER) */
  long long rejected;       /* outcome failed the checks (SVI_ERR_REJECTED) */
  long long failed;         /* an LCP failed */
  int       exhaustive;     /* 1: all nc! orders ran; 0: a seeded sample of max_orders */
} svi_sequential_stats;
int svi_law_sequential_all(svi_impact* s, int max_rounds, long long max_orders, uint64_t seed,
                           double* v_out, int max_out, int* count, svi_sequential_stats* stats);

/* The total contact impulse lambda_bar = [lambda_n; lambda_D] (nc (1 + nd) values, N s) of the
 * last svi_routh_sample, svi_law_simultaneous or svi_law_sequential call on s. */
void svi_impact_last_impulse(const svi_impact* s, double* lambda);

/* ---------------------------------------------------------------------------------------------
 * Outcome classes: per contact one letter, 'L' lift-off (J_n v > tol), 'S' stick (|J_t v| <=
 * tol), 'D' slide; e.g. "SL" = contact 0 sticks, contact 1 lifts: pivot about contact 0.
 * buf must hold nc+1 chars.  tol = svi_impact_sep_tol * 10.
 */
void svi_classify(const svi_impact* s, const double* v, char* buf);

/* ---------------------------------------------------------------------------------------------
 * Exact planar reference problems of the paper (Appendix A and Section 4.3).
 */
#define SVI_EX_MAX_NV 9
#define SVI_EX_MAX_NC 5

typedef struct {
  const char* name;        /* "rocking_block", "box_wall", "compass_gait", "disk_stack",
                              "zeno_block", "ramone" */
  const char* title;
  int    nv, nc, nt;
  double M[SVI_EX_MAX_NV * SVI_EX_MAX_NV];
  double Jn[SVI_EX_MAX_NC * SVI_EX_MAX_NV];
  double Jt[SVI_EX_MAX_NC * SVI_EX_MAX_NV];
  double mu[SVI_EX_MAX_NC];
  double v[SVI_EX_MAX_NV];
  double h;                /* paper's Routh step, N s */
  int    N;                /* paper's trajectory length */
  long long samples;       /* paper's trajectory set size M */
  const char* contact_names[SVI_EX_MAX_NC];   /* "A", "B", ... as in the paper's figures */
  int    plot_a, plot_b;   /* contact indices for the paper's normal-velocity figure axes */
} svi_example;

int  svi_example_count(void);
const char* svi_example_name(int i);
/* fills ex from its name; SVI_ERR_ARG if unknown */
int  svi_example_get(const char* name, svi_example* ex);
svi_problem_def svi_example_problem(const svi_example* ex);

/* ---------------------------------------------------------------------------------------------
 * Restitution: the propagative law (Seghete & Murphey, "A propagative model of simultaneous
 * impact", arXiv:1709.02296; equation numbers are that paper's; docs/theory.md section 8).
 *
 * Frictionless.  Every contact of the problem is a closed contact (phi = 0): the approaching
 * ones (J_n v < -tol) and the resting or separating ones, through which impulses propagate (the
 * middle balls of Newton's cradle).  The elastic outcome v_e resolves one single-contact elastic
 * impact at a time -- a reflection in the kinetic-energy metric, eq. (7) -- on a contact that is
 * still approaching, until none is, eq. (14).  The order of resolution is free, and the law is
 * set-valued through it.  With restitution e the outcome is
 *     v+ = v_p + e (v_e - v_p)                       eq. (17) with alpha = e (erratum, not (1-R^2)^1/2)
 * where v_p is the frictionless plastic outcome (eq. 11, solved as the LCP
 * 0 <= lambda _|_ J_n v- + A lambda >= 0, A = J_n M^-1 J_n^T).
 *
 * Friction: only the normal rows J_n are used; J_t and mu are ignored.  The law applies no
 * friction impulse: tangential contact velocities change only through the coupling
 * J_t M^-1 J_n^T lambda_n.  Friction is left to whatever runs after the impact (in the plugin,
 * MuJoCo's solver in the same step).
 *
 * Input is an svi_impact after svi_impact_setup (as for the other laws).  The law does not write
 * to it; svi_impact_last_impulse does not report this law's impulse (use lambda_n below).
 */
typedef enum {
  SVI_ORDER_RANDOM         = 0,  /* uniform among the approaching contacts, from the seed */
  SVI_ORDER_MOST_VIOLATED  = 1,  /* argmin_i J_n,i v / sqrt(A_ii) (the paper's TREX rule); ties: lowest i */
  SVI_ORDER_LEAST_VIOLATED = 2   /* argmax of the same among the approaching contacts */
} svi_order;

typedef struct {
  double    restitution;       /* e in [0, 1]: 1 elastic (energy conserved), 0 plastic; default 1 */
  svi_order order;             /* resolution order of svi_propagative_outcome; default RANDOM */
  uint64_t  seed;              /* default 1 */
  int       max_reflections;   /* cap on the reflections of one outcome; default 10000 */
  int       max_retries;       /* RANDOM: further orders tried after a capped or invalid one; default 3 */
  double    tol;               /* approaching: J_n,i v < -tol s, s = max_i (-J_n,i v-)^+; default 1e-9 */
  double    valid_tol;         /* an outcome is valid iff J_n v+ >= -valid_tol s, KE(v+) <= KE(v-)(1+1e-9),
                                  lambda_n >= 0 and all finite; default 1e-6.  Both tolerances are
                                  at least 1e-12 max_i ||J_n,i||_{M^-1} ||v-||_M (round-off).  With
                                  tol > valid_tol, contacts left approaching between them are
                                  rejected, not accepted */
  /* svi_propagative_all */
  int       enum_max_contacts; /* exhaustive branching over all orders when nc <= this (<= 16); default 8 */
  long long enum_budget;       /* ... within this many reflections in total; default 2^20 */
  long long samples;           /* orders drawn (outcomes k = 0..samples-1) when the branching is not
                                  exhaustive; default 4096 */
} svi_propagative_config;

svi_propagative_config svi_propagative_default_config(void);

typedef struct {
  int    status;       /* as returned */
  int    reflections;  /* length of the returned outcome's sequence (0 if e = 0 or fallback) */
  int    attempts;     /* orders tried */
  int    rejected;     /* orders that hit max_reflections or failed the validity check */
  int    fallback;     /* 0 propagative outcome; 1 plastic outcome returned; 2 v- returned */
  int    locked;       /* 1: the normals admit no nonzero feasible normal motion (J_n^T y = 0 for
                          some y > 0), so no elastic outcome exists; checked after a capped order */
  double ke_before, ke_after;
  double min_vn;       /* min_i J_n,i v+ (m/s), recomputed from v+ */
  double tol;          /* the validity tolerance on J_n v+ (m/s) */
} svi_propagative_info;

typedef struct {
  int       status;
  int       count;        /* distinct outcomes (the first max_out are written) */
  int       exhaustive;   /* 1: every resolution order was followed to its end: the set is exact */
  int       truncated;    /* more distinct outcomes than the workspace holds: the rest dropped */
  int       locked;       /* e > 0 and no elastic outcome exists (see svi_propagative_info): empty set */
  long long orders;       /* branches ended (exhaustive) or orders drawn (sampled) */
  long long rejected;     /* of those, capped or failing the validity check: not in the set */
  long long reflections;  /* reflections spent in total */
  int       min_length, max_length;   /* over the valid branches */
  double    xi;           /* indeterminacy of the set, max_ij ||v_i - v_j||_M / ||v-||_M */
} svi_propagative_set_info;

typedef struct svi_propagative svi_propagative;   /* workspace: sized once, no allocation per outcome */

/* set_max: distinct outcomes svi_propagative_all can hold (<= 0: 256). */
svi_propagative* svi_propagative_create(int nv_max, int nc_max, int set_max);
void             svi_propagative_destroy(svi_propagative* w);

/* Outcome number k of the stream fixed by cfg->seed: a pure function of (problem, cfg, k), like
 * svi_routh_sample (k only matters for SVI_ORDER_RANDOM).  One workspace per thread.
 * v_out (nv), lambda_n (nc normal impulses, N s; may be NULL).  Returns SVI_OK with a valid
 * outcome.  If no order tried gives a valid outcome, returns SVI_ERR_MAXITER (cap reached) or
 * SVI_ERR_RESIDUAL (validity check failed) and writes the plastic outcome (info->fallback = 1),
 * or v- if even that fails (fallback = 2): never an invalid outcome under SVI_OK. */
int svi_propagative_outcome(svi_propagative* w, const svi_impact* s,
                            const svi_propagative_config* cfg, uint64_t k, double* v_out,
                            double* lambda_n, svi_propagative_info* info);

/* The set: distinct valid outcomes over resolution orders.  Depth-first branching over every
 * approaching contact at every step when nc <= enum_max_contacts; if that cannot finish (budget
 * spent, or a branch longer than min(max_reflections, 256)) or nc is larger, the outcomes
 * k = 0..samples-1 of SVI_ORDER_RANDOM are added and info->exhaustive = 0.  Outcomes are distinct
 * when ||v_i - v_j||_M > 1e-9 ||v-||_M.  v_out: max_out x nv, lambda_n: max_out x nc (may be
 * NULL).  Returns SVI_OK if the set is not empty, else SVI_ERR_MAXITER.  info is required. */
int svi_propagative_all(svi_propagative* w, const svi_impact* s,
                        const svi_propagative_config* cfg, double* v_out, double* lambda_n,
                        int max_out, svi_propagative_set_info* info);

/* Indeterminacy of a set of post-impact velocities (paper Sec. VII-A, generalised from two
 * outcomes to the set's diameter): max_ij ||v_i - v_j||_M / ||v-||_M, v- the problem's velocity.
 * v_set: count x nv.  0 for count < 2.  O(count^2 nv^2). */
double svi_indeterminacy(const svi_impact* s, const double* v_set, int count);

/* Normalised coupling of the normals, c_ij = A_ij / sqrt(A_ii A_jj), A = J_n M^-1 J_n^T
 * (nc x nc, may be NULL).  Returns max_{i != j} |c_ij| (0 for one contact).  All c_ij = 0:
 * every order gives the same outcome (Theorem 2); two contacts with c = -1/2 too (Theorem 3). */
double svi_normal_coupling(const svi_impact* s, double* c);

#ifdef __cplusplus
}
#endif
#endif  /* SVI_CORE_H_ */
