/* svi_mujoco.h -- svi.impact, the set-valued impact plugin for MuJoCo (>= 3.10; tested on 4.0.1).
 *
 * A model declares the plugin the MuJoCo way; an instance no element references is a model-level
 * plugin:
 *
 *   <extension>
 *     <plugin plugin="svi.impact">
 *       <instance name="impacts">
 *         <config key="law"  value="setvalued"/>
 *         <config key="seed" value="7"/>
 *       </instance>
 *     </plugin>
 *   </extension>
 *
 * Loading libsvi_impact.so registers the plugin (mj_loadPluginLibrary, mj_loadAllPluginLibraries,
 * or linking the library).  From then on plain mj_step (and mj_forward, mj_step1/mj_step2) resolve
 * impacts: the plugin's PASSIVE compute runs inside mj_fwdVelocity, after collision detection and
 * before MuJoCo forms efc_vel, efc_aref and qfrc_bias from qvel.  At an impact event it resolves
 * the impact with the configured law, writes qvel and re-runs the velocity stage, so MuJoCo's
 * solver sees the post-impact velocity.  Every key, its unit, default and range: docs/usage.md.
 *
 * The functions below reach an mjData's instance (its event log, resampling, the set preview).
 */
#ifndef SVI_MUJOCO_H_
#define SVI_MUJOCO_H_

#include <stddef.h>
#include <stdint.h>

#include <mujoco/mujoco.h>

#include "svi/svi_core.h"

