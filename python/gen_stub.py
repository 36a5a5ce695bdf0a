"""Write hdpsgd/__init__.pyi, the package's type stub, from the library's result tables.

The result classes are made at import from the tables of include/hdpsgd/fields.h, which a
static type checker cannot run: this stub gives it their fields and types. Usage (with the
package importable, e.g. PYTHONPATH=build/python):

    python3 python/gen_stub.py            # rewrite python/hdpsgd/__init__.pyi
    python3 python/gen_stub.py --check    # exit 1 when the stub is not what the tables give
"""

import dataclasses
import os
import re
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
# the built package (PYTHONPATH), not this folder's sources, which have no _config.py
sys.path = [p for p in sys.path if os.path.abspath(p or ".") != HERE]

import hdpsgd  # noqa: E402
STUB = os.path.join(HERE, "hdpsgd", "__init__.pyi")

HEAD = '''# The type stub of hdpsgd, written by python/gen_stub.py from the library's result tables
# (include/hdpsgd/fields.h): do not edit; the test python_stub checks it.
from collections.abc import Callable, Iterator, Mapping
from os import PathLike
from typing import Any, Optional, Union

import numpy as np

from ._lib import (Cancelled as Cancelled, Error as Error, InputError as InputError,
                   NumericalError as NumericalError, OutOfMemoryError as OutOfMemoryError,
                   OutputError as OutputError)

__version__: str
VERSION: str
__all__: list[str]

_ModelArg = Optional[Union["Model", str, "PathLike[str]"]]
_Progress = Optional[Callable[[str, int, int, float], Any]]


def keys() -> dict[str, str]: ...


class Model(Mapping[str, Union[int, float, str]]):
    def __init__(self, path: Optional[Union[str, PathLike[str]]] = ...,
                 overrides: Optional[Mapping[str, Any]] = ..., **keys: Any) -> None: ...
    @classmethod
    def from_arrays(cls, X: Any, y: Any = ..., X_test: Any = ..., y_test: Any = ...,
                    overrides: Optional[Mapping[str, Any]] = ..., **keys: Any) -> Model: ...
    def replace(self, overrides: Optional[Mapping[str, Any]] = ..., /, **keys: Any) -> Model: ...
    def update(self, overrides: Mapping[str, Any]) -> Model: ...
    def set(self, key: str, value: Any) -> Model: ...
    def copy(self) -> Model: ...
    def __getitem__(self, key: str) -> Union[int, float, str]: ...
    def __iter__(self) -> Iterator[str]: ...
    def __len__(self) -> int: ...
    def to_dict(self) -> dict[str, Union[int, float, str]]: ...
    def to_ini(self) -> str: ...
    @property
    def path(self) -> Optional[str]: ...
    @property
    def overrides(self) -> list[str]: ...


class Result:
    columns: dict[str, np.ndarray]
    numbers: dict[str, Union[int, float, bool]]
    texts: dict[str, str]
    def __getattr__(self, name: str) -> Any: ...
    def __getitem__(self, name: str) -> Any: ...
    def __contains__(self, name: str) -> bool: ...
    def to_frame(self) -> Any: ...


class DesignResult(Result):
    model: Model
    def schedule_overrides(self, path: str) -> dict[str, Any]: ...
    def designed_model(self, path: str) -> Model: ...
    def to_table(self, path: str) -> str: ...


class SweepResult(Result):
    names: tuple[str, ...]
    axes: tuple[str, ...]
    commands: tuple[str, ...]


class _ResultBase:
    @property
    def columns(self) -> dict[str, np.ndarray]: ...
    @property
    def numbers(self) -> dict[str, Union[int, float, bool]]: ...
    @property
    def texts(self) -> dict[str, str]: ...
    def __getitem__(self, name: str) -> Any: ...
    def __contains__(self, name: str) -> bool: ...
    def to_frame(self) -> Any: ...
'''

