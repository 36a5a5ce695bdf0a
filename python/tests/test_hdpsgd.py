"""Tests of the Python package hdpsgd (issue 24), run by ctest -L python.

Every number the package returns is compared with the ``hdpsgd`` program's output for the
same model and seed: JSON values (written with %.17g) must be equal as doubles, CSV fields
(%.12g, t with %.10g) equal as text. Environment: PYTHONPATH=BUILD/python,
HDPSGD_CLI=BUILD/hdpsgd, HDPSGD_SOURCE_DIR=the source tree.
"""

import ctypes
import ctypes.util
import json
import math
import os
import signal
import subprocess
import sys
import tempfile
import threading
import unittest

import numpy as np

import hdpsgd
from hdpsgd import _lib

CLI = os.environ["HDPSGD_CLI"]
SRC = os.environ["HDPSGD_SOURCE_DIR"]
MODELS = os.path.join(SRC, "models")


def cli(*args, json_out=True, csv_out=True, expect=0):
    """Run the program; returns (json dict or None, csv rows (list of dicts) or None,
    metadata lines, stdout)."""
    with tempfile.TemporaryDirectory() as tmp:
        j, c = os.path.join(tmp, "o.json"), os.path.join(tmp, "o.csv")
        cmd = [CLI, *args]
        if json_out:
            cmd += ["--json", j]
        if csv_out:
            cmd += ["-o", c]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != expect:
            raise AssertionError(f"{cmd}: exit {p.returncode}\n{p.stderr}")
        data = None
        if json_out:
            with open(j) as f:
                data = json.load(f)
        rows, meta = None, []
        if csv_out:
            with open(c) as f:
                lines = f.read().splitlines()
            meta = [ln for ln in lines if ln.startswith("#")]
            body = [ln for ln in lines if not ln.startswith("#")]
            head = body[0].split(",")
            rows = [dict(zip(head, ln.split(","))) for ln in body[1:]]
        return data, rows, meta, p.stdout


def _read(path):
    with open(path) as f:
        return f.read()


def json_equal(test, data, result, keys):
    for k in keys:
        want = data[k]
        got = result[k]
        if want is None:  # JSON null: inf (rho = inf, no private noise)
            test.assertTrue(math.isinf(got), f"{k}: {got} (JSON null)")
        elif isinstance(want, bool):
            test.assertIs(got, want, k)
        else:
            test.assertEqual(got, want, f"{k}: Python {got!r} != CLI {want!r}")


def csv_equal(test, rows, result, columns):
    for col in columns:
        arr = result.columns[col]
        test.assertEqual(len(arr), len(rows), col)
        fmt = "%.10g" if col == "t" else "%.12g"
        for i, row in enumerate(rows):
            test.assertEqual(fmt % arr[i], row[col], f"{col}[{i}]")


def meta_values(meta):
    """The model of a CSV header: '# [section]' and '# key = value' lines."""
    out = {}
    section = None
    for ln in meta:
        if ln.startswith("# [") and ln.endswith("]"):
            section = ln[3:-1]
        elif section and ln.startswith("# ") and not ln.startswith("# ;") and " = " in ln:
            k, v = ln[2:].split(" = ", 1)
            out[f"{section}.{k}"] = v
    return out


class Test_model(unittest.TestCase):
    def test_default_is_the_programs_default(self):
        m = hdpsgd.Model()
        _, _, meta, _ = cli("ode", json_out=False)
        want = meta_values(meta)
        # ode's header: the core's sections, less data.n (gamma carries it), the empty file
        # names and the forms of the privacy budget not given (rho is)
        core = {"data", "clip", "privacy", "schedule", "sgd", "ode", "sim", "sde", "validate"}
        left = {"data.n", "data.spectrum_file", "data.noise_file", "schedule.file", "privacy.rho_zcdp",
                "privacy.epsilon", "privacy.delta", "data.features", "data.labels",
                "data.labels_positive", "data.test_features", "data.test_labels",
                "data.target_file"}
        self.assertEqual(set(want), {k for k in hdpsgd.keys()
                                     if k.split(".")[0] in core and k not in left})
        for k, v in want.items():
            got = m[k]
            text = str(got).lower() if isinstance(got, bool) else str(got)
            self.assertEqual(text if not isinstance(got, float) else v, v, k)
            self.assertEqual(m[k], hdpsgd._text_value(v), k)
        self.assertEqual(m["clip.c"], 0.3)
        self.assertEqual(m["data.n"], 2000)  # resolved from gamma = 0.1
        self.assertEqual(m["schedule.kind"], "inverse-time")

    def test_switches_are_booleans(self):
        """data.center and ode.discrete read as bool and are set from bool (user trial: they
        read as the texts "true"/"false", so `if m["ode.discrete"]:` was always taken, and
        True was refused)"""
        m = hdpsgd.Model()
        self.assertIs(m["ode.discrete"], False)
        self.assertIs(m["data.center"], True)
        d = m.replace(ode__discrete=True, ode__bins=8)
        self.assertIs(d["ode.discrete"], True)
        self.assertIs(m.replace(ode__discrete=np.True_)["ode.discrete"], True)
        self.assertEqual(hdpsgd.ode(d).final_risk,
                         hdpsgd.ode(m.replace(ode__discrete="true", ode__bins=8)).final_risk)
        self.assertIn("[ode]\n", d.to_ini())
        self.assertIn("discrete = true\n", d.to_ini())
        with self.assertRaisesRegex(hdpsgd.InputError, r"\[clip\] c = 'true' is not a number"):
            m.replace(clip__c=True)
        r = hdpsgd.sweep(m.replace(ode__bins=8), {"ode.discrete": [False, True]})
        self.assertEqual(r["ode.discrete"].tolist(), [False, True])
        self.assertEqual(r.ode_final_risk[1], float("%.10g" % hdpsgd.ode(d).final_risk))

    def test_file_and_overrides_resolve_like_the_program(self):
        path = os.path.join(MODELS, "powerlaw.ini")
        m = hdpsgd.Model(path, {"clip.c": 0.5, "data.d": 300, "privacy.rho": float("inf")})
        _, _, meta, _ = cli("ode", path, "--set", "clip.c=0.5", "--set", "data.d=300",
                            "--set", "privacy.rho=inf", json_out=False)
        want = meta_values(meta)
        for k, v in want.items():
            self.assertEqual(m[k], hdpsgd._text_value(v), k)
        self.assertTrue(math.isinf(m["privacy.rho"]))
        self.assertEqual(m.path, path)

    def test_set_returns_a_new_model_and_resolves(self):
        base = hdpsgd.Model()
        m = base.set("data.d", 400)
        self.assertIsNot(m, base)
        self.assertEqual(base["data.d"], 200)  # immutable: the first one is unchanged
        self.assertEqual(m["data.d"], 400)
        self.assertEqual(m["data.n"], 4000)  # gamma = 0.1 kept
        m = m.set("data.n", 1000)
        self.assertEqual(m["data.gamma"], 0.4)
        self.assertEqual(m.overrides, ["data.d=400", "data.n=1000"])
        self.assertEqual(m.replace(data__d=500)["data.d"], 500)
        self.assertEqual(m.replace({"clip.c": 0.25}, data__d=500).overrides[-2:],
                         ["clip.c=0.25", "data.d=500"])
        self.assertEqual(hdpsgd.Model(clip__c=0.5)["clip.c"], 0.5)
        with self.assertRaises(AttributeError):
            m._sets = []
        with self.assertRaises(ValueError):
            m.replace(clipc=1)
        self.assertEqual(dict(m)["data.d"], 400)  # a mapping of every key
        self.assertEqual(len(m), len(hdpsgd.keys()))
        self.assertEqual(m.copy().set("data.d", np.int64(500))["data.d"], 500)
        self.assertEqual(m.copy().set("clip.c", np.float64(0.1) + 0.2)["clip.c"], 0.1 + 0.2)
        c = m.copy().set("clip.c", 2)
        self.assertEqual(c["clip.c"], 2)
        self.assertEqual(m["clip.c"], 0.3)

    def test_bad_key_raises_value_error_naming_it(self):
        m = hdpsgd.Model()
        with self.assertRaises(ValueError) as cm:
            m.set("clip.cc", 1)
        self.assertIn("'cc'", str(cm.exception))
        self.assertIn("did you mean [clip] c", str(cm.exception))
        self.assertIsInstance(cm.exception, hdpsgd.InputError)
        with self.assertRaises(ValueError) as cm:
            hdpsgd.Model(overrides={"privacy.rh0": 1})
        self.assertIn("rh0", str(cm.exception))
        with self.assertRaises(ValueError):
            m.set("clip", 1)
        with self.assertRaises(ValueError):
            m.set("clip.c=1", 1)

    def test_bad_value_raises_and_keeps_the_model(self):
        m = hdpsgd.Model().set("clip.c", 0.7)
        with self.assertRaises(ValueError) as cm:
            m.set("data.d", -4)
        self.assertIn("[data] d = -4 is out of range", str(cm.exception))
        with self.assertRaises(ValueError) as cm:
            m.set("schedule.kind", "nonsense")
        self.assertIn("kind", str(cm.exception))
        with self.assertRaises(ValueError) as cm:
            m.set("privacy.rho", True)
        self.assertEqual(m["clip.c"], 0.7)
        self.assertEqual(m["data.d"], 200)
        self.assertEqual(hdpsgd.ode(m).final_risk, hdpsgd.ode(hdpsgd.Model().set("clip.c", 0.7)).final_risk)

    def test_unknown_key_read(self):
        m = hdpsgd.Model()
        with self.assertRaises(KeyError) as cm:
            m["clip.cc"]
        self.assertIsInstance(cm.exception, ValueError)
        self.assertIn("clip.cc", str(cm.exception))
        self.assertIsNone(m.get("nope.nope"))
        with self.assertRaises(KeyError):
            m[3]

    def test_missing_file(self):
        with self.assertRaises(ValueError) as cm:
            hdpsgd.Model("/nonexistent/model.ini")
        self.assertIn("/nonexistent/model.ini", str(cm.exception))
        with self.assertRaises(ValueError):
            hdpsgd.Model(MODELS)  # a directory

    def test_to_ini_reads_back(self):
        m = hdpsgd.Model(os.path.join(MODELS, "twolevel.ini"), {"clip.c": 0.123456789012345})
        with tempfile.TemporaryDirectory() as tmp:
            p = os.path.join(tmp, "m.ini")
            with open(p, "w") as f:
                f.write(m.to_ini())
            m2 = hdpsgd.Model(p)
            self.assertEqual(m.to_dict(), m2.to_dict())
            self.assertEqual(hdpsgd.ode(m).final_risk, hdpsgd.ode(m2).final_risk)
        self.assertIn("[clip]\nc = 0.123456789012345\n", m.to_ini())

    def test_copy_and_pickle(self):
        """copy.deepcopy and pickle of a model (user trial): once a double free of the C model
        (the copy owned the same pointer); now the model itself, or built again when unpickled"""
        import copy
        import pickle
        m = hdpsgd.Model(os.path.join(MODELS, "twolevel.ini"), {"clip.c": 0.7})
        self.assertIs(copy.copy(m), m)
        self.assertIs(copy.deepcopy(m), m)
        self.assertIs(copy.deepcopy([m])[0], m)
        m2 = pickle.loads(pickle.dumps(m))
        self.assertEqual(m2.to_dict(), m.to_dict())
        self.assertEqual((m2.path, m2.overrides), (m.path, m.overrides))
        self.assertEqual(hdpsgd.ode(m2).final_risk, hdpsgd.ode(m).final_risk)
        X = np.arange(60.0).reshape(20, 3) % 7 + np.arange(3)
        ma = hdpsgd.Model.from_arrays(X, X[:, 0] - X[:, 1], clip__c=0.5)
        ma2 = pickle.loads(pickle.dumps(ma))
        self.assertEqual(hdpsgd.ode(ma2).final_risk, hdpsgd.ode(ma).final_risk)
        d = hdpsgd.design(m.replace(ode__bins=8), knots=3)
        self.assertIs(copy.deepcopy(d).model, d.model)
        with self.assertRaisesRegex(TypeError, "cannot be copied"):
            copy.copy(m._handle)

    def test_relative_file_names_are_made_absolute(self):
        with tempfile.TemporaryDirectory() as tmp:
            old = os.getcwd()
            try:
                os.chdir(tmp)
                with open("eig.txt", "w") as f:
                    f.write("\n".join(str(1 + i % 3) for i in range(50)) + "\n")
                m = hdpsgd.Model(overrides={"data.spectrum": "file",
                                            "data.spectrum_file": "eig.txt", "data.d": 50})
                os.chdir(old)
                self.assertTrue(m["data.spectrum_file"].endswith("/eig.txt"))
                self.assertTrue(os.path.isabs(m["data.spectrum_file"]))
                self.assertGreater(hdpsgd.ode(m).final_risk, 0)
            finally:
                os.chdir(old)

    def test_keys(self):
        k = hdpsgd.keys()
        self.assertEqual(k["clip.c"], "0.3")
        self.assertIn("sim.seed", k)
        self.assertEqual(sorted(k), sorted(hdpsgd.Model().keys()))


