"""make_scenes.py -- writes the seven scenes of models/scenes/ (quadruped, biped_boxfeet, box_edge,
bin_pile, chain, arm_push, drops), header comments included.

  .venv/bin/python models/scenes/make_scenes.py

from the repository root (any working directory will do: the files are written next to this
script).  The output is deterministic (no clock, fixed seeds), so a rerun gives the committed files
byte for byte; edit this script, not the XML files.

Each model gets a keyframe "impact": every contact of the landing 1e-4 m open, approaching at 1 m/s.
The keyframes are computed with plain MuJoCo on the same model without the <extension> block: forward
kinematics and mj_geomDistance place the model, and for the bin a native settle of the pile.
qpos0 (the reset state) is the keyframe's pose 5 cm higher and at rest (touchdown at
sqrt(2 g 0.05) = 0.99 m/s), except for the arm, whose reset state is a resting scene.
"""
import math
import os

import mujoco
import numpy as np

OUT = os.path.dirname(os.path.abspath(__file__))
EPS = 1e-4     # m, contact clearance at the keyframe "impact"
DROP = 0.05    # m, drop height of qpos0 (touchdown at sqrt(2 g DROP) = 0.99 m/s)
V0 = 1.0       # m/s, approach speed at the keyframe "impact"
GRAVITY = 9.81

COMMON = """\
  <compiler angle="radian" autolimits="true"/>
  <!-- elliptic cones: the native solver then uses true Coulomb cones (the default pyramid lets
       high-friction contacts creep and sink) -->
  <option timestep="0.001" cone="elliptic"/>
"""

ASSET = """\
  <asset>
    <texture name="grid" type="2d" builtin="checker" rgb1=".2 .3 .4" rgb2=".3 .4 .5" width="256" height="256"/>
    <material name="grid" texture="grid" texrepeat="8 8" reflectance="0.1"/>
  </asset>
"""

WORLD = """\
  <worldbody>
    <light pos="0 -1 2" dir="0 .5 -1"/>
    <geom name="floor" type="plane" size="2 2 0.1" material="grid" contype="0" conaffinity="1"/>
"""

# what every header says about the contact parameters
CONTACTS = """\
  condim 3 (Coulomb friction; the torsional and rolling coefficients 0.005, 0.0001 are unused),
  margin 0, gap 2.5 mm on every colliding geom (a pair's gaps add up to 5 mm): MuJoCo reports a
  contact 5 mm before it touches, as an inactive contact that its solver ignores until the geoms
  penetrate, and svi.impact uses these to see impacts coming (its window and band)."""


def num(x, digits=6):
  """x rounded to `digits` decimals, without trailing zeros: 0.21, not 0.21000000000000002"""
  s = "%.*f" % (digits, x)
  if "." in s:
    s = s.rstrip("0").rstrip(".")
  return "0" if s in ("-0", "") else s


def vec(a, digits=6):
  return " ".join(num(x, digits) for x in a)


def fmt(a):
  """keyframe numbers: 10 significant digits"""
  return " ".join("%.10g" % x for x in a)


def plugin_block(configs=()):
  if not configs:
    inst = '      <instance name="impacts"/>\n'
  else:
    inst = '      <instance name="impacts">\n'
    inst += "".join('        <config key="%s" value="%s"/>\n' % kv for kv in configs)
    inst += "      </instance>\n"
  return "  <extension>\n    <plugin plugin=\"svi.impact\">\n" + inst + "    </plugin>\n  </extension>\n"


def model_xml(name, defaults, body, plugin="", header="", key=None):
  """the whole file; key = (qpos, qvel) or None.  Without plugin: the native model."""
  xml = header + '<mujoco model="%s">\n' % name + COMMON
  if plugin:
    xml += "\n" + plugin
  xml += "\n" + ASSET + "\n  <default>\n" + defaults + "  </default>\n\n" + WORLD + body + "  </worldbody>\n"
  if key is not None:
    xml += ('\n  <keyframe>\n    <key name="impact" qpos="%s"\n         qvel="%s"/>\n  </keyframe>\n'
            % (fmt(key[0]), fmt(key[1])))
  return xml + "</mujoco>\n"


def compile_xml(xml):
  m = mujoco.MjModel.from_xml_string(xml)
  return m, mujoco.MjData(m)


def write(name, text):
  path = os.path.join(OUT, name + ".xml")
  with open(path, "w") as f:
    f.write(text)
  m, _ = compile_xml(strip_plugin(text))
  print("%-14s nq %2d nv %2d  -> %s" % (name, m.nq, m.nv, path))


def strip_plugin(text):
  a, b = text.find("  <extension>"), text.find("</extension>\n")
  return text if a < 0 else text[:a] + text[b + len("</extension>\n"):]


def floor_gap(m, d, geoms, others=(0,)):
  """min signed distance (mj_geomDistance) between the geoms and the others (default: the floor)"""
  mujoco.mj_forward(m, d)
  ft = np.zeros(6)
  return min(mujoco.mj_geomDistance(m, d, o, g, 1.0, ft) for g in geoms for o in others)


