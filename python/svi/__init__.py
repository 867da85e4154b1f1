"""svi: set-valued impacts for MuJoCo, from Python.

The impact law runs inside MuJoCo: once the plugin library is loaded, a model that declares
``svi.impact`` (``<extension><plugin plugin="svi.impact">...``) resolves its impacts in plain
``mujoco.mj_step``.  This module loads the library and reaches the event log, resampling and the
set preview of an ``MjData`` through ``ctypes`` on the library's C API (include/svi/svi_mujoco.h);
no compiled extension is involved::

    import mujoco, svi
    svi.load()                                    # mujoco.mj_loadPluginLibrary + ctypes
    m = mujoco.MjModel.from_xml_path("models/rocking_block.xml")
    d = mujoco.MjData(m)
    mujoco.mj_resetDataKeyframe(m, d, m.key("impact").id)
    while d.time < 0.5:
        mujoco.mj_step(m, d)
    imp = svi.Impacts(m, d)
    print(imp.events[0])                          # the first impact event
    imp.resample(0, seed=7)                       # d is now at event 0's new outcome
    o = imp.outcomes(0, range(1000))              # 1000 seeds' outcomes (what resample would give)
    a = imp.approximate(0, samples=16384)         # the post-impact set by Algorithm 2
    imp.restore(0)                                # d is back before the impact

The library must be the one built against the same ``libmujoco`` the ``mujoco`` package loads
(CMake links the wheel's library; ``svi.load`` checks that the plugin registered where
``mujoco`` looks).
"""

import ctypes
import dataclasses
import os
from typing import List, Optional, Sequence

import mujoco
import numpy as np

__all__ = ["load", "library_path", "stream_index", "Impacts", "Event", "Outcomes", "ApproxSet", "LAWS", "PLUGIN_NAME"]

PLUGIN_NAME = "svi.impact"
LAWS = ("setvalued", "simultaneous", "sequential", "native", "propagative")
_MAXC = 16  # SVI_EVENT_MAX_CONTACTS


class _Event(ctypes.Structure):
  _fields_ = [
      ("index", ctypes.c_int),
      ("time", ctypes.c_double),
      ("ncontact", ctypes.c_int),
      ("napproach", ctypes.c_int),
      ("geom1", ctypes.c_int * _MAXC),
      ("geom2", ctypes.c_int * _MAXC),
      ("pos", (ctypes.c_double * 3) * _MAXC),
      ("normal", (ctypes.c_double * 3) * _MAXC),
      ("vn_before", ctypes.c_double * _MAXC),
      ("vn_after", ctypes.c_double * _MAXC),
      ("impulse", (ctypes.c_double * 3) * _MAXC),
      ("kept", ctypes.c_int * _MAXC),
      ("law", ctypes.c_int),
      ("seed", ctypes.c_uint64),
      ("lcps", ctypes.c_int),
      ("steps", ctypes.c_int),
      ("fallback", ctypes.c_int),
      ("status", ctypes.c_int),
      ("ke_before", ctypes.c_double),
      ("ke_after", ctypes.c_double),
      ("impulse_normal", ctypes.c_double),
      ("native_impulse", ctypes.c_double),
      ("nt", ctypes.c_int),
      ("nkept", ctypes.c_int),
      ("cls", ctypes.c_char * (_MAXC + 1)),
      ("slot", ctypes.c_int),
  ]


class _Counters(ctypes.Structure):
  _fields_ = [(name, ctypes.c_longlong) for name in (
      "steps", "events", "lcps", "fallbacks", "native_steps", "resets", "unsupported",
      "touch_overflow", "pseudo_ambiguous", "pseudo_demoted", "finished_ap")] + [
          ("max_energy_ratio", ctypes.c_double)]


class _ApproxStats(ctypes.Structure):
  _fields_ = [(name, ctypes.c_longlong) for name in (
      "samples", "accepted", "finished_by_ap", "failed", "lcps", "colliding", "rejected", "limit_refused",
      "lcp_rejects", "step_retries", "sample_retries")] + [(name, ctypes.c_double) for name in (
      "psi", "eps", "h", "max_residual", "max_energy_ratio", "wall_seconds")]


