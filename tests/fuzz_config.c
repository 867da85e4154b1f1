/* fuzz_config.c -- a bounded-time fuzz harness for svi.impact's MJCF configuration and for loading
 * models that declare it (mutated bundled models).  Every case is compiled from a string with
 * mj_parseXMLString + mj_compile; a model that compiles is made (mj_makeData) and stepped a little.
 * It must never crash (the sanitizer build runs it too), never write a non-finite number into an
 * event record, and every refused config must come with a message naming the key.
 *
 *   fuzz_config MODELS_DIR SECONDS [SEED]
 *
 * Deterministic for a seed: a failure prints the case number; the case being run is also written
 * to fuzz_last_case.xml (in the working directory) before it runs, so a crash leaves it behind.
 */
#define _POSIX_C_SOURCE 200809L
#include <dirent.h>
#include <math.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "svi/svi_mujoco.h"
#include "svi_test.h"

static uint64_t rng_state;
static uint64_t rnd(void) {   /* SplitMix64 */
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}
static int rint_(int n) { return (int)(rnd() % (uint64_t)n); }

/* MuJoCo's errors (mju_error) come back here instead of ending the process, as in Python */
static jmp_buf err_jmp;
static char err_msg[1024];
static void on_error(const char* msg) {
  snprintf(err_msg, sizeof(err_msg), "%s", msg);
  longjmp(err_jmp, 1);
}
static void on_warning(const char* msg) { (void)msg; }

static const char* const values[] = {
  "", "0", "1", "-1", "0.5", "1e-300", "1e300", "nan", "inf", "-inf", "1e9", "2", "3", "4", "10000", "10001",
  "1.5", "0x10", " 7 ", "7s", "1 2", "abc", "setvalued", "native", "propagative", "SETVALUED", "auto",
  "enumerate", "lemke", "random", "9007199254740992", "9007199254740993", "18446744073709551616", "-0",
  "1e-6", "0.999999", "1.000001", "\xff\xfe", "&amp;", "1024", "1025", "64", "0.03"};
#define NVALUES ((int)(sizeof(values) / sizeof(values[0])))

/* a random key: a real one, a case or spelling variant, or garbage */
static void random_key(char* key, size_t n) {
  const char* const* keys = svi_config_keys();
  int nk = 0;
  while (keys[nk]) nk++;
  const char* k = keys[rint_(nk)];
  snprintf(key, n, "%s", k);
  switch (rint_(6)) {
    case 0: key[0] = (char)(key[0] - 32); break;                    /* Law */
    case 1: key[rint_((int)strlen(key))] = (char)('a' + rint_(26)); break;   /* misspelt */
    case 2: snprintf(key, n, "%s_", k); break;
    default: break;                                                 /* the real key */
  }
}

static void config_case(char* xml, size_t n) {
  int len = snprintf(xml, n, "<mujoco><option timestep='0.002' %s/><extension><plugin plugin='svi.impact'>"
                     "<instance name='svi'>", rint_(8) ? "" : "integrator='RK4'");
  int nkeys = rint_(4);
  char used[16][64];
  for (int i = 0; i < nkeys; i++) {
    random_key(used[i], sizeof(used[i]));
    int dup = 0;
    for (int j = 0; j < i; j++) dup |= !strcmp(used[i], used[j]);
    if (dup) continue;   /* MJCF rejects a repeated key itself */
    len += snprintf(xml + len, n - (size_t)len, "<config key='%s' value='%s'/>", used[i], values[rint_(NVALUES)]);
  }
  snprintf(xml + len, n - (size_t)len,
           "</instance></plugin></extension><worldbody><geom type='plane' size='2 2 .1' gap='0.002'/>"
           "<body pos='0 0 0.2' euler='%d %d 0'><freejoint/><geom type='box' size='.1 .07 .05' gap='0.002'/></body>"
           "</worldbody></mujoco>", rint_(60), rint_(60));
}

/* a mutated bundled model: numbers replaced, spans deleted or duplicated, bytes flipped */
static void model_case(char* xml, size_t n, char** models, size_t* sizes, int nmodels) {
  int k = rint_(nmodels);
  size_t len = sizes[k] < n - 1 ? sizes[k] : n - 1;
  memcpy(xml, models[k], len);
  xml[len] = 0;
  int nmut = 1 + rint_(3);
  for (int i = 0; i < nmut && len > 2; i++) {
    size_t at = (size_t)rint_((int)len);
    switch (rint_(4)) {
      case 0: {   /* a number -> another value */
        while (at < len && !(xml[at] >= '0' && xml[at] <= '9')) at++;
        size_t end = at;
        while (end < len && ((xml[end] >= '0' && xml[end] <= '9') || xml[end] == '.' || xml[end] == 'e' || xml[end] == '-')) end++;
        const char* v = values[rint_(NVALUES)];
        size_t vl = strlen(v);
        if (at >= len || len - (end - at) + vl >= n) break;
        memmove(xml + at + vl, xml + end, len - end + 1);
        memcpy(xml + at, v, vl);
        len = len - (end - at) + vl;
        break;
      }
      case 1: {   /* delete a span */
        size_t span = 1 + (size_t)rint_(40);
        if (at + span > len) span = len - at;
        memmove(xml + at, xml + at + span, len - at - span + 1);
        len -= span;
        break;
      }
      case 2: {   /* duplicate a span */
        size_t span = 1 + (size_t)rint_(60);
        if (at + span > len) span = len - at;
        if (len + span >= n) break;
        memmove(xml + at + span, xml + at, len - at + 1);
        len += span;
        break;
      }
      default: xml[at] = (char)(32 + rint_(95)); break;   /* a printable byte */
    }
  }
}

