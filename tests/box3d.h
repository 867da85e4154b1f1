/* box3d.h -- an exact 3-D rigid box in contact with planes (tests only).
 *
 * Generalised velocity v = [COM velocity (world); angular velocity (world)], so
 * M = diag(m, m, m, R I_body R^T).  A contact at r (from the COM, world) with unit normal n has
 * rows J = [d^T, (r x d)^T] for d = n, t1, t2: the velocity of the box point along d.  The
 * tangents t1, t2 complete n to a right-handed orthonormal frame; nt = 2 is the four-sided
 * friction pyramid, nt = 1 keeps t1 only. */
#ifndef SVI_BOX3D_H_
#define SVI_BOX3D_H_
#include <math.h>
#include <string.h>

#include "svi/svi_core.h"

#define BOX3D_MAX_NC 8

typedef struct {
  int nc, nt;
  double half[3], R[9];
  double M[36], Jn[BOX3D_MAX_NC * 6], Jt[2 * BOX3D_MAX_NC * 6], mu[BOX3D_MAX_NC], v[6];
  double r[BOX3D_MAX_NC][3], n[BOX3D_MAX_NC][3];
} box3d;

static inline void box3d_cross(const double* a, const double* b, double* c) {
  c[0] = a[1] * b[2] - a[2] * b[1];
  c[1] = a[2] * b[0] - a[0] * b[2];
  c[2] = a[0] * b[1] - a[1] * b[0];
}

/* rotation R = Rz(c) Ry(b) Rx(a) */
static inline void box3d_rotation(double a, double b, double c, double* R) {
  double ca = cos(a), sa = sin(a), cb = cos(b), sb = sin(b), cc = cos(c), sc = sin(c);
  double Rx[9] = {1, 0, 0, 0, ca, -sa, 0, sa, ca}, Ry[9] = {cb, 0, sb, 0, 1, 0, -sb, 0, cb};
  double Rz[9] = {cc, -sc, 0, sc, cc, 0, 0, 0, 1}, T[9];
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      T[i * 3 + j] = 0;
      for (int k = 0; k < 3; k++) T[i * 3 + j] += Ry[i * 3 + k] * Rx[k * 3 + j];
    }
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      R[i * 3 + j] = 0;
      for (int k = 0; k < 3; k++) R[i * 3 + j] += Rz[i * 3 + k] * T[k * 3 + j];
    }
}

