/* test_property.c -- the outcome invariants on random impact problems of every shape.
 *
 * Rigid bodies (planar: 3 DOF, one tangent; spatial: 6 DOF, the four-sided pyramid) with masses
 * spread over six decades, contacts against the ground or between two bodies, up to 8 contacts
 * on one body (boxes against a floor and a wall: redundant rows), mu up to 5, every branch rule
 * and budget mode.  Every sample's returned velocity is checked here, from the problem data,
 * not from the core's own bookkeeping:
 *   accepted  =>  K(v+) <= K(v-) (1 + 1e-9),  J_n v+ >= -1e-6 v_app,  finite
 *   status OK =>  the same (fallback outcomes too)
 *   always    =>  finite, and K(v+) <= K(v-) (1 + 1e-9) (a rejected sample returns v-)
 * Every problem runs the default paths (the precomputed mode rows, the revised dense Lemke); every
 * other block of 8 problems has its LCPs solved by the low-rank Lemke (svi_lowrank.c) instead,
 * forced whatever the problem's size, and every other block of 16 of the rest runs the plugin's
 * per-step solve (svi_impact_set_step_solve: each enumerated pattern solved at its step, no
 * per-event maps).  test_stacks runs 10^5 stacks through the dense Lemke, an eighth of them with
 * its paths handed over to the low-rank Lemke early (svi_impact_set_handover).
 *
 *   test_property [problems]      default 100000; SVI_TEST_SCALE scales it (0.1 under ASan)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "svi/svi_core.h"
#include "svi_internal.h"
#include "svi_test.h"

#define P_MAX_NV 12
#define P_MAX_NC 8
/* the stacks of test_stacks: up to 4 bodies and 32 contacts */
#define Q_MAX_NB 4
#define Q_MAX_NV (6 * Q_MAX_NB)
#define Q_MAX_NC 32

typedef struct {
  int nv, nc, nt, nb;            /* nb bodies, 3 or 6 DOF each */
  double M[Q_MAX_NV * Q_MAX_NV], Jn[Q_MAX_NC * Q_MAX_NV], Jt[2 * Q_MAX_NC * Q_MAX_NV];
  double mu[Q_MAX_NC], v[Q_MAX_NV];
  double com[Q_MAX_NB][3], half[Q_MAX_NB][3], R[Q_MAX_NB][9];
} prob;

static double U(uint64_t t, uint64_t i) { return svi_rng_uniform(2024, t, i); }

static void cross(const double* a, const double* b, double* c) {
  c[0] = a[1] * b[2] - a[2] * b[1];
  c[1] = a[2] * b[0] - a[0] * b[2];
  c[2] = a[0] * b[1] - a[1] * b[0];
}

static void normalise(double* a) {
  double l = sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]);
  for (int i = 0; i < 3; i++) a[i] /= l;
}

static void rotation(uint64_t t, uint64_t i, double tilt, double* R) {
  double a = tilt * (2 * U(t, i) - 1), b = tilt * (2 * U(t, i + 1) - 1), c = tilt * (2 * U(t, i + 2) - 1);
  double ca = cos(a), sa = sin(a), cb = cos(b), sb = sin(b), cc = cos(c), sc = sin(c);
  double Rz[9] = {cc, -sc, 0, sc, cc, 0, 0, 0, 1}, Ry[9] = {cb, 0, sb, 0, 1, 0, -sb, 0, cb};
  double Rx[9] = {1, 0, 0, 0, ca, -sa, 0, sa, ca}, T[9];
  for (int r = 0; r < 3; r++)
    for (int k = 0; k < 3; k++) {
      T[3 * r + k] = 0;
      for (int j = 0; j < 3; j++) T[3 * r + k] += Ry[3 * r + j] * Rx[3 * j + k];
    }
  for (int r = 0; r < 3; r++)
    for (int k = 0; k < 3; k++) {
      R[3 * r + k] = 0;
      for (int j = 0; j < 3; j++) R[3 * r + k] += Rz[3 * r + j] * T[3 * j + k];
    }
}

/* body b: mass 10^[-3, 3], half extents 0.05..1, orientation; planar bodies live in the x-z
 * plane with DOF (x, z, rotation about y) */
