/* svi_mujoco.h -- the svi impact plugin for MuJoCo 2.2.2.
 *
 * A model asks for the plugin with MuJoCo's own <custom> user data, so the same file loads in any
 * MuJoCo tool:
 *
 *   <custom>
 *     <text    name="svi.plugin" data="svi.impact"/>
 *     <text    name="svi.law"    data="setvalued"/>
 *     <numeric name="svi.seed"   data="7"/>
 *   </custom>
 *
 * svi_step(m, d) is the drop-in for mj_step: mj_step1, detect impact events among MuJoCo's contacts,
 * resolve them with the configured law, write qvel, re-run the velocity stage, mj_step2.  MuJoCo's
 * solver keeps carrying sustained contact, joint limits, equality constraints and actuators.
 * Every key, its unit, default and range: docs/usage.md.
 */
#ifndef SVI_MUJOCO_H_
#define SVI_MUJOCO_H_

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
  SVI_LAW_NATIVE       = 3    /* pass-through: MuJoCo's soft contact resolves the impact */
} svi_law;

/* The configuration: constant for a model (MuJoCo's mjModel/mjData split). */
typedef struct {
  int        enabled;          /* the model declares svi.plugin = "svi.impact" */
  svi_law    law;              /* svi.law */
  double     step;             /* svi.step: Routh step / reference impulse */
  double     step_abs;         /* svi.step_abs: Routh step in N s (0 = use svi.step) */
  int        max_steps;        /* svi.max_steps */
  uint64_t   seed;             /* svi.seed */
  svi_branch branch;           /* svi.branch */
  int        friction_dirs;    /* svi.friction_dirs: 4 (pyramid; planar motion reduces to 2) or 2 */
  double     window;           /* svi.window: simultaneity window, s */
  double     impact_speed;     /* svi.impact_speed: slower approach = resting contact, m/s */
  double     band;             /* svi.band: active-contact distance band, m */
  double     pseudo_impulse;   /* svi.pseudo_impulse: Johnson's delta_t, s (0 = off) */
  int        max_contacts;     /* svi.max_contacts: contacts one event may hold */
  int        log_events;       /* svi.log_events: events kept in the log (ring) */
} svi_config;

svi_config svi_default_config(void);

/* Read and validate the svi.* entries of a model.  Returns 1 if the model declares the plugin,
 * 0 if it does not (cfg = defaults, enabled = 0), or -1 with a message naming the key and what is
 * allowed (unknown svi.* key, wrong type, value out of range). */
int svi_config_from_model(const mjModel* m, svi_config* cfg, char* err, int errlen);

/* mj_loadXML plus svi configuration check: NULL with the message in err if either fails. */
mjModel* svi_load_xml(const char* path, char* err, int errlen);

/* ---------------------------------------------------------------------------------------------
 * The impact-event log.
 */
#define SVI_EVENT_MAX_CONTACTS 16   /* contact geoms recorded per event (all take part) */

typedef struct {
  int      index;            /* running event number (sample index of the set-valued law) */
  double   time;             /* simulation time at the start of the impact step */
  int      ncontact;         /* contacts in the impact problem */
  int      napproach;        /* of which approaching faster than svi.impact_speed */
  int      geom1[SVI_EVENT_MAX_CONTACTS], geom2[SVI_EVENT_MAX_CONTACTS];
  double   pos[SVI_EVENT_MAX_CONTACTS][3];        /* contact points, world */
  double   normal[SVI_EVENT_MAX_CONTACTS][3];     /* contact normals (geom1 -> geom2) */
  double   vn_before[SVI_EVENT_MAX_CONTACTS];     /* J_n v- per contact, m/s */
  double   vn_after[SVI_EVENT_MAX_CONTACTS];      /* J_n v+ per contact, m/s */
  double   impulse[SVI_EVENT_MAX_CONTACTS][3];    /* normal, tangent1, tangent2 impulse, N s */
  int      kept[SVI_EVENT_MAX_CONTACTS];          /* held by the pseudo-impulse */
  svi_law  law;
  uint64_t seed;
  int      lcps;             /* LCP solves for this event */
  int      steps;            /* Routh steps */
  int      fallback;         /* 0 none; 1 finished by (31); 2 law failed -> simultaneous;
                                3 -> native (velocity left to MuJoCo) */
  int      status;           /* svi_status of the resolution */
  double   ke_before, ke_after;
  double   impulse_normal;   /* sum of the law's normal impulses, N s */
  double   native_impulse;   /* normal impulse MuJoCo's solver added at these contacts in the
                                impact step, after the velocity jump, N s (should be ~0) */
  int      nt;               /* tangent rows per contact used: 1 (planar motion) or 2 */
  int      nkept;            /* contacts kept closed by the pseudo-impulse (svi.pseudo_impulse) */
  char     cls[SVI_EVENT_MAX_CONTACTS + 1];       /* outcome class, one letter per contact */
  /* offsets of this event's snapshot in the log arena (internal) */
  int      slot;
} svi_event;

