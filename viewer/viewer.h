/* viewer.h -- svi-viewer's shared state: one struct, split by responsibility across the files.
 *
 *   model.c    loading, reloading, resetting a model; the history of states
 *   sim.c      stepping in real time, pause on impact, resample / pick / undo / redo, the replay
 *   alts.c     the alternatives of the selected impact (ghosts, the set), on a worker thread
 *   scene.c    what is added to MuJoCo's scene: ghosts, contact markers, impulses, native overlay;
 *              ghost picking
 *   plot.c     the inset plot of the post-impact set, the event timeline
 *   draw.c     2-D drawing in window pixels; panels cached in mjr aux buffers
 *   ui.c       MuJoCo's mjui panel, keyboard and mouse (simulate's controls)
 *   render.c   a frame: the 3-D view (cached, adaptive resolution), HUD and overlays; screenshots
 *   script.c   the scripted mode (tests) and the measurements
 *   main.c     options, window, the frame loop
 *
 * The render thread owns everything here except the worker's own mjData copies (alts.c).
 */
#ifndef SVI_VIEWER_H_
#define SVI_VIEWER_H_

#include <GLFW/glfw3.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>

#include <mujoco/mujoco.h>

#include "svi/svi_mujoco.h"

#define VW_MAX_GHOSTS 64     /* ghost samples per event */
#define VW_MAX_SET 1024      /* inset samples per event */
#define VW_SET_BATCH 16      /* inset samples per svi_event_preview_many (the event set up once) */
#define VW_UNDO 128          /* undo points; the oldest (the original outcome) is never dropped */
#define VW_LEAD_IN 0.3       /* s of motion replayed before a resampled impact */
#define VW_HORIZON 0.5       /* s after the impact: the replay's end and the ghosts' roll-out */
#define VW_NSAMPLE 20        /* poses kept per roll-out, every VW_HORIZON / VW_NSAMPLE */
#define VW_HOLD 0.25         /* s (at the chosen speed) the replay holds its last frame */
#define VW_NSPEED 31         /* simulate's real-time percentages */
#define VW_NPANEL 6          /* mjr aux buffers: 0 is mjui's panel, 1.. our cached panels */
enum { VW_AUX_INSET = 1, VW_AUX_HUD, VW_AUX_TIMELINE };

/* -------------------------------------------------------------------------------------------
 * The alternatives of one impact event, computed by the worker (alts.c).
 */
typedef struct {
  int index;                 /* svi_event.index: the running event number */
  double time;               /* svi_event.time */
  int law;                   /* the law whose set is drawn (setvalued or propagative) */
  unsigned gen;              /* model generation: a reload invalidates everything */
} vw_evkey;

typedef struct {
  uint64_t seed;
  int count;                 /* sampled outcomes equal to this one (merged ghosts) */
  double vn[SVI_EVENT_MAX_CONTACTS];
} vw_outcome;

enum { VW_STAGE_NONE = 0, VW_STAGE_GHOSTS, VW_STAGE_SET };

typedef struct {
  vw_evkey key;
  int stage;                 /* VW_STAGE_GHOSTS: ghosts ready; VW_STAGE_SET: the set too */
  int sampled;               /* ghost seeds sampled */
  int nghost;                /* distinct outcomes among them */
  vw_outcome ghost[VW_MAX_GHOSTS];
  double* ghost_traj;        /* VW_MAX_GHOSTS x VW_NSAMPLE x nq: poses after the impact */
  double* ghost_qvel;        /* VW_MAX_GHOSTS x nv: post-impact velocity */
  int tau;                   /* the sample where the ghosts differ most: where they are drawn */
  double spread;             /* their largest body-position difference there, m */
  /* the set in contact-normal velocities */
  int ncontact;
  int axis[2];               /* the plotted contacts (fastest approaching first) */
  int dim;                   /* 1: one contact, a number line; 2: a plane */
  int nset;
  double set_pt[VW_MAX_SET][2];
  uint64_t set_seed[VW_MAX_SET];
  int nhull;
  double hull[VW_MAX_SET + 1][2];
  int has_native;
  double native_pt[2];
  int unique;                /* every sampled outcome (ghosts and set) is the same */
  int ndistinct;             /* distinct outcomes over ghosts and set (capped count) */
} vw_alts;

