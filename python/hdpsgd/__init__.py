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

import ctypes as _ctypes
import math as _math
import numbers as _numbers
import os as _os
from collections.abc import Mapping as _Mapping
from typing import Any as _Any, Callable as _Callable, Optional as _Optional, Union as _Union

from . import _lib, _results
from ._lib import (Cancelled, Error, InputError, NumericalError, OutOfMemoryError,  # noqa: F401
                   OutputError)
from ._config import VERSION

__version__ = VERSION
__all__ = ["Model", "ode", "sim", "sde", "validate", "epsilon", "rho_for", "accountant",
           "dpsgd_privacy", "design", "keys", "Error", "InputError", "NumericalError", "OutputError",
           "OutOfMemoryError", "Cancelled", "Result", "OdeResult", "McResult", "ValidateResult",
           "ValidateSide", "OdeCurve", "McCurve", "PrivacyResult", "DpsgdPrivacyResult",
           "DesignResult", "config", "rates", "RatesResult", "plot", "sweep", "SweepResult",
           "dataset", "DatasetResult"]

_ModelArg = _Optional[_Union["Model", str, "_os.PathLike[str]"]]
_Progress = _Optional[_Callable[[str, int, int, float], _Any]]

# file-name keys: a relative name given from Python is made absolute when it is set, so that
# the model means the same file after a change of directory
_PATH_KEYS = ("data.spectrum_file", "schedule.file", "data.features", "data.labels",
              "data.test_features", "data.test_labels", "data.target_file")


def keys():
    """Every model key as a dict ``{"section.key": default text}`` (``hdpsgd keys``)."""
    out = {}
    sec, key, default, helptext = (_ctypes.c_char_p() for _ in range(4))
    i = 0
    while _lib.hdp_model_schema_entry(i, _ctypes.byref(sec), _ctypes.byref(key),
                                      _ctypes.byref(default), _ctypes.byref(helptext)):
        out[f"{sec.value.decode()}.{key.value.decode()}"] = (default.value or b"").decode()
        i += 1
    return out


def _text_value(text):
    """A value as the library writes it: int, float (inf), bool (the switches data.center,
    ode.discrete: "true", "false"), or str (enum names, files)."""
    if text in ("true", "false"):
        return text == "true"  # the text "false" would be true in an if
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
    if isinstance(value, (bool, _numpy.bool_)):
        return "true" if value else "false"  # a switch; a number key refuses it, naming it
    if isinstance(value, _numbers.Integral):
        return str(int(value))
    if isinstance(value, _numbers.Real):
        return repr(float(value))  # shortest text that reads back exactly; inf -> 'inf'
    if isinstance(value, _os.PathLike):
        value = _os.fspath(value)
    return str(value)


class _Handle:
    """A finalized C model, released with the object."""

    def __init__(self, ptr):
        self.ptr = ptr

    def __del__(self):
        if getattr(self, "ptr", None):
            _lib.hdp_model_delete(self.ptr)
            self.ptr = None

    def __reduce__(self):
        # a copy would own the same C model and free it a second time
        raise TypeError("a C model handle cannot be copied or pickled (the Model can)")


def _build(path, sets, arrays=None):
    """A finalized C model from a file (or the default) and 'section.key=value' texts, in the
    order of the command line: hdp_model_init, load_file, set..., finalize; arrays (X, y,
    X_test, y_test as C-contiguous float64 NumPy arrays, or None) in place of the data files
    (docs/theory.md §9), handed to the library in memory."""
    ptr = _lib.hdp_model_new()
    if not ptr:
        raise OutOfMemoryError("hdpsgd: out of memory for a model")
    h = _Handle(ptr)
    if path is not None:
        _lib.call(_lib.hdp_model_load_file, ptr, _lib.cstr(path, "model file", path=True))
    if arrays is not None:
        X, y, Xt, yt = arrays
        ptr_of = lambda a: None if a is None else a.ctypes.data_as(_lib._D)
        _lib.call(_lib.hdp_model_set_data_arrays, ptr, ptr_of(X), X.shape[0], X.shape[1],
                  ptr_of(y), ptr_of(Xt), 0 if Xt is None else Xt.shape[0], ptr_of(yt))
    for s in sets:
        _lib.call(_lib.hdp_model_set, ptr, _lib.cstr(s, "model setting"))
    _lib.call(_lib.hdp_model_finalize, ptr)
    return h


