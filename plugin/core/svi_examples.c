// svi_examples.c -- the paper's planar reference impact problems (Appendix A and Section 4.3).
//
// Every matrix is computed here from the geometry: bodies are placed by forward kinematics, the
// mass matrix is the sum over bodies of m Jv'Jv + I Jw'Jw, and the contact rows project the
// relative velocity Jacobian of the two touching material points onto the normal n and the true
// tangent t = (n_y, -n_x).  Parameters follow the paper's Tables 4-8 and the MATLAB code of
// mshalm/routh-multi-impact as summarised in notes/routh_multi_impact_examples.md (cited "notes").

#include <math.h>
#include <stddef.h>
#include <string.h>

#include <svi/svi_core.h>

#define SVI_EX_PI 3.14159265358979323846
#define SVI_EX_MAXREV 3                 // revolute joints between the world and any body

//---------------------------------- planar kinematics ---------------------------------------------

// Path from the world to one rigid body of a planar tree: the base translation dofs and the
// revolute joints on the way, each with its current world axis position.  That is all a point
// Jacobian needs, because every revolute joint spins the whole subtree about its axis.
typedef struct {
  int ix, iy;                           // base x / y translation dofs
  int nrev;                             // revolute joints, root first
  int rev[SVI_EX_MAXREV];               // their dofs
  double axis[SVI_EX_MAXREV][2];        // their axis positions (world)
} planar_path;

// res = R(angle) vec
static void rotate2(double res[2], const double vec[2], double angle) {
  double c = cos(angle), s = sin(angle);
  res[0] = c*vec[0] - s*vec[1];
  res[1] = s*vec[0] + c*vec[1];
}

// res = base + R(angle) local: a body-fixed point in world coordinates
static void body_point(double res[2], const double base[2], double angle, const double local[2]) {
  double r[2];
  rotate2(r, local, angle);
  res[0] = base[0] + r[0];
  res[1] = base[1] + r[1];
}

// res = omega z x (p - pivot): velocity of p under a rigid rotation about pivot
static void rotation_velocity(double res[2], double omega, const double p[2],
                              const double pivot[2]) {
  res[0] = -omega*(p[1] - pivot[1]);
  res[1] =  omega*(p[0] - pivot[0]);
}

// a base that translates with dofs ix, iy and does not rotate
static planar_path base_path(int ix, int iy) {
  planar_path p = {ix, iy, 0, {0}, {{0}}};
  return p;
}

// append a revolute joint with dof `dof` at world position `axis`
static planar_path path_append(planar_path p, int dof, const double axis[2]) {
  p.rev[p.nrev] = dof;
  p.axis[p.nrev][0] = axis[0];
  p.axis[p.nrev][1] = axis[1];
  p.nrev++;
  return p;
}

// a free body [x, y, theta] at dofs i0 .. i0+2, rotating about its centre c
static planar_path free_body_path(int i0, const double c[2]) {
  return path_append(base_path(i0, i0 + 1), i0 + 2, c);
}

// Jacobian rows (jx, jy) of the world velocity of the body-fixed point currently at pt
static void path_jac_point(double* jx, double* jy, const planar_path* path, const double pt[2],
                           int nv) {
  memset(jx, 0, nv*sizeof(double));
  memset(jy, 0, nv*sizeof(double));
  jx[path->ix] = 1;
  jy[path->iy] = 1;
  for (int j=0; j < path->nrev; j++) {
    jx[path->rev[j]] += -(pt[1] - path->axis[j][1]);
    jy[path->rev[j]] +=   pt[0] - path->axis[j][0];
  }
}

// Jacobian row of the body's angular velocity: planar angles add along the path
static void path_jac_rot(double* jw, const planar_path* path, int nv) {
  memset(jw, 0, nv*sizeof(double));
  for (int j=0; j < path->nrev; j++) {
    jw[path->rev[j]] += 1;
  }
}