def drop_free(m, d, qpos, geoms, adr=2, clearance=EPS):
  """shifts the free joint's z (qpos[adr]) so that the geoms are `clearance` above the floor"""
  qpos = qpos.copy()
  for _ in range(3):
    d.qpos[:] = qpos
    qpos[adr] -= floor_gap(m, d, geoms) - clearance
  return qpos


def falling(m, adr=2):
  qvel = np.zeros(m.nv)
  qvel[adr] = -V0
  return qvel


def drop_key(m, d, qpos, geoms):
  """qpos0's height (the geoms DROP above the floor) and the keyframe "impact" (EPS above it,
  falling at V0)"""
  z0 = drop_free(m, d, qpos, geoms, clearance=DROP)[2]
  return z0, (drop_free(m, d, qpos, geoms), falling(m))


def stance_states(layout, parts):
  """the header's initial states of a robot dropped in its stance"""
  return f"""  Initial states ({layout}):
    qpos0 (reset) : the stance with the {parts} 5 cm above the floor, at rest (touchdown at
                    {V_DROP:.4f} m/s).
    key "impact"  : the stance with the {parts} 1e-4 m above the floor, falling at 1 m/s."""


def geoms_named(m, names):
  return [m.geom(n).id for n in names]


def set_joints(m, qpos, angles):
  for jn, a in angles.items():
    qpos[m.joint(jn).qposadr[0]] = a
  return qpos


def mass(m, body):
  return m.body_subtreemass[m.body(body).id]


V_DROP = math.sqrt(2 * GRAVITY * DROP)


# ------------------------------------------------------------------------------------ quadruped
def quadruped():
  name = "quadruped"
  hips = (("FL", 0.15, 0.1), ("FR", 0.15, -0.1), ("HL", -0.15, 0.1), ("HR", -0.15, -0.1))
  stance = {}   # leg -> (hip, knee) angles: knees forward-bent in front, mirrored behind
  for leg, x, _ in hips:
    s = 1 if x > 0 else -1
    stance[leg] = (0.4 * s, -0.8 * s)
  defaults = """\
    <geom condim="3" margin="0" gap="0.0025" friction="0.5 0.005 0.0001"/>
    <default class="torso">
      <geom type="box" density="500" contype="0" conaffinity="0" rgba=".3 .5 .8 1"/>
    </default>
    <default class="leg">
      <joint axis="0 1 0" stiffness="40" damping="0.5" armature="0.01"/>
      <geom type="capsule" density="1000" contype="0" conaffinity="0" rgba=".8 .6 .3 1"/>
    </default>
    <default class="foot">
      <geom type="sphere" size="0.025" density="1000" contype="1" conaffinity="0" rgba=".9 .1 .1 1"/>
    </default>
"""

  def body(z):
    legs = ""
    for leg, x, y in hips:
      hip, knee = stance[leg]
      legs += f"""
      <body name="{leg}_thigh" pos="{x} {y} -0.05" euler="0 {hip} 0">
        <joint name="{leg}_hip" class="leg" ref="{hip}" springref="{hip}"/>
        <geom class="leg" fromto="0 0 0 0 0 -0.15" size="0.02"/>
        <body name="{leg}_shin" pos="0 0 -0.15" euler="0 {knee} 0">
          <joint name="{leg}_knee" class="leg" ref="{knee}" springref="{knee}"/>
          <geom class="leg" fromto="0 0 0 0 0 -0.15" size="0.015"/>
          <geom name="{leg}_foot" class="foot" pos="0 0 -0.15"/>
        </body>
      </body>"""
    return f"""    <body name="torso" pos="0 0 {num(z)}">
      <freejoint name="root"/>
      <geom name="torso" class="torso" size="0.2 0.1 0.05"/>{legs}
    </body>
"""

  m, d = compile_xml(model_xml(name, defaults, body(0.5)))
  feet = geoms_named(m, [leg + "_foot" for leg, _, _ in hips])
  qpos = set_joints(m, m.qpos0.copy(), {f"{leg}_{j}": a for leg, (h, k) in stance.items()
                                         for j, a in (("hip", h), ("knee", k))})
  z0, key = drop_key(m, d, qpos, feet)
  m, d = compile_xml(model_xml(name, defaults, body(z0), key=key))
  leg_mass = mass(m, "FL_thigh")
  torso_mass = mass(m, "torso") - 4 * leg_mass
  header = f"""<!--
  quadruped.xml: a four-legged robot without actuators lands on all four feet at once.  Made by
  make_scenes.py in this directory (edit the script, not this file).

  What it shows: four simultaneous point contacts on four legs, coupled through the torso (14
  dofs, 4 normal + 8 friction rows).  The feet's contact normals are coupled in the mass matrix, so
  the outcome depends on the order in which their impulses build up.  The simultaneous law
  (Anitescu-Potra) lands on all four feet (all stick); the set-valued law's samples lift one, two
  or three feet and let others stick or slide (svi-sim seeds 1-8: DLLS, LSDL, LSSL, SLSS, ...;
  letters per foot FL FR HL HR: S stick, D slide, L lift off), all keeping about 20 % of the
  kinetic energy.  The hips and knees act as free hinges during the impact (springs and dampers
  give no impulse).

  Model: torso box 0.4 m x 0.2 m x 0.1 m, density 500 kg/m^3 ({torso_mass:.4g} kg).  Four legs, hips at
  (+-0.15, +-0.1, -0.05) m from the torso centre: thigh capsule 0.15 m, r 0.02 m; shin capsule
  0.15 m, r 0.015 m; foot sphere r 0.025 m at the shin's end; density 1000 kg/m^3, {leg_mass:.4g} kg a leg;
  {mass(m, 'torso'):.4g} kg in all.  Hip and knee hinges about y, each held by a spring at the stance
  (40 N m/rad, damping 0.5 N m s/rad, armature 0.01 kg m^2): front legs hip 0.4, knee -0.8 rad,
  hind legs mirrored (hip -0.4, knee 0.8 rad).  The joints' ref is the stance, so qpos0 stands.
  Contacts: only the four feet collide (with the floor).  mu = 0.5,
{CONTACTS}

{stance_states("free joint qpos = [x y z qw qx qy qz], then hip, knee per leg FL FR HL HR", "feet")}
-->
"""
  write(name, model_xml(name, defaults, body(z0), plugin=plugin_block(), header=header, key=key))


