"""The result classes, produced from the library's result tables (include/hdpsgd/fields.h).

Every field of a result (its name, its kind and its one-line help) is described once, in the
C library; the command line's JSON and CSV, the handle's records and the classes here are all
written from that description. A class is a frozen dataclass whose fields are the tables'
fields: NumPy arrays for the columns, ``float``, ``int``, ``bool`` and ``str`` for the rest;
its docstring lists every field with its help.
"""

import ctypes as _ctypes
import dataclasses as _dataclasses
import keyword as _keyword
import sys as _sys
from typing import Optional as _Optional

import numpy as np

from . import _lib

_KINDS = {0: float, 1: int, 2: bool, 3: str, 4: np.ndarray}


def _table(name):
    """[(record name, python type, help)] of the library's table `name`."""
    lib = _lib.lib
    fn = lib.hdp_result_field
    fn.restype = _ctypes.c_char_p
    fn.argtypes = [_ctypes.c_char_p, _ctypes.c_int, _ctypes.POINTER(_ctypes.c_int),
                   _ctypes.POINTER(_ctypes.c_char_p)]
    out, kind, help_ = [], _ctypes.c_int(), _ctypes.c_char_p()
    i = 0
    while True:
        got = fn(name.encode(), i, _ctypes.byref(kind), _ctypes.byref(help_))
        if got is None:
            break
        out.append((got.decode(), _KINDS[kind.value], (help_.value or b"").decode()))
        i += 1
    if not out:
        raise ImportError(f"hdpsgd: the library has no result table {name!r}; "
                          "libhdpsgd.so and the Python package are of different versions")
    return out


def _table_help(name):
    fn = _lib.lib.hdp_result_table
    fn.restype = _ctypes.c_char_p
    fn.argtypes = [_ctypes.c_int, _ctypes.POINTER(_ctypes.c_char_p)]
    help_ = _ctypes.c_char_p()
    i = 0
    while True:
        got = fn(i, _ctypes.byref(help_))
        if got is None:
            return ""
        if got.decode() == name:
            return (help_.value or b"").decode()
        i += 1


def _attr(name):
    """The attribute of a record name: 'pass' (a keyword) is 'passed'; the validator's curves
    'sim.mean' are 'sim_curve_mean' (also reached as v.sim.mean)."""
    if "." in name:
        side, col = name.split(".", 1)
        return f"{side}_curve_{col}"
    return "passed" if name == "pass" else name + "_" if _keyword.iskeyword(name) else name


class Frame:
    """``to_frame()`` and the short ``repr`` every result shares (the dataclasses below and the
    design's dict-based result): its ``columns`` named by ``_csv_columns``."""

    _csv_columns = ()

    def to_frame(self):
        """The curve as a pandas DataFrame (the CSV's columns), or a dict of arrays when pandas
        is not installed."""
        cols = self.columns
        data = {c: cols[c] for c in self._csv_columns if c in cols}
        try:
            import pandas
        except ImportError:
            return data
        return pandas.DataFrame(data)

    def __repr__(self):
        scal = ", ".join(f"{k}={v!r}" for k, v in list(self.numbers.items())[:4])
        if not scal:  # columns only (a curve, a sweep): their length and names
            cols = self.columns
            rows = len(next(iter(cols.values()))) if cols else 0
            scal = f"{rows} rows: " + ", ".join(list(cols)[:6])
        return f"<hdpsgd.{type(self).__name__} {scal}, ...>"


class Base(Frame):
    """What every result has: its fields as attributes (``r.final_risk``) and by the
    command line's names (``r["final_risk"]``), ``columns``, ``numbers``, ``texts`` (dicts),
    ``to_frame()``."""

    _fields_spec = ()   # ((record name, attribute, type, help, optional), ...)
    _csv_columns = ()

    @classmethod
    def _from_record(cls, cols, nums, texts, **extra):
        kw = {}
        for name, attr, typ, _help, optional in cls._fields_spec:
            src = cols if typ is np.ndarray else texts if name in texts else nums
            if name in src:
                v = src[name]
                if typ is np.ndarray:
                    v = np.asarray(v, dtype=float)
                    v.flags.writeable = False
                elif typ is int and isinstance(v, str):
                    v = int(v)  # the seed, a text in the record (64 bits)
                kw[attr] = v
            elif not optional:
                raise _lib.Error(f"hdpsgd: the library's {cls.__name__} record lacks {name!r}")
        kw.update(extra)
        return cls(**kw)

    def _items(self):
        for name, attr, typ, _help, _optional in self._fields_spec:
            v = getattr(self, attr)
            if v is not None:
                yield name, typ, v

    @property
    def columns(self):
        """The columns (NumPy arrays) by name."""
        return {k: v for k, t, v in self._items() if t is np.ndarray}

    @property
    def numbers(self):
        """The numbers (float, int, bool) by name."""
        return {k: v for k, t, v in self._items() if t not in (np.ndarray, str)}

    @property
    def texts(self):
        """The texts by name."""
        return {k: v for k, t, v in self._items() if t is str}

    def __getitem__(self, name):
        for k, _t, v in self._items():
            if k == name:
                return v
        raise KeyError(name)

    def __contains__(self, name):
        return any(k == name for k, _t, _v in self._items())

    def __setstate__(self, state):
        """A copy (copy.deepcopy, pickle) keeps the columns read-only, as the original."""
        for v in state.values():
            if isinstance(v, np.ndarray):
                v.flags.writeable = False
        self.__dict__.update(state)



