/* svi_config.c -- the svi.* keys of a model's <custom> section: defaults, types, ranges. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "svi/svi_mujoco.h"

svi_config svi_default_config(void) {
  svi_config c;
  memset(&c, 0, sizeof(c));
  c.enabled = 0;
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
  c.log_events = 256;
  return c;
}

/* One table row per key: the documented reference (docs/usage.md) is generated from the same
 * facts, so keep both in step. */
typedef enum { KEY_TEXT, KEY_REAL, KEY_INT } key_type;

typedef struct {
  const char* name;
  key_type    type;
  double      lo, hi;          /* numeric range, inclusive */
  const char* choices;         /* text: '|'-separated */
  const char* unit;
} key_def;

static const key_def keys[] = {
  {"svi.plugin",         KEY_TEXT, 0, 0, SVI_PLUGIN_NAME, ""},
  {"svi.law",            KEY_TEXT, 0, 0, "setvalued|simultaneous|sequential|native", ""},
  {"svi.branch",         KEY_TEXT, 0, 0, "auto|lemke|random|enumerate", ""},
  {"svi.step",           KEY_REAL, 1e-6, 1e3, NULL, "x reference impulse"},
  {"svi.step_abs",       KEY_REAL, 0, 1e9, NULL, "N s"},
  {"svi.max_steps",      KEY_INT,  1, 10000, NULL, ""},
  {"svi.seed",           KEY_INT,  0, 9007199254740992.0, NULL, ""},
  {"svi.friction_dirs",  KEY_INT,  2, 4, NULL, ""},
  {"svi.window",         KEY_REAL, 0, 1, NULL, "s"},
  {"svi.impact_speed",   KEY_REAL, 0, 1e3, NULL, "m/s"},
  {"svi.band",           KEY_REAL, 0, 1, NULL, "m"},
  {"svi.pseudo_impulse", KEY_REAL, 0, 10, NULL, "s"},
  {"svi.max_contacts",   KEY_INT,  1, 1024, NULL, ""},
  {"svi.log_events",     KEY_INT,  1, 1000000, NULL, ""},
};
#define NKEYS ((int)(sizeof(keys) / sizeof(keys[0])))

static const key_def* find_key(const char* name) {
  for (int i = 0; i < NKEYS; i++) if (!strcmp(keys[i].name, name)) return &keys[i];
  return NULL;
}

static int err_unknown(const char* name, char* err, int errlen) {
  int n = snprintf(err, (size_t)errlen, "svi: unknown key '%s'; allowed:", name);
  for (int i = 0; i < NKEYS && n < errlen; i++)
    n += snprintf(err + n, (size_t)(errlen - n), " %s", keys[i].name);
  return -1;
}

/* index of value in a '|'-separated list, or -1 */
static int choice_index(const char* choices, const char* value) {
  int idx = 0;
  const char* p = choices;
  size_t len = strlen(value);
  while (*p) {
    const char* bar = strchr(p, '|');
    size_t n = bar ? (size_t)(bar - p) : strlen(p);
    if (n == len && !strncmp(p, value, n)) return idx;
    idx++;
    p += n + (bar ? 1 : 0);
    if (!bar) break;
  }
  return -1;
}

static void apply_text(svi_config* c, const char* name, int idx) {
  if (!strcmp(name, "svi.plugin")) c->enabled = 1;
  else if (!strcmp(name, "svi.law")) c->law = (svi_law)idx;
  else if (!strcmp(name, "svi.branch")) {
    const svi_branch map[] = {SVI_BRANCH_AUTO, SVI_BRANCH_LEMKE, SVI_BRANCH_RANDOM, SVI_BRANCH_ENUMERATE};
    c->branch = map[idx];
  }
}