// M += m (Jx'Jx + Jy'Jy) + I Jw'Jw for a body with mass m at com and inertia I about com
static void add_body_mass(double* M, int nv, const planar_path* path, const double com[2],
                          double mass, double inertia) {
  double jx[SVI_EX_MAX_NV], jy[SVI_EX_MAX_NV], jw[SVI_EX_MAX_NV];
  path_jac_point(jx, jy, path, com, nv);
  path_jac_rot(jw, path, nv);
  for (int i=0; i < nv; i++) {
    for (int k=0; k < nv; k++) {
      M[i*nv + k] += mass*(jx[i]*jx[k] + jy[i]*jy[k]) + inertia*jw[i]*jw[k];
    }
  }
}

// Contact k at world point pt with unit normal n pointing from body 1 to body 2, so J_n v > 0 is
// separation.  body1 NULL = the (fixed) world.  Tangent t = (n_y, -n_x) is perpendicular to n for
// every n, unlike the MATLAB code's (n_y, n_x) (notes section 2).
static void set_contact(svi_example* ex, int k, const planar_path* body1,
                        const planar_path* body2, const double pt[2], const double n[2]) {
  int nv = ex->nv;
  double t[2] = {n[1], -n[0]};
  double jx2[SVI_EX_MAX_NV], jy2[SVI_EX_MAX_NV];
  double jx1[SVI_EX_MAX_NV] = {0}, jy1[SVI_EX_MAX_NV] = {0};
  path_jac_point(jx2, jy2, body2, pt, nv);
  if (body1) {
    path_jac_point(jx1, jy1, body1, pt, nv);
  }
  for (int i=0; i < nv; i++) {
    double dx = jx2[i] - jx1[i], dy = jy2[i] - jy1[i];
    ex->Jn[k*nv + i] = n[0]*dx + n[1]*dy;
    ex->Jt[k*nv + i] = t[0]*dx + t[1]*dy;
  }
}

static const double kFloorNormal[2] = {0, 1};
static const char* const kContactNames[SVI_EX_MAX_NC] = {"A", "B", "C", "D", "E"};

// common fields of a planar problem with equal friction at every contact
static void set_sizes(svi_example* ex, int nv, int nc, double mu) {
  ex->nv = nv;
  ex->nc = nc;
  ex->nt = 1;
  for (int k=0; k < nc; k++) {
    ex->mu[k] = mu;
    ex->contact_names[k] = kContactNames[k];
  }
  ex->plot_a = 0;
  ex->plot_b = nc > 1 ? 1 : 0;
}

// paper's Algorithm 2 settings: step h (N s), trajectory length N, set size M = 2^log2_samples
static void set_run(svi_example* ex, double h, int N, int log2_samples) {
  ex->h = h;
  ex->N = N;
  ex->samples = 1LL << log2_samples;
}

//---------------------------------- block on the floor --------------------------------------------

// Uniform a x b block of mass m, q = [x, y, theta], lying flat (theta = 0) with both bottom
// corners on the floor: A = left corner (-a/2, -b/2), B = right corner (a/2, -b/2).
static void block_flat_on_floor(svi_example* ex, double a, double b, double m, double mu) {
  set_sizes(ex, 3, 2, mu);
  double c[2] = {0, b/2};
  planar_path body = free_body_path(0, c);
  add_body_mass(ex->M, 3, &body, c, m, m*(a*a + b*b)/12);

  double corner[2][2] = {{-a/2, -b/2}, {a/2, -b/2}};
  for (int k=0; k < 2; k++) {
    double pt[2];
    body_point(pt, c, 0, corner[k]);
    set_contact(ex, k, NULL, &body, pt, kFloorNormal);
  }
}

// Dropped block ("Phone"): paper Table 4, notes section 3.2 (final PhoneParameters.m).  Falls
// flat from 1 cm, so both corners hit at v0 = sqrt(2 g 0.01).
static void example_rocking_block(svi_example* ex) {
  ex->title = "rocking block dropped flat (Table 4)";
  block_flat_on_floor(ex, 1, 2, 1, 1);
  ex->v[1] = -sqrt(2*9.81*0.01);
  set_run(ex, 0.3, 10, 14);
}

