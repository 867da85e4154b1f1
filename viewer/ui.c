/* ui.c -- simulate's look and controls: MuJoCo's own mjui panel (File, Option, Simulation,
 * Rendering, Group sections as in simulate, with our Impact section on top) and its keyboard and
 * mouse conventions (perturbation, selection, tracking, speed, cameras).  Our own actions sit on keys simulate leaves free: Enter,
 * Ctrl+letters, Ctrl+arrows, Ctrl+digits.
 *
 * Every input, real (GLFW callbacks) or scripted (script.c), goes through vw_key /
 * vw_mouse_button / vw_mouse_move, which fill an mjuiState as simulate's platform adapter does
 * and dispatch it: the panel first, then our keys, then the 3-D view. */
#include <math.h>
#include <string.h>
#include <strings.h>

#include "viewer.h"

/* mjuiDef tables are written the MuJoCo way, with trailing fields left to zero */
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"

enum { SECT_IMPACT = 0, SECT_FILE, SECT_OPTION, SECT_SIMULATION, SECT_RENDERING, SECT_GROUP };
enum { IT_RESAMPLE = 0, IT_REASON, IT_REPLAY, IT_UNDO, IT_REDO, IT_LAW, IT_PREV, IT_NEXT, IT_SHOW,
       IT_GHOSTS, IT_SET, IT_NATIVE, IT_BREAK };
enum { IT_SCREENSHOT = 0, IT_QUIT };
enum { IT_RUN = 0, IT_RESET, IT_RELOAD, IT_ALIGN };
/* mjui predicate categories (item state >= 2) */
enum { CAT_MODEL = 2, CAT_RESAMPLE, CAT_EVENT, CAT_UNDO, CAT_REDO, CAT_PLUGIN };

static viewer* the_viewer;   /* GLFW callbacks carry no user pointer of ours */

static int ui_predicate(int category, void* data) {
  viewer* v = data;
  switch (category) {
  case CAT_RESAMPLE: return v->resample_ok;
  case CAT_EVENT: return vw_selected_event(v) != NULL;
  case CAT_UNDO: return v->nundo > 0;
  case CAT_REDO: return v->nredo > 0;
  case CAT_PLUGIN: return v->has_plugin;
  default: return 1;
  }
}

/* --------------------------------------------------------------------------------------------- */
/* The panel's sections. */
static void add_impact_section(viewer* v) {
  mjuiDef def[] = {
    {mjITEM_SECTION,   "Impact",          1, NULL, "AI"},
    {mjITEM_BUTTON,    "Resample",        CAT_RESAMPLE, NULL, " #257"},
    {mjITEM_STATIC,    "",                1, NULL, " "},
    {mjITEM_BUTTON,    "Replay",          CAT_EVENT, NULL, "CR"},
    {mjITEM_BUTTON,    "Undo",            CAT_UNDO, NULL, "CZ"},
    {mjITEM_BUTTON,    "Redo",            CAT_REDO, NULL, "CY"},
    {mjITEM_SELECT,    "Law",             CAT_PLUGIN, &v->law_sel,
     "setvalued\nsimultaneous\nsequential\nnative\npropagative"},
    {mjITEM_BUTTON,    "Prev impact",     CAT_EVENT, NULL, "C#263"},
    {mjITEM_BUTTON,    "Next impact",     CAT_EVENT, NULL, "C#262"},
    {mjITEM_SEPARATOR, "Show",            1},
    {mjITEM_CHECKINT,  "Ghosts",          CAT_PLUGIN, &v->show_ghosts, "CG"},
    {mjITEM_CHECKINT,  "Outcome set",     CAT_PLUGIN, &v->show_set, "CI"},
    {mjITEM_CHECKINT,  "Native",          CAT_MODEL, &v->show_native, "CN"},
    {mjITEM_CHECKINT,  "Auto-pause",      CAT_PLUGIN, &v->break_on_impact, "CB"},
    {mjITEM_END}
  };
  mjui_add(&v->ui0, def);
}