class Model(_Mapping):
    """A model (schema v1 of the INI files), immutable: ``Model()`` is the built-in default
    (models/default.ini), ``Model("x.ini")`` a file; ``overrides`` (a dict
    ``{"section.key": value}``) and keyword arguments ``section__key=value`` change keys, e.g.
    ``Model(overrides={"privacy.rho": float("inf")}, clip__c=0.5)``.

    The model is checked at once (as ``hdpsgd ode x.ini --set ...`` would): an unknown key or
    a bad value raises :class:`InputError` (a ``ValueError``) with the library's message,
    which names the key. A model is a read-only mapping of every key (``hdpsgd keys``) to its
    resolved value: ``m["data.n"]``, ``m.get(key)``, ``dict(m)``. ``m.replace(clip__c=0.5)``
    (or ``m.replace({"clip.c": 0.5})``, ``m.set(key, value)``, ``m.update(dict)``) returns a
    new model with keys changed, ``m.to_ini()`` is the model as an INI file.
    """

    __slots__ = ("_path", "_sets", "_handle", "_arrays")

    def __init__(self, path: _Optional[_Union[str, "_os.PathLike[str]"]] = None,
                 overrides: _Optional[_Mapping] = None, **keys: _Any):
        base = None if path is None else _os.path.abspath(_os.fspath(path))
        sets = tuple(self._assignment(k, v) for k, v in _changes(overrides, keys).items())
        object.__setattr__(self, "_path", base)
        object.__setattr__(self, "_sets", sets)
        object.__setattr__(self, "_arrays", None)
        object.__setattr__(self, "_handle", _build(base, list(sets)))

    @classmethod
    def from_arrays(cls, X, y=None, X_test=None, y_test=None,
                    overrides: _Optional[_Mapping] = None, **keys: _Any) -> "Model":
        """A model on a user's data given as NumPy arrays (no files; docs/theory.md §9): X the
        N x d rows, y their N labels (None: a planted target), X_test and y_test a held-out set.
        ``data.source`` becomes ``file``; the other keys as for ``Model``, e.g.
        ``Model.from_arrays(X, y, data__labels_positive="0", clip__c=0.3)``. The numbers are
        those of the same arrays saved as files and given as ``data.features`` etc. The model
        keeps a copy of the arrays: changing them afterwards does not change it."""
        import numpy as _np
        def arr(a, name, dims):
            if a is None:
                return None
            # a copy of its own: the model is rebuilt from it by replace() (and pickle), and the
            # caller's array may change after this call
            if _np.iscomplexobj(a):
                raise InputError(f"{name}: complex numbers; expected an array of real numbers")
            try:
                a = _np.array(a, dtype=_np.float64, order="C", copy=True)
            except (TypeError, ValueError) as e:
                raise InputError(f"{name}: expected an array of real numbers ({e})") from None
            if dims == 2 and a.ndim == 1 and name.startswith("X"):
                raise InputError(f"{name}: expected an N x d array, got shape {a.shape}")
            if dims == 1 and a.ndim == 2 and a.shape[1] == 1:
                a = _np.ascontiguousarray(a[:, 0])
            if a.ndim != dims:
                raise InputError(f"{name}: expected {dims} dimensions, got shape {a.shape}")
            a.flags.writeable = False
            return a
        Xa, ya, Xt, yt = arr(X, "X", 2), arr(y, "y", 1), arr(X_test, "X_test", 2), arr(y_test, "y_test", 1)
        if ya is not None and ya.shape[0] != Xa.shape[0]:
            raise InputError(f"y: {ya.shape[0]} labels for the {Xa.shape[0]} rows of X")
        if Xt is not None and Xt.shape[1] != Xa.shape[1]:
            raise InputError(f"X_test: {Xt.shape[1]} columns, X has {Xa.shape[1]}")
        if yt is not None and (Xt is None or yt.shape[0] != Xt.shape[0]):
            raise InputError("y_test: needs X_test, one label per row of it")
        m = cls.__new__(cls)
        sets = tuple(cls._assignment(k, v) for k, v in _changes(overrides, keys).items())
        object.__setattr__(m, "_path", None)
        object.__setattr__(m, "_sets", sets)
        object.__setattr__(m, "_arrays", (Xa, ya, Xt, yt))
        object.__setattr__(m, "_handle", _build(None, list(sets), m._arrays))
        return m

    def __setattr__(self, name, value):
        raise AttributeError("hdpsgd.Model is immutable: use m.replace(section__key=value)")

    __delattr__ = __setattr__

    # -- changing the model: a new one --
    @staticmethod
    def _assignment(key, value):
        if not isinstance(key, str) or "=" in key or "." not in key:
            raise InputError(f"model key {key!r}: expected 'section.key' (e.g. 'clip.c')")
        text = _value_text(value)
        if key in _PATH_KEYS and text and not _os.path.isabs(text):
            text = _os.path.abspath(text)
        return f"{key}={text}"

    def replace(self, overrides: _Optional[_Mapping] = None, /, **keys: _Any) -> "Model":
        """A new model with keys changed (checked together; this one is unchanged):
        ``m.replace(clip__c=0.5, data__d=400)`` or ``m.replace({"clip.c": 0.5})``."""
        sets = tuple(self._assignment(k, v) for k, v in _changes(overrides, keys).items())
        m = Model.__new__(Model)
        object.__setattr__(m, "_path", self._path)
        object.__setattr__(m, "_sets", self._sets + sets)
        object.__setattr__(m, "_arrays", self._arrays)
        object.__setattr__(m, "_handle", _build(self._path, list(m._sets), self._arrays) if sets
                           else self._handle)
        return m

    def update(self, overrides: _Mapping) -> "Model":
        """A new model with several keys changed: ``m.replace(overrides)``."""
        return self.replace(dict(overrides))

    def set(self, key: str, value: _Any) -> "Model":
        """A new model with one key changed, e.g. ``m.set("data.d", 400)``."""
        return self.replace({key: value})

    def copy(self) -> "Model":
        """The model itself (it is immutable)."""
        return self

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        """Pickled as what builds it: the file's path, the overrides and the arrays; unpickling
        builds the model again (reading the file again)."""
        return (_rebuild, (self._path, self._sets, self._arrays))

    def _with(self, keys):
        """The C model with keys changed (runs=, seed=, step=: (argument, key, text)), each
        through hdp_model_with as the command line's options, the schema checking their
        ranges: "runs = 0: [sim] runs = 0 is out of range: ..."."""
        h = self._handle
        for arg, key, value in keys:
            ptr = _lib.hdp_model_new()
            if not ptr:
                raise OutOfMemoryError("hdpsgd: out of memory for a model")
            nh = _Handle(ptr)
            try:
                _lib.call(_lib.hdp_model_with, h.ptr, _lib.cstr(key, "model key"),
                          _lib.cstr(value, "model value"), ptr)
            except InputError as e:
                msg = str(e)
                msg = msg[len("--set: "):] if msg.startswith("--set: ") else msg
                raise InputError(f"{arg} = {value}: {msg}") from None
            h = nh
        return h

    # -- reading it --
    def __getitem__(self, key: str) -> _Union[int, float, str]:
        if not isinstance(key, str):
            raise KeyError(key)
        out = _ctypes.c_void_p()
        box = _lib.ErrorBox()
        st = _lib.hdp_model_get_text(self._handle.ptr, _lib.cstr(key, "model key"),
                                      _ctypes.byref(out), box.ptr)
        if st != _lib.OK:
            try:
                box.raise_for(st)
            except InputError as e:
                raise _KeyError(str(e)) from None
        return _text_value(_lib.take_text(out))

    def __iter__(self):
        return iter(keys())

    def __eq__(self, other):
        """The same keys and values, and for models on arrays the same arrays (which no key
        holds)."""
        if isinstance(other, Model) and not _same_arrays(self._arrays, other._arrays):
            return False
        return _Mapping.__eq__(self, other)

    __hash__ = None  # a mapping (as before: equal models need not be one object)

    def __len__(self):
        return len(keys())

    def to_dict(self) -> dict:
        """Every key with its resolved value."""
        return {k: self[k] for k in keys()}

    def to_ini(self) -> str:
        """The model as an INI file that ``Model(path)`` and ``hdpsgd`` read back; a model on
        arrays (``from_arrays``) is written without them, which its first line says."""
        out = _ctypes.c_void_p()
        _lib.call(_lib.hdp_model_ini_text, self._handle.ptr, _ctypes.byref(out))
        return self._arrays_note() + _lib.take_text(out)

    def _arrays_note(self):
        """A model on arrays has no file to name: the INI texts say so in a first comment."""
        if self._arrays is None:
            return ""
        return ("; the data are NumPy arrays (hdpsgd.Model.from_arrays), not written here: save "
                "them (numpy.save) and\n; give them as data.features, data.labels, "
                "data.test_features, data.test_labels to read this back\n")

    def _meta(self):
        out = _ctypes.c_void_p()
        _lib.call(_lib.hdp_model_meta_text, self._handle.ptr, _ctypes.byref(out))
        return _lib.take_text(out)

    @property
    def path(self) -> _Optional[str]:
        return self._path

    @property
    def overrides(self) -> list:
        """The 'section.key=value' assignments applied after the file, in order."""
        return list(self._sets)

    def __repr__(self):
        src = self._path or ("(arrays X %d x %d)" % self._arrays[0].shape if self._arrays
                             else "(built-in default)")
        return f"hdpsgd.Model({src!r}, {len(self._sets)} override(s))"


