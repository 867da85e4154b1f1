"""impacts.py -- svi from Python: a box slides into a wall (the paper's box-and-wall example), the
impact is resolved inside plain mujoco.mj_step, and its outcome is resampled.

  .venv/bin/python python/examples/impacts.py [models/box_wall.xml]

Prints the first impact event, ten resampled outcomes (each a possible outcome of the same impact),
the classes of 4000 more (Impacts.outcomes),
the simultaneous law's outcome, and what native MuJoCo (the model without the plugin) does from the
same state.
"""
import os
import sys

import mujoco
import numpy as np

import svi

HERE = os.path.dirname(os.path.abspath(__file__))
path = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "..", "..", "models", "box_wall.xml")

svi.load()
m = mujoco.MjModel.from_xml_path(path)
d = mujoco.MjData(m)
if m.nkey:
  mujoco.mj_resetDataKeyframe(m, d, 0)
imp = svi.Impacts(m, d)
while len(imp) == 0 and d.time < 5:
  mujoco.mj_step(m, d)
if len(imp) == 0:
  sys.exit(f"{path}: no impact in 5 s")

e = imp.event(0)
names = [mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_GEOM, int(g)) or str(g) for g in e.geom2]
print(f"{os.path.basename(path)}: impact at t = {e.time:.4f} s, {e.ncontact} contacts {names}, law {e.law}")
print(f"  before: J_n v = {np.round(e.vn_before, 4)} m/s, KE {e.ke_before:.4f} J")
print(f"  after : J_n v = {np.round(e.vn_after, 4)} m/s, KE {e.ke_after:.4f} J, class {e.contact_class}")

print("resampled outcomes of the same impact (seed: class, J_n v+):")
for seed in range(2, 12):
  r = imp.resample(0, seed=seed)
  print(f"  {seed:3d}: {r.contact_class}  {np.round(r.vn_after, 4)}")
o = imp.outcomes(0, seeds=range(1000, 5000))   # 4000 outcomes, the event set up once
classes = {}
for c in o.contact_class:
  classes[c] = classes.get(c, 0) + 1
print("  classes over 4000 previewed seeds:", dict(sorted(classes.items(), key=lambda kv: -kv[1])))
print(f"  their J_n v+ spans {np.round(o.vn_after.min(axis=0), 4) + 0.0} .. {np.round(o.vn_after.max(axis=0), 4) + 0.0} m/s, "
      f"KE after {o.ke_after.min():.4f} .. {o.ke_after.max():.4f} J (before {o.ke_before:.4f})")
r = imp.resample(0, law="simultaneous")
print(f"  simultaneous law (Anitescu-Potra): {r.contact_class}  {np.round(r.vn_after, 4)}")

# native MuJoCo from the same pre-impact state: the same model without the plugin
spec = mujoco.MjSpec.from_file(path)
for p in list(spec.plugins):
  spec.delete(p)
mn = spec.compile()
dn = mujoco.MjData(mn)
imp.restore(0)
sig = int(mujoco.mjtState.mjSTATE_INTEGRATION) & ~int(mujoco.mjtState.mjSTATE_PLUGIN)
state = np.zeros(mujoco.mj_stateSize(m, sig))
mujoco.mj_getState(m, d, state, sig)
mujoco.mj_setState(mn, dn, state, sig)
mujoco.mj_forward(m, d)                     # d: event 0 resolved again (seed of the model)
Jn = imp.problem(0)["Jn"]
for _ in range(20):                         # 20 ms of MuJoCo's soft contact
  mujoco.mj_step(mn, dn)
print(f"native MuJoCo, 20 ms after the same state: J_n v = {np.round(Jn @ dn.qvel, 4)} m/s")