static void add_body(prob* p, int b, uint64_t t, double tilt) {
  int dof = p->nt == 2 ? 6 : 3, o = b * dof;
  double m = pow(10, 6 * U(t, 10 + b) - 3);
  for (int i = 0; i < 3; i++) p->half[b][i] = 0.05 + 0.95 * U(t, 20 + 3 * b + i);
  for (int i = 0; i < 3; i++) p->com[b][i] = b == 0 ? 0 : (i == 2 ? p->half[0][2] + p->half[1][2] : 0.3 * (2 * U(t, 26 + i) - 1));
  rotation(t, 30 + 3 * (uint64_t)b, tilt, p->R[b]);
  if (p->nt == 1) {   /* planar: keep the rotation about y only */
    double th = tilt * (2 * U(t, 40 + b) - 1);
    double R[9] = {cos(th), 0, sin(th), 0, 1, 0, -sin(th), 0, cos(th)};
    memcpy(p->R[b], R, sizeof(R));
  }
  const double* h = p->half[b];
  double I[3] = {m * (h[1] * h[1] + h[2] * h[2]) / 3, m * (h[0] * h[0] + h[2] * h[2]) / 3,
                 m * (h[0] * h[0] + h[1] * h[1]) / 3};
  if (p->nt == 2) {
    for (int i = 0; i < 3; i++) p->M[(o + i) * p->nv + o + i] = m;
    for (int i = 0; i < 3; i++)
      for (int j = 0; j < 3; j++) {
        double s = 0;
        for (int k = 0; k < 3; k++) s += p->R[b][3 * i + k] * I[k] * p->R[b][3 * j + k];
        p->M[(o + 3 + i) * p->nv + o + 3 + j] = s;
      }
  } else {
    p->M[o * p->nv + o] = p->M[(o + 1) * p->nv + o + 1] = m;
    p->M[(o + 2) * p->nv + o + 2] = I[1];
  }
}

/* the row of body b's point at world position x along d, added with sign sg */
static void add_row(const prob* p, int b, const double* x, const double* d, double sg, double* J) {
  int dof = p->nt == 2 ? 6 : 3, o = b * dof;
  double r[3], rd[3];
  for (int i = 0; i < 3; i++) r[i] = x[i] - p->com[b][i];
  cross(r, d, rd);
  if (p->nt == 2) {
    for (int i = 0; i < 3; i++) { J[o + i] += sg * d[i]; J[o + 3 + i] += sg * rd[i]; }
  } else {   /* (x, z, theta_y) */
    J[o] += sg * d[0];
    J[o + 1] += sg * d[2];
    J[o + 2] += sg * rd[1];
  }
}

/* contact at world point x with unit normal n (pointing into body b2, from b1; b1 = -1 is the
 * ground) */
static void add_contact(prob* p, int b1, int b2, const double* x, const double* n, double mu) {
  int k = p->nc++, nv = p->nv;
  double a[3] = {1, 0, 0}, t1[3], t2[3];
  if (p->nt == 1) { t1[0] = n[2]; t1[1] = 0; t1[2] = -n[0]; normalise(t1); }
  else {
    if (fabs(n[0]) > 0.9) { a[0] = 0; a[1] = 1; }
    cross(a, n, t2);
    normalise(t2);
    cross(t2, n, t1);
  }
  double* jn = p->Jn + k * nv;
  add_row(p, b2, x, n, 1, jn);
  if (b1 >= 0) add_row(p, b1, x, n, -1, jn);
  double* jt = p->Jt + (size_t)k * p->nt * nv;
  add_row(p, b2, x, t1, 1, jt);
  if (b1 >= 0) add_row(p, b1, x, t1, -1, jt);
  if (p->nt == 2) {
    add_row(p, b2, x, t2, 1, jt + nv);
    if (b1 >= 0) add_row(p, b1, x, t2, -1, jt + nv);
  }
  p->mu[k] = mu;
}