def _same_arrays(a, b):
    """Model.from_arrays' (X, y, X_test, y_test) of two models hold the same numbers."""
    if a is None or b is None:
        return a is b
    return all((x is None) == (y is None) and (x is None or _numpy.array_equal(x, y))
               for x, y in zip(a, b))


def _rebuild(path, sets, arrays):
    """A Model unpickled (Model.__reduce__)."""
    m = Model.__new__(Model)
    for name, value in (("_path", path), ("_sets", tuple(sets)), ("_arrays", arrays)):
        object.__setattr__(m, name, value)
    object.__setattr__(m, "_handle", _build(path, list(sets), arrays))
    return m


def _changes(overrides, keys):
    """{section.key: value} from a mapping and keyword arguments section__key=value."""
    out = dict(overrides) if overrides else {}
    for k, v in keys.items():
        if "__" not in k:
            raise InputError(f"model key {k!r}: expected section__key (e.g. clip__c=0.5)")
        out[k.replace("__", ".", 1)] = v
    return out


class _KeyError(KeyError, InputError):
    """An unknown model key: both a KeyError (mapping access) and a ValueError."""

    def __str__(self):
        return self.args[0] if self.args else ""


class Result(_results.Frame):
    """Columns (NumPy arrays) and numbers of one call, as attributes and items:
    ``r.t``, ``r["final_risk"]``. ``columns``, ``numbers`` and ``texts`` are the dicts.
    (The schedule design's result, whose fields depend on the families searched.)"""

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



# ---- the result classes, produced from the library's result tables (hdpsgd/fields.h) ----

