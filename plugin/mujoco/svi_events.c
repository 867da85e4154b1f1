/* svi_events.c -- impact events among MuJoCo's contacts, and their resolution inside mj_step.
 *
 * Distances are measured to MuJoCo's constraint surface, g = dist - includemargin (includemargin
 * is the pair's margin; the pair's gap makes MuJoCo report contacts before they reach it, as
 * inactive contacts, exclude = 1).
 * Impact event: a contact crosses the surface (g <= 0) while approaching faster than the impact
 * speed, and it was not touching at the end of the previous step -- the moment MuJoCo's own soft
 * contact would start to act.  Resolving it there hands the contact to MuJoCo's solver as a
 * resting contact in the same step, with no free fall in between.
 * Contacts in the event: every contact with g <= band (touching or resting, approaching or not:
 * impulses pass through resting contacts, as in Newton's cradle), and every contact that closes
 * within the simultaneity window, g <= -J_n v * window -- among the kinematic trees that these
 * contacts connect to a tree with an approaching contact (J_n v < -impact speed).  The impact law
 * couples contacts only through the mass matrix, which is block-diagonal by tree, so a group of
 * trees that touch each other (and static geoms) but no approaching contact would get from the
 * event only the stop of its own slow approach, which is resting contact: MuJoCo's solver handles it
 * in this step as in every other.  The event's outcome does not depend on bodies resting elsewhere.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "svi/svi_mujoco.h"
#include "svi_mujoco_internal.h"

/* Velocity of the point p fixed to body b: cvel is the spatial velocity [rot; lin] at the
 * subtree centre of mass of b's root (as mj_objectVelocity reads it). */
static void point_velocity(const mjModel* m, const mjData* d, int b, const mjtNum* p, mjtNum* v) {
  const mjtNum* cv = d->cvel + 6 * b;
  const mjtNum* c = d->subtree_com + 3 * m->body_rootid[b];
  mjtNum r[3] = {p[0] - c[0], p[1] - c[1], p[2] - c[2]};
  v[0] = cv[3] + cv[1] * r[2] - cv[2] * r[1];
  v[1] = cv[4] + cv[2] * r[0] - cv[0] * r[2];
  v[2] = cv[5] + cv[0] * r[1] - cv[1] * r[0];
}

static mjtNum normal_velocity(const mjModel* m, const mjData* d, const mjContact* c) {
  mjtNum v1[3], v2[3];
  point_velocity(m, d, m->geom_bodyid[c->geom[0]], c->pos, v1);
  point_velocity(m, d, m->geom_bodyid[c->geom[1]], c->pos, v2);
  return c->frame[0] * (v2[0] - v1[0]) + c->frame[1] * (v2[1] - v1[1]) + c->frame[2] * (v2[2] - v1[2]);
}

/* An approach slower than what gravity adds in two steps is resting contact, whatever the
 * configured impact speed: otherwise a body at rest would "impact" every step. */
static double effective_impact_speed(const svi_instance* in, const mjModel* m) {
  double g = sqrt(m->opt.gravity[0] * m->opt.gravity[0] + m->opt.gravity[1] * m->opt.gravity[1] +
                  m->opt.gravity[2] * m->opt.gravity[2]);
  double rest = 2 * g * m->opt.timestep;
  return in->cfg.impact_speed > rest ? in->cfg.impact_speed : rest;
}

/* Does geom pair (g1, g2) have a detection range below the band?  MuJoCo reports such a pair's
 * contacts only once they penetrate (its range is the summed margins and gaps), so a resting or
 * sliding contact drops out of the list whenever MuJoCo's soft contact lifts it a little (sliding
 * does, by tens of micrometres, for up to ~10 ms) and would come back as a "new" contact. */
static int gapless(const svi_instance* in, const mjModel* m, int g1, int g2) {
  return m->geom_margin[g1] + m->geom_margin[g2] + m->geom_gap[g1] + m->geom_gap[g2] < in->cfg.band;
}

/* The point p in geom g's frame: R_g^T (p - x_g). */
static void geom_local(const mjData* d, int g, const double* p, double* local) {
  double rel[3];
  mju_sub3(rel, p, d->geom_xpos + 3 * g);
  mju_mulMatTVec3(local, d->geom_xmat + 9 * g, rel);
}

static int within(const double* a, const double* b, double r) {
  double dx = a[0] - b[0], dy = a[1] - b[1], dz = a[2] - b[2];
  return dx * dx + dy * dy + dz * dz <= r * r;
}

/* Is touching entry t the contact of pair (g1, g2) at world point p?  Same pair and a point within
 * the persistence radius r (a sliding or rolling contact moves; a corner landing elsewhere on the
 * same pair of geoms is a new contact).  An entry carried while its gapless pair was unreported
 * (t[5] steps) is matched in either geom's frame too: the box corner that slid 2 cm down a ramp
 * while MuJoCo did not report it is still the same corner of the box. */
static int entry_matches(const mjData* d, const double* t, int g1, int g2, const double* p, double r) {
  if ((int)t[0] != g1 || (int)t[1] != g2) return 0;
  if (within(t + 2, p, r)) return 1;
  if (t[5] == 0) return 0;
  double local[3];
  geom_local(d, g1, p, local);
  if (within(t + 6, local, r)) return 1;
  geom_local(d, g2, p, local);
  return within(t + 9, local, r);
}

static double persistence_radius(const svi_instance* in) {
  return fmax(10 * in->cfg.band, 0.005);
}

/* Was this contact touching at the end of the previous step?  MuJoCo lists contacts in the same
 * order from step to step, so the entry at the same position (hint) is tried first. */
static int was_touching(const svi_instance* in, const mjData* d, const double* touch, int ntouch,
                        const mjContact* c, int hint) {
  double r = persistence_radius(in);
  for (int k = 0; k < ntouch; k++) {
    int i = (hint + k) % ntouch;
    if (entry_matches(d, touch + SVI_TOUCH_SIZE * i, c->geom[0], c->geom[1], c->pos, r)) return 1;
  }
  return 0;
}

static int asleep(const mjModel* m, const mjData* d, int geom) {
  return mjENABLED(mjENBL_SLEEP) && d->body_awake[m->geom_bodyid[geom]] == mjS_ASLEEP;
}

/* Is contact c sustained for the next step: crossed, or in the band and either slow or already
 * sustained (hysteresis: a contact is new again only after it leaves the band)? */
static int sustained_next(double gap, double band, double vn, double vimp, int sustained) {
  return gap <= 0 || (gap <= band && (vn >= -vimp || sustained));
}

/* Record a touching entry: pair, world point, steps unreported (age) and, for a gapless pair, the
 * point in both geoms' frames (kept from when it was last reported). */
static void touch_put(svi_instance* in, const mjModel* m, const mjData* d, int g1, int g2,
                      const double* p, double age, const double* locals) {
  if (in->ntouch_next == in->nc_max) {
    in->touch_next_valid = 2;   /* overflowed */
    return;
  }
  double* t = in->touch_next + SVI_TOUCH_SIZE * in->ntouch_next++;
  t[0] = g1; t[1] = g2; t[2] = p[0]; t[3] = p[1]; t[4] = p[2]; t[5] = age;
  if (locals) {
    for (int k = 0; k < 6; k++) t[6 + k] = locals[k];
  } else if (in->gapless_pairs && gapless(in, m, g1, g2)) {
    geom_local(d, g1, p, t + 6);
    geom_local(d, g2, p, t + 9);
  } else {
    for (int k = 6; k < 12; k++) t[k] = 0;
  }
}

static void touch_add(svi_instance* in, const mjModel* m, const mjData* d, const mjContact* c) {
  touch_put(in, m, d, c->geom[0], c->geom[1], c->pos, 0, NULL);
}

/* Carry the touching entries of gapless pairs that no contact reports now, for up to
 * SVI_CARRY_STEPS steps and while the pair stays within the band (mj_geomDistance gives the pair's
 * smallest distance: on a pair touching at several points, a corner that lifts by more than the
 * band and lands again while another touches is not told apart -- give such geoms a gap). */