static void corner(const prob* p, int b, int sx, int sy, int sz, double* x) {
  double q[3] = {sx * p->half[b][0], sy * p->half[b][1], sz * p->half[b][2]};
  for (int i = 0; i < 3; i++) x[i] = p->com[b][i] + p->R[b][3 * i] * q[0] + p->R[b][3 * i + 1] * q[1] + p->R[b][3 * i + 2] * q[2];
}

static double friction(uint64_t t, int k) { return U(t, 300 + k) < 0.1 ? 0 : 5 * U(t, 320 + k); }

/* v moved along contact k's normal row so that the contact approaches at 0.1 .. 1.1 (in its own
 * row's metric); 0 if the row is zero */
static int approach_contact(prob* p, int k, uint64_t t) {
  const double* jn = p->Jn + (size_t)k * p->nv;
  double vn = 0, jj = 0;
  for (int i = 0; i < p->nv; i++) { vn += jn[i] * p->v[i]; jj += jn[i] * jn[i]; }
  if (!(jj > 0)) return 0;
  double target = -(0.1 + U(t, 700));
  for (int i = 0; i < p->nv; i++) p->v[i] += (target - vn) * jn[i] / jj;
  return 1;
}

/* one random problem; returns 0 if it came out degenerate, else 1 + its shape */
static int make_problem(prob* p, uint64_t t) {
  memset(p, 0, sizeof(*p));
  p->nt = U(t, 1) < 0.6 ? 2 : 1;
  int shape = (int)(U(t, 2) * 3);   /* 0: box on floor and wall, 1: random points, 2: two bodies */
  p->nb = shape == 2 ? 2 : 1;
  p->nv = p->nb * (p->nt == 2 ? 6 : 3);
  double tilt = U(t, 3) < 0.5 ? 0.01 * U(t, 4) : 0.5 * U(t, 4);
  for (int b = 0; b < p->nb; b++) add_body(p, b, t, tilt);
  double up[3] = {0, 0, 1}, wall[3] = {-1, 0, 0};
  if (shape == 0) {   /* up to 8 corners: the bottom ones on the floor, the +x ones on a wall */
    int nf = 1 + (int)(U(t, 5) * 4), nw = (int)(U(t, 6) * 5);
    if (p->nt == 1) { nf = nf > 2 ? 2 : nf; nw = nw > 2 ? 2 : nw; }
    int fs[4][2] = {{-1, -1}, {1, -1}, {-1, 1}, {1, 1}};
    double x[3];
    for (int k = 0; k < nf; k++) {
      corner(p, 0, fs[k][0], p->nt == 1 ? 0 : fs[k][1], -1, x);
      add_contact(p, -1, 0, x, up, friction(t, p->nc));
    }
    for (int k = 0; k < nw; k++) {
      corner(p, 0, 1, p->nt == 1 ? 0 : fs[k][0], fs[k][1], x);
      add_contact(p, -1, 0, x, wall, friction(t, p->nc));
    }
  } else {   /* random surface points and normals; in shape 2 some between the bodies */
    int nc = 1 + (int)(U(t, 7) * (shape == 2 ? 6 : 8));
    for (int k = 0; k < nc; k++) {
      double n[3] = {2 * U(t, 400 + 3 * k) - 1, 2 * U(t, 401 + 3 * k) - 1, 1 + U(t, 402 + 3 * k)};
      if (p->nt == 1) n[1] = 0;
      normalise(n);
      int b2 = shape == 2 && U(t, 450 + k) < 0.5 ? 1 : 0;
      int b1 = shape == 2 && b2 == 1 && U(t, 460 + k) < 0.7 ? 0 : -1;
      double x[3];
      corner(p, b2, U(t, 470 + k) < 0.5 ? -1 : 1, U(t, 480 + k) < 0.5 ? -1 : 1, -1, x);
      for (int i = 0; i < 3; i++) x[i] += 0.2 * p->half[b2][i] * (2 * U(t, 490 + 3 * k + i) - 1);
      if (p->nt == 1) x[1] = 0;
      add_contact(p, b1, b2, x, n, friction(t, k));
    }
  }
  for (int i = 0; i < p->nv; i++) p->v[i] = 2 * U(t, 600 + i) - 1;
  return approach_contact(p, 0, t) ? 1 + shape : 0;
}