_MODEL_TEXT = ("source", "", False)   # the tables model (as "model") and version
_VERSION = ("version", "", False)

OdeResult = _results.make(
    "OdeResult", "``hdpsgd ode``: the risk ODE's curve (the CSV's columns) and its JSON "
    "summary's numbers; on a data set (data.source = file) also its corrections and, with a "
    "held-out set, ode_test_mse (its value at t = 1 as a number, the curve in ``columns`` and "
    "``ode_test_mse_curve``).",
    [("ode", "", False), ("ode_data", "", True), ("ode_data_columns", "", True),
     ("model", "", False)], extra=[_MODEL_TEXT, _VERSION], csv=("ode", "ode_data_columns"))

OdeCurve = _results.make("OdeCurve", "The risk ODE's curve (the CSV's columns) in a validation.",
                         [("ode", "", False, "columns")], csv="ode")

McCurve = _results.make("McCurve", "A Monte Carlo curve (the CSV's columns) in a validation.",
                        [("mc", "", False, "columns")], csv="mc")

McResult = _results.make(
    "McResult", "``hdpsgd sim`` / ``hdpsgd sde``: the Monte Carlo's curve (the CSV's columns) and "
    "its JSON summary's numbers; ``final_risks`` with ``keep_runs=True``; the row statistics "
    "(nonexpansive_*, feature_*) for one-pass ``sim`` only; noise_multiplier, sample_rate, "
    "epsilon, ... for standard DP-SGD on a finite training set (sgd.sampling = shuffle | poisson); "
    "on a data set with a held-out set test_mse and test_mse_stderr (at t = 1 as numbers, the "
    "curves in ``columns`` and ``test_mse_curve``, ``test_mse_stderr_curve``).",
    [("mc", "", False), ("mc_rows", "", True), ("mc_sgd", "", True), ("mc_data", "", True),
     ("mc_data_columns", "", True), ("model", "", False), ("mc_run", "", False)],
    extra=[("mc_finals", "", True),
           ("mc_command", "", False), ("mc_seed", "", False), _MODEL_TEXT, _VERSION],
    csv=("mc", "mc_data_columns"))

ValidateSide = _results.make("ValidateSide", "One side of the validator (a row of its table).",
                             [("validate_side", "", False)], own_prefix=False)


class _ValidateBase(_results.Base):
    """The sides and curves of a validation."""

    def _side(self, prefix):
        nums = self.numbers
        kw = {}
        for rec, attr, _t, _h, _o in ValidateSide._fields_spec:
            key = "sim_" + rec if (rec in _results.SIM_PREFIXED and not prefix) else prefix + rec
            if key not in nums:
                return None
            kw[attr] = nums[key]
        return ValidateSide(**kw)

    @property
    def sim_side(self):
        """The Monte Carlo side (a :class:`ValidateSide`)."""
        return self._side("")

    @property
    def sde_side(self):
        """The SDE side (a :class:`ValidateSide`; None with ``with_sde=False``)."""
        return self._side("sde_")

    def _curve(self, prefix, cls):
        cols = {k[len(prefix):]: v for k, v in self.columns.items() if k.startswith(prefix)}
        return cls._from_record(cols, {}, {}) if cols else None

    @property
    def ode(self):
        """The ODE's curve (an :class:`OdeCurve`)."""
        return self._curve("ode.", OdeCurve)

    @property
    def sim(self):
        """The Monte Carlo's curve (a :class:`McCurve`)."""
        return self._curve("sim.", McCurve)

    @property
    def sde(self):
        """The SDE's curve (a :class:`McCurve`; None without the SDE)."""
        return self._curve("sde.", McCurve)

    def to_frame(self):
        """t, the ODE's risk and the sides' means and standard errors, as a pandas DataFrame
        (or a dict of arrays without pandas)."""
        c = self.columns
        data = {"t": c["t"], "ode": c["ode.risk"], "sim_mean": c["sim.mean"],
                "sim_stderr": c["sim.stderr"]}
        if "sde.mean" in c:
            data["sde_mean"] = c["sde.mean"]
            data["sde_stderr"] = c["sde.stderr"]
        try:
            import pandas
        except ImportError:
            return data
        return pandas.DataFrame(data)


ValidateResult = _results.make(
    "ValidateResult", "``hdpsgd validate``: the JSON's numbers under its names (the Monte Carlo "
    "side bare, max_abs_dev, ..., its verdict sim_pass; the SDE side with sde_; ``passed`` the "
    "overall verdict), ``sim_side`` and ``sde_side`` (:class:`ValidateSide`), and the curves "
    "``ode``, ``sim``, ``sde`` (their columns: ``ode.risk``, ``sim.mean``, ... in ``columns``).",
    [("validate_side", "", False), ("validate_side", "sde_", True), ("validate", "", False),
     ("validate_sde", "", True), ("ode_data", "", True), ("mc_data", "", True),
     ("mc_rows", "", False), ("model", "", False),
     ("ode", "ode.", False, "columns"), ("mc", "sim.", False, "columns"),
     ("mc", "sde.", True, "columns")],
    base=_ValidateBase,
    extra=[("validate_grid", "", False), _MODEL_TEXT])

