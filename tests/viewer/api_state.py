"""The state the plugin's API gives for a resample, as the viewer hashes it (tests/viewer).

    api_state.py MODEL.xml SEED LAW

Starts MODEL as svi-viewer does (keyframe 'impact', else the first keyframe, else qpos0), steps
with mujoco.mj_step until the first impact event, resamples it with SEED under LAW through the
svi module (svi_event_resample), and prints the FNV-1a hash of (qpos, qvel, time) that the viewer
prints as state=.  The viewer's clicks must land on exactly this state.
"""
import sys

import mujoco
import numpy as np

import svi


def fnv1a(*arrays):
  h = 1469598103934665603
  for a in arrays:
    for byte in a.tobytes():
      h = ((h ^ byte) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
  return h


def main():
  path, seed, law = sys.argv[1], int(sys.argv[2]), sys.argv[3]
  svi.load()
  m = mujoco.MjModel.from_xml_path(path)
  d = mujoco.MjData(m)
  key = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_KEY, "impact")
  if key < 0 and m.nkey > 0:
    key = 0
  if key >= 0:
    mujoco.mj_resetDataKeyframe(m, d, key)
  else:
    mujoco.mj_resetData(m, d)
  mujoco.mj_forward(m, d)
  imp = svi.Impacts(m, d)
  while len(imp) == 0 and d.time < 5:
    mujoco.mj_step(m, d)
  imp.resample(0, seed=seed, law=law)
  print(f"{fnv1a(d.qpos, d.qvel, np.array([d.time])):016x}")


if __name__ == "__main__":
  main()