/* A stack of 2 to 4 boxes on the floor (spatial, or planar in the x-z plane), each on the one
 * below at a grid of points of its bottom face (g x g, or g points along its bottom edge), the
 * bottom one on the floor the same way: 8 to 32 contacts, step LCPs of 40 to 224 rows.  The
 * contacts of a face are redundant (rank 3 of g x g, 2 of g), the bodies' masses span six decades
 * and their tilts are mostly small: the many-contact events of piles of bodies, whose Lemke paths
 * are long (the product form rebuilt on them) and whose LCPs from 64 rows take the large problems'
 * kernels.  Returns the number of bodies, or 0 if the problem came out degenerate. */
static int make_stack(prob* p, uint64_t t) {
  memset(p, 0, sizeof(*p));
  p->nt = U(t, 1) < 0.6 ? 2 : 1;
  p->nb = 2 + (int)(U(t, 2) * 3);
  int dof = p->nt == 2 ? 6 : 3, per;
  p->nv = p->nb * dof;
  if (p->nt == 2) per = 2 + (int)(U(t, 5) * (p->nb == 2 ? 3 : p->nb == 3 ? 2 : 1));   /* g: 2-4, 2-3, 2 */
  else per = 2 + (int)(U(t, 5) * (p->nb == 2 ? 14 : 7));                              /* g: 2-15, 2-8 */
  double tilt = U(t, 3) < 0.7 ? 1e-3 * U(t, 4) : 0.2 * U(t, 4);
  for (int b = 0; b < p->nb; b++) {   /* a stream of draws for each body */
    add_body(p, b, t * 8 + (uint64_t)b + 5000000, tilt);
    for (int i = 0; i < 2; i++) p->com[b][i] = 0.2 * p->half[b][i] * (2 * U(t, 60 + 3 * (uint64_t)b + i) - 1);
    p->com[b][2] = b == 0 ? p->half[0][2] : p->com[b - 1][2] + p->half[b - 1][2] + p->half[b][2];
  }
  for (int b = 0; b < p->nb; b++) {
    double n[3] = {0, 0, 1};
    if (b > 0)   /* the lower box's top face normal */
      for (int i = 0; i < 3; i++) n[i] = p->R[b - 1][3 * i + 2];
    for (int gx = 0; gx < per; gx++)
      for (int gy = 0; gy < (p->nt == 2 ? per : 1); gy++) {
        double f[3] = {per > 1 ? 2.0 * gx / (per - 1) - 1 : 0, p->nt == 2 && per > 1 ? 2.0 * gy / (per - 1) - 1 : 0, -1}, x[3];
        for (int i = 0; i < 3; i++) {
          x[i] = p->com[b][i];
          for (int k = 0; k < 3; k++) x[i] += p->R[b][3 * i + k] * f[k] * p->half[b][k];
        }
        if (p->nt == 1) x[1] = 0;
        add_contact(p, b - 1, b, x, n, U(t, 1000 + (uint64_t)p->nc) < 0.1 ? 0 : 5 * U(t, 1100 + (uint64_t)p->nc));
      }
  }
  for (int i = 0; i < p->nv; i++) p->v[i] = 2 * U(t, 600 + (uint64_t)i) - 1;
  /* the top box's first contact approaches */
  return approach_contact(p, p->nc - (p->nt == 2 ? per * per : per), t) ? p->nb : 0;
}

static double kinetic(const prob* p, const double* v) {
  double k = 0;
  for (int i = 0; i < p->nv; i++)
    for (int j = 0; j < p->nv; j++) k += v[i] * p->M[i * p->nv + j] * v[j];
  return 0.5 * k;
}

static double min_normal(const prob* p, const double* v) {
  double m = INFINITY;
  for (int c = 0; c < p->nc; c++) {
    double s = 0;
    for (int k = 0; k < p->nv; k++) s += p->Jn[c * p->nv + k] * v[k];
    m = fmin(m, s);
  }
  return m;
}

/* The invariants of the file's header over a run's samples, checked from the problem data */
typedef struct {
  long long samples, accepted, ok, rejected, failed, ap;
  long long gain, approaching, gain_ok, approaching_ok, gain_any, nonfinite;
  double worst_gain;
} tally;