/* mass m, half extents h, orientation R (NULL = identity), velocity v (6) */
static inline void box3d_init(box3d* b, double m, const double* h, const double* R, const double* v, int nt) {
  memset(b, 0, sizeof(*b));
  b->nt = nt;
  memcpy(b->half, h, sizeof(b->half));
  double I[3] = {m * (h[1] * h[1] + h[2] * h[2]) / 3, m * (h[0] * h[0] + h[2] * h[2]) / 3,
                 m * (h[0] * h[0] + h[1] * h[1]) / 3};   /* (2h)^2 / 12 */
  double Id[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
  memcpy(b->R, R ? R : Id, sizeof(b->R));
  b->M[0] = b->M[7] = b->M[14] = m;
  for (int i = 0; i < 3; i++)
    for (int j = 0; j < 3; j++) {
      double s = 0;
      for (int k = 0; k < 3; k++) s += b->R[i * 3 + k] * I[k] * b->R[j * 3 + k];
      b->M[(3 + i) * 6 + 3 + j] = s;
    }
  memcpy(b->v, v, sizeof(b->v));
}

/* world offset of the corner with signs (sx, sy, sz) */
static inline void box3d_corner(const box3d* b, int sx, int sy, int sz, double* r) {
  double p[3] = {sx * b->half[0], sy * b->half[1], sz * b->half[2]};
  for (int i = 0; i < 3; i++) r[i] = b->R[i * 3] * p[0] + b->R[i * 3 + 1] * p[1] + b->R[i * 3 + 2] * p[2];
}

static inline void box3d_row(const double* r, const double* d, double* J) {
  J[0] = d[0]; J[1] = d[1]; J[2] = d[2];
  box3d_cross(r, d, J + 3);
}

static inline void box3d_add_contact(box3d* b, const double* r, const double* n, double mu) {
  int k = b->nc++;
  double t1[3], t2[3], a[3] = {1, 0, 0};
  if (fabs(n[0]) > 0.9) { a[0] = 0; a[1] = 1; }
  box3d_cross(a, n, t2);   /* t2 = a x n, t1 = n x t2 ... normalised */
  double l = sqrt(t2[0] * t2[0] + t2[1] * t2[1] + t2[2] * t2[2]);
  for (int i = 0; i < 3; i++) t2[i] /= l;
  box3d_cross(t2, n, t1);
  memcpy(b->r[k], r, sizeof(double) * 3);
  memcpy(b->n[k], n, sizeof(double) * 3);
  box3d_row(r, n, b->Jn + 6 * k);
  if (b->nt == 2) {
    box3d_row(r, t1, b->Jt + 12 * k);
    box3d_row(r, t2, b->Jt + 12 * k + 6);
  } else {
    box3d_row(r, t1, b->Jt + 6 * k);
  }
  b->mu[k] = mu;
}

static inline svi_problem_def box3d_def(const box3d* b) {
  svi_problem_def d = {6, b->nc, b->nt, b->M, b->Jn, b->Jt, b->mu, b->v};
  return d;
}

/* The box dropped flat on its four bottom corners (contacts 0..3 = (sx, sy) = (-,-), (-,+),
 * (+,-), (+,+)), floor normal +z. */
static inline void box3d_flat(box3d* b, const double* h, const double* v, double mu) {
  box3d_init(b, 1.0, h, NULL, v, 2);
  double up[3] = {0, 0, 1}, r[3];
  for (int sx = -1; sx <= 1; sx += 2)
    for (int sy = -1; sy <= 1; sy += 2) {
      box3d_corner(b, sx, sy, -1, r);
      box3d_add_contact(b, r, up, mu);
    }
}

/* A tower of K free 0.2 m cubes (1 kg, inertia 0.08 / 12) stacked on the floor, C contact points
 * on a grid on each bottom face (friction 0.6, nt = 2), the top one landing at 1 m/s: M (6K x 6K),
 * Jn (KC x 6K), Jt (2KC x 6K), mu (KC), v (6K).  svi-bench's table 5, test_rebuild. */
static inline void box3d_tower(int K, int C, double* M, double* Jn, double* Jt, double* mu, double* v) {
  int nv = 6 * K, nc = K * C, g = (int)ceil(sqrt((double)C));
  memset(M, 0, sizeof(double) * nv * nv);
  memset(Jn, 0, sizeof(double) * nc * nv);
  memset(Jt, 0, sizeof(double) * 2 * nc * nv);
  memset(v, 0, sizeof(double) * nv);
  for (int b = 0; b < K; b++)
    for (int i = 0; i < 3; i++) {
      M[(6 * b + i) * nv + 6 * b + i] = 1;
      M[(6 * b + 3 + i) * nv + 6 * b + 3 + i] = 0.08 / 12;
    }
  for (int b = 0; b < K; b++)
    for (int c = 0; c < C; c++) {
      int i = b * C + c;
      double x = -0.1 + 0.2 * ((c % g) + 0.5) / g, y = -0.1 + 0.2 * ((c / g) + 0.5) / g;
      /* rows [d, r x d] (d = e_z, e_x, e_y) of body b at (x, y, -0.1), minus those of body b - 1 at
       * (x, y, 0.1) */
      static const double dirs[3][3] = {{0, 0, 1}, {1, 0, 0}, {0, 1, 0}};
      double* out[3] = {Jn + i * nv, Jt + 2 * i * nv, Jt + (2 * i + 1) * nv};
      for (int s = 0; s < 2 && b - s >= 0; s++) {
        double r[3] = {x, y, s ? 0.1 : -0.1}, row[6];
        for (int d = 0; d < 3; d++) {
          box3d_row(r, dirs[d], row);
          for (int k = 0; k < 6; k++) out[d][6 * (b - s) + k] += (s ? -1 : 1) * row[k];
        }
      }
      mu[i] = 0.6;
    }
  v[6 * (K - 1) + 2] = -1;
}
#endif