// Zeno rocking block: paper Section 4.3 (eq. 56-68), notes section 3.3.  The block pivots about A
// and corner B comes down: rigid rotation about A with |omega| = 1.  Since B - A = (a, 0),
// B descends for omega < 0.  A sticking impact at B leaves a pivot about B with 0.7 |omega| (68).
static void example_zeno_block(svi_example* ex) {
  const double a = 1, b = 2, omega = -1;
  ex->title = "rocking block pivoting onto its second corner (Section 4.3)";
  block_flat_on_floor(ex, a, b, 1, 1);
  double c[2] = {0, b/2}, pivot[2] = {-a/2, 0};
  rotation_velocity(ex->v, omega, c, pivot);
  ex->v[2] = omega;
  set_run(ex, 0.3, 10, 14);
}

//---------------------------------- box against a wall --------------------------------------------

// Box sliding into a wall: paper Table 6 / Fig. 5, notes section 3.1.  A unit square at 80 deg
// is shifted so that its lowest corner touches the floor y = 0 (contact A) and its rightmost
// corner touches the wall x = 0 (contact B, outward normal (-1, 0)); it slides right at 1 m/s.
static void example_box_wall(svi_example* ex) {
  const double w = 1, m = 1, theta = SVI_EX_PI/2 - 10*SVI_EX_PI/180;
  const double local[4][2] = {{-w/2, -w/2}, {w/2, -w/2}, {w/2, w/2}, {-w/2, w/2}};
  ex->title = "box sliding into a wall (Table 6)";
  set_sizes(ex, 3, 2, 1);

  // world offsets of the corners; pick the lowest and the rightmost
  double r[4][2];
  int low = 0, right = 0;
  for (int i=0; i < 4; i++) {
    rotate2(r[i], local[i], theta);
    if (r[i][1] < r[low][1]) low = i;
    if (r[i][0] > r[right][0]) right = i;
  }
  double c[2] = {-r[right][0], -r[low][1]};
  planar_path body = free_body_path(0, c);
  add_body_mass(ex->M, 3, &body, c, m, m*(w*w + w*w)/12);

  double pa[2] = {c[0] + r[low][0], c[1] + r[low][1]};
  double pb[2] = {c[0] + r[right][0], c[1] + r[right][1]};
  double wall_normal[2] = {-1, 0};
  set_contact(ex, 0, NULL, &body, pa, kFloorNormal);
  set_contact(ex, 1, NULL, &body, pb, wall_normal);

  ex->v[0] = 1;
  set_run(ex, 2, 5, 18);
}

//---------------------------------- compass gait --------------------------------------------------

// Compass gait at double support: paper Table 5 / Fig. 4, notes section 3.4.  q = [x_hip, y_hip,
// phi_lead, phi_trail] with absolute leg angles; leg i runs from the hip along (sin phi, -cos phi)
// and carries a point mass at its midpoint.  Before impact the walker rotates rigidly about the
// trailing foot (at the origin) at phidot0, bringing the leading foot down.
static void example_compass_gait(svi_example* ex) {
  const double l = 1, m = 1, s_par = 0.5, phi = 78*SVI_EX_PI/180, phidot0 = 0.25;
  const double angle[2] = {-phi, phi};                   // lead, trail
  ex->title = "compass gait wide step (Table 5)";
  set_sizes(ex, 4, 2, 5);

  double hip[2] = {-l*sin(phi), l*cos(phi)};
  double foot[2][2];
  for (int i=0; i < 2; i++) {
    planar_path leg = path_append(base_path(0, 1), 2 + i, hip);
    double dir[2] = {sin(angle[i]), -cos(angle[i])};
    double mass_pt[2] = {hip[0] + s_par*dir[0], hip[1] + s_par*dir[1]};
    foot[i][0] = hip[0] + l*dir[0];
    foot[i][1] = hip[1] + l*dir[1];
    add_body_mass(ex->M, 4, &leg, mass_pt, m, 0);
    set_contact(ex, i, NULL, &leg, foot[i], kFloorNormal);
  }

  // rigid rotation about the trailing foot: both absolute angles turn at phidot0
  rotation_velocity(ex->v, phidot0, hip, foot[1]);
  ex->v[2] = phidot0;
  ex->v[3] = phidot0;
  set_run(ex, 0.25, 5, 20);
}

//---------------------------------- RAMone --------------------------------------------------------

