"""make_trex.py -- writes models/trex.xml, a planar tailed runner in the spirit of Seghete and Murphey's
TREX (Section VIII, Table I, initial design), posed so that the right foot and the tail tip touch the
floor at the same instant.

  .venv/bin/python models/make_trex.py > models/trex.xml

The pose is found with MuJoCo's kinematics: for the chosen leg angles, the body pitch at which the
right foot and the tail tip are at the same height (bisection), then the height at which both are
1e-4 m above the floor.
"""
import math

import mujoco

R1, R2 = 0.07, 0.04              # body radii, m (Table I, initial design)
LU, LL = 0.08, 0.10              # thigh and shank, m
RHO_BODY, RHO_LIMB, AREA = 1000.0, 2000.0, 1.25e-4   # kg/m^3, kg/m^3, m^2 (limb cross-section)
# tail length (paper's formula)
L_TAIL = (R1**3 + R1**2 * R2 + math.sqrt(2) * math.sqrt(R1**4 * R2**2 + R1**3 * R2**3)) / (R1**2 - R2**2) - (R1 + R2)
TAIL_ANGLE = -0.35               # tail below the body axis, rad (about -y, like every hinge here)
RFOOT = 0.005                    # foot and tail-tip collider radius
PHI_R, GAMMA_R = 0.35, -0.5      # right hip and knee (touchdown leg)
PHI_L, GAMMA_L = -0.6, -1.2      # left hip and knee (swing leg, raised)
GAP = 1e-4
V_DROP = math.sqrt(2 * 9.81 * 0.17)   # dropped from 17 cm

m1 = RHO_BODY * 4 / 3 * math.pi * R1**3
m2 = RHO_BODY * 4 / 3 * math.pi * R2**3
mu_, ml, mt = RHO_LIMB * AREA * LU, RHO_LIMB * AREA * LL, RHO_LIMB * AREA * L_TAIL
tx, tz = -math.cos(TAIL_ANGLE) * L_TAIL, math.sin(TAIL_ANGLE) * L_TAIL   # tail vector from the posterior centre


def leg(name, y, phi, gamma, rgba):
  return f"""
      <body name="{name}_thigh" pos="0 {y} 0">
        <joint name="hip_{name}" stiffness="40" damping="0.4" springref="{phi:.6f}"/>
        <geom class="limb" fromto="0 0 0 0 0 {-LU}" mass="{mu_:.6g}" rgba="{rgba}"/>
        <body name="{name}_shank" pos="0 0 {-LU}">
          <joint name="knee_{name}" stiffness="40" damping="0.4" springref="{gamma:.6f}"/>
          <geom class="limb" fromto="0 0 0 0 0 {-LL}" mass="{ml:.6g}" rgba="{rgba}"/>
          <geom name="foot_{name}" class="collider" pos="0 0 {-LL}"/>
        </body>
      </body>"""


def model(plugin=True, keys=""):
  ext = """
  <extension>
    <plugin plugin="svi.impact">
      <instance name="impacts">
        <config key="law" value="propagative"/>
        <config key="restitution" value="1"/>
      </instance>
    </plugin>
  </extension>
""" if plugin else ""
  return f"""<mujoco model="trex">
  <compiler angle="radian"/>
  <option timestep="0.0005" cone="elliptic"/>
{ext}
  <asset>
    <texture name="grid" type="2d" builtin="checker" rgb1=".2 .3 .4" rgb2=".3 .4 .5" width="256" height="256"/>
    <material name="grid" texture="grid" texrepeat="8 8" reflectance="0.1"/>
  </asset>

  <default>
    <geom condim="3" margin="0" gap="0.0025" friction="0.8 0.005 0.0001"/>
    <joint type="hinge" axis="0 -1 0"/>
    <default class="limb">
      <geom type="capsule" size="0.006" contype="0" conaffinity="0"/>
    </default>
    <default class="collider">
      <geom type="sphere" size="{RFOOT}" contype="1" conaffinity="0" mass="0" rgba=".9 .1 .1 1"/>
    </default>
  </default>

  <worldbody>
    <light pos="0 -1 2" dir="0 .5 -1"/>
    <geom name="floor" type="plane" size="2 2 0.1" material="grid" contype="0" conaffinity="1"/>
    <body name="body" pos="0 0 0.3">
      <joint name="x" type="slide" axis="1 0 0"/>
      <joint name="z" type="slide" axis="0 0 1"/>
      <joint name="pitch"/>
      <geom name="anterior" type="sphere" size="{R1}" mass="{m1:.6g}" contype="1" conaffinity="0" rgba=".3 .5 .8 1"/>
      <geom name="posterior" type="sphere" size="{R2}" pos="{-(R1 + R2)} 0 0" mass="{m2:.6g}" contype="1" conaffinity="0" rgba=".3 .5 .8 1"/>
      <geom name="tail" class="limb" fromto="{-(R1 + R2)} 0 0 {-(R1 + R2) + tx:.6f} 0 {tz:.6f}" mass="{mt:.6g}" rgba=".8 .6 .3 1"/>
      <geom name="tail_tip" class="collider" pos="{-(R1 + R2) + tx:.6f} 0 {tz:.6f}"/>{leg("R", 0.03, PHI_R, GAMMA_R, ".8 .6 .3 1")}{leg("L", -0.03, PHI_L, GAMMA_L, ".6 .5 .3 1")}
    </body>
  </worldbody>
{keys}</mujoco>
"""