# ------------------------------------------------------------------------------------ biped
def biped():
  name = "biped_boxfeet"
  pose = (0.3, -0.6, 0.3)   # hip, knee, ankle: the soles stay level
  defaults = """\
    <geom condim="3" margin="0" gap="0.0025" friction="0.5 0.005 0.0001"/>
    <default class="torso">
      <geom type="box" density="500" contype="0" conaffinity="0" rgba=".3 .5 .8 1"/>
    </default>
    <default class="leg">
      <joint axis="0 1 0" stiffness="150" damping="2" armature="0.01"/>
      <geom type="capsule" density="1000" contype="0" conaffinity="0" rgba=".8 .6 .3 1"/>
      <default class="ankle">
        <joint stiffness="80" damping="1"/>
      </default>
    </default>
    <default class="sole">
      <geom type="box" size="0.1 0.045 0.015" density="1000" contype="1" conaffinity="0" rgba=".9 .1 .1 1"/>
    </default>
"""

  def body(z):
    legs = ""
    for leg, y in (("L", 0.08), ("R", -0.08)):
      legs += f"""
      <body name="{leg}_thigh" pos="0 {y} -0.15" euler="0 {pose[0]} 0">
        <joint name="{leg}_hip" class="leg" ref="{pose[0]}" springref="{pose[0]}"/>
        <geom class="leg" fromto="0 0 0 0 0 -0.3" size="0.035"/>
        <body name="{leg}_shin" pos="0 0 -0.3" euler="0 {pose[1]} 0">
          <joint name="{leg}_knee" class="leg" ref="{pose[1]}" springref="{pose[1]}"/>
          <geom class="leg" fromto="0 0 0 0 0 -0.3" size="0.03"/>
          <body name="{leg}_foot" pos="0 0 -0.3" euler="0 {pose[2]} 0">
            <joint name="{leg}_ankle" class="ankle" ref="{pose[2]}" springref="{pose[2]}"/>
            <geom name="{leg}_sole" class="sole" pos="0.03 0 -0.03"/>
          </body>
        </body>
      </body>"""
    return f"""    <body name="torso" pos="0 0 {num(z)}">
      <freejoint name="root"/>
      <geom name="torso" class="torso" size="0.08 0.12 0.15"/>{legs}
    </body>
"""

  m, d = compile_xml(model_xml(name, defaults, body(1.0)))
  soles = geoms_named(m, ["L_sole", "R_sole"])
  qpos = set_joints(m, m.qpos0.copy(), {f"{leg}_{j}": a for leg in "LR"
                                         for j, a in zip(("hip", "knee", "ankle"), pose)})
  z0, key = drop_key(m, d, qpos, soles)
  m, d = compile_xml(model_xml(name, defaults, body(z0), key=key))
  leg_mass = mass(m, "L_thigh")
  torso_mass = mass(m, "torso") - 2 * leg_mass
  header = f"""<!--
  biped_boxfeet.xml: a biped without actuators lands flat on both box feet at once.  Made by
  make_scenes.py in this directory (edit the script, not this file).

  What it shows: redundant contacts on two bodies at once: each flat sole gives its 4 corners, 8
  contacts (8 normal + 16 friction rows) for 12 dofs, so the Delassus matrix is singular and the
  impact LCPs must cope (like block_flat_3d.xml, but on two feet coupled through the legs and the
  torso).  The simultaneous law lands flat on both soles (all 8 corners stick); the set-valued
  law's samples also lift one sole off, or the outer long edge of one sole and the inner edge of
  the other (the robot starts to roll sideways): svi-sim seeds 1-8 give SSSSLLLL, SSLLSSLL,
  SSSSSSSS, LLSSLLLL, ... (corners of the left sole, then the right).

  Model: torso box 0.16 m x 0.24 m x 0.3 m, density 500 kg/m^3 ({torso_mass:.4g} kg).  Two legs, hips
  0.08 m either side of the torso's bottom centre: thigh capsule 0.3 m, r 0.035 m; shin capsule
  0.3 m, r 0.03 m; sole box 0.2 m x 0.09 m x 0.03 m, 3 cm forward of and 3 cm below the ankle;
  density 1000 kg/m^3, {leg_mass:.4g} kg a leg; {mass(m, 'torso'):.4g} kg in all.  Hip, knee and ankle hinges about
  y, each held by a spring at the stance hip 0.3, knee -0.6, ankle 0.3 rad (soles level): hips and
  knees 150 N m/rad, damping 2 N m s/rad; ankles 80 N m/rad, 1 N m s/rad; armature 0.01 kg m^2.
  The joints' ref is the stance, so qpos0 stands.
  Contacts: only the soles collide (with the floor; box-plane gives the 4 bottom corners).
  mu = 0.5,
{CONTACTS}

{stance_states("free joint qpos = [x y z qw qx qy qz], then hip, knee, ankle of L and R", "soles")}
-->
"""
  write(name, model_xml(name, defaults, body(z0), plugin=plugin_block(), header=header, key=key))