static void carry_unreported(svi_instance* in, const mjModel* m, mjData* d, const double* touch,
                             int ntouch) {
  if (!in->gapless_pairs) return;   /* every colliding pair has a contact band (checked at init) */
  double r = persistence_radius(in);
  int last1 = -1, last2 = -1, near = 0;
  for (int i = 0; i < ntouch; i++) {
    const double* t = touch + SVI_TOUCH_SIZE * i;
    int g1 = (int)t[0], g2 = (int)t[1], seen = 0;
    if (t[5] >= SVI_CARRY_STEPS || !gapless(in, m, g1, g2)) continue;
    for (int k = 0; k < d->ncon && !seen; k++)
      seen = entry_matches(d, t, d->contact[k].geom[0], d->contact[k].geom[1], d->contact[k].pos, r);
    if (seen) continue;
    if (g1 != last1 || g2 != last2) {   /* entries of one pair are adjacent: one distance per pair */
      near = mj_geomDistance(m, d, g1, g2, 2 * in->cfg.band, NULL) <= in->cfg.band;
      last1 = g1;
      last2 = g2;
    }
    if (near) touch_put(in, m, d, g1, g2, t + 2, t[5] + 1, t + 6);
  }
}

static void touch_finish(svi_instance* in) {
  if (in->touch_next_valid != 2) return;
  in->touch_next_valid = 1;
  in->counters.touch_overflow++;
  svi_report(in, SVI_WARN_TOUCH,
             "svi.impact: more than max_contacts = %d contacts touch at once; the rest are not remembered as "
             "sustained and may be taken for new impacts (raise max_contacts)", in->nc_max);
}

/* After an impact: the touching contacts of the next step, from the post-impact velocity, so that
 * the state after mj_step is the same whether mj_forward resolved the impact before it or not. */
static void collect_touching(svi_instance* in, const mjModel* m, mjData* d) {
  const double* state = svi_state(m, (mjData*)d, in);
  const double* touch = state + SVI_STATE_TOUCH;
  int ntouch = (int)state[SVI_STATE_NTOUCH];
  double vimp = effective_impact_speed(in, m), band = in->cfg.band;
  in->ntouch_next = 0;
  in->touch_next_valid = 1;
  for (int i = 0; i < d->ncon; i++) {
    const mjContact* c = d->contact + i;
    if (c->exclude > 1 || c->geom[0] < 0 || c->geom[1] < 0) continue;
    mjtNum gap = c->dist - c->includemargin;
    if (gap > band) continue;
    mjtNum vn = normal_velocity(m, d, c);
    if (sustained_next(gap, band, vn, vimp, vn < -vimp && was_touching(in, d, touch, ntouch, c, i)))
      touch_add(in, m, d, c);
  }
  carry_unreported(in, m, d, touch, ntouch);
  touch_finish(in);
}

/* A contact that can be in an event (touching, or closing within the window), with its normal
 * velocity; flex contacts and contacts MuJoCo excludes are not.  (detect's own loop has computed
 * these for every contact already; they are computed again only on a step with an event, which
 * saves a per-contact buffer.) */
static int candidate(const mjModel* m, const mjData* d, const mjContact* c, double band, double win,
                     mjtNum* vn) {
  if (c->exclude > 1 || c->geom[0] < 0 || c->geom[1] < 0) return 0;
  mjtNum gap = c->dist - c->includemargin;
  *vn = normal_velocity(m, d, c);
  return gap <= band || (*vn < 0 && gap <= -*vn * win);
}

/* union-find over the kinematic trees (-1: static, in no set) */
static int tree_find(int* parent, int t) {
  while (parent[t] != t) t = parent[t] = parent[parent[t]];
  return t;
}

static int contact_tree(const mjModel* m, const mjContact* c, int side) {
  return m->body_treeid[m->geom_bodyid[c->geom[side]]];
}

/* MuJoCo's constraint row i in efc_J: its entries' start and number (nv when the Jacobian is
 * dense), and entry k's column */
static int efc_row(const mjModel* m, const mjData* d, int sparse, int i, int* adr) {
  *adr = sparse ? d->efc_J_rowadr[i] : i * m->nv;
  return sparse ? d->efc_J_rownnz[i] : m->nv;
}

static int efc_col(const mjData* d, int sparse, int adr, int k) {
  return sparse ? d->efc_J_colind[adr + k] : k;
}

/* The event's contacts into in->cidx / in->vn: the candidates whose trees are connected, through
 * candidates, to a tree with an approaching one (the file's comment).  Sets *napproach and
 * *overflow (more than nc_max of them); returns their number. */
static int event_contacts(svi_instance* in, const mjModel* m, const mjData* d, double vimp, double band,
                          double win, int* napproach, int* overflow) {
  int nt = (int)m->ntree, *parent = in->tree, *mark = in->tree + nt, n = 0;
  mjtNum vn;
  for (int t = 0; t < nt; t++) { parent[t] = t; mark[t] = 0; }
  /* one pass: the unions, and a mark on each tree with an approaching contact; then each marked
   * tree marks its set's root (a mark only ever goes from 0 to 1, so in place) */
  for (int i = 0; i < d->ncon; i++) {
    const mjContact* c = d->contact + i;
    if (!candidate(m, d, c, band, win, &vn)) continue;
    int a = contact_tree(m, c, 0), b = contact_tree(m, c, 1);
    if (a >= 0 && b >= 0) parent[tree_find(parent, a)] = tree_find(parent, b);
    if (vn < -vimp && (a >= 0 || b >= 0)) mark[a >= 0 ? a : b] = 1;
  }
  /* trees an equality constraint couples are one body for the law (svi_equality.c) */
  int sparse = mj_isSparse(m);
  for (int i = 0; i < d->nefc; i++) {
    if (d->efc_type[i] != mjCNSTR_EQUALITY) continue;
    int adr, nnz = efc_row(m, d, sparse, i, &adr), first = -1;
    for (int k = 0; k < nnz; k++) {
      int t = d->efc_J[adr + k] != 0 ? m->dof_treeid[efc_col(d, sparse, adr, k)] : -1;
      if (t < 0) continue;
      if (first < 0) first = t;
      else parent[tree_find(parent, t)] = tree_find(parent, first);
    }
  }
  for (int t = 0; t < nt; t++) if (mark[t]) mark[tree_find(parent, t)] = 1;
  *napproach = *overflow = 0;
  for (int i = 0; i < d->ncon; i++) {
    const mjContact* c = d->contact + i;
    if (!candidate(m, d, c, band, win, &vn)) continue;
    int a = contact_tree(m, c, 0), b = contact_tree(m, c, 1);
    if ((a < 0 && b < 0) || !mark[tree_find(parent, a >= 0 ? a : b)]) continue;
    if (vn < -vimp) (*napproach)++;
    if (n == in->nc_max) { *overflow = 1; continue; }
    in->cidx[n] = i;
    in->vn[n] = vn;
    n++;
  }
  /* the event's dofs: its trees' (MuJoCo numbers trees in body order and gives each a contiguous
   * run of dofs, so the runs come in increasing order; checked at init, else all dofs) */
  in->nve = 0;
  if (!in->trees_in_order)
    for (int j = 0; j < m->nv; j++) in->edof[in->nve++] = j;
  else
    for (int t = 0; t < nt; t++)
      if (mark[tree_find(parent, t)])
        for (int j = 0; j < m->tree_dofnum[t]; j++) in->edof[in->nve++] = m->tree_dofadr[t] + j;
  return n;
}

/* The event's groups: its sets of trees (event_contacts' union-find, still in in->tree), in the
 * order of their smallest tree, with each event contact's and event dof's group in in->gcon,
 * in->gdof.  Returns their number; 1 when the dofs are not in tree order (events then take all
 * dofs, some in no set).  Contacts i, j of two groups have W_ij = J_i M^-1 J_j^T = 0 (M is
 * block-diagonal by tree), so every matrix the laws read is block-diagonal by group. */
int svi_events_groups(svi_instance* in, const mjModel* m, const mjData* d, int nc) {
  int nt = (int)m->ntree, *parent = in->tree, ng = 0;
  if (!in->trees_in_order) return 1;
  for (int t = 0; t < nt; t++) in->gof_root[t] = -1;
  for (int j = 0; j < in->nve; j++) {   /* edof increases, so trees come in increasing order */
    int t = m->dof_treeid[in->edof[j]], r = tree_find(parent, t);
    if (in->gof_root[r] < 0) {
      in->gof_root[r] = ng;
      in->gkey[ng++] = t;
    }
    in->gdof[j] = in->gof_root[r];
  }
  for (int k = 0; k < nc; k++) {
    const mjContact* c = d->contact + in->cidx[k];
    int a = contact_tree(m, c, 0), b = contact_tree(m, c, 1);
    in->gcon[k] = in->gof_root[tree_find(parent, a >= 0 ? a : b)];
  }
  return ng;
}