class Test_data(unittest.TestCase):
    """A model on a user's data (docs/theory.md §9): NumPy arrays handed to the library in
    memory give the numbers the same arrays give as files, in Python and in the program."""

    def test_from_arrays_is_the_files(self):
        rng = np.random.default_rng(5)
        X = rng.standard_normal((300, 10)) * np.linspace(2, 0.5, 10) + 0.7
        y = X @ rng.standard_normal(10) * 0.2 + 0.3 * rng.standard_exponential(300)
        Xt, yt = X[:80] + 0.01, y[:80]
        keys = {"data.gamma": 0.1, "clip.c": 0.5, "privacy.rho": 2.0, "sim.runs": 20,
                "ode.points": 11}
        with tempfile.TemporaryDirectory() as tmp:
            paths = [os.path.join(tmp, n) for n in ("X.npy", "y.npy", "Xt.npy", "yt.npy")]
            for pth, arr in zip(paths, (X, y, Xt, yt)):
                np.save(pth, arr)
            files = {"data.source": "file", "data.features": paths[0], "data.labels": paths[1],
                     "data.test_features": paths[2], "data.test_labels": paths[3]}
            mf = hdpsgd.Model(overrides={**files, **keys})
            ma = hdpsgd.Model.from_arrays(X, y, Xt, yt, overrides=keys)
            of, oa = hdpsgd.ode(mf), hdpsgd.ode(ma)
            self.assertEqual(of.final_risk, oa.final_risk)
            sf, sa = hdpsgd.sim(mf), hdpsgd.sim(ma)
            self.assertEqual(sf.final_risk_mean, sa.final_risk_mean)
            sets = [a for k, v in {**files, **keys}.items() for a in ("--set", f"{k}={v}")]
            data, _, _, _ = cli("ode", *sets)
            self.assertEqual(data["final_risk"], oa.final_risk)
            self.assertGreater(data["risk_bias"], 0)
            # a change of key keeps the arrays
            self.assertEqual(hdpsgd.ode(ma.replace(clip__c=1.0)).final_risk,
                             hdpsgd.ode(mf.replace(clip__c=1.0)).final_risk)

    def test_held_out_mse_is_the_cli(self):
        """with a held-out set: sim's test_mse, test_mse_stderr (JSON numbers at t = 1, CSV
        columns) and the ODE's data fields and ode_test_mse, as the program writes them"""
        rng = np.random.default_rng(8)
        X = rng.standard_normal((200, 6)) * np.linspace(1.5, 0.4, 6) + 0.2
        y = X @ rng.standard_normal(6) * 0.3 + 0.2 * rng.standard_normal(200)
        Xt = rng.standard_normal((50, 6)) * np.linspace(1.5, 0.4, 6) + 0.2
        yt = Xt @ rng.standard_normal(6) * 0.3
        keys = {"data.gamma": 0.1, "clip.c": 0.5, "privacy.rho": 2.0, "ode.points": 11}
        with tempfile.TemporaryDirectory() as tmp:
            paths = [os.path.join(tmp, n) for n in ("X.npy", "y.npy", "Xt.npy", "yt.npy")]
            for pth, arr in zip(paths, (X, y, Xt, yt)):
                np.save(pth, arr)
            files = {"data.source": "file", "data.features": paths[0], "data.labels": paths[1],
                     "data.test_features": paths[2], "data.test_labels": paths[3]}
            sets = [a for k, v in {**files, **keys}.items() for a in ("--set", f"{k}={v}")]
            m = hdpsgd.Model.from_arrays(X, y, Xt, yt, overrides=keys)
            data, rows, _, _ = cli("sim", "--runs", "12", "--seed", "3", *sets)
            s = hdpsgd.sim(m, runs=12, seed=3)
            json_equal(self, data, s, ["test_mse", "test_mse_stderr"] + Test_mc.KEYS)
            self.assertIsInstance(s.test_mse, float)
            self.assertGreater(s.test_mse_stderr, 0)
            csv_equal(self, rows, s, Test_mc.COLS + ["test_mse", "test_mse_stderr"])
            self.assertIs(s.test_mse_curve, s.columns["test_mse"])
            self.assertEqual(s.test_mse_curve[-1], s.test_mse)
            self.assertEqual(s.test_mse_stderr_curve[-1], s.test_mse_stderr)
            self.assertIn("test_mse", s.to_frame())
            data, rows, _, _ = cli("ode", *sets)
            o = hdpsgd.ode(m)
            names = [k for k in data if k in o.numbers and not k.endswith("seconds")]  # timers
            self.assertIn("ode_test_mse", names)
            self.assertIn("risk_bias", names)
            json_equal(self, data, o, names)
            csv_equal(self, rows, o, ["t", "risk", "ode_test_mse"])
            self.assertEqual(o.ode_test_mse_curve[-1], o.ode_test_mse)
            data, _, _, _ = cli("validate", "--runs", "12", "--seed", "3", "--no-sde", *sets,
                                csv_out=False)
            v = hdpsgd.validate(m, runs=12, seed=3, with_sde=False)
            json_equal(self, data, v, ["test_mse", "test_mse_stderr", "risk_bias", "ode_test_mse",
                                      "test_mse_star", "residual_tau2"])
            self.assertEqual(v.test_mse, s.test_mse)
        # without a held-out set the fields are absent
        s = hdpsgd.sim(hdpsgd.Model.from_arrays(X, y, overrides=keys), runs=4, seed=3)
        self.assertIsNone(s.test_mse)
        self.assertNotIn("test_mse", s.columns)

    def test_the_model_keeps_its_own_arrays(self):
        """the caller's arrays changed after from_arrays change neither the model nor the models
        replace() makes from it (user trial: replace() rebuilt from the caller's array itself)"""
        rng = np.random.default_rng(3)
        X = rng.standard_normal((120, 6))
        y = X @ rng.standard_normal(6) + 0.1 * rng.standard_normal(120)
        want = hdpsgd.ode(hdpsgd.Model.from_arrays(X, y, clip__c=0.5)).final_risk
        Xc, yc = X.copy(), y.copy()
        m = hdpsgd.Model.from_arrays(Xc, yc)
        Xc *= 3.0
        yc[:] = 0.0
        self.assertEqual(hdpsgd.ode(m.replace(clip__c=0.5)).final_risk, want)
        self.assertFalse(any(a.flags.writeable for a in m._arrays if a is not None))

    def test_models_on_other_arrays_differ(self):
        """== compares the arrays too (user trial: two models on different arrays, different
        numbers, compared equal: no key holds the data)"""
        rng = np.random.default_rng(4)
        X, X2 = rng.standard_normal((40, 4)), rng.standard_normal((40, 4))
        y = X[:, 0] - X[:, 1]
        a, b = hdpsgd.Model.from_arrays(X, y), hdpsgd.Model.from_arrays(X2, y)
        self.assertNotEqual(hdpsgd.ode(a).final_risk, hdpsgd.ode(b).final_risk)
        self.assertNotEqual(a, b)
        self.assertEqual(a, hdpsgd.Model.from_arrays(X.copy(), y.copy()))
        self.assertNotEqual(a, hdpsgd.Model.from_arrays(X, y, X[:5], y[:5]))
        self.assertEqual(a.replace(clip__c=0.5), a.replace(clip__c=0.5))
        self.assertNotEqual(a.replace(clip__c=0.5), b.replace(clip__c=0.5))
        self.assertEqual(hdpsgd.Model(), hdpsgd.Model(clip__c=0.3))
        self.assertNotEqual(hdpsgd.Model(), a)
        self.assertEqual(hdpsgd.Model(), dict(hdpsgd.Model()))

    def test_written_without_the_arrays_says_so(self):
        """to_ini() and config() of a model on arrays cannot name them: their first line says
        so, and the repr names the arrays (user trial: no word of it, the repr said '(built-in
        default)')"""
        X = np.arange(60.0).reshape(20, 3) % 7 + np.arange(3)
        m = hdpsgd.Model.from_arrays(X, X[:, 0] - X[:, 1], clip__c=0.5)
        for text in (m.to_ini(), hdpsgd.config(m)):
            self.assertTrue(text.startswith("; the data are NumPy arrays (hdpsgd.Model.from_arrays"
                                            "), not written here"), text[:120])
            self.assertIn("source = file\n", text)
        self.assertEqual(repr(m), "hdpsgd.Model('(arrays X 20 x 3)', 1 override(s))")
        self.assertFalse(hdpsgd.Model().to_ini().startswith(";"))

    def test_bad_arrays_refused(self):
        X = np.ones((50, 3)) + np.arange(150).reshape(50, 3) % 7
        with self.assertRaisesRegex(hdpsgd.InputError, "y: 10 labels for the 50 rows"):
            hdpsgd.Model.from_arrays(X, np.zeros(10))
        Xb = X.copy()
        Xb[4, 1] = np.inf
        with self.assertRaisesRegex(hdpsgd.InputError, "the array X: row 5, column 2"):
            hdpsgd.Model.from_arrays(Xb)
        with self.assertRaisesRegex(hdpsgd.InputError, "positive class 7 is not among"):
            hdpsgd.Model.from_arrays(X, np.arange(50) % 3, data__labels_positive="7")
        with self.assertRaisesRegex(hdpsgd.InputError, "X_test: 2 columns, X has 3"):
            hdpsgd.Model.from_arrays(X, None, X[:, :2])
        # neither complex numbers (NumPy would drop the imaginary part with a warning) nor
        # texts: an InputError naming the array (user trial)
        with self.assertRaisesRegex(hdpsgd.InputError, "X: complex numbers"):
            hdpsgd.Model.from_arrays(X + 1j)
        with self.assertRaisesRegex(hdpsgd.InputError, "y_test: complex numbers"):
            hdpsgd.Model.from_arrays(X, X[:, 0], X[:5], [1j] * 5)
        with self.assertRaisesRegex(hdpsgd.InputError, "y: expected an array of real numbers"):
            hdpsgd.Model.from_arrays(X, ["a"] * 50)
        with self.assertRaisesRegex(hdpsgd.InputError, "X: expected an array of real numbers"):
            hdpsgd.Model.from_arrays("X.npy")
        # the data set's own refusals name the array, not an empty file name under the default
        # model (user trial: "(built-in default) (default value): [data] features: : dataset:")
        with self.assertRaisesRegex(hdpsgd.InputError, r"^the array X: dataset: all 50 rows are "
                                    r"equal after centring"):
            hdpsgd.Model.from_arrays(np.ones((50, 3)), X[:, 0])
        with self.assertRaisesRegex(hdpsgd.InputError, r"^the array X: dataset: tr Σ overflows"):
            hdpsgd.Model.from_arrays(X * 1e300)
        with self.assertRaisesRegex(hdpsgd.InputError, "d = 2 but the rows of the array X have 3"):
            hdpsgd.Model.from_arrays(X, data__d=2)


