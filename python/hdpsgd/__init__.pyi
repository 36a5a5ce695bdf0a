# The type stub of hdpsgd, written by python/gen_stub.py from the library's result tables
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



class OdeResult(_ResultBase):
    """``hdpsgd ode``: the risk ODE's curve (the CSV's columns) and its JSON summary's numbers; on a data set (data.source = file) also its corrections and, with a held-out set, ode_test_mse (its value at t = 1 as a number, the curve in ``columns`` and ``ode_test_mse_curve``)."""
    t: np.ndarray
    risk: np.ndarray
    risk_upper: np.ndarray
    risk_lower: np.ndarray
    mu_c: np.ndarray
    nu_c: np.ndarray
    eta: np.ndarray
    sigma2: np.ndarray
    final_risk: float
    risk_before_final_noise: float
    final_noise: float
    stable: bool
    upper_finite_until: float
    lower_finite_until: float
    eta_sup: float
    bins: int
    rhs_evals: int
    steps: int
    solver: str
    solve_seconds: float
    binning_seconds: float
    clip_fit_seconds: float
    gamma: float
    n: int
    d: int
    rho: float
    model: str
    version: str
    data_rows: Optional[int]
    data_load_seconds: Optional[float]
    risk_bias: Optional[float]
    bias_cross_start: Optional[float]
    bias_cross_final: Optional[float]
    residual_tau2: Optional[float]
    heteroscedastic_ratio: Optional[float]
    heteroscedastic_final: Optional[float]
    bias_clipped_fraction: Optional[float]
    bias_newton_steps: Optional[int]
    bias_seconds: Optional[float]
    ode_test_mse: Optional[float]
    test_mse_star: Optional[float]
    ode_test_mse_curve: Optional[np.ndarray]


class OdeCurve(_ResultBase):
    """The risk ODE's curve (the CSV's columns) in a validation."""
    t: np.ndarray
    risk: np.ndarray
    risk_upper: np.ndarray
    risk_lower: np.ndarray
    mu_c: np.ndarray
    nu_c: np.ndarray
    eta: np.ndarray
    sigma2: np.ndarray


class McCurve(_ResultBase):
    """A Monte Carlo curve (the CSV's columns) in a validation."""
    t: np.ndarray
    mean: np.ndarray
    stderr: np.ndarray
    q10: np.ndarray
    q50: np.ndarray
    q90: np.ndarray
    clipped_fraction: np.ndarray


class McResult(_ResultBase):
    """``hdpsgd sim`` / ``hdpsgd sde``: the Monte Carlo's curve (the CSV's columns) and its JSON summary's numbers; ``final_risks`` with ``keep_runs=True``; the row statistics (nonexpansive_*, feature_*) for one-pass ``sim`` only; noise_multiplier, sample_rate, epsilon, ... for standard DP-SGD on a finite training set (sgd.sampling = shuffle | poisson); on a data set with a held-out set test_mse and test_mse_stderr (at t = 1 as numbers, the curves in ``columns`` and ``test_mse_curve``, ``test_mse_stderr_curve``)."""
    t: np.ndarray
    mean: np.ndarray
    stderr: np.ndarray
    q10: np.ndarray
    q50: np.ndarray
    q90: np.ndarray
    clipped_fraction: np.ndarray
    final_risk_mean: float
    final_risk_stderr: float
    final_jump_mean: float
    final_jump_stderr: float
    runs: int
    diverged_runs: int
    divergence_threshold: float
    rho_accounted: float
    gamma: float
    n: int
    d: int
    rho: float
    steps: int
    seconds: float
    threads: int
    command: str
    seed: int
    model: str
    version: str
    nonexpansive_violations: Optional[float]
    nonexpansive_violations_per_run: Optional[float]
    nonexpansive_violation_fraction: Optional[float]
    feature_norm: Optional[float]
    feature_clipped: Optional[float]
    noise_multiplier: Optional[float]
    noise_calibrated: Optional[bool]
    sample_rate: Optional[float]
    accounted_steps: Optional[int]
    epsilon: Optional[float]
    delta: Optional[float]
    test_mse: Optional[float]
    test_mse_stderr: Optional[float]
    test_mse_curve: Optional[np.ndarray]
    test_mse_stderr_curve: Optional[np.ndarray]
    final_risks: Optional[np.ndarray]


