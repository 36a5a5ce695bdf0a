"""hdpsgd — training dynamics of differentially private SGD in high dimensions, from Python.

A thin layer over the C library libhdpsgd (through ctypes, no compiled extension): every
number comes from the library, the same bits as the ``hdpsgd`` program gives for the same
model and seed.

    import hdpsgd
    m = hdpsgd.Model(overrides={"clip.c": 0.5})     # the built-in default model, changed
    r = hdpsgd.ode(m)                                # the risk ODE (docs/theory.md §3)
    s = hdpsgd.sim(m, runs=100, seed=7)              # Monte Carlo of DP-SGD (docs/theory.md §1)
    print(r.final_risk, s.final_risk_mean, "+-", s.final_risk_stderr)

Errors of the library become exceptions with its message: bad keys and values raise
``ValueError`` (:class:`InputError`), numerical failures ``ArithmeticError``
(:class:`NumericalError`). Long calls (ode, sim, sde, validate, design) release the GIL and
stop cleanly on Ctrl-C (KeyboardInterrupt) within a Monte Carlo run (about every 4 million
coordinate updates) or at the next step of an ODE solve; sim, sde, validate and design accept
``progress(what, done, total, value)`` (return True to stop: :class:`Cancelled`): after every
run, and for runs longer than a second also from within, about once a second, with what
"sim steps" or "sde steps", done of total steps of all runs and value the fraction done.
"""

try:
    import numpy as _numpy  # noqa: F401  (every result holds NumPy arrays)
except ImportError as _e:  # pragma: no cover - depends on the environment
    raise ImportError("hdpsgd needs NumPy, which is not installed for this Python: "
                      "apt-get install python3-numpy, or pip install numpy") from _e

import ctypes
import math
import numbers
import os

from . import _lib
from ._lib import (Cancelled, Error, InputError, NumericalError, OutOfMemoryError,  # noqa: F401
                   OutputError)
from ._config import VERSION

__version__ = VERSION
__all__ = ["Model", "ode", "sim", "sde", "validate", "epsilon", "rho_for", "accountant",
           "dpsgd_privacy", "design", "keys", "Error", "InputError", "NumericalError", "OutputError",
           "OutOfMemoryError", "Cancelled", "Result"]

# file-name keys: a relative name given from Python is made absolute when it is set, so that
# the model means the same file after a change of directory
_PATH_KEYS = ("data.spectrum_file", "schedule.file")


def keys():
    """Every model key as a dict ``{"section.key": default text}`` (``hdpsgd keys``)."""
    out = {}
    sec, key, default, helptext = (ctypes.c_char_p() for _ in range(4))
    i = 0
    while _lib.hdp_model_schema_entry(i, ctypes.byref(sec), ctypes.byref(key),
                                      ctypes.byref(default), ctypes.byref(helptext)):
        out[f"{sec.value.decode()}.{key.value.decode()}"] = (default.value or b"").decode()
        i += 1
    return out


def _text_value(text):
    """A value as the library writes it: int, float (inf), or str (enum names, files)."""
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def _value_text(value):
    """A Python value as the text of an INI value / --set."""
    if isinstance(value, bool):
        raise InputError(f"a boolean is not a model value ({value!r})")
    if isinstance(value, numbers.Integral):
        return str(int(value))
    if isinstance(value, numbers.Real):
        return repr(float(value))  # shortest text that reads back exactly; inf -> 'inf'
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    return str(value)


class _Handle:
    """A finalized C model, released with the object."""

    def __init__(self, ptr):
        self.ptr = ptr

    def __del__(self):
        if getattr(self, "ptr", None):
            _lib.hdp_model_delete(self.ptr)
            self.ptr = None


def _build(path, sets):
    """A finalized C model from a file (or the default) and 'section.key=value' texts, in the
    order of the command line: hdp_model_init, load_file, set..., finalize."""
    ptr = _lib.hdp_model_new()
    if not ptr:
        raise OutOfMemoryError("hdpsgd: out of memory for a model")
    h = _Handle(ptr)
    if path is not None:
        _lib.call(_lib.hdp_model_load_file, ptr, _lib.cstr(path, "model file", path=True))
    for s in sets:
        _lib.call(_lib.hdp_model_set, ptr, _lib.cstr(s, "model setting"))
    _lib.call(_lib.hdp_model_finalize, ptr)
    return h