# ------------------------------------------------------------------------------------ box on an edge
def box_edge():
  name = "box_edge"
  th = 0.6      # tilt about x, rad: the lower edge (along x) lands first
  spin = 0.5    # rad/s about x at the keyframe
  defaults = '    <geom condim="3" margin="0" gap="0.0025" friction="0.5 0.005 0.0001"/>\n'

  def body(z):
    return f"""    <body name="box" pos="0 0 {num(z)}" euler="{th} 0 0">
      <freejoint name="box"/>
      <geom name="box" type="box" size="0.1 0.075 0.05" mass="1" contype="1" conaffinity="0" rgba=".8 .6 .3 1"/>
    </body>
"""

  m, d = compile_xml(model_xml(name, defaults, body(0.3)))
  qpos = m.qpos0.copy()
  qpos[3:7] = [math.cos(th / 2), math.sin(th / 2), 0, 0]
  box = [m.geom("box").id]
  z0, key = drop_key(m, d, qpos, box)
  key[1][3] = spin   # about the edge's direction: both corners of the edge approach alike
  m, d = compile_xml(model_xml(name, defaults, body(z0), key=key))
  Ixx, Iyy, Izz = m.body_inertia[m.body("box").id]
  header = f"""<!--
  box_edge.xml: a box tilted {th} rad about x lands on its lower edge, both end corners of the edge
  at once, then topples onto its face.  Made by make_scenes.py in this directory (edit the script,
  not this file).

  What it shows: the smallest 3-D simultaneous impact: two corner contacts on a line (2 normal + 4
  friction rows, 6 dofs), the 3-D version of rocking_block.xml's two corners.  Here the set is
  narrow: the simultaneous law stops both corners (both stick), the set-valued law's samples let
  both slide a little, with 0.050-0.057 J of the 0.51 J left (svi-sim seeds 1-8).  The box then
  tips over onto the face next to the edge (at 0.11 s): a second event, in which the edge's two
  resting contacts take part in the face's landing and lift off.

  Model: box 0.2 m x 0.15 m x 0.1 m, m = 1 kg, uniform density: Ixx = {Ixx:.7f},
  Iyy = {Iyy:.7f}, Izz = {Izz:.7f} kg m^2.  Tilted {th} rad about x (body quat), so its
  x-parallel edge at local (y, z) = (-0.075, -0.05) is the lowest.
  Contacts: the box geom itself collides (box-plane gives the corners within the band).  mu = 0.5,
{CONTACTS}

  Initial states (free joint qpos = [x y z qw qx qy qz], qvel = [v; omega], omega in the body
  frame):
    qpos0 (reset) : the lower edge 5 cm above the floor, at rest (touchdown at {V_DROP:.4f} m/s).
    key "impact"  : the lower edge 1e-4 m above the floor, falling at 1 m/s and turning at
                    {spin} rad/s about x (the edge's direction), which adds 0.017 m/s to both
                    corners' approach alike.
-->
"""
  write(name, model_xml(name, defaults, body(z0), plugin=plugin_block(), header=header, key=key))