/* Collect the active contacts into in->cidx / in->vn and this step's touching contacts into
 * in->touch_next; returns their number, or -1 if there is no impact event this step (-2: there is
 * one, but svi.impact must leave it to MuJoCo). */
static int detect(svi_instance* in, const mjModel* m, mjData* d, int* napproach) {
  const double* state = svi_state(m, (mjData*)d, in);
  const double* touch = state + SVI_STATE_TOUCH;
  int ntouch = (int)state[SVI_STATE_NTOUCH];
  double vimp = effective_impact_speed(in, m), band = in->cfg.band, win = in->cfg.window;
  int n = 0, trigger = 0, overflow = 0, flex = 0, sleeping = 0;
  *napproach = 0;
  in->ntouch_next = 0;
  in->touch_next_valid = 1;
  for (int i = 0; i < d->ncon; i++) {
    const mjContact* c = d->contact + i;
    if (c->exclude > 1) continue;   /* 1 = "in gap": reported early, exactly what we want */
    mjtNum gap = c->dist - c->includemargin;
    if (c->geom[0] < 0 || c->geom[1] < 0) {   /* flex contacts: MuJoCo's solver keeps them */
      flex |= gap <= 0;
      continue;
    }
    mjtNum vn = normal_velocity(m, d, c);
    int touching = gap <= band;
    /* whether it touched in the previous step matters only for a fast approach in the band: a
     * resting contact skips the search (most contacts, most steps) */
    int sustained = touching && vn < -vimp && was_touching(in, d, touch, ntouch, c, i);
    if (sustained_next(gap, band, vn, vimp, sustained)) touch_add(in, m, d, c);
    if (gap <= 0 && vn < -vimp && !sustained) trigger = 1;
  }
  carry_unreported(in, m, d, touch, ntouch);
  touch_finish(in);
  if (flex && !(in->warned & SVI_WARN_FLEX))
    svi_report(in, SVI_WARN_FLEX,
               "svi.impact: flex contacts are left to MuJoCo's solver (svi.impact handles rigid geoms only)");
  if (!trigger) return -1;
  n = event_contacts(in, m, d, vimp, band, win, napproach, &overflow);
  for (int k = 0; k < n; k++) {
    const mjContact* c = d->contact + in->cidx[k];
    sleeping |= asleep(m, d, c->geom[0]) || asleep(m, d, c->geom[1]);
  }
  int full = d->warning[mjWARN_CONTACTFULL].number + d->warning[mjWARN_CNSTRFULL].number;
  if (full > in->contactfull_seen) {
    in->contactfull_seen = full;
    svi_report(in, SVI_WARN_CONTACTFULL,
               "svi.impact: MuJoCo's contact or constraint buffer is full at t = %g (raise <size memory=...>); "
               "impacts are resolved among the contacts MuJoCo kept, and MuJoCo cannot hold contacts it has no "
               "constraint rows for", d->time);
  }
  if (overflow) {
    svi_report(in, SVI_WARN_OVERFLOW,
               "svi.impact: an impact event at t = %g has more than max_contacts = %d contacts; it is left to "
               "MuJoCo's solver (raise max_contacts)", d->time, in->nc_max);
    return -2;
  }
  if (sleeping) {
    svi_report(in, SVI_WARN_SLEEP,
               "svi.impact: an impact at t = %g involves a sleeping body; it is left to MuJoCo's solver", d->time);
    return -2;
  }
  return n;
}

/* Rows J_n, J_t of the active contacts in MuJoCo's contact frame (normal from geom1 to geom2),
 * as mj_instantiateContact forms them: frame * (jac(b2, p) - jac(b1, p)).  Returns nt: 1 when
 * every contact's tangential motion is planar (one tangent row carries it), else 2. */
static int build_rows(svi_instance* in, const mjModel* m, mjData* d, int nc) {
  int nv = m->nv, planar = 1;
  for (int k = 0; k < nc; k++) {
    const mjContact* c = d->contact + in->cidx[k];
    mj_jac(m, d, in->J1, NULL, c->pos, m->geom_bodyid[c->geom[0]]);
    mj_jac(m, d, in->J2, NULL, c->pos, m->geom_bodyid[c->geom[1]]);
    for (int j = 0; j < 3 * nv; j++) in->J2[j] -= in->J1[j];
    double* jn = in->Jn + (size_t)k * nv;
    double* t1 = in->Jt + (size_t)(2 * k) * nv;
    double* t2 = t1 + nv;
    for (int j = 0; j < nv; j++) {
      const mjtNum* col = in->J2 + j;   /* rows x, y, z of column j: stride nv */
      jn[j] = c->frame[0] * col[0] + c->frame[1] * col[nv] + c->frame[2] * col[2 * nv];
      t1[j] = c->frame[3] * col[0] + c->frame[4] * col[nv] + c->frame[5] * col[2 * nv];
      t2[j] = c->frame[6] * col[0] + c->frame[7] * col[nv] + c->frame[8] * col[2 * nv];
    }
    in->mu[k] = c->dim > 1 ? c->friction[0] : 0;
    /* tangential motion of contact k spans rank([t1; t2]) dimensions: eigen-decompose the 2x2 Gram */
    double a = 0, b = 0, e = 0;
    for (int j = 0; j < nv; j++) { a += t1[j] * t1[j]; b += t1[j] * t2[j]; e += t2[j] * t2[j]; }
    double tr = a + e, det = a * e - b * b, disc = sqrt(fmax(0.25 * tr * tr - det, 0));
    double lmax = 0.5 * tr + disc, lmin = 0.5 * tr - disc;
    double* dir = in->tdir + 2 * k;
    if (lmax <= 1e-24 || lmin <= 1e-10 * lmax) {
      /* eigenvector of lmax: (b, lmax - a) or (lmax - e, b) */
      double x = b, y = lmax - a;
      if (fabs(x) + fabs(y) < 1e-300) { x = lmax - e; y = b; }
      double nrm = sqrt(x * x + y * y);
      if (nrm < 1e-300) { x = 1; y = 0; nrm = 1; }
      dir[0] = x / nrm;
      dir[1] = y / nrm;
    } else {
      planar = 0;
      dir[0] = 1;
      dir[1] = 0;
    }
  }
  int nt = (planar || in->cfg.friction_dirs == 2) ? 1 : 2;
  if (nt == 1) {   /* compact to one combined tangent row per contact, in place */
    for (int k = 0; k < nc; k++) {
      const double* t1 = in->Jt + (size_t)(2 * k) * nv;
      const double* t2 = t1 + nv;
      double* out = in->J1;   /* scratch */
      for (int j = 0; j < nv; j++) out[j] = in->tdir[2 * k] * t1[j] + in->tdir[2 * k + 1] * t2[j];
      memcpy(in->Jt + (size_t)k * nv, out, sizeof(double) * (size_t)nv);
    }
  }
  return nt;
}

/* The law acts on the event's dofs only (in->edof, nve of them): M is block-diagonal by tree and
 * J_n, J_t are zero outside the trees of their contacts, so the other dofs get no impulse, and
 * every sum the core forms over the event's dofs has the terms, in the order, of the same sum
 * over all nv (the rest are exact zeros).  The outcome is the one the whole problem gives, at
 * O(nve^2) per event instead of O(nv^2); bit for bit, except where the smaller size picks another
 * solver (the low-rank Lemke from nve <= 64 on: the same path, other roundings).  The energy check
 * is on the event's own energy (stricter than on the model's); the problem svi_current_problem
 * returns keeps all nv dofs. */

/* M on the event's dofs (nve x nve) from MuJoCo's sparse inertia d->M, as mj_fullM forms the
 * whole: row g holds the lower triangle's nonzeros (its dof's ancestors in the same tree) at
 * M_colind[M_rowadr[g] ...], M_rownnz[g] of them.  A tree's dofs are contiguous in MuJoCo's
 * numbering and in the event's, so column c of row g (local i) is local i - (g - c). */