typedef struct {             /* where the current outcome goes: its own roll-out */
  vw_evkey key;
  int event;                 /* its log index in the worker's copy */
  uint64_t seed;
  int law;
  int provisional;           /* taken from an equal ghost until the worker's own roll-out arrives */
  double* traj;              /* VW_NSAMPLE x nq */
} vw_current;

typedef struct {
  pthread_t thread;
  int started;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  atomic_int quit, abort_job, req_pending, cur_pending, busy;
  const mjModel *m, *mn;     /* read-only, shared with the render thread */
  /* requests: the render thread copies its mjData (state and log) in, under mu */
  mjData *req_d, *cur_d;
  int req_event, req_nghost, req_nset, cur_event;
  vw_evkey req_key, cur_key;
  uint64_t cur_seed;
  int cur_law;
  /* the worker's own data */
  mjData *wd, *ws, *wn, *wc, *wcs;
  double *jn, *vn, *qv, *xpos0;
  double* qv_batch;            /* VW_SET_BATCH x nv: sample_set's outcomes, one preview_many call */
  svi_event* rec_batch;        /* their records */
  vw_alts* work;
  vw_current work_cur;
  /* results, under mu */
  vw_alts* out;
  vw_current out_cur;
  atomic_int out_version, cur_version;
  long long jobs_done;
} vw_worker;

/* -------------------------------------------------------------------------------------------
 * The viewer.
 */
typedef struct {
  mjData* d;                 /* mj_copyData: the state and the plugin's event log */
  int selected;
} vw_undo_point;

enum { VW_REPLAY_OFF = 0, VW_REPLAY_LEAD, VW_REPLAY_POST, VW_REPLAY_HOLD };

typedef struct {             /* a view of the impact on the disp copy: d does not move */
  int phase;                 /* VW_REPLAY_*: recorded states, the outcome stepped, the last frame */
  double t_event, t_end, t_show, hold;
  int was_running;
  int index;                 /* the replayed event's running number */
} vw_replay;