// RAMone geometry and inertia (Remy 2017; notes section 3.5)
typedef struct {
  double m1, m2, m3;         // trunk, upper-leg, lower-leg mass
  double j1, j2, j3;         // their inertias about their CoGs
  double s1;                 // pitch axis (trunk origin) to hip joint
  double s2;                 // hip joint to upper-leg CoG
  double s3;                 // knee to lower-leg CoG
  double l2, l3;             // upper / lower leg length
  double r_foot;             // foot disc radius
} ramone_model;

// world positions along one leg
typedef struct {
  double hip[2], thigh_com[2], knee[2], shank_com[2], foot[2], contact[2];
} ramone_leg;

// forward kinematics of one leg from the trunk origin, trunk pitch theta, hip alpha, knee beta;
// segments hang along -y of their frames; the contact is the foot disc's lowest point
static void ramone_leg_fk(ramone_leg* leg, const ramone_model* p, const double trunk[2],
                          double theta, double alpha, double beta) {
  const double hip_local[2] = {0, -p->s1}, thigh_com[2] = {0, -p->s2};
  const double knee_local[2] = {0, -p->l2}, shank_com[2] = {0, -p->s3};
  const double foot_local[2] = {0, -p->l3};
  body_point(leg->hip, trunk, theta, hip_local);
  body_point(leg->thigh_com, leg->hip, theta + alpha, thigh_com);
  body_point(leg->knee, leg->hip, theta + alpha, knee_local);
  body_point(leg->shank_com, leg->knee, theta + alpha + beta, shank_com);
  body_point(leg->foot, leg->knee, theta + alpha + beta, foot_local);
  leg->contact[0] = leg->foot[0];
  leg->contact[1] = leg->foot[1] - p->r_foot;
}

// RAMone footfall: paper Table 7 / Fig. 13, notes section 3.5 (Results.m, final).
// q = [x, y, theta, alpha_l, beta_l, alpha_t, beta_t].  The leading leg fixes the trunk height so
// that its foot touches the floor; the trailing knee is then bent until that foot touches too.
// Before impact the robot rotates rigidly about the trailing contact at thetadot = 1.
static void example_ramone(svi_example* ex) {
  const ramone_model p = {
    7.9026, 0.7887, 0.510,
    0.08, 0.00221, 0.00652,
    0.137675, 0.019399, 0.2385 - 0.073265,
    0.2, 0.2385, 0.0563/2
  };
  const double deg = SVI_EX_PI/180;
  const double theta = 16*deg, beta_l = -2*deg, alpha_t = 70*deg, alpha_l = -70*deg;
  ex->title = "RAMone biped footfall (Table 7)";
  set_sizes(ex, 7, 2, 1e5);

  double leg_ht = p.l3*cos(theta + alpha_l + beta_l) + p.l2*cos(theta + alpha_l);
  double y0 = leg_ht + p.s1*cos(theta) + p.r_foot;
  double back_knee = leg_ht - p.l2*cos(theta + alpha_t);
  double beta_t = -alpha_t - theta + asin(back_knee/p.l3) - SVI_EX_PI/2;

  double trunk[2] = {0, y0};
  const double alpha[2] = {alpha_l, alpha_t}, beta[2] = {beta_l, beta_t};
  planar_path trunk_path = free_body_path(0, trunk);
  add_body_mass(ex->M, 7, &trunk_path, trunk, p.m1, p.j1);

  ramone_leg leg[2];
  for (int i=0; i < 2; i++) {
    ramone_leg_fk(&leg[i], &p, trunk, theta, alpha[i], beta[i]);
    planar_path thigh = path_append(trunk_path, 3 + 2*i, leg[i].hip);
    planar_path shank = path_append(thigh, 4 + 2*i, leg[i].knee);
    add_body_mass(ex->M, 7, &thigh, leg[i].thigh_com, p.m2, p.j2);
    add_body_mass(ex->M, 7, &shank, leg[i].shank_com, p.m3, p.j3);
    set_contact(ex, i, NULL, &shank, leg[i].contact, kFloorNormal);
  }

  // rigid rotation about the trailing contact: only the trunk dofs move
  rotation_velocity(ex->v, 1, trunk, leg[1].contact);
  ex->v[2] = 1;
  set_run(ex, 1, 10, 20);
}