class _ProblemDef(ctypes.Structure):
  _fields_ = [("nv", ctypes.c_int), ("nc", ctypes.c_int), ("nt", ctypes.c_int)] + [
      (name, ctypes.POINTER(ctypes.c_double)) for name in ("M", "Jn", "Jt", "mu", "v")]


@dataclasses.dataclass(frozen=True)
class Event:
  """One impact event of the log (svi_event in include/svi/svi_mujoco.h).

  Per-contact arrays cover the first 16 contacts of the event.  Velocities in m/s, impulses in
  N s, energies in J; ``contact_class`` has one letter per contact: S stick, L lift-off, D slide.
  """
  index: int
  time: float
  law: str
  seed: int
  ncontact: int
  napproach: int
  geom1: np.ndarray
  geom2: np.ndarray
  pos: np.ndarray
  normal: np.ndarray
  vn_before: np.ndarray
  vn_after: np.ndarray
  impulse: np.ndarray
  kept: np.ndarray
  contact_class: str
  lcps: int
  steps: int
  fallback: int
  status: int
  ke_before: float
  ke_after: float
  impulse_normal: float
  native_impulse: float

  @classmethod
  def _from_c(cls, e: _Event) -> "Event":
    """One record of the library's (a copy: the log's ring overwrites its slots), by _event_of."""
    return _event_of(_columns(np.frombuffer(bytes(e), dtype=_record_dtype(), count=1)), 0)


_RECORD_DTYPE = None


def _record_dtype() -> np.dtype:
  """svi_event as a numpy structured dtype (the ctypes layout: offsets and size), made once."""
  global _RECORD_DTYPE
  if _RECORD_DTYPE is not None:
    return _RECORD_DTYPE
  base = {ctypes.c_int: np.int32, ctypes.c_double: np.float64, ctypes.c_uint64: np.uint64, ctypes.c_char: np.bytes_}
  names, formats, offsets = [], [], []
  for name, ct in _Event._fields_:
    shape = []
    while hasattr(ct, "_length_"):
      shape.append(ct._length_)
      ct = ct._type_
    names.append(name)
    offsets.append(getattr(_Event, name).offset)
    if ct is ctypes.c_char:
      formats.append(f"S{shape[0]}")
    else:
      formats.append((base[ct], tuple(shape)) if shape else base[ct])
  _RECORD_DTYPE = np.dtype({"names": names, "formats": formats, "offsets": offsets, "itemsize": ctypes.sizeof(_Event)})
  return _RECORD_DTYPE


def _columns(a: np.ndarray) -> dict:
  """The fields of svi_event records (a numpy array of _record_dtype) as columns: scalars as
  Python lists, per-contact arrays as n x 16 (x 3) numpy views of the records, cls as a list of
  str."""
  cols = {}
  for name in a.dtype.names:
    col = a[name]
    if name == "cls":   # NUL-terminated: numpy's S dtype drops the trailing NULs
      cols[name] = [x.decode() for x in col.tolist()]
    else:
      cols[name] = col if col.ndim > 1 else col.tolist()
  return cols


def _event_of(c: dict, k: int) -> "Event":
  """Record k of _columns' output as an Event (the arrays are views of the columns)."""
  n = min(c["ncontact"][k], _MAXC)
  law = c["law"][k]
  return Event(
      index=c["index"][k], time=c["time"][k], law=LAWS[law] if 0 <= law < len(LAWS) else "?",
      seed=c["seed"][k], ncontact=c["ncontact"][k], napproach=c["napproach"][k],
      geom1=c["geom1"][k, :n].astype(int), geom2=c["geom2"][k, :n].astype(int), pos=c["pos"][k, :n],
      normal=c["normal"][k, :n], vn_before=c["vn_before"][k, :n], vn_after=c["vn_after"][k, :n],
      impulse=c["impulse"][k, :n], kept=c["kept"][k, :n].astype(int), contact_class=c["cls"][k],
      lcps=c["lcps"][k], steps=c["steps"][k], fallback=c["fallback"][k], status=c["status"][k],
      ke_before=c["ke_before"][k], ke_after=c["ke_after"][k], impulse_normal=c["impulse_normal"][k],
      native_impulse=c["native_impulse"][k])