# the validator side's fields the library names with sim_ when written without prefix
# (HDP_FIELD_OWN_PREFIX in src/drivers/fields.c): "pass" is the overall verdict
SIM_PREFIXED = ("pass", "within_rel_tol", "significant")


def make(cls_name, doc, parts, base=Base, extra=(), csv=None, own_prefix=True):
    """A frozen dataclass from library tables.

    parts: (table, prefix, optional[, "columns"]) — the fields (or only the columns) of the
    library's table under prefix, as the handle's record names them (with own_prefix, the
    validator's side without prefix has its verdict as sim_pass, "pass" being the overall
    one, as in the library); extra: (record name, type, help, optional) fields the job adds
    (the seed), or tables (table, prefix, optional) in their place (the model, the version); csv: the table (or tables) whose columns make to_frame()."""
    spec, seen = [], set()
    for table, prefix, optional, *what in parts:
        for name, typ, help_ in _table(table):
            if what and typ is not np.ndarray:
                continue
            rec = prefix + name
            if own_prefix and table == "validate_side" and not prefix and name in SIM_PREFIXED:
                rec = "sim_" + name  # the bare sim side's verdict: "pass" is the overall one
            spec.append((rec, typ, help_, optional))
    for item in extra:  # a field, or a table's fields (table, prefix, optional) in its place
        if len(item) == 3:
            spec += [(item[1] + name, typ, help_, item[2]) for name, typ, help_ in _table(item[0])]
        else:
            spec.append(item)
    # a column named as a number (the held-out MSE: its value at t = 1 in the JSON, its curve
    # in the CSV) keeps its record name in ``columns``; its attribute is NAME_curve
    scalars = {rec for rec, typ, _h, _o in spec if typ is not np.ndarray}
    fields, spec_out, lines = [], [], []
    for rec, typ, help_, optional in spec:
        attr = _attr(rec) + ("_curve" if typ is np.ndarray and rec in scalars else "")
        if attr in seen:
            raise ImportError(f"hdpsgd: {cls_name} has the field {attr!r} twice")
        seen.add(attr)
        ann = _Optional[typ] if optional else typ
        f = _dataclasses.field(default=None, metadata={"help": help_, "name": rec}) \
            if optional else _dataclasses.field(metadata={"help": help_, "name": rec})
        fields.append((attr, ann, f))
        spec_out.append((rec, attr, typ, help_, optional))
        lines.append(f"    {attr} ({getattr(typ, '__name__', typ)}"
                     f"{', optional' if optional else ''}): {help_}")
    ns = {"_fields_spec": tuple(spec_out), "__module__": "hdpsgd"}
    if csv:  # a table, or several (their columns in order)
        ns["_csv_columns"] = tuple(n for c in ((csv,) if isinstance(csv, str) else csv)
                                   for n, t, _h in _table(c) if t is np.ndarray)
    # the fields without a default first (Python 3.9 has no kw_only; the records are passed by
    # keyword anyway)
    fields.sort(key=lambda f: f[2].default is not _dataclasses.MISSING)
    extra_kw = {"kw_only": True} if _sys.version_info >= (3, 10) else {}
    cls = _dataclasses.make_dataclass(cls_name, fields, bases=(base,), namespace=ns, frozen=True,
                                      repr=False, eq=False, **extra_kw)
    helps = list(dict.fromkeys(_table_help(t) for t, *_rest in parts))
    cls.__doc__ = (doc + ("\n\n" + "; ".join(h for h in helps if h) + "." if any(helps) else "")
                   + "\n\nFields:\n" + "\n".join(lines))
    return cls