/* ---------------------------------------------------------------------------------------------
 * Instances.  svi_step(m, d) finds (or creates, once) the instance of d; the explicit API below
 * gives control over creation and the log.
 */
typedef struct svi_instance svi_instance;

/* Create the instance for (m, d); NULL with a message on a bad configuration or a model the
 * plugin cannot handle.  A model without svi.plugin gives an instance that steps natively. */
svi_instance* svi_attach(const mjModel* m, mjData* d, char* err, int errlen);
void          svi_detach(mjData* d);
svi_instance* svi_instance_of(const mjData* d);

/* Drop-in for mj_step.  Returns the number of impact events resolved in this step (0 or 1), or
 * a negative svi_status if the plugin could not be attached (the step is then native). */
int svi_step(const mjModel* m, mjData* d);

const svi_config* svi_instance_config(const svi_instance* in);
/* Override the law / seed for the following events (the viewer's law selector). */
void svi_set_law(svi_instance* in, svi_law law);
void svi_set_seed(svi_instance* in, uint64_t seed);

int              svi_event_count(const svi_instance* in);     /* events kept in the log */
const svi_event* svi_event_get(const svi_instance* in, int i); /* 0 = oldest kept */

/* Restore d to the state at the start of event i's impact step and drop later events. */
int svi_event_restore(svi_instance* in, const mjModel* m, mjData* d, int i);
/* Restore, then redo that step with another seed and/or law: the event's new outcome is the last
 * entry of the log, and the simulation continues from it. */
int svi_event_resample(svi_instance* in, const mjModel* m, mjData* d, int i, uint64_t seed,
                       svi_law law);

/* The impact problem svi_step would solve in the current state (call after mj_step1 or
 * mj_forward): fills def with pointers into the instance's buffers (valid until its next step)
 * and returns the number of contacts, or 0 if the state holds no impact event.  contact_index
 * (may be NULL, nc entries) receives the MuJoCo contact index of each problem contact. */
int svi_current_problem(svi_instance* in, const mjModel* m, mjData* d, svi_problem_def* def,
                        int* contact_index);

/* Native MuJoCo's outcome of the impact that starts in d: mj_step until no contact of def still
 * approaches (J_n v >= -2% of the largest approach speed, rows frozen at the impact
 * configuration) or horizon seconds pass.  vn_out: J_n v per contact.  Returns the steps taken,
 * negative if the horizon ran out.  d is advanced. */
int svi_native_outcome(const mjModel* m, mjData* d, const svi_problem_def* def, double horizon,
                       double* vn_out);

/* Event i's outcome with another seed and/or law, computed exactly as svi_event_resample would
 * (same problem, same sample index) but on a scratch mjData and without touching the log:
 * scratch is left mid-step (post-impact qvel, before mj_step2; call mj_step2 to continue a
 * roll-out).  qvel_out: nv values. */
int svi_event_preview(svi_instance* in, const mjModel* m, mjData* scratch, int i, uint64_t seed,
                      svi_law law, double* qvel_out);

/* The record (contacts, J_n v after, impulses, class...) of the last svi_event_preview. */
const svi_event* svi_last_preview(const svi_instance* in);

/* Load event i's pre-impact snapshot into scratch (then mj_forward). */
int svi_event_load(svi_instance* in, const mjModel* m, mjData* scratch, int i);

/* The impact problem of event i, rebuilt from its snapshot on scratch (pointers valid until the
 * instance's next step); returns the number of contacts, 0 on failure. */
int svi_event_problem(svi_instance* in, const mjModel* m, mjData* scratch, int i,
                      svi_problem_def* def);

/* Save / load the instance's whole mutable state (event log with snapshots, touching contacts,
 * counters, overrides): with mj_copyData this makes an exact undo point. */
size_t svi_instance_state_size(const svi_instance* in);
void   svi_instance_save(const svi_instance* in, void* buf);
void   svi_instance_load(svi_instance* in, const void* buf);

/* Counters since attach. */
typedef struct {
  long long steps, events, lcps, fallbacks, native_steps;
  double    max_energy_ratio;   /* max KE+/KE- over events */
} svi_counters;
svi_counters svi_instance_counters(const svi_instance* in);

/* ---------------------------------------------------------------------------------------------
 * Run-time plugin table (MuJoCo 3's mjpPlugin shape): a host dlopen()s lib<name>.so from a plugin
 * directory and calls svi_plugin_table() to get it.
 */
typedef struct {
  const char*        name;           /* "svi.impact" */
  int                nattribute;
  const char* const* attributes;     /* the svi.* keys */
  void* (*init)(const mjModel* m, mjData* d, char* err, int errlen);
  void  (*destroy)(mjData* d, void* instance);
  void  (*reset)(const mjModel* m, mjData* d, void* instance);
  int   (*step)(const mjModel* m, mjData* d, void* instance);
} svi_plugin_def;

const svi_plugin_def* svi_plugin_table(void);

#ifdef __cplusplus
}
#endif
#endif  /* SVI_MUJOCO_H_ */