#ifdef __cplusplus
extern "C" {
#endif

#define SVI_PLUGIN_NAME "svi.impact"

typedef enum {
  SVI_LAW_SETVALUED    = 0,   /* Halm & Posa: one sample of the set (Algorithm 1) per impact */
  SVI_LAW_SIMULTANEOUS = 1,   /* Anitescu-Potra, eq. (31) */
  SVI_LAW_SEQUENTIAL   = 2,   /* single-contact impacts, fastest-approaching contact first */
  SVI_LAW_NATIVE       = 3,   /* pass-through: MuJoCo's soft contact resolves the impact */
  SVI_LAW_PROPAGATIVE  = 4    /* Seghete & Murphey: elastic single-contact impacts propagated in a
                                 random order, blended with the plastic outcome by the restitution
                                 e (v+ = v_p + e (v_e - v_p)); frictionless */
} svi_law;

#define SVI_NLAW 5
const char* svi_law_name(svi_law law);           /* "setvalued", ...; "?" if out of range */
int         svi_law_from_name(const char* name);  /* the law, or -1 */

/* The configuration of an instance: constant for a model (MuJoCo's mjModel/mjData split). */
typedef struct {
  svi_law    law;              /* law */
  double     step;             /* step: Routh step / reference impulse */
  double     step_abs;         /* step_abs: Routh step in N s (0 = use step) */
  int        max_steps;        /* max_steps */
  double     step_growth;      /* step_growth: budget growth a step after the first half (0: 4
                                  under step, 1 under step_abs) */
  uint64_t   seed;             /* seed */
  svi_branch branch;           /* branch */
  int        friction_dirs;    /* friction_dirs: 4 (pyramid; planar motion reduces to 2) or 2 */
  double     window;           /* window: simultaneity window, s */
  double     impact_speed;     /* impact_speed: slower approach = resting contact, m/s */
  double     band;             /* band: active-contact distance band, m */
  double     pseudo_impulse;   /* pseudo_impulse: Johnson's delta_t, s (0 = off) */
  int        max_contacts;     /* max_contacts: contacts one event may hold (and the touching list) */
  int        log_events;       /* log_events: events kept in the log (ring) */
  double     restitution;      /* restitution: e of the propagative law, in [0, 1] */
  int        split;            /* split: 1 ("groups") = the set-valued law samples each group of
                                  trees that no contact couples as its own problem; 0 ("off") */
} svi_config;

svi_config svi_default_config(void);

/* The config keys, in the order of docs/usage.md (NULL-terminated). */
const char* const* svi_config_keys(void);

/* Set one key from its MJCF string value.  Returns 0, or -1 with a message naming the key and
 * what is allowed (unknown key, malformed number, value out of range). */
int svi_config_set(svi_config* cfg, const char* key, const char* value, char* err, int errlen);

/* The svi.impact instance of m (plugin instance id), or -1 if the model does not declare one. */
int svi_plugin_instance(const mjModel* m);

/* The configuration of m's svi.impact instance: 1 if the model declares the plugin, 0 if not
 * (cfg = defaults), -1 with a message if a value is bad or the model cannot be handled (RK4, a
 * passive plugin after svi.impact). */
int svi_config_from_model(const mjModel* m, svi_config* cfg, char* err, int errlen);

/* Register svi.impact in the MuJoCo library this one is linked against.  Loading the library
 * already does it (a constructor); calling it again is harmless. */
void svi_plugin_register(void);

/* mj_loadXML with a clear message in err on failure (NULL then).  The plugin must be registered
 * (svi_plugin_register, or the library loaded) for models that declare it. */
mjModel* svi_load_xml(const char* path, char* err, int errlen);

/* The same model with every svi.impact instance removed through MuJoCo's model-editing API
 * (mjSpec), compiled: the native reference, identical in margins, solver and options.  NULL with
 * the message in err on failure. */
mjModel* svi_load_xml_native(const char* path, char* err, int errlen);

/* ---------------------------------------------------------------------------------------------
 * The impact-event log.
 */
#define SVI_EVENT_MAX_CONTACTS 16   /* contacts recorded per event (all take part) */

typedef struct {
  int      index;            /* running event number (sample index of the set-valued law) */
  double   time;             /* simulation time at the start of the impact step */
  int      ncontact;         /* contacts in the impact problem */
  int      napproach;        /* of which approaching faster than the impact speed */
  int      geom1[SVI_EVENT_MAX_CONTACTS], geom2[SVI_EVENT_MAX_CONTACTS];
  double   pos[SVI_EVENT_MAX_CONTACTS][3];        /* contact points, world */
  double   normal[SVI_EVENT_MAX_CONTACTS][3];     /* contact normals (geom1 -> geom2) */
  double   vn_before[SVI_EVENT_MAX_CONTACTS];     /* J_n v- per contact, m/s */
  double   vn_after[SVI_EVENT_MAX_CONTACTS];      /* J_n v+ per contact, m/s (NaN under the native
                                                     law: MuJoCo resolves it after the event; J_n v-
                                                     when no law gave a valid outcome, fallback 3) */
  double   impulse[SVI_EVENT_MAX_CONTACTS][3];    /* normal, tangent1, tangent2 impulse, N s */
  int      kept[SVI_EVENT_MAX_CONTACTS];          /* held by the pseudo-impulse */
  svi_law  law;
  uint64_t seed;
  int      lcps;             /* LCP solves for this event */
  int      steps;            /* Routh steps (propagative law: reflections) */
  int      fallback;         /* 0 none; 1 finished by (31); 2 law failed -> simultaneous;
                                3 -> native (velocity left to MuJoCo) */
  int      status;           /* svi_status of the resolution (fallback 3 with status 0: the law's
                                outcome was valid but closed a joint or tendon limit MuJoCo holds
                                active or broke an equality row; with an error: no law gave one) */
  double   ke_before, ke_after;   /* the whole model's kinetic energy before and after the velocity
                                     jump, J (ke_after NaN under the native law, = ke_before under
                                     fallback 3) */
  double   impulse_normal;   /* sum of the law's normal impulses, N s */
  double   native_impulse;   /* normal impulse MuJoCo's solver added at these contacts in the
                                impact step, after the velocity jump, N s (should be ~0);
                                measured at the end of the step (plugin advance) */
  int      nt;               /* tangent rows per contact used: 1 (planar motion) or 2 */
  int      nkept;            /* contacts kept closed by the pseudo-impulse (pseudo_impulse) */
  char     cls[SVI_EVENT_MAX_CONTACTS + 1];       /* outcome class, one letter per contact */
  int      slot;             /* internal: this event's snapshot in the log */
} svi_event;

/* sizeof(svi_event) and sizeof(svi_approx_stats), for bindings that mirror the structs (the
 * Python module checks them) */
size_t svi_event_size(void);
size_t svi_approx_stats_size(void);

/* ---------------------------------------------------------------------------------------------
 * Instances: one per mjData, made by MuJoCo (mj_makeData calls the plugin's init, mj_copyData its
 * copy, mj_resetData its reset, mj_deleteData its destroy).
 */
typedef struct svi_instance svi_instance;

/* The instance of d, or NULL if m declares no svi.impact instance (or d is not made from m). */
svi_instance* svi_instance_of(const mjModel* m, const mjData* d);

const svi_config* svi_instance_config(const svi_instance* in);
/* Override the law / seed for the following events (the viewer's law selector); law -1 = the
 * configured one again.  Both belong to the instance, not to the state: mj_copyData carries them
 * to the copy, mj_setState does not (under mujoco.rollout's threads, set the run's stream below). */
void svi_set_law(svi_instance* in, int law);
void svi_set_seed(svi_instance* in, uint64_t seed);

/* The run's stream: one number of mjData.plugin_state, at index svi_state_stream_index(m) (-1 if m
 * declares no svi.impact), so it is part of the state mj_copyData, mj_getState / mj_setState
 * (mjSTATE_PLUGIN, mjSTATE_FULLPHYSICS) and mujoco.rollout's initial states carry.  0 (the default,
 * and after mj_resetData): event k of the run draws sample k of the seed's stream, as before the
 * stream existed.  An integer s in [1, 2^53]: it draws from the seed svi_rng_u64(seed,
 * SVI_STREAM_RUN, s) instead (the event record's seed is that one, so resample with it gives the
 * same outcome), so runs from one state under different streams have independent outcomes, and a
 * run's outcomes do not depend on which thread or MjData steps it.  Any other value counts as 0. */
#define SVI_STREAM_RUN 0x72756eULL   /* "run" */
int svi_state_stream_index(const mjModel* m);
/* The law the next event uses. */
svi_law svi_current_law(const svi_instance* in);
/* Keep up to cap events in the log (reallocates; the newest events are kept).  Returns 0 or a
 * negative svi_status. */
int svi_set_log_capacity(svi_instance* in, const mjModel* m, int cap);

int              svi_event_count(const svi_instance* in);     /* events kept in the log */
const svi_event* svi_event_get(const svi_instance* in, int i); /* 0 = oldest kept */

/* Set d to the state at the start of event i's impact step (mj_setState with
 * mjSTATE_INTEGRATION, which holds the plugin's touching list and event counter) and drop events
 * i, i+1, ... from the log.  The next mj_forward or mj_step resolves event i again: with the same
 * seed and law, to the same outcome, bit for bit. */
int svi_event_restore(svi_instance* in, const mjModel* m, mjData* d, int i);
/* svi_event_restore, then mj_forward with another seed and/or law for that event only: d holds
 * the new post-impact velocity and the event is the last entry of the log; continue with
 * mj_step. */
int svi_event_resample(svi_instance* in, const mjModel* m, mjData* d, int i, uint64_t seed,
                       svi_law law);

/* Event i's outcome with another seed and/or law, computed exactly as svi_event_resample would
 * (same problem, same sample index) on a scratch mjData of the same model, without touching the
 * log: scratch is left after mj_forward at the post-impact velocity (mj_step continues a
 * roll-out).  qvel_out: nv values.  The record is svi_last_preview(in). */
int svi_event_preview(svi_instance* in, const mjModel* m, mjData* scratch, int i, uint64_t seed,
                      svi_law law, double* qvel_out);
const svi_event* svi_last_preview(const svi_instance* in);
/* svi_event_preview for n seeds at once: qvel_out (n x nv) and records (n, or NULL) get, for
 * seeds[k], exactly what svi_event_preview gives for it, bit for bit, while the event is detected
 * and its problem set up once (mj_forward runs once, not n times).  scratch is left as
 * svi_event_preview leaves it for the last seed, and svi_last_preview(in) is that seed's record.
 * Returns 0 or a negative svi_status; SVI_ERR_ARG also when the event does not recur on scratch. */
int svi_event_preview_many(svi_instance* in, const mjModel* m, mjData* scratch, int i,
                           const uint64_t* seeds, int n, svi_law law, double* qvel_out,
                           svi_event* records);

/* Algorithm 2 on event i's impact problem (rebuilt on scratch, as svi_event_problem): the
 * set-valued law's post-impact set as svi-sample approximates it, `samples` outcomes with the
 * instance's step, step_abs, max_steps, step_growth and branch rule, the given seed, group by
 * group under split = groups (svi_current_groups, svi_approximate_groups), Sobol budgets where a problem's
 * nc max_steps <= SVI_SOBOL_MAXDIM (else uniform), on `threads` threads (0: one per core; the
 * outcomes do not depend on it).  qvel_out: samples x nv, the model's post-impact qvel (the
 * dofs outside the event keep their velocity); accepted (samples flags, may be NULL): 1 = in the
 * set; stats may be NULL.  Not any seed's resample: another sampler of the same law (Algorithm 2,
 * with the per-event pattern maps).  A sample that would close a joint or tendon limit MuJoCo holds
 * active is not accepted (mj_step would leave it to MuJoCo: svi_limits_refuse), counted in
 * stats->limit_refused.  Returns 0 or a negative svi_status; SVI_ERR_ARG when event
 * i is not in the log or does not recur on scratch. */
int svi_event_approximate(svi_instance* in, const mjModel* m, mjData* scratch, int i, long long samples,
                          int threads, uint64_t seed, double* qvel_out, unsigned char* accepted,
                          svi_approx_stats* stats);

/* Load event i's pre-impact state into scratch (no forward). */
int svi_event_load(svi_instance* in, const mjModel* m, mjData* scratch, int i);
/* The same state for the native model (svi_load_xml_native of the same file): every component of
 * mjSTATE_INTEGRATION but the plugin's.  Returns 0 or a negative svi_status. */
int svi_event_load_native(svi_instance* in, const mjModel* m, int i, const mjModel* native,
                          mjData* d_native);

/* The impact problem of d's current state, without resolving it: runs mj_forward with the
 * plugin's resolution suspended and fills def with pointers into the instance's buffers (valid
 * until its next event).  Returns the number of contacts, 0 if the state holds no impact event.
 * contact_index (may be NULL, nc entries) receives the MuJoCo contact index of each contact. */
int svi_current_problem(svi_instance* in, const mjModel* m, mjData* d, svi_problem_def* def,
                        int* contact_index);

/* The groups of the problem svi_current_problem last returned for (in, m, d) (nc contacts), as the
 * set-valued law samples them under split = groups: dof_group (nv entries: -1 for a dof in none),
 * contact_group (nc) and each group's key for its stream (key: up to ntree entries).  Returns their
 * number; 1 (every event dof and contact in group 0) under split = off or when the model's dofs are
 * not in tree order.  For svi_approximate_groups. */
int svi_current_groups(svi_instance* in, const mjModel* m, const mjData* d, int nc, int* dof_group,
                       int* contact_group, uint64_t* key);

/* The joint and tendon limits MuJoCo holds active on the problem svi_current_problem last returned
 * for in (nc contacts).  The law has no rows for them, and mj_step leaves to MuJoCo an outcome
 * that closes one (docs/usage.md, "Joint and tendon limits"); Algorithm 2's samples of the same
 * problem pass the same check through svi_limits_refuse.  Up to max rows on the model's nv dofs
 * into rows (max x nv, zero off the event's dofs), each row's velocity from the dofs off the event
 * (which the impact leaves as they are) into off (max), the check's tolerance (m/s: 1e-6 of the
 * largest approach speed) into *tol (may be NULL).  Returns the number of limit rows, all of them
 * (max = 0 and NULL buffers: only the count). */
int svi_current_limits(const svi_instance* in, int nc, int nv, int max, double* rows, double* off, double* tol);

/* n outcomes (qvel: n x nv) against nlim limit rows of svi_current_limits: an outcome whose row
 * velocity off + row . v is below -tol (or not a number) would close that limit.  Each such outcome
 * with accepted[k] set (accepted NULL: every outcome) is counted and its flag cleared.  Returns
 * the count. */
long long svi_limits_refuse(int nlim, int nv, const double* rows, const double* off, double tol, long long n,
                            const double* qvel, unsigned char* accepted);

/* The impact problem of event i, rebuilt from its snapshot on scratch (svi_current_problem of
 * the loaded state); returns the number of contacts, 0 on failure. */
int svi_event_problem(svi_instance* in, const mjModel* m, mjData* scratch, int i,
                      svi_problem_def* def);

/* Native MuJoCo's outcome of the impact that starts in d: mj_step until no contact of def still
 * approaches (J_n v >= -2% of the largest approach speed, rows frozen at the impact
 * configuration) or horizon seconds pass.  Step d with a native model (svi_load_xml_native) or
 * with the native law.  vn_out: J_n v per contact.  Returns the steps taken, negative if the
 * horizon ran out.  d is advanced. */
int svi_native_outcome(const mjModel* m, mjData* d, const svi_problem_def* def, double horizon,
                       double* vn_out);

/* Counters since the instance was made (mj_resetData keeps them; they count across resets). */
typedef struct {
  long long steps;             /* plugin advances (steps taken) */
  long long events;            /* impact events resolved */
  long long lcps;
  long long fallbacks;         /* events not resolved by their law (svi_event.fallback >= 1: finished
                                  by (31), simultaneous, left to MuJoCo) or left to MuJoCo
                                  (overflow, sleeping body, flex contact) */
  long long native_steps;      /* steps with the native law */
  long long resets;            /* mj_resetData calls (MuJoCo's own resets after a divergence too) */
  long long unsupported;       /* steps not handled: RK4, passive forces disabled */
  long long touch_overflow;    /* steps whose touching contacts exceeded max_contacts */
  long long pseudo_ambiguous;  /* pseudo-impulse: events where several modes passed the keep rule */
  long long pseudo_demoted;    /* pseudo-impulse: sticking contacts demoted to sliding (cone) */
  long long finished_ap;       /* of the fallbacks, the events whose sample was still colliding
                                  after max_steps Routh steps, finished by (31) (fallback 1) */
  double    max_energy_ratio;  /* max KE+/KE- over events */
} svi_counters;
svi_counters svi_instance_counters(const svi_instance* in);

/* The last message the instance reported (also sent to mju_warning), "" if none. */
const char* svi_instance_message(const svi_instance* in);

#ifdef __cplusplus
}
#endif
#endif  /* SVI_MUJOCO_H_ */
