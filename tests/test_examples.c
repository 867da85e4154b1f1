// test_examples.c -- checks of the planar reference problems in svi_examples.c.
//
// Standalone: links only svi_examples.c (and libm).  For every example: M symmetric positive
// definite (hand-written Cholesky), the pre-impact normal velocities stated in the paper / notes,
// unit normals and tangents that are perpendicular in the plane, and per-example closed forms.

#include <math.h>
#include <stdio.h>
#include <string.h>

#include <svi/svi_core.h>

static int g_pass = 0, g_fail = 0;

#define CHECK(cond, ...) do {                                           \
  if (cond) { g_pass++; }                                               \
  else { g_fail++; printf("FAIL %s:%d: ", __FILE__, __LINE__);          \
         printf(__VA_ARGS__); printf("\n"); }                           \
} while (0)

#define CHECK_NEAR(a, b, tol, what) do {                                \
  double a_ = (a), b_ = (b);                                            \
  CHECK(fabs(a_ - b_) <= (tol), "%s: %.9g vs %.9g (tol %g)", (what),    \
        a_, b_, (double)(tol));                                         \
} while (0)

static const double kPi = 3.14159265358979323846;

//---------------------------------- small linear algebra ------------------------------------------

static double dot(const double* a, const double* b, int n) {
  double s = 0;
  for (int i=0; i < n; i++) s += a[i]*b[i];
  return s;
}

// lower Cholesky factor L of the n x n matrix A (row-major); 0 if A is not positive definite
static int cholesky(double* L, const double* A, int n) {
  memset(L, 0, n*n*sizeof(double));
  for (int j=0; j < n; j++) {
    double d = A[j*n + j];
    for (int k=0; k < j; k++) d -= L[j*n + k]*L[j*n + k];
    if (!(d > 0)) return 0;
    L[j*n + j] = sqrt(d);
    for (int i=j + 1; i < n; i++) {
      double s = A[i*n + j];
      for (int k=0; k < j; k++) s -= L[i*n + k]*L[j*n + k];
      L[i*n + j] = s/L[j*n + j];
    }
  }
  return 1;
}

// x = A^-1 b from the Cholesky factor L
static void chol_solve(double* x, const double* L, const double* b, int n) {
  for (int i=0; i < n; i++) {
    double s = b[i];
    for (int k=0; k < i; k++) s -= L[i*n + k]*x[k];
    x[i] = s/L[i*n + i];
  }
  for (int i=n - 1; i >= 0; i--) {
    double s = x[i];
    for (int k=i + 1; k < n; k++) s -= L[k*n + i]*x[k];
    x[i] = s/L[i*n + i];
  }
}

//---------------------------------- generic checks ------------------------------------------------

static const double* jn_row(const svi_example* ex, int k) { return ex->Jn + k*ex->nv; }
static const double* jt_row(const svi_example* ex, int k) { return ex->Jt + k*ex->nv; }

// contact-space velocities of v
static double normal_vel(const svi_example* ex, int k) {
  return dot(jn_row(ex, k), ex->v, ex->nv);
}

static double tangent_vel(const svi_example* ex, int k) {
  return dot(jt_row(ex, k), ex->v, ex->nv);
}

