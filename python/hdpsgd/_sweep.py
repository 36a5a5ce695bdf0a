"""sweep(): ``hdpsgd sweep`` from Python, the library's point runners (the handle's
hdp_handle_sweep_point) at every point of a grid of model keys, the results as NumPy columns
with the names of the sweep's ``results.csv``."""

import math as _math
import re as _re
from collections.abc import Mapping as _Mapping

import numpy as np

from . import _lib
from . import InputError, Model, Result, _check_int, _gammas, _model, _real, _value_text

_COMMANDS = ("ode", "sim", "sde", "validate", "schedule", "rates")
_INT = _re.compile(r"-?[0-9]+\Z")


class SweepResult(Result):
    """``hdpsgd sweep``: one NumPy column per column of its ``results.csv``, in its order
    (``names``): ``point``, the axes (``"clip.c"``, ...), ``d``, ``n``, ``gamma``, ``rho``,
    ``epsilon_cks``, ``delta``, the commands' columns in their order (``ode_final_risk``,
    ``sim_final_risk``, ``sim_final_stderr``, ``schedule_best_family``, ...) and ``status``
    (``"ok"`` or ``"failed: <message>"``). Numbers are float arrays (NaN where results.csv is
    empty: a command that did not run or failed), integer columns int arrays, ``validate_pass``
    bool, names str; the values are those of results.csv (10 significant digits). ``r["clip.c"]``,
    ``r.sim_final_risk``, ``r.columns``; ``to_frame()`` a pandas DataFrame in results.csv's
    column order; ``axes`` and ``commands`` as given."""

    def __init__(self, names, cols, axes, commands):
        super().__init__(cols, {}, {})
        self.names, self.axes, self.commands = tuple(names), tuple(axes), tuple(commands)
        self._csv_columns = self.names


def _visible(text):
    """A user's text for a message: a control character as \\xNN (as the library writes it),
    so that a newline or an escape sequence in an axis does not reach the terminal."""
    text = str(text)
    return "".join(c if c.isprintable() else "\\x%02x" % ord(c) if ord(c) < 256
                   else "\\u%04x" % ord(c) for c in text)


def _column(texts):
    """A results.csv column as a NumPy array: bool (true/false), int, float (NaN for empty
    fields) or str."""
    vals = set(texts)
    if vals and vals <= {"true", "false"}:
        a = np.array([t == "true" for t in texts], dtype=bool)
    elif vals and vals <= {"true", "false", ""}:
        a = np.array([_math.nan if t == "" else float(t == "true") for t in texts])
    elif all(_INT.match(t) for t in texts):
        a = np.array([int(t) for t in texts], dtype=np.int64)
    else:
        try:
            a = np.array([_math.nan if t == "" else float(t) for t in texts])
        except ValueError:
            a = np.array(texts, dtype=str)
    a.flags.writeable = False
    return a


def _axis_values(key, values):
    """The texts of an axis's values, as a sweep file gives them: a list, or "LO:HI:COUNT" /
    "LO:HI:COUNT:log" (COUNT values, linear or log-spaced, written %.15g as the sweep file's
    ranges are)."""
    if isinstance(values, str):
        parts = values.split(":")
        if len(parts) in (3, 4) and (len(parts) == 3 or parts[3] == "log"):
            try:
                lo, hi, count = float(parts[0]), float(parts[1]), int(parts[2])
            except ValueError:
                lo = hi = count = None
            if count is not None:
                if not (1 <= count <= 1024 and _math.isfinite(lo) and _math.isfinite(hi)) or (
                        len(parts) == 4 and not (lo > 0 and hi > 0)):
                    raise InputError(f"axis {_visible(key)}: {values!r}: expected LO:HI:COUNT or "
                                     "LO:HI:COUNT:log with 1 <= COUNT <= 1024 (log: LO, HI > 0)")
                out = []
                for i in range(count):
                    u = 0.0 if count == 1 else i / (count - 1)
                    v = (_math.exp(_math.log(lo) + u * (_math.log(hi) - _math.log(lo)))
                         if len(parts) == 4 else lo + u * (hi - lo))
                    out.append("%.15g" % v)
                return out
        values = [v.strip() for v in values.split(",")]
    try:
        texts = [_value_text(v) for v in values]
    except TypeError:
        raise InputError(f"axis {_visible(key)}: expected a list of values or "
                         "'LO:HI:COUNT[:log]'") from None
    if not texts or any(not t for t in texts):
        raise InputError(f"axis {_visible(key)}: no values, or an empty one")
    return texts


def _commands(commands):
    if isinstance(commands, str):
        commands = [c.strip() for c in commands.split(",")]
    commands = tuple(commands)
    for c in commands:
        if c not in _COMMANDS:
            raise InputError(f"commands: unknown command {c!r}; accepted: {', '.join(_COMMANDS)}")
    if len(set(commands)) != len(commands) or not commands:
        raise InputError(f"commands = {commands!r}: name each command once (at least one)")
    return commands