static void event_mass(svi_instance* in, const mjModel* m, const mjData* d) {
  int n = in->nve;
  double* M = in->M;
  memset(M, 0, sizeof(double) * (size_t)n * n);
  for (int i = 0; i < n; i++) {
    int g = in->edof[i], adr = m->M_rowadr[g];
    for (int k = 0; k < m->M_rownnz[g]; k++) {
      int j = i - (g - m->M_colind[adr + k]);
      M[(size_t)i * n + j] = M[(size_t)j * n + i] = d->M[adr + k];
    }
  }
}

/* out[j] = x[idx[j]], j < n */
static void gather(const double* x, const int* idx, int n, double* out) {
  for (int j = 0; j < n; j++) out[j] = x[idx[j]];
}

/* nrow rows of stride nv to the event's columns, stride nve, in place (edof increases, so every
 * entry is read before it can be overwritten) */
static void event_rows(const svi_instance* in, int nv, int nrow, double* J) {
  int n = in->nve;
  for (int r = 0; r < nrow; r++) gather(J + (size_t)r * nv, in->edof, n, J + (size_t)r * n);
}

static void event_gather(const svi_instance* in, const double* x, double* xe) {
  gather(x, in->edof, in->nve, xe);
}

/* MuJoCo's constraint rows on the event's trees that the law has no rows for: equality constraints
 * (a weld, a connect, a coupled joint or tendon) and the joint and tendon limits MuJoCo has made
 * active.  Each row on the event's dofs into in->Jside, its velocity from the other dofs (which the
 * impact does not change) and its velocity before the impact after them; in->side: MuJoCo's row.
 * Reads event_contacts' sets (in->tree).  Returns their number, or -1 beyond side_max (not expected:
 * a weld has 6 rows, a limit 1). */
static int side_rows(svi_instance* in, const mjModel* m, const mjData* d) {
  int *parent = in->tree, *mark = in->tree + m->ntree, sparse = mj_isSparse(m), nve = in->nve;
  int n = 0;
  for (int i = 0; i < d->nefc; i++) {
    int type = d->efc_type[i];
    if (type != mjCNSTR_EQUALITY && type != mjCNSTR_LIMIT_JOINT && type != mjCNSTR_LIMIT_TENDON) continue;
    int adr, nnz = efc_row(m, d, sparse, i, &adr), in_event = 0;
    for (int k = 0; k < nnz && !in_event; k++) {
      int t = m->dof_treeid[efc_col(d, sparse, adr, k)];
      in_event = d->efc_J[adr + k] != 0 && t >= 0 && mark[tree_find(parent, t)];
    }
    if (!in_event) continue;
    if (n == in->side_max) return -1;
    double *row = in->Jside + (size_t)n * nve, *u = in->Jside + (size_t)in->side_max * nve + 2 * n;
    memset(row, 0, sizeof(double) * (size_t)nve);
    u[0] = u[1] = 0;
    for (int k = 0; k < nnz; k++) {   /* edof is increasing: the event's column by bisection */
      int j = efc_col(d, sparse, adr, k), lo = 0, hi = nve;
      while (lo < hi) { int mid = (lo + hi) / 2; if (in->edof[mid] < j) lo = mid + 1; else hi = mid; }
      if (lo < nve && in->edof[lo] == j) row[lo] = d->efc_J[adr + k];
      else u[0] += d->efc_J[adr + k] * d->qvel[j];
      u[1] += d->efc_J[adr + k] * d->qvel[j];
    }
    in->side_eq[n] = type == mjCNSTR_EQUALITY;
    in->side[n++] = i;
  }
  return n;
}

/* The checks' velocity tolerance: 1e-6 of the largest pre-impact approach speed (in->vn) */
static double approach_tol(const svi_instance* in, int nc) {
  double vmax = 0;
  for (int k = 0; k < nc; k++) vmax = fmax(vmax, -in->vn[k]);
  return 1e-6 * vmax;
}

/* An outcome on the event's dofs: v itself, or N v (in->vphys) for a problem in the coordinates of
 * its equality constraints */
static const double* physical(svi_instance* in, const double* v) {
  if (!in->eq_reduced) return v;
  svi_equality_expand(in, v, in->vphys);
  return in->vphys;
}

/* The first of the side rows an outcome v (the event's dofs) breaks, or -1: an equality row not
 * held (per unit row in the equality coordinates, else its velocity changed), a limit row left
 * closing (J v < 0), each beyond 1e-6 of the largest pre-impact approach speed (the contact
 * check's tolerance); *u: that row's velocity after, *u0 before. */
static int side_broken(const svi_instance* in, const mjData* d, int nc, const double* v, double* u, double* u0) {
  int nve = in->nve;
  double tol = approach_tol(in, nc);
  for (int i = 0; i < in->nside; i++) {
    const double *row = in->Jside + (size_t)i * nve, *r = in->Jside + (size_t)in->side_max * nve + 2 * i;
    double x = r[0];
    for (int j = 0; j < nve; j++) x += row[j] * v[j];
    int eq = in->side_eq[i], ok;
    if (eq && in->eq_reduced) {   /* v = N y keeps them: J_e v+ = 0 up to rounding, per unit row */
      double s = 0;
      for (int j = 0; j < nve; j++) s += row[j] * row[j];
      ok = fabs(x) <= tol * sqrt(s);
    } else {
      ok = eq ? fabs(x - r[1]) <= tol : x >= -tol;
    }
    if (ok) continue;
    *u = x;
    *u0 = r[1];
    return i;
  }
  return -1;
}

/* the model's kinetic energy 1/2 v^T M v at d->qvel (MuJoCo's sparse product; in->vplus as
 * scratch, before the law writes it) */
static double model_energy(svi_instance* in, const mjModel* m, const mjData* d) {
  mj_mulM(m, d, in->vplus, d->qvel);
  return 0.5 * mju_dot(d->qvel, in->vplus, m->nv);
}

int svi_events_problem(svi_instance* in, const mjModel* m, mjData* d, svi_problem_def* def,
                       int* napproach) {
  int nc = detect(in, m, d, napproach);
  if (nc <= 0) return 0;
  int ns = side_rows(in, m, d), eq = ns < 0;
  in->nside = ns < 0 ? 0 : ns;   /* svi_current_limits reads them */
  for (int i = 0; i < ns; i++) eq |= in->side_eq[i];
  if (eq) {   /* the law runs in the constraints' coordinates (svi_equality.c), not on these dofs */
    svi_report(in, SVI_WARN_CONSTRAINT, "svi.impact: the impact problem at t = %g is under equality constraints; its "
               "matrices on the model's dofs (svi_current_problem, Impacts.problem, Algorithm 2 on the event) are "
               "not the law's and are not returned", d->time);
    return 0;
  }
  mj_fullM(m, d, in->M);
  int nt = build_rows(in, m, d, nc);
  svi_problem_def p = {m->nv, nc, nt, in->M, in->Jn, in->Jt, in->mu, d->qvel};
  *def = p;
  return nc;
}

int svi_current_limits(const svi_instance* in, int nc, int nv, int max, double* rows, double* off, double* tol) {
  if (!in || nc <= 0) return 0;
  int n = 0, nve = in->nve;
  for (int i = 0; i < in->nside; i++) {
    if (in->side_eq[i]) continue;   /* not expected: equality rows refuse the problem */
    if (n < max && rows && off) {
      const double *row = in->Jside + (size_t)i * nve, *r = in->Jside + (size_t)in->side_max * nve + 2 * i;
      double* full = rows + (size_t)n * nv;
      memset(full, 0, sizeof(double) * (size_t)nv);
      for (int j = 0; j < nve; j++) full[in->edof[j]] = row[j];
      off[n] = r[0];
    }
    n++;
  }
  if (tol) *tol = approach_tol(in, nc);
  return n;
}

long long svi_limits_refuse(int nlim, int nv, const double* rows, const double* off, double tol, long long n,
                            const double* qvel, unsigned char* accepted) {
  long long refused = 0;
  for (long long k = 0; k < n; k++) {
    if (accepted && !accepted[k]) continue;
    const double* v = qvel + (size_t)k * (size_t)nv;
    int broken = 0;
    for (int i = 0; i < nlim && !broken; i++) {   /* side_broken's test of a limit row */
      double x = off[i];
      const double* row = rows + (size_t)i * nv;
      for (int j = 0; j < nv; j++) x += row[j] * v[j];
      broken = !(x >= -tol);
    }
    if (!broken) continue;
    refused++;
    if (accepted) accepted[k] = 0;
  }
  return refused;
}