static void check_common(const svi_example* ex, const char* name) {
  int nv = ex->nv, nc = ex->nc;
  CHECK(ex->name && !strcmp(ex->name, name), "%s: name field", name);
  CHECK(ex->title && ex->title[0], "%s: title", name);
  CHECK(nv > 0 && nv <= SVI_EX_MAX_NV && nc > 0 && nc <= SVI_EX_MAX_NC && ex->nt == 1,
        "%s: sizes nv=%d nc=%d nt=%d", name, nv, nc, ex->nt);
  CHECK(ex->plot_a >= 0 && ex->plot_a < nc && ex->plot_b >= 0 && ex->plot_b < nc &&
        ex->plot_a != ex->plot_b, "%s: plot axes %d %d", name, ex->plot_a, ex->plot_b);
  CHECK(ex->h > 0 && ex->N > 0 && ex->samples > 0, "%s: run settings", name);
  for (int k=0; k < nc; k++) {
    CHECK(ex->contact_names[k] && ex->contact_names[k][0], "%s: contact %d name", name, k);
    CHECK(ex->mu[k] >= 0, "%s: mu[%d]", name, k);
  }

  // symmetric
  double asym = 0, scale = 0;
  for (int i=0; i < nv; i++) {
    for (int k=0; k < nv; k++) {
      asym = fmax(asym, fabs(ex->M[i*nv + k] - ex->M[k*nv + i]));
      scale = fmax(scale, fabs(ex->M[i*nv + k]));
    }
  }
  CHECK(asym <= 1e-14*scale, "%s: M asymmetry %g", name, asym);

  // positive definite
  double L[SVI_EX_MAX_NV*SVI_EX_MAX_NV];
  CHECK(cholesky(L, ex->M, nv), "%s: M not positive definite", name);

  // normal and tangent rows are independent directions in velocity space
  for (int k=0; k < nc; k++) {
    const double* n = jn_row(ex, k);
    const double* t = jt_row(ex, k);
    double c = dot(n, t, nv)/sqrt(dot(n, n, nv)*dot(t, t, nv));
    CHECK(fabs(c) < 1 - 1e-6, "%s: contact %d Jn and Jt rows parallel (cos %g)", name, k, c);
  }

  svi_problem_def def = svi_example_problem(ex);
  CHECK(def.nv == nv && def.nc == nc && def.nt == 1 && def.M == ex->M && def.Jn == ex->Jn &&
        def.Jt == ex->Jt && def.mu == ex->mu && def.v == ex->v, "%s: problem view", name);
}

// The columns (ix, iy) of a body's base translation give the world direction of a row: a
// translation moves every point of the body alike.  So (Jn[ix], Jn[iy]) is the contact normal
// and (Jt[ix], Jt[iy]) the tangent: both unit, and perpendicular.
static void check_directions(const svi_example* ex, const char* name, int k, int ix, int iy) {
  const double* jn = jn_row(ex, k);
  const double* jt = jt_row(ex, k);
  double n[2] = {jn[ix], jn[iy]}, t[2] = {jt[ix], jt[iy]};
  CHECK_NEAR(hypot(n[0], n[1]), 1, 1e-12, name);
  CHECK_NEAR(hypot(t[0], t[1]), 1, 1e-12, name);
  CHECK(fabs(n[0]*t[0] + n[1]*t[1]) < 1e-12, "%s: contact %d tangent not perpendicular "
        "(n = %g %g, t = %g %g)", name, k, n[0], n[1], t[0], t[1]);
}

// point on the floor: normal (0, 1), tangent (+-1, 0)
static void check_floor(const svi_example* ex, const char* name, int k, int ix, int iy) {
  check_directions(ex, name, k, ix, iy);
  const double* jn = jn_row(ex, k);
  const double* jt = jt_row(ex, k);
  CHECK(jn[ix] == 0 && jn[iy] == 1 && fabs(jt[ix]) == 1 && jt[iy] == 0,
        "%s: contact %d is not a floor contact pattern", name, k);
}

static void check_normal_velocities(const svi_example* ex, const char* name,
                                    const double* expect, double tol) {
  for (int k=0; k < ex->nc; k++) {
    char what[64];
    snprintf(what, sizeof(what), "%s J_n,%s v", name, ex->contact_names[k]);
    CHECK_NEAR(normal_vel(ex, k), expect[k], tol, what);
  }
}

static int load(svi_example* ex, const char* name) {
  int rc = svi_example_get(name, ex);
  CHECK(rc == SVI_OK, "svi_example_get(%s) = %d", name, rc);
  if (rc == SVI_OK) check_common(ex, name);
  return rc == SVI_OK;
}

//---------------------------------- per example ---------------------------------------------------

