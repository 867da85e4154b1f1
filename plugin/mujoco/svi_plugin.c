/* svi_plugin.c -- svi.impact as a MuJoCo engine plugin: registration and the callbacks MuJoCo
 * calls (DESIGN.md section 3).
 *
 *   nstate   compile time: the size of our part of plugin_state; validates the config, so a bad
 *            value or an unsupported model fails in MuJoCo's compiler with our message
 *   init     mj_makeData: the instance (config, buffers, event log), all allocation happens here
 *   compute  mj_passive (PASSIVE capability), inside mj_fwdVelocity: detect and resolve an impact
 *            event, write qvel, re-run mj_fwdVelocity (guarded against re-entry)
 *   advance  after the integrator: commit this step's touching contacts to plugin_state (once per
 *            step, never in compute: a paused viewer calls mj_forward every frame)
 *   copy     mj_copyData: a deep copy of the log; reset: mj_resetData clears state and log
 *   destroy  mj_deleteData
 */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "svi/svi_mujoco.h"
#include "svi_mujoco_internal.h"

/* Was this kind already printed for model m?  Marks it printed.  A message about the model itself
 * (not this mjData's run) is printed once per model and kind: a viewer makes several mjData of one
 * model, each of which keeps the message. */
static int printed_for(const mjModel* m, int kind) {
  static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
  static struct { const mjModel* m; mjtSize nbuffer; int kinds; } printed[16];
  static int next;
  int was = 0, found = 0;
  pthread_mutex_lock(&lock);
  for (int i = 0; i < 16 && !found; i++) {
    if (printed[i].m != m || printed[i].nbuffer != m->nbuffer) continue;
    found = 1;
    was = printed[i].kinds & kind;
    printed[i].kinds |= kind;
  }
  if (!found) {
    printed[next].m = m;
    printed[next].nbuffer = m->nbuffer;
    printed[next].kinds = kind;
    next = (next + 1) % 16;
  }
  pthread_mutex_unlock(&lock);
  return was;
}

/* Keep the message on the instance (once per kind) and print it with mju_warning; m: a message
 * about the model, printed once per model (NULL: about this run, printed by every instance). */
static void vreport(svi_instance* in, const mjModel* m, int kind, const char* fmt, va_list ap) {
  if (in->warned & kind) return;
  in->warned |= kind;
  vsnprintf(in->message, sizeof(in->message), fmt, ap);
  if (in->quiet) return;   /* a problem rebuilt on request: the message goes to the caller */
  if (!m || !printed_for(m, kind)) mju_warning("%s", in->message);
}

void svi_report(svi_instance* in, int kind, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vreport(in, NULL, kind, fmt, ap);
  va_end(ap);
}

static void report_model(svi_instance* in, const mjModel* m, int kind, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vreport(in, m, kind, fmt, ap);
  va_end(ap);
}

double* svi_state(const mjModel* m, mjData* d, const svi_instance* in) {
  return d->plugin_state + m->plugin_stateadr[in->id];
}

/* ---------------------------------------------------------------------------------------------
 * Instance lifecycle.
 */
static void free_instance(svi_instance* in) {
  if (!in) return;
  svi_impact_destroy(in->imp);
  svi_propagative_destroy(in->prop);
  svi_pseudo_destroy(in->pseudo);
  free(in->lam_n);
  free(in->block);
  free(in->cidx);
  free(in->kept);
  free(in->tree);
  free(in->gof_root);
  free(in->gblock);
  free(in->tkey);
  free(in->side);
  free(in->side_eq);
  free(in->Jside);
  free(in->eqA);
  free(in->eqmap);
  free(in->touch_next);
  free(in->events);
  free(in->snaps);
  free(in);
}

/* A tree's key for its group's random stream (svi_events.c, sample_groups): its first body's
 * name (64-bit FNV-1a, top bit set), so a group's draws do not move when other bodies are added to
 * or removed from the model; an unnamed body's tree index otherwise. */
static uint64_t tree_key(const mjModel* m, int t) {
  const char* name = m->names + m->name_bodyadr[m->tree_bodyadr[t]];
  if (!name[0]) return (uint64_t)t;
  uint64_t h = 0xcbf29ce484222325ULL;
  for (const unsigned char* c = (const unsigned char*)name; *c; c++) h = (h ^ *c) * 0x100000001b3ULL;
  return h | 1ULL << 63;
}

static int nstate_of(const svi_config* cfg) {
  return SVI_STATE_TOUCH + SVI_TOUCH_SIZE * cfg->max_contacts;
}

