/* svi_config.c -- the config keys of an svi.impact instance: defaults, types, ranges, parsing. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "svi_mujoco_internal.h"

void svi_config_routh(const svi_config* cfg, svi_routh_config* r) {
  r->step = cfg->step;
  r->step_abs = cfg->step_abs;
  r->max_steps = cfg->max_steps;
  r->step_growth = cfg->step_growth;
  r->branch = cfg->branch;
}

svi_config svi_default_config(void) {
  svi_config c;
  memset(&c, 0, sizeof(c));
  c.law = SVI_LAW_SETVALUED;
  c.step = 1.0;
  c.step_abs = 0;
  c.max_steps = 10;
  c.seed = 1;
  c.branch = SVI_BRANCH_AUTO;
  c.friction_dirs = 4;
  c.window = 0.002;
  c.impact_speed = 0.01;
  c.band = 0.001;
  c.pseudo_impulse = 0;
  c.max_contacts = 64;
  c.log_events = 32;
  c.restitution = 1;
  c.split = 1;
  return c;
}

static const char* const law_names[SVI_NLAW] = {"setvalued", "simultaneous", "sequential", "native",
                                                "propagative"};

const char* svi_law_name(svi_law law) {
  return (unsigned)law < SVI_NLAW ? law_names[law] : "?";
}

int svi_law_from_name(const char* name) {
  for (int i = 0; name && i < SVI_NLAW; i++) if (!strcmp(name, law_names[i])) return i;
  return -1;
}

/* One row per key; docs/usage.md documents the same facts (unit, default, range). */
typedef enum { KEY_CHOICE, KEY_REAL, KEY_INT } key_type;

typedef struct {
  const char* name;
  key_type    type;
  double      lo, hi;          /* numeric range, inclusive */
  const char* choices;         /* KEY_CHOICE: '|'-separated */
  const char* unit;
} key_def;

static const key_def keys[] = {
  {"law",            KEY_CHOICE, 0, 0, "setvalued|simultaneous|sequential|native|propagative", ""},
  {"branch",         KEY_CHOICE, 0, 0, "auto|lemke|random|enumerate", ""},
  {"step",           KEY_REAL, 1e-6, 1e3, NULL, "x reference impulse"},
  {"step_abs",       KEY_REAL, 0, 1e9, NULL, "N s"},
  {"max_steps",      KEY_INT,  1, 10000, NULL, ""},
  {"step_growth",    KEY_REAL, 1, 1e3, NULL, ""},
  {"seed",           KEY_INT,  0, 18446744073709551615.0, NULL, ""},   /* [0, 2^64 - 1]: parse_uint */
  {"friction_dirs",  KEY_INT,  2, 4, NULL, ""},
  {"window",         KEY_REAL, 0, 1, NULL, "s"},
  {"impact_speed",   KEY_REAL, 0, 1e3, NULL, "m/s"},
  {"band",           KEY_REAL, 0, 1, NULL, "m"},
  {"pseudo_impulse", KEY_REAL, 0, 10, NULL, "s"},
  {"max_contacts",   KEY_INT,  1, 1024, NULL, ""},
  {"log_events",     KEY_INT,  1, 1000000, NULL, ""},
  {"restitution",    KEY_REAL, 0, 1, NULL, ""},
  {"split",          KEY_CHOICE, 0, 0, "groups|off", ""},
};
#define NKEYS ((int)(sizeof(keys) / sizeof(keys[0])))

const char* const* svi_config_keys(void) {
  static const char* names[NKEYS + 1];
  if (!names[0]) {
    for (int i = 0; i < NKEYS; i++) names[i] = keys[i].name;
    names[NKEYS] = NULL;
  }
  return names;
}

/* index of value in a '|'-separated list, or -1 */
static int choice_index(const char* choices, const char* value) {
  int idx = 0;
  size_t len = strlen(value);
  for (const char* p = choices; *p; idx++) {
    const char* bar = strchr(p, '|');
    size_t n = bar ? (size_t)(bar - p) : strlen(p);
    if (n == len && !strncmp(p, value, n)) return idx;
    if (!bar) break;
    p = bar + 1;
  }
  return -1;
}

/* strict number: the whole string (surrounding blanks allowed) is one finite decimal number */
static int parse_number(const char* s, double* x) {
  char* end = NULL;
  errno = 0;
  *x = strtod(s, &end);
  if (end == s || errno == ERANGE || !isfinite(*x)) return 0;
  while (*end == ' ' || *end == '\t' || *end == '\n') end++;
  return *end == 0;
}