static void test_rocking_block(void) {
  svi_example ex;
  if (!load(&ex, "rocking_block")) return;
  double v0 = sqrt(2*9.81*0.01);
  CHECK_NEAR(v0, 0.4429446918, 1e-9, "v0");
  const double expect[2] = {-v0, -v0};
  check_normal_velocities(&ex, "rocking_block", expect, 1e-4);
  CHECK_NEAR(normal_vel(&ex, 0), -0.4429, 1e-4, "Table 4 v0");
  for (int k=0; k < 2; k++) check_floor(&ex, "rocking_block", k, 0, 1);

  // notes 3.2: Jn = [[0,1,-0.5],[0,1,0.5]]; I = m(a^2+b^2)/12
  const double jn[6] = {0, 1, -0.5, 0, 1, 0.5};
  for (int i=0; i < 6; i++) CHECK_NEAR(ex.Jn[i], jn[i], 1e-12, "rocking_block Jn");
  CHECK_NEAR(ex.M[8], 5.0/12, 1e-15, "rocking_block I");
  CHECK(ex.mu[0] == 1 && ex.h == 0.3 && ex.N == 10 && ex.samples == 16384,
        "rocking_block Table 4 settings");
}

static void test_box_wall(void) {
  svi_example ex;
  if (!load(&ex, "box_wall")) return;
  const double expect[2] = {0, -1};
  check_normal_velocities(&ex, "box_wall", expect, 1e-4);
  check_floor(&ex, "box_wall", 0, 0, 1);
  check_directions(&ex, "box_wall", 1, 0, 1);

  // notes 3.1: Jn = [[0,1,0.405580],[-1,0,0.405580]]; tangents up to sign (0.579228 lever)
  const double jn[6] = {0, 1, 0.405580, -1, 0, 0.405580};
  for (int i=0; i < 6; i++) CHECK_NEAR(ex.Jn[i], jn[i], 1e-6, "box_wall Jn (notes 3.1)");
  const double jt_abs[6] = {1, 0, 0.579228, 0, 1, 0.579228};
  for (int i=0; i < 6; i++) CHECK_NEAR(fabs(ex.Jt[i]), jt_abs[i], 1e-6, "box_wall |Jt|");
  CHECK(ex.Jt[0]*ex.Jt[2] > 0 && ex.Jt[4]*ex.Jt[5] > 0, "box_wall Jt signs consistent");
  CHECK_NEAR(ex.M[8], 1.0/6, 1e-15, "box_wall I");
  CHECK(ex.mu[0] == 1 && ex.mu[1] == 1 && ex.h == 2 && ex.N == 5 && ex.samples == 262144,
        "box_wall Table 6 settings");
}

static void test_compass_gait(void) {
  svi_example ex;
  if (!load(&ex, "compass_gait")) return;
  const double expect[2] = {-0.48907, 0};
  check_normal_velocities(&ex, "compass_gait", expect, 1e-4);
  for (int k=0; k < 2; k++) check_floor(&ex, "compass_gait", k, 0, 1);
  CHECK(fabs(tangent_vel(&ex, 0)) < 1e-12 && fabs(tangent_vel(&ex, 1)) < 1e-12,
        "compass_gait: rigid rotation about the trailing foot leaves no slip");

  // notes 3.4 closed form, ci = cos phi_i, si = sin phi_i:
  // M = [[2,0,c1/2,c2/2], [0,2,s1/2,s2/2], [c1/2,s1/2,1/4,0], [c2/2,s2/2,0,1/4]]
  double phi = 78*kPi/180;
  double c1 = cos(-phi), s1 = sin(-phi), c2 = cos(phi), s2 = sin(phi);
  const double M[16] = {2, 0, c1/2, c2/2,  0, 2, s1/2, s2/2,
                        c1/2, s1/2, 0.25, 0,  c2/2, s2/2, 0, 0.25};
  for (int i=0; i < 16; i++) CHECK_NEAR(ex.M[i], M[i], 1e-14, "compass_gait M (notes 3.4)");
  // Jn_i = [0, 1, l sin phi_i on its own leg], Jt_i = [1, 0, l cos phi_i]
  const double jn[8] = {0, 1, s1, 0,  0, 1, 0, s2};
  const double jt[8] = {1, 0, c1, 0,  1, 0, 0, c2};
  for (int i=0; i < 8; i++) {
    CHECK_NEAR(ex.Jn[i], jn[i], 1e-14, "compass_gait Jn");
    CHECK_NEAR(ex.Jt[i], jt[i], 1e-14, "compass_gait Jt");
  }
  CHECK(ex.mu[0] == 5 && ex.h == 0.25 && ex.N == 5 && ex.samples == (1LL << 20),
        "compass_gait Table 5 settings");
}