PrivacyResult = _results.make(
    "PrivacyResult", "``hdpsgd privacy``: the privacy of the model at its delta (privacy.delta), the "
    "accountant on its n discrete steps and the accountant's precondition (docs/theory.md "
    "§6.1).",
    [("privacy", "", False), ("nonexpansive", "", False)], extra=[_MODEL_TEXT])

DpsgdPrivacyResult = _results.make(
    "DpsgdPrivacyResult", "``hdpsgd accountant``: DP-SGD with Poisson sampling.",
    [("accountant", "", False), ("accountant_query", "", False), ("accountant_choice", "", False),
     ("accountant_target", "", True)])


DatasetResult = _results.make(
    "DatasetResult", "``hdpsgd dataset --json``: a user's data set prepared as the toolkit's "
    "empirical model (docs/theory.md §9), the JSON summary's numbers, texts and columns under "
    "its names (the files' names it echoes are the call's arguments): always n, d, storage, "
    "center, scale, scale_factor, trace_raw, trace and the column eigenvalues; with labels "
    "ridge, label_mean, label_variance, theta_norm, risk0, residual_variance and the column "
    "energy (positive_count with classes); with test features test_n (test_mse with their "
    "labels). A field that does not apply is None.",
    [("dataset", "", False), ("dataset_classes", "", True), ("dataset_labels", "", True),
     ("dataset_test", "", True), ("dataset_test_labels", "", True)], csv="dataset")


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
        out = {"schedule.kind": "table", "schedule.file": _os.path.abspath(path)}
        if self.numbers["c"] != self.model["clip.c"]:
            out["clip.c"] = self.numbers["c"]
        return out

    def designed_model(self, path):
        """Write the table to path and return a copy of the model that runs it."""
        return self.model.copy().update(self.schedule_overrides(self.to_table(path)))

    def to_table(self, path):
        """Write the schedule as a table file (two columns t, eta; ``schedule.kind = table``,
        ``schedule.file = path``), as ``hdpsgd schedule --optimize -o path`` does (the
        library's writer)."""
        with open(path, "w") as f:
            f.write(self.texts["table"])
        return path


def _model(model):
    if model is None:
        return Model()
    if isinstance(model, (str, _os.PathLike)):
        return Model(model)
    if not isinstance(model, Model):
        raise TypeError(f"expected an hdpsgd.Model or a model file, not {type(model).__name__}")
    return model


def _check_int(name, value, lo, hi=None):
    if isinstance(value, bool) or not isinstance(value, _numbers.Integral) or value < lo or (
            hi is not None and value > hi):
        rng = f">= {lo}" if hi is None else f"from {lo} to {hi}"
        raise InputError(f"{name} = {value!r}: expected an integer {rng}")
    return int(value)


def ode(model: _ModelArg = None, *, rtol: _Optional[float] = None,
        points: _Optional[int] = None) -> "OdeResult":
    """Integrate the risk ODE (``hdpsgd ode``): an :class:`OdeResult`. rtol and points
    override the model's ``ode.rtol`` and ``ode.points``."""
    m = _model(model)
    opts = {k: v for k, v in (("ode.rtol", rtol), ("ode.points", points)) if v is not None}
    if opts:
        m = m.replace(opts)
    rec = _lib.run_long(_lib.hdp_handle_ode_run, (m._handle.ptr,))  # Ctrl-C stops it
    return OdeResult._from_record(*_lib.record_dict(rec))


def _integer(name, value):
    """An integer's text (its range is the model key's, checked by the library)."""
    if isinstance(value, bool) or not isinstance(value, _numbers.Integral):
        raise InputError(f"{name} = {value!r}: expected an integer")
    return str(int(value))


def _mc_sets(runs, seed, step=None):
    """The keys runs=, seed= and step= change, as (argument, key, text) for Model._with."""
    sets = []
    if runs is not None:
        sets.append(("runs", "sim.runs", _integer("runs", runs)))
    if seed is not None:
        sets.append(("seed", "sim.seed", _integer("seed", seed)))
    if step is not None:
        if isinstance(step, bool) or not isinstance(step, _numbers.Real):
            raise InputError(f"step = {step!r}: expected a number in [0, 1] (0 = 1/n)")
        sets.append(("step", "sde.step", repr(float(step))))
    return sets


def _mc(method, model, runs, threads, seed, step, keep_runs, progress):
    m = _model(model)
    _check_int("threads", threads, 0, 4096)
    h = m._with(_mc_sets(runs, seed, step))
    rec = _lib.run_long(_lib.hdp_handle_mc,
                        (h.ptr, _lib.cstr(method, "method"), threads, int(bool(keep_runs))),
                        progress)
    return McResult._from_record(*_lib.record_dict(rec))


def sim(model: _ModelArg = None, *, runs: _Optional[int] = None, threads: int = 0,
        seed: _Optional[int] = None, keep_runs: bool = False,
        progress: _Progress = None) -> "McResult":
    """Monte Carlo of one-pass DP-SGD (``hdpsgd sim --runs N --seed S``): an :class:`McResult`.
    runs and seed default to the model's [sim] keys (100 and 1 in the default model);
    threads = 0 is one per core (the numbers do not depend on it). keep_runs adds the
    column final_risks (each run's excess risk at t = 1, NaN when it diverged)."""
    return _mc("sim", model, runs, threads, seed, None, keep_runs, progress)