def heights(m, d, pitch, z=0.3):
  d.qpos[:] = [0, z, pitch, PHI_R, GAMMA_R, PHI_L, GAMMA_L]
  mujoco.mj_kinematics(m, d)
  foot = d.geom_xpos[m.geom("foot_R").id][2] - RFOOT
  tail = d.geom_xpos[m.geom("tail_tip").id][2] - RFOOT
  swing = d.geom_xpos[m.geom("foot_L").id][2] - RFOOT
  return foot, tail, swing


def main():
  m = mujoco.MjModel.from_xml_string(model(plugin=False))
  d = mujoco.MjData(m)
  lo, hi = -0.6, 0.6          # pitch bracket: foot - tail changes sign
  f = lambda p: heights(m, d, p)[0] - heights(m, d, p)[1]
  assert f(lo) * f(hi) < 0, (f(lo), f(hi))
  for _ in range(200):
    mid = 0.5 * (lo + hi)
    if f(lo) * f(mid) <= 0: hi = mid
    else: lo = mid
  pitch = 0.5 * (lo + hi)
  foot, tail, swing = heights(m, d, pitch)
  z = 0.3 - foot + GAP
  foot, tail, swing = heights(m, d, pitch, z)
  assert abs(foot - tail) < 1e-12 and swing > 0.02, (foot, tail, swing)
  q = f"0 {z:.12f} {pitch:.12f} {PHI_R} {GAMMA_R} {PHI_L} {GAMMA_L}"
  qd = f"0.2 {z + 0.17:.12f} {pitch:.12f} {PHI_R} {GAMMA_R} {PHI_L} {GAMMA_L}"
  keys = f"""
  <keyframe>
    <key name="impact" qpos="{q}" qvel="0.2 {-V_DROP:.9f} 0 0 0 0 0"/>
    <key name="drop"   qpos="{qd}" qvel="0.2 0 0 0 0 0 0"/>
  </keyframe>
"""
  # the coupling of the two touchdown normals (what decides uniqueness: Theorem 3)
  d.qpos[:] = [float(x) for x in q.split()]
  mujoco.mj_forward(m, d)
  header = f"""<!--
  trex.xml: a planar tailed runner in the spirit of Seghete and Murphey's TREX (Section VIII, Table I,
  initial design), landing on its right foot and its tail tip at the same instant.  Made by
  models/make_trex.py (the pose is solved with MuJoCo's kinematics).

  What it shows: a legged robot's simultaneous touchdown with restitution (propagative law, e = 1).
  The two contact normals are coupled in the kinetic-energy metric, so the outcome depends on which
  contact is resolved first: svi-sample --model models/trex.xml lists the outcomes and their
  indeterminacy xi; resampling the event switches between them.  The paper's point is that a design
  can make the normals orthogonal, and then the outcome is unique (billiard_break.xml, theta90, shows
  the same effect on three balls).

  Model (SI units; body density 1000 kg/m^3, limbs 2000 kg/m^3 with 1.25 cm^2 cross-section):
    body: anterior sphere r1 = {R1} m ({m1:.4f} kg) with the hips at its centre, posterior sphere
          r2 = {R2} m ({m2:.4f} kg) rigidly behind it (the paper's body joint is left out);
    tail: rigid, L = {L_TAIL:.4f} m (the paper's formula), {-TAIL_ANGLE} rad below the body axis;
    legs: thigh {LU} m, shank {LL} m, hips and knees held by springs (40 N m/rad, 0.4 N m s/rad) at the
          pose below (no controller; the paper's PD hips and its spring constants are not given).
  Colliders: 5 mm spheres at the feet and the tail tip, and the two body spheres.  mu = 0.8 (the
  law is frictionless: friction is MuJoCo's, after the impact).  gap = 2.5 mm per geom.
  Pose: right hip {PHI_R}, right knee {GAMMA_R}; left (swing) hip {PHI_L}, knee {GAMMA_L} rad; body pitch
  {pitch:.6f} rad makes the right foot and the tail tip equally high.
  Initial states:
    key "impact" : both 1e-4 m above the floor, falling at sqrt(2 g 0.17 m) = {V_DROP:.4f} m/s, 0.2 m/s forward.
    key "drop"   : the same pose 17 cm higher, at rest but for 0.2 m/s forward.
-->
"""
  print(header + model(plugin=True, keys=keys), end="")


if __name__ == "__main__":
  main()
