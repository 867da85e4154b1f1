"""preview_bench.py -- the cost of drawing many outcomes of one impact event from Python.

For the first impact event of every bundled model and scene: microseconds per seed of
  - one:      Impacts.preview(i, [seed]) called once per seed (the event detected, its problem
              set up and resolved for every seed: what one svi_event_preview costs),
  - preview:  Impacts.preview(i, seeds) for all the seeds at once (svi_event_preview_many: the
              event set up once; one Event record per seed),
  - outcomes: Impacts.outcomes(i, seeds) (the same outcomes as arrays),
each the fastest of 3 runs, checking that the three give the same qvel bit for bit; and
  - approximate: Impacts.approximate(i, samples) for 16 384 samples (as many as seeds on the large
              events), every core (Algorithm 2 on the event's problem: another sampler of the same
              set, svi-sample's; the event's set-up included).

  .venv/bin/python tests/bench/preview_bench.py [MODELS_DIR] [SEEDS]   (default models, 1000)
"""
import os
import sys
import time

import mujoco
import numpy as np

import svi


def first_event(path):
  m = mujoco.MjModel.from_xml_path(path)
  d = mujoco.MjData(m)
  k = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_KEY, "impact")
  if k < 0 and m.nkey > 0:
    k = 0
  if k >= 0:
    mujoco.mj_resetDataKeyframe(m, d, k)
  imp = svi.Impacts(m, d)
  while len(imp) == 0 and d.time < 3:
    mujoco.mj_step(m, d)
  return (m, d, imp) if len(imp) else None


def best(f, runs=3):
  t = []
  for _ in range(runs):
    t0 = time.perf_counter()
    r = f()
    t.append(time.perf_counter() - t0)
  return min(t), r


def main():
  models = sys.argv[1] if len(sys.argv) > 1 else "models"
  nseed = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
  svi.load()
  files = sorted(os.path.join(models, f) for f in os.listdir(models) if f.endswith(".xml"))
  scenes = os.path.join(models, "scenes")
  if os.path.isdir(scenes):
    files += sorted(os.path.join(scenes, f) for f in os.listdir(scenes) if f.endswith(".xml"))
  print(f"# Outcomes of one impact event from Python ({os.path.realpath(svi.library_path())}, MuJoCo {mujoco.__version__})\n")
  print("| model | contacts | seeds | one seed a call, us/seed | preview(seeds), us/seed | outcomes(seeds), us/seed "
        "| speed-up (outcomes) | distinct classes | approximate, us/sample |")
  print("|---|---|---|---|---|---|---|---|---|")
  for path in files:
    ev = first_event(path)
    if ev is None:
      continue
    m, d, imp = ev
    e = imp.event(0)
    n = nseed if e.ncontact < 20 else max(nseed // 50, 4)
    seeds = list(range(1000, 1000 + n))
    imp.preview(0, [1])   # the scratch data, once
    t1, q1 = best(lambda: np.array([imp.preview(0, [s])[0][0] for s in seeds]))
    t2, (q2, _) = best(lambda: imp.preview(0, seeds))
    t3, o = best(lambda: imp.outcomes(0, seeds))
    na = 16384 if e.ncontact < 20 else n
    t4, _ = best(lambda: imp.approximate(0, samples=na))
    same = np.array_equal(q1, q2) and np.array_equal(q2, o.qvel)
    if not same:
      sys.exit(f"{path}: the three paths differ")
    name = os.path.relpath(path, models)
    print(f"| {name} | {e.ncontact} | {n} | {t1 / n * 1e6:.1f} | {t2 / n * 1e6:.1f} | {t3 / n * 1e6:.1f} | "
          f"{t1 / t3:.1f}x | {len(set(o.contact_class))} | {t4 / na * 1e6:.2f} |")


if __name__ == "__main__":
  main()