static void add_standard_sections(viewer* v) {
  mjuiDef file[] = {
    {mjITEM_SECTION, "File",       0, NULL, "AF"},
    {mjITEM_BUTTON,  "Screenshot", 2, NULL, "CP"},
    {mjITEM_BUTTON,  "Quit",       1, NULL, "CQ"},
    {mjITEM_END}
  };
  mjuiDef option[] = {
    {mjITEM_SECTION,  "Option",        0, NULL, "AO"},
    {mjITEM_CHECKINT, "Help",          2, &v->help, " #290"},
    {mjITEM_CHECKINT, "Info",          2, &v->info, " #291"},
    {mjITEM_CHECKINT, "Profiler",      2, &v->profiler, " #292"},
    {mjITEM_CHECKINT, "Fullscreen",    1, &v->fullscreen, " #294"},
    {mjITEM_CHECKINT, "Vertical Sync", 1, &v->vsync, ""},
    {mjITEM_SELECT,   "Spacing",       1, &v->spacing, "Tight\nWide"},
    {mjITEM_SELECT,   "Color",         1, &v->color, "Default\nOrange\nWhite\nBlack"},
    {mjITEM_SELECT,   "Font",          1, &v->font, "50 %\n100 %\n150 %\n200 %\n250 %\n300 %"},
    {mjITEM_END}
  };
  mjuiDef simulation[] = {
    {mjITEM_SECTION, "Simulation", 1, NULL, "AS"},
    {mjITEM_RADIO,   "",           2, &v->run, "Pause\nRun"},
    {mjITEM_BUTTON,  "Reset",      2, NULL, " #259"},
    {mjITEM_BUTTON,  "Reload",     2, NULL, "CL"},
    {mjITEM_BUTTON,  "Align",      2, NULL, "CA"},
    {mjITEM_END}
  };
  mjui_add(&v->ui0, file);
  mjui_add(&v->ui0, option);
  mjui_add(&v->ui0, simulation);
}

/* simulate's Rendering section: camera, labels, frames, then every visualization and rendering
 * flag with MuJoCo's own shortcut letters */
static void add_rendering_section(viewer* v) {
  mjuiDef head[] = {
    {mjITEM_SECTION,   "Rendering", 0, NULL, "AR"},
    {mjITEM_SELECT,    "Camera",    2, &v->camera_sel, "Free\nTracking"},
    {mjITEM_SELECT,    "Label",     2, &v->opt.label,
     "None\nBody\nJoint\nGeom\nSite\nCamera\nLight\nTendon\nActuator\nConstraint\nFlex\nSkin\n"
     "Selection\nSel Pnt\nContact\nForce\nIsland"},
    {mjITEM_SELECT,    "Frame",     2, &v->opt.frame, "None\nBody\nGeom\nSite\nCamera\nLight\nContact\nWorld"},
    {mjITEM_SEPARATOR, "Model Elements", 1},
    {mjITEM_END}
  };
  for (int i = 0; i < v->m->ncam && strlen(head[1].other) + 45 < mjMAXUITEXT; i++) {
    const char* name = mj_id2name(v->m, mjOBJ_CAMERA, i);
    char line[48];
    snprintf(line, sizeof(line), "\n%.40s", name ? name : "camera");
    strcat(head[1].other, line);
  }
  mjui_add(&v->ui0, head);
  mjuiDef flag[] = {{mjITEM_CHECKBYTE, "", 2, NULL, ""}, {mjITEM_END}};
  for (int i = 0; i < mjNVISFLAG; i++) {
    snprintf(flag[0].name, sizeof(flag[0].name), "%s", mjVISSTRING[i][0]);
    snprintf(flag[0].other, sizeof(flag[0].other), mjVISSTRING[i][2][0] ? " %s" : "%s", mjVISSTRING[i][2]);
    flag[0].pdata = v->opt.flags + i;
    mjui_add(&v->ui0, flag);
  }
  mjuiDef gl[] = {{mjITEM_SEPARATOR, "OpenGL Effects", 1}, {mjITEM_END}};
  mjui_add(&v->ui0, gl);
  for (int i = 0; i < mjNRNDFLAG; i++) {
    snprintf(flag[0].name, sizeof(flag[0].name), "%s", mjRNDSTRING[i][0]);
    snprintf(flag[0].other, sizeof(flag[0].other), mjRNDSTRING[i][2][0] ? " %s" : "%s", mjRNDSTRING[i][2]);
    flag[0].pdata = v->scn.flags + i;
    mjui_add(&v->ui0, flag);
  }
}

