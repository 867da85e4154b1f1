/* svi_mujoco_internal.h -- the plugin instance, shared by the adapter's files (not installed). */
#ifndef SVI_MUJOCO_INTERNAL_H_
#define SVI_MUJOCO_INTERNAL_H_

#include "svi/svi_mujoco.h"

/* The instance's settings of the set-valued law (step, step_abs, max_steps, step_growth, branch)
 * into r; its seed and budget are the caller's (svi_config.c) */
void svi_config_routh(const svi_config* cfg, svi_routh_config* r);

/* The instance's part of mjData.plugin_state (MuJoCo copies, resets and saves it with the state:
 * mj_copyData, mj_getState/mj_setState with mjSTATE_PLUGIN).  It holds what decides the next
 * step: the event counter and the contacts touching at the end of the previous step. */
enum {
  SVI_STATE_NEXT_INDEX = 0,   /* running event number: the next event's sample index */
  SVI_STATE_NTOUCH     = 1,   /* touching contacts recorded */
  SVI_STATE_STREAM     = 2,   /* the run's stream (svi_state_stream_index): 0, none */
  SVI_STATE_TOUCH      = 3    /* max_contacts x 12: geom1, geom2, contact point, steps unreported,
                                 the point in geom1's and geom2's frames (gapless pairs) */
};
#define SVI_TOUCH_SIZE 12
#define SVI_CARRY_STEPS 20   /* steps a gapless pair's unreported touching contact is remembered */

typedef struct svi_pseudo_work svi_pseudo_work;   /* svi_pseudo.c */