typedef struct viewer {
  /* --- model (model.c) --- */
  char path[1024], keyname[64], load_error[1024];
  mjModel *m, *mn;           /* with svi.impact; the same model without it (native MuJoCo) */
  mjData *d;                 /* the simulation */
  mjData *native;            /* native overlay: native MuJoCo from the selected event's state */
  mjData *disp;              /* the replay: recorded states, then the outcome stepped on a copy */
  mjData *pick;              /* ghost kinematics (cache, picking) */
  svi_instance* in;
  int has_plugin, key;       /* start keyframe, -1 for qpos0 */
  unsigned gen;
  int planar;                /* the model moves in the x-z plane: side view */
  double* hist;              /* ring of mjSTATE_INTEGRATION states, one per step */
  int hist_cap, hist_len, hist_head, state_size;
  double* tmp_state;
  /* --- rendering --- */
  GLFWwindow* win;
  mjvCamera cam;
  mjvOption opt;
  mjvPerturb pert;
  mjvScene scn;
  mjrContext con;
  mjvScene gscn;             /* ghost geoms, rebuilt when alternatives arrive (scene.c) */
  int gstart[VW_MAX_GHOSTS + 2];
  unsigned char* gskip;      /* per gscn geom: duplicate of an earlier ghost's */
  unsigned char* gdrawn;     /* (VW_MAX_GHOSTS + 1) x ngeom: drawn in the last frame */
  int ghosts_drawn, ghosts_cached_for;
  double ghost_scale;        /* the ghosts' differences from the current outcome, magnified */
  double body_size;          /* the moving bodies' size, m: what "visible" means */
  double* ghost_qtmp;        /* scratch: a pose and a velocity */
  double* ghost_pose;        /* (VW_MAX_GHOSTS + 1) x nq: the poses drawn (the last: current) */
  int gmerged[VW_MAX_GHOSTS + 1];   /* -1: drawn; else the range it is drawn with (too close) */
  int gcount[VW_MAX_GHOSTS + 1];    /* samples a drawn ghost stands for */
  int ghosts_visual;         /* ghosts drawn after merging close ones */
  int current_at_body;       /* the current outcome's ghost is where the body is: a label */
  int quality, fontscale;
  mjvFigure fig_cpu;
  /* the 3-D view is rendered offscreen and blitted: an unchanged scene is not rendered again, and
   * a changing one is rendered at a resolution that keeps the frame rate (software OpenGL) */
  mjvGeom* last_geoms;
  mjvScene last;             /* the cameras, lights, flags of the last rendered scene */
  mjrRect last_rect;
  int cache_valid;
  double res_scale, cached_scale, render_ms;
  int renders;               /* mjr_render calls (the others were blits of the cached view) */
  int in_window;             /* the last render went straight to the window: not cached */
  unsigned long long panel_key[VW_NPANEL];
  int panel_draws;
  /* --- UI (ui.c) --- */
  mjuiState uis;
  mjUI ui0;
  int ui0_enable, help, info, profiler, fullscreen, vsync, spacing, color, font;
  int run;                   /* simulate's Pause/Run radio */
  int camera_sel;            /* 0 free, 1 tracking, 2+ fixed cameras */
  int ui_dirty;
  int resample_ok;           /* Resample enabled */
  char reason[160];          /* why Resample is disabled */
  char message[256];
  double message_until;
  double press_x, press_y;
  int press_moved;
  int win_pos[2], win_size[2];
  /* --- impacts (sim.c) --- */
  int selected;              /* the selected event (log index), -1 none */
  int law_sel;               /* the law Resample uses (mjui select) */
  uint64_t next_seed;
  int break_on_impact, show_ghosts, show_set, show_native;
  int native_valid;
  vw_undo_point undo[VW_UNDO], redo[VW_UNDO];
  int nundo, nredo;
  vw_replay replay;
  int speed_index;
  double wall_prev, rt_sim, rt_wall, rt_actual;   /* measured real-time factor */
  double sim_lag;            /* simulated time owed to the wall clock, s */
  /* --- alternatives (alts.c) --- */
  vw_worker wk;
  vw_alts* alts;             /* the render thread's copy of the latest results */
  vw_current cur;
  int nghost, nset;
  int seen_version, seen_cur_version;
  vw_evkey want, want_cur;     /* requested */
  uint64_t want_cur_seed;
  int want_cur_law;
  /* --- scripted and measured (script.c) --- */
  int scripted;
  int wall_pacing;           /* scripted, but paced by the wall clock as a person's session */
  double sim_per_frame;
  long long frames;
  double fps, fps_t0;
  long long fps_f0;
  double click_t0;           /* a resample or pick: measured to the frames that show it */
  int click_wait_ghost, click_wait_motion;
  double lat_frame, lat_ghost, lat_motion;
  int user_actions;          /* resamples and picks so far (await-click) */
  char screenshot_dir[512];
  int screenshot_count;
} viewer;

/* model.c */
int vw_load_model(viewer* v, const char* path);
void vw_free_model(viewer* v);
void vw_reset(viewer* v);
void vw_default_camera(viewer* v);
void vw_hist_clear(viewer* v);
void vw_hist_push(viewer* v);
int vw_hist_find(const viewer* v, double t);             /* latest state with time <= t, -1 */
const double* vw_hist_state(const viewer* v, int k);
double vw_hist_time(const viewer* v, int k);
void vw_hist_truncate(viewer* v, double t);              /* drop states after t */
unsigned long long vw_state_hash(const mjModel* m, const mjData* d);