/* strict integer: the whole string (surrounding blanks allowed) is decimal digits below 2^64
 * (no sign, exponent or fraction: "1e3" and "2.0" are not integers here, and a seed beyond 2^53
 * is not rounded through a double) */
static int parse_uint(const char* s, uint64_t* x) {
  while (*s == ' ' || *s == '\t' || *s == '\n') s++;
  if (*s < '0' || *s > '9') return 0;
  char* end = NULL;
  errno = 0;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno == ERANGE) return 0;
  while (*end == ' ' || *end == '\t' || *end == '\n') end++;
  if (*end) return 0;
  *x = (uint64_t)v;
  return 1;
}

static void apply(svi_config* c, const key_def* k, int idx, double x, uint64_t u) {
  const char* n = k->name;
  if (!strcmp(n, "law")) c->law = (svi_law)idx;
  else if (!strcmp(n, "branch")) {
    const svi_branch map[] = {SVI_BRANCH_AUTO, SVI_BRANCH_LEMKE, SVI_BRANCH_RANDOM, SVI_BRANCH_ENUMERATE};
    c->branch = map[idx];
  }
  else if (!strcmp(n, "step")) c->step = x;
  else if (!strcmp(n, "step_abs")) c->step_abs = x;
  else if (!strcmp(n, "max_steps")) c->max_steps = (int)x;
  else if (!strcmp(n, "step_growth")) c->step_growth = x;
  else if (!strcmp(n, "seed")) c->seed = u;
  else if (!strcmp(n, "friction_dirs")) c->friction_dirs = (int)x;
  else if (!strcmp(n, "window")) c->window = x;
  else if (!strcmp(n, "impact_speed")) c->impact_speed = x;
  else if (!strcmp(n, "band")) c->band = x;
  else if (!strcmp(n, "pseudo_impulse")) c->pseudo_impulse = x;
  else if (!strcmp(n, "max_contacts")) c->max_contacts = (int)x;
  else if (!strcmp(n, "log_events")) c->log_events = (int)x;
  else if (!strcmp(n, "restitution")) c->restitution = x;
  else if (!strcmp(n, "split")) c->split = idx == 0;
}

int svi_config_set(svi_config* cfg, const char* key, const char* value, char* err, int errlen) {
  const key_def* k = NULL;
  for (int i = 0; i < NKEYS && key; i++) if (!strcmp(keys[i].name, key)) k = &keys[i];
  if (!k) {
    int n = snprintf(err, (size_t)errlen, "svi.impact: unknown config key '%s'; allowed:", key ? key : "(null)");
    for (int i = 0; i < NKEYS && n > 0 && n < errlen; i++)
      n += snprintf(err + n, (size_t)(errlen - n), " %s", keys[i].name);
    return -1;
  }
  if (!value) value = "";
  if (k->type == KEY_CHOICE) {
    int idx = choice_index(k->choices, value);
    if (idx < 0) {
      snprintf(err, (size_t)errlen, "svi.impact: config '%s' = \"%s\" is not allowed: need one of %s",
               k->name, value, k->choices);
      return -1;
    }
    apply(cfg, k, idx, 0, 0);
    return 0;
  }
  double x = 0;
  uint64_t u = 0;
  int ok;
  if (k->type == KEY_INT) {   /* x: u rounded, only for the range (seed's 2^64 holds every u) */
    ok = parse_uint(value, &u);
    x = (double)u;
  } else {
    ok = parse_number(value, &x);
  }
  if (ok && (x < k->lo || x > k->hi)) ok = 0;
  if (ok && !strcmp(k->name, "friction_dirs") && x == 3) ok = 0;
  if (!ok) {
    if (!strcmp(k->name, "friction_dirs"))
      snprintf(err, (size_t)errlen, "svi.impact: config 'friction_dirs' = \"%s\" is not allowed: need 2 or 4", value);
    else if (k->type == KEY_INT)   /* the bound as written in keys[]: 2^64 - 1 rounds to 2^64 as a double */
      snprintf(err, (size_t)errlen, "svi.impact: config '%s' = \"%s\" is not allowed: need an integer in [%.0f, %llu] "
               "(decimal digits)", k->name, value, k->lo,
               k->hi >= 0x1p64 ? (unsigned long long)UINT64_MAX : (unsigned long long)k->hi);
    else
      snprintf(err, (size_t)errlen, "svi.impact: config '%s' = \"%s\" is not allowed: need a number in [%g, %g]%s%s",
               k->name, value, k->lo, k->hi, k->unit[0] ? " " : "", k->unit);
    return -1;
  }
  apply(cfg, k, 0, x, u);
  return 0;
}