class Test_ode(unittest.TestCase):
    KEYS = ["final_risk", "risk_before_final_noise", "final_noise", "gamma", "n", "d", "rho",
            "stable", "upper_finite_until", "lower_finite_until", "eta_sup", "bins", "rhs_evals",
            "steps"]
    COLS = ["t", "risk", "risk_upper", "risk_lower", "mu_c", "nu_c", "eta", "sigma2"]

    def check(self, path, sets):
        args = ["ode"] + ([path] if path else [])
        for k, v in sets.items():
            args += ["--set", f"{k}={v}"]
        data, rows, _, _ = cli(*args)
        r = hdpsgd.ode(hdpsgd.Model(path, sets))
        json_equal(self, data, r, self.KEYS)
        csv_equal(self, rows, r, self.COLS)
        self.assertEqual(r.model, data["model_file"] if not path else r.model)
        self.assertEqual(r.solver, data["solver"])
        return r

    def test_default_bit_identical(self):
        r = self.check(None, {})
        self.assertEqual(r.final_risk, r.risk[-1])
        self.assertTrue(r.stable)
        self.assertIsInstance(r.n, int)
        self.assertIsInstance(r.stable, bool)
        self.assertEqual(r.t.dtype, np.float64)
        self.assertEqual(len(r.t), 101)

    def test_models_bit_identical(self):
        for name, sets in [("powerlaw.ini", {"clip.c": 0.5}),
                           ("isotropic-linear-noise.ini", {}),
                           ("student-noise.ini", {"ode.points": 21}),
                           ("isotropic-nonprivate.ini", {})]:
            with self.subTest(model=name):
                r = self.check(os.path.join(MODELS, name), sets)
                if name == "isotropic-nonprivate.ini":
                    self.assertTrue(math.isinf(r.rho))

    def test_to_frame(self):
        r = hdpsgd.ode(hdpsgd.Model(overrides={"ode.points": 11}))
        f = r.to_frame()
        try:
            import pandas
        except ImportError:
            self.assertEqual(list(f), self.COLS)
            return
        self.assertIsInstance(f, pandas.DataFrame)
        self.assertEqual(list(f.columns), self.COLS)
        self.assertEqual(len(f), 11)
        self.assertEqual(f["risk"].iloc[-1], r.final_risk)

    def test_accepts_a_path(self):
        path = os.path.join(MODELS, "powerlaw.ini")
        self.assertEqual(hdpsgd.ode(path).final_risk, hdpsgd.ode(hdpsgd.Model(path)).final_risk)

    def test_numerical_failure(self):
        with self.assertRaises(ArithmeticError) as cm:
            hdpsgd.ode(hdpsgd.Model(overrides={"ode.max_steps": 1}))
        self.assertIsInstance(cm.exception, hdpsgd.NumericalError)
        self.assertIn("CV_TOO_MUCH_WORK", str(cm.exception))