def sde(model: _ModelArg = None, *, runs: _Optional[int] = None, threads: int = 0,
        seed: _Optional[int] = None, step: _Optional[float] = None, keep_runs: bool = False,
        progress: _Progress = None) -> "McResult":
    """Euler-Maruyama of the homogenized SDE (``hdpsgd sde``): an :class:`McResult`; step is
    the SDE step h (default: the model's sde.step; 0 = 1/n)."""
    return _mc("sde", model, runs, threads, seed, step, keep_runs, progress)


def validate(model: _ModelArg = None, *, runs: _Optional[int] = None, threads: int = 0,
             seed: _Optional[int] = None, with_sde: _Optional[bool] = None,
             progress: _Progress = None) -> "ValidateResult":
    """ODE vs Monte Carlo vs SDE (``hdpsgd validate``): a :class:`ValidateResult` with
    ``passed``, ``sim_side``, ``sde_side``. ``with_sde=None`` (the default) runs the SDE side
    where it applies, as the command line does: not for ``sgd.batch`` > 1 (the SDE is derived
    for batch 1) nor ``ode.model = rows`` (it is the bins ODE's SDE); ``True`` asks for it
    (an ``InputError`` where it does not apply), ``False`` skips it."""
    m = _model(model)
    if with_sde is None:
        with_sde = int(m["sgd.batch"]) == 1 and str(m["ode.model"]) != "rows"
    _check_int("threads", threads, 0, 4096)
    h = m._with(_mc_sets(runs, seed))
    rec = _lib.run_long(_lib.hdp_handle_validate, (h.ptr, threads, int(bool(with_sde))), progress)
    return ValidateResult._from_record(*_lib.record_dict(rec))


def epsilon(rho: float, delta: float) -> float:
    """epsilon of the (rho^2/2)-zCDP guarantee at delta, Canonne-Kamath-Steinke (rho as in
    docs/theory.md §1, inf: no privacy)."""
    out = _ctypes.c_double()
    _lib.call(_lib.hdp_handle_epsilon, float(rho), float(delta), _ctypes.byref(out))
    return out.value


def rho_for(epsilon: float, delta: float) -> float:
    """The rho whose (rho^2/2)-zCDP guarantee is (epsilon, delta)-DP exactly (CKS): use it as
    ``privacy.rho``."""
    out = _ctypes.c_double()
    _lib.call(_lib.hdp_handle_rho_for, float(epsilon), float(delta), _ctypes.byref(out))
    return out.value


def accountant(model: _ModelArg = None) -> "PrivacyResult":
    """The privacy of the model (``hdpsgd privacy``): a :class:`PrivacyResult` with rho,
    rho_z, epsilon (= epsilon_cks, Canonne-Kamath-Steinke) at delta = the model's privacy.delta
    (default 1e-5), epsilon_bs and rho_accounted, the accountant of docs/theory.md §6
    on the model's n discrete steps, and its precondition's numbers (see PrivacyResult)."""
    m = _model(model)
    rec = _ctypes.c_void_p()
    _lib.call(_lib.hdp_handle_accountant, m._handle.ptr, _ctypes.byref(rec))
    return PrivacyResult._from_record(*_lib.record_dict(rec))


def dpsgd_privacy(sample_rate: float, *, noise_multiplier: _Optional[float] = None,
                  epsilon: _Optional[float] = None, steps: _Optional[int] = None,
                  epochs: _Optional[float] = None, delta: float = 1e-5,
                  accountant: str = "pld") -> "DpsgdPrivacyResult":
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
        if not (e > 0 and _math.isfinite(e)) or not (0 < q <= 1):
            raise InputError("epochs = %r, sample_rate = %r: expected epochs > 0 and q in (0, 1]" % (epochs, sample_rate))
        t = e / q
        if not _math.isfinite(t):  # epochs = 1e300 at q = 1e-6: no integer of steps
            raise InputError(f"epochs = {epochs!r}, sample_rate = {sample_rate!r}: epochs/q "
                             "is not a finite number of steps (expected 1 to 100000000 steps)")
        steps = _math.ceil(round(t) if abs(t - round(t)) <= 1e-9 * round(t) else t)
    _check_int("steps", steps, 1, 100000000)
    if not isinstance(accountant, str) or "\0" in accountant:
        raise InputError("accountant: expected 'pld' or 'rdp'")
    rec = _ctypes.c_void_p()
    _lib.call(_lib.hdp_handle_poisson_accountant, q,
              float(noise_multiplier) if noise_multiplier is not None else 0.0,
              float(epsilon) if epsilon is not None else 0.0, int(steps), float(delta),
              accountant.encode(), _ctypes.byref(rec))
    return DpsgdPrivacyResult._from_record(*_lib.record_dict(rec))