class ValidateSide(_ResultBase):
    """One side of the validator (a row of its table)."""
    max_abs_dev: float
    max_rel_dev: float
    max_z: float
    final_risk: float
    final_risk_stderr: float
    clipped_fraction: float
    passed: bool
    within_rel_tol: bool
    significant: bool
    max_z_point: int
    worst_point: int


class ValidateResult(_ResultBase):
    """``hdpsgd validate``: the JSON's numbers under its names (the Monte Carlo side bare, max_abs_dev, ..., its verdict sim_pass; the SDE side with sde_; ``passed`` the overall verdict), ``sim_side`` and ``sde_side`` (:class:`ValidateSide`), and the curves ``ode``, ``sim``, ``sde`` (their columns: ``ode.risk``, ``sim.mean``, ... in ``columns``)."""
    max_abs_dev: float
    max_rel_dev: float
    max_z: float
    final_risk: float
    final_risk_stderr: float
    clipped_fraction: float
    sim_pass: bool
    sim_within_rel_tol: bool
    sim_significant: bool
    max_z_point: int
    worst_point: int
    passed: bool
    ode_final_risk: float
    rho_z: float
    epsilon: float
    delta: float
    epsilon_cks: float
    epsilon_bs: float
    rel_tol: float
    z_tol: float
    runs: int
    diverged_runs: int
    nonexpansive_violations: float
    nonexpansive_violations_per_run: float
    nonexpansive_violation_fraction: float
    feature_norm: float
    feature_clipped: float
    gamma: float
    n: int
    d: int
    rho: float
    ode_curve_t: np.ndarray
    ode_curve_risk: np.ndarray
    ode_curve_risk_upper: np.ndarray
    ode_curve_risk_lower: np.ndarray
    ode_curve_mu_c: np.ndarray
    ode_curve_nu_c: np.ndarray
    ode_curve_eta: np.ndarray
    ode_curve_sigma2: np.ndarray
    sim_curve_t: np.ndarray
    sim_curve_mean: np.ndarray
    sim_curve_stderr: np.ndarray
    sim_curve_q10: np.ndarray
    sim_curve_q50: np.ndarray
    sim_curve_q90: np.ndarray
    sim_curve_clipped_fraction: np.ndarray
    t: np.ndarray
    model: str
    sde_max_abs_dev: Optional[float]
    sde_max_rel_dev: Optional[float]
    sde_max_z: Optional[float]
    sde_final_risk: Optional[float]
    sde_final_risk_stderr: Optional[float]
    sde_clipped_fraction: Optional[float]
    sde_pass: Optional[bool]
    sde_within_rel_tol: Optional[bool]
    sde_significant: Optional[bool]
    sde_max_z_point: Optional[int]
    sde_worst_point: Optional[int]
    sde_diverged_runs: Optional[int]
    data_rows: Optional[int]
    data_load_seconds: Optional[float]
    risk_bias: Optional[float]
    bias_cross_start: Optional[float]
    bias_cross_final: Optional[float]
    residual_tau2: Optional[float]
    heteroscedastic_ratio: Optional[float]
    heteroscedastic_final: Optional[float]
    bias_clipped_fraction: Optional[float]
    bias_newton_steps: Optional[int]
    bias_seconds: Optional[float]
    ode_test_mse: Optional[float]
    test_mse_star: Optional[float]
    test_mse: Optional[float]
    test_mse_stderr: Optional[float]
    sde_curve_t: Optional[np.ndarray]
    sde_curve_mean: Optional[np.ndarray]
    sde_curve_stderr: Optional[np.ndarray]
    sde_curve_q10: Optional[np.ndarray]
    sde_curve_q50: Optional[np.ndarray]
    sde_curve_q90: Optional[np.ndarray]
    sde_curve_clipped_fraction: Optional[np.ndarray]
    @property
    def sim_side(self) -> ValidateSide: ...
    @property
    def sde_side(self) -> Optional[ValidateSide]: ...
    @property
    def ode(self) -> OdeCurve: ...
    @property
    def sim(self) -> McCurve: ...
    @property
    def sde(self) -> Optional[McCurve]: ...


