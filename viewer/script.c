/* script.c -- the scripted mode: a file of actions drives the real window through the same input
 * path as a person (vw_key, vw_mouse_button), one action per line, '#' comments.  Every state
 * change is printed on stdout (see sim.c, alts.c).  Coordinates are window pixels, top-left
 * origin, as xdotool uses them.
 *
 *   frames N                 render N frames (each advances 1/60 s of simulation while running)
 *   wait S                   run S simulated seconds (through impacts: pause on impact is ignored)
 *   sleep MS                 render for MS ms of wall time (outside input, e.g. xdotool, arrives)
 *   key NAME                 a key press: space enter tab escape backspace left right pageup f1..f12
 *                            = - [ ] a..z 0..9, with prefixes ctrl+ shift+ alt+
 *   key-repeat NAME N        N auto-repeat events of a held key
 *   click X Y [right] [ctrl] [shift]   dclick X Y [...]   drag X0 Y0 X1 Y1 [right] [ctrl]
 *   click-button NAME        a click on the panel item labelled NAME (case-insensitive)
 *   pick K                   a click on inset point K
 *   ghost K | drawn N        a click on ghost K (-1: the current outcome's), or on the N-th blue
 *                            ghost drawn on its own
 *   select I                 select event I
 *   seed S                   the next Resample uses seed S
 *   screenshot PATH          the window as a PNG
 *   print                    the state line
 *   where button NAME | inset K | ghost K | ghost drawn N | body I   the window pixel of a target
 *   await-alts MS            render until the selected impact's alternatives are complete
 *   await-click MS [T]       render until a person's resample or pick happened and its replay
 *                            ended (or shows T s after the impact)
 *   await-replay T           render until the replay shows T s after the impact (or ended)
 *   wait-replay              render until the replay ends
 *   where inset-box          the inset's rectangle: left, top, right, bottom
 *   repeat N ACTION ...      the action N times
 *   fps N [play] [orbit] [idle]   N frames while the alternatives are recomputed in the
 *                            background (play: running; orbit: the camera turns, so every frame is
 *                            rendered; idle: no recomputation)
 *   latency N                N clicks on Resample: click to the new outcome on screen
 *   realtime on|off          pace the simulation by the wall clock, as for a person (default off:
 *                            1/60 s per frame, reproducible)
 *   quit
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "viewer.h"

static int key_code(const char* s) {
  static const struct { const char* name; int key; } named[] = {
    {"space", GLFW_KEY_SPACE}, {"enter", GLFW_KEY_ENTER}, {"tab", GLFW_KEY_TAB},
    {"escape", GLFW_KEY_ESCAPE}, {"esc", GLFW_KEY_ESCAPE}, {"backspace", GLFW_KEY_BACKSPACE},
    {"left", GLFW_KEY_LEFT}, {"right", GLFW_KEY_RIGHT}, {"up", GLFW_KEY_UP}, {"down", GLFW_KEY_DOWN},
    {"pageup", GLFW_KEY_PAGE_UP}, {"pagedown", GLFW_KEY_PAGE_DOWN}, {"=", GLFW_KEY_EQUAL},
    {"-", GLFW_KEY_MINUS}, {"[", GLFW_KEY_LEFT_BRACKET}, {"]", GLFW_KEY_RIGHT_BRACKET},
    {"kp+", GLFW_KEY_KP_ADD}, {"kp-", GLFW_KEY_KP_SUBTRACT}};
  for (size_t i = 0; i < sizeof(named) / sizeof(named[0]); i++)
    if (!strcasecmp(s, named[i].name)) return named[i].key;
  if ((s[0] == 'f' || s[0] == 'F') && s[1] >= '1' && s[1] <= '9') return GLFW_KEY_F1 + atoi(s + 1) - 1;
  if (strlen(s) == 1 && s[0] >= 'a' && s[0] <= 'z') return GLFW_KEY_A + (s[0] - 'a');
  if (strlen(s) == 1 && s[0] >= '0' && s[0] <= '9') return GLFW_KEY_0 + (s[0] - '0');
  if (strlen(s) == 1 && strchr(",./;'`\\", s[0])) return s[0];   /* GLFW's codes are ASCII */
  return -1;
}

/* "ctrl+shift+z" -> key and modifiers */
static int parse_key(const char* spec, int* mods) {
  *mods = 0;
  for (;;) {
    if (!strncasecmp(spec, "ctrl+", 5)) { *mods |= GLFW_MOD_CONTROL; spec += 5; }
    else if (!strncasecmp(spec, "shift+", 6)) { *mods |= GLFW_MOD_SHIFT; spec += 6; }
    else if (!strncasecmp(spec, "alt+", 4)) { *mods |= GLFW_MOD_ALT; spec += 4; }
    else break;
  }
  return key_code(spec);
}