class Model:
    """A model (schema v1 of the INI files): ``Model()`` is the built-in default
    (models/default.ini), ``Model("x.ini")`` a file, ``overrides`` a dict of keys to change,
    e.g. ``{"clip.c": 0.5, "privacy.rho": float("inf")}``.

    The model is checked at once (as ``hdpsgd ode x.ini --set ...`` would): an unknown key or
    a bad value raises :class:`InputError` (a ``ValueError``) with the library's message,
    which names the key. ``m["data.n"]`` reads a resolved value; ``m.set(key, value)`` changes
    one and returns the model; ``m.to_ini()`` is the model as an INI file.
    """

    def __init__(self, path=None, overrides=None):
        self._path = None if path is None else os.path.abspath(os.fspath(path))
        self._sets = []
        self._handle = _build(self._path, [])
        if overrides:
            self.update(overrides)

    # -- changing the model --
    def _assignment(self, key, value):
        if not isinstance(key, str) or "=" in key or "." not in key:
            raise InputError(f"model key {key!r}: expected 'section.key' (e.g. 'clip.c')")
        text = _value_text(value)
        if key in _PATH_KEYS and text and not os.path.isabs(text):
            text = os.path.abspath(text)
        return f"{key}={text}"

    def update(self, overrides):
        """Set several keys at once (checked together); returns the model."""
        sets = [self._assignment(k, v) for k, v in dict(overrides).items()]
        self._handle = _build(self._path, self._sets + sets)  # raises: the model is unchanged
        self._sets += sets
        return self

    def set(self, key, value):
        """Set one key, e.g. ``m.set("data.d", 400)``; returns the model."""
        return self.update({key: value})

    def copy(self):
        """An independent copy."""
        m = Model.__new__(Model)
        m._path, m._sets, m._handle = self._path, list(self._sets), self._handle
        return m

    def _with(self, sets):
        """The C model with extra assignments (runs, seed), as the command line's options."""
        return _build(self._path, self._sets + sets) if sets else self._handle

    # -- reading it --
    def __getitem__(self, key):
        if not isinstance(key, str):
            raise KeyError(key)
        out = ctypes.c_void_p()
        box = _lib.ErrorBox()
        st = _lib.hdp_model_get_text(self._handle.ptr, _lib.cstr(key, "model key"),
                                      ctypes.byref(out), box.ptr)
        if st != _lib.OK:
            try:
                box.raise_for(st)
            except InputError as e:
                raise _KeyError(str(e)) from None
        return _text_value(_lib.take_text(out))

    def get(self, key, default=None):
        try:
            return self[key]
        except KeyError:
            return default

    def keys(self):
        return list(keys())

    def to_dict(self):
        """Every key with its resolved value."""
        return {k: self[k] for k in keys()}

    def to_ini(self):
        """The model as an INI file that ``Model(path)`` and ``hdpsgd`` read back."""
        out = ctypes.c_void_p()
        _lib.call(_lib.hdp_model_ini_text, self._handle.ptr, ctypes.byref(out))
        return _lib.take_text(out)

    def _meta(self):
        out = ctypes.c_void_p()
        _lib.call(_lib.hdp_model_meta_text, self._handle.ptr, ctypes.byref(out))
        return _lib.take_text(out)

    @property
    def path(self):
        return self._path

    @property
    def overrides(self):
        """The 'section.key=value' assignments applied after the file, in order."""
        return list(self._sets)

    def __repr__(self):
        src = self._path or "(built-in default)"
        return f"hdpsgd.Model({src!r}, {len(self._sets)} override(s))"


class _KeyError(KeyError, InputError):
    """An unknown model key: both a KeyError (mapping access) and a ValueError."""

    def __str__(self):
        return self.args[0] if self.args else ""


class Result:
    """Columns (NumPy arrays) and numbers of one call, as attributes and items:
    ``r.t``, ``r["final_risk"]``. ``columns``, ``numbers`` and ``texts`` are the dicts."""

    _csv_columns = ()

    def __init__(self, cols, nums, texts):
        self.columns, self.numbers, self.texts = cols, nums, texts

    def __getattr__(self, name):
        for d in ("columns", "numbers", "texts"):
            table = self.__dict__.get(d, {})
            if name in table:
                return table[name]
        raise AttributeError(f"{type(self).__name__} has no field {name!r}")

    def __getitem__(self, name):
        for d in (self.columns, self.numbers, self.texts):
            if name in d:
                return d[name]
        raise KeyError(name)

    def __contains__(self, name):
        return name in self.columns or name in self.numbers or name in self.texts

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self.columns) | set(self.numbers)
                      | set(self.texts))

    def to_frame(self):
        """The curve as a pandas DataFrame (the CSV's columns), or a dict of arrays when pandas
        is not installed."""
        data = {c: self.columns[c] for c in self._csv_columns if c in self.columns}
        try:
            import pandas
        except ImportError:
            return data
        return pandas.DataFrame(data)

    def __repr__(self):
        scal = ", ".join(f"{k}={v!r}" for k, v in list(self.numbers.items())[:4])
        return f"<hdpsgd.{type(self).__name__} {scal}, ...>"


