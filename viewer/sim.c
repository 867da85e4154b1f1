/* sim.c -- the simulation in real time, pause on impact, and what a click on an outcome does:
 * resample (svi_event_resample), the replay of the impact that follows, undo and redo. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "viewer.h"

/* simulate's logarithmically spaced real-time percentages: + and - walk this list */
const float vw_speed_percent[VW_NSPEED] = {
  100, 80, 66, 50, 40, 33, 25, 20, 16, 13, 10, 8, 6.6f, 5, 4, 3.3f,
  2.5f, 2, 1.6f, 1.3f, 1, .8f, .66f, .5f, .4f, .33f, .25f, .2f, .16f, .13f, .1f};

/* the stepping a frame may do while the simulation cannot keep up (the rest is dropped and the
 * real-time factor shows it): keeps the frame rate above 30 fps */
#define STEP_BUDGET_MS 18.0

void vw_message(viewer* v, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(v->message, sizeof(v->message), fmt, ap);
  va_end(ap);
  v->message_until = vw_now_ms() + 4000;
  printf("message %s\n", v->message);
  fflush(stdout);
}

const svi_event* vw_selected_event(const viewer* v) {
  return v->in && v->selected >= 0 ? svi_event_get(v->in, v->selected) : NULL;
}

/* the law whose set the inset and the ghosts show: the propagative law's own set for its events,
 * the set-valued law's for every other law (it contains simultaneous, sequential and native) */
int vw_set_law(const svi_event* e) {
  return e && e->law == SVI_LAW_PROPAGATIVE ? SVI_LAW_PROPAGATIVE : SVI_LAW_SETVALUED;
}

/* What is drawn: the replay's copy while it runs, else the simulation. */
mjData* vw_shown_data(const viewer* v) { return v->replay.phase ? v->disp : v->d; }

double vw_shown_time(const viewer* v) {
  return v->replay.phase == VW_REPLAY_LEAD ? v->replay.t_show : vw_shown_data(v)->time;
}

/* the time the ghosts show: where the alternatives differ most (the end when they are equal) */
double vw_ghost_time(const viewer* v) {
  int tau = vw_alts_ready(v, VW_STAGE_GHOSTS) ? v->alts->tau : VW_NSAMPLE - 1;
  return VW_HORIZON * (tau + 1) / VW_NSAMPLE;
}

/* An event's ghosts, markers and impulses are drawn from its impact until its ghosts' time: later
 * they would lie over a different, later state. */
int vw_event_shown(const viewer* v, const svi_event* e) {
  double t = vw_shown_time(v);
  return e && t >= e->time - 1e-9 && t <= e->time + vw_ghost_time(v) + 1e-6;
}

void vw_print_state(viewer* v, const char* what) {
  const svi_event* e = vw_selected_event(v);
  printf("%s time=%.6f events=%d selected=%d law=%s running=%d replay=%d ghosts=%d inset=%d resample=%s "
         "speed=%g actual=%.0f camera=%s body=%d panel=%d message=\"%s\" state=%016llx shown=%016llx "
         "shown_time=%.6f\n",
         what, v->d->time,
         v->in ? svi_event_count(v->in) : 0, v->selected, e ? svi_law_name(e->law) : "-", v->run,
         v->replay.phase != VW_REPLAY_OFF, v->ghosts_drawn, vw_inset_visible(v),
         v->resample_ok ? "enabled" : "disabled", vw_speed_percent[v->speed_index], v->rt_actual,
         v->cam.type == mjCAMERA_TRACKING ? "tracking" : v->cam.type == mjCAMERA_FIXED ? "fixed" : "free",
         v->pert.select, v->ui0_enable, v->message,
         vw_state_hash(v->m, v->d), vw_state_hash(v->m, vw_shown_data(v)), vw_shown_time(v));
  fflush(stdout);
}

static void print_event(const char* what, viewer* v, const svi_event* e) {
  printf("%s event=%d time=%.4f law=%s seed=%llu lcps=%d ke=%.6g->%.6g class=%s vn=(", what,
         v->selected, e->time, svi_law_name(e->law), (unsigned long long)e->seed, e->lcps,
         e->ke_before, e->ke_after, e->cls);
  for (int k = 0; k < e->ncontact && k < SVI_EVENT_MAX_CONTACTS; k++)
    printf("%s%.6f", k ? "," : "", e->vn_after[k]);
  printf(") state=%016llx\n", vw_state_hash(v->m, v->d));
  fflush(stdout);
}

void vw_set_running(viewer* v, int run) {
  if (v->run != run) { v->ui_dirty = 1; v->sim_lag = 0; }
  v->run = run;
  if (run) v->replay.phase = VW_REPLAY_OFF;
}