def design(model: _ModelArg = None, *, family: _Union[str, "list[str]"] = "pl", knots: int = 8,
           tune_clip: bool = False, tune_batch: bool = False, refine: bool = False,
           refine_tol: float = 1e-5, method: _Optional[str] = None,
           progress: _Progress = None) -> "DesignResult":
    """The schedule of lowest predicted final risk at the model's rho (``hdpsgd schedule
    --optimize --family F --knots K [--tune-clip] [--tune-batch] [--refine --refine-tol TOL]
    [--method M]``): a :class:`DesignResult`. family is output, linear-noise, inverse-time (also
    spelt optimal), pl, a comma-separated list or all (the best is returned); 2 <= knots <= 512
    (default 8, as the command line). method: "bfgs" (quasi-Newton on the exact gradient of the
    final risk) or "simplex" (Nelder-Mead, the former method); None, the command line's default
    (bfgs). refine (pl only, family="pl", method bfgs): optimise at K knots, then at 2K - 1
    started from that optimum, ... until
    the final risk moves by less than refine_tol (relative, default 1e-5); the closed-form
    families are optimised too, for the comparison (their ``<family>_final_risk``), and the
    result holds refine_levels, refine_knots_<l> and refine_risk_<l> (coarse to fine).
    tune_batch (a one-pass model; not with refine): the design at sgd.batch = 1, 2, 4, ... (the
    batched one pass, docs/theory.md §3.11), the best batch's design returned (its model, with
    that sgd.batch, is the result's ``model``) with the JSON's batch numbers under its names:
    best_batch, columns batch_candidates and batch_final_risks, and the configuration in the
    accountants' terms: sample_rate, steps, noise_multiplier_min, noise_multiplier_median,
    noise_multiplier_max, rho_accounted, and standard Poisson DP-SGD at the same q, steps and
    (epsilon, delta): poisson_noise_multiplier, epsilon_pld, epsilon_rdp, epsilon_rdp_classic
    (NaN where the command line's JSON writes null)."""
    m = _model(model)
    if not isinstance(family, str):
        family = ",".join(family)
    knots = _check_int("knots", knots, 2, _lib.INT_MAX)  # the library says the upper limit
    tol = _real("refine_tol", refine_tol)
    if method is not None and not isinstance(method, str):
        raise InputError(f"method = {method!r}: expected 'bfgs', 'simplex' or None (bfgs)")
    if tune_batch and refine:
        raise InputError("design: tune_batch with refine: give one of them (as the command "
                         "line's --tune-batch with --refine)")
    rec = _lib.run_long(_lib.hdp_handle_design_method,
                        (m._handle.ptr, _lib.cstr(family, "family"), knots,
                         int(bool(tune_clip)), int(bool(tune_batch)), int(bool(refine)), tol,
                         None if method is None else _lib.cstr(method, "method")), progress)
    if tune_batch:
        cols, nums, texts = _lib.record_dict(rec)
        return DesignResult(cols, nums, texts, model=m.set("sgd.batch", nums["best_batch"]))
    return DesignResult(*_lib.record_dict(rec), model=m)


def _real(name, value):
    if isinstance(value, bool) or not isinstance(value, _numbers.Real):
        raise InputError(f"{name} = {value!r}: expected a number")
    return float(value)


def config(model: _ModelArg = None, *, all: bool = False) -> str:
    """The resolved model as the model file ``hdpsgd config`` prints (every key with its
    value, data.n resolved from data.gamma, ...), without its first comment line; all adds the
    sections of the other model families (``hdpsgd config --all``). The text reads back to the
    same model (a model on arrays: without them, which its first line says)."""
    m = _model(model)
    out = _ctypes.c_void_p()
    _lib.call(_lib.hdp_model_config_text, m._handle.ptr, int(bool(all)), _ctypes.byref(out))
    return m._arrays_note() + _lib.take_text(out)


# every family's fields under its prefix, optional: a call computes the families it is given
_FAMILY_PREFIXES = ("output_", "linear_noise_", "inverse_time_", "pl_")

RatesResult = _results.make(
    "RatesResult", "``hdpsgd rates``: columns ``gamma``, ``n`` and ``<family>_final_risk`` (each "
    "family's schedule optimised at each gamma = d/n, d fixed), and numbers ``<family>_slope`` "
    "(the fitted log-log slope on the smallest-gamma decade), ``<family>_theory_slope`` (the "
    "same fit of the theorem's rate, docs/theory.md §5), decade_lo, decade_hi, decade_points, "
    "rho, d and ode_solves: the JSON's names (family keys output, linear_noise, inverse_time, "
    "pl).",
    [("rates", "", False)]
    + [(t, p, True) for p in _FAMILY_PREFIXES for t in ("rates_risk", "rates_slope")]
    + [("rates_summary", "", False)], extra=[_MODEL_TEXT], csv="rates")


def _gammas(gammas):
    if isinstance(gammas, str):
        parts = gammas.split(":")
    else:
        try:
            parts = list(gammas)
        except TypeError:
            parts = []
    if len(parts) != 3:
        raise InputError(f"gammas = {gammas!r}: expected (lo, hi, count) or 'LO:HI:COUNT' with "
                         "0 < lo < hi < 1 and count >= 2")
    try:
        lo, hi = float(parts[0]), float(parts[1])
        count = int(parts[2]) if isinstance(parts[2], str) else parts[2]
    except ValueError:
        raise InputError(f"gammas = {gammas!r}: expected numbers lo, hi and an integer count") \
            from None
    return lo, hi, _check_int("count", count, 2, 200)