class OdeResult(Result):
    """``hdpsgd ode``: columns t, risk, risk_upper, risk_lower, mu_c, nu_c, eta, sigma2 and the
    JSON summary's numbers (final_risk, risk_before_final_noise, final_noise, stable, ...)."""

    _csv_columns = ("t", "risk", "risk_upper", "risk_lower", "mu_c", "nu_c", "eta", "sigma2")


class McResult(Result):
    """``hdpsgd sim`` / ``sde``: columns t, mean, stderr, q10, q50, q90, clipped_fraction (and
    final_risks, one per run, with ``keep_runs=True``), the JSON summary's numbers
    (final_risk_mean, final_risk_stderr, diverged_runs, ...) and ``seed``."""

    _csv_columns = ("t", "mean", "stderr", "q10", "q50", "q90", "clipped_fraction")

    @property
    def seed(self):
        return int(self.texts["seed"])


class ValidateSide:
    """One row of the validator's table: max_abs_dev, max_rel_dev, max_z, final_risk,
    final_risk_stderr, clipped_fraction, worst_point (-1: every point agrees), passed."""

    _fields = ("max_abs_dev", "max_rel_dev", "max_z", "final_risk", "final_risk_stderr",
               "clipped_fraction", "worst_point")

    def __init__(self, prefix, nums):
        for f in self._fields:
            setattr(self, f, nums[prefix + f])
        self.passed = nums[(prefix or "sim_") + "pass"]

    def __repr__(self):
        return (f"<side max_rel_dev={self.max_rel_dev:.4g} max_z={self.max_z:.4g} "
                f"final_risk={self.final_risk:.6g} passed={self.passed}>")


class ValidateResult(Result):
    """``hdpsgd validate``: ``sim_side`` and ``sde_side`` (the table's rows, None without the
    SDE), ``passed``, the JSON's numbers, and the curves ``ode``, ``sim``, ``sde``."""

    def __init__(self, cols, nums, texts):
        super().__init__(cols, nums, texts)
        self.passed = nums["pass"]
        self.sim_side = ValidateSide("", nums)
        self.sde_side = ValidateSide("sde_", nums) if "sde_pass" in nums else None

        def part(prefix, cls):
            c = {k[len(prefix):]: v for k, v in cols.items() if k.startswith(prefix)}
            return cls(c, {}, {}) if c else None

        self.ode = part("ode_", OdeResult)
        self.sim = part("sim_", McResult)
        self.sde = part("sde_", McResult)

    def to_frame(self):
        data = {"t": self.columns["t"], "ode": self.columns["ode_risk"],
                "sim_mean": self.columns["sim_mean"], "sim_stderr": self.columns["sim_stderr"]}
        if self.sde is not None:
            data["sde_mean"] = self.columns["sde_mean"]
            data["sde_stderr"] = self.columns["sde_stderr"]
        try:
            import pandas
        except ImportError:
            return data
        return pandas.DataFrame(data)


def _num(x):
    """A shortest text of x that reads back exactly, as the command line writes it."""
    s = "%.15g" % x
    return s if float(s) == x else "%.17g" % x


class DesignResult(Result):
    """``hdpsgd schedule --optimize``: the best family's ``final_risk``, its schedule as a
    table ``t``, ``eta`` (``to_table(path)`` writes it for ``schedule.kind = table``), its
    parameters (eta0, c1, a, knot_t, knot_eta, c, ...), and every family's numbers with its
    JSON prefix (``pl_final_risk``, ...)."""

    _csv_columns = ("t", "eta")

    def __init__(self, cols, nums, texts, model):
        super().__init__(cols, nums, texts)
        self.model = model

    def schedule_overrides(self, path):
        """The keys that make the model run this schedule from the table at path."""
        out = {"schedule.kind": "table", "schedule.file": os.path.abspath(path)}
        if self.numbers["c"] != self.model["clip.c"]:
            out["clip.c"] = self.numbers["c"]
        return out

    def designed_model(self, path):
        """Write the table to path and return a copy of the model that runs it."""
        return self.model.copy().update(self.schedule_overrides(self.to_table(path)))

    def to_table(self, path):
        """Write the schedule as a table file (two columns t, eta; ``schedule.kind = table``,
        ``schedule.file = path``), as ``hdpsgd schedule --optimize -o path`` does."""
        lines = [f"# hdpsgd {VERSION} (Python) schedule design: the best schedule found on the "
                 "risk ODE (docs/theory.md §3, §5)",
                 f"# family {self.texts['family']}; clip.c = {_num(self.numbers['c'])}",
                 f"# ODE final risk: family {self.numbers['final_risk']:.10g}, this table "
                 f"(piecewise linear, {len(self.columns['t'])} knots) "
                 f"{self.numbers['table_final_risk']:.10g}",
                 "# the model it was optimised for:"]
        lines += self.model._meta().rstrip("\n").split("\n")
        lines.append("# t eta")
        lines += ["%.17g %.17g" % (t, e) for t, e in zip(self.columns["t"], self.columns["eta"])]
        with open(path, "w") as f:
            f.write("\n".join(lines) + "\n")
        return path