# ------------------------------------------------------------------------------------ bin pile
def bin_pile():
  name = "bin_pile"
  W, T, H = 0.2, 0.01, 0.12   # interior half-width, wall half-thickness, wall half-height
  n = 10
  max_contacts = 128
  rng = np.random.default_rng(3)
  sizes, column = [], []       # box half-sizes; the column the boxes settle from (x, y, z, yaw)
  z = 0.0
  for _ in range(n):
    s = rng.uniform(0.03, 0.07, 3)
    s[2] = rng.uniform(0.025, 0.05)
    x, y = rng.uniform(-W + 0.08, W - 0.08, 2)
    z += s[2] + 0.01
    yaw = rng.uniform(0, math.pi)
    column.append((x, y, z, yaw))
    z += s[2]
    sizes.append(s)
  defaults = """\
    <geom condim="3" margin="0" gap="0.0025" friction="0.5 0.005 0.0001"/>
    <default class="wall">
      <geom type="box" contype="0" conaffinity="1" rgba=".5 .5 .5 .3"/>
    </default>
    <default class="box">
      <geom type="box" density="600" contype="1" conaffinity="1" rgba=".8 .6 .3 1"/>
    </default>
"""
  walls = ""
  for i, (x, y, sx, sy) in enumerate(((W + T, 0, T, W + 2 * T), (-W - T, 0, T, W + 2 * T),
                                      (0, W + T, W, T), (0, -W - T, W, T))):
    walls += f'    <geom name="wall{i}" class="wall" pos="{vec((x, y, H))}" size="{vec((sx, sy, H))}"/>\n'

  def body(poses):
    """poses: per box the body pos and quat strings"""
    out = walls
    for i, (pos, quat) in enumerate(poses):
      out += (f'    <body name="b{i}" pos="{pos}"{quat}>\n      <freejoint/>\n'
              f'      <geom name="b{i}" class="box" size="{vec(sizes[i], 4)}"/>\n    </body>\n')
    return out

  # the settle runs on the model whose qpos0 is the column (4 decimals, no yaw), as the survey did
  m, d = compile_xml(model_xml(name, defaults, body([(vec(c[:3], 4), "") for c in column])))
  qpos = m.qpos0.copy()
  for i, (x, y, zz, yaw) in enumerate(column):
    qpos[7 * i:7 * i + 7] = [x, y, zz, math.cos(yaw / 2), 0, 0, math.sin(yaw / 2)]
  # settle boxes 0..8 natively for 3 s; box 9 parked 2 m up, frozen
  top, last = 7 * (n - 1), 6 * (n - 1)
  d.qpos[:] = qpos
  d.qpos[top:top + 3] = [0, 0, 2.0]
  for _ in range(3000):
    mujoco.mj_step(m, d)
    d.qpos[top:top + 3] = [0, 0, 2.0]
    d.qvel[last:last + 6] = 0
  assert not any(w.number for w in d.warning), "MuJoCo warned while the pile settled"
  qpos = d.qpos.copy()
  settle_speed = np.abs(d.qvel[:last]).max()
  # box 9 above the highest box, yawed 0.4 rad, lowered until EPS above the pile
  high = max(range(n - 1), key=lambda i: qpos[7 * i + 2])
  qpos[top:top + 3] = [qpos[7 * high], qpos[7 * high + 1], 0.6]
  qpos[top + 3:top + 7] = [math.cos(0.2), 0, 0, math.sin(0.2)]
  g9 = m.geom("b%d" % (n - 1)).id
  pile = [m.geom("b%d" % i).id for i in range(n - 1)]
  for _ in range(4):
    d.qpos[:] = qpos
    qpos[top + 2] -= floor_gap(m, d, [g9], pile) - EPS
  qvel = np.zeros(m.nv)
  qvel[last + 2] = -V0
  key = (qpos, qvel)
  d.qpos[:] = qpos
  mujoco.mj_forward(m, d)
  under = sorted({mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_GEOM, c.geom[1 - int(c.geom[1] == g9)])
                  for c in d.contact[:d.ncon] if g9 in c.geom and c.dist < 2 * EPS})

  # the file: qpos0 = the settled pile, box 9 DROP above its keyframe pose
  q0 = qpos.copy()
  q0[top + 2] += DROP - EPS
  poses = [(vec(q0[7 * i:7 * i + 3]), ' quat="%s"' % vec(q0[7 * i + 3:7 * i + 7], 7)) for i in range(n)]
  m, d = compile_xml(model_xml(name, defaults, body(poses), key=key))
  masses = [m.body_mass[m.body("b%d" % i).id] for i in range(n)]
  lo, hi, total = min(masses), max(masses), sum(masses)
  hit = ", ".join(u[1:] for u in under)
  header = f"""<!--
  bin_pile.xml: nine boxes of random sizes lie in a loose pile in a bin (four walls); a tenth box
  lands on top of the pile at 1 m/s.  Made by make_scenes.py in this directory (edit the script,
  not this file).

  What it shows: an impact that spreads through resting contacts.  Box 9 first touches box {hit}
  at one point, but the event holds every contact of the trees it reaches, box on box, on the
  floor and against the walls, because the impulse passes through them (as in
  newtons_cradle.xml): svi-sim's event has 43 contacts, 6 of them approaching, on 8 of the 10
  boxes (48 of the 60 dofs).  It is by far the largest event of these scenes, the one that
  exercises the choice between the dense and the low-rank Lemke solver, and max_contacts.

  Model: bin interior 0.4 m x 0.4 m, walls 2 cm thick and 0.24 m high (contype 0: they collide only
  with the boxes; drawn transparent).  Boxes: half-sizes uniform in [0.03, 0.07] m (x, y) and
  [0.025, 0.05] m (z), density 600 kg/m^3, {lo:.3f} to {hi:.3f} kg ({total:.3f} kg in all), drawn with
  numpy's default_rng(3).  The pile: boxes 0-8 dropped as a column (1 cm apart, random x, y in
  [-0.12, 0.12] m, random yaw) into the bin and settled natively for 3 s, box 9 held 2 m up
  (largest remaining speed {settle_speed:.1e} m/s, zeroed in the states below).  Box 9
  ({masses[-1]:.3f} kg, yaw 0.4 rad) is placed above the highest box of the pile (box {high}).
  Contacts: boxes collide with each other, the floor and the walls.  mu = 0.5,
{CONTACTS}
  max_contacts = {max_contacts}: svi.impact remembers every touching contact, and one event may hold
  all of them.  The pile touches at up to 53 points at once (2 s from either state below; 52
  warns), so the default 64 is just enough; {max_contacts} leaves room for a pile that settles otherwise.

  Initial states (free joints, qpos = [x y z qw qx qy qz] per box 0-9):
    qpos0 (reset) : the settled pile at rest, box 9 5 cm above its keyframe pose (touchdown at
                    {V_DROP:.4f} m/s).  Body poses rounded to 1e-6 m and 1e-7.
    key "impact"  : the settled pile at rest (full precision), box 9 1e-4 m above the pile,
                    falling at 1 m/s.
-->
"""
  write(name, model_xml(name, defaults, body(poses), plugin=plugin_block([("max_contacts", max_contacts)]),
                        header=header, key=key))