/* sample v of problem p (returned with status st and info), its kinetic energy before ke0 and its
 * approach speed vapp */
static void tally_sample(tally* y, const prob* p, const double* v, int st, const svi_sample_info* info, double ke0,
                         double vapp) {
  y->samples++;
  int finite = 1;
  for (int i = 0; i < p->nv; i++) finite &= isfinite(v[i]) != 0;
  double ke = kinetic(p, v), vn = min_normal(p, v);
  int gains = !(ke <= ke0 * (1 + 1e-9)), approach = !(vn >= -1e-6 * vapp);
  y->nonfinite += !finite;
  y->gain_any += gains;
  if (gains && ke0 > 0) y->worst_gain = fmax(y->worst_gain, ke / ke0);
  y->accepted += info->accepted;
  y->ok += st == SVI_OK;
  y->rejected += st == SVI_ERR_REJECTED;
  y->failed += st < 0 && st != SVI_ERR_REJECTED;
  y->ap += info->finish == SVI_FINISH_AP;
  if (info->accepted) { y->gain += gains; y->approaching += approach; }
  if (st == SVI_OK) { y->gain_ok += gains; y->approaching_ok += approach; }
}

/* the tally printed under name and the invariants checked on it */
static void tally_check(const tally* y, const char* name) {
  printf("%s: accepted %lld, status ok %lld (finished by (31) %lld), rejected %lld, failed %lld\n", name, y->accepted,
         y->ok, y->ap, y->rejected, y->failed);
  printf("%s: accepted with energy gain %lld, approaching %lld; status ok with gain %lld, approaching %lld; any "
         "returned velocity with gain %lld (worst %g); non-finite %lld\n",
         name, y->gain, y->approaching, y->gain_ok, y->approaching_ok, y->gain_any, y->worst_gain, y->nonfinite);
  CHECK(y->gain == 0, "%s: %lld accepted samples gained energy", name, y->gain);
  CHECK(y->approaching == 0, "%s: %lld accepted samples left a contact approaching", name, y->approaching);
  CHECK(y->nonfinite == 0, "%s: %lld samples returned non-finite velocities", name, y->nonfinite);
  CHECK(y->gain_ok == 0 && y->approaching_ok == 0, "%s: status-ok samples: %lld gain, %lld approaching", name,
        y->gain_ok, y->approaching_ok);
  CHECK(y->gain_any == 0, "%s: %lld returned velocities gained energy", name, y->gain_any);
}

/* The reported failure: a box driven into a wall with mu = 2 and 8 contacts (its bottom corners
 * on the floor, its +x corners on the wall), slightly tilted so that the corner rows are
 * redundant but not exactly so.  Friction loops between floor and wall admit LCP solutions with
 * impulses of 1e14 and more; before the physical residual, a few samples in a thousand came out
 * accepted with up to 450 times the pre-impact energy. */