class Test_results(unittest.TestCase):
    """The result classes: frozen dataclasses produced from the library's result tables."""

    def test_frozen_dataclasses_with_the_tables_help(self):
        import dataclasses
        r = hdpsgd.ode(hdpsgd.Model(), points=11, rtol=1e-9)
        self.assertTrue(dataclasses.is_dataclass(r))
        with self.assertRaises(dataclasses.FrozenInstanceError):
            r.final_risk = 0
        with self.assertRaises(ValueError):
            r.risk[0] = 1  # the columns are read-only
        self.assertEqual(len(r.t), 11)
        self.assertIsInstance(r.risk, np.ndarray)
        self.assertIsInstance(r.bins, int)
        self.assertIsInstance(r.stable, bool)
        self.assertIsInstance(r.solver, str)
        fields = {f.name: f for f in dataclasses.fields(hdpsgd.OdeResult)}
        self.assertIn("final_noise", fields)
        self.assertIn("2 c^2 gamma^2", fields["final_noise"].metadata["help"])
        self.assertIn("final_noise (float): the last step's private noise",
                      hdpsgd.OdeResult.__doc__)
        for cls in (hdpsgd.McResult, hdpsgd.ValidateResult, hdpsgd.PrivacyResult,
                    hdpsgd.DpsgdPrivacyResult, hdpsgd.ValidateSide):
            names = [f.name for f in dataclasses.fields(cls)]
            self.assertEqual(len(names), len(set(names)), cls)
            for f in dataclasses.fields(cls):
                self.assertTrue(f.metadata["help"], (cls, f.name))

    def test_repr(self):
        """the short repr names the first numbers, or for a result of columns only (a
        validation's curves, a sweep) its rows and columns (user trial: '<hdpsgd.OdeCurve , ...>')"""
        m = hdpsgd.Model(overrides={"ode.bins": 8, "ode.points": 11})
        self.assertTrue(repr(hdpsgd.ode(m)).startswith("<hdpsgd.OdeResult final_risk="))
        v = hdpsgd.validate(m, runs=4, with_sde=False)
        self.assertEqual(repr(v.ode), "<hdpsgd.OdeCurve 11 rows: t, risk, risk_upper, risk_lower, "
                         "mu_c, nu_c, ...>")
        self.assertTrue(repr(v.sim).startswith("<hdpsgd.McCurve 11 rows: t, mean, stderr,"))
        s = hdpsgd.sweep(m, {"clip.c": [0.5, 1]})
        self.assertTrue(repr(s).startswith("<hdpsgd.SweepResult 2 rows: point, clip.c, d, n,"))

    def test_copies_stay_read_only(self):
        """copy.deepcopy and pickle of a result give equal, still read-only columns (user trial:
        the copies' arrays were writeable)"""
        import copy
        import pickle
        r = hdpsgd.ode(hdpsgd.Model(overrides={"ode.bins": 8, "ode.points": 11}))
        for c in (copy.deepcopy(r), pickle.loads(pickle.dumps(r)), copy.copy(r)):
            self.assertEqual(c.final_risk, r.final_risk)
            self.assertTrue(np.array_equal(c.risk, r.risk))
            self.assertFalse(c.risk.flags.writeable)
            with self.assertRaises(ValueError):
                c.t[0] = 1.0

    def test_keywords_and_defaults(self):
        with self.assertRaises(TypeError):
            hdpsgd.sim(hdpsgd.Model(), 10)  # keywords only, after the model
        a = hdpsgd.ode(hdpsgd.Model(), points=21)
        b = hdpsgd.ode(hdpsgd.Model(overrides={"ode.points": 21}))
        self.assertTrue(np.array_equal(a.risk, b.risk))
        import inspect
        self.assertEqual(inspect.signature(hdpsgd.design).parameters["knots"].default, 8)

    def test_clean_namespace(self):
        public = [n for n in dir(hdpsgd) if not n.startswith("_")]
        for n in ("ctypes", "os", "numbers", "math"):
            self.assertNotIn(n, public)
        self.assertTrue(set(hdpsgd.__all__) <= set(public))
        for name in hdpsgd.__all__:
            doc = getattr(hdpsgd, name).__doc__ or ""
            self.assertNotRegex(doc, r"\(issue \d+\)", name)


class Test_mc(unittest.TestCase):
    KEYS = ["final_risk_mean", "final_risk_stderr", "final_jump_mean", "final_jump_stderr",
            "runs", "diverged_runs", "divergence_threshold", "rho_accounted", "rho", "steps",
            "d", "n", "gamma"]
    COLS = ["t", "mean", "stderr", "q10", "q50", "q90", "clipped_fraction"]

    def test_sim_bit_identical(self):
        data, rows, _, _ = cli("sim", "--runs", "30", "--seed", "11")
        s = hdpsgd.sim(hdpsgd.Model(), runs=30, seed=11)
        json_equal(self, data, s, self.KEYS)
        json_equal(self, data, s, ["nonexpansive_violations", "feature_norm", "feature_clipped"])
        csv_equal(self, rows, s, self.COLS)
        self.assertEqual(s.seed, 11)
        self.assertEqual(s.command, "sim")

    def test_sim_finite_set_bit_identical(self):
        """standard DP-SGD on a finite training set (issue 33): the same numbers as the program"""
        sets = {"sgd.sampling": "poisson", "data.train_size": 60, "data.d": 8, "sgd.batch": 6,
                "sgd.epochs": 2}
        args = [a for k, v in sets.items() for a in ("--set", f"{k}={v}")]
        data, rows, _, _ = cli("sim", "--runs", "6", "--seed", "4", *args)
        s = hdpsgd.sim(hdpsgd.Model(overrides=sets), runs=6, seed=4)
        json_equal(self, data, s, [k for k in self.KEYS if k != "rho_accounted"])
        json_equal(self, data, s, ["noise_multiplier", "sample_rate", "accounted_steps", "epsilon",
                                   "noise_calibrated", "steps"])
        self.assertIsNone(data["rho_accounted"])  # one-pass's accountant does not apply
        self.assertTrue(math.isnan(s.rho_accounted))
        csv_equal(self, rows, s, self.COLS)
        self.assertEqual(s.steps, 20)
        self.assertIsNone(s.nonexpansive_violations)

    def test_sde_bit_identical(self):
        path = os.path.join(MODELS, "student-noise.ini")
        data, rows, _, _ = cli("sde", path, "--runs", "12", "--seed", "5", "--step", "0.002",
                               "--set", "ode.points=31")
        s = hdpsgd.sde(hdpsgd.Model(path, {"ode.points": 31}), runs=12, seed=5, step=0.002)
        json_equal(self, data, s, self.KEYS)
        csv_equal(self, rows, s, self.COLS)
        self.assertEqual(s.steps, 500)

    def test_model_defaults_runs_and_seed(self):
        m = hdpsgd.Model(overrides={"sim.runs": 7, "sim.seed": 3})
        data, rows, _, _ = cli("sim", "--set", "sim.runs=7", "--set", "sim.seed=3")
        s = hdpsgd.sim(m)
        json_equal(self, data, s, self.KEYS)
        self.assertEqual(s.runs, 7)
        self.assertEqual(s.seed, 3)
        big = 2**64 - 1
        self.assertEqual(hdpsgd.sim(m, runs=2, seed=big).seed, big)

    def test_threads_do_not_change_the_numbers(self):
        m = hdpsgd.Model(overrides={"data.d": 100})
        a = hdpsgd.sim(m, runs=np.int64(9), threads=1, seed=2)
        b = hdpsgd.sim(m, runs=9, threads=2, seed=2)
        for c in self.COLS:
            self.assertTrue(np.array_equal(a.columns[c], b.columns[c]), c)
        self.assertEqual(a.threads, 1)
        self.assertEqual(b.threads, 2)
        c = hdpsgd.sim(m, runs=9, threads=1, seed=3)
        self.assertNotEqual(a.final_risk_mean, c.final_risk_mean)

    def test_keep_runs(self):
        s = hdpsgd.sim(hdpsgd.Model(), runs=25, seed=4, keep_runs=True)
        f = s.final_risks
        self.assertEqual(len(f), 25)
        self.assertTrue(np.all(np.isfinite(f)))
        self.assertAlmostEqual(float(np.mean(f)), s.final_risk_mean, delta=1e-12 * s.final_risk_mean)
        se = float(np.std(f, ddof=1) / math.sqrt(25))
        self.assertAlmostEqual(se, s.final_risk_stderr, delta=1e-9 * se)
        self.assertNotIn("final_risks", hdpsgd.sim(hdpsgd.Model(), runs=2))

    def test_progress(self):
        seen = []
        lock = threading.Lock()

        def progress(what, done, total, value):
            with lock:
                seen.append((what, done, total))

        hdpsgd.sde(hdpsgd.Model(), runs=16, threads=2, progress=progress)
        self.assertEqual(len(seen), 16)
        self.assertEqual(sorted(d for _, d, _ in seen), list(range(1, 17)))
        self.assertTrue(all(w == "sde" and t == 16 for w, _, t in seen))

    def test_progress_may_stop_the_runs(self):
        calls = []

        def progress(what, done, total, value):
            calls.append(done)
            return done >= 3

        with self.assertRaises(hdpsgd.Cancelled) as cm:
            hdpsgd.sim(hdpsgd.Model(), runs=200, threads=1, progress=progress)
        self.assertIn("cancelled", str(cm.exception))
        self.assertEqual(calls, [1, 2, 3])

    def test_progress_exception_is_raised(self):
        def progress(what, done, total, value):
            raise RuntimeError("from the callback")

        with self.assertRaises(RuntimeError):
            hdpsgd.sim(hdpsgd.Model(), runs=50, threads=1, progress=progress)

    def test_every_run_diverged(self):
        m = hdpsgd.Model(overrides={"schedule.kind": "constant", "privacy.rho": "inf",
                                    "clip.c": "inf", "schedule.eta0": 60, "data.gamma": 0.1,
                                    "data.d": 50})
        with self.assertRaises(ArithmeticError) as cm:
            hdpsgd.sim(m, runs=3)
        self.assertIn("diverged", str(cm.exception))
        with self.assertRaises(hdpsgd.NumericalError):
            hdpsgd.sde(m, runs=3)

    def test_bad_options(self):
        m = hdpsgd.Model()
        for kw in [{"runs": 0}, {"runs": 2.5}, {"threads": -1}, {"seed": -1}, {"seed": 2**64},
                   {"runs": 10**8}]:
            with self.subTest(**kw), self.assertRaises(ValueError):
                hdpsgd.sim(m, **kw)
        with self.assertRaises(ValueError):
            hdpsgd.sde(m, runs=2, step=2)


