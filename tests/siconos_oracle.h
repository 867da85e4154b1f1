/* siconos_oracle.h -- independent LCP oracle for tests and benchmarks: Siconos numerics (4.4).
 *
 * Solves  z >= 0, w = M z + q >= 0, z'w = 0  with Siconos' lexicographic Lemke (lcp_lexicolemke,
 * solver id SICONOS_LCP_LEMKE) or its enumerative solver (lcp_enum, SICONOS_LCP_ENUM).
 * M is dense, n x n, ROW-major (as everywhere in svi); it is transposed into the column-major
 * NumericsMatrix storage that Siconos expects.  Nothing here uses svi's own solver.
 *
 * Not thread-safe per object: use one svi_siconos per thread.
 */
#ifndef SVI_SICONOS_ORACLE_H_
#define SVI_SICONOS_ORACLE_H_

#ifdef __cplusplus
extern "C" {
#endif

/* Return codes besides Siconos' own info codes (lcp_lexicolemke: 1 = pivot cap reached;
 * lcp_enum: 1 = no complementary basis gave a solution). */
#define SVI_SICONOS_ERR_ARG      (-1)  /* NULL pointer or n outside 1..nmax */
#define SVI_SICONOS_BAD_SOLUTION   2   /* Siconos said info == 0 but z fails the residual check.
                                        * lcp_lexicolemke reports a secondary ray (no blocking
                                        * row) as info == 0, so this is how a ray shows up. */

/* Independent LCP oracle: Siconos numerics' lexicographic Lemke. M row-major n x n. */
typedef struct svi_siconos svi_siconos;       /* reusable solver state for n <= nmax */

/* Allocates the LinearComplementarityProblem (nmax x nmax dense storage), both SolverOptions and
 * the enumeration workspace once.  Silences Siconos (numerics_set_verbose(0)).  NULL on failure. */
svi_siconos* svi_siconos_create(int nmax);
void svi_siconos_destroy(svi_siconos* s);

/* returns 0 on success (Siconos info == 0), else the Siconos info code; z out (n); *iters (may be NULL) pivots.
 * Also returns SVI_SICONOS_ERR_ARG or SVI_SICONOS_BAD_SOLUTION (see above).  On a nonzero return z
 * holds whatever Siconos left there.  Siconos' Lemke itself still mallocs its tableau on every call
 * (n + 3 blocks); everything else is reused. */
int svi_siconos_lemke(svi_siconos* s, int n, const double* M, const double* q, double* z, int* iters);

/* the same problem by Siconos' enumeration; returns 0 if a solution found.
 * Cost 2^n LU factorisations in the worst case: keep n <= ~20.  The solution returned is the first
 * feasible complementary basis in Siconos' order (bit i of a counter set = w_i basic), which for an
 * LCP with several solutions need not be the one Lemke finds.  Feasibility tolerance:
 * 1e-9 * max(1, |q|_inf) on the basic variables.  Note: Siconos 4.4 leaks one 32-byte struct per
 * lcp_enum call (enum_init is never freed) -- suppress "leak:enum_init" under LeakSanitizer. */
int svi_siconos_enum(svi_siconos* s, int n, const double* M, const double* q, double* z);

/* Residual check after a Siconos "success" (default on).  Off = return Siconos' info untouched,
 * for benchmarking the bare Siconos call. */
void svi_siconos_set_check(svi_siconos* s, int on);

/* Relative residual used by the check: max_i max(|min(z_i, w_i)|, -z_i, -w_i) / s with
 * s = max(1, |q|_inf, |M|_inf |z|_inf).  The check accepts <= 1e-7. */
double svi_siconos_residual(int n, const double* M, const double* q, const double* z);

#ifdef __cplusplus
}
#endif

#endif /* SVI_SICONOS_ORACLE_H_ */