/* sequential law order: the fastest-approaching contact first */
static void approach_order(const double* vn, int nc, int* order) {
  for (int i = 0; i < nc; i++) order[i] = i;
  for (int i = 1; i < nc; i++)
    for (int j = i; j > 0 && vn[order[j]] < vn[order[j - 1]]; j--) {
      int t = order[j]; order[j] = order[j - 1]; order[j - 1] = t;
    }
}

/* Group g of the event as its own problem (svi_problem_group on the event's, in the problem's
 * coordinates: the event's dofs, or svi_equality.c's): its dofs and contacts (event indices) into
 * in->gvmap (*nvg) and in->gcmap (*ncg), its problem into in->gM, gJn, gJt, gmu, gv. */
static svi_problem_def group_problem(svi_instance* in, int g, int nc, int nt, int* nvg, int* ncg) {
  svi_problem_def ev = {in->np, nc, nt, in->M, in->Jn, in->Jt, in->mu, in->ve};
  svi_problem_def def = svi_problem_group(&ev, in->gdof, in->gcon, g, in->gvmap, in->gcmap, in->gM, in->gJn,
                                          in->gJt, in->gmu, in->gv);
  *nvg = def.nv;
  *ncg = def.nc;
  return def;
}

/* Group g's share of the event's impulse lambda_bar (in->lam: [lambda_n (nc); lambda_D (nc nd)])
 * and in->glam (the group's ncg contacts, in->gcmap, the same layout): to_event 1 copies the
 * group's into the event's, 0 the other way. */
static void group_impulse(svi_instance* in, int nc, int nd, int ncg, int to_event) {
  for (int i = 0; i < ncg; i++) {
    int k = in->gcmap[i];
    double *ev = in->lam + nc + (size_t)k * nd, *gr = in->glam + ncg + (size_t)i * nd;
    if (to_event) {
      in->lam[k] = in->glam[i];
      memcpy(ev, gr, sizeof(double) * (size_t)nd);
    } else {
      in->glam[i] = in->lam[k];
      memcpy(gr, ev, sizeof(double) * (size_t)nd);
    }
  }
}

/* The set-valued law on each group of the event as its own problem (split = groups).  The groups'
 * step LCPs (75) are independent blocks of the event's, so a Routh step of the event is one step
 * of every group; run on its own, a group draws its budgets and perturbations from its own stream
 * (seed keyed by its smallest tree), its step h is relative to its own reference impulse, and it
 * stops stepping when it stops approaching.  Its sample is then the same, bit for bit, whatever
 * else lands in the same step (an event of one group keeps the event's own stream).  v_out, in->lam (lambda_bar:
 * [lambda_n (nc); lambda_D (nc nd, contact-major)]), the outcome's energy in->gke and its classes
 * in->gcls are assembled from the groups'; imp is left holding the last group (whole_problem sets
 * the event up again where it is needed).  Returns the first group's error, else its first other
 * status (SVI_OK_REGULARIZED), else SVI_OK. */
static int sample_groups(svi_instance* in, const svi_routh_config* rc, long long index, int nc, int nt,
                         double* v_out, int* lcps, int* steps, int* finish) {
  svi_impact* s = in->imp;
  int nd = 2 * nt, status = SVI_OK;
  in->gke = 0;
  for (int g = 0; g < in->ngroup; g++) {
    int nvg, ncg;
    svi_problem_def def = group_problem(in, g, nc, nt, &nvg, &ncg);
    if (ncg == 0) {   /* not expected (every set of the event has a contact): keeps its v- */
      for (int a = 0; a < nvg; a++) v_out[in->gvmap[a]] = in->ve[in->gvmap[a]];
      continue;
    }
    char err[256];
    int st = svi_impact_setup(s, &def, err, sizeof(err));
    in->whole_ready = 0;
    if (st != SVI_OK)
      svi_report(in, SVI_WARN_SETUP, "svi.impact: an impact at t = %g: a group of its trees cannot be set up (%s); "
                 "the event falls back", in->event_time, err);
    else if (svi_impact_tableau_only(s)) {
      svi_report(in, SVI_WARN_TOOLARGE,
                 "svi.impact: an impact at t = %g: a group of its trees has %d contacts on %d dofs, a step LCP of %d "
                 "rows, beyond the exact solvers' reach (docs/usage.md, \"Cost\"); the event falls back",
                 in->event_time, ncg, nvg, svi_impact_lcp_rows(s));
      st = SVI_ERR_CAPACITY;
    }
    char cls[1025];
    if (st == SVI_OK) {
      svi_routh_config rg = *rc;
      rg.seed = svi_rng_u64(rc->seed, SVI_STREAM_GROUP, in->tkey[in->gkey[g]]);
      svi_sample_info info;
      st = svi_routh_sample(s, &rg, NULL, (uint64_t)index, in->gout, &info, NULL, 0, NULL);
      *lcps += info.lcps;
      *steps += info.steps;
      if (!*finish) *finish = info.finish;
      svi_impact_last_impulse(s, in->glam);
      in->gke += svi_impact_kinetic_energy(s, in->gout);
      svi_classify(s, in->gout, cls);
    } else {
      memcpy(in->gout, in->gv, sizeof(double) * (size_t)nvg);
      memset(in->glam, 0, sizeof(double) * (size_t)ncg * (1 + nd));
      memset(cls, '-', (size_t)ncg);
    }
    if ((st < 0 && status >= 0) || (st > 0 && status == SVI_OK)) status = st;   /* an error over a warning */
    for (int a = 0; a < nvg; a++) v_out[in->gvmap[a]] = in->gout[a];
    for (int i = 0; i < ncg; i++) in->gcls[in->gcmap[i]] = cls[i];
    group_impulse(in, nc, nd, ncg, 1);
  }
  in->lam_ready = 1;
  return status;
}

/* 1 while v+ is sample_groups' own outcome, unchanged (no fallback, no pseudo-impulse since):
 * its energy and classes are then the groups' (in->gke, in->gcls), and imp holds no whole event */
static int groups_outcome(const svi_instance* in) {
  return in->lam_ready && !in->whole_ready;
}

/* The event's whole problem in in->imp (after sample_groups, or never set up in an event of
 * several groups) for the fallbacks and the pseudo-impulse; returns the setup's status, or
 * SVI_ERR_CAPACITY for a problem only the explicit tableau could solve (minutes: the fallback
 * then leaves the event to MuJoCo, said and counted). */
static int whole_problem(svi_instance* in, int nc, int nt) {
  if (in->whole_ready) return SVI_OK;
  svi_problem_def whole = {in->np, nc, nt, in->M, in->Jn, in->Jt, in->mu, in->ve};
  int st = svi_impact_setup(in->imp, &whole, NULL, 0);
  if (st == SVI_OK && svi_impact_tableau_only(in->imp)) st = SVI_ERR_CAPACITY;
  in->whole_ready = st == SVI_OK;
  return st;
}

/* 1/2 v^T M v for an n x n M (the event's, whose whole problem is not set up in an event of
 * several groups, a group's, or svi_equality.c's M_r) */
double svi_problem_energy(const double* M, int n, const double* v) {
  double e = 0;
  for (int i = 0; i < n; i++) {
    const double* row = M + (size_t)i * n;
    double r = 0;
    for (int j = 0; j < n; j++) r += row[j] * v[j];
    e += v[i] * r;
  }
  return 0.5 * e;
}

/* the kinetic energy of an outcome on the event's dofs: the groups' sum for sample_groups' own
 * outcome (M is block-diagonal by group), else the whole problem's */
static double outcome_energy(svi_instance* in, int nc, int nt, const double* v) {
  if (groups_outcome(in)) return in->gke;
  if (whole_problem(in, nc, nt) != SVI_OK) return svi_problem_energy(in->M, in->np, v);
  return svi_impact_kinetic_energy(in->imp, v);
}