# ------------------------------------------------------------------------------------ chain
def chain():
  name = "chain"
  n, L, r = 8, 0.1, 0.015
  defaults = f"""\
    <geom condim="3" margin="0" gap="0.0025" friction="0.5 0.005 0.0001"/>
    <default class="link">
      <joint type="ball" damping="0.005" armature="0.0005"/>
      <geom type="capsule" fromto="0 0 0 {L} 0 0" size="{r}" density="1000" contype="1" conaffinity="0"
            rgba=".8 .6 .3 1"/>
    </default>
"""

  def body(z):
    out, close = "", ""
    for i in range(n):
      ind = "    " + "  " * i
      pos = f"0 0 {num(z)}" if i == 0 else f"{L} 0 0"
      joint = '<freejoint name="root"/>' if i == 0 else f'<joint name="j{i}" class="link"/>'
      out += f'{ind}<body name="c{i}" pos="{pos}">\n{ind}  {joint}\n{ind}  <geom name="c{i}" class="link"/>\n'
      close = f"{ind}</body>\n" + close
    return out + close

  m, d = compile_xml(model_xml(name, defaults, body(0.3)))
  links = geoms_named(m, ["c%d" % i for i in range(n)])
  z0, key = drop_key(m, d, m.qpos0.copy(), links)
  m, d = compile_xml(model_xml(name, defaults, body(z0), key=key))
  link_mass, total = m.body_mass[m.body("c0").id], mass(m, "c0")
  header = f"""<!--
  chain.xml: a chain of {n} capsules on ball joints lands straight and flat on the floor.  Made by
  make_scenes.py in this directory (edit the script, not this file).

  What it shows: many simultaneous contacts on a long kinematic chain: each capsule touches the
  floor at both ends, so 16 contacts (16 normal + 32 friction rows) for 27 dofs, and at each of the
  7 joints two contacts (one per capsule) coincide.  The impulses propagate along the chain through
  the joints, and the set is wide: the simultaneous law stops every contact (all stick, as do
  svi-sim seeds 2 and 8), other samples lift most of the chain off at up to 0.13 m/s while a few
  links stick or slide (seed 1: DLLLLDDLLLLDSSSS, contacts of link 0 to 7 in order, two per
  link), the sequential law lifts all but one.  With seed 1 the lifted links land again at
  0.082 s, a second event.

  Model: {n} capsules, length {L} m between the end centres, r = {r} m, density 1000 kg/m^3:
  {link_mass:.4f} kg each, {total:.4f} kg in all.  Link 0 has a free joint; links 1-{n - 1} hang on ball joints at
  the previous link's end (damping 0.005 N m s/rad, armature 0.0005 kg m^2).
  Contacts: every capsule collides with the floor only (contype 1, conaffinity 0: no link-link
  contacts).  mu = 0.5,
{CONTACTS}

  Initial states (qpos = [x y z qw qx qy qz] of link 0, then one quaternion per ball joint):
    qpos0 (reset) : straight along +x, 5 cm above the floor, at rest (touchdown at {V_DROP:.4f} m/s).
    key "impact"  : straight along +x, 1e-4 m above the floor, falling at 1 m/s.
-->
"""
  write(name, model_xml(name, defaults, body(z0), plugin=plugin_block(), header=header, key=key))