class DpsgdPrivacyResult(Result):
    """``hdpsgd accountant``: DP-SGD with Poisson sampling. epsilon (by the chosen accountant),
    epsilon_pld (an upper bound) and epsilon_pld_error, epsilon_rdp (Balle et al. 2020
    conversion), epsilon_rdp_classic, rdp_order, rdp_order_classic, noise_multiplier,
    sample_rate, steps, delta, target_epsilon (when calibrated), accountant."""


class PrivacyResult(Result):
    """``hdpsgd privacy``: rho, rho_z, delta (1/n), epsilon_bs, epsilon_cks, rho_accounted (the
    amplification-by-iteration accountant on the model's discrete schedule), n, and its
    precondition (docs/theory.md §6.1: every step non-expansive, eta_k ||x_k||^2 <= 2):
    nonexpansive_p_step, nonexpansive_log10_p_step, nonexpansive_expected_violations (per run),
    nonexpansive_negligible (expected <= delta), feature_norm, feature_clip_fraction."""


def _model(model):
    if model is None:
        return Model()
    if isinstance(model, (str, os.PathLike)):
        return Model(model)
    if not isinstance(model, Model):
        raise TypeError(f"expected an hdpsgd.Model or a model file, not {type(model).__name__}")
    return model


def _check_int(name, value, lo, hi=None):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < lo or (
            hi is not None and value > hi):
        rng = f">= {lo}" if hi is None else f"from {lo} to {hi}"
        raise InputError(f"{name} = {value!r}: expected an integer {rng}")
    return int(value)


def ode(model=None):
    """Integrate the risk ODE (``hdpsgd ode``): an :class:`OdeResult`."""
    m = _model(model)
    rec = _lib.run_long(_lib.hdp_handle_ode_run, (m._handle.ptr,))  # Ctrl-C stops it (issue 29)
    return OdeResult(*_lib.record_dict(rec))


def _mc_sets(runs, seed, step=None):
    sets = []
    if runs is not None:
        sets.append(f"sim.runs={_check_int('runs', runs, 1)}")
    if seed is not None:
        sets.append(f"sim.seed={_check_int('seed', seed, 0, 2**64 - 1)}")
    if step is not None:
        if isinstance(step, bool) or not (isinstance(step, numbers.Real) and 0 <= step <= 1):
            raise InputError(f"step = {step!r}: expected a number in [0, 1] (0 = 1/n)")
        sets.append(f"sde.step={float(step)!r}")
    return sets


def _mc(method, model, runs, threads, seed, step, keep_runs, progress):
    m = _model(model)
    _check_int("threads", threads, 0, 4096)
    h = m._with(_mc_sets(runs, seed, step))
    rec = _lib.run_long(_lib.hdp_handle_mc,
                        (h.ptr, _lib.cstr(method, "method"), threads, int(bool(keep_runs))),
                        progress)
    return McResult(*_lib.record_dict(rec))


def sim(model=None, runs=None, threads=0, seed=None, keep_runs=False, progress=None):
    """Monte Carlo of one-pass DP-SGD (``hdpsgd sim --runs N --seed S``): an :class:`McResult`.
    runs and seed default to the model's [sim] keys (100 and 1 in the default model);
    threads = 0 is one per core (the numbers do not depend on it). keep_runs adds the
    column final_risks (each run's excess risk at t = 1, NaN when it diverged)."""
    return _mc("sim", model, runs, threads, seed, None, keep_runs, progress)


def sde(model=None, runs=None, threads=0, seed=None, step=None, keep_runs=False, progress=None):
    """Euler-Maruyama of the homogenized SDE (``hdpsgd sde``): an :class:`McResult`; step is
    the SDE step h (default: the model's sde.step; 0 = 1/n)."""
    return _mc("sde", model, runs, threads, seed, step, keep_runs, progress)