@dataclasses.dataclass(frozen=True)
class Outcomes:
  """Outcomes of one event for n seeds (Impacts.outcomes), as arrays; row k is seeds[k]'s.

  Per-contact columns cover the event's first 16 contacts (nc of them, in the order of the
  Event's geom1/geom2/pos/normal).  ``qvel`` is the model's whole post-impact velocity (n x nv);
  ``impulse[k, c]`` is contact c's impulse in N s in MuJoCo's contact frame: (normal, t1, t2);
  ``fallback`` 0 is the law's own outcome, 1 finished by the simultaneous law (31), 2 the
  simultaneous law instead, 3 left to MuJoCo (svi_event.fallback).  Under the native law nothing
  is resolved here (MuJoCo's solver does it in the step): ``qvel`` is the pre-impact velocity,
  ``vn_after`` and ``ke_after`` are NaN and ``contact_class`` is '-' per contact.
  """
  seeds: np.ndarray
  qvel: np.ndarray
  contact_class: List[str]
  vn_after: np.ndarray
  impulse: np.ndarray
  kept: np.ndarray
  ke_after: np.ndarray
  fallback: np.ndarray
  status: np.ndarray
  lcps: np.ndarray
  steps: np.ndarray
  vn_before: np.ndarray
  ke_before: float
  law: str

  def __len__(self) -> int:
    return len(self.seeds)


@dataclasses.dataclass(frozen=True)
class ApproxSet:
  """The post-impact set of one event by Algorithm 2 (Impacts.approximate): row k is sample k.

  ``qvel`` is the model's whole post-impact velocity (samples x nv); ``accepted`` marks the samples
  in the set (no contact approaching after the final step, every check passed); ``vn_after`` is
  J_n qvel (samples x nc, every contact of the event), ``ke_after`` the kinetic energy 1/2 v'M v;
  ``stats`` the counts of svi_approx_stats (lcps, colliding, rejected, max_energy_ratio, ...).
  """
  qvel: np.ndarray
  accepted: np.ndarray
  vn_before: np.ndarray
  vn_after: np.ndarray
  ke_before: float
  ke_after: np.ndarray
  seed: int
  stats: dict

  def __len__(self) -> int:
    return len(self.accepted)


_lib = None
_lib_path = None


def library_path() -> str:
  """Where libsvi_impact.so is: $SVI_LIBRARY, else the build tree next to this package."""
  env = os.environ.get("SVI_LIBRARY")
  if env:
    return env
  here = os.path.dirname(os.path.abspath(__file__))
  return os.path.join(here, "..", "..", "build", "plugins", "libsvi_impact.so")


def stream_index(model: mujoco.MjModel, spec: int = mujoco.mjtState.mjSTATE_FULLPHYSICS) -> int:
  """The position of the run's stream (Impacts.stream) in a state vector of `spec` (mj_getState,
  mujoco.rollout's initial_state): set it per row to give each rollout its own outcomes, e.g.
  ``x0[:, svi.stream_index(m)] = np.arange(1, n + 1)``.  ValueError if spec holds no plugin state
  or the model declares no svi.impact."""
  lib = load()
  k = lib.svi_state_stream_index(model._address)
  if k < 0:
    raise ValueError(f"svi: the model declares no {PLUGIN_NAME} instance")
  d = mujoco.MjData(model)
  sentinel = 2.0**53 - 1   # no other state entry holds it: plugin_state is zero at mj_makeData
  d.plugin_state[k] = sentinel
  state = np.empty(mujoco.mj_stateSize(model, int(spec)))
  mujoco.mj_getState(model, d, state, int(spec))
  where = np.flatnonzero(state == sentinel)
  if len(where) != 1:
    raise ValueError("svi: this state spec holds no plugin state (use mjSTATE_FULLPHYSICS or add mjSTATE_PLUGIN)")
  return int(where[0])