static void test_disk_stack(void) {
  svi_example ex;
  if (!load(&ex, "disk_stack")) return;
  double r3 = sqrt(3);
  const double expect[5] = {0, 0, -r3/2, -r3/2, 0};
  check_normal_velocities(&ex, "disk_stack", expect, 1e-4);
  CHECK(ex.nv == 9 && ex.nc == 5, "disk_stack sizes");
  check_floor(&ex, "disk_stack", 0, 3, 4);           // A: floor under the left disc
  check_floor(&ex, "disk_stack", 1, 6, 7);           // B: floor under the right disc
  check_directions(&ex, "disk_stack", 2, 3, 4);      // C: top on left (left disc's columns)
  check_directions(&ex, "disk_stack", 3, 6, 7);      // D: top on right
  check_directions(&ex, "disk_stack", 4, 6, 7);      // E: left on right
  CHECK(ex.plot_a == 2 && ex.plot_b == 3, "disk_stack plots the top-bottom contacts C, D");

  // top-bottom normals are 30 deg off vertical, where the MATLAB tangent (n_y, n_x) is not
  // perpendicular to n: check_directions above rejects it
  // a rigid motion of the whole stack (rotation omega about any point p) moves no disc relative
  // to another: the disc-disc rows must vanish on it
  const double c[3][2] = {{1, 1 + r3}, {0, 1}, {2, 1}};
  const double p[2] = {0.3, -0.7}, omega = 0.9;
  double v[9];
  for (int i=0; i < 3; i++) {
    v[3*i]     = 0.25 - omega*(c[i][1] - p[1]);
    v[3*i + 1] = -0.4 + omega*(c[i][0] - p[0]);
    v[3*i + 2] = omega;
  }
  for (int k=2; k < 5; k++) {
    CHECK(fabs(dot(jn_row(&ex, k), v, 9)) < 1e-12 && fabs(dot(jt_row(&ex, k), v, 9)) < 1e-12,
          "disk_stack contact %d moves under a rigid motion of the stack", k);
  }
  CHECK(ex.mu[0] == r3 && ex.h == 1 && ex.N == 10 && ex.samples == (1LL << 20),
        "disk_stack Table 8 settings");
}

static void test_zeno_block(void) {
  svi_example ex;
  if (!load(&ex, "zeno_block")) return;
  const double expect[2] = {0, -1};
  check_normal_velocities(&ex, "zeno_block", expect, 1e-4);
  for (int k=0; k < 2; k++) check_floor(&ex, "zeno_block", k, 0, 1);
  CHECK(fabs(tangent_vel(&ex, 0)) < 1e-12, "zeno_block: A sticks before impact");
  CHECK_NEAR(fabs(ex.v[2]), 1, 1e-15, "zeno_block |omega0|");

  // eq. (66): sticking impact at B, Lambda = (J_B M^-1 J_B')^-1 (-J_B v), J_B = [Jn_B; Jt_B]
  double L[9], g[2][3], W[4];
  const double* jb[2] = {jn_row(&ex, 1), jt_row(&ex, 1)};
  CHECK(cholesky(L, ex.M, 3), "zeno_block M");
  for (int r=0; r < 2; r++) chol_solve(g[r], L, jb[r], 3);
  for (int r=0; r < 2; r++) {
    for (int s=0; s < 2; s++) W[2*r + s] = dot(jb[r], g[s], 3);
  }
  double rhs[2] = {-dot(jb[0], ex.v, 3), -dot(jb[1], ex.v, 3)};
  double det = W[0]*W[3] - W[1]*W[2];
  double lam[2] = {(W[3]*rhs[0] - W[1]*rhs[1])/det, (W[0]*rhs[1] - W[2]*rhs[0])/det};
  double vp[3];
  for (int i=0; i < 3; i++) vp[i] = ex.v[i] + g[0][i]*lam[0] + g[1][i]*lam[1];

  CHECK(lam[0] > 0 && fabs(lam[1]) <= ex.mu[1]*lam[0], "zeno_block: impulse in the cone");
  CHECK_NEAR(vp[2]/ex.v[2], 0.7, 1e-12, "zeno_block eq. (68) ratio");
  CHECK_NEAR(dot(jn_row(&ex, 1), vp, 3), 0, 1e-12, "zeno_block B at rest after");
  CHECK_NEAR(dot(jt_row(&ex, 1), vp, 3), 0, 1e-12, "zeno_block B sticks after");
  CHECK_NEAR(dot(jn_row(&ex, 0), vp, 3), 0.7, 1e-12, "zeno_block A lifts (pivot about B)");
  CHECK(ex.mu[0] == 1 && ex.h == 0.3 && ex.N == 10 && ex.samples == 16384,
        "zeno_block settings");
}

