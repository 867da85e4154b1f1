/* svi_approx.c -- Algorithm 2: approximate the post-impact set.
 *
 *   psi <- sigma_max(M^-1 Jbar^T) m (1 + max_i mu_i) + 1
 *   for i = 1..M:  v <- Sim(h, x0, N);  V+ <- V+ u { f(v, eps/(3 psi) 1) }
 *   V+ <- V+ \ C(q0)
 * The final small step terminates samples that are almost separating (Lemma 9); a sample that
 * already terminated is kept as it is (Lemma 8: f(v, .) = v is a solution of that step).  A
 * sample is kept only if svi_routh_run accepted it (svi_sample_info.accepted).
 * Threads take the index range in chunks of samples from a shared counter (a thread
 * on a slower or busier core takes fewer); sample k depends only on (seed, k) and is written to
 * slot k, and the statistics are counts and maxima, so the output is the same for any thread
 * count and any split.
 */
#define _POSIX_C_SOURCE 200809L
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "svi_internal.h"

#define SOBOL_BATCH 256
/* samples a thread takes at a time: samples / (8 threads), from 16 to 2048 (about 1 ms of the
 * rocking block's samples), so the threads end within about a chunk, an eighth of a thread's
 * share at most, of each other (a chunk starts a batch of Sobol budgets) */
#define APPROX_CHUNK_MIN 16
#define APPROX_CHUNK_MAX 2048

svi_approx_config svi_approx_default_config(void) {
  svi_approx_config c;
  memset(&c, 0, sizeof(c));
  c.routh = svi_routh_default_config();
  c.routh.budget = SVI_BUDGET_SOBOL;
  c.samples = 1 << 14;
  c.eps = 0;
  c.threads = 0;
  return c;
}

int svi_sobol_fits(const svi_routh_config* r, int nc) {
  return nc * (r->max_steps > 0 ? r->max_steps : 10) <= SVI_SOBOL_MAXDIM;
}

/* The largest eigenvalue of the symmetric n x n matrix A (row-major, overwritten) by cyclic
 * Jacobi rotations (Golub & Van Loan, Algorithm 8.5.3): each rotation zeroes A_pq, the sweeps
 * stop when the off-diagonal part's square sum is below 1e-30 of the whole (at most 60 sweeps;
 * Jacobi converges quadratically, a few sweeps in practice), and the eigenvalues are then the
 * diagonal to that accuracy. */
static double sym_max_eigenvalue(int n, double* A) {
  for (int sweep = 0; sweep < 60; sweep++) {
    double off = 0, all = 0;
    for (int i = 0; i < n; i++)
      for (int j = 0; j < n; j++) {
        double a = A[i * n + j] * A[i * n + j];
        all += a;
        if (i != j) off += a;
      }
    if (!(off > 1e-30 * all)) break;   /* also on a NaN: the caller's check rejects it */
    for (int p = 0; p < n; p++)
      for (int q = p + 1; q < n; q++) {
        double apq = A[p * n + q];
        if (apq == 0) continue;
        double c, sn;
        svi_jacobi_rotation(A[p * n + p], A[q * n + q], apq, &c, &sn);
        for (int k = 0; k < n; k++) {   /* A <- A J (columns p, q) */
          double akp = A[k * n + p], akq = A[k * n + q];
          A[k * n + p] = c * akp - sn * akq;
          A[k * n + q] = sn * akp + c * akq;
        }
        for (int k = 0; k < n; k++) {   /* A <- J^T A (rows p, q) */
          double apk = A[p * n + k], aqk = A[q * n + k];
          A[p * n + k] = c * apk - sn * aqk;
          A[q * n + k] = sn * apk + c * aqk;
        }
      }
  }
  double m = -INFINITY;
  for (int i = 0; i < n; i++) m = fmax(m, A[i * n + i]);
  return m;
}

/* sigma_max(G) from the largest eigenvalue of G G^T (nv x nv) */
static double sigma_max_G(const svi_impact* s) {
  int nv = s->nv, nb = s->nb;
  double* A = malloc(sizeof(double) * nv * nv);
  double r = 0;
  if (A) {
    for (int i = 0; i < nv; i++)
      for (int j = 0; j < nv; j++) {
        double t = 0;
        for (int k = 0; k < nb; k++) t += s->G[i * nb + k] * s->G[j * nb + k];
        A[i * nv + j] = t;
      }
    r = sqrt(fmax(sym_max_eigenvalue(nv, A), 0));
  }
  free(A);
  return r;
}