static void add_group_section(viewer* v) {
  mjuiDef def[] = {
    {mjITEM_SECTION,   "Group enable", 0, NULL, "AG"},
    {mjITEM_SEPARATOR, "Geom groups", 1},
    {mjITEM_CHECKBYTE, "Geom 0", 2, v->opt.geomgroup + 0, " 0"},
    {mjITEM_CHECKBYTE, "Geom 1", 2, v->opt.geomgroup + 1, " 1"},
    {mjITEM_CHECKBYTE, "Geom 2", 2, v->opt.geomgroup + 2, " 2"},
    {mjITEM_CHECKBYTE, "Geom 3", 2, v->opt.geomgroup + 3, " 3"},
    {mjITEM_CHECKBYTE, "Geom 4", 2, v->opt.geomgroup + 4, " 4"},
    {mjITEM_CHECKBYTE, "Geom 5", 2, v->opt.geomgroup + 5, " 5"},
    {mjITEM_SEPARATOR, "Site groups", 1},
    {mjITEM_CHECKBYTE, "Site 0", 2, v->opt.sitegroup + 0, "S0"},
    {mjITEM_CHECKBYTE, "Site 1", 2, v->opt.sitegroup + 1, "S1"},
    {mjITEM_CHECKBYTE, "Site 2", 2, v->opt.sitegroup + 2, "S2"},
    {mjITEM_CHECKBYTE, "Site 3", 2, v->opt.sitegroup + 3, "S3"},
    {mjITEM_CHECKBYTE, "Site 4", 2, v->opt.sitegroup + 4, "S4"},
    {mjITEM_CHECKBYTE, "Site 5", 2, v->opt.sitegroup + 5, "S5"},
    {mjITEM_END}
  };
  mjui_add(&v->ui0, def);
}

/* (Re)build the panel: the Rendering section depends on the model (its cameras). */
void vw_ui_init(viewer* v) {
  int open[6] = {1, 0, 0, 1, 0, 0};
  for (int s = 0; s < v->ui0.nsect && s < 6; s++) open[s] = v->ui0.sect[s].state;
  v->ui0.nsect = 0;
  v->ui0.spacing = mjui_themeSpacing(v->spacing);
  v->ui0.spacing.samples = v->quality ? 4 : 0;   /* software OpenGL: no multisampled panel */
  v->ui0.color = mjui_themeColor(v->color);
  v->ui0.predicate = ui_predicate;
  v->ui0.userdata = v;
  v->ui0.rectid = 1;
  v->ui0.auxid = 0;
  add_impact_section(v);
  add_standard_sections(v);
  add_rendering_section(v);
  add_group_section(v);
  for (int s = 0; s < v->ui0.nsect && s < 6; s++) v->ui0.sect[s].state = open[s];
  v->uis.userdata = v;
}

void vw_layout(viewer* v) {
  mjrRect* r = v->uis.rect;
  int w, h;
  glfwGetFramebufferSize(v->win, &w, &h);
  r[0] = (mjrRect){0, 0, w, h};
  r[1] = (mjrRect){0, 0, v->ui0_enable ? v->ui0.width : 0, h};
  r[2] = (mjrRect){w, 0, 0, h};   /* no right panel */
  r[3] = (mjrRect){r[1].width, 0, w - r[1].width > 0 ? w - r[1].width : 0, h};
  v->uis.nrect = 4;
}

void vw_ui_modify(viewer* v) {
  mjui_resize(&v->ui0, &v->con);
  mjr_addAux(v->ui0.auxid, v->ui0.width, v->ui0.maxheight, v->ui0.spacing.samples, &v->con);
  vw_layout(v);
  mjui_update(-1, -1, &v->ui0, &v->uis, &v->con);
  v->ui_dirty = 0;
}

/* the Resample button's state and the reason line under it; the panel is redrawn only when
 * something it shows changed */