def _families(families):
    if families is None or isinstance(families, str):
        return families
    return ",".join(families)


def sweep(model=None, axes=None, *, commands=("ode",), schedule_families="all",
          schedule_knots=8, schedule_refine=False, schedule_refine_tol=1e-5, tune_clip=False,
          rates_gammas=None, rates_families=None, threads=0, progress=None) -> SweepResult:
    """Run commands at every point of a grid of model keys (``hdpsgd sweep``): a
    :class:`SweepResult` whose columns are those of the sweep's ``results.csv``, the same
    numbers. ``model`` is the base model (its overrides play the sweep file's ``[set]``),
    ``axes`` a mapping ``{"section.key": values}`` in the order of the sweep file's ``[axes]``
    (the last varies fastest), each a list of values or ``"LO:HI:COUNT"`` /
    ``"LO:HI:COUNT:log"``. ``commands`` (``[sweep] commands``) run in the order given, each
    once: ode, sim, sde, validate, schedule, rates; ode, sim, sde and validate named after
    schedule run on the schedule it designed at the point (``commands=("schedule",
    "validate")``). The settings have the sweep file's names and defaults: schedule_families
    (all), schedule_knots (8), schedule_refine and schedule_refine_tol (pl; 1e-5), tune_clip,
    rates_gammas ((lo, hi, count) or "LO:HI:COUNT", required with rates) and rates_families
    (output, linear-noise, inverse-time). A command that fails at a point leaves that row's
    later fields NaN and its ``status`` "failed: ..." (as results.csv; nothing is raised);
    ``progress(what, done, total, value)`` receives the library's reports and
    ``("sweep", point, points, nan)`` after each point (a true value stops: :class:`Cancelled`).
    The points' files and resuming, and MPI, are the command line's."""
    base = _model(model)
    commands = _commands(commands)
    axes = {} if axes is None else axes
    if not isinstance(axes, _Mapping):
        raise InputError("axes: expected a mapping {'section.key': values}")
    keys = list(axes)
    texts = [_axis_values(k, axes[k]) for k in keys]
    for k in keys:
        Model._assignment(k, 0)  # 'section.key' (the model checks the key itself)
    if len(set(keys)) != len(keys):
        raise InputError("axes: a key given twice")
    knots = _check_int("schedule_knots", schedule_knots, 2, 512)
    tol = _real("schedule_refine_tol", schedule_refine_tol)
    threads = _check_int("threads", threads, 0, 4096)
    lo = hi = 0.0
    count = 0
    if "rates" in commands:
        if rates_gammas is None:
            raise InputError("rates_gammas = (lo, hi, count) is required with the rates command")
        lo, hi, count = _gammas(rates_gammas)
    fam = _families(schedule_families)
    rfam = _families(rates_families)
    npoints = 1
    for t in texts:
        npoints *= len(t)
    if npoints > 1000000:
        raise InputError(f"the axes make {npoints} points, more than the 1000000 a sweep accepts")
    # every point's model first, as the command line checks them before anything runs
    models, labels = [], []
    for i in range(npoints):
        idx, rest = [], i
        for t in reversed(texts):
            idx.append(rest % len(t))
            rest //= len(t)
        idx.reverse()
        point = {k: texts[a][idx[a]] for a, k in enumerate(keys)}
        try:
            models.append(base.replace(point) if point else base)
        except InputError as e:
            where = ", ".join(f"{_visible(k)}={_visible(v)}" for k, v in point.items())
            raise InputError(f"at point {i} ({where}): {e}") from None
        labels.append([texts[a][idx[a]] for a in range(len(keys))])
    rows, names = [], None
    for i, m in enumerate(models):
        rec = _lib.run_long(_lib.hdp_handle_sweep_point,
                            (m._handle.ptr, _lib.cstr(",".join(commands), "commands"),
                             None if fam is None else _lib.cstr(fam, "schedule_families"), knots,
                             int(bool(schedule_refine)), tol, int(bool(tune_clip)), lo, hi,
                             count, None if rfam is None else _lib.cstr(rfam, "rates_families"),
                             threads), progress)
        _cols, _nums, out = _lib.record_dict(rec)
        names = out["columns"].split(",")
        rows.append([str(i)] + labels[i] + out["row"].split(","))
        if progress is not None and progress("sweep", i + 1, npoints, _math.nan):
            raise _lib.Cancelled("hdpsgd.sweep: stopped by the progress callback")
    names = ["point"] + keys + (names or [])
    cols = {n: _column([r[j] for r in rows]) for j, n in enumerate(names)}
    return SweepResult(names, cols, keys, commands)