typedef struct {
  const svi_problem_def* def;
  const svi_approx_config* cfg;
  const svi_sobol* sobol;
  double extra;
  long long samples, chunk;
  _Atomic long long* next;   /* the first sample no thread has taken */
  double* v_out;
  unsigned char* accepted;
  int* lcps;
  svi_approx_stats st;   /* partial sums of this thread */
  int status;
} job;

static void* run_job(void* arg) {
  job* jb = arg;
  const svi_problem_def* def = jb->def;
  svi_impact* s = svi_impact_create(def->nv, def->nc, def->nt);
  if (!s) { jb->status = SVI_ERR_NOMEM; return NULL; }
  jb->status = svi_impact_setup(s, def, NULL, 0);
  if (jb->status != SVI_OK) { svi_impact_destroy(s); return NULL; }
  /* the Sobol budgets of a batch of consecutive samples at once (incrementally: the same values
   * as svi_sobol_point, so the set does not depend on the batch or the thread split) */
  const svi_sobol* so = jb->sobol;
  uint32_t* rows = so ? malloc(sizeof(uint32_t) * (size_t)SOBOL_BATCH * so->dim) : NULL;
  if (so && !rows) { jb->status = SVI_ERR_NOMEM; svi_impact_destroy(s); return NULL; }
  /* the partial sums on this thread's stack, stored once at the end: the jobs lie side by side in
   * svi_approximate's array (208 bytes each), so a store a sample into jb->st can write the cache
   * line that holds the next job's first fields, which its thread reloads every sample (the byte
   * store into jb->accepted may alias them) */
  svi_approx_stats acc = jb->st;
  for (;;) {
    long long k0 = atomic_fetch_add_explicit(jb->next, jb->chunk, memory_order_relaxed);
    if (k0 >= jb->samples) break;
    long long k1 = jb->samples - k0 < jb->chunk ? jb->samples : k0 + jb->chunk;
    for (long long k = k0; k < k1; k++) {
      svi_sample_info info;
      double* v = jb->v_out + k * def->nv;
      if (rows) {
        long long b = (k - k0) % SOBOL_BATCH;
        if (b == 0) {
          long long cnt = k1 - k < SOBOL_BATCH ? k1 - k : SOBOL_BATCH;
          svi_sobol_points(so, (uint64_t)k, (int)cnt, rows);
        }
        s->sobol_row = rows + (size_t)b * so->dim;
      }
      svi_routh_run(s, &jb->cfg->routh, jb->sobol, (uint64_t)k, 0, jb->extra, v, &info, NULL, 0, NULL);
      /* kept in the set: terminated, every LCP valid in physical units, outcome checks passed
       * (svi_routh_run re-ran the sample if they failed); C(q0) removal = still colliding */
      int ok = info.accepted;
      if (jb->accepted) jb->accepted[k] = (unsigned char)ok;
      if (jb->lcps) jb->lcps[k] = info.lcps;
      acc.accepted += ok;
      acc.failed += info.status != SVI_OK && info.status != SVI_ERR_REJECTED;
      acc.rejected += info.status == SVI_ERR_REJECTED;
      acc.colliding += info.status == SVI_OK && !ok;
      acc.lcps += info.lcps;
      acc.lcp_rejects += info.lcp_rejects;
      acc.step_retries += info.step_retries;
      acc.sample_retries += info.sample_retries;
      acc.max_residual = fmax(acc.max_residual, info.residual);
      if (info.ke_before > 0)
        acc.max_energy_ratio = fmax(acc.max_energy_ratio, info.ke_after / info.ke_before);
    }
  }
  jb->st = acc;
  free(rows);
  svi_impact_destroy(s);
  return NULL;
}