def load(path: Optional[str] = None) -> ctypes.CDLL:
  """Loads the plugin library into MuJoCo (mj_loadPluginLibrary) and binds its C API."""
  global _lib, _lib_path
  path = os.path.abspath(path or library_path())
  if _lib is not None:
    if path != _lib_path:
      raise RuntimeError(f"svi: {_lib_path} is loaded already; cannot also load {path}")
    return _lib
  if not os.path.exists(path):
    raise FileNotFoundError(
        f"svi: no plugin library at {path}: build it (./scripts/run-example.sh) or set SVI_LIBRARY")
  mujoco.mj_loadPluginLibrary(path)
  lib = ctypes.CDLL(path)
  vp, i, d, u64 = ctypes.c_void_p, ctypes.c_int, ctypes.c_double, ctypes.c_uint64
  sig = {
      "svi_instance_of": (vp, [vp, vp]),
      "svi_event_count": (i, [vp]),
      "svi_event_get": (ctypes.POINTER(_Event), [vp, i]),
      "svi_event_restore": (i, [vp, vp, vp, i]),
      "svi_event_resample": (i, [vp, vp, vp, i, u64, i]),
      "svi_event_preview": (i, [vp, vp, vp, i, u64, i, ctypes.POINTER(d)]),
      "svi_last_preview": (ctypes.POINTER(_Event), [vp]),
      "svi_event_preview_many": (i, [vp, vp, vp, i, ctypes.POINTER(u64), i, i, ctypes.POINTER(d),
                                     ctypes.POINTER(_Event)]),
      "svi_event_problem": (i, [vp, vp, vp, i, ctypes.POINTER(_ProblemDef)]),
      "svi_set_law": (None, [vp, i]),
      "svi_set_seed": (None, [vp, u64]),
      "svi_state_stream_index": (i, [vp]),
      "svi_current_law": (i, [vp]),
      "svi_set_log_capacity": (i, [vp, vp, i]),
      "svi_instance_counters": (_Counters, [vp]),
      "svi_instance_message": (ctypes.c_char_p, [vp]),
      "svi_event_size": (ctypes.c_size_t, []),
      "svi_approx_stats_size": (ctypes.c_size_t, []),
      "svi_event_approximate": (i, [vp, vp, vp, i, ctypes.c_longlong, i, u64, ctypes.POINTER(d),
                                    ctypes.POINTER(ctypes.c_ubyte), ctypes.POINTER(_ApproxStats)]),
      "svi_status_string": (ctypes.c_char_p, [i]),
  }
  for name, (res, args) in sig.items():
    fn = getattr(lib, name)
    fn.restype = res
    fn.argtypes = args
  if lib.svi_event_size() != ctypes.sizeof(_Event) or lib.svi_approx_stats_size() != ctypes.sizeof(_ApproxStats):
    raise RuntimeError(f"svi: {path} has svi_event of {lib.svi_event_size()} bytes and svi_approx_stats of "
                       f"{lib.svi_approx_stats_size()}, this module expects {ctypes.sizeof(_Event)} and "
                       f"{ctypes.sizeof(_ApproxStats)}: library and module differ in version")
  # the plugin must have registered in the libmujoco that this mujoco package uses
  probe = mujoco.MjSpec.from_string(
      '<mujoco><extension><plugin plugin="svi.impact"><instance name="p"/></plugin></extension>'
      '<worldbody/></mujoco>')
  try:
    probe.compile()
  except Exception as e:  # pylint: disable=broad-except
    raise RuntimeError(
        f"svi: {path} did not register {PLUGIN_NAME} in the MuJoCo that Python uses "
        f"(a second libmujoco?): {e}") from e
  _lib, _lib_path = lib, path
  return lib


def _seed(seed) -> int:
  """A seed as the C API takes it: an integer in [0, 2**64)."""
  if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)):
    raise TypeError(f"svi: seed must be an integer, not {seed!r}")
  if not 0 <= int(seed) < 2**64:
    raise ValueError(f"svi: seed must be in [0, 2**64), not {seed}")
  return int(seed)


def _count(x, name: str, least: int) -> int:
  """An integer argument >= least (not a float, which would be truncated, nor a bool)."""
  if isinstance(x, bool) or not isinstance(x, (int, np.integer)):
    raise TypeError(f"svi: {name} must be an integer, not {x!r}")
  if int(x) < least:
    raise ValueError(f"svi: {name} must be >= {least}, not {x}")
  return int(x)