/* the instance of (m, d, id) with every buffer it will ever need */
static svi_instance* make_instance(const mjModel* m, int id, const svi_config* cfg) {
  svi_instance* in = calloc(1, sizeof(*in));
  if (!in) return NULL;
  in->cfg = *cfg;
  in->id = id;
  in->nv = m->nv;
  in->nc_max = cfg->max_contacts;
  in->nstate = nstate_of(cfg);
  in->law_override = -1;
  in->left_time = -INFINITY;
  int nv = m->nv, ncmax = in->nc_max;
  if (nv > 0) {
    in->imp = svi_impact_create(nv, ncmax, 2);
    svi_impact_set_step_solve(in->imp, 1);   /* one sample per event: no per-event pattern maps */
    in->prop = svi_propagative_create(nv, ncmax, 0);
    in->lam_n = calloc((size_t)ncmax, sizeof(double));
    if (cfg->pseudo_impulse > 0) in->pseudo = svi_pseudo_create(nv, ncmax);
    if (!in->imp || !in->prop || !in->lam_n || (cfg->pseudo_impulse > 0 && !in->pseudo)) {
      free_instance(in);
      return NULL;
    }
  }
  size_t need = (size_t)nv * nv + (size_t)ncmax * nv * 3 + (size_t)ncmax * 2 + 9 * (size_t)nv +
                (size_t)ncmax * 9;
  in->block = calloc(need + 1, sizeof(double));
  in->cidx = calloc((size_t)ncmax, sizeof(int));
  in->kept = calloc((size_t)ncmax, sizeof(int));
  in->tree = calloc(2 * (size_t)m->ntree + 1 + (size_t)nv, sizeof(int));
  in->touch_next = calloc((size_t)ncmax * SVI_TOUCH_SIZE, sizeof(double));
  in->snap_size = (int)mj_stateSize(m, mjSTATE_INTEGRATION);
  if (!in->block || !in->cidx || !in->kept || !in->tree || !in->touch_next ||
      svi_log_alloc(in, cfg->log_events)) {
    free_instance(in);
    return NULL;
  }
  /* the groups' maps and one group's problem (at most the event's sizes) */
  size_t nt = (size_t)m->ntree;
  in->gof_root = calloc(2 * nt + 3 * (size_t)ncmax + 2 * (size_t)nv + 1, sizeof(int));
  in->gblock = calloc((size_t)nv * nv + (size_t)ncmax * nv * 3 + (size_t)ncmax * 6 + 3 * (size_t)nv + 1,
                      sizeof(double));
  in->tkey = calloc(nt + 1, sizeof(uint64_t));
  /* MuJoCo's equality and limit rows on an event's dofs (svi_events.c, side_rows): at most 6 an
   * equality constraint (a weld) and one a joint or tendon */
  in->side_max = 6 * (int)m->neq + (int)m->njnt + (int)m->ntendon;
  in->side = calloc((size_t)in->side_max + 1, sizeof(int));
  in->side_eq = calloc((size_t)in->side_max + 1, sizeof(int));
  in->Jside = calloc((size_t)in->side_max * (nv + 2) + 1, sizeof(double));
  if (m->neq > 0) {   /* svi_equality.c's buffers, one block */
    size_t sm = (size_t)in->side_max, nn = (size_t)nv * nv;
    in->eqA = calloc(sm * nv + 2 * sm + 3 * nn + 3 * (size_t)nv + 1, sizeof(double));
    in->eqmap = calloc(8 * (size_t)nv + 1, sizeof(int));
    if (in->eqA && in->eqmap) {
      in->eqbeta = in->eqA + sm * nv;
      in->eqnrm = in->eqbeta + sm;
      in->eqN = in->eqnrm + sm;
      in->eqMN = in->eqN + nn;
      in->eqL = in->eqMN + nn;
      in->eqtmp = in->eqL + nn;
      in->eqtmp2 = in->eqtmp + nv;
      in->vphys = in->eqtmp2 + nv;
      in->eqid = in->eqmap + nv;
      in->eqlab = in->eqid + nv;
      in->eqrows = in->eqlab + nv;
      in->eqcol = in->eqrows + nv;   /* 3 nv */
      in->eqexact = in->eqcol + 3 * nv;
    }
  }
  if (!in->gof_root || !in->gblock || !in->tkey || !in->side || !in->side_eq || !in->Jside ||
      (m->neq > 0 && (!in->eqA || !in->eqmap))) {
    free_instance(in);
    return NULL;
  }
  in->gkey = in->gof_root + nt;
  in->gcon = in->gkey + nt;
  in->gcmap = in->gcon + ncmax;
  in->gdof = in->gcmap + ncmax;
  in->gvmap = in->gdof + nv;
  in->gkept = in->gvmap + nv;
  double* g = in->gblock;
  in->gM = g;     g += (size_t)nv * nv;
  in->gJn = g;    g += (size_t)ncmax * nv;
  in->gJt = g;    g += (size_t)ncmax * 2 * nv;
  in->gmu = g;    g += ncmax;
  in->gv = g;     g += nv;
  in->gout = g;   g += nv;
  in->gae = g;    g += nv;
  in->glam = g;                                /* nc (1 + nd), nd <= 4 */
  in->edof = in->tree + 2 * m->ntree + 1;
  in->trees_in_order = 1;   /* MuJoCo numbers trees in body order, each a run of dofs: checked */
  for (int t = 0, next = 0; t < m->ntree; t++) {
    if (m->tree_dofadr[t] != next) in->trees_in_order = 0;
    next += m->tree_dofnum[t];
  }
  for (int t = 0; t < m->ntree; t++) in->tkey[t] = tree_key(m, t);
  double* b = in->block;
  in->M = b;      b += (size_t)nv * nv;
  in->Jn = b;     b += (size_t)ncmax * nv;
  in->Jt = b;     b += (size_t)ncmax * 2 * nv;
  in->mu = b;     b += ncmax;
  in->vn = b;     b += ncmax;
  in->J1 = b;     b += 3 * (size_t)nv;
  in->J2 = b;     b += 3 * (size_t)nv;
  in->vplus = b;  b += nv;
  in->ve = b;     b += nv;
  in->ae = b;     b += nv;
  in->tdir = b;   b += (size_t)ncmax * 4;      /* per contact: tangent combination (2) + spare */
  in->lam = b;                                 /* lambda_bar: nc (1 + nd), nd <= 4 */
  return in;
}

