"""plot_scaling.py -- the figure of docs/benchmarks.md: one impact event against its contacts.

Reads the markdown tables C (a plate landing on N supports: one body; a two-legged robot landing on
feet of K x K points: 18 dofs in a tree; an articulated chain of K links landing flat: 6 + 2 (K - 1)
dofs in a tree) and E (a box dropped on a stack of K boxes, a mesh cube landing on a pile of mesh
cubes: many bodies) that `svi-bench-plugin models --only=CE` prints, and draws the
impact step's and the native mj_step's microseconds against the contacts in the event, both axes
logarithmic, with the issue's bound (5x native) as a dashed band over the native steps.  Writes
SVG by hand (no plotting package: the project's Python needs only mujoco and numpy).

  ./build/svi-bench-plugin models --only=CE | .venv/bin/python tests/bench/plot_scaling.py docs/img/scaling.svg
"""
import math
import sys


def tables(lines):
  """the rows of tables C (plate, legged robot, chain) and E (tower, mesh pile): lists of (contacts,
  impact us, native us)"""
  out, cur = {}, None
  for line in lines:
    cells = [c.strip() for c in line.strip().strip("|").split("|")]
    if not line.startswith("|") or len(cells) < 6:
      cur = None
      continue
    if cells[0] in ("supports", "boxes", "K", "links", "G x G x L"):
      cur = out.setdefault(cells[0], [])
      head = cells
      continue
    if cur is None or cells[0].startswith("---"):
      continue
    try:
      row = dict(zip(head, cells))
      cur.append((float(row["contacts in the event"]), float(row["impact step us"]),
                  float(row["native mj_step us"])))
    except (KeyError, ValueError):
      pass
  return (out.get("supports", []), out.get("K", []), out.get("links", []), out.get("boxes", []),
          sorted(out.get("G x G x L", [])))


def fit(points):
  """least-squares slope of log y on log x"""
  xs = [math.log(x) for x, _ in points]
  ys = [math.log(y) for _, y in points]
  mx, my = sum(xs) / len(xs), sum(ys) / len(ys)
  sxx = sum((x - mx) ** 2 for x in xs)
  return sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx if sxx > 0 else float("nan")