static void apply_number(svi_config* c, const char* name, double x) {
  if (!strcmp(name, "svi.step")) c->step = x;
  else if (!strcmp(name, "svi.step_abs")) c->step_abs = x;
  else if (!strcmp(name, "svi.max_steps")) c->max_steps = (int)x;
  else if (!strcmp(name, "svi.seed")) c->seed = (uint64_t)x;
  else if (!strcmp(name, "svi.friction_dirs")) c->friction_dirs = (int)x;
  else if (!strcmp(name, "svi.window")) c->window = x;
  else if (!strcmp(name, "svi.impact_speed")) c->impact_speed = x;
  else if (!strcmp(name, "svi.band")) c->band = x;
  else if (!strcmp(name, "svi.pseudo_impulse")) c->pseudo_impulse = x;
  else if (!strcmp(name, "svi.max_contacts")) c->max_contacts = (int)x;
  else if (!strcmp(name, "svi.log_events")) c->log_events = (int)x;
}

static int check_number(const key_def* k, const mjtNum* data, int size, char* err, int errlen) {
  if (size != 1) {
    snprintf(err, (size_t)errlen, "svi: '%s' must hold exactly one number (got %d)", k->name, size);
    return -1;
  }
  double x = data[0];
  if (!isfinite(x) || x < k->lo || x > k->hi || (k->type == KEY_INT && x != floor(x))) {
    snprintf(err, (size_t)errlen, "svi: '%s' = %g is not allowed: need %s in [%g, %g]%s%s",
             k->name, x, k->type == KEY_INT ? "an integer" : "a number", k->lo, k->hi,
             k->unit[0] ? " " : "", k->unit);
    return -1;
  }
  if (!strcmp(k->name, "svi.friction_dirs") && x == 3) {
    snprintf(err, (size_t)errlen, "svi: 'svi.friction_dirs' = 3 is not allowed: need 2 or 4");
    return -1;
  }
  return 0;
}

int svi_config_from_model(const mjModel* m, svi_config* cfg, char* err, int errlen) {
  char dummy[8];
  if (!err || errlen <= 0) { err = dummy; errlen = sizeof(dummy); }
  err[0] = 0;
  *cfg = svi_default_config();
  if (!m) { snprintf(err, (size_t)errlen, "svi: NULL model"); return -1; }

  for (int i = 0; i < m->ntext; i++) {
    const char* name = m->names + m->name_textadr[i];
    if (strncmp(name, "svi.", 4)) continue;
    const key_def* k = find_key(name);
    if (!k) return err_unknown(name, err, errlen);
    if (k->type != KEY_TEXT) {
      snprintf(err, (size_t)errlen, "svi: '%s' must be a <numeric> element, not <text>", name);
      return -1;
    }
    const char* value = m->text_data + m->text_adr[i];
    int idx = choice_index(k->choices, value);
    if (idx < 0) {
      snprintf(err, (size_t)errlen, "svi: '%s' = \"%s\" is not allowed: need one of %s", name, value,
               k->choices);
      return -1;
    }
    apply_text(cfg, name, idx);
  }
  for (int i = 0; i < m->nnumeric; i++) {
    const char* name = m->names + m->name_numericadr[i];
    if (strncmp(name, "svi.", 4)) continue;
    const key_def* k = find_key(name);
    if (!k) return err_unknown(name, err, errlen);
    if (k->type == KEY_TEXT) {
      snprintf(err, (size_t)errlen, "svi: '%s' must be a <text> element, not <numeric>", name);
      return -1;
    }
    if (check_number(k, m->numeric_data + m->numeric_adr[i], m->numeric_size[i], err, errlen)) return -1;
    apply_number(cfg, name, m->numeric_data[m->numeric_adr[i]]);
  }
  return cfg->enabled;
}

mjModel* svi_load_xml(const char* path, char* err, int errlen) {
  char e[1000] = "";
  mjModel* m = mj_loadXML(path, NULL, e, sizeof(e));
  if (!m) {
    snprintf(err, (size_t)errlen, "%s: %s", path, e[0] ? e : "could not load");
    return NULL;
  }
  svi_config c;
  if (svi_config_from_model(m, &c, err, errlen) < 0) {
    mj_deleteModel(m);
    return NULL;
  }
  return m;
}