void vw_ui_refresh(viewer* v) {
  char why[160];
  int ok = vw_can_resample(v, why, sizeof(why));
  if (ok != v->resample_ok || strcmp(why, v->reason)) {
    v->resample_ok = ok;
    snprintf(v->reason, sizeof(v->reason), "%s", why);
    mjuiItem* it = &v->ui0.sect[SECT_IMPACT].item[IT_REASON];
    const char* colon = strchr(why, ':');
    int n1 = colon ? (int)(colon - why) : (int)strlen(why);
    snprintf(it->multi.name[0], mjMAXUINAME, "%.*s", n1, why);
    snprintf(it->multi.name[1], mjMAXUINAME, "%s", colon ? colon + 2 : "");
    it->multi.nelem = ok ? 1 : 2;
    if (ok) snprintf(it->multi.name[0], mjMAXUINAME, "Enter: a new seed");
    vw_ui_modify(v);
    printf("ui resample=%s reason=\"%s\"\n", ok ? "enabled" : "disabled", why);
    fflush(stdout);
    v->ui_dirty = 1;
  }
  int w, h;
  glfwGetFramebufferSize(v->win, &w, &h);
  if (w != v->uis.rect[0].width || h != v->uis.rect[0].height) { vw_ui_modify(v); return; }
  if (v->ui_dirty) {
    mjui_update(-1, -1, &v->ui0, &v->uis, &v->con);
    v->ui_dirty = 0;
  }
}

/* --------------------------------------------------------------------------------------------- */
/* Actions. */
static void set_camera_from_ui(viewer* v) {
  if (v->camera_sel == 0) v->cam.type = mjCAMERA_FREE;
  else if (v->camera_sel == 1) {
    if (v->pert.select > 0) {
      v->cam.type = mjCAMERA_TRACKING;
      v->cam.trackbodyid = v->pert.select;
      v->cam.fixedcamid = -1;
    } else {
      v->cam.type = mjCAMERA_FREE;
      v->camera_sel = 0;
      vw_message(v, "select a body first (double-click it) to track it");
    }
  } else {
    v->cam.type = mjCAMERA_FIXED;
    v->cam.fixedcamid = v->camera_sel - 2;
  }
  v->ui_dirty = 1;
}

static void toggle_fullscreen(viewer* v) {
  GLFWmonitor* mon = glfwGetPrimaryMonitor();
  if (v->fullscreen && mon) {
    glfwGetWindowPos(v->win, &v->win_pos[0], &v->win_pos[1]);
    glfwGetWindowSize(v->win, &v->win_size[0], &v->win_size[1]);
    const GLFWvidmode* mode = glfwGetVideoMode(mon);
    glfwSetWindowMonitor(v->win, mon, 0, 0, mode->width, mode->height, mode->refreshRate);
  } else if (!v->fullscreen) {
    glfwSetWindowMonitor(v->win, NULL, v->win_pos[0], v->win_pos[1], v->win_size[0], v->win_size[1], 0);
  }
}

static void take_screenshot(viewer* v) {
  char path[700];
  snprintf(path, sizeof(path), "%s/svi_screenshot_%03d.png", v->screenshot_dir[0] ? v->screenshot_dir : ".",
           v->screenshot_count++);
  vw_render(v);   /* the current frame into the back buffer, then read it */
  if (vw_screenshot(v, path) == 0) vw_message(v, "saved screenshot: %s", path);
}

static void resample_action(viewer* v, const char* how) {
  printf("%s Resample\n", how);
  vw_resample(v, v->next_seed++, (svi_law)v->law_sel, "button");
}

static void impact_item(viewer* v, int item) {
  const char* how = v->uis.type == mjEVENT_KEY ? "key" : "click";
  switch (item) {
  case IT_RESAMPLE: resample_action(v, how); break;
  case IT_REPLAY: vw_replay_selected(v); break;
  case IT_UNDO: vw_undo(v); break;
  case IT_REDO: vw_redo(v); break;
  case IT_PREV: vw_select_event(v, v->selected - 1); break;
  case IT_NEXT: vw_select_event(v, v->selected + 1); break;
  case IT_NATIVE: vw_native_sync(v); break;
  case IT_GHOSTS: case IT_SET: v->ghosts_cached_for = -1; break;
  default: break;
  }
  v->ui_dirty = 1;
}

static void option_item(viewer* v, mjuiItem* it) {
  if (it->pdata == &v->spacing || it->pdata == &v->color) {
    v->ui0.spacing = mjui_themeSpacing(v->spacing);
    v->ui0.spacing.samples = v->quality ? 4 : 0;
    v->ui0.color = mjui_themeColor(v->color);
  } else if (it->pdata == &v->font) {
    v->fontscale = 50 * (v->font + 1);
    mjr_changeFont(v->fontscale, &v->con);
  } else if (it->pdata == &v->fullscreen) {
    toggle_fullscreen(v);
  } else if (it->pdata == &v->vsync) {
    glfwSwapInterval(v->vsync);
  }
  vw_ui_modify(v);
}