static void test_box_into_wall(int problems, int samples) {
  long long acc = 0, gain = 0, approach = 0, rejected = 0, total = 0, retries = 0;
  svi_impact* s = svi_impact_create(6, 8, 2);
  for (int nt = 1; nt <= 2; nt++)
    for (int t = 0; t < problems; t++) {
      prob p;
      memset(&p, 0, sizeof(p));
      p.nt = 2;   /* a 3-D box; nt = 1 keeps one tangent per contact */
      p.nb = 1;
      p.nv = 6;
      uint64_t tt = (uint64_t)t + 900000;
      add_body(&p, 0, tt, 0.005);
      double up[3] = {0, 0, 1}, wall[3] = {-1, 0, 0}, x[3];
      int fs[4][2] = {{-1, -1}, {1, -1}, {-1, 1}, {1, 1}};
      for (int k = 0; k < 4; k++) { corner(&p, 0, fs[k][0], fs[k][1], -1, x); add_contact(&p, -1, 0, x, up, 2.0); }
      for (int k = 0; k < 4; k++) { corner(&p, 0, 1, fs[k][0], fs[k][1], x); add_contact(&p, -1, 0, x, wall, 2.0); }
      if (nt == 1)   /* drop the second tangent row of each contact */
        for (int k = 0; k < p.nc; k++) memmove(p.Jt + k * 6, p.Jt + k * 12, sizeof(double) * 6);
      p.nt = nt;
      p.v[0] = 0.2 + U(tt, 1);   /* into the wall, down, spinning */
      p.v[1] = 0.3 * (2 * U(tt, 2) - 1);
      p.v[2] = -(0.2 + U(tt, 3));
      for (int i = 3; i < 6; i++) p.v[i] = 2 * (2 * U(tt, 4 + i) - 1);
      svi_problem_def def = {6, 8, nt, p.M, p.Jn, p.Jt, p.mu, p.v};
      if (svi_impact_setup(s, &def, NULL, 0) != SVI_OK) continue;
      double ke0 = kinetic(&p, p.v), vapp = svi_impact_approach_speed(s);
      svi_routh_config c = svi_routh_default_config();
      c.branch = SVI_BRANCH_LEMKE;   /* the rule AUTO ran here before the fix */
      c.seed = (uint64_t)t;
      for (int k = 0; k < samples; k++) {
        double v[6];
        svi_sample_info info;
        int st = svi_routh_sample(s, &c, NULL, (uint64_t)k, v, &info, NULL, 0, NULL);
        total++;
        acc += info.accepted;
        rejected += st == SVI_ERR_REJECTED;
        retries += info.sample_retries + info.step_retries;
        if (info.accepted && !(kinetic(&p, v) <= ke0 * (1 + 1e-9))) gain++;
        if (info.accepted && !(min_normal(&p, v) >= -1e-6 * vapp)) approach++;
      }
    }
  svi_impact_destroy(s);
  printf("box into wall (mu = 2, 8 contacts, nt = 1 and 2): %lld samples, %lld accepted, %lld rejected, "
         "%lld retries; accepted with energy gain %lld, approaching %lld\n", total, acc, rejected, retries, gain, approach);
  CHECK(gain == 0 && approach == 0, "box into wall: %lld accepted samples gain energy, %lld approach", gain, approach);
  CHECK(acc > total * 9 / 10, "box into wall: %lld of %lld accepted", acc, total);
}

/* The invariants of main's loop on make_stack's problems, one sample each, through the dense
 * revised Lemke (forced: on few bodies the low-rank Lemke would take some of them), whose paths from
 * 64 rows run the large problems' kernels and are rebuilt where they grow long.  The counts of
 * those paths and rebuilds are checked too, so that the test cannot pass without them. */