class Test_validate(unittest.TestCase):
    SIDE = ["max_abs_dev", "max_rel_dev", "max_z", "final_risk", "final_risk_stderr",
            "clipped_fraction"]

    def test_bit_identical(self):
        data, _, _, out = cli("validate", "--runs", "40", "--seed", "9", csv_out=False)
        v = hdpsgd.validate(hdpsgd.Model(), runs=40, seed=9)
        # the program writes the Monte Carlo side without a prefix
        for side, obj in (("", v.sim_side), ("sde_", v.sde_side)):
            for k in self.SIDE:
                self.assertEqual(getattr(obj, k), data[side + k], side + k)
            self.assertIs(obj.passed, data[(side or "sim_") + "pass"])
            self.assertIs(obj.within_rel_tol, data[(side or "sim_") + "within_rel_tol"])
            self.assertIs(obj.significant, data[(side or "sim_") + "significant"])
            self.assertIs(obj.significant, obj.max_z > data["z_tol"])
        self.assertIs(v.sim_side.passed, data["sim_pass"])
        self.assertIs(v.sde_side.passed, data["sde_pass"])
        json_equal(self, data, v, ["pass", "ode_final_risk", "rho", "rho_z", "delta",
                                   "epsilon_cks", "epsilon_bs", "rel_tol", "z_tol", "runs",
                                   "diverged_runs", "d", "n", "gamma"])
        self.assertIs(v.passed, data["pass"])
        self.assertIn("PASS" if v.passed else "FAIL", out)
        # the curves are those of ode() and sim() on the same model and seed
        s = hdpsgd.sim(hdpsgd.Model(), runs=40, seed=9)
        self.assertTrue(np.array_equal(v.sim.mean, s.mean))
        self.assertTrue(np.array_equal(v.ode.risk, hdpsgd.ode(hdpsgd.Model()).risk))
        self.assertEqual(v.sim_side.final_risk, s.final_risk_mean)
        self.assertGreaterEqual(v.sim_side.worst_point, -1)

    def test_without_sde(self):
        path = os.path.join(MODELS, "isotropic-output.ini")
        data, _, _, _ = cli("validate", path, "--runs", "20", "--no-sde", csv_out=False)
        v = hdpsgd.validate(path, runs=20, with_sde=False)
        self.assertIsNone(v.sde_side)
        self.assertIsNone(v.sde)
        self.assertEqual(v.sim_side.max_z, data["max_z"])
        self.assertIs(v.passed, data["pass"])
        self.assertIn("t", v.to_frame())

    def test_sde_side_where_it_applies(self):
        # with_sde=None (the default) skips the SDE where it does not apply, as the program
        # does with a note: sgd.batch > 1 (here) and ode.model = rows; True still asks for it
        m = hdpsgd.Model(overrides={"sgd.batch": 4})
        data, _, _, _ = cli("validate", "--set", "sgd.batch=4", "--runs", "20", "--seed", "2",
                            csv_out=False)
        v = hdpsgd.validate(m, runs=20, seed=2)
        self.assertIsNone(v.sde_side)
        self.assertEqual(v.sim_side.max_z, data["max_z"])
        self.assertIs(v.passed, data["pass"])
        with self.assertRaisesRegex(hdpsgd.InputError, "batch = 1 only"):
            hdpsgd.validate(m, runs=10, with_sde=True)


class Test_privacy(unittest.TestCase):
    def test_epsilon_and_accountant_like_the_program(self):
        data, _, _, _ = cli("privacy", csv_out=False)
        a = hdpsgd.accountant(hdpsgd.Model())
        json_equal(self, data, a, ["rho", "rho_z", "epsilon", "delta", "epsilon_bs", "epsilon_cks",
                                   "rho_accounted", "accountant_equals_rho", "n",
                                   "nonexpansive_p_step", "nonexpansive_log10_p_step",
                                   "nonexpansive_expected_violations", "nonexpansive_negligible",
                                   "feature_norm", "feature_clip_fraction"])
        self.assertEqual(hdpsgd.epsilon(0.5, 1e-5), data["epsilon_cks"])
        self.assertEqual(a.delta, 1e-5)
        self.assertAlmostEqual(a.epsilon_cks, 2.17, places=2)  # README: epsilon = 2.17

    def test_rho_for_like_the_program(self):
        data, _, _, _ = cli("privacy", "--epsilon", "2", csv_out=False)
        rho = hdpsgd.rho_for(2, 1e-5)
        self.assertEqual(rho, data["rho_for_target"])
        self.assertAlmostEqual(hdpsgd.epsilon(rho, 1e-5), 2.0, places=9)

    def test_accountant_of_other_schedules(self):
        for name in ("isotropic-linear-noise.ini", "isotropic-output.ini"):
            path = os.path.join(MODELS, name)
            data, _, _, _ = cli("privacy", path, csv_out=False)
            a = hdpsgd.accountant(path)
            self.assertEqual(a.rho_accounted, data["rho_accounted"])
            self.assertTrue(a.accountant_equals_rho)
            self.assertEqual(a.schedule, data["schedule"])
        a = hdpsgd.accountant(os.path.join(MODELS, "isotropic-nonprivate.ini"))
        self.assertTrue(math.isinf(a.rho_accounted) and math.isinf(a.epsilon_cks))

    def test_limits_and_errors(self):
        self.assertTrue(math.isinf(hdpsgd.epsilon(float("inf"), 1e-5)))
        self.assertTrue(math.isinf(hdpsgd.rho_for(float("inf"), 1e-5)))
        self.assertLess(hdpsgd.epsilon(0.1, 1e-5), hdpsgd.epsilon(1, 1e-5))
        for args in [(0.5, 0), (0.5, 1), (0.5, 2), (0, 0.1), (-1, 0.1), (float("nan"), 0.1)]:
            with self.subTest(args=args), self.assertRaises(ValueError):
                hdpsgd.epsilon(*args)
        for args in [(2, 0), (0, 0.1), (-1, 0.1)]:
            with self.subTest(args=args), self.assertRaises(ValueError):
                hdpsgd.rho_for(*args)
        with self.assertRaises(ValueError) as cm:
            hdpsgd.accountant(hdpsgd.Model(overrides={"data.n": 10**9}))
        self.assertIn("1e8", str(cm.exception).replace("100000000", "1e8"))

    def test_dpsgd_privacy_like_the_program(self):
        q = 256 / 60000
        data, _, _, _ = cli("accountant", "--sample-rate", repr(q), "--noise-multiplier", "1.12",
                            "--epochs", "60", csv_out=False)
        r = hdpsgd.dpsgd_privacy(q, noise_multiplier=1.12, epochs=60)
        json_equal(self, data, r, ["epsilon", "epsilon_pld", "epsilon_rdp", "epsilon_rdp_classic",
                                   "noise_multiplier", "sample_rate", "steps", "delta"])
        self.assertEqual(r.steps, 14063)
        self.assertAlmostEqual(r.epsilon_rdp_classic, 2.92, delta=0.02)  # TF Privacy's table
        c = hdpsgd.dpsgd_privacy(0.01, epsilon=2.0, steps=1000, accountant="rdp")
        self.assertLessEqual(c.epsilon_rdp, 2.0)
        self.assertGreater(c.epsilon_rdp, 2.0 - 1e-3)
        for kw in [dict(noise_multiplier=1, epsilon=1, steps=10), dict(noise_multiplier=1),
                   dict(noise_multiplier=-1, steps=10), dict(noise_multiplier=1, steps=0),
                   dict(noise_multiplier=1, steps=10, accountant="prv"),
                   dict(noise_multiplier=1, steps=10, delta=1.0)]:
            with self.subTest(kw=kw), self.assertRaises(ValueError):
                hdpsgd.dpsgd_privacy(0.1, **kw)
        # epochs/q beyond a float: an InputError, not ceil's OverflowError (user trial)
        with self.assertRaisesRegex(hdpsgd.InputError, "epochs = 1e.300, sample_rate = 1e-300"):
            hdpsgd.dpsgd_privacy(1e-300, noise_multiplier=1, epochs=1e300)