class PrivacyResult(_ResultBase):
    """``hdpsgd privacy``: the privacy of the model at its delta (privacy.delta), the accountant on its n discrete steps and the accountant's precondition (docs/theory.md §6.1)."""
    rho: float
    rho_z: float
    epsilon: float
    delta: float
    epsilon_bs: float
    epsilon_cks: float
    rho_accounted: float
    accountant_equals_rho: bool
    n: int
    schedule: str
    nonexpansive_eta_max: float
    nonexpansive_threshold: float
    nonexpansive_p_step: float
    nonexpansive_log10_p_step: float
    nonexpansive_expected_violations: float
    nonexpansive_expected_violations_lower: float
    nonexpansive_expected_exact: bool
    nonexpansive_negligible: bool
    feature_norm: float
    feature_clip_fraction: float
    feature_clip_moment: float
    model: str


class DpsgdPrivacyResult(_ResultBase):
    """``hdpsgd accountant``: DP-SGD with Poisson sampling."""
    epsilon_pld: float
    epsilon_pld_error: float
    epsilon_rdp: float
    epsilon_rdp_classic: float
    rdp_order: float
    rdp_order_classic: float
    noise_multiplier: float
    sample_rate: float
    steps: int
    delta: float
    pld_interval: float
    epsilon: float
    accountant: str
    target_epsilon: Optional[float]


class RatesResult(_ResultBase):
    """``hdpsgd rates``: columns ``gamma``, ``n`` and ``<family>_final_risk`` (each family's schedule optimised at each gamma = d/n, d fixed), and numbers ``<family>_slope`` (the fitted log-log slope on the smallest-gamma decade), ``<family>_theory_slope`` (the same fit of the theorem's rate, docs/theory.md §5), decade_lo, decade_hi, decade_points, rho, d and ode_solves: the JSON's names (family keys output, linear_noise, inverse_time, pl)."""
    gamma: np.ndarray
    n: np.ndarray
    decade_lo: float
    decade_hi: float
    decade_points: int
    rho: float
    d: int
    ode_solves: int
    model: str
    output_final_risk: Optional[np.ndarray]
    output_slope: Optional[float]
    output_theory_slope: Optional[float]
    linear_noise_final_risk: Optional[np.ndarray]
    linear_noise_slope: Optional[float]
    linear_noise_theory_slope: Optional[float]
    inverse_time_final_risk: Optional[np.ndarray]
    inverse_time_slope: Optional[float]
    inverse_time_theory_slope: Optional[float]
    pl_final_risk: Optional[np.ndarray]
    pl_slope: Optional[float]
    pl_theory_slope: Optional[float]


class DatasetResult(_ResultBase):
    """``hdpsgd dataset --json``: a user's data set prepared as the toolkit's empirical model (docs/theory.md §9), the JSON summary's numbers, texts and columns under its names (the files' names it echoes are the call's arguments): always n, d, storage, center, scale, scale_factor, trace_raw, trace and the column eigenvalues; with labels ridge, label_mean, label_variance, theta_norm, risk0, residual_variance and the column energy (positive_count with classes); with test features test_n (test_mse with their labels). A field that does not apply is None."""
    n: int
    d: int
    storage: str
    center: bool
    scale: str
    scale_factor: float
    trace_raw: float
    trace: float
    eigenvalues: np.ndarray
    positive_count: Optional[int]
    ridge: Optional[float]
    label_mean: Optional[float]
    label_variance: Optional[float]
    theta_norm: Optional[float]
    risk0: Optional[float]
    residual_variance: Optional[float]
    energy: Optional[np.ndarray]
    test_n: Optional[int]
    test_mse: Optional[float]


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