/* --------------------------------------------------------------------------------------------- */
/* Native MuJoCo beside svi: the native model from the selected event's pre-impact state (from the
 * current state when nothing is selected), stepped along with what is shown (the replay too). */
static void native_from_current(viewer* v) {
  const int sig = mjSTATE_INTEGRATION & ~mjSTATE_PLUGIN;
  if (mj_stateSize(v->m, sig) > v->state_size) return;
  mj_getState(v->m, v->d, v->tmp_state, sig);
  mj_setState(v->mn, v->native, v->tmp_state, sig);
}

void vw_native_sync(viewer* v) {
  v->native_valid = 0;
  if (!v->show_native) return;
  const svi_event* e = vw_selected_event(v);
  if (e && vw_shown_time(v) >= e->time - 1e-9) {
    if (svi_event_load_native(v->in, v->m, v->selected, v->mn, v->native) != SVI_OK) return;
  } else {
    native_from_current(v);
  }
  mj_forward(v->mn, v->native);
  v->native_valid = 1;
  vw_native_follow(v);
}

void vw_native_follow(viewer* v) {
  if (!v->show_native || !v->native_valid) return;
  double t = vw_shown_time(v);
  if (v->native->time > t + 1e-9) {   /* the view went back: start again */
    const svi_event* e = vw_selected_event(v);
    if (!e || t < e->time - 1e-9) return;
    vw_native_sync(v);
    return;
  }
  for (int n = 0; v->native->time < t - 1e-12 && n < 100000; n++) mj_step(v->mn, v->native);
}

/* --------------------------------------------------------------------------------------------- */
static int last_event_index(const viewer* v) {
  int n = v->in ? svi_event_count(v->in) : 0;
  return n ? svi_event_get(v->in, n - 1)->index : -1;
}

static void on_impact(viewer* v) {
  v->selected = svi_event_count(v->in) - 1;
  if (v->break_on_impact) vw_set_running(v, 0);
  vw_native_sync(v);
}

/* one physics step, recorded in the history */
void vw_step(viewer* v) {
  int before = last_event_index(v);
  mj_step(v->m, v->d);
  vw_hist_push(v);
  if (last_event_index(v) != before) on_impact(v);
}

/* Left arrow: the previous recorded state.  Events at or after it leave the log (stepping
 * forward resolves them again), so the log always describes the shown run. */
void vw_step_back(viewer* v) {
  int k = vw_hist_find(v, v->d->time - 1e-9);
  if (k < 0) { vw_message(v, "no earlier state recorded"); return; }
  const double* st = vw_hist_state(v, k);
  double t = st[0];
  vw_set_running(v, 0);
  v->replay.phase = VW_REPLAY_OFF;
  if (v->in) {
    int n = svi_event_count(v->in), first = n;
    while (first > 0 && svi_event_get(v->in, first - 1)->time >= t - 1e-12) first--;
    if (first < n) svi_event_restore(v->in, v->m, v->d, first);
    if (v->selected >= first) v->selected = first - 1;
  }
  mj_setState(v->m, v->d, st, mjSTATE_INTEGRATION);
  mj_fwdPosition(v->m, v->d);   /* kinematics and contacts; no impact is resolved */
  vw_hist_truncate(v, t);
  vw_native_sync(v);
}

/* --------------------------------------------------------------------------------------------- */
/* The replay, a view on the disp copy (d, the simulation, stays at the new outcome): recorded
 * states from VW_LEAD_IN before the impact, then the outcome stepped for VW_HORIZON, at the chosen
 * speed; it holds its last frame a moment and the view returns to d, paused at the impact, where
 * the next outcome can be tried. */
static void replay_show_recorded(viewer* v) {
  int k = vw_hist_find(v, v->replay.t_show);
  if (k < 0) return;
  mj_setState(v->m, v->disp, vw_hist_state(v, k), mjSTATE_INTEGRATION);
  mj_fwdPosition(v->m, v->disp);   /* positions and contacts: the plugin acts in the velocity stage */
}

static void replay_post(viewer* v) {
  v->replay.phase = VW_REPLAY_POST;
  mj_copyData(v->disp, v->m, v->d);   /* the new post-impact state, log and all */
}

static void replay_start(viewer* v, const svi_event* e) {
  vw_replay* r = &v->replay;
  r->was_running = r->phase ? r->was_running : v->run;
  v->run = 0;
  v->ui_dirty = 1;
  r->index = e->index;
  r->t_event = e->time;
  r->t_end = e->time + VW_HORIZON;
  r->t_show = e->time - VW_LEAD_IN;
  int k = v->hist_len - 1;   /* the oldest recorded state */
  if (k >= 0 && vw_hist_time(v, k) > r->t_show) r->t_show = vw_hist_time(v, k);
  r->phase = VW_REPLAY_LEAD;
  if (r->t_show < r->t_event - 1e-9) replay_show_recorded(v);
  else replay_post(v);
}

