/* svi_native.c -- native MuJoCo's outcome of an impact, for comparison with the set-valued law. */
#include <math.h>
#include <string.h>

#include "svi/svi_mujoco.h"

/* The impact is over for the compliant model when no contact of the event still approaches
 * (J_n v >= -tol, with the rows frozen at the impact configuration, as the paper evaluates its
 * compliant runs in the contact frame of the impact). */
int svi_native_outcome(const mjModel* m, mjData* d, const svi_problem_def* def, double horizon,
                       double* vn_out) {
  int nc = def->nc, nv = def->nv;
  double vmax = 0;
  for (int k = 0; k < nc; k++) {
    double vn = 0;
    for (int j = 0; j < nv; j++) vn += def->Jn[k * nv + j] * d->qvel[j];
    vmax = fmax(vmax, -vn);
  }
  double tol = 0.02 * vmax, t0 = d->time;
  int steps = 0;
  while (d->time - t0 < horizon) {
    mj_step(m, d);
    steps++;
    int approaching = 0;
    for (int k = 0; k < nc; k++) {
      double vn = 0;
      for (int j = 0; j < nv; j++) vn += def->Jn[k * nv + j] * d->qvel[j];
      vn_out[k] = vn;
      if (vn < -tol) approaching = 1;
    }
    if (!approaching && steps > 1) return steps;
  }
  return -steps;
}