static void simulation_item(viewer* v, int item) {
  switch (item) {
  case IT_RUN: vw_set_running(v, v->run); break;
  case IT_RESET: vw_reset(v); vw_print_state(v, "reset"); break;
  case IT_RELOAD: vw_load_model(v, v->path); vw_ui_init(v); vw_ui_modify(v); break;
  case IT_ALIGN: vw_default_camera(v); break;
  default: break;
  }
  v->ui_dirty = 1;
}

static void item_action(viewer* v, mjuiItem* it) {
  switch (it->sectionid) {
  case SECT_IMPACT: impact_item(v, it->itemid); break;
  case SECT_FILE:
    if (it->itemid == IT_SCREENSHOT) take_screenshot(v);
    else glfwSetWindowShouldClose(v->win, 1);
    break;
  case SECT_OPTION: option_item(v, it); break;
  case SECT_SIMULATION: simulation_item(v, it->itemid); break;
  case SECT_RENDERING:
    if (it->pdata == &v->camera_sel) set_camera_from_ui(v);
    v->ghosts_cached_for = -1;   /* ghost geoms follow the rendering options */
    break;
  default: v->ghosts_cached_for = -1; break;
  }
}

/* --------------------------------------------------------------------------------------------- */
/* Keys the panel does not take: simulate's own, then ours (Ctrl+digit: resample under law k). */
static void cycle_camera(viewer* v, int dir) {
  if (v->m->ncam == 0) return;
  int n = v->m->ncam, c = v->camera_sel < 2 ? (dir > 0 ? 0 : n - 1) : (v->camera_sel - 2 + dir + n) % n;
  v->camera_sel = 2 + c;
  set_camera_from_ui(v);
}

static void change_speed(viewer* v, int dir) {
  int i = v->speed_index + dir;
  if (i < 0 || i >= VW_NSPEED) return;
  v->speed_index = i;
  v->rt_sim = v->rt_wall = 0;
  v->rt_actual = vw_speed_percent[i];
}

static void key_action(viewer* v, int key, int ctrl, int shift) {
  if (ctrl && key >= GLFW_KEY_1 && key < GLFW_KEY_1 + SVI_NLAW) {
    v->law_sel = key - GLFW_KEY_1;
    v->ui_dirty = 1;
    vw_resample(v, v->next_seed++, (svi_law)v->law_sel, "key");
    return;
  }
  if (ctrl && shift && key == GLFW_KEY_Z) { vw_redo(v); return; }   /* the other redo convention */
  switch (key) {
  case GLFW_KEY_SPACE: vw_set_running(v, !v->run); break;
  case GLFW_KEY_RIGHT: if (!v->run && !v->replay.phase) { vw_step(v); vw_print_state(v, "step"); } break;
  case GLFW_KEY_LEFT: vw_step_back(v); vw_print_state(v, "step-back"); break;
  case GLFW_KEY_EQUAL: case GLFW_KEY_KP_ADD: if (!shift || key == GLFW_KEY_KP_ADD) change_speed(v, -1); break;
  case GLFW_KEY_MINUS: case GLFW_KEY_KP_SUBTRACT: change_speed(v, +1); break;
  case GLFW_KEY_RIGHT_BRACKET: cycle_camera(v, +1); break;
  case GLFW_KEY_LEFT_BRACKET: cycle_camera(v, -1); break;
  case GLFW_KEY_ESCAPE: v->camera_sel = 0; set_camera_from_ui(v); break;
  case GLFW_KEY_PAGE_UP:
    if (v->pert.select > 0) v->pert.select = v->m->body_parentid[v->pert.select];
    if (v->pert.select <= 0) v->pert.active = 0;
    break;
  case GLFW_KEY_TAB: if (!shift) { v->ui0_enable = !v->ui0_enable; vw_layout(v); } break;
  case GLFW_KEY_F6: v->opt.frame = (v->opt.frame + 1) % mjNFRAME; v->ui_dirty = 1; break;
  case GLFW_KEY_F7: v->opt.label = (v->opt.label + 1) % mjNLABEL; v->ui_dirty = 1; break;
  default: break;
  }
}

/* --------------------------------------------------------------------------------------------- */
/* The 3-D view: simulate's mouse (orbit, pan, zoom, double-click select, Ctrl-drag perturb,
 * right double-click center, Ctrl right double-click track) plus ours (a click on a ghost, an
 * inset point or the timeline). */