static void replay_end(viewer* v) {
  v->replay.phase = VW_REPLAY_OFF;
  vw_set_running(v, v->replay.was_running);
  vw_native_sync(v);
  vw_print_state(v, "replay-end");
}

static void replay_advance(viewer* v, double dt, double budget_ms) {
  vw_replay* r = &v->replay;
  if (r->phase == VW_REPLAY_LEAD) {
    r->t_show += dt;
    if (r->t_show < r->t_event - 1e-9) { replay_show_recorded(v); return; }
    dt = r->t_show - r->t_event;
    replay_post(v);
  }
  if (r->phase == VW_REPLAY_POST) {
    double t_to = fmin(v->disp->time + dt, r->t_end), t0 = vw_now_ms();
    while (v->disp->time < t_to - 1e-12 && (budget_ms <= 0 || vw_now_ms() - t0 < budget_ms))
      mj_step(v->m, v->disp);
    if (v->disp->time >= r->t_end - 1e-12) { r->phase = VW_REPLAY_HOLD; r->hold = VW_HOLD; }
    return;
  }
  r->hold -= dt;
  if (r->hold <= 0) replay_end(v);
}

/* --------------------------------------------------------------------------------------------- */
/* Perturbation as in simulate: a force while running, the pose while paused. */
static void apply_perturbation(viewer* v) {
  if (v->run) {
    mju_zero(v->d->xfrc_applied, 6 * v->m->nbody);
    mjv_applyPerturbPose(v->m, v->d, &v->pert, 0);
    mjv_applyPerturbForce(v->m, v->d, &v->pert);
  } else if (v->pert.active) {
    mjv_applyPerturbPose(v->m, v->d, &v->pert, 1);
    mj_forward(v->m, v->d);
  }
}

/* The time a frame advances: its wall time at the chosen speed while running (fixed in scripts,
 * so a script's run is reproducible), stepped up to a budget; the measured real-time factor is
 * what the simulation actually achieved. */
void vw_advance(viewer* v, double wall_dt) {
  double speed = vw_speed_percent[v->speed_index] / 100.0;
  int fixed = v->scripted && !v->wall_pacing;
  double dt = (fixed ? v->sim_per_frame : fmin(wall_dt, 0.1)) * speed;
  double budget = fixed ? 0 : STEP_BUDGET_MS;
  apply_perturbation(v);
  if (v->replay.phase) { replay_advance(v, dt, budget); vw_native_follow(v); return; }
  if (!v->run) { v->rt_sim = v->rt_wall = 0; return; }
  /* the simulated time owed carries over between frames (a step rarely ends a frame exactly);
   * what the budget cannot step is dropped, not owed */
  double t_start = v->d->time, t0 = vw_now_ms();
  int late = 0;
  v->sim_lag += dt;
  while (v->run && v->sim_lag > 0.5 * v->m->opt.timestep) {
    if (budget > 0 && vw_now_ms() - t0 >= budget) { late = 1; break; }
    double t = v->d->time;
    vw_step(v);
    v->sim_lag -= v->d->time - t;
  }
  if (late || !v->run) v->sim_lag = 0;
  vw_native_follow(v);
  v->rt_sim += v->d->time - t_start;
  v->rt_wall += fixed ? v->sim_per_frame : wall_dt;
  if (v->rt_wall > 0.5) {
    v->rt_actual = 100 * v->rt_sim / v->rt_wall;
    v->rt_sim = v->rt_wall = 0;
  }
}

/* --------------------------------------------------------------------------------------------- */
/* Undo points are mj_copyData copies: the state and the plugin's log, an exact return.  When the
 * stack is full the second-oldest point goes, so the original outcome is always reachable. */
static void push_point(viewer* v, vw_undo_point* stack, int* n) {
  if (*n == VW_UNDO) {
    mj_deleteData(stack[1].d);
    memmove(stack + 1, stack + 2, sizeof(vw_undo_point) * (VW_UNDO - 2));
    (*n)--;
  }
  vw_undo_point* u = &stack[(*n)++];
  u->d = mj_copyData(NULL, v->m, v->d);
  u->selected = v->selected;
}

static void clear_points(vw_undo_point* stack, int* n) {
  for (int i = 0; i < *n; i++) mj_deleteData(stack[i].d);
  *n = 0;
}

void vw_history_clear(viewer* v) {
  clear_points(v->undo, &v->nundo);
  clear_points(v->redo, &v->nredo);
  v->ui_dirty = 1;
}