# ------------------------------------------------------------------------------------ arm pushing a box
def arm_push():
  name = "arm_push"
  a = b = 0.3
  zs = 0.25                    # shoulder height
  px, pz = 0.4, 0.06 - zs      # end-effector target relative to the shoulder
  D = (px * px + pz * pz - a * a - b * b) / (2 * a * b)
  t2 = math.acos(D)
  t1 = math.atan2(px, pz) - math.atan2(b * math.sin(t2), a + b * math.cos(t2))
  rb, hb = 0.03, 0.05          # end-effector radius, box half size
  defaults = """\
    <geom condim="3" margin="0" gap="0.0025" friction="0.5 0.005 0.0001"/>
    <default class="link">
      <joint damping="0.2" armature="0.05"/>
      <geom type="capsule" density="1000" contype="0" conaffinity="0" rgba=".3 .5 .8 1"/>
    </default>
    <default class="ee">
      <geom type="sphere" density="2000" contype="1" conaffinity="0" rgba=".9 .1 .1 1"/>
    </default>
"""
  body = f"""    <geom name="pedestal" type="cylinder" pos="0 0 0.02" size="0.08 0.02" contype="0" conaffinity="0"/>
    <body name="link1" pos="0 0 0.04" gravcomp="1">
      <joint name="yaw" class="link" axis="0 0 1"/>
      <geom class="link" fromto="0 0 0 0 0 {num(zs - 0.04)}" size="0.04"/>
      <body name="link2" pos="0 0 {num(zs - 0.04)}" gravcomp="1">
        <joint name="shoulder" class="link" axis="0 1 0"/>
        <geom class="link" fromto="0 0 0 0 0 {a}" size="0.03"/>
        <body name="link3" pos="0 0 {a}" gravcomp="1">
          <joint name="elbow" class="link" axis="0 1 0" armature="0.02"/>
          <geom class="link" fromto="0 0 0 0 0 {b}" size="0.025"/>
          <geom name="ee" class="ee" pos="0 0 {b}" size="{rb}"/>
        </body>
      </body>
    </body>
    <body name="box" pos="0.4 0.2 {hb}">
      <freejoint name="box"/>
      <geom name="box" type="box" size="{hb} {hb} {hb}" mass="1" contype="1" conaffinity="1" rgba=".8 .6 .3 1"/>
    </body>
"""
  m, d = compile_xml(model_xml(name, defaults, body))
  qpos = m.qpos0.copy()
  qpos[1], qpos[2] = t1, t2
  d.qpos[:] = qpos
  mujoco.mj_forward(m, d)
  ee = d.geom_xpos[m.geom("ee").id].copy()
  # the box resting on the floor (bottom at the force threshold), EPS beyond the end effector in +y
  qpos[3:6] = [ee[0], ee[1] + rb + hb + EPS, hb]
  qvel = np.zeros(m.nv)
  qvel[0] = V0 / ee[0]         # yaw rate: the end effector moves at 1 m/s along +y, into the box
  key = (qpos, qvel)
  m, d = compile_xml(model_xml(name, defaults, body, key=key))
  arm = mass(m, "link1")
  ee_mass = m.geom_size[m.geom("ee").id][0] ** 3 * 4 / 3 * math.pi * 2000
  header = f"""<!--
  arm_push.xml: a three-link arm on a fixed base swings its sphere end effector at 1 m/s into a
  1 kg box resting on the floor.  Made by make_scenes.py in this directory (edit the script, not
  this file).

  What it shows: an impact on a body in resting contact: one approaching contact (end effector on
  the box's side, 1 cm above its centre) and the box's 4 resting floor corners, which take part in
  the event (5 contacts, 9 dofs).  The resting contacts shape the outcome, which is nearly
  unique here: the box tips about its far bottom edge (the near corners lift off, the far ones
  slide) and the end effector sticks to it (svi-sim seeds 1-8 but 6, and the simultaneous law);
  in seed 6 and the sequential law one far corner lifts too and the end effector slides.

  Model: yaw hinge (z) at the base, shoulder and elbow hinges (y); link 1 capsule 0.21 m, r 0.04 m
  (shoulder 0.25 m above the floor), links 2 and 3 capsules {a} m, r 0.03 and 0.025 m, density
  1000 kg/m^3; end effector sphere r {rb} m, density 2000 kg/m^3 ({ee_mass:.4f} kg); arm {arm:.4f} kg
  in all.  Every link is gravity-compensated (gravcomp 1), so the unactuated arm holds any pose;
  joint damping 0.2 N m s/rad, armature 0.05 (yaw, shoulder), 0.02 kg m^2 (elbow).  Box: cube of
  side 0.1 m, m = 1 kg on a free joint.  The pedestal is visual.
  Contacts: the end effector collides with the box only; the box with the floor and the end
  effector.  mu = 0.5,
{CONTACTS}

  Initial states (qpos = [yaw shoulder elbow], then the box's [x y z qw qx qy qz]):
    qpos0 (reset) : the arm upright, the box on the floor at (0.4, 0.2), everything at rest: a
                    static scene (the arm has no actuators).
    key "impact"  : shoulder {t1:.6f}, elbow {t2:.6f} rad put the end effector's centre at
                    ({px}, 0, 0.06) m; the box on the floor 1e-4 m beyond it in +y, at rest; yaw
                    rate {V0 / ee[0]:.4g} rad/s moves the end effector at 1 m/s along +y into the box.
-->
"""
  write(name, model_xml(name, defaults, body, plugin=plugin_block(), header=header, key=key))


# ------------------------------------------------------------------------------------ drops
def quat_mul(a, b):
  w1, x1, y1, z1 = a
  w2, x2, y2, z2 = b
  return [w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2, w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
          w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2, w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2]


