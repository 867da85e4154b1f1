/* svi-viewer -- watch impacts, click to resample their outcomes, see the alternatives.
 *
 *   svi-viewer MODEL.xml [options]        (F1 in the window lists every control)
 *
 * A GLFW window drawn with MuJoCo's classic mjv/mjr renderer and its mjui panel, laid out and
 * controlled like MuJoCo's simulate.  The simulation is plain mj_step, in which svi.impact
 * (declared in the model, registered by this program's library) resolves impacts.  The viewer
 * pauses at each impact and shows its alternatives: ghosts of other outcomes, the set of
 * outcomes in an inset plot, native MuJoCo's.  A resample, a click on a ghost or on an inset
 * point continues from that outcome and replays the impact.  See docs/viewer.md.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "viewer.h"

double vw_now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return 1e3 * (double)t.tv_sec + 1e-6 * (double)t.tv_nsec;
}

/* MuJoCo's profiler timers (mjcb_time), in ms as simulate */
static mjtNum timer_ms(void) { return vw_now_ms(); }

/* --------------------------------------------------------------------------------------------- */
/* Latency of a resample or pick: to the first frame that shows the new outcome (state, HUD, set
 * mark), to the first frame with its ghost, and to the first frame of its motion (the replay past
 * its lead-in).  Printed for the scripted measurements. */
static void measure_latency(viewer* v) {
  if (v->click_t0 <= 0) return;
  glFinish();
  double ms = vw_now_ms() - v->click_t0;
  if (v->lat_frame < 0) { v->lat_frame = ms; printf("resample_to_frame_ms=%.1f\n", ms); }
  if (v->click_wait_ghost && (vw_current_ready(v) || !v->show_ghosts)) {
    v->click_wait_ghost = 0;
    v->lat_ghost = ms;
    printf("resample_to_ghost_ms=%.1f\n", ms);
  }
  if (v->click_wait_motion && v->replay.phase != VW_REPLAY_LEAD) {
    v->click_wait_motion = 0;
    v->lat_motion = ms;
    printf("resample_to_motion_ms=%.1f\n", ms);
  }
  if (!v->click_wait_ghost && !v->click_wait_motion) v->click_t0 = 0;
  fflush(stdout);
}

/* one frame: advance, take the worker's results, refresh the panel, draw, swap */
void vw_frame(viewer* v) {
  double now = vw_now_ms();
  double wall_dt = v->wall_prev > 0 ? (now - v->wall_prev) / 1e3 : 0;
  v->wall_prev = now;
  vw_advance(v, wall_dt);
  vw_alts_update(v);
  vw_ui_refresh(v);
  vw_scene_update(v);
  vw_render(v);
  glfwSwapBuffers(v->win);
  v->frames++;
  measure_latency(v);
  if (now - v->fps_t0 > 500) {
    v->fps = (v->frames - v->fps_f0) / ((now - v->fps_t0) / 1e3);
    v->fps_f0 = v->frames;
    v->fps_t0 = now;
  }
}

/* --------------------------------------------------------------------------------------------- */
static void usage(FILE* f) {
  fprintf(f,
    "usage: svi-viewer MODEL.xml [options]\n"
    "  --key NAME             start keyframe (default: 'impact', else the first keyframe, else qpos0)\n"
    "  --no-pause-on-impact   keep running through impacts (default: pause at each impact)\n"
    "  --paused               start paused\n"
    "  --ghosts K             alternatives drawn as ghosts (default 16, max %d)\n"
    "  --inset N              outcomes in the inset plot (default 256, max %d)\n"
    "  --width W --height H   window size (default 1280 x 800)\n"
    "  --font PERCENT         font scale 50..300 (default 100)\n"
    "  --quality              multisampling, shadows, reflections (off by default: slow in software GL)\n"
    "  --script FILE          drive the window with a file of actions (viewer/script.c)\n"
    "F1 in the window lists every control.\n", VW_MAX_GHOSTS, VW_MAX_SET);
}

typedef struct {
  const char* script;
  int width, height, paused;
} options;