static void test_stacks(long long problems) {
  long long skipped = 0, lcps = 0, retries = 0, large_problems = 0, rows_max = 0;
  long long handed = 0, hand_problems = 0;
  tally y = {0};
  svi_impact* s0 = svi_impact_create(Q_MAX_NV, Q_MAX_NC, 2);
  svi_impact* sh = svi_impact_create(Q_MAX_NV, Q_MAX_NC, 2);   /* SVI_SOLVER_AUTO */
  svi_impact_set_solver(s0, SVI_SOLVER_DENSE);
  for (long long t = 0; t < problems; t++) {
    prob p;
    if (!make_stack(&p, (uint64_t)t)) { skipped++; continue; }
    svi_problem_def def = {p.nv, p.nc, p.nt, p.M, p.Jn, p.Jt, p.mu, p.v};
    /* every eighth problem with the dense paths handed over to the low-rank Lemke early (2 to 38
     * etas, forced; svi_impact.c's handover_neta), at about twice the instructions of the dense
     * path alone on these few bodies */
    svi_impact* s = t % 8 == 1 ? sh : s0;
    if (s == sh) svi_impact_set_handover(sh, 2 + 6 * (int)((t / 8) % 7));
    if (svi_impact_setup(s, &def, NULL, 0) != SVI_OK) { skipped++; continue; }
    long long h0 = sh->handovers;
    hand_problems += s == sh && sh->handover > 0;
    long long rows = svi_impact_lcp_rows(s);
    large_problems += rows >= SVI_PFI_LARGE_NMIN;
    rows_max = rows > rows_max ? rows : rows_max;
    double vapp = svi_impact_approach_speed(s), ke0 = kinetic(&p, p.v);
    svi_routh_config c = svi_routh_default_config();
    c.branch = (svi_branch)(t % 4);
    c.budget = (t / 4) % 4 == 3 ? SVI_BUDGET_MIXED : SVI_BUDGET_UNIFORM;
    c.step = 0.5 + 3 * U((uint64_t)t, 800);
    c.seed = (uint64_t)t;
    double v[Q_MAX_NV];
    svi_sample_info info;
    int st = svi_routh_sample(s, &c, NULL, 0, v, &info, NULL, 0, NULL);
    tally_sample(&y, &p, v, st, &info, ke0, vapp);
    lcps += info.lcps;
    retries += info.step_retries + info.sample_retries;
    handed += sh->handovers > h0;
  }
  long long paths_large, rebuilds, pl_h, rb_h;
  svi_lcp_counts(s0->lcp, &paths_large, &rebuilds);
  svi_lcp_counts(sh->lcp, &pl_h, &rb_h);
  paths_large += pl_h;
  rebuilds += rb_h;
  svi_impact_destroy(s0);
  svi_impact_destroy(sh);
  printf("stacks: %lld problems (%lld skipped), %lld with step LCPs of %d to %lld rows; %lld samples, %lld LCPs, "
         "%lld product-form paths of %d rows or more, %lld rebuilds, %lld retries; %lld problems with the handover "
         "to the low-rank Lemke forced, %lld handed over\n",
         problems, skipped, large_problems, SVI_PFI_LARGE_NMIN, rows_max, y.samples, lcps, paths_large,
         SVI_PFI_LARGE_NMIN, rebuilds, retries, hand_problems, handed);
  tally_check(&y, "stacks");
  CHECK(handed * 16 >= problems, "stacks: only %lld of %lld problems handed over to the low-rank Lemke", handed,
        problems);
  CHECK(problems - skipped >= problems * 9 / 10, "stacks: %lld of %lld problems usable", problems - skipped, problems);
  CHECK(y.accepted * 2 > y.samples, "stacks: only %lld of %lld samples accepted", y.accepted, y.samples);
  CHECK(paths_large * 2 >= large_problems, "stacks: %lld paths of %d rows or more for %lld such problems", paths_large,
        SVI_PFI_LARGE_NMIN, large_problems);
  CHECK(rebuilds * 200 >= problems, "stacks: only %lld rebuilds over %lld problems", rebuilds, problems);
  /* a wrong fast path shows first as step solutions that fail the physical residual and are solved
   * again: 1.6 % of the LCPs at 10^5 problems, 16.5 % at 2 000 with one eta of every rebuilt
   * product form 1.5x off (a scratch copy), and still no returned velocity gaining energy, since
   * every rejected solution is replaced by a valid one.  (A basic value 1 % off after each rebuild
   * went unseen, 2.6 %: the final refinement corrects it.) */
  CHECK(retries * 20 <= lcps, "stacks: %lld retries over %lld LCPs", retries, lcps);
}