static svi_instance* instance(const mjData* d, int id) {
  return (svi_instance*)d->plugin_data[id];
}

svi_instance* svi_instance_of(const mjModel* m, const mjData* d) {
  if (!m || !d) return NULL;
  int id = svi_plugin_instance(m);
  if (id < 0 || id >= d->nplugin) return NULL;
  return instance(d, id);
}

static void clear_state(svi_instance* in, double* state) {
  memset(state, 0, sizeof(double) * (size_t)in->nstate);
}

/* ---------------------------------------------------------------------------------------------
 * The callbacks.
 */
static int plugin_nstate(const mjModel* m, int id) {
  svi_config cfg;
  char err[600];
  /* a bad value fails the compile here, with our message (MuJoCo turns mju_error into a compiler
   * error); nothing is allocated yet */
  if (svi_config_from_model(m, &cfg, err, sizeof(err)) < 0) mju_error("%s", err);
  return nstate_of(&cfg);
}

static void geom_label(const mjModel* m, int g, char* buf, size_t n) {
  const char* name = mj_id2name(m, mjOBJ_GEOM, g);
  if (name) snprintf(buf, n, "'%s'", name);
  else snprintf(buf, n, "#%d", g);
}

/* 1 if MuJoCo's broad phase never pairs geoms of bodies b1, b2 (mj_collision's body filter):
 * one weld body (two static bodies included), a weld body and its weld parent unless the parent
 * filter is disabled (neither being the world), or an excluded pair */
static int bodies_filtered(const mjModel* m, int b1, int b2) {
  int w1 = m->body_weldid[b1], w2 = m->body_weldid[b2];
  if (w1 == w2) return 1;
  int p1 = m->body_weldid[m->body_parentid[w1]], p2 = m->body_weldid[m->body_parentid[w2]];
  if (!(m->opt.disableflags & mjDSBL_FILTERPARENT) && w1 != 0 && w2 != 0 && (w1 == p2 || w2 == p1)) return 1;
  int sig = b1 < b2 ? (b1 << 16) + b2 : (b2 << 16) + b1;
  for (int e = 0; e < m->nexclude; e++) if (m->exclude_signature[e] == sig) return 1;
  return 0;
}