TAIL = '''

def ode(model: _ModelArg = ..., *, rtol: Optional[float] = ...,
        points: Optional[int] = ...) -> OdeResult: ...
def sim(model: _ModelArg = ..., *, runs: Optional[int] = ..., threads: int = ...,
        seed: Optional[int] = ..., keep_runs: bool = ..., progress: _Progress = ...) -> McResult: ...
def sde(model: _ModelArg = ..., *, runs: Optional[int] = ..., threads: int = ...,
        seed: Optional[int] = ..., step: Optional[float] = ..., keep_runs: bool = ...,
        progress: _Progress = ...) -> McResult: ...
def validate(model: _ModelArg = ..., *, runs: Optional[int] = ..., threads: int = ...,
             seed: Optional[int] = ..., with_sde: Optional[bool] = ...,
             progress: _Progress = ...) -> ValidateResult: ...
def epsilon(rho: float, delta: float) -> float: ...
def rho_for(epsilon: float, delta: float) -> float: ...
def accountant(model: _ModelArg = ...) -> PrivacyResult: ...
def dpsgd_privacy(sample_rate: float, *, noise_multiplier: Optional[float] = ...,
                  epsilon: Optional[float] = ..., steps: Optional[int] = ...,
                  epochs: Optional[float] = ..., delta: float = ...,
                  accountant: str = ...) -> DpsgdPrivacyResult: ...
def design(model: _ModelArg = ..., *, family: Union[str, list[str]] = ..., knots: int = ...,
           tune_clip: bool = ..., tune_batch: bool = ..., refine: bool = ...,
           refine_tol: float = ..., method: Optional[str] = ...,
           progress: _Progress = ...) -> DesignResult: ...
def config(model: _ModelArg = ..., *, all: bool = ...) -> str: ...
def rates(model: _ModelArg = ..., *, gammas: Union[str, tuple[float, float, int]],
          families: Optional[Union[str, list[str]]] = ..., tune_clip: bool = ...,
          progress: _Progress = ...) -> RatesResult: ...
def plot(result: Union[OdeResult, McResult, ValidateResult], *, ax: Any = ...,
         label: Optional[str] = ..., logy: bool = ...) -> Any: ...
def sweep(model: _ModelArg = ..., axes: Optional[Mapping[str, Any]] = ..., *,
          commands: Union[str, tuple[str, ...], list[str]] = ...,
          schedule_families: Optional[Union[str, list[str]]] = ..., schedule_knots: int = ...,
          schedule_refine: bool = ..., schedule_refine_tol: float = ..., tune_clip: bool = ...,
          rates_gammas: Optional[Union[str, tuple[float, float, int]]] = ...,
          rates_families: Optional[Union[str, list[str]]] = ..., threads: int = ...,
          progress: _Progress = ...) -> SweepResult: ...
def dataset(features: Union[str, PathLike[str]], *,
            labels: Optional[Union[str, PathLike[str]]] = ...,
            positive: Optional[Union[int, str, list[int]]] = ...,
            test_features: Optional[Union[str, PathLike[str]]] = ...,
            test_labels: Optional[Union[str, PathLike[str]]] = ..., center: bool = ...,
            scale: str = ..., ridge: float = ...) -> DatasetResult: ...
'''

EXTRA = {"ValidateResult": '''    @property
    def sim_side(self) -> ValidateSide: ...
    @property
    def sde_side(self) -> Optional[ValidateSide]: ...
    @property
    def ode(self) -> OdeCurve: ...
    @property
    def sim(self) -> McCurve: ...
    @property
    def sde(self) -> Optional[McCurve]: ...
'''}

CLASSES = ["OdeResult", "OdeCurve", "McCurve", "McResult", "ValidateSide", "ValidateResult",
           "PrivacyResult", "DpsgdPrivacyResult", "RatesResult", "DatasetResult"]


def _type(t, optional):
    name = "np.ndarray" if t is np.ndarray else t.__name__
    return f"Optional[{name}]" if optional else name


def stub():
    out = [HEAD]
    for name in CLASSES:
        cls = getattr(hdpsgd, name)
        out.append(f"\n\nclass {name}(_ResultBase):")
        out.append(f'    """{cls.__doc__.splitlines()[0]}"""')
        spec = {attr: (typ, opt) for _rec, attr, typ, _h, opt in cls._fields_spec}
        for f in dataclasses.fields(cls):
            typ, opt = spec[f.name]
            out.append(f"    {f.name}: {_type(typ, opt)}")
        if name in EXTRA:
            out.append(EXTRA[name].rstrip("\n"))
    out.append(TAIL)
    text = "\n".join(out)
    missing = [n for n in hdpsgd.__all__
               if not re.search(rf"^(def|class) {n}\b|\b as {n}\b", text, re.M)]
    model = text[text.index("\nclass Model("):text.index("\nclass Result:")]
    missing += [f"Model.{n}" for n in dir(hdpsgd.Model) if not n.startswith("_")
                and n not in ("get", "items", "keys", "values")  # Mapping's
                and not re.search(rf"^    def {n}\(", model, re.M)]
    if missing:  # a name of the package's API the stub does not give
        sys.exit(f"gen_stub.py: the stub lacks {', '.join(missing)}: add them to "
                 "python/gen_stub.py")
    return text


def main():
    text = stub()
    if "--check" in sys.argv[1:]:
        with open(STUB) as f:
            if f.read() != text:
                print(f"{STUB} is not what the library's result tables give: run "
                      "python3 python/gen_stub.py", file=sys.stderr)
                return 1
        return 0
    with open(STUB, "w") as f:
        f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