def drops():
  name = "drops"
  # four stacks of two boxes, 0.5 m apart, each tilted about its own horizontal axis (rad)
  tilts = [(0.0, 0.0), (0.25, 0.0), (0.0, 0.35), (0.2, -0.3)]
  places = [(-0.25, -0.25), (0.25, -0.25), (-0.25, 0.25), (0.25, 0.25)]
  lo, hi = (0.08, 0.06, 0.04), (0.05, 0.05, 0.035)   # half-sizes, bottom and top box
  shift = (0.015, -0.01)                              # the top box's offset on the bottom one
  defaults = '    <geom condim="3" margin="0" gap="0.0025" friction="0.5 0.005 0.0001"/>\n'

  def body(qpos):
    """the boxes at qpos, DROP higher (qpos0)"""
    out = ""
    for g in range(4):
      for k, size in enumerate((lo, hi)):
        rgb = ".8 .6 .3 1" if k == 0 else ".4 .6 .8 1"
        a = 14 * g + 7 * k
        pos = qpos[a:a + 3] + np.array([0, 0, DROP])
        out += f"""    <body name="s{g}{'ab'[k]}" pos="{vec(pos, 8)}" quat="{vec(qpos[a + 3:a + 7], 10)}">
      <freejoint/>
      <geom name="s{g}{'ab'[k]}" type="box" size="{vec(size)}" density="600" rgba="{rgb}"/>
    </body>
"""
    return out

  level = np.tile([0, 0, 0.5, 1, 0, 0, 0], 8)
  m, d = compile_xml(model_xml(name, defaults, body(level)))
  qpos = m.qpos0.copy()
  for g, ((ax, ay), (x, y)) in enumerate(zip(tilts, places)):
    q = quat_mul([math.cos(ax / 2), math.sin(ax / 2), 0, 0], [math.cos(ay / 2), 0, math.sin(ay / 2), 0])
    R = np.zeros(9)
    mujoco.mju_quat2Mat(R, np.array(q))
    R = R.reshape(3, 3)
    top = R @ np.array([shift[0], shift[1], lo[2] + hi[2]])   # the top box's centre from the bottom's
    a, b = 14 * g, 14 * g + 7
    qpos[a:a + 3] = [x, y, 0.5]
    qpos[a + 3:a + 7] = q
    qpos[b:b + 3] = np.array([x, y, 0.5]) + top
    qpos[b + 3:b + 7] = q
  # every stack's lowest point EPS above the floor, moved as one (its two boxes keep touching)
  bottoms = [m.geom("s%da" % g).id for g in range(4)]
  for g in range(4):
    for _ in range(3):
      d.qpos[:] = qpos
      dz = floor_gap(m, d, [bottoms[g]]) - EPS
      qpos[14 * g + 2] -= dz
      qpos[14 * g + 9] -= dz
  qvel = np.zeros(m.nv)
  qvel[2::6] = -V0
  key = (qpos, qvel)
  m, d = compile_xml(model_xml(name, defaults, body(qpos), key=key))
  masses = [mass(m, "s0a"), mass(m, "s0b")]
  header = f"""<!--
  drops.xml: four stacks of two boxes, 0.5 m apart, land at once, each tilted its own way.
  Made by make_scenes.py in this directory (edit the script, not this file).

  What it shows: objects that land in the same step without touching each other.  They make one
  impact event (4 groups of trees, 8 boxes, 48 dofs), but no contact couples one stack to
  another, so under split = groups (the default) svi.impact samples each stack as its own problem,
  on its own random stream: a stack's outcome is the one it would get whatever else lands, and the
  event costs the sum of four small problems instead of one large one (docs/usage.md, "What an
  event costs").  split = off samples the event as one problem.

  Model: bottom boxes {2 * lo[0]} x {2 * lo[1]} x {2 * lo[2]} m ({masses[0]:.4f} kg), top boxes
  {2 * hi[0]} x {2 * hi[1]} x {2 * hi[2]} m ({masses[1]:.4f} kg), density 600 kg/m^3; each top box
  rests on its bottom box, {shift[0]} m, {shift[1]} m off centre.  Stack tilts (about x, then y, rad):
  {tilts[0]}, {tilts[1]}, {tilts[2]}, {tilts[3]}: one lands flat, one on an edge along x, one on an
  edge along y, one on a corner.
  Contacts: boxes collide with each other and the floor.  mu = 0.5,
{CONTACTS}

  Initial states (free joints, qpos = [x y z qw qx qy qz] per box: stack 0 bottom, top, stack 1 ...):
    qpos0 (reset) : the same poses 5 cm higher, at rest (touchdown at {V_DROP:.4f} m/s).
    key "impact"  : every stack's lowest point 1e-4 m above the floor, its top box resting on
                    its bottom box, all falling at 1 m/s.
-->
"""
  write(name, model_xml(name, defaults, body(qpos), plugin=plugin_block(), header=header, key=key))


def main():
  for scene in (quadruped, biped, box_edge, bin_pile, chain, arm_push, drops):
    scene()


if __name__ == "__main__":
  main()