static void test_ramone(void) {
  svi_example ex;
  if (!load(&ex, "ramone")) return;
  const double expect[2] = {-0.5321, 0};
  check_normal_velocities(&ex, "ramone", expect, 1e-4);
  for (int k=0; k < 2; k++) check_floor(&ex, "ramone", k, 0, 1);
  CHECK(fabs(tangent_vel(&ex, 0)) < 1e-12 && fabs(tangent_vel(&ex, 1)) < 1e-12,
        "ramone: rigid rotation about the trailing foot leaves no slip");

  // Table 7 trunk velocity
  CHECK_NEAR(ex.v[0], -0.4114, 1e-4, "ramone xdot0 (Table 7)");
  CHECK_NEAR(ex.v[1], -0.2105, 1e-4, "ramone ydot0 (Table 7)");
  CHECK(ex.v[2] == 1 && ex.v[3] == 0 && ex.v[4] == 0 && ex.v[5] == 0 && ex.v[6] == 0,
        "ramone thetadot0 = 1, joints at rest");

  // floor rows of a trunk at (0, y0): the theta column holds the contact offset (x, -y)
  CHECK_NEAR(ex.Jn[2], -0.32158, 1e-5, "ramone leading contact x (notes 3.5)");
  CHECK_NEAR(ex.Jn[7 + 2], 0.21052, 1e-5, "ramone trailing contact x (notes 3.5)");
  CHECK_NEAR(ex.Jt[2], 0.411416, 1e-6, "ramone trunk height y0 (notes 3.5)");

  // trailing knee from its shank column: (Jn, Jt - rFoot) = l3 (sin, cos) of the shank angle
  const double r_foot = 0.0563/2, theta0 = 16*kPi/180, alpha_t = 70*kPi/180;
  double shank = atan2(ex.Jn[7 + 6], ex.Jt[7 + 6] - r_foot);
  CHECK_NEAR(hypot(ex.Jn[7 + 6], ex.Jt[7 + 6] - r_foot), 0.2385, 1e-12, "ramone l3");
  CHECK_NEAR(shank - theta0 - alpha_t, -1.614193, 1e-6, "ramone beta_t0 (notes 3.5)");

  CHECK_NEAR(ex.M[0], 7.9026 + 2*0.7887 + 2*0.510, 1e-12, "ramone total mass");
  CHECK(ex.mu[0] == 1e5 && ex.h == 1 && ex.N == 10 && ex.samples == (1LL << 20),
        "ramone Table 7 settings");
}

static void test_registry(void) {
  int n = svi_example_count();
  CHECK(n == 6, "svi_example_count = %d", n);
  const char* expect[6] = {"rocking_block", "box_wall", "compass_gait", "disk_stack",
                           "zeno_block", "ramone"};
  for (int j=0; j < 6; j++) {
    int found = 0;
    for (int i=0; i < n; i++) {
      const char* s = svi_example_name(i);
      found += s && !strcmp(s, expect[j]);
    }
    CHECK(found == 1, "example %s listed %d times", expect[j], found);
  }
  CHECK(svi_example_name(-1) == NULL && svi_example_name(n) == NULL, "name out of range");

  svi_example ex;
  CHECK(svi_example_get("no_such_example", &ex) == SVI_ERR_ARG, "unknown name");
  CHECK(svi_example_get("", &ex) == SVI_ERR_ARG, "empty name");
  CHECK(svi_example_get(NULL, &ex) == SVI_ERR_ARG, "NULL name");
  CHECK(svi_example_get("box_wall", NULL) == SVI_ERR_ARG, "NULL output");
}

int main(void) {
  test_registry();
  test_rocking_block();
  test_box_wall();
  test_compass_gait();
  test_disk_stack();
  test_zeno_block();
  test_ramone();
  printf("%d passed, %d failed\n", g_pass, g_fail);
  return g_fail != 0;
}