int svi_approximate(const svi_problem_def* def, const svi_approx_config* cfg, double* v_out,
                    unsigned char* accepted, int* lcps_per_sample, svi_approx_stats* stats) {
  if (!def || !cfg || !v_out || cfg->samples <= 0) return SVI_ERR_ARG;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);

  svi_impact* s = svi_impact_create(def->nv, def->nc, def->nt);
  if (!s) return SVI_ERR_NOMEM;
  int st = svi_impact_setup(s, def, NULL, 0);
  if (st != SVI_OK) { svi_impact_destroy(s); return st; }
  double psi = sigma_max_G(s) * s->nc * (1 + s->max_mu) + 1;
  double eps = cfg->eps > 0 ? cfg->eps : 1e-2 * fmax(s->vscale, 1e-12);
  double h = svi_routh_h(s, &cfg->routh);
  svi_impact_destroy(s);

  int N = cfg->routh.max_steps > 0 ? cfg->routh.max_steps : 10;
  svi_sobol* sobol = NULL;
  if (cfg->routh.budget == SVI_BUDGET_SOBOL) {
    if (!svi_sobol_fits(&cfg->routh, def->nc)) return SVI_ERR_CAPACITY;
    sobol = malloc(sizeof(*sobol));
    if (!sobol) return SVI_ERR_NOMEM;
    svi_sobol_init(sobol, def->nc * N, cfg->routh.seed);
  }

  int nthr = cfg->threads > 0 ? cfg->threads : (int)sysconf(_SC_NPROCESSORS_ONLN);
  if (nthr < 1) nthr = 1;
  if (nthr > 64) nthr = 64;
  if (nthr > cfg->samples) nthr = (int)cfg->samples;
  job jobs[64];
  pthread_t tid[64];
  _Atomic long long next = 0;
  long long chunk = cfg->samples / (8 * nthr);
  chunk = chunk < APPROX_CHUNK_MIN ? APPROX_CHUNK_MIN : chunk > APPROX_CHUNK_MAX ? APPROX_CHUNK_MAX : chunk;
  for (int t = 0; t < nthr; t++) {
    memset(&jobs[t], 0, sizeof(job));
    jobs[t] = (job){def, cfg, sobol, eps / (3 * psi), cfg->samples, chunk, &next, v_out, accepted,
                    lcps_per_sample, {0}, 0};
  }
  int started = 0;
  for (int t = 1; t < nthr; t++)
    if (pthread_create(&tid[t], NULL, run_job, &jobs[t]) == 0) started = t;
    else break;
  run_job(&jobs[0]);
  for (int t = 1; t <= started; t++) pthread_join(tid[t], NULL);
  /* a thread that could not be created took no samples: the others took them all */

  svi_approx_stats out;
  memset(&out, 0, sizeof(out));
  out.samples = cfg->samples;
  out.psi = psi;
  out.eps = eps;
  out.h = h;
  st = SVI_OK;
  for (int t = 0; t < nthr; t++) {
    if (jobs[t].status != SVI_OK) st = jobs[t].status;
    out.accepted += jobs[t].st.accepted;
    out.failed += jobs[t].st.failed;
    out.rejected += jobs[t].st.rejected;
    out.colliding += jobs[t].st.colliding;
    out.lcp_rejects += jobs[t].st.lcp_rejects;
    out.step_retries += jobs[t].st.step_retries;
    out.sample_retries += jobs[t].st.sample_retries;
    out.lcps += jobs[t].st.lcps;
    out.max_residual = fmax(out.max_residual, jobs[t].st.max_residual);
    out.max_energy_ratio = fmax(out.max_energy_ratio, jobs[t].st.max_energy_ratio);
  }
  free(sobol);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  out.wall_seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
  if (stats) *stats = out;
  return st;
}