static double selected_time(const viewer* v) {
  const svi_event* e = vw_selected_event(v);
  return e ? e->time : v->d->time;
}

/* undo and redo move one step: the present goes onto the other stack */
static void history_move(viewer* v, vw_undo_point* from, int* nfrom, vw_undo_point* to, int* nto,
                         const char* what) {
  if (*nfrom == 0) { vw_message(v, "nothing to %s", what); return; }
  double t_cut = selected_time(v);
  push_point(v, to, nto);
  vw_undo_point* u = &from[--(*nfrom)];
  mj_copyData(v->d, v->m, u->d);
  v->selected = u->selected;
  mj_deleteData(u->d);
  v->replay.phase = VW_REPLAY_OFF;
  vw_set_running(v, 0);
  /* recorded states after the resampled impact belong to the outcome left behind */
  vw_hist_truncate(v, fmin(t_cut, selected_time(v)));
  v->message[0] = 0;
  v->ui_dirty = 1;
  vw_native_sync(v);
  printf("%s selected=%d state=%016llx\n", what, v->selected, vw_state_hash(v->m, v->d));
  fflush(stdout);
}

void vw_undo(viewer* v) { history_move(v, v->undo, &v->nundo, v->redo, &v->nredo, "undo"); }
void vw_redo(viewer* v) { history_move(v, v->redo, &v->nredo, v->undo, &v->nundo, "redo"); }

/* --------------------------------------------------------------------------------------------- */
/* Resample is refused (and the button disabled) without a selected event, and when every sampled
 * outcome of the set law is the same: a new seed cannot change anything then. */
int vw_can_resample(viewer* v, char* why, int n) {
  const svi_event* e = vw_selected_event(v);
  why[0] = 0;
  if (!v->in) { snprintf(why, (size_t)n, "no svi.impact in this model"); return 0; }
  if (!e) { snprintf(why, (size_t)n, "no impact yet: Space plays"); return 0; }
  if (v->law_sel == vw_set_law(e) && vw_alts_ready(v, VW_STAGE_GHOSTS) && v->alts->nghost == 1 &&
      v->alts->sampled > 1 && (v->alts->stage < VW_STAGE_SET || v->alts->unique)) {
    snprintf(why, (size_t)n, "unique outcome: %d samples agree",
             v->alts->sampled + (v->alts->stage == VW_STAGE_SET ? v->alts->nset : 0));
    return 0;
  }
  return 1;
}

/* Re-run the selected impact with a seed and law, continue from the new outcome, replay it. */
static int resample_now(viewer* v, uint64_t seed, svi_law law) {
  v->click_t0 = vw_now_ms();
  v->lat_frame = -1;
  push_point(v, v->undo, &v->nundo);
  clear_points(v->redo, &v->nredo);
  int st = svi_event_resample(v->in, v->m, v->d, v->selected, seed, law);
  if (st != SVI_OK || svi_event_count(v->in) == 0) {
    vw_message(v, "resample failed: %s", svi_status_string(st));
    v->selected = svi_event_count(v->in) - 1;
    return -1;
  }
  v->selected = svi_event_count(v->in) - 1;
  const svi_event* e = svi_event_get(v->in, v->selected);
  vw_hist_truncate(v, e->time);
  v->message[0] = 0;
  v->ui_dirty = 1;
  v->user_actions++;
  v->click_wait_ghost = v->click_wait_motion = 1;
  vw_current_from_ghosts(v);
  replay_start(v, e);
  vw_native_sync(v);
  return 0;
}

void vw_resample(viewer* v, uint64_t seed, svi_law law, const char* why) {
  char reason[160];
  int forced = why && (!strcmp(why, "pick") || !strcmp(why, "replay"));
  if (!vw_can_resample(v, reason, sizeof(reason)) && !(forced && vw_selected_event(v))) {
    vw_message(v, "Resample: %s", reason);
    printf("resample refused: %s\n", reason);
    fflush(stdout);
    return;
  }
  if (resample_now(v, seed, law) != 0) return;
  print_event(why && !strcmp(why, "replay") ? "replay" : "resample", v, svi_event_get(v->in, v->selected));
}

void vw_replay_selected(viewer* v) {
  const svi_event* e = vw_selected_event(v);
  if (!e) { vw_message(v, "no impact event selected"); return; }
  vw_resample(v, e->seed, e->law, "replay");
}

void vw_select_event(viewer* v, int i) {
  if (!v->in || i < 0 || i >= svi_event_count(v->in)) return;
  v->selected = i;
  v->ui_dirty = 1;
  vw_native_sync(v);
  print_event("select", v, svi_event_get(v->in, i));
}