static int mods_of(const char* rest) {
  int m = 0;
  if (strstr(rest, "ctrl")) m |= GLFW_MOD_CONTROL;
  if (strstr(rest, "shift")) m |= GLFW_MOD_SHIFT;
  return m;
}

/* a click as a person makes it: press and release at one point, frames in between */
static void click_at(viewer* v, double x, double y, int button, int mods) {
  vw_mouse_move(v, x, y);
  vw_mouse_button(v, button, 1, x, y, mods, glfwGetTime());
  vw_frame(v);
  vw_mouse_button(v, button, 0, x, y, mods, glfwGetTime());
}

static void drag(viewer* v, double x0, double y0, double x1, double y1, int button, int mods) {
  vw_mouse_move(v, x0, y0);
  vw_mouse_button(v, button, 1, x0, y0, mods, glfwGetTime());
  for (int i = 1; i <= 10; i++) {
    vw_mouse_move(v, x0 + (x1 - x0) * i / 10, y0 + (y1 - y0) * i / 10);
    vw_frame(v);
  }
  vw_mouse_button(v, button, 0, x1, y1, mods, glfwGetTime());
}

static void gl_to_window(viewer* v, double gx, double gy, double* x, double* y) {
  int fw, fh, ww, wh;
  glfwGetFramebufferSize(v->win, &fw, &fh);
  glfwGetWindowSize(v->win, &ww, &wh);
  double ratio = ww > 0 ? (double)fw / ww : 1;
  *x = gx / ratio;
  *y = (fh - gy) / ratio;
}

/* the n-th blue ghost drawn on its own (not merged with another), from 1 */
static int drawn_ghost(const viewer* v, int n) {
  for (int k = 0; k < v->ghosts_cached_for; k++)
    if (v->gmerged[k] < 0 && --n == 0) return k;
  return -2;
}

static int ghost_window_point(viewer* v, int k, double* x, double* y) {
  int K = v->ghosts_cached_for;
  if (k == -2) return -1;
  if (k < 0) k = K;
  double gx, gy;
  if (K < 0 || vw_ghost_where(v, k, &gx, &gy) < 0) return -1;
  gl_to_window(v, gx, gy, x, y);
  return k;
}

static void frames_until(viewer* v, int (*done)(viewer*), double ms) {
  double t0 = vw_now_ms();
  while (!done(v) && vw_now_ms() - t0 < ms && !glfwWindowShouldClose(v->win)) {
    vw_frame(v);
    glfwPollEvents();
  }
}

/* the selected impact's alternatives are complete (runs until an impact happens first) */
static int alts_done(viewer* v) {
  if (!v->has_plugin) return 1;
  return vw_selected_event(v) && vw_alts_ready(v, VW_STAGE_SET) && (!v->show_ghosts || vw_current_ready(v));
}
static int replay_done(viewer* v) { return !v->replay.phase; }
static int await_start;
static double await_at = -1;   /* > 0: stop when the replay shows this long after the impact */

static int replay_reached(viewer* v) {
  if (await_at < 0) return !v->replay.phase;
  return !v->replay.phase || (v->replay.phase >= VW_REPLAY_POST && vw_shown_time(v) >= v->replay.t_event + await_at - 1e-9);
}

static int click_done(viewer* v) {
  return v->user_actions > await_start && v->click_t0 == 0 && replay_reached(v);
}

/* --------------------------------------------------------------------------------------------- */
static void print_where(viewer* v, const char* what, const char* arg) {
  double x = -1, y = -1;
  int ok = -1;
  if (!strcasecmp(what, "button")) ok = vw_ui_item_center(v, arg, &x, &y);
  else if (!strcasecmp(what, "inset") && vw_alts_ready(v, VW_STAGE_SET) && atoi(arg) < v->alts->nset) {
    double gx, gy;
    vw_inset_point_where(v, atoi(arg), &gx, &gy);
    gl_to_window(v, gx, gy, &x, &y);
    ok = 0;
  } else if (!strcasecmp(what, "ghost")) {
    int k = !strncasecmp(arg, "drawn", 5) ? drawn_ghost(v, atoi(arg + 5)) : atoi(arg);
    ok = ghost_window_point(v, k, &x, &y) >= 0 ? 0 : -1;
  } else if (!strcasecmp(what, "body") && atoi(arg) > 0 && atoi(arg) < v->m->nbody) {
    double gx, gy;
    float p[3];
    for (int c = 0; c < 3; c++) p[c] = (float)vw_shown_data(v)->xpos[3 * atoi(arg) + c];
    ok = vw_project(v, p, &gx, &gy);
    gl_to_window(v, gx, gy, &x, &y);
  }
  else if (!strcasecmp(what, "inset-box") && vw_inset_visible(v)) {   /* left top right bottom */
    mjrRect r = vw_inset_rect(v);
    double x1, y1;
    gl_to_window(v, r.left, r.bottom + r.height, &x, &y);
    gl_to_window(v, r.left + r.width, r.bottom, &x1, &y1);
    printf("where inset-box box=%.0f,%.0f,%.0f,%.0f ok\n", x, y, x1, y1);
    fflush(stdout);
    return;
  }
  printf("where %s %s x=%.0f y=%.0f %s\n", what, arg, x, y, ok == 0 ? "ok" : "missing");
  fflush(stdout);
}

