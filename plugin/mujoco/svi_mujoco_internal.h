/* svi_mujoco_internal.h -- the plugin instance, shared by the adapter's files (not installed). */
#ifndef SVI_MUJOCO_INTERNAL_H_
#define SVI_MUJOCO_INTERNAL_H_

#include "svi/svi_mujoco.h"

struct svi_instance {
  const mjModel* m;
  mjData*        d;
  int            nv, nconmax;         /* of the model attached (stale-entry check) */
  svi_config     cfg;
  int            law_override;     /* -1 = use cfg.law */
  int            has_once, once_law;
  uint64_t       once_seed;        /* resample: law and seed for the next event only */
  svi_impact*    imp;
  int            nc_max;
  /* per-step buffers (one block) */
  double* block;
  double *M, *Jn, *Jt, *mu, *vn, *J1, *J2, *tdir, *lam;
  int*    cidx;                    /* MuJoCo contact index of each problem contact */
  int*    kept;                    /* pseudo-impulse: contact kept */
  /* event log */
  svi_event* events;
  int        log_cap, log_start, log_count;
  int        snap_size;
  double*    pending;              /* state at the start of the current step */
  double*    snaps;                /* log_cap snapshots */
  long long  next_index;           /* running event number */
  svi_counters counters;
  int        warned_overflow, warned_setup;
  int        preview;              /* resolving for svi_event_preview: no log, no counters */
  svi_event  preview_event;        /* its record */
  long long  pseudo_ambiguous;     /* keep rule with several valid modes (tie-broken) */
  /* contacts touching in the previous step (sustained contact never triggers an event) */
  int        touch_cap, ntouch, ntouch_next;
  double*    touch;                /* touch_cap x 5: geom1, geom2, pos */
  double*    touch_next;
  double*    touch_save;           /* svi_event_preview keeps the live list here */
};

/* svi_step.c: a new log entry holding the pending snapshot */
svi_event* log_append_event(svi_instance* in);

/* svi_impacts.c: detect and resolve this step's impact event; returns 1 if there was one */
int  svi_resolve_impacts(svi_instance* in, const mjModel* m, mjData* d, svi_law law);
/* after mj_step2: the normal impulse MuJoCo's solver applied at the last event's contacts */
void svi_measure_native(svi_instance* in, const mjModel* m, mjData* d);

/* svi_pseudo.c: Johnson's pseudo-impulse; updates vplus, marks kept[k]; returns how many */
int svi_pseudo_impulse(svi_instance* in, const double* vminus, const double* as, double* vplus,
                       int* kept);

#endif