int svi_plugin_instance(const mjModel* m) {
  int slot = -1;
  if (!m || !mjp_getPlugin(SVI_PLUGIN_NAME, &slot)) return -1;
  for (int i = 0; i < m->nplugin; i++) if (m->plugin[i] == slot) return i;
  return -1;
}

/* What the plugin cannot run under, said at compile time (nstate) and again at mj_makeData. */
static int check_model(const mjModel* m, int id, char* err, int errlen) {
  for (int i = id + 1; i < m->nplugin; i++) {
    if (m->plugin[i] == m->plugin[id]) {
      snprintf(err, (size_t)errlen, "svi.impact: the model declares %s more than once; one instance resolves "
               "every impact of the model", SVI_PLUGIN_NAME);
      return -1;
    }
  }
  if (m->opt.integrator == mjINT_RK4) {
    snprintf(err, (size_t)errlen,
             "svi.impact: the RK4 integrator is not supported: it evaluates the dynamics four times per "
             "step and discards a velocity jump made inside its stages, so impacts would be lost or "
             "resolved several times. Use integrator=\"Euler\", \"implicit\", \"implicitfast\" or \"discrete\"");
    return -1;
  }
  /* our compute re-runs mj_fwdVelocity, which runs every passive plugin again: one that comes
   * after svi.impact in the model would add its forces twice */
  for (int i = id + 1; i < m->nplugin; i++) {
    const mjpPlugin* p = mjp_getPluginAtSlot(m->plugin[i]);
    if (p && (p->capabilityflags & mjPLUGIN_PASSIVE)) {
      snprintf(err, (size_t)errlen,
               "svi.impact: the passive plugin '%s' is declared after svi.impact; svi.impact must be the last "
               "passive plugin (declare it last under <extension>)", p->name);
      return -1;
    }
  }
  return 0;
}

int svi_config_from_model(const mjModel* m, svi_config* cfg, char* err, int errlen) {
  char dummy[8];
  if (!err || errlen <= 0) { err = dummy; errlen = sizeof(dummy); }
  err[0] = 0;
  *cfg = svi_default_config();
  if (!m) { snprintf(err, (size_t)errlen, "svi.impact: NULL model"); return -1; }
  int id = svi_plugin_instance(m);
  if (id < 0) return 0;
  for (int i = 0; i < NKEYS; i++) {
    const char* v = mj_getPluginConfig(m, id, keys[i].name);
    if (!v || !v[0]) continue;   /* not set: the default */
    if (svi_config_set(cfg, keys[i].name, v, err, errlen)) return -1;
  }
  if (check_model(m, id, err, errlen)) return -1;
  return 1;
}

mjModel* svi_load_xml(const char* path, char* err, int errlen) {
  char e[1000] = "";
  mjModel* m = mj_loadXML(path, NULL, e, sizeof(e));
  if (!m) snprintf(err, (size_t)errlen, "%s: %s", path, e[0] ? e : "could not load");
  return m;
}

mjModel* svi_load_xml_native(const char* path, char* err, int errlen) {
  char e[1000] = "";
  mjSpec* spec = mj_parseXML(path, NULL, e, sizeof(e));
  if (!spec) {
    snprintf(err, (size_t)errlen, "%s: %s", path, e[0] ? e : "could not parse");
    return NULL;
  }
  /* every svi.impact instance (an instance without elements is a model-level plugin) */
  mjsElement* el = mjs_firstElement(spec, mjOBJ_PLUGIN);
  while (el) {
    mjsElement* next = mjs_nextElement(spec, el);
    mjsPlugin* p = mjs_asPlugin(el);
    const char* name = p ? mjs_getString(p->plugin_name) : NULL;
    if (name && !strcmp(name, SVI_PLUGIN_NAME)) mjs_delete(spec, el);
    el = next;
  }
  mjModel* m = mj_compile(spec, NULL);
  if (!m) snprintf(err, (size_t)errlen, "%s (without svi.impact): %s", path, mjs_getError(spec));
  mj_deleteSpec(spec);
  return m;
}