static int parse_options(viewer* v, options* o, int argc, char** argv) {
  for (int i = 1; i < argc; i++) {
    const char* a = argv[i];
    const char* x = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) { usage(stdout); exit(0); }
    else if (!strcmp(a, "--script") && x) { o->script = x; i++; }
    else if (!strcmp(a, "--width") && x) { o->width = atoi(x); i++; }
    else if (!strcmp(a, "--height") && x) { o->height = atoi(x); i++; }
    else if (!strcmp(a, "--ghosts") && x) { v->nghost = atoi(x); i++; }
    else if (!strcmp(a, "--inset") && x) { v->nset = atoi(x); i++; }
    else if (!strcmp(a, "--key") && x) { snprintf(v->keyname, sizeof(v->keyname), "%s", x); i++; }
    else if (!strcmp(a, "--font") && x) { v->fontscale = atoi(x); i++; }
    else if (!strcmp(a, "--paused")) o->paused = 1;
    else if (!strcmp(a, "--no-pause-on-impact")) v->break_on_impact = 0;
    else if (!strcmp(a, "--quality")) v->quality = 1;
    else if (a[0] != '-' && !v->path[0]) snprintf(v->path, sizeof(v->path), "%s", a);
    else { fprintf(stderr, "svi-viewer: unknown option '%s'\n", a); usage(stderr); return -1; }
  }
  if (!v->path[0]) { usage(stderr); return -1; }
  v->nghost = v->nghost < 0 ? 0 : v->nghost > VW_MAX_GHOSTS ? VW_MAX_GHOSTS : v->nghost;
  v->nset = v->nset < 1 ? 1 : v->nset > VW_MAX_SET ? VW_MAX_SET : v->nset;
  v->fontscale = (int)fmin(300, fmax(50, 50 * lround(v->fontscale / 50.0)));
  return 0;
}

static void defaults(viewer* v) {
  v->nghost = 16;
  v->nset = 256;
  v->fontscale = 100;
  v->break_on_impact = 1;
  v->show_ghosts = v->show_set = 1;
  v->ui0_enable = 1;
  v->sim_per_frame = 1.0 / 60;
  v->selected = -1;
  v->lat_frame = 0;
  mjv_defaultOption(&v->opt);
  mjv_defaultCamera(&v->cam);
  mjv_defaultPerturb(&v->pert);
  mjr_defaultContext(&v->con);
  mjv_defaultScene(&v->scn);
  mjv_defaultScene(&v->gscn);
}

static GLFWwindow* open_window(const viewer* v, const options* o) {
  if (!glfwInit()) { fprintf(stderr, "svi-viewer: cannot initialise GLFW (no display?)\n"); return NULL; }
  /* software OpenGL (Mesa llvmpipe, e.g. under Xvfb) renders multisampling, shadows and
   * reflections on the CPU: off by default there, --quality turns them back on */
  glfwWindowHint(GLFW_SAMPLES, v->quality ? 4 : 0);
  GLFWwindow* w = glfwCreateWindow(o->width, o->height, "svi-viewer", NULL, NULL);
  if (!w) { fprintf(stderr, "svi-viewer: cannot create a window\n"); return NULL; }
  glfwMakeContextCurrent(w);
  glfwSwapInterval(v->vsync);
  return w;
}

int main(int argc, char** argv) {
  static viewer V;   /* large (mjUI): not on the stack */
  viewer* v = &V;
  options o = {NULL, 1280, 800, 0};
  defaults(v);
  if (parse_options(v, &o, argc, argv) != 0) return 2;
  v->scripted = o.script != NULL;
  v->vsync = !v->scripted;
  v->font = v->fontscale / 50 - 1;
  v->win = open_window(v, &o);
  if (!v->win) return 1;
  mjcb_time = timer_ms;
  if (vw_load_model(v, v->path) != 0) { glfwTerminate(); return 1; }
  vw_profiler_init(v);
  vw_ui_init(v);
  vw_ui_install_callbacks(v);
  vw_ui_modify(v);
  if (o.paused) vw_set_running(v, 0);
  else if (v->selected < 0) vw_set_running(v, 1);
  if (vw_worker_start(v) != 0) { fprintf(stderr, "svi-viewer: cannot start the worker thread\n"); return 1; }
  printf("viewer window=%dx%d pause_on_impact=%d\n", o.width, o.height, v->break_on_impact);
  fflush(stdout);
  if (o.script) vw_run_script(v, o.script);
  else
    while (!glfwWindowShouldClose(v->win)) {
      vw_frame(v);
      glfwPollEvents();
    }
  vw_worker_stop(v);
  vw_free_model(v);
  mjr_freeContext(&v->con);
  glfwTerminate();
  return 0;
}