int svi_approximate_groups(const svi_problem_def* def, const svi_approx_config* cfg, int ngroup,
                           const int* dof_group, const int* contact_group, const uint64_t* key,
                           double* v_out, unsigned char* accepted, int* lcps_per_sample,
                           svi_approx_stats* stats) {
  if (!def || !cfg || !v_out || cfg->samples <= 0) return SVI_ERR_ARG;
  if (ngroup <= 1 || !dof_group || !contact_group || !key) {
    svi_approx_config c = *cfg;
    if (c.routh.budget == SVI_BUDGET_SOBOL && !svi_sobol_fits(&c.routh, def->nc)) c.routh.budget = SVI_BUDGET_UNIFORM;
    return svi_approximate(def, &c, v_out, accepted, lcps_per_sample, stats);
  }
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  int nv = def->nv, nc = def->nc, nt = def->nt;
  long long S = cfg->samples;
  size_t nn = (size_t)nv;
  double* buf = malloc(sizeof(double) * ((size_t)S * nn + nn * nn + (size_t)nc * (1 + nt) * nn + nc + nn));
  int* ibuf = malloc(sizeof(int) * ((size_t)S + nn + (size_t)nc));
  unsigned char* acc = malloc((size_t)S);
  if (!buf || !ibuf || !acc) { free(buf); free(ibuf); free(acc); return SVI_ERR_NOMEM; }
  double *V = buf, *gM = V + (size_t)S * nn, *gJn = gM + nn * nn, *gJt = gJn + (size_t)nc * nn;
  double *gmu = gJt + (size_t)nc * nt * nn, *gv = gmu + nc;
  int *lc = ibuf, *vmap = lc + S, *cmap = vmap + nv;
  for (long long k = 0; k < S; k++) {
    memcpy(v_out + k * nv, def->v, sizeof(double) * nn);
    if (accepted) accepted[k] = 1;
    if (lcps_per_sample) lcps_per_sample[k] = 0;
  }
  svi_approx_stats out;
  memset(&out, 0, sizeof(out));
  out.samples = S;
  int st = SVI_OK;
  unsigned char* all = accepted;
  if (!all) {   /* the whole samples' flags for the count */
    all = malloc((size_t)S);
    if (!all) { free(buf); free(ibuf); free(acc); return SVI_ERR_NOMEM; }
    memset(all, 1, (size_t)S);
  }
  for (int g = 0; g < ngroup && st >= 0; g++) {
    svi_problem_def gd = svi_problem_group(def, dof_group, contact_group, g, vmap, cmap, gM, gJn, gJt, gmu, gv);
    int n = gd.nv, m = gd.nc;
    if (m == 0) continue;
    svi_approx_config gc = *cfg;
    gc.routh.seed = svi_rng_u64(cfg->routh.seed, SVI_STREAM_GROUP, key[g]);
    if (gc.routh.budget == SVI_BUDGET_SOBOL && !svi_sobol_fits(&gc.routh, m)) gc.routh.budget = SVI_BUDGET_UNIFORM;
    svi_approx_stats gs;
    st = svi_approximate(&gd, &gc, V, acc, lc, &gs);
    if (st < 0) break;
    for (long long k = 0; k < S; k++) {
      for (int a = 0; a < n; a++) v_out[k * nv + vmap[a]] = V[k * n + a];
      all[k] &= acc[k];
      if (lcps_per_sample) lcps_per_sample[k] += lc[k];
    }
    out.finished_by_ap += gs.finished_by_ap;
    out.failed += gs.failed;
    out.lcps += gs.lcps;
    out.colliding += gs.colliding;
    out.rejected += gs.rejected;
    out.lcp_rejects += gs.lcp_rejects;
    out.step_retries += gs.step_retries;
    out.sample_retries += gs.sample_retries;
    if (gs.h > out.h) { out.h = gs.h; out.eps = gs.eps; out.psi = gs.psi; }
    out.max_residual = fmax(out.max_residual, gs.max_residual);
    out.max_energy_ratio = fmax(out.max_energy_ratio, gs.max_energy_ratio);
  }
  for (long long k = 0; k < S; k++) out.accepted += all[k];
  if (!accepted) free(all);
  free(buf);
  free(ibuf);
  free(acc);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  out.wall_seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
  if (stats) *stats = out;
  return st;
}

svi_problem_def svi_problem_group(const svi_problem_def* def, const int* dof_group, const int* contact_group,
                                  int g, int* dofs, int* contacts, double* M, double* Jn, double* Jt,
                                  double* mu, double* v) {
  int nv = def->nv, nt = def->nt, n = 0, m = 0;
  for (int j = 0; j < nv; j++) if (dof_group[j] == g) dofs[n++] = j;
  for (int k = 0; k < def->nc; k++) if (contact_group[k] == g) contacts[m++] = k;
  for (int a = 0; a < n; a++) {
    v[a] = def->v[dofs[a]];
    for (int b = 0; b < n; b++) M[(size_t)a * n + b] = def->M[(size_t)dofs[a] * nv + dofs[b]];
  }
  for (int i = 0; i < m; i++) {
    mu[i] = def->mu[contacts[i]];
    for (int a = 0; a < n; a++) Jn[(size_t)i * n + a] = def->Jn[(size_t)contacts[i] * nv + dofs[a]];
    for (int t = 0; t < nt; t++)
      for (int a = 0; a < n; a++)
        Jt[(size_t)(i * nt + t) * n + a] = def->Jt[(size_t)(contacts[i] * nt + t) * nv + dofs[a]];
  }
  svi_problem_def out = {n, m, nt, M, Jn, Jt, mu, v};
  return out;
}