static int inside(mjrRect r, double x, double y) {
  return x >= r.left && x <= r.left + r.width && y >= r.bottom && y <= r.bottom + r.height;
}

static void select_body(viewer* v, int mode) {
  mjuiState* s = &v->uis;
  mjrRect r = s->rect[3];
  mjtNum pnt[3];
  int geom, flex, skin;
  int body = mjv_select(v->m, v->d, &v->opt, (mjtNum)r.width / r.height, (s->x - r.left) / r.width,
                        (s->y - r.bottom) / r.height, &v->scn, pnt, &geom, &flex, &skin);
  if (mode == 1) {   /* left double-click: select for perturbation */
    v->pert.select = body > 0 ? body : 0;
    v->pert.flexselect = body >= 0 ? flex : -1;
    v->pert.skinselect = body >= 0 ? skin : -1;
    if (body > 0) {
      mjtNum tmp[3];
      mju_sub3(tmp, pnt, v->d->xpos + 3 * body);
      mju_mulMatTVec(v->pert.localpos, v->d->xmat + 9 * body, tmp, 3, 3);
    }
    printf("select-body body=%d\n", v->pert.select);
    fflush(stdout);
    return;
  }
  if (body >= 0) mju_copy3(v->cam.lookat, pnt);
  if (mode == 3 && body > 0) {
    v->cam.type = mjCAMERA_TRACKING;
    v->cam.trackbodyid = body;
    v->cam.fixedcamid = -1;
    v->camera_sel = 1;
    v->ui_dirty = 1;
  }
}

static int press_on_overlay(viewer* v) {
  mjuiState* s = &v->uis;
  if (vw_inset_visible(v) && inside(vw_inset_rect(v), s->x, s->y)) {
    int k = vw_inset_point_at(v, s->x, s->y);
    if (k != -1) { printf("click inset\n"); vw_pick_inset(v, k); }
    return 1;
  }
  int i = vw_timeline_event_at(v, s->x, s->y);
  if (i != -2) {
    if (i >= 0) vw_select_event(v, i);
    return 1;
  }
  return 0;
}

static int press_consumed;

static void scene_press(viewer* v) {
  mjuiState* s = &v->uis;
  press_consumed = s->button == mjBUTTON_LEFT && !s->control && press_on_overlay(v);
  if (press_consumed) return;
  v->press_x = s->x;
  v->press_y = s->y;
  v->press_moved = 0;
  int newperturb = 0;
  if (s->control && v->pert.select > 0)
    newperturb = s->right ? mjPERT_TRANSLATE : s->left ? mjPERT_ROTATE : 0;
  if (newperturb && !v->pert.active) mjv_initPerturb(v->m, v->d, &v->scn, &v->pert);
  v->pert.active = newperturb;
  if (s->doubleclick) {
    select_body(v, s->button == mjBUTTON_LEFT ? 1 : s->control ? 3 : 2);
    v->pert.active = 0;
  }
}

static void scene_release(viewer* v) {
  mjuiState* s = &v->uis;
  v->pert.active = 0;
  if (press_consumed || s->button != mjBUTTON_LEFT || v->press_moved || s->doubleclick || s->control)
    return;
  int k = vw_ghost_at(v, s->x, s->y, NULL);
  if (k >= 0) { printf("click ghost\n"); vw_pick_ghost(v, k); }
}

static void scene_move(viewer* v) {
  mjuiState* s = &v->uis;
  if (press_consumed) return;
  if (hypot(s->x - v->press_x, s->y - v->press_y) > 3) v->press_moved = 1;
  int action = s->right ? (s->shift ? mjMOUSE_MOVE_H : mjMOUSE_MOVE_V)
             : s->left ? (s->shift ? mjMOUSE_ROTATE_H : mjMOUSE_ROTATE_V) : mjMOUSE_ZOOM;
  mjrRect r = s->rect[3];
  if (v->pert.active) mjv_movePerturb(v->m, v->d, action, s->dx / r.height, -s->dy / r.height, &v->scn, &v->pert);
  else mjv_moveCamera(v->m, action, s->dx / r.height, -s->dy / r.height, &v->cam);
}