def validate(model=None, runs=None, threads=0, seed=None, with_sde=True, progress=None):
    """ODE vs Monte Carlo vs SDE (``hdpsgd validate``): a :class:`ValidateResult` with
    ``passed``, ``sim_side``, ``sde_side``."""
    m = _model(model)
    _check_int("threads", threads, 0, 4096)
    h = m._with(_mc_sets(runs, seed))
    rec = _lib.run_long(_lib.hdp_handle_validate, (h.ptr, threads, int(bool(with_sde))), progress)
    return ValidateResult(*_lib.record_dict(rec))


def epsilon(rho, delta):
    """epsilon of the (rho^2/2)-zCDP guarantee at delta, Canonne-Kamath-Steinke (rho as in
    docs/theory.md §1, inf: no privacy)."""
    out = ctypes.c_double()
    _lib.call(_lib.hdp_handle_epsilon, float(rho), float(delta), ctypes.byref(out))
    return out.value


def rho_for(epsilon, delta):
    """The rho whose (rho^2/2)-zCDP guarantee is (epsilon, delta)-DP exactly (CKS): use it as
    ``privacy.rho``."""
    out = ctypes.c_double()
    _lib.call(_lib.hdp_handle_rho_for, float(epsilon), float(delta), ctypes.byref(out))
    return out.value


def accountant(model=None):
    """The privacy of the model (``hdpsgd privacy``): a :class:`PrivacyResult` with rho,
    rho_z, delta = 1/n, epsilon_cks, epsilon_bs and rho_accounted, the accountant of docs/theory.md §6
    on the model's n discrete steps, and its precondition's numbers (see PrivacyResult)."""
    m = _model(model)
    rec = ctypes.c_void_p()
    _lib.call(_lib.hdp_handle_accountant, m._handle.ptr, ctypes.byref(rec))
    return PrivacyResult(*_lib.record_dict(rec))


def dpsgd_privacy(sample_rate, *, noise_multiplier=None, epsilon=None, steps=None, epochs=None,
                  delta=1e-5, accountant="pld"):
    """Privacy of DP-SGD with Poisson sampling at ``sample_rate`` q = B/N (``hdpsgd accountant``,
    docs/theory.md §6.5): give ``noise_multiplier`` for its epsilon at ``delta`` by PLD, RDP and
    classic RDP, or ``epsilon`` for the smallest noise multiplier that meets it by
    ``accountant`` ("pld" or "rdp"); and ``steps`` or ``epochs`` (steps = ceil(epochs/q)).
    Returns a :class:`DpsgdPrivacyResult`."""
    if (noise_multiplier is None) == (epsilon is None):
        raise InputError("give exactly one of noise_multiplier and epsilon")
    if (steps is None) == (epochs is None):
        raise InputError("give exactly one of steps and epochs")
    q = float(sample_rate)
    if steps is None:
        e = float(epochs)
        if not (e > 0 and math.isfinite(e)) or not (0 < q <= 1):
            raise InputError("epochs = %r, sample_rate = %r: expected epochs > 0 and q in (0, 1]" % (epochs, sample_rate))
        t = e / q
        steps = math.ceil(round(t) if abs(t - round(t)) <= 1e-9 * round(t) else t)
    _check_int("steps", steps, 1, 100000000)
    if not isinstance(accountant, str) or "\0" in accountant:
        raise InputError("accountant: expected 'pld' or 'rdp'")
    rec = ctypes.c_void_p()
    _lib.call(_lib.hdp_handle_poisson_accountant, q,
              float(noise_multiplier) if noise_multiplier is not None else 0.0,
              float(epsilon) if epsilon is not None else 0.0, int(steps), float(delta),
              accountant.encode(), ctypes.byref(rec))
    return DpsgdPrivacyResult(*_lib.record_dict(rec))


def design(model=None, family="pl", knots=16, tune_clip=False, progress=None):
    """The schedule of lowest predicted final risk at the model's rho (``hdpsgd schedule
    --optimize --family F --knots K [--tune-clip]``): a :class:`DesignResult`. family is
    output, linear-noise, inverse-time (also spelt optimal), pl, a comma-separated list or all
    (the best is returned); 2 <= knots <= 512. The search is BFGS on the exact gradient of the
    final risk (issue 21)."""
    m = _model(model)
    if not isinstance(family, str):
        family = ",".join(family)
    knots = _check_int("knots", knots, 2, _lib.INT_MAX)  # the library says the upper limit
    rec = _lib.run_long(_lib.hdp_handle_design,
                        (m._handle.ptr, _lib.cstr(family, "family"), knots,
                         int(bool(tune_clip))), progress)
    return DesignResult(*_lib.record_dict(rec), model=m)