int main(int argc, char** argv) {
  long long problems = argc > 1 ? atoll(argv[1]) : 100000;
  const char* e = getenv("SVI_TEST_SCALE");
  if (e && atof(e) > 0) problems = (long long)(problems * atof(e));
  test_box_into_wall((int)(problems / 1000 > 1 ? problems / 1000 : 1), 200);
  test_stacks(problems);
  const int per_problem = 2;
  long long skipped = 0;
  tally y = {0};
  long long sample_retries = 0, step_retries = 0, lcp_rejects = 0, regularized = 0, lcps = 0;
  long long by_rule[4] = {0}, spatial = 0, two_body = 0, redundant = 0;
  long long lowrank = 0, step_solved = 0, step_solved_spatial2 = 0, sd_lcps = 0, sd_retries = 0;
  svi_impact* sa = svi_impact_create(P_MAX_NV, P_MAX_NC, 2);
  svi_impact* sl = svi_impact_create(P_MAX_NV, P_MAX_NC, 2);
  svi_impact* sd = svi_impact_create(P_MAX_NV, P_MAX_NC, 2);
  svi_impact_set_solver(sl, SVI_SOLVER_LOWRANK);
  svi_impact_set_step_solve(sd, 1);
  for (long long t = 0; t < problems; t++) {
    prob p;
    int shape = make_problem(&p, (uint64_t)t) - 1;
    if (shape < 0) { skipped++; continue; }
    svi_problem_def def = {p.nv, p.nc, p.nt, p.M, p.Jn, p.Jt, p.mu, p.v};
    svi_impact* s = (t / 8) % 2 ? sl : (t / 16) % 2 ? sd : sa;
    if (svi_impact_setup(s, &def, NULL, 0) != SVI_OK) { skipped++; continue; }
    lowrank += s->lowrank;
    step_solved += s == sd;
    step_solved_spatial2 += s == sd && p.nt == 2 && p.nc <= 2;
    double vapp = svi_impact_approach_speed(s), ke0 = kinetic(&p, p.v);
    spatial += p.nt == 2;
    two_body += p.nb == 2;
    redundant += shape == 0 && p.nc >= (p.nt == 2 ? 4 : 3);   /* box corners: rank-deficient J_n */
    svi_routh_config c = svi_routh_default_config();
    c.branch = (svi_branch)(t % 4);
    c.budget = (t / 4) % 2 ? SVI_BUDGET_MIXED : SVI_BUDGET_UNIFORM;
    c.step = 0.5 + 3 * U((uint64_t)t, 800);
    c.seed = (uint64_t)t;
    for (int k = 0; k < per_problem; k++) {
      double v[P_MAX_NV];
      svi_sample_info info;
      int st = svi_routh_sample(s, &c, NULL, (uint64_t)k, v, &info, NULL, 0, NULL);
      tally_sample(&y, &p, v, st, &info, ke0, vapp);
      by_rule[t % 4]++;
      sample_retries += info.sample_retries;
      step_retries += info.step_retries;
      if (s == sd) { sd_lcps += info.lcps; sd_retries += info.step_retries + info.lcp_rejects; }
      lcp_rejects += info.lcp_rejects;
      regularized += info.regularized;
      lcps += info.lcps;
    }
  }
  svi_impact_destroy(sa);
  svi_impact_destroy(sl);
  svi_impact_destroy(sd);
  printf("property: %lld problems (%lld skipped), %lld spatial, %lld two-body, %lld redundant, %lld through the "
         "low-rank Lemke; %lld samples (lemke %lld, random %lld, enumerate %lld, auto %lld)\n",
         problems, skipped, spatial, two_body, redundant, lowrank, y.samples, by_rule[0], by_rule[1], by_rule[2],
         by_rule[3]);
  printf("property: %lld through the plugin's per-step solve (%lld of them one or two spatial contacts): "
         "%lld steps, %lld rejected by the step's residual\n",
         step_solved, step_solved_spatial2, sd_lcps, sd_retries);
  printf("property: %lld LCPs, %lld regularised, %lld LCP rejects, %lld step retries, %lld sample retries\n",
         lcps, regularized, lcp_rejects, step_retries, sample_retries);
  tally_check(&y, "property");
  CHECK(problems - skipped >= problems * 9 / 10, "%lld of %lld problems usable", problems - skipped, problems);
  CHECK(y.accepted > y.samples * 8 / 10, "only %lld of %lld samples accepted", y.accepted, y.samples);
  CHECK(lowrank * 5 >= problems * 2, "only %lld problems through the low-rank Lemke", lowrank);
  CHECK(step_solved * 6 >= problems, "only %lld problems through the per-step solve", step_solved);
  /* the per-step solve's outcomes pass the step's own residual nearly always (0.06 % rejected and
   * re-solved with fresh perturbations, 0.17 % at a tenth of the problems; a pattern test that
   * checked one contact's conditions only made it 6 %): the check catches a wrong fast path that
   * the invariants above would not see, since every rejected outcome is replaced by a valid one */
  CHECK(sd_retries * 200 <= sd_lcps, "per-step solve: %lld of %lld step outcomes rejected by the residual",
        sd_retries, sd_lcps);
  return svi_test_finish();
}