/* Apply the law; returns the status, v_out = post-impact velocity. */
static int apply_law(svi_instance* in, svi_law law, uint64_t seed, long long index, int nc, int nt,
                     double* v_out, int* lcps, int* steps, int* finish) {
  svi_impact* s = in->imp;
  *lcps = *steps = *finish = 0;
  in->lam_ready = 0;
  if (law == SVI_LAW_SETVALUED) {
    svi_routh_config rc = svi_routh_default_config();
    svi_config_routh(&in->cfg, &rc);
    rc.seed = seed;
    if (in->ngroup > 1) return sample_groups(in, &rc, index, nc, nt, v_out, lcps, steps, finish);
    svi_sample_info info;
    int st = svi_routh_sample(s, &rc, NULL, (uint64_t)index, v_out, &info, NULL, 0, NULL);
    *lcps = info.lcps;
    *steps = info.steps;
    *finish = info.finish;
    return st;
  }
  int ws = whole_problem(in, nc, nt);   /* a fallback after sample_groups */
  if (ws != SVI_OK) {
    memcpy(v_out, in->ve, sizeof(double) * (size_t)in->np);
    return ws;
  }
  if (law == SVI_LAW_PROPAGATIVE) {
    svi_propagative_config pc = svi_propagative_default_config();
    pc.restitution = in->cfg.restitution;
    pc.seed = seed;
    svi_propagative_info info;
    int st = svi_propagative_outcome(in->prop, s, &pc, (uint64_t)index, v_out, in->lam_n, &info);
    *steps = info.reflections;
    *lcps = 1;   /* the plastic reference */
    return st;
  }
  if (law == SVI_LAW_SEQUENTIAL) {
    int order[1024];
    approach_order(in->vn, nc, order);
    int rounds = 0;
    int st = svi_law_sequential(s, order, 1000, v_out, &rounds);
    *lcps = rounds;
    return st;
  }
  svi_lcp_info li;
  int st = svi_law_simultaneous(s, NULL, v_out, &li);
  *lcps = 1;
  return st;
}

/* An outcome the plugin may write (checked in physical units at the end, whatever the law
 * reported): finite, no energy gain (Theorem 7), no contact still approaching faster than
 * 1e-6 x the largest pre-impact approach speed. */
static int acceptable(svi_instance* in, int nc, int nt, int st, const double* v, double ke0) {
  if (st < 0) return 0;
  int nv = in->np;   /* v and the rows J_n on the event's problem's coordinates */
  for (int i = 0; i < nv; i++) if (!isfinite(v[i])) return 0;
  if (outcome_energy(in, nc, nt, v) > ke0 * (1 + 1e-9) + 1e-300) return 0;
  double tol = approach_tol(in, nc);
  for (int k = 0; k < nc; k++) {
    double vn = 0;
    for (int j = 0; j < nv; j++) vn += in->Jn[(size_t)k * nv + j] * v[j];
    if (vn < -tol) return 0;
  }
  return 1;
}

/* the per-contact part of the record (the first SVI_EVENT_MAX_CONTACTS); v: the velocity after, on
 * the event's dofs (NULL under the native law, which MuJoCo's solver resolves later: NaN) */
static void record_contacts(svi_instance* in, const mjData* d, svi_event* ev, int nc, int nt,
                            int resolved, const double* v) {
  int nv = in->np, nd = 2 * nt;
  char cls[1025];
  if (resolved && groups_outcome(in)) memcpy(cls, in->gcls, (size_t)nc);
  else if (resolved && whole_problem(in, nc, nt) == SVI_OK) svi_classify(in->imp, v, cls);
  else memset(cls, '-', (size_t)nc);
  for (int k = 0; k < nc && k < SVI_EVENT_MAX_CONTACTS; k++) {
    const mjContact* c = d->contact + in->cidx[k];
    ev->geom1[k] = c->geom[0];
    ev->geom2[k] = c->geom[1];
    memcpy(ev->pos[k], c->pos, sizeof(double) * 3);
    memcpy(ev->normal[k], c->frame, sizeof(double) * 3);
    ev->vn_before[k] = in->vn[k];
    double vn = v ? 0 : NAN;
    for (int j = 0; v && j < nv; j++) vn += in->Jn[(size_t)k * nv + j] * v[j];
    ev->vn_after[k] = vn;
    ev->cls[k] = resolved ? cls[k] : '-';
    ev->kept[k] = in->kept[k];
    if (!resolved) continue;
    double ln = in->lam[k], ft[2] = {0, 0};
    for (int t = 0; t < nt; t++) ft[t] = in->lam[nc + k * nd + 2 * t] - in->lam[nc + k * nd + 2 * t + 1];
    if (nt == 1) {   /* back to MuJoCo's (t1, t2) frame */
      double x = ft[0];
      ft[0] = in->tdir[2 * k] * x;
      ft[1] = in->tdir[2 * k + 1] * x;
    }
    ev->impulse[k][0] = ln;
    ev->impulse[k][1] = ft[0];
    ev->impulse[k][2] = ft[1];
    ev->impulse_normal += ln;
  }
  ev->cls[nc < SVI_EVENT_MAX_CONTACTS ? nc : SVI_EVENT_MAX_CONTACTS] = 0;
}

/* A preview's record of this event (the preview slot, or a batch's): empty, with its index */
static void preview_record(svi_instance* in, const mjModel* m, mjData* d, svi_event* ev) {
  memset(ev, 0, sizeof(*ev));
  ev->index = (int)svi_state(m, d, in)[SVI_STATE_NEXT_INDEX];
}

/* The record of this event: in the log, or the preview slot. */
static svi_event* new_record(svi_instance* in, const mjModel* m, mjData* d) {
  if (!in->preview) return svi_log_append(in, m, d);
  in->replaced = 0;
  preview_record(in, m, d, &in->preview_event);
  return &in->preview_event;
}

static void count_event(svi_instance* in, const svi_event* ev) {
  in->index_next = ev->index + 1;
  in->pending = 1;
  in->pending_index = ev->index;
  in->pending_time = ev->time;
  if (in->preview || in->replaced || ev->index < in->counted_next) return;
  in->counted_next = ev->index + 1;
  in->counters.events++;
  in->counters.lcps += ev->lcps;
  in->counters.fallbacks += ev->fallback >= 1;
  in->counters.finished_ap += ev->fallback == 1;
  if (ev->ke_before > 0 && ev->ke_after / ev->ke_before > in->counters.max_energy_ratio)
    in->counters.max_energy_ratio = ev->ke_after / ev->ke_before;
  in->measure_pending = 1;
}

/* The impulse lambda_bar = [lambda_n; lambda_D] of the law that produced v+, into in->lam: the
 * propagative law is frictionless and keeps its own normal impulses. */
static void law_impulse(svi_instance* in, svi_law used, int nc, int nt) {
  if (used == SVI_LAW_SETVALUED && in->lam_ready) return;   /* the groups' (sample_groups) */
  if (used != SVI_LAW_PROPAGATIVE) {
    svi_impact_last_impulse(in->imp, in->lam);
    return;
  }
  int nb = nc * (1 + 2 * nt);
  memset(in->lam, 0, sizeof(double) * (size_t)nb);
  memcpy(in->lam, in->lam_n, sizeof(double) * (size_t)nc);
}

/* The pseudo-impulse on each group of the event as its own problem (an event of several groups,
 * split = groups): W_RR and the projection (80) are block-diagonal by group and the keep rule's
 * tests are per contact, so each group's mode is chosen, and its tolerances scaled, from its own
 * problem, and a group's v+ stays independent of what else lands (theory section 7).  vplus, in->lam
 * and in->kept are updated; for sample_groups' own outcome the energy gke and the classes gcls
 * are the groups' again.  Returns the contacts kept. */