//---------------------------------- disk stack ----------------------------------------------------

// Disc stack: paper Table 8 / Fig. 14, notes section 3.6.  Three unit discs, q = [x1, y1, th1,
// x2, y2, th2, x3, y3, th3] for top, bottom-left, bottom-right.  Contacts in the MATLAB pair
// order (paper Fig. 14c): A/B floor under left/right, C/D top on left/right, E left-right.
// The top disc falls at 1 m/s onto the two resting bottom discs.
static void example_disk_stack(svi_example* ex) {
  const double R = 1, m = 1;
  ex->title = "stack of three disks (Table 8)";
  set_sizes(ex, 9, 5, sqrt(3));

  double c[3][2];
  c[1][0] = 0;                     c[1][1] = R;
  c[2][0] = c[1][0] + 2*R;         c[2][1] = R;
  c[0][0] = c[1][0] + 2*R*cos(SVI_EX_PI/3);
  c[0][1] = c[1][1] + 2*R*sin(SVI_EX_PI/3);

  planar_path disc[3];
  for (int i=0; i < 3; i++) {
    disc[i] = free_body_path(3*i, c[i]);
    add_body_mass(ex->M, 9, &disc[i], c[i], m, m*R*R/2);
  }

  // floor contacts below the bottom discs
  for (int i=1; i <= 2; i++) {
    double pt[2] = {c[i][0], c[i][1] - R};
    set_contact(ex, i - 1, NULL, &disc[i], pt, kFloorNormal);
  }

  // disc pairs: normal along the centre line from the first disc to the second
  const int pair[3][2] = {{0, 1}, {0, 2}, {1, 2}};
  for (int k=0; k < 3; k++) {
    const double* c1 = c[pair[k][0]];
    const double* c2 = c[pair[k][1]];
    double d[2] = {c2[0] - c1[0], c2[1] - c1[1]};
    double len = sqrt(d[0]*d[0] + d[1]*d[1]);
    double n[2] = {d[0]/len, d[1]/len};
    double pt[2] = {c1[0] + R*n[0], c1[1] + R*n[1]};
    set_contact(ex, 2 + k, &disc[pair[k][0]], &disc[pair[k][1]], pt, n);
  }

  ex->v[1] = -1;
  ex->plot_a = 2;                  // C: top on left
  ex->plot_b = 3;                  // D: top on right
  set_run(ex, 1, 10, 20);
}

//---------------------------------- registry ------------------------------------------------------

typedef struct {
  const char* name;
  void (*build)(svi_example* ex);
} example_entry;

static const example_entry kExamples[] = {
  {"rocking_block", example_rocking_block},
  {"box_wall",      example_box_wall},
  {"compass_gait",  example_compass_gait},
  {"disk_stack",    example_disk_stack},
  {"zeno_block",    example_zeno_block},
  {"ramone",        example_ramone},
};

#define SVI_EX_COUNT ((int)(sizeof(kExamples)/sizeof(kExamples[0])))

int svi_example_count(void) {
  return SVI_EX_COUNT;
}

const char* svi_example_name(int i) {
  if (i < 0 || i >= SVI_EX_COUNT) {
    return NULL;
  }
  return kExamples[i].name;
}

int svi_example_get(const char* name, svi_example* ex) {
  if (!name || !ex) {
    return SVI_ERR_ARG;
  }
  for (int i=0; i < SVI_EX_COUNT; i++) {
    if (!strcmp(name, kExamples[i].name)) {
      memset(ex, 0, sizeof(*ex));
      ex->name = kExamples[i].name;
      kExamples[i].build(ex);
      return SVI_OK;
    }
  }
  return SVI_ERR_ARG;
}

svi_problem_def svi_example_problem(const svi_example* ex) {
  svi_problem_def def = {0, 0, 0, NULL, NULL, NULL, NULL, NULL};
  if (ex) {
    def = (svi_problem_def){ex->nv, ex->nc, ex->nt, ex->M, ex->Jn, ex->Jt, ex->mu, ex->v};
  }
  return def;
}