def rates(model: _ModelArg = None, *, gammas, families: _Optional[_Union[str, "list[str]"]] = None,
          tune_clip: bool = False, progress: _Progress = None) -> "RatesResult":
    """The final excess risk of each optimised schedule family against gamma = d/n and its
    log-log slope next to the theorem's (``hdpsgd rates --gammas LO:HI:COUNT --families LIST
    [--tune-clip]``): a :class:`RatesResult`. gammas is (lo, hi, count), count log-spaced values
    with 0 < lo < hi < 1 (required, as on the command line); families defaults to output,
    linear-noise, inverse-time (the theorem's three rates; pl may be added; optimal is read as
    inverse-time)."""
    m = _model(model)
    lo, hi, count = _gammas(gammas)
    if families is not None and not isinstance(families, str):
        families = ",".join(families)
    fam = None if families is None else _lib.cstr(families, "families")
    rec = _lib.run_long(_lib.hdp_handle_rates,
                        (m._handle.ptr, lo, hi, count, fam, int(bool(tune_clip))), progress)
    return RatesResult._from_record(*_lib.record_dict(rec))


def _classes(positive):
    """The classes mapped to +1 as a list of floats: an integer, integers, or "0,2,6"."""
    if isinstance(positive, str):
        items = [p.strip() for p in positive.split(",")]
    elif isinstance(positive, _numbers.Number):
        items = [positive]
    else:
        try:
            items = list(positive)
        except TypeError:
            items = [positive]
    out = []
    for x in items:
        try:
            v = float(int(x)) if isinstance(x, str) else float(x)
            ok = not isinstance(x, bool) and _math.isfinite(v) and v == int(v)
        except (TypeError, ValueError, OverflowError):
            ok = False
        if not ok:
            raise InputError(f"positive = {positive!r}: expected integer classes (an integer, "
                             "a list of them, or '0,2,6')")
        out.append(v)
    if not 1 <= len(out) <= 256:
        raise InputError(f"positive = {positive!r}: expected 1 to 256 classes")
    return out


def _file(name, path):
    if path is None:
        return None
    if not isinstance(path, (str, bytes, _os.PathLike)):
        raise TypeError(f"{name}: expected a file name, not {type(path).__name__}")
    return _lib.cstr(_os.fspath(path), name, path=True)


def dataset(features: _Union[str, "_os.PathLike[str]"], *,
            labels: _Optional[_Union[str, "_os.PathLike[str]"]] = None,
            positive: _Optional[_Union[int, str, "list[int]"]] = None,
            test_features: _Optional[_Union[str, "_os.PathLike[str]"]] = None,
            test_labels: _Optional[_Union[str, "_os.PathLike[str]"]] = None,
            center: bool = True, scale: str = "trace", ridge: float = 0.0) -> "DatasetResult":
    """A user's data set prepared as the toolkit's empirical model (``hdpsgd dataset FEATURES
    [--labels L] [--positive LIST] [--test-features T] [--test-labels TL] [--no-center]
    [--no-scale] [--ridge R] --json``, docs/theory.md §9): a :class:`DatasetResult` with the
    same numbers as the command's JSON summary.

    features: an N x d matrix in a ``.npy`` file (float32, float64 or integers, C or Fortran
    order), a ``.csv`` file (an optional header line) or an IDX file (MNIST's format), gzipped
    or not; labels: N labels in the same formats (1-D, or N x 1); positive: the classes mapped
    to +1, the others to -1 (an integer, a list of integers or "0,2,6"; default: the labels used
    as numbers); test_features, test_labels: held-out rows prepared with the training rows'
    mean, scale and basis, and their labels (the test MSE of theta*). center=False keeps the
    rows as they are (default: the mean row, and the labels' mean, subtracted); scale "trace"
    rescales the rows so that the covariance has mean eigenvalue 1, "none" leaves them; ridge
    >= 0 is the ridge of the least-squares target theta* = (Sigma + ridge I)^-1 X'y/N.
    A bad file raises :class:`InputError` naming it (and the row and column)."""
    if scale not in ("trace", "none"):
        raise InputError(f"scale = {scale!r}: expected 'trace' (mean eigenvalue 1) or 'none'")
    if positive is not None and labels is None:
        raise InputError("positive needs labels")
    if test_labels is not None and (test_features is None or labels is None):
        raise InputError("test_labels needs test_features and labels")
    r = _real("ridge", ridge)
    if not (r >= 0 and _math.isfinite(r)):
        raise InputError(f"ridge = {ridge!r}: expected a finite number >= 0")
    classes = _classes(positive) if positive is not None else []
    arr = (_ctypes.c_double * max(len(classes), 1))(*classes)
    rec = _ctypes.c_void_p()
    _lib.call(_lib.hdp_handle_dataset, _file("features", features), _file("labels", labels),
              arr, len(classes), _file("test_features", test_features),
              _file("test_labels", test_labels), int(bool(center)), scale.encode(), r,
              _ctypes.byref(rec))
    return DatasetResult._from_record(*_lib.record_dict(rec))


from ._plot import plot  # noqa: E402
from ._sweep import SweepResult, sweep  # noqa: E402