def _seeds(seeds) -> list:
  """A sequence of seeds (a range, a list, a numpy array) as C API seeds."""
  if isinstance(seeds, (str, bytes)) or not hasattr(seeds, "__iter__"):
    raise TypeError(f"svi: seeds must be a sequence of integers (e.g. range(100)), not {seeds!r}")
  return [_seed(s) for s in seeds]


def _law(law) -> int:
  if isinstance(law, str):
    if law not in LAWS:
      raise ValueError(f"svi: law must be one of {', '.join(LAWS)}, not {law!r}")
    return LAWS.index(law)
  if not 0 <= int(law) < len(LAWS):
    raise ValueError(f"svi: law must be 0..{len(LAWS) - 1}, not {law!r}")
  return int(law)


class Impacts:
  """The svi.impact instance of one MjData: its event log, resampling and the set preview."""

  def __init__(self, model: mujoco.MjModel, data: mujoco.MjData):
    lib = load()
    self._lib, self.model, self.data = lib, model, data
    self._in = lib.svi_instance_of(model._address, data._address)
    if not self._in:
      raise ValueError(f"svi: the model declares no {PLUGIN_NAME} instance")
    self._scratch = None

  # --- the log ---------------------------------------------------------------------------------
  def __len__(self) -> int:
    """The number of events in the log (the newest log_events; counters['events'] counts all)."""
    return self._lib.svi_event_count(self._in)

  def event(self, i: int) -> Event:
    return Event._from_c(self._lib.svi_event_get(self._in, self._index(i)).contents)

  def contact_names(self, i: int) -> List[str]:
    """Event i's contacts as "geom1/geom2" by MuJoCo's geom names (the id where a geom has no
    name), in the order of the Event's and Outcomes' per-contact columns."""
    e = self.event(i)
    name = lambda g: mujoco.mj_id2name(self.model, mujoco.mjtObj.mjOBJ_GEOM, int(g)) or str(int(g))
    return [f"{name(a)}/{name(b)}" for a, b in zip(e.geom1, e.geom2)]

  @property
  def events(self) -> List[Event]:
    return [self.event(i) for i in range(len(self))]

  def set_log_capacity(self, n: int) -> None:
    st = self._lib.svi_set_log_capacity(self._in, self.model._address, int(n))
    if st < 0:
      raise ValueError(f"svi: log capacity {n}: {self._lib.svi_status_string(st).decode()}")

  # --- resample, restore, preview -------------------------------------------------------------
  def restore(self, i: int) -> None:
    """Sets data to the state at the start of event i's impact step and drops events i, i+1, ..."""
    i = self._index(i)
    st = self._lib.svi_event_restore(self._in, self.model._address, self.data._address, i)
    self._check(st, "restore")

  def resample(self, i: int = -1, seed: Optional[int] = None, law=None) -> Event:
    """Re-runs event i with another seed and/or law; data is left at its new post-impact state
    (after mj_forward) and the run continues from there with mujoco.mj_step."""
    i = self._index(i)
    e = self.event(i)
    seed = (e.seed + 1) % 2**64 if seed is None else _seed(seed)
    law = _law(law if law is not None else e.law)
    st = self._lib.svi_event_resample(self._in, self.model._address, self.data._address, i,
                                      seed, law)
    self._check(st, "resample")
    return self.event(-1)

  _CHUNK = 4096   # seeds a svi_event_preview_many call: the records' buffer stays under 8 MB

  def _preview_many(self, i: int, seeds: Sequence[int], law):
    """svi_event_preview_many over the seeds, _CHUNK at a time: (qvel n x nv, the seeds, the
    records' columns of each chunk, law)."""
    i = self._index(i)
    law = _law(law) if law is not None else self._lib.svi_event_get(self._in, i).contents.law
    seeds = _seeds(seeds)
    n, nv = len(seeds), self.model.nv
    out = np.zeros((n, nv))
    if n and self._scratch is None:
      self._scratch = mujoco.MjData(self.model)
    chunks = []
    for k0 in range(0, n, self._CHUNK):
      m = min(self._CHUNK, n - k0)
      recs = np.empty(m, dtype=_record_dtype())   # every field written by the library (no zeroing)
      st = self._lib.svi_event_preview_many(
          self._in, self.model._address, self._scratch._address, i, (ctypes.c_uint64 * m)(*seeds[k0:k0 + m]), m,
          law, out[k0:].ctypes.data_as(ctypes.POINTER(ctypes.c_double)), recs.ctypes.data_as(ctypes.POINTER(_Event)))
      self._check(st, "preview")
      chunks.append(_columns(recs))
    return out, seeds, chunks, law

  def preview(self, i: int, seeds: Sequence[int], law=None):
    """Event i's post-impact qvel for each seed, as resample would give it (bit for bit), without
    touching the log or data; law None is the event's own law.  The event is set up once for all
    the seeds (svi_event_preview_many).  Returns (qvel array len(seeds) x nv, list of Event
    records); for many seeds, outcomes() gives the same as arrays, faster."""
    out, _, chunks, _ = self._preview_many(i, seeds, law)
    return out, [_event_of(c, k) for c in chunks for k in range(len(c["index"]))]

  def outcomes(self, i: int, seeds: Sequence[int], law=None) -> "Outcomes":
    """preview's outcomes as arrays (Outcomes: qvel, vn_after, impulse, contact_class, ...), row k
    for seeds[k]: the same values, without one Event object per seed."""
    out, seeds, chunks, law = self._preview_many(i, seeds, law)
    e = self.event(i)
    nc = min(e.ncontact, _MAXC)
    cat = lambda name, dt=None: (np.concatenate([np.asarray(c[name], dtype=dt) for c in chunks]) if chunks
                                 else np.zeros(0, dtype=dt))
    per = lambda name, shape, dt=float: (np.concatenate([np.asarray(c[name][:, :nc], dtype=dt) for c in chunks])
                                         if chunks else np.zeros((0,) + shape, dtype=dt))
    return Outcomes(
        seeds=np.array(seeds, dtype=np.uint64), qvel=out, contact_class=[x for c in chunks for x in c["cls"]],
        vn_after=per("vn_after", (nc,)), impulse=per("impulse", (nc, 3)), kept=per("kept", (nc,), int),
        ke_after=cat("ke_after", float), fallback=cat("fallback", int), status=cat("status", int),
        lcps=cat("lcps", int), steps=cat("steps", int), vn_before=e.vn_before, ke_before=e.ke_before,
        law=LAWS[law])

  def approximate(self, i: int, samples: int = 4096, threads: int = 0, seed: Optional[int] = None) -> "ApproxSet":
    """Event i's post-impact set by Algorithm 2, as svi-sample approximates it: `samples` outcomes
    of the set-valued law with the instance's step, max_steps, step_growth and branch rule, Sobol
    budgets, on `threads` threads (0: one per core; the outcomes do not depend on it); seed None is the
    event's own.  Another sampler than resample/preview (the same law, the per-event pattern maps):
    use it for the set, and preview/outcomes for what a given seed does in the simulation.  A sample
    that closes a joint or tendon limit MuJoCo holds active is not accepted (mj_step leaves such an
    outcome to MuJoCo), counted in stats["limit_refused"]."""
    i = self._index(i)
    samples = _count(samples, "samples", 1)
    threads = _count(threads, "threads", 0)
    seed = self._lib.svi_event_get(self._in, i).contents.seed if seed is None else _seed(seed)
    p = self.problem(i)   # also makes self._scratch
    nv = self.model.nv
    out = np.zeros((samples, nv))
    acc = np.zeros(samples, dtype=np.uint8)
    st = _ApproxStats()
    rc = self._lib.svi_event_approximate(
        self._in, self.model._address, self._scratch._address, i, samples, threads, seed,
        out.ctypes.data_as(ctypes.POINTER(ctypes.c_double)), acc.ctypes.data_as(ctypes.POINTER(ctypes.c_ubyte)),
        ctypes.byref(st))
    self._check(rc, "approximate")
    M, Jn, v0 = p["M"], p["Jn"], p["v"]
    return ApproxSet(
        qvel=out, accepted=acc.astype(bool), vn_before=Jn @ v0, vn_after=out @ Jn.T, ke_before=0.5 * v0 @ M @ v0,
        ke_after=0.5 * np.einsum("ki,ij,kj->k", out, M, out), seed=seed,
        stats={name: getattr(st, name) for name, _ in _ApproxStats._fields_})

  def problem(self, i: int) -> dict:
    """Event i's impact problem in contact space: M, Jn, Jt, mu, v (numpy copies) and nt."""
    i = self._index(i)
    if self._scratch is None:
      self._scratch = mujoco.MjData(self.model)
    p = _ProblemDef()
    nc = self._lib.svi_event_problem(self._in, self.model._address, self._scratch._address, i,
                                     ctypes.byref(p))
    if nc <= 0:
      sin = self._lib.svi_instance_of(self.model._address, self._scratch._address)
      said = self._lib.svi_instance_message(sin).decode() if sin else ""
      raise RuntimeError(f"svi: could not rebuild the problem of event {i}" + (f" ({said})" if said else ""))
    nv, nt = p.nv, p.nt
    grab = lambda ptr, n: np.ctypeslib.as_array(ptr, shape=(n,)).copy()
    return {"nv": nv, "nc": nc, "nt": nt, "M": grab(p.M, nv * nv).reshape(nv, nv),
            "Jn": grab(p.Jn, nc * nv).reshape(nc, nv), "Jt": grab(p.Jt, nc * nt * nv).reshape(nc * nt, nv),
            "mu": grab(p.mu, nc), "v": grab(p.v, nv)}

  # --- settings and counters ------------------------------------------------------------------
  @property
  def law(self) -> str:
    return LAWS[self._lib.svi_current_law(self._in)]

  @law.setter
  def law(self, law) -> None:
    self._lib.svi_set_law(self._in, -1 if law is None else _law(law))

  def set_seed(self, seed: int) -> None:
    """The seed of the events to come (event k of the run draws sample k of this seed's stream);
    an integer in [0, 2**64).  It belongs to this MjData's instance, not to its state: for runs
    that mujoco.rollout (or mj_setState) starts from state vectors, set their streams instead
    (stream, stream_index)."""
    self._lib.svi_set_seed(self._in, _seed(seed))

  @property
  def stream(self) -> int:
    """The run's stream, a number in the state (svi_state_stream_index in svi_mujoco.h): 0, the
    default and after mj_resetData, draws event k's outcome from sample k of the seed's stream; an
    integer s in [1, 2**53] from a stream of its own, so runs from one state with different streams
    have independent outcomes.  copy, mj_setState and mujoco.rollout's initial states carry it.  Any
    other value written into the state (2.5, -1, NaN) counts as 0, and reads as 0."""
    x = float(self.data.plugin_state[self._lib.svi_state_stream_index(self.model._address)])
    return int(x) if 1 <= x <= 2**53 and x == int(x) else 0   # any other value counts as 0

  @stream.setter
  def stream(self, s: int) -> None:
    if isinstance(s, bool) or not isinstance(s, (int, np.integer)):
      raise TypeError(f"svi: a stream is an integer in [0, 2**53], not {s!r}")
    if not 0 <= s <= 2**53:
      raise ValueError(f"svi: a stream is an integer in [0, 2**53], not {s}")
    self.data.plugin_state[self._lib.svi_state_stream_index(self.model._address)] = float(s)

  @property
  def counters(self) -> dict:
    c = self._lib.svi_instance_counters(self._in)
    return {name: getattr(c, name) for name, _ in _Counters._fields_}

  @property
  def message(self) -> str:
    return self._lib.svi_instance_message(self._in).decode()

  # ---------------------------------------------------------------------------------------------
  def _index(self, i: int) -> int:
    n = len(self)
    j = i + n if i < 0 else i
    if not 0 <= j < n:
      raise IndexError(f"svi: event {i} not in the log ({n} events; a position in it, not Event.index, and "
                       "restore/resample rewind the run: the events after the one rewound to are gone)")
    return j

  def _check(self, st: int, what: str) -> None:
    if st < 0:
      raise RuntimeError(f"svi: {what} failed: {self._lib.svi_status_string(st).decode()}")