typedef struct { long long cases, compiled, refused, stepped, events, bad_message, nonfinite; } stats;

static void run_case(const char* xml, stats* st, long long id) {
  FILE* f = fopen("fuzz_last_case.xml", "w");
  if (f) { fputs(xml, f); fclose(f); }
  st->cases++;
  char err[1000] = "";
  mjSpec* spec = NULL;
  mjModel* m = NULL;
  mjData* d = NULL;
  if (setjmp(err_jmp)) {   /* an mju_error outside the compiler (mj_makeData, mj_step) */
    if (!strstr(err_msg, "svi") && !strstr(err_msg, "plugin")) { /* MuJoCo's own: not ours to judge */ }
    if (d) mj_deleteData(d);
    if (m) mj_deleteModel(m);
    if (spec) mj_deleteSpec(spec);
    return;
  }
  spec = mj_parseXMLString(xml, NULL, err, sizeof(err));
  if (!spec) return;
  m = mj_compile(spec, NULL);
  if (!m) {
    const char* e = mjs_getError(spec);
    /* a refusal of ours names the key or the reason */
    if (strstr(e, "svi.impact:") && !strstr(e, "config '") && !strstr(e, "RK4") && !strstr(e, "more than once") &&
        !strstr(e, "passive plugin") && !strstr(e, "unknown config key")) {
      st->bad_message++;
      fprintf(stderr, "case %lld: refusal without the key: %s\n", id, e);
    }
    if (strstr(e, "svi.impact")) st->refused++;
    mj_deleteSpec(spec);
    return;
  }
  st->compiled++;
  d = mj_makeData(m);
  if (d) {
    svi_instance* in = svi_instance_of(m, d);
    if (m->nkey > 0) mj_resetDataKeyframe(m, d, 0);
    for (int i = 0; i < 300; i++) mj_step(m, d);
    st->stepped++;
    for (int i = 0; in && i < svi_event_count(in); i++) {
      const svi_event* e = svi_event_get(in, i);
      st->events++;
      /* under the native law, what MuJoCo does after the event is not recorded: ke_after and
       * vn_after are NaN (documented); everything else is finite */
      int native = e->law == SVI_LAW_NATIVE;
      int bad = !isfinite(e->ke_before) || (!native && e->fallback < 3 && !isfinite(e->ke_after));
      for (int k = 0; k < e->ncontact && k < SVI_EVENT_MAX_CONTACTS; k++)
        bad |= (!native && !isfinite(e->vn_after[k])) || (native && !isnan(e->vn_after[k])) ||
               !isfinite(e->impulse[k][0]);
      if (bad) { st->nonfinite++; fprintf(stderr, "case %lld: a non-finite number in event %d\n", id, i); }
    }
    mj_deleteData(d);
    d = NULL;
  }
  mj_deleteModel(m);
  m = NULL;
  mj_deleteSpec(spec);
}

int main(int argc, char** argv) {
  const char* dir = argc > 1 ? argv[1] : "models";
  double seconds = argc > 2 ? atof(argv[2]) : 60;
  rng_state = argc > 3 ? strtoull(argv[3], NULL, 10) : 1;
  mju_user_error = on_error;
  mju_user_warning = on_warning;
  /* the bundled models, as mutation seeds */
  char* models[64];
  size_t sizes[64];
  int nmodels = 0;
  DIR* dd = opendir(dir);
  struct dirent* e;
  while (dd && (e = readdir(dd)) && nmodels < 64) {
    size_t l = strlen(e->d_name);
    if (l < 5 || strcmp(e->d_name + l - 4, ".xml")) continue;
    char path[1200];
    snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
    FILE* f = fopen(path, "rb");
    if (!f) continue;
    fseek(f, 0, SEEK_END);
    long sz = ftell(f);
    fseek(f, 0, SEEK_SET);
    models[nmodels] = malloc((size_t)sz + 1);
    sizes[nmodels] = fread(models[nmodels], 1, (size_t)sz, f);
    models[nmodels][sizes[nmodels]] = 0;
    fclose(f);
    nmodels++;
  }
  if (dd) closedir(dd);
  CHECK(nmodels > 0, "bundled models found in %s", dir);
  static char xml[1 << 17];
  stats st = {0};
  struct timespec t0, t;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (long long id = 0;; id++) {
    clock_gettime(CLOCK_MONOTONIC, &t);
    if ((double)(t.tv_sec - t0.tv_sec) + 1e-9 * (double)(t.tv_nsec - t0.tv_nsec) > seconds) break;
    if (id % 2 == 0 || nmodels == 0) config_case(xml, sizeof(xml));
    else model_case(xml, sizeof(xml), models, sizes, nmodels);
    run_case(xml, &st, id);
  }
  printf("fuzz: %lld cases in %.0f s: %lld compiled, %lld refused by svi.impact, %lld stepped, %lld events\n",
         st.cases, seconds, st.compiled, st.refused, st.stepped, st.events);
  CHECK(st.cases > 100 && st.refused > 0 && st.stepped > 0, "the fuzzer reached refusals and running models");
  CHECK(st.bad_message == 0, "every refusal names the key or the reason (%lld did not)", st.bad_message);
  CHECK(st.nonfinite == 0, "no event record holds a non-finite number (%lld did)", st.nonfinite);
  for (int i = 0; i < nmodels; i++) free(models[i]);
  remove("fuzz_last_case.xml");
  return svi_test_finish();
}