static int pseudo_groups(svi_instance* in, double* vplus, int nc, int nt) {
  svi_impact* s = in->imp;
  int nd = 2 * nt, nkept = 0, own = groups_outcome(in);
  if (own) in->gke = 0;
  for (int g = 0; g < in->ngroup; g++) {
    int nvg, ncg;
    svi_problem_def def = group_problem(in, g, nc, nt, &nvg, &ncg);
    if (ncg == 0) continue;
    gather(vplus, in->gvmap, nvg, in->gout);
    int st = svi_impact_setup(s, &def, NULL, 0);
    in->whole_ready = 0;
    if (st != SVI_OK) {   /* sample_groups set it up for this outcome; keeps nothing */
      if (own) in->gke += svi_problem_energy(in->gM, nvg, in->gout);
      continue;
    }
    gather(in->ae, in->gvmap, nvg, in->gae);
    group_impulse(in, nc, nd, ncg, 0);
    int n = svi_pseudo_impulse(in, s, in->glam, in->gv, in->gae, in->gout, in->gkept);
    nkept += n;
    for (int i = 0; i < ncg; i++) in->kept[in->gcmap[i]] = in->gkept[i];
    if (n > 0) {   /* the projection: the group's v+, impulse and classes */
      char cls[1025];
      for (int a = 0; a < nvg; a++) vplus[in->gvmap[a]] = in->gout[a];
      group_impulse(in, nc, nd, ncg, 1);
      if (own) {
        svi_classify(s, in->gout, cls);
        for (int i = 0; i < ncg; i++) in->gcls[in->gcmap[i]] = cls[i];
      }
    }
    if (own) in->gke += svi_impact_kinetic_energy(s, in->gout);
  }
  return nkept;
}

/* Contacts pressed by the continuous forces are kept (Johnson's pseudo-impulse): needs
 * qacc_smooth at v-, which mj_fwdVelocity has not reached yet when compute runs (qfrc_bias is
 * formed after mj_passive), so the velocity stage is run once at v- first (once per event: *ae_done;
 * d's qvel is still v- for every outcome of a batch).  An event of several groups keeps its
 * contacts group by group (pseudo_groups). */
static int pseudo_impulse(svi_instance* in, const mjModel* m, mjData* d, double* vplus, int nc, int nt,
                          int* ae_done) {
  for (int k = 0; k < nc; k++) in->kept[k] = 0;
  if (in->cfg.pseudo_impulse <= 0) return 0;
  if (in->ngroup == 1 && whole_problem(in, nc, nt) != SVI_OK) return 0;
  if (!*ae_done) {
    in->busy = 1;
    mj_fwdVelocity(m, d);
    mj_fwdActuation(m, d);
    mj_fwdAcceleration(m, d);
    in->busy = 0;
    event_gather(in, d->qacc_smooth, in->ae);
    if (in->eq_reduced) svi_equality_project(in, in->ae, in->ae);   /* the constrained a_s */
    *ae_done = 1;
  }
  if (in->ngroup > 1) return pseudo_groups(in, vplus, nc, nt);
  return svi_pseudo_impulse(in, in->imp, in->lam, in->ve, in->ae, vplus, in->kept);
}

/* The law for the event with this index: a resample's one-off choice, else the override or the
 * configuration; the seed: the resample's, else the configured (or set) one under the run's stream
 * (svi_state_stream_index: an integer in [1, 2^53] keys a stream of its own, anything else none). */
static svi_law event_law(const svi_instance* in, long long index, double stream, uint64_t* seed) {
  *seed = stream >= 1 && stream <= 0x1p53 && stream == floor(stream)
              ? svi_rng_u64(in->cfg.seed, SVI_STREAM_RUN, (uint64_t)stream) : in->cfg.seed;
  if (in->has_once && in->once_index == index) {
    *seed = in->once_seed;
    return (svi_law)in->once_law;
  }
  return svi_current_law(in);
}

/* What the outcomes of one event share: built once by svi_events_compute. */
typedef struct {
  svi_law   law;
  long long index;          /* the event's sample index */
  int       nc, nt, napproach;
  int       ae_done;        /* pseudo_impulse has read qacc_smooth at v- */
  double    ke0, ke_model;  /* kinetic energy before: the event's dofs' (the checks'), the model's */
  double    removed;        /* what projecting v- onto the equality rows took off (svi_equality.c) */
} event_ctx;

/* One outcome of the event, for one seed: the law, the checks in physical units and the
 * fallbacks, the pseudo-impulse, into in->vplus (the problem's coordinates), *vout (the same on the
 * event's dofs: in->vplus, or N in->vplus under equality constraints) and the record ev; d is not
 * written.  Returns 1 if vplus is the outcome, 0 if no law gave a valid one (left to MuJoCo). */
static int resolve_outcome(svi_instance* in, const mjModel* m, mjData* d, event_ctx* e, uint64_t seed,
                           svi_event* ev, const double** vout) {
  double* vplus = in->vplus;
  int nc = e->nc, nt = e->nt, lcps = 0, steps = 0, finish = 0, fallback = 0;
  svi_law law = e->law;
  int st = apply_law(in, law, seed, e->index, nc, nt, vplus, &lcps, &steps, &finish);
  if (finish == SVI_FINISH_AP) {
    fallback = 1;
    if (!in->preview)
      svi_report(in, SVI_WARN_FINISH,
                 "svi.impact: the impact at t = %g was still colliding after max_steps = %d Routh steps and was "
                 "finished by the simultaneous law (31) (a fallback, counted in finished_ap); a larger max_steps, "
                 "step or step_growth gives the set-valued law's own outcomes (docs/usage.md)", d->time,
                 in->cfg.max_steps);
  }
  if (!acceptable(in, nc, nt, st, vplus, e->ke0) && law != SVI_LAW_SIMULTANEOUS) {
    int l2 = 0, s2 = 0, f2 = 0;
    st = apply_law(in, SVI_LAW_SIMULTANEOUS, seed, e->index, nc, nt, vplus, &l2, &s2, &f2);
    lcps += l2;
    fallback = 2;
  }
  int native = !acceptable(in, nc, nt, st, vplus, e->ke0);
  if (native) {
    fallback = 3;
    svi_report(in, SVI_WARN_FALLBACK,
               "svi.impact: no law gave a valid outcome for the impact at t = %g (status %s); its velocity is left "
               "to MuJoCo's solver (counted in the event log)", d->time, svi_status_string(st));
  }
  /* the event's impulse: the law's, plus the pseudo-impulse's projection (it adds to in->lam) */
  if (!native) law_impulse(in, fallback == 2 ? SVI_LAW_SIMULTANEOUS : law, nc, nt);
  ev->nkept = native ? 0 : pseudo_impulse(in, m, d, vplus, nc, nt, &e->ae_done);
  double u = 0, u0 = 0;
  *vout = native ? NULL : physical(in, vplus);
  int broken = native ? -1 : side_broken(in, d, nc, *vout, &u, &u0);
  if (broken >= 0) {   /* the law has no rows for it: the outcome is not the constrained system's */
    int row = in->side[broken], type = d->efc_type[row], id = d->efc_id[row];
    int obj = type == mjCNSTR_EQUALITY ? mjOBJ_EQUALITY : type == mjCNSTR_LIMIT_JOINT ? mjOBJ_JOINT : mjOBJ_TENDON;
    const char* name = mj_id2name(m, obj, id);
    svi_report(in, SVI_WARN_CONSTRAINT,
               "svi.impact: the impact at t = %g would %s %d%s%s%s (its row's velocity %g before, %g after), which "
               "svi.impact's impact law does not model; the impact is left to MuJoCo's solver (counted in the event "
               "log; docs/usage.md, \"What happens inside mj_step\")", d->time,
               type == mjCNSTR_EQUALITY ? "break equality constraint" : type == mjCNSTR_LIMIT_JOINT ?
               "drive into the limit of joint" : "drive into the limit of tendon", id, name ? " ('" : "",
               name ? name : "", name ? "')" : "", u0, u);
    native = 1;
    fallback = 3;
    ev->nkept = 0;
  }
  if (native) for (int k = 0; k < nc; k++) in->kept[k] = 0;

  ev->time = d->time;
  ev->ncontact = nc;
  ev->napproach = e->napproach;
  ev->law = law;
  ev->seed = seed;
  ev->lcps = lcps;
  ev->steps = steps;
  ev->fallback = fallback;
  ev->status = st;
  ev->nt = nt;
  ev->ke_before = e->ke_model;
  /* the model's energy after: the rest's part unchanged, the event's dofs' the outcome's; under
   * equality constraints the outcome starts from the projection of v-, which took `removed` off */
  ev->ke_after = native ? e->ke_model : e->ke_model - e->ke0 - e->removed + outcome_energy(in, nc, nt, vplus);
  if (ev->ke_after < 0) ev->ke_after = 0;   /* a body stopped dead: the difference's rounding */
  record_contacts(in, d, ev, nc, nt, !native, native ? in->ve : vplus);
  return !native;
}