/* a panel item's rectangle in window pixels (GL convention), as mjui_render blits the panel */
static mjrRect item_window_rect(const viewer* v, const mjuiItem* it) {
  mjrRect pr = v->uis.rect[1];
  int scroll = v->ui0.height > pr.height ? v->ui0.scroll : 0;
  mjrRect r = {pr.left + it->rect.left, pr.bottom + pr.height - v->ui0.height + scroll + it->rect.bottom,
               it->rect.width, it->rect.height};
  return r;
}

/* a click on the disabled Resample button says why it is disabled */
static void explain_disabled(viewer* v) {
  const mjuiItem* it = &v->ui0.sect[SECT_IMPACT].item[IT_RESAMPLE];
  if (v->uis.type != mjEVENT_PRESS || v->resample_ok || !v->ui0.sect[SECT_IMPACT].state) return;
  if (!inside(item_window_rect(v, it), v->uis.x, v->uis.y)) return;
  vw_message(v, "Resample is off: %s", v->reason);
  printf("resample refused: %s\n", v->reason);
  fflush(stdout);
}

void vw_ui_event(viewer* v) {
  mjuiState* s = &v->uis;
  /* keys go to the panel even when it is hidden: its shortcuts stay on, as in simulate */
  int to_panel = s->type == mjEVENT_KEY ||
                 (v->ui0_enable && (s->dragrect == 1 || (s->dragrect == 0 && s->mouserect == 1)));
  if (to_panel) {
    mjuiItem* it = mjui_event(&v->ui0, s, &v->con);
    if (it) { item_action(v, it); return; }
    if (s->type == mjEVENT_KEY && s->key == 0) return;
    if (s->type != mjEVENT_KEY) { explain_disabled(v); return; }
  }
  if (s->type == mjEVENT_KEY) { key_action(v, s->key, s->control, s->shift); return; }
  if (s->type == mjEVENT_FILESDROP && s->dropcount > 0) {
    if (vw_load_model(v, s->droppaths[0]) == 0) { vw_ui_init(v); vw_ui_modify(v); }
    return;
  }
  if (s->type == mjEVENT_SCROLL && s->mouserect == 3) {
    mjv_moveCamera(v->m, mjMOUSE_ZOOM, 0, -0.02 * s->sy, &v->cam);
    return;
  }
  if (s->type == mjEVENT_PRESS && s->mouserect == 3) { scene_press(v); return; }
  if (s->type == mjEVENT_RELEASE && s->dragrect == 3) { scene_release(v); return; }
  if (s->type == mjEVENT_MOVE && s->dragrect == 3) scene_move(v);
}

/* --------------------------------------------------------------------------------------------- */
/* Input, real or scripted: window coordinates (top-left origin, as GLFW and xdotool give them)
 * become framebuffer pixels with the origin bottom-left (mjui's convention). */
static void set_position(viewer* v, double wx, double wy) {
  mjuiState* s = &v->uis;
  int fw, fh, ww, wh;
  glfwGetFramebufferSize(v->win, &fw, &fh);
  glfwGetWindowSize(v->win, &ww, &wh);
  double ratio = ww > 0 ? (double)fw / ww : 1;
  double x = wx * ratio, y = s->rect[0].height - wy * ratio;
  s->dx = x - s->x;
  s->dy = y - s->y;
  s->x = x;
  s->y = y;
  s->mouserect = mjr_findRect((int)lround(x), (int)lround(y), s->nrect - 1, s->rect + 1) + 1;
}

static void set_modifiers(viewer* v, int mods) {
  v->uis.control = (mods & GLFW_MOD_CONTROL) != 0;
  v->uis.shift = (mods & GLFW_MOD_SHIFT) != 0;
  v->uis.alt = (mods & GLFW_MOD_ALT) != 0;
}

/* Held keys repeat only where repeating means something (stepping, speed): a held Enter is one
 * resample, not dozens that would push the original outcome out of the undo history. */
void vw_key(viewer* v, int key, int mods, int repeat) {
  int repeatable = key == GLFW_KEY_RIGHT || key == GLFW_KEY_LEFT || key == GLFW_KEY_EQUAL ||
                   key == GLFW_KEY_MINUS || key == GLFW_KEY_KP_ADD || key == GLFW_KEY_KP_SUBTRACT;
  if (repeat && !repeatable) return;
  set_modifiers(v, mods);
  v->uis.type = mjEVENT_KEY;
  v->uis.key = key;
  v->uis.keytime = vw_now_ms() / 1e3;
  vw_ui_event(v);
}