/* sim.c */
extern const float vw_speed_percent[VW_NSPEED];
void vw_advance(viewer* v, double wall_dt);
void vw_step(viewer* v);
void vw_step_back(viewer* v);
void vw_set_running(viewer* v, int run);
const svi_event* vw_selected_event(const viewer* v);
int vw_set_law(const svi_event* e);
int vw_event_shown(const viewer* v, const svi_event* e);
double vw_shown_time(const viewer* v);
mjData* vw_shown_data(const viewer* v);
double vw_ghost_time(const viewer* v);
void vw_native_follow(viewer* v);
int vw_can_resample(viewer* v, char* why, int n);
void vw_resample(viewer* v, uint64_t seed, svi_law law, const char* why);
void vw_replay_selected(viewer* v);
void vw_undo(viewer* v);
void vw_redo(viewer* v);
void vw_history_clear(viewer* v);
void vw_select_event(viewer* v, int i);
void vw_native_sync(viewer* v);
void vw_message(viewer* v, const char* fmt, ...);
void vw_print_state(viewer* v, const char* what);

/* alts.c */
int vw_worker_start(viewer* v);
void vw_worker_stop(viewer* v);
void vw_worker_detach(viewer* v);
void vw_worker_attach(viewer* v);
void vw_alts_update(viewer* v);
void vw_alts_force(viewer* v);
int vw_alts_ready(const viewer* v, int stage);
int vw_current_ready(const viewer* v);
void vw_current_from_ghosts(viewer* v);
vw_alts* vw_alts_new(int nq, int nv);
void vw_alts_free(vw_alts* a);

/* scene.c */
void vw_scene_update(viewer* v);
void vw_ghosts_cache(viewer* v);
int vw_ghost_at(viewer* v, double x, double y, int* geom);
int vw_ghost_where(viewer* v, int k, double* x, double* y);
int vw_project(const viewer* v, const float p[3], double* x, double* y);
void vw_pick_ghost(viewer* v, int k);
void vw_contact_name(const mjModel* m, const svi_event* e, int k, char* buf, int n);

/* draw.c */
void vw_canvas_window(const viewer* v);
void vw_pixel_space(void);
void vw_box(double x, double y, double w, double h, float r, float g, float b, float a);
int vw_text_width(const viewer* v, const char* s);
void vw_text(const viewer* v, const char* s, double x, double y, float r, float g, float b);
void vw_text_right(const viewer* v, const char* s, double x, double y, float r, float g, float b);
void vw_text_center(const viewer* v, const char* s, double x, double y, float r, float g, float b);
unsigned long long vw_hash(unsigned long long h, const void* p, size_t n);
void vw_cached_panel(viewer* v, int aux, mjrRect r, unsigned long long key, void (*draw)(viewer*, mjrRect));
mjrRect vw_text_panel_size(const viewer* v, const char* titles, const char* values);
void vw_text_panel(const viewer* v, mjrRect r, const char* titles, const char* values);

/* plot.c */
mjrRect vw_inset_rect(const viewer* v);
mjrRect vw_timeline_rect(const viewer* v);
int vw_inset_visible(const viewer* v);
void vw_draw_inset(viewer* v);
void vw_draw_timeline(viewer* v);
int vw_inset_point_at(viewer* v, double x, double y);
void vw_inset_point_where(viewer* v, int k, double* x, double* y);
void vw_pick_inset(viewer* v, int k);
int vw_timeline_event_at(viewer* v, double x, double y);

/* ui.c */
void vw_ui_init(viewer* v);
void vw_ui_modify(viewer* v);
void vw_ui_refresh(viewer* v);
void vw_ui_event(viewer* v);
void vw_ui_install_callbacks(viewer* v);
int vw_ui_item_center(viewer* v, const char* name, double* x, double* y);
void vw_layout(viewer* v);
void vw_key(viewer* v, int key, int mods, int repeat);
void vw_mouse_button(viewer* v, int button, int press, double x, double y, int mods, double t);
void vw_mouse_move(viewer* v, double x, double y);

/* render.c */
void vw_render(viewer* v);
void vw_profiler_init(viewer* v);
int vw_screenshot(viewer* v, const char* path);

/* script.c */
int vw_run_script(viewer* v, const char* path);

/* main.c */
void vw_frame(viewer* v);
double vw_now_ms(void);

#endif  /* SVI_VIEWER_H_ */