def svg(plate, legs, chain, tower, mesh, path):
  W, H, L, R, T, B = 760, 600, 78, 200, 40, 58
  series = [
      ("plate, impact step", "#1f5fbf", "", [(c, i) for c, i, _ in plate]),
      ("plate, native mj_step", "#1f5fbf", "6,4", [(c, n) for c, _, n in plate]),
      ("legged robot, impact step", "#2e8b57", "", [(c, i) for c, i, _ in legs]),
      ("legged robot, native", "#2e8b57", "6,4", [(c, n) for c, _, n in legs]),
      ("chain, impact step", "#7d3c98", "", [(c, i) for c, i, _ in chain]),
      ("chain, native mj_step", "#7d3c98", "6,4", [(c, n) for c, _, n in chain]),
      ("tower, impact step", "#c0392b", "", [(c, i) for c, i, _ in tower]),
      ("tower, native mj_step", "#c0392b", "6,4", [(c, n) for c, _, n in tower]),
      ("mesh pile, impact step", "#d68910", "", [(c, i) for c, i, _ in mesh]),
      ("mesh pile, native", "#d68910", "6,4", [(c, n) for c, _, n in mesh]),
  ]
  pts = [p for s in series for p in s[3]]
  if not pts:
    sys.exit("plot_scaling: no rows of table C or E on stdin")
  x0, x1 = math.log10(min(p[0] for p in pts)), math.log10(max(p[0] for p in pts))
  y0, y1 = math.log10(min(p[1] for p in pts)), math.log10(max(p[1] for p in pts))
  x0, x1 = math.floor(x0 * 2) / 2, math.ceil(x1 * 2) / 2
  y0, y1 = math.floor(y0), math.ceil(y1)

  def px(x):
    return L + (math.log10(x) - x0) / (x1 - x0) * (W - L - R)

  def py(y):
    return H - B - (math.log10(y) - y0) / (y1 - y0) * (H - T - B)

  o = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" '
       f'font-size="13">', f'<rect width="{W}" height="{H}" fill="white"/>']
  for e in range(int(y0), int(y1) + 1):   # decades of microseconds
    y = py(10 ** e)
    o.append(f'<line x1="{L}" y1="{y:.1f}" x2="{W - R}" y2="{y:.1f}" stroke="#ddd"/>')
    label = {0: "1 µs", 1: "10 µs", 2: "100 µs", 3: "1 ms", 4: "10 ms", 5: "100 ms", 6: "1 s"}.get(e, f"1e{e} µs")
    o.append(f'<text x="{L - 6}" y="{y + 4:.1f}" text-anchor="end">{label}</text>')
  for c in (1, 2, 5, 10, 20, 50, 100, 200, 500):
    if x0 <= math.log10(c) <= x1:
      x = px(c)
      o.append(f'<line x1="{x:.1f}" y1="{T}" x2="{x:.1f}" y2="{H - B}" stroke="#ddd"/>')
      o.append(f'<text x="{x:.1f}" y="{H - B + 18}" text-anchor="middle">{c}</text>')
  o.append(f'<rect x="{L}" y="{T}" width="{W - L - R}" height="{H - T - B}" fill="none" stroke="#444"/>')
  o.append(f'<text x="{(L + W - R) / 2:.0f}" y="{H - 16}" text-anchor="middle">contacts in the impact event</text>')
  o.append(f'<text x="{(L + W - R) / 2:.0f}" y="{T - 14}" text-anchor="middle">one impact step against '
           f'a native mj_step from the same state</text>')
  # the bound: 5x the plate's native step
  band = [(c, 5 * n) for c, _, n in plate]
  if band:
    d = " ".join(f"{px(c):.1f},{py(v):.1f}" for c, v in band)
    o.append(f'<polyline points="{d}" fill="none" stroke="#1f5fbf" stroke-opacity="0.35" '
             f'stroke-width="7"/>')
  ly = T + 12
  for name, color, dash, s in series:
    if not s:
      continue
    d = " ".join(f"{px(c):.1f},{py(v):.1f}" for c, v in s)
    da = f' stroke-dasharray="{dash}"' if dash else ""
    o.append(f'<polyline points="{d}" fill="none" stroke="{color}" stroke-width="2"{da}/>')
    for c, v in s:
      o.append(f'<circle cx="{px(c):.1f}" cy="{py(v):.1f}" r="3" fill="{color}"/>')
    big = [p for p in s if p[0] >= 9]
    slope = (f'∝ N<tspan baseline-shift="super" font-size="9">{fit(big):.2f}</tspan> (N ≥ 9)'
             if len(big) >= 2 else "")
    o.append(f'<line x1="{W - R + 12}" y1="{ly}" x2="{W - R + 40}" y2="{ly}" stroke="{color}" '
             f'stroke-width="2"{da}/>')
    o.append(f'<text x="{W - R + 46}" y="{ly + 4}" font-size="11">{name}</text>')
    o.append(f'<text x="{W - R + 46}" y="{ly + 18}" font-size="11" fill="#555">{slope}</text>')
    ly += 38
  o.append(f'<line x1="{W - R + 12}" y1="{ly}" x2="{W - R + 40}" y2="{ly}" stroke="#1f5fbf" '
           f'stroke-opacity="0.35" stroke-width="7"/>')
  o.append(f'<text x="{W - R + 46}" y="{ly + 4}" font-size="11">5x the plate\'s native</text>')
  o.append(f'<text x="{W - R + 46}" y="{ly + 18}" font-size="11" fill="#555">(issue 11\'s bound)</text>')
  o.append("</svg>")
  with open(path, "w") as f:
    f.write("\n".join(o) + "\n")


def main():
  if len(sys.argv) != 2:
    sys.exit(__doc__)
  plate, legs, chain, tower, mesh = tables(sys.stdin)
  svg(plate, legs, chain, tower, mesh, sys.argv[1])
  for name, rows in (("plate", plate), ("legged robot", legs), ("chain", chain), ("tower", tower),
                     ("mesh pile", mesh)):
    big = [(c, i) for c, i, _ in rows if c >= 9]
    nat = [(c, n) for c, _, n in rows if c >= 9]
    if len(big) >= 2:
      print(f"{name}: {len(rows)} rows, impact step ~N^{fit(big):.2f}, native ~N^{fit(nat):.2f}")


if __name__ == "__main__":
  main()