struct svi_instance {
  svi_config cfg;
  int        id;                /* plugin instance id in the model */
  int        nv, nc_max, nstate;
  int        law_override;      /* -1 = use cfg.law */
  int        has_once, once_law;
  long long  once_index;        /* resample: law and seed for the event with this index only */
  uint64_t   once_seed;
  int        busy;              /* inside our own nested mj_fwdVelocity */
  int        suspend;           /* detect only (svi_current_problem) */
  int        preview;           /* resolving for svi_event_preview: no log, no counters */
  svi_event  preview_event;     /* its record */
  /* svi_event_preview_many: the seeds resolved at the same event before preview's own (the
   * last), their qvel (batch_n x nv) and records (NULL: not kept); batch_done: compute ran them */
  const uint64_t* batch_seed;
  int        batch_n, batch_done;
  double*    batch_qvel;
  svi_event* batch_rec;
  svi_impact* imp;
  svi_propagative* prop;        /* the propagative law's workspace */
  double* lam_n;                /* its normal impulses (nc_max) */
  /* per-event buffers (one block, sized at init) */
  double* block;
  double *M, *Jn, *Jt, *mu, *vn, *J1, *J2, *tdir, *lam, *vplus;
  double *ve, *ae;              /* the event's dofs of v- and of qacc_smooth (nve) */
  int*    cidx;                 /* MuJoCo contact index of each problem contact */
  int*    kept;                 /* pseudo-impulse: contact kept */
  int*    tree;                 /* 2 ntree: union-find parents of the kinematic trees, then the
                                   mark of each root (the trees an event's contacts couple) */
  int*    edof;                 /* the event's dofs (nve, increasing): its trees' dofs */
  int     nve;
  int     trees_in_order;       /* tree t's dofs follow tree t-1's (else events take all nv dofs) */
  /* the event's groups (svi_events.c, event_groups): sets of trees no contact of the event
   * couples, each sampled as its own problem by the set-valued law (split = groups) */
  int     ngroup;
  int    *gof_root;             /* ntree: a set's root tree -> its group (-1: none) */
  int    *gkey;                 /* ntree: group -> its smallest tree (keys its random stream) */
  uint64_t *tkey;               /* ntree: a tree's key (its first body's name, else its index) */
  int    *gcon, *gdof;          /* nc_max, nv: the group of each event contact and event dof */
  int    *gcmap, *gvmap;        /* nc_max, nv: one group's contacts and dofs (event indices) */
  int    *gkept;                /* nc_max: one group's kept contacts (the pseudo-impulse) */
  double *gblock;               /* one group's problem: M, J_n, J_t, mu, v-, v+, qacc_smooth,
                                   lambda_bar */
  double *gM, *gJn, *gJt, *gmu, *gv, *gout, *gae, *glam;
  int     lam_ready;            /* apply_law assembled in->lam from the groups' impulses, their
                                   outcome's energy gke and classes gcls */
  int     whole_ready;          /* imp holds the event's whole problem (not a group's) */
  /* MuJoCo's constraint rows on the event's trees that the law has no rows for (equality
   * constraints, active joint and tendon limits; svi_events.c, side_rows): MuJoCo's row index
   * side[i], the row on the event's dofs Jside + i nve, then its velocity from the other dofs and
   * before the impact at Jside + side_max nve + 2 i */
  int     side_max, nside;
  int*    side;
  int*    side_eq;              /* side row i is an equality row */
  double* Jside;
  /* equality constraints in the law (svi_equality.c): the problem in coordinates y, v = N y, of
   * np = nve - rank(J_e) values; np = nve and eq_reduced = 0 without equality rows.  Buffers made
   * at init for a model with equality constraints: J_e^T's reflectors (side_max x nv), N, M N and
   * M_r's Cholesky factor (nv x nv each), scratch (nv), the physical v+ (nv) */
  int     np, eq_reduced;
  double *eqA, *eqbeta, *eqnrm, *eqN, *eqMN, *eqL, *eqtmp, *eqtmp2, *vphys;
  int    *eqmap, *eqid, *eqlab;     /* nv each: a group's dofs; coordinate c's dof if its column
                                       of N is that dof's unit vector, else -1; the new coordinates'
                                       groups */
  int    *eqrows, *eqcol;           /* the dofs the equality rows touch, group after group (nv);
                                       a column of N that is not a unit vector: its rows' start in
                                       eqrows, their number, its values' start in eqN (3 nv) */
  int    *eqexact;                  /* nv: coordinate c is a unit column whose kinematic tree has
                                       no dof the rows touch (M_r does not couple it to them: its
                                       y- is v-'s own entry, exactly) */
  double  event_time;           /* d->time of the event being resolved (messages) */
  double  gke;
  char    gcls[1025];
  /* the touching contacts found by the last compute, committed to plugin_state by advance */
  double* touch_next;
  int     ntouch_next, touch_next_valid;
  long long index_next;          /* the event counter after this step (committed by advance) */
  long long counted_next;        /* the counters hold events 0 .. counted_next - 1 of this episode:
                                    one resolved again after a restore is not counted twice */
  int     pending;               /* an event was resolved at (pending_index, pending_time) and not
                                    committed yet: a later mj_forward at that state keeps it */
  long long pending_index;
  double  pending_time;
  int     replaced;              /* the last record rewrote an entry (same event, same state) */
  /* event log: a ring of log_cap events with their pre-step states (mjSTATE_INTEGRATION) */
  svi_event* events;
  double*    snaps;
  int        log_cap, log_start, log_count, snap_size;
  int        measure_pending;   /* the last event's native impulse is measured in advance */
  svi_counters counters;
  long long  pseudo_ambiguous;  /* keep rule with several valid modes (tie-broken) */
  long long  pseudo_demoted;    /* sticking contacts demoted to sliding by the friction cone */
  svi_pseudo_work* pseudo;      /* the pseudo-impulse's workspace (pseudo_impulse > 0) */
  int        warned;            /* bit set of the messages already sent (one each) */
  int        quiet;             /* svi_current_problem: keep the message, print nothing */
  int        contactfull_seen;  /* d->warning[mjWARN_CONTACTFULL].number at the last compute */
  double     left_time;         /* d->time of the last impact left to MuJoCo without an event
                                   (count_left; -inf: none) */
  int        gapless_pairs;     /* some colliding geom pair has margin + gap < band (at init) */
  char       message[700];
};