static void fps_action(viewer* v, int n, int play, int idle, int orbit) {
  int was = v->run, busy = 0, renders = v->renders;
  if (play) vw_set_running(v, 1);
  double t0 = vw_now_ms();
  if (!idle) vw_alts_force(v);
  for (int i = 0; i < n; i++) {
    /* keep the worker computing for the whole measurement: the worst case */
    if (!idle && !atomic_load(&v->wk.busy) && !atomic_load(&v->wk.req_pending)) vw_alts_force(v);
    if (orbit) v->cam.azimuth += 0.5;   /* a changing view: every frame is rendered */
    vw_frame(v);
    busy += atomic_load(&v->wk.busy);
  }
  double fps = n / ((vw_now_ms() - t0) / 1e3);
  printf("fps frames=%d fps=%.1f ghosts_drawn=%d worker_busy_frames=%d running=%d rendered=%d scale=%.2f\n",
         n, fps, v->ghosts_drawn, busy, v->run, v->renders - renders, v->res_scale);
  fflush(stdout);
  vw_set_running(v, was);
}

static void latency_action(viewer* v, int n) {
  double sf = 0, sg = 0, sm = 0, mf = 0, mg = 0, mm = 0;
  int done = 0;
  const char* button = v->resample_ok ? "Resample" : "Replay";
  for (int i = 0; i < n; i++) {
    double x, y;
    if (vw_ui_item_center(v, button, &x, &y) != 0) break;
    await_start = v->user_actions;
    click_at(v, x, y, GLFW_MOUSE_BUTTON_LEFT, 0);
    frames_until(v, click_done, 10000);
    if (v->user_actions == await_start) continue;
    sf += v->lat_frame; sg += v->lat_ghost; sm += v->lat_motion;
    mf = fmax(mf, v->lat_frame); mg = fmax(mg, v->lat_ghost); mm = fmax(mm, v->lat_motion);
    done++;
  }
  if (!done) done = 1;
  printf("latency clicks=%d button=\"%s\" frame_ms=%.1f/%.1f ghost_ms=%.1f/%.1f motion_ms=%.1f/%.1f (mean/max)\n",
         n, button, sf / done, mf, sg / done, mg, sm / done, mm);
  fflush(stdout);
}

static int run_line(viewer* v, char* line);

static void repeat_action(viewer* v, char* rest) {
  int n = atoi(rest);
  char* action = strchr(rest, ' ');
  if (!action) return;
  for (int i = 0; i < n; i++) {
    char copy[1024];
    snprintf(copy, sizeof(copy), "%s", action + 1);
    run_line(v, copy);
  }
}

/* wait: run through impacts for S simulated seconds */
static void wait_action(viewer* v, double s) {
  double t = v->d->time + s;
  while (v->d->time < t - 1e-12 && !glfwWindowShouldClose(v->win)) {
    if (!v->replay.phase) v->run = 1;
    vw_frame(v);
  }
  v->run = 0;
  v->ui_dirty = 1;
}