/* Settings that will not do what the model's author probably meant: said once, at mj_makeData. */
static void check_settings(svi_instance* in, const mjModel* m) {
  for (int i = 0; i < m->ngeom; i++) {
    for (int j = i + 1; j < m->ngeom; j++) {
      int collide = (m->geom_contype[i] & m->geom_conaffinity[j]) || (m->geom_contype[j] & m->geom_conaffinity[i]);
      if (!collide || bodies_filtered(m, m->geom_bodyid[i], m->geom_bodyid[j])) continue;
      if (m->geom_margin[i] + m->geom_margin[j] + m->geom_gap[i] + m->geom_gap[j] >= in->cfg.band) continue;
      in->gapless_pairs = 1;   /* the touching list's carry (svi_events.c) is needed */
      char a[64], b[64];
      geom_label(m, i, a, sizeof(a));
      geom_label(m, j, b, sizeof(b));
      report_model(in, m, SVI_WARN_NOGAP,
                 "svi.impact: geoms %s and %s (and maybe others) can collide with no contact band "
                 "(margin + gap < band = %g m): MuJoCo reports their contacts only once they penetrate, so a "
                 "resting or sliding contact flickers. svi.impact keeps such a contact as touching while the pair "
                 "stays within the band, but give colliding geoms a gap (e.g. gap=\"0.0025\") for reliable "
                 "impact detection (docs/usage.md, margins and gaps)", a, b, in->cfg.band);
      return;
    }
  }
}

static void check_unused(svi_instance* in, const mjModel* m) {
  if (in->cfg.restitution != 1 && in->cfg.law != SVI_LAW_PROPAGATIVE)
    report_model(in, m, SVI_WARN_UNUSED,
               "svi.impact: config 'restitution' = %g applies to the propagative law only (law = %s)",
               in->cfg.restitution, svi_law_name(in->cfg.law));
}

static int plugin_init(const mjModel* m, mjData* d, int id) {
  svi_config cfg;
  char err[600];
  if (svi_config_from_model(m, &cfg, err, sizeof(err)) < 0) {
    mju_warning("%s", err);   /* MuJoCo then raises "plugin->init failed" */
    return -1;
  }
  if (m->plugin_statenum[id] != nstate_of(&cfg)) {
    mju_warning("svi.impact: the model's plugin state size does not match its config (edited after compile?)");
    return -1;
  }
  svi_instance* in = make_instance(m, id, &cfg);
  if (!in) {
    mju_warning("svi.impact: out of memory for the impact workspace (nv=%d, max_contacts=%d, log_events=%d)",
                (int)m->nv, cfg.max_contacts, cfg.log_events);
    return -1;
  }
  check_settings(in, m);
  check_unused(in, m);
  if (mjDISABLED(mjDSBL_SPRING) && mjDISABLED(mjDSBL_DAMPER))
    report_model(in, m, SVI_WARN_PASSIVE,
               "svi.impact: passive forces are disabled (flags spring and damper): MuJoCo then skips passive "
               "plugins, so impacts are left to MuJoCo's solver. Enable either flag to use svi.impact");
  d->plugin_data[id] = (uintptr_t)in;
  clear_state(in, svi_state(m, d, in));
  return 0;
}

static void plugin_destroy(mjData* d, int id) {
  free_instance(instance(d, id));
  d->plugin_data[id] = 0;
}

static void plugin_copy(mjData* dest, const mjModel* m, const mjData* src, int id) {
  svi_instance *a = instance(dest, id), *b = instance(src, id);
  if (!a || !b || a == b) return;
  /* the configuration and overrides, counters and log; never the transient flags */
  a->cfg = b->cfg;
  a->law_override = b->law_override;
  a->has_once = b->has_once;
  a->once_law = b->once_law;
  a->once_index = b->once_index;
  a->once_seed = b->once_seed;
  a->counters = b->counters;
  a->pseudo_ambiguous = b->pseudo_ambiguous;
  a->pseudo_demoted = b->pseudo_demoted;
  a->warned = b->warned;
  a->contactfull_seen = b->contactfull_seen;
  a->left_time = b->left_time;
  a->gapless_pairs = b->gapless_pairs;
  a->measure_pending = b->measure_pending;
  memcpy(a->message, b->message, sizeof(a->message));
  memcpy(a->touch_next, b->touch_next, sizeof(double) * SVI_TOUCH_SIZE * (size_t)b->ntouch_next);
  a->ntouch_next = b->ntouch_next;
  a->touch_next_valid = b->touch_next_valid;
  a->index_next = b->index_next;
  a->counted_next = b->counted_next;
  a->pending = b->pending;
  a->pending_index = b->pending_index;
  a->pending_time = b->pending_time;
  svi_log_copy(a, b);
}

static void plugin_reset(const mjModel* m, double* state, void* data, int id) {
  svi_instance* in = data;
  if (!in) return;
  /* MuJoCo keeps plugin_state across mj_resetData: a reset starts a new episode, so the touching
   * list and the event counter go (the first impact is detected again) and so does the log */
  clear_state(in, state);
  in->ntouch_next = 0;
  in->touch_next_valid = 0;
  in->has_once = 0;
  in->measure_pending = 0;
  in->pending = 0;
  in->counted_next = 0;   /* the new episode's events are counted from index 0 */
  in->left_time = -INFINITY;
  svi_log_clear(in);
  in->counters.resets++;
}