/* messages sent once per instance */
enum {
  SVI_WARN_RK4 = 1 << 0, SVI_WARN_PASSIVE = 1 << 1, SVI_WARN_OVERFLOW = 1 << 2,
  SVI_WARN_SETUP = 1 << 3, SVI_WARN_SLEEP = 1 << 4, SVI_WARN_FLEX = 1 << 5,
  SVI_WARN_TOUCH = 1 << 6, SVI_WARN_CONTACTFULL = 1 << 7, SVI_WARN_FALLBACK = 1 << 8,
  SVI_WARN_NOGAP = 1 << 9, SVI_WARN_UNUSED = 1 << 10, SVI_WARN_TOOLARGE = 1 << 11,
  SVI_WARN_FINISH = 1 << 12, SVI_WARN_CONSTRAINT = 1 << 13
};
/* report a message once per instance and kind: mju_warning and svi_instance_message */
void svi_report(svi_instance* in, int kind, const char* fmt, ...);

/* svi_plugin.c: the instance's plugin_state */
double* svi_state(const mjModel* m, mjData* d, const svi_instance* in);

/* svi_log.c */
svi_event* svi_log_append(svi_instance* in, const mjModel* m, mjData* d);
svi_event* svi_log_last(svi_instance* in);
int        svi_log_alloc(svi_instance* in, int cap);
void       svi_log_clear(svi_instance* in);
void       svi_log_copy(svi_instance* dst, const svi_instance* src);

/* svi_events.c: detect and resolve an impact event in d (inside compute); returns 1 if one was
 * resolved.  svi_events_measure_native: after the step, the normal impulse MuJoCo's solver
 * applied at the last event's contacts. */
int  svi_events_compute(svi_instance* in, const mjModel* m, mjData* d);
void svi_events_measure_native(svi_instance* in, const mjModel* m, const mjData* d);
/* the event's groups (split = groups): its sets of trees into in->gcon, in->gdof (by event dof) and
 * in->gkey; returns their number (1 when the dofs are not in tree order) */
int  svi_events_groups(svi_instance* in, const mjModel* m, const mjData* d, int nc);
/* the impact problem of the current state (contacts detected, rows built); 0 if none */
int  svi_events_problem(svi_instance* in, const mjModel* m, mjData* d, svi_problem_def* def,
                        int* napproach);

/* svi_pseudo.c: Johnson's pseudo-impulse on the problem in s (the event's, or one group's) with
 * the law's impulse lam (lambda_bar, s's contacts); updates vplus and lam, marks kept[k]; returns
 * how many */
int svi_pseudo_impulse(svi_instance* in, const svi_impact* s, double* lam, const double* vminus,
                       const double* as, double* vplus, int* kept);
svi_pseudo_work* svi_pseudo_create(int nv, int nc_max);

/* svi_equality.c: the event's problem (in->M, Jn, Jt, ve on its nve dofs) in coordinates y that
 * satisfy its equality rows (in->side, side_eq, Jside), group by group (ngroup groups in in->gdof,
 * relabelled for the new coordinates; a group without equality rows keeps its dofs, bit for bit):
 * in place, in->np set, *removed the kinetic energy the projection of v- takes off (ke: v-'s, on
 * the event's dofs).  Returns 1 if reduced, 0 if there are no equality rows,
 * -1 if they leave no motion or M_r is not positive definite.  expand: v = N y (nve values);
 * project: y = M_r^-1 N^T M a for a generalised acceleration a on the event's dofs (y may be a). */
int  svi_equality_reduce(svi_instance* in, const mjModel* m, int nc, int nt, int ngroup, double ke,
                         double* removed);
/* svi_events.c: 1/2 v^T M v for an n x n M */
double svi_problem_energy(const double* M, int n, const double* v);
void svi_equality_expand(const svi_instance* in, const double* y, double* v);
void svi_equality_project(svi_instance* in, const double* a, double* y);
void             svi_pseudo_destroy(svi_pseudo_work* w);

#endif