static int run_line(viewer* v, char* line) {
  char cmd[64] = "", rest[960] = "";
  line[strcspn(line, "\r\n")] = 0;
  if (sscanf(line, "%63s %959[^\n]", cmd, rest) < 1 || cmd[0] == '#') return 1;
  double a = 0, b = 0, c = 0, e = 0;
  int n = sscanf(rest, "%lf %lf %lf %lf", &a, &b, &c, &e);
  int button = strstr(rest, "right") ? GLFW_MOUSE_BUTTON_RIGHT : GLFW_MOUSE_BUTTON_LEFT;
  if (!strcmp(cmd, "frames")) { for (int i = 0; i < (int)a; i++) vw_frame(v); }
  else if (!strcmp(cmd, "wait")) wait_action(v, a);
  else if (!strcmp(cmd, "sleep")) {
    double t0 = vw_now_ms();
    while (vw_now_ms() - t0 < a && !glfwWindowShouldClose(v->win)) { vw_frame(v); glfwPollEvents(); }
  } else if (!strcmp(cmd, "key") || !strcmp(cmd, "key-repeat")) {
    char name[64] = "";
    int count = 1, mods;
    sscanf(rest, "%63s %d", name, &count);
    int k = parse_key(name, &mods);
    if (k < 0) { fprintf(stderr, "script: unknown key '%s'\n", name); return 1; }
    if (!strcmp(cmd, "key")) vw_key(v, k, mods, 0);
    else for (int i = 0; i < count; i++) vw_key(v, k, mods, i > 0);
  } else if (!strcmp(cmd, "click") && n >= 2) click_at(v, a, b, button, mods_of(rest));
  else if (!strcmp(cmd, "dclick") && n >= 2) {
    click_at(v, a, b, button, mods_of(rest));
    click_at(v, a, b, button, mods_of(rest));
  } else if (!strcmp(cmd, "drag") && n >= 4) drag(v, a, b, c, e, button, mods_of(rest));
  else if (!strcmp(cmd, "click-button")) {
    double x, y;
    if (vw_ui_item_center(v, rest, &x, &y) == 0) click_at(v, x, y, GLFW_MOUSE_BUTTON_LEFT, 0);
    else fprintf(stderr, "script: no panel item '%s'\n", rest);
  } else if (!strcmp(cmd, "pick")) {
    frames_until(v, alts_done, 20000);
    if (vw_alts_ready(v, VW_STAGE_SET) && (int)a >= 0 && (int)a < v->alts->nset) {
      double gx, gy, x, y;
      vw_inset_point_where(v, (int)a, &gx, &gy);
      gl_to_window(v, gx, gy, &x, &y);
      click_at(v, x, y, GLFW_MOUSE_BUTTON_LEFT, 0);
    }
  } else if (!strcmp(cmd, "ghost")) {
    frames_until(v, alts_done, 20000);
    vw_frame(v);
    double x, y;
    int k = !strncasecmp(rest, "drawn", 5) ? drawn_ghost(v, atoi(rest + 5)) : (int)a;
    if (ghost_window_point(v, k, &x, &y) >= 0) click_at(v, x, y, GLFW_MOUSE_BUTTON_LEFT, 0);
    else fprintf(stderr, "script: ghost '%s' is not on screen\n", rest);
  } else if (!strcmp(cmd, "select")) vw_select_event(v, (int)a);
  else if (!strcmp(cmd, "seed")) v->next_seed = strtoull(rest, NULL, 10);
  else if (!strcmp(cmd, "screenshot")) { vw_frame(v); vw_render(v); vw_screenshot(v, rest); }
  else if (!strcmp(cmd, "print")) vw_print_state(v, "state");
  else if (!strcmp(cmd, "where")) {
    char what[32] = "";
    int off = 0;
    sscanf(rest, "%31s %n", what, &off);
    print_where(v, what, rest + off);
  } else if (!strcmp(cmd, "await-alts")) frames_until(v, alts_done, n >= 1 ? a : 20000);
  else if (!strcmp(cmd, "await-click")) {
    await_start = v->user_actions;
    await_at = n >= 2 ? b : -1;
    frames_until(v, click_done, n >= 1 ? a : 20000);
    await_at = -1;
  } else if (!strcmp(cmd, "await-replay")) {
    await_at = a;
    frames_until(v, replay_reached, 20000);
    await_at = -1;
  } else if (!strcmp(cmd, "wait-replay")) frames_until(v, replay_done, 20000);
  else if (!strcmp(cmd, "repeat")) repeat_action(v, rest);
  else if (!strcmp(cmd, "fps"))
    fps_action(v, (int)a, strstr(rest, "play") != NULL, strstr(rest, "idle") != NULL, strstr(rest, "orbit") != NULL);
  else if (!strcmp(cmd, "latency")) latency_action(v, (int)a);
  else if (!strcmp(cmd, "realtime")) { v->wall_pacing = !strcmp(rest, "on"); v->wall_prev = 0; }
  else if (!strcmp(cmd, "quit")) return 0;
  else fprintf(stderr, "script: unknown action '%s'\n", cmd);
  return 1;
}

int vw_run_script(viewer* v, const char* path) {
  FILE* f = fopen(path, "r");
  if (!f) { fprintf(stderr, "svi-viewer: cannot read script %s\n", path); return -1; }
  char line[1024];
  vw_frame(v);
  while (fgets(line, sizeof(line), f) && !glfwWindowShouldClose(v->win)) {
    glfwPollEvents();
    if (!run_line(v, line)) break;
  }
  fclose(f);
  return 0;
}