class Test_design(unittest.TestCase):
    def test_pl_bit_identical_and_table(self):
        path = os.path.join(MODELS, "isotropic-output.ini")
        with tempfile.TemporaryDirectory() as tmp:
            tab = os.path.join(tmp, "cli.tab")
            data, _, _, _ = cli("schedule", path, "--optimize", "--family", "pl", "--knots", "5",
                                "-o", tab, csv_out=False)
            cli_rows = [ln for ln in _read(tab).splitlines() if not ln.startswith("#")]
            m = hdpsgd.Model(path)
            d = hdpsgd.design(m, family="pl", knots=5)
            self.assertEqual(d.final_risk, data["pl_final_risk"])
            self.assertEqual(d.pl_final_risk, data["pl_final_risk"])
            self.assertEqual(d.table_final_risk, data["table_final_risk"])
            self.assertEqual(d.ode_solves, data["pl_ode_solves"])
            self.assertEqual(d.knots, 5)
            self.assertEqual(list(d.knot_eta), data["pl_eta"])
            self.assertEqual(d.family, "pl")
            self.assertEqual(len(d.t), 5)
            self.assertTrue(np.all(np.diff(d.eta) <= 0))  # non-increasing (docs/theory.md §1)
            mine = d.to_table(os.path.join(tmp, "py.tab"))
            py_rows = [ln for ln in _read(mine).splitlines() if not ln.startswith("#")]
            self.assertEqual(py_rows, cli_rows)
            # one writer of the format: the header too, but the command line's "use:" line
            head = [ln for ln in _read(tab).splitlines()
                    if ln.startswith("#") and not ln.startswith("# ; use:")]
            self.assertEqual([ln for ln in _read(mine).splitlines() if ln.startswith("#")], head)
            # the table runs: its ODE final risk is the one the design reported
            r = hdpsgd.ode(m.copy().update(d.schedule_overrides(mine)))
            self.assertEqual(r.final_risk, d.table_final_risk)
            self.assertEqual(len(d.to_frame()["t"]), 5)

    def test_several_families(self):
        path = os.path.join(MODELS, "isotropic-output.ini")
        data, _, _, _ = cli("schedule", path, "--optimize", "--family", "output,optimal",
                            csv_out=False)
        d = hdpsgd.design(path, family="output,optimal")
        self.assertEqual(d.best_family, data["best_family"])
        self.assertEqual(d.final_risk, data["best_final_risk"])
        self.assertEqual(d.inverse_time_c1, data["inverse_time_c1"])
        self.assertEqual(d.inverse_time_a, data["inverse_time_a"])
        self.assertEqual(d.output_eta0, data["output_eta0"])
        self.assertEqual(d.total_ode_solves, data["ode_solves"])
        self.assertEqual(len(d.t), 201)

    def test_tune_clip(self):
        path = os.path.join(MODELS, "isotropic-output.ini")
        data, _, _, _ = cli("schedule", path, "--optimize", "--family", "output", "--tune-clip",
                            csv_out=False)
        d = hdpsgd.design(path, family="output", tune_clip=True)
        self.assertEqual(d.c, data["best_c"])
        self.assertEqual(d.final_risk, data["output_final_risk"])

    def test_tune_batch_like_the_program(self):
        """tune_batch=True is `schedule --optimize --tune-batch`: the same best batch, the same
        candidates and risks, the same configuration in the accountants' terms (bit for bit);
        the result's model runs the best batch (issue 33)."""
        path = os.path.join(MODELS, "isotropic-output.ini")
        args = ("schedule", path, "--optimize", "--family", "output", "--tune-clip",
                "--tune-batch", "--set", "privacy.epsilon=1", "--set", "privacy.delta=1e-5")
        data, _, _, _ = cli(*args, csv_out=False)
        m = hdpsgd.Model(path).replace({"privacy.epsilon": 1, "privacy.delta": 1e-5})
        d = hdpsgd.design(m, family="output", tune_clip=True, tune_batch=True)
        self.assertEqual(d.best_batch, data["best_batch"])
        self.assertEqual(list(d.batch_candidates), data["batch_candidates"])
        self.assertEqual(list(d.batch_final_risks), data["batch_final_risks"])
        self.assertGreaterEqual(len(d.batch_candidates), 3)  # B = 1, 2, 4, ... n/32
        self.assertEqual(d.best_batch, d.batch_candidates[np.argmin(d.batch_final_risks)])
        self.assertEqual(d.final_risk, min(d.batch_final_risks))
        for k in ("best_final_risk", "best_c", "sample_rate", "steps", "noise_multiplier_min",
                  "noise_multiplier_median", "noise_multiplier_max", "rho_accounted",
                  "poisson_noise_multiplier", "epsilon_pld", "epsilon_rdp",
                  "epsilon_rdp_classic"):
            self.assertIsNotNone(data[k], k)  # finite at epsilon = 1
            self.assertEqual(d[k], data[k], k)
        n = d.n
        self.assertEqual(d.sample_rate, d.best_batch / n)
        self.assertEqual(d.steps, -(-n // d.best_batch))
        # the same budget by the three accountants, tight to loose, at the calibrated sigma
        self.assertLessEqual(d.epsilon_pld, d.epsilon_rdp)
        self.assertLessEqual(d.epsilon_rdp, d.epsilon_rdp_classic)
        self.assertEqual(d.model["sgd.batch"], d.best_batch)
        # the design at the best batch alone is the same design
        one = hdpsgd.design(m.set("sgd.batch", d.best_batch), family="output", tune_clip=True)
        self.assertEqual(one.final_risk, d.final_risk)
        self.assertEqual(one.c, d.c)
        self.assertNotIn("best_batch", one)
        with self.assertRaises(hdpsgd.InputError):
            hdpsgd.design(m, family="pl", tune_batch=True, refine=True)
        with self.assertRaises(hdpsgd.InputError):  # not a one-pass model
            hdpsgd.design(m.replace({"sgd.sampling": "poisson", "data.train_size": 2000}),
                          family="output", tune_batch=True)

    def test_method_like_the_program(self):
        """method= is `schedule --optimize --method M`: the same numbers, bit for bit, for
        bfgs and simplex, alone and with tune_batch; None is the command line's default
        (bfgs); refine needs bfgs; a bad name is refused naming it (issue 33)."""
        path = os.path.join(MODELS, "isotropic-output.ini")
        m = hdpsgd.Model(path)
        risks = {}
        for method in ("bfgs", "simplex"):
            data, _, _, _ = cli("schedule", path, "--optimize", "--family", "output,pl",
                                "--knots", "4", "--tune-clip", "--method", method,
                                csv_out=False)
            d = hdpsgd.design(m, family="output,pl", knots=4, tune_clip=True, method=method)
            for k in ("best_final_risk", "best_c", "output_final_risk", "pl_final_risk",
                      "ode_solves"):
                self.assertEqual(d[k] if k != "ode_solves" else d.total_ode_solves, data[k], k)
            self.assertEqual(d.best_family, data["best_family"])
            risks[method] = (d.output_final_risk, d.total_ode_solves)
        default = hdpsgd.design(m, family="output,pl", knots=4, tune_clip=True)
        self.assertEqual((default.output_final_risk, default.total_ode_solves), risks["bfgs"])
        self.assertNotEqual(risks["bfgs"][1], risks["simplex"][1])  # two different searches
        # the two searches find the same optimum of the closed-form family
        self.assertAlmostEqual(risks["bfgs"][0], risks["simplex"][0],
                               delta=1e-3 * risks["bfgs"][0])
        args = ("schedule", path, "--optimize", "--family", "output", "--tune-clip",
                "--tune-batch", "--method", "simplex", "--set", "privacy.epsilon=1")
        data, _, _, _ = cli(*args, csv_out=False)
        d = hdpsgd.design(m.set("privacy.epsilon", 1), family="output", tune_clip=True,
                          tune_batch=True, method="simplex")
        self.assertEqual(d.best_batch, data["best_batch"])
        self.assertEqual(list(d.batch_final_risks), data["batch_final_risks"])
        self.assertEqual(d.best_c, data["best_c"])
        with self.assertRaises(hdpsgd.InputError) as cm:
            hdpsgd.design(m, family="output", method="newton")
        self.assertIn("newton", str(cm.exception))
        with self.assertRaises(hdpsgd.InputError):
            hdpsgd.design(m, family="output", method=1)
        with self.assertRaises(hdpsgd.InputError):
            hdpsgd.design(m, family="pl", knots=4, refine=True, method="simplex")

    def test_bad_arguments(self):
        with self.assertRaises(ValueError) as cm:
            hdpsgd.design(hdpsgd.Model(), family="nope")
        self.assertIn("nope", str(cm.exception))
        for k in (1, 513):  # 2 <= K <= 512 (issue 21)
            with self.assertRaises(ValueError):
                hdpsgd.design(hdpsgd.Model(), knots=k)

    def test_progress_may_stop_the_search(self):
        seen = []

        def progress(what, done, total, best):
            seen.append((what, done, best))
            return True

        with self.assertRaises(hdpsgd.Cancelled):
            hdpsgd.design(os.path.join(MODELS, "isotropic-output.ini"), family="pl", knots=4,
                          progress=progress)
        self.assertEqual(seen[0][0], "pl")
        self.assertEqual(len(seen), 1)


class Test_interrupt(unittest.TestCase):
    """Ctrl-C (SIGINT) stops a long call at its next run: KeyboardInterrupt, no crash, the
    library usable afterwards; the GIL is released during the call. Deterministic: the signal
    is sent at a known point (from the call's own progress report, which returns only once the
    main thread's handler has run), and what is checked is what ran afterwards, not how long
    anything took."""

    SLOW = {"data.d": 2000, "data.gamma": 0.02}  # n = 1e5 steps of d = 2000 per run

    def interrupt_from(self, progress_at):
        """A progress function calling progress_at(*args) -> bool; when true, SIGINT goes to
        the main thread and the report waits until the handler has run (it then raises
        KeyboardInterrupt there, as the default handler does)."""
        main = threading.main_thread().ident
        handled = threading.Event()

        def on_sigint(signum, frame):
            handled.set()
            raise KeyboardInterrupt

        old = signal.signal(signal.SIGINT, on_sigint)
        self.addCleanup(signal.signal, signal.SIGINT, old)

        def progress(*args):
            if progress_at(*args):
                signal.pthread_kill(main, signal.SIGINT)
                self.assertTrue(handled.wait(120), "the main thread never ran its handler")
        return progress

    def test_ctrl_c_stops_the_monte_carlo(self):
        done = []

        def at(what, d, total, value):
            if what.endswith(" steps"):  # reports from within a run: not runs
                return False
            done.append(d)
            return d == 2  # Ctrl-C while the third run is under way

        m = hdpsgd.Model(overrides=self.SLOW)
        with self.assertRaises(KeyboardInterrupt):
            hdpsgd.sim(m, runs=400, threads=1, progress=self.interrupt_from(at))
        self.assertGreaterEqual(len(done), 2)
        self.assertLessEqual(len(done), 3)  # the run under way ends, no other starts
        # the library and the interpreter are fine
        self.assertEqual(hdpsgd.sim(hdpsgd.Model(), runs=3, seed=1).runs, 3)

    def test_another_signal_handlers_exception_stops_the_call(self):
        """an exception from another signal's handler (a SIGALRM timeout) stops the call as
        Ctrl-C does, and is raised once it has stopped (user trial: the call ran on in its
        thread behind the TimeoutError, on a model the caller's frame then freed)"""
        main = threading.main_thread().ident
        handled = threading.Event()

        def on_alarm(signum, frame):
            handled.set()
            raise TimeoutError("too slow")

        old = signal.signal(signal.SIGALRM, on_alarm)
        self.addCleanup(signal.signal, signal.SIGALRM, old)
        done = []

        def progress(what, d, total, value):
            if not what.endswith(" steps"):
                done.append(d)
                if d == 2:
                    signal.pthread_kill(main, signal.SIGALRM)
                    self.assertTrue(handled.wait(120), "the main thread never ran its handler")

        with self.assertRaisesRegex(TimeoutError, "too slow"):
            hdpsgd.sim(hdpsgd.Model(overrides=self.SLOW), runs=400, threads=1, progress=progress)
        self.assertEqual([t.name for t in threading.enumerate() if t.name == "hdpsgd"], [])
        self.assertLessEqual(len(done), 3)  # the run under way ends, no other starts

    def test_ctrl_c_stops_the_design(self):
        seen = []

        def at(what, done, total, best):
            seen.append(what)
            return len(seen) == 3  # during the first family (output)

        with self.assertRaises(KeyboardInterrupt):
            hdpsgd.design(hdpsgd.Model(overrides={"ode.bins": 0}), family="all", knots=32,
                          progress=self.interrupt_from(at))
        self.assertGreaterEqual(len(seen), 3)
        # the search stops at its next ODE solve: no family after the one under way reports
        self.assertEqual(set(seen[3:]) - {seen[2]}, set())
        self.assertGreater(hdpsgd.ode().final_risk, 0)

    def test_the_gil_is_released(self):
        # A worker thread calls the library as sim() does from a thread that is not the main
        # one; the main thread, once the worker is about to call, sets the call's cancel flag.
        # The GIL released during the call, the main thread runs meanwhile and the call stops
        # at its next run, cancelled, far from its 20 000 runs (were the GIL held, the main
        # thread could set the flag only once all of them had run: the call would not be
        # cancelled). No timing: only whether the call was cancelled.
        h = hdpsgd.Model(overrides={"sim.runs": 20000})._handle
        cancel = ctypes.c_int(0)
        rec = ctypes.c_void_p()
        box = _lib.ErrorBox()
        status = {}
        calling = threading.Event()

        def work():
            calling.set()
            status["s"] = _lib.hdp_handle_mc(h.ptr, b"sim", 1, 0, ctypes.byref(cancel),
                                             _lib.PROGRESS(), None, ctypes.byref(rec), box.ptr)

        th = threading.Thread(target=work)
        th.start()
        calling.wait()
        cancel.value = 1
        th.join()
        if rec.value:
            _lib.hdp_record_delete(rec.value)
        with self.assertRaises(hdpsgd.Cancelled):
            box.raise_for(status["s"])


class Test_long_calls(unittest.TestCase):
    """A Ctrl-C stops a call inside one long Monte Carlo run and inside an ODE solve; the
    signal is sent from the call's own progress callback, so it always comes while the
    library is at work (no timers), and "promptly" is counted in the call's own reports: a
    call that ignored the flag would go on reporting (once a second) to its end."""

    def sigint_from(self, kind):
        main = threading.main_thread().ident
        sent, after = [], []

        def progress(what, done, total, value):
            if what != kind:
                return
            if sent:
                after.append(done)
                return
            sent.append((done, total, value))
            signal.pthread_kill(main, signal.SIGINT)

        return progress, sent, after

    def test_ctrl_c_inside_one_run(self):
        # one run of 10^10 coordinate updates (about a minute); reports from within it come
        # a second in, and the run stops at its next check (every ~4 million updates)
        m = hdpsgd.Model(overrides={"data.d": 1000, "data.n": 10**7})
        progress, sent, after = self.sigint_from("sim steps")
        with self.assertRaises(KeyboardInterrupt):
            hdpsgd.sim(m, runs=1, threads=1, progress=progress)
        done, total, value = sent[0]
        self.assertEqual(total, 10**7)
        self.assertTrue(0 < done < total and 0 < value < 1)
        self.assertLessEqual(len(after), 1, f"the run went on reporting: {after}")
        self.assertEqual(hdpsgd.sim(hdpsgd.Model(), runs=2, seed=1).runs, 2)

    def test_ctrl_c_inside_the_ode(self):
        # CVODE on 10^6 bins takes tens of seconds; the solve checks the flag at every step
        m = hdpsgd.Model(overrides={"data.d": 10**6, "ode.solver": "cvode"})
        main = threading.main_thread().ident
        reports = []

        def progress(what, d, t, v):
            reports.append(d)
            if len(reports) == 1:
                signal.pthread_kill(main, signal.SIGINT)

        with self.assertRaises(KeyboardInterrupt):
            hdpsgd._lib.run_long(hdpsgd._lib.hdp_handle_ode_run, (m._handle.ptr,), progress)
        # the solve reports at its start and, when it completes, at its end: one report only
        self.assertEqual(reports, [0], "the solve ran to its end")
        self.assertGreater(hdpsgd.ode().final_risk, 0)


class Test_errors(unittest.TestCase):
    """Every status becomes an exception; NULL arguments are refused, never dereferenced."""

    def test_exceptions(self):
        self.assertTrue(issubclass(hdpsgd.InputError, ValueError))
        self.assertTrue(issubclass(hdpsgd.NumericalError, ArithmeticError))
        self.assertTrue(issubclass(hdpsgd.OutOfMemoryError, MemoryError))
        for cls in (hdpsgd.InputError, hdpsgd.NumericalError, hdpsgd.Cancelled):
            self.assertTrue(issubclass(cls, hdpsgd.Error))
        with self.assertRaises(TypeError):
            hdpsgd.ode(42)
        with self.assertRaises(ValueError):
            hdpsgd.ode("/nonexistent.ini")

    def test_a_bad_hdpsgd_library_fails_the_import(self):
        """HDPSGD_LIBRARY names the library or the import fails, naming it (user trial: a path
        that did not load was passed over for the configured library, silently)"""
        env = dict(os.environ)
        for path, why in (("/nonexistent/libhdpsgd.so", "No such file"),
                          (os.path.join(SRC, "README.md"), "invalid ELF header"),
                          (ctypes.util.find_library("m") or "libm.so.6", "hdp_model_new")):
            env["HDPSGD_LIBRARY"] = path
            p = subprocess.run([sys.executable, "-c", "import hdpsgd"], env=env,
                               capture_output=True, text=True)
            self.assertNotEqual(p.returncode, 0, path)
            self.assertIn(f"ImportError: hdpsgd: HDPSGD_LIBRARY={path!r} cannot be loaded",
                          p.stderr)
            self.assertIn(why, p.stderr)
        env["HDPSGD_LIBRARY"] = _lib.LIBRARY_PATH
        p = subprocess.run([sys.executable, "-c", "import hdpsgd; print(hdpsgd._lib.LIBRARY_PATH)"],
                           env=env, capture_output=True, text=True)
        self.assertEqual((p.returncode, p.stdout.strip()), (0, _lib.LIBRARY_PATH), p.stderr)

    def test_null_arguments_are_refused(self):
        rec = ctypes.c_void_p()
        for fn, args in [(_lib.hdp_handle_ode, (None, ctypes.byref(rec))),
                         (_lib.hdp_handle_ode, (hdpsgd.Model()._handle.ptr, None)),
                         (_lib.hdp_handle_accountant, (None, ctypes.byref(rec))),
                         (_lib.hdp_model_set, (None, b"clip.c=1")),
                         (_lib.hdp_model_finalize, (None,)),
                         (_lib.hdp_model_get_text, (None, b"clip.c", None)),
                         (_lib.hdp_handle_epsilon, (0.5, 0.1, None))]:
            with self.subTest(fn=fn.__name__), self.assertRaises(ValueError) as cm:
                _lib.call(fn, *args)
            self.assertIn("NULL", str(cm.exception))
        none = _lib.PROGRESS()
        with self.assertRaises(ValueError):
            _lib.call(_lib.hdp_handle_mc, None, b"sim", 0, 0, None, none, None,
                      ctypes.byref(rec))
        with self.assertRaises(ValueError) as cm:
            _lib.call(_lib.hdp_handle_mc, hdpsgd.Model()._handle.ptr, b"ode", 0, 0, None, none,
                      None, ctypes.byref(rec))
        self.assertIn("unknown method", str(cm.exception))
        self.assertEqual(_lib.hdp_record_columns(None), 0)
        self.assertIsNone(_lib.hdp_record_column(None, 0, None, None))
        self.assertEqual(_lib.hdp_error_message(None), b"")

    def test_nothing_is_cut(self):
        """A Python int beyond C's int and a NUL character in a string are refused, never
        passed on cut (issue 29: knots=2**32+3 ran with 3 knots; a NUL ended a value)."""
        for knots in (2**32 + 3, 2**31, -2**32 + 3):
            with self.subTest(knots=knots), self.assertRaises(ValueError) as cm:
                hdpsgd.design(knots=knots)
            self.assertIn("knots", str(cm.exception))
        m = hdpsgd.Model()
        for call in (lambda: hdpsgd.Model(overrides={"data.spectrum_file": "a.txt\0b"}),
                     lambda: m.set("data.spectrum", "file\0powerlaw"),
                     lambda: m["data.d\0x"],
                     lambda: hdpsgd.Model("/tmp/x\0.ini"),
                     lambda: hdpsgd.design(family="output\0pl", knots=4)):
            with self.assertRaises(ValueError) as cm:
                call()
            self.assertIn("NUL", str(cm.exception))
        # a long file name is refused with its length, not cut to another file
        long_name = "/tmp/" + "x" * 3000
        with self.assertRaises(ValueError) as cm:
            hdpsgd.Model(overrides={"data.spectrum_file": long_name})
        self.assertIn("3005 bytes long", str(cm.exception))

    def test_unfinalized_model_is_refused(self):
        ptr = _lib.hdp_model_new()
        try:
            _lib.call(_lib.hdp_model_set, ptr, b"clip.c=1")
            rec = ctypes.c_void_p()
            with self.assertRaises(ValueError) as cm:
                _lib.call(_lib.hdp_handle_ode, ptr, ctypes.byref(rec))
            self.assertIn("finalized", str(cm.exception))
        finally:
            _lib.hdp_model_delete(ptr)


class Test_api(unittest.TestCase):
    """config, rates, design(refine=True) and plot against the command line."""

    def test_config_is_the_commands_text(self):
        path = os.path.join(MODELS, "isotropic-output.ini")
        for args, kw in (((), {}), (("--all",), {"all": True})):
            p = subprocess.run([CLI, "config", path, *args], capture_output=True, text=True,
                               check=True)
            first, rest = p.stdout.split("\n", 1)
            self.assertTrue(first.startswith("; hdpsgd config"))
            self.assertEqual(hdpsgd.config(path, **kw), rest)
        self.assertIn("[rf]", hdpsgd.config(all=True))
        self.assertNotIn("[rf]", hdpsgd.config())
        # the text reads back to the same model
        with tempfile.TemporaryDirectory() as tmp:
            back = os.path.join(tmp, "r.ini")
            m = hdpsgd.Model(path).replace({"clip.c": 0.25})
            with open(back, "w") as f:
                f.write(hdpsgd.config(m))
            self.assertEqual(hdpsgd.config(back), hdpsgd.config(m))
            self.assertEqual(hdpsgd.ode(back).final_risk, hdpsgd.ode(m).final_risk)

    def test_rates_as_the_command(self):
        path = os.path.join(MODELS, "isotropic-output.ini")
        data, _, _, _ = cli("rates", path, "--gammas", "0.01:0.1:3", "--families",
                            "output,pl", csv_out=False)
        r = hdpsgd.rates(path, gammas=(0.01, 0.1, 3), families=["output", "pl"])
        self.assertEqual(list(r.gamma), data["gamma"])
        for k in ("output", "pl"):
            self.assertEqual(list(r[k + "_final_risk"]), data[k + "_final_risk"])
            self.assertEqual(r[k + "_slope"], data[k + "_slope"])
            self.assertEqual(r[k + "_theory_slope"], data[k + "_theory_slope"])
        self.assertEqual(r.ode_solves, data["ode_solves"])
        self.assertNotIn("inverse_time_final_risk", r)
        d = hdpsgd.Model(path)["data.d"]
        self.assertEqual(list(r.n), [round(d / g) for g in data["gamma"]])
        # the default families are the theorem's three; the text form of the grid
        r3 = hdpsgd.rates(path, gammas="0.01:0.1:2")
        self.assertEqual(sorted(k for k in r3.columns if k.endswith("_final_risk")),
                         ["inverse_time_final_risk", "linear_noise_final_risk", "output_final_risk"])
        for bad in ((0.1, 0.01, 3), (0.01, 0.1, 1), (0.01, 0.1), "x:y:z"):
            with self.assertRaises(hdpsgd.InputError):
                hdpsgd.rates(path, gammas=bad)

    def test_design_refine_bit_identical(self):
        path = os.path.join(MODELS, "isotropic-output.ini")
        data, _, _, _ = cli("schedule", path, "--optimize", "--family", "pl", "--knots", "4",
                            "--refine", "--refine-tol", "1e-4", csv_out=False)
        d = hdpsgd.design(path, knots=4, refine=True, refine_tol=1e-4)
        self.assertEqual(d.final_risk, data["pl_final_risk"])
        self.assertEqual(d.best_family, data["best_family"])
        self.assertEqual(d.refine_levels, data["refine_levels"])
        self.assertGreaterEqual(d.refine_levels, 2)
        for lv in range(d.refine_levels):
            self.assertEqual(d[f"refine_knots_{lv}"], data[f"refine_knots_{lv}"])
            self.assertEqual(d[f"refine_risk_{lv}"], data[f"refine_risk_{lv}"])
        self.assertEqual(d.output_final_risk, data["output_final_risk"])
        self.assertNotIn("refine_levels", hdpsgd.design(path, knots=4))
        with self.assertRaises(hdpsgd.InputError):
            hdpsgd.design(path, family="output", refine=True)
        with self.assertRaises(hdpsgd.InputError):
            hdpsgd.design(path, refine=True, refine_tol=0)

    def test_plot(self):
        """plot draws the result's own numbers (a recording stand-in for matplotlib when it
        is not installed), or says that matplotlib is missing."""
        import sys
        import types
        calls = []

        class Ax:
            def __getattr__(self, name):
                return lambda *a, **k: calls.append((name, a, k))

        fake = types.ModuleType("matplotlib")
        fake.pyplot = types.ModuleType("matplotlib.pyplot")
        fake.pyplot.subplots = lambda: (None, Ax())
        saved = {k: sys.modules.get(k) for k in ("matplotlib", "matplotlib.pyplot")}
        sys.modules.update({"matplotlib": fake, "matplotlib.pyplot": fake.pyplot})
        try:
            v = hdpsgd.validate(runs=8, seed=3, with_sde=False)
            hdpsgd.plot(v, label="x")
            lines = [c for c in calls if c[0] == "plot"]
            self.assertEqual(len(lines), 2)
            np.testing.assert_array_equal(lines[0][1][1], v.columns["ode.risk"])
            np.testing.assert_array_equal(lines[1][1][1], v.columns["sim.mean"])
            self.assertEqual(lines[1][2]["label"], "x Monte Carlo")
            band = [c for c in calls if c[0] == "fill_between"][0][1]
            np.testing.assert_array_equal(band[2], v.columns["sim.mean"]
                                          + 2 * v.columns["sim.stderr"])
            calls.clear()
            o = hdpsgd.ode()
            hdpsgd.plot(o, ax=Ax(), logy=True)
            np.testing.assert_array_equal([c for c in calls if c[0] == "plot"][0][1][1], o.risk)
            self.assertIn(("set_yscale", ("log",), {}), calls)
            with self.assertRaises(TypeError):
                hdpsgd.plot(hdpsgd.accountant())
        finally:
            for k, mod in saved.items():
                if mod is None:
                    sys.modules.pop(k, None)
                else:
                    sys.modules[k] = mod
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            with self.assertRaisesRegex(ImportError, "needs matplotlib"):
                hdpsgd.plot(hdpsgd.ode())


if __name__ == "__main__":
    unittest.main()