void vw_mouse_button(viewer* v, int button, int press, double x, double y, int mods, double t) {
  mjuiState* s = &v->uis;
  set_modifiers(v, mods);
  set_position(v, x, y);
  int b = button == GLFW_MOUSE_BUTTON_LEFT ? mjBUTTON_LEFT : button == GLFW_MOUSE_BUTTON_RIGHT ? mjBUTTON_RIGHT : mjBUTTON_MIDDLE;
  if (s->alt && b != mjBUTTON_MIDDLE) b = b == mjBUTTON_LEFT ? mjBUTTON_RIGHT : mjBUTTON_LEFT;
  if (b == mjBUTTON_LEFT) s->left = press;
  if (b == mjBUTTON_RIGHT) s->right = press;
  if (b == mjBUTTON_MIDDLE) s->middle = press;
  if (press) {
    s->doubleclick = b == s->button && t - s->buttontime < 0.25;
    s->type = mjEVENT_PRESS;
    s->button = b;
    s->buttontime = t;
    if (s->mouserect) { s->dragbutton = b; s->dragrect = s->mouserect; }
  } else {
    s->type = mjEVENT_RELEASE;
  }
  vw_ui_event(v);
  if (!press) s->dragrect = s->dragbutton = 0;
}

void vw_mouse_move(viewer* v, double x, double y) {
  set_position(v, x, y);
  if (!v->uis.left && !v->uis.right && !v->uis.middle) return;
  v->uis.type = mjEVENT_MOVE;
  vw_ui_event(v);
}

static void key_cb(GLFWwindow* w, int key, int sc, int act, int mods) {
  (void)w; (void)sc;
  if (act != GLFW_RELEASE) vw_key(the_viewer, key, mods, act == GLFW_REPEAT);
}

static void button_cb(GLFWwindow* w, int button, int act, int mods) {
  double x, y;
  glfwGetCursorPos(w, &x, &y);
  vw_mouse_button(the_viewer, button, act == GLFW_PRESS, x, y, mods, glfwGetTime());
}

static void move_cb(GLFWwindow* w, double x, double y) {
  (void)w;
  vw_mouse_move(the_viewer, x, y);
}

static void scroll_cb(GLFWwindow* w, double xo, double yo) {
  double x, y;
  glfwGetCursorPos(w, &x, &y);
  set_position(the_viewer, x, y);
  the_viewer->uis.type = mjEVENT_SCROLL;
  the_viewer->uis.sx = xo;
  the_viewer->uis.sy = yo;
  vw_ui_event(the_viewer);
}

static void drop_cb(GLFWwindow* w, int count, const char** paths) {
  (void)w;
  the_viewer->uis.type = mjEVENT_FILESDROP;
  the_viewer->uis.dropcount = count;
  the_viewer->uis.droppaths = paths;
  vw_ui_event(the_viewer);
  the_viewer->uis.dropcount = 0;
  the_viewer->uis.droppaths = NULL;
}

void vw_ui_install_callbacks(viewer* v) {
  the_viewer = v;
  glfwSetKeyCallback(v->win, key_cb);
  glfwSetMouseButtonCallback(v->win, button_cb);
  glfwSetCursorPosCallback(v->win, move_cb);
  glfwSetScrollCallback(v->win, scroll_cb);
  glfwSetDropCallback(v->win, drop_cb);
}

/* the center of a panel item, in window coordinates (top-left origin), for scripts and tests */
int vw_ui_item_center(viewer* v, const char* name, double* x, double* y) {
  for (int s = 0; s < v->ui0.nsect; s++)
    for (int i = 0; i < v->ui0.sect[s].nitem; i++) {
      mjuiItem* it = &v->ui0.sect[s].item[i];
      if (strcasecmp(it->name, name) || it->skip || !v->ui0.sect[s].state) continue;
      int fw, fh, ww, wh;
      glfwGetFramebufferSize(v->win, &fw, &fh);
      glfwGetWindowSize(v->win, &ww, &wh);
      double ratio = ww > 0 ? (double)fw / ww : 1;
      mjrRect r = item_window_rect(v, it);
      *x = (r.left + 0.5 * r.width) / ratio;
      *y = (fh - (r.bottom + 0.5 * r.height)) / ratio;
      return 0;
    }
  return -1;
}