/* An impact left to MuJoCo without an event record (more than max_contacts contacts, a sleeping
 * body, a problem the law cannot take): counted in fallbacks once an impact.  MuJoCo's soft contact
 * takes a few steps to stop the approach, and the impact is detected again in each of them: a step
 * right after one that left an impact to MuJoCo (or the same step again, mj_forward) is the same
 * impact.  A state restored to an earlier time counts again. */
static void count_left(svi_instance* in, const mjModel* m, const mjData* d) {
  if (in->preview) return;
  double dt = d->time - in->left_time;
  if (!(dt >= 0 && dt <= 1.5 * m->opt.timestep)) in->counters.fallbacks++;
  in->left_time = d->time;
}

int svi_events_compute(svi_instance* in, const mjModel* m, mjData* d) {
  if (m->opt.integrator == mjINT_RK4 || m->nv == 0 || !in->imp) return 0;
  int napproach = 0;
  svi_problem_def def;
  double* state = svi_state(m, d, in);
  long long index = (long long)state[SVI_STATE_NEXT_INDEX];
  int done = in->pending && in->pending_index == index && in->pending_time == d->time;
  in->index_next = done ? index + 1 : index;
  if (d->ncon == 0 && state[SVI_STATE_NTOUCH] == 0) {   /* nothing touches (most steps of flight) */
    in->ntouch_next = 0;
    in->touch_next_valid = 1;
    return 0;
  }
  int nc = detect(in, m, d, &napproach);
  if (nc == -2) count_left(in, m, d);
  if (nc <= 0 || in->suspend) return 0;
  uint64_t seed;
  svi_law law = event_law(in, index, state[SVI_STATE_STREAM], &seed);
  int nv = m->nv;

  if (law == SVI_LAW_NATIVE) {   /* logged, left to MuJoCo's solver */
    svi_event* ev = new_record(in, m, d);
    ev->time = d->time;
    ev->ncontact = nc;
    ev->napproach = napproach;
    ev->law = law;
    ev->seed = seed;
    /* the kinetic energy before; after is MuJoCo's, over its next steps: not measured here */
    ev->ke_before = model_energy(in, m, d);
    ev->ke_after = NAN;
    for (int k = 0; k < nc; k++) in->kept[k] = 0;
    record_contacts(in, d, ev, nc, 1, 0, NULL);
    count_event(in, ev);
    in->measure_pending = 0;
    return 0;
  }

  int nt = build_rows(in, m, d, nc), nve = in->nve;
  event_mass(in, m, d);
  event_rows(in, nv, nc, in->Jn);
  event_rows(in, nv, nc * nt, in->Jt);
  event_gather(in, d->qvel, in->ve);
  in->nside = side_rows(in, m, d);
  if (in->nside < 0) {
    svi_report(in, SVI_WARN_CONSTRAINT, "svi.impact: an impact at t = %g is left to MuJoCo: its bodies are under more "
               "than %d equality and limit rows", d->time, in->side_max);
    count_left(in, m, d);
    return 0;
  }
  /* equality rows: the problem in coordinates that keep them (svi_equality.c) */
  double ke_ev = svi_problem_energy(in->M, nve, in->ve), removed = 0;
  in->np = nve;
  /* several groups under the set-valued law: each is set up (and checked) as its own problem by
   * sample_groups, and the whole event only where a fallback or the pseudo-impulse needs it */
  in->ngroup = in->cfg.split && law == SVI_LAW_SETVALUED ? svi_events_groups(in, m, d, nc) : 1;
  int red = in->eqA ? svi_equality_reduce(in, m, nc, nt, in->ngroup, ke_ev, &removed) : 0;
  in->eq_reduced = red > 0;
  if (red < 0 || removed > 1e-3 * ke_ev) {
    if (red < 0)
      svi_report(in, SVI_WARN_CONSTRAINT, "svi.impact: an impact at t = %g is left to MuJoCo: its bodies' equality "
                 "constraints leave them no motion (or a singular mass matrix)", d->time);
    else
      svi_report(in, SVI_WARN_CONSTRAINT, "svi.impact: an impact at t = %g is left to MuJoCo: its bodies' equality "
                 "constraints move before the impact (a moving mocap body, or a soft constraint stretched: holding "
                 "them would take %.2g %% of the bodies' kinetic energy, beyond 0.1 %%)", d->time,
                 100 * removed / fmax(ke_ev, 1e-300));
    count_left(in, m, d);
    return 0;
  }
  svi_problem_def p = {in->np, nc, nt, in->M, in->Jn, in->Jt, in->mu, in->ve};
  def = p;
  char err[256];
  in->event_time = d->time;
  int st = in->ngroup > 1 ? SVI_OK : svi_impact_setup(in->imp, &def, err, sizeof(err));
  in->whole_ready = in->ngroup == 1 && st == SVI_OK;
  if (st != SVI_OK) {
    svi_report(in, SVI_WARN_SETUP, "svi.impact: an impact at t = %g is left to MuJoCo: %s", d->time, err);
    count_left(in, m, d);
    return 0;
  }
  if (in->whole_ready && svi_impact_tableau_only(in->imp)) {   /* minutes an event: left to MuJoCo */
    svi_report(in, SVI_WARN_TOOLARGE,
               "svi.impact: an impact at t = %g is left to MuJoCo: its event has %d contacts on %d dofs, a step "
               "LCP of %d rows, beyond the exact solvers' reach (the dense Lemke's product form holds 1024 "
               "rows, the low-rank Lemke 64 dofs; the explicit tableau would take minutes an event; "
               "docs/usage.md, \"Cost\")", d->time, nc, in->np, svi_impact_lcp_rows(in->imp));
    count_left(in, m, d);
    return 0;
  }

  /* the check's energy is the event's dofs'; the record's the model's, the rest's part unchanged */
  double ke0 = in->whole_ready ? svi_impact_kinetic_energy(in->imp, in->ve) : svi_problem_energy(in->M, in->np, in->ve);
  event_ctx e = {law, index, nc, nt, napproach, 0, ke0, model_energy(in, m, d), in->eq_reduced ? removed : 0};
  /* svi_event_preview_many: the seeds before the last one, each as its own preview would resolve
   * it (d keeps v- for the next) */
  for (int k = 0; in->preview && k < in->batch_n; k++) {
    svi_event local, *bev = in->batch_rec ? in->batch_rec + k : &local;
    preview_record(in, m, d, bev);
    const double* vp;
    int ok = resolve_outcome(in, m, d, &e, in->batch_seed[k], bev, &vp);
    double* q = in->batch_qvel + (size_t)k * nv;
    memcpy(q, d->qvel, sizeof(mjtNum) * (size_t)nv);
    if (ok) for (int j = 0; j < nve; j++) q[in->edof[j]] = vp[j];
  }
  in->batch_done = in->preview;
  svi_event* ev = new_record(in, m, d);
  const double* vp;
  int native = !resolve_outcome(in, m, d, &e, seed, ev, &vp);
  if (!native) for (int j = 0; j < nve; j++) d->qvel[in->edof[j]] = vp[j];
  count_event(in, ev);
  if (native) return 0;

  /* the velocity stage again, from the post-impact velocity */
  in->busy = 1;
  mj_fwdVelocity(m, d);
  in->busy = 0;
  collect_touching(in, m, d);
  return 1;
}

void svi_events_measure_native(svi_instance* in, const mjModel* m, const mjData* d) {
  svi_event* ev = svi_log_last(in);
  if (!ev) return;
  double imp = 0;
  int nrec = ev->ncontact < SVI_EVENT_MAX_CONTACTS ? ev->ncontact : SVI_EVENT_MAX_CONTACTS;
  for (int i = 0; i < d->ncon; i++) {
    const mjContact* c = d->contact + i;
    if (c->efc_address < 0) continue;
    for (int k = 0; k < nrec; k++) {
      if (c->geom[0] == ev->geom1[k] && c->geom[1] == ev->geom2[k]) {
        mjtNum f[6];
        mj_contactForce(m, d, i, f);
        imp += f[0] * m->opt.timestep;
        break;
      }
    }
  }
  ev->native_impulse = imp;
}