static void plugin_compute(const mjModel* m, mjData* d, int id, int capability) {
  svi_instance* in = instance(d, id);
  if (!in || in->busy || !(capability & mjPLUGIN_PASSIVE)) return;
  svi_events_compute(in, m, d);
}

/* the rare cases of plugin_advance, out of its common path */
static void advance_unsupported(svi_instance* in, const mjModel* m) {
  in->counters.unsupported++;
  if (m->opt.integrator == mjINT_RK4)
    svi_report(in, SVI_WARN_RK4,
               "svi.impact: the integrator was switched to RK4, which svi.impact does not support: impacts are "
               "left to MuJoCo's solver until it is switched back");
  else
    svi_report(in, SVI_WARN_PASSIVE,
               "svi.impact: passive forces are disabled (flags spring and damper): MuJoCo skips passive plugins, "
               "so impacts are left to MuJoCo's solver");
}

static void plugin_advance(const mjModel* m, mjData* d, int id) {
  svi_instance* in = instance(d, id);
  if (!in) return;
  in->counters.steps++;
  if (!in->touch_next_valid) {   /* compute did not run this step: RK4, or passive forces disabled */
    if (m->opt.integrator == mjINT_RK4 || (mjDISABLED(mjDSBL_SPRING) && mjDISABLED(mjDSBL_DAMPER)))
      advance_unsupported(in, m);
  }
  if (in->law_override == SVI_LAW_NATIVE || (in->law_override < 0 && in->cfg.law == SVI_LAW_NATIVE))
    in->counters.native_steps++;
  if (in->measure_pending) {
    svi_events_measure_native(in, m, d);
    in->measure_pending = 0;
  }
  /* this step's touching contacts become the previous step's for the next one */
  double* state = d->plugin_state + m->plugin_stateadr[id];
  int n = 0;
  if (in->touch_next_valid) {
    n = in->ntouch_next;
    state[SVI_STATE_NEXT_INDEX] = (double)in->index_next;
    if (n) memcpy(state + SVI_STATE_TOUCH, in->touch_next, sizeof(double) * SVI_TOUCH_SIZE * (size_t)n);
  }
  state[SVI_STATE_NTOUCH] = n;
  in->pending = 0;
  in->touch_next_valid = 0;
}

/* the declared attributes are svi_config's own key list (static, NULL-terminated): every key the
 * parser accepts is declared, with no copy and no cap to outgrow */
static void fill_plugin(mjpPlugin* p) {
  const char* const* keys = svi_config_keys();
  int n = 0;
  while (keys[n]) n++;
  mjp_defaultPlugin(p);
  p->name = SVI_PLUGIN_NAME;
  p->capabilityflags = mjPLUGIN_PASSIVE;
  p->nattribute = n;
  p->attributes = keys;
  p->nstate = plugin_nstate;
  p->init = plugin_init;
  p->destroy = plugin_destroy;
  p->copy = plugin_copy;
  p->reset = plugin_reset;
  p->compute = plugin_compute;
  p->advance = plugin_advance;
}

void svi_plugin_register(void) {
  static mjpPlugin plugin;
  if (!plugin.name) fill_plugin(&plugin);
  mjp_registerPlugin(&plugin);   /* re-registering the identical struct is a no-op */
}

mjPLUGIN_LIB_INIT(svi_impact) { svi_plugin_register(); }

/* ---------------------------------------------------------------------------------------------
 * Small accessors.
 */
const svi_config* svi_instance_config(const svi_instance* in) { return &in->cfg; }
void svi_set_law(svi_instance* in, int law) { in->law_override = law >= 0 && law < SVI_NLAW ? law : -1; }
void svi_set_seed(svi_instance* in, uint64_t seed) { in->cfg.seed = seed; }
int svi_state_stream_index(const mjModel* m) {
  int id = m ? svi_plugin_instance(m) : -1;
  return id < 0 ? -1 : m->plugin_stateadr[id] + SVI_STATE_STREAM;
}
svi_counters svi_instance_counters(const svi_instance* in) {
  svi_counters c = in->counters;
  c.pseudo_ambiguous = in->pseudo_ambiguous;
  c.pseudo_demoted = in->pseudo_demoted;
  return c;
}
const char* svi_instance_message(const svi_instance* in) { return in->message; }
size_t svi_event_size(void) { return sizeof(svi_event); }
size_t svi_approx_stats_size(void) { return sizeof(svi_approx_stats); }

svi_law svi_current_law(const svi_instance* in) {
  return in->law_override >= 0 ? (svi_law)in->law_override : in->cfg.law;
}
