"""Tests of hdpsgd.dataset, run by ctest -L python (python_dataset): on small data sets written
here (.npy float64 and float32, .csv with a header line), every number, text and column of
``hdpsgd dataset --json`` equals the Python result's bit for bit, for features alone, labels
as numbers, classes mapped to +-1, a held-out set, no centring / no scaling / a ridge; the
result has no field the JSON lacks; bad files and bad arguments raise InputError with the
command's message. Environment as test_hdpsgd.py's."""

import json
import math
import os
import subprocess
import tempfile
import unittest

import numpy as np

import hdpsgd
from test_hdpsgd import CLI

# the JSON's echo of the input files: the call's own arguments, not the result's
ECHO = {"features", "labels", "positive", "test_features", "test_labels"}


def cli_dataset(args):
    """`hdpsgd dataset ARGS --json FILE`: the JSON, or the exit status and standard error."""
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "s.json")
        p = subprocess.run([CLI, "dataset", *args, "--json", out], capture_output=True,
                           text=True)
        if p.returncode != 0:
            return p.returncode, p.stderr
        with open(out) as f:
            return 0, json.load(f)


class Test_dataset(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = cls.dir = cls.tmp.name
        rng = np.random.default_rng(5)
        n, p = 300, 12
        x = rng.standard_normal((n, p)) * (1.0 / np.arange(1, p + 1)) + 0.3
        y = x @ rng.standard_normal(p) + 0.1 * rng.standard_normal(n)
        classes = rng.integers(0, 5, n)
        xt = rng.standard_normal((80, p)) * (1.0 / np.arange(1, p + 1)) + 0.3
        np.save(os.path.join(d, "x64.npy"), x)
        np.save(os.path.join(d, "x32.npy"), x.astype(np.float32))
        np.save(os.path.join(d, "y.npy"), y)
        np.save(os.path.join(d, "c.npy"), classes.astype(np.int32))
        np.save(os.path.join(d, "xt.npy"), xt)
        np.save(os.path.join(d, "ct.npy"), rng.integers(0, 5, 80).astype(np.int32))
        with open(os.path.join(d, "x.csv"), "w") as f:
            f.write(",".join(f"f{j}" for j in range(p)) + "\n")
            for row in x:
                f.write(",".join(repr(float(v)) for v in row) + "\n")
        with open(os.path.join(d, "y.csv"), "w") as f:
            f.write("".join(repr(float(v)) + "\n" for v in y))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def path(self, name):
        return os.path.join(self.dir, name)

    def same(self, cli_args, **kw):
        """The command's JSON and hdpsgd.dataset(**kw), field for field, bit for bit."""
        rc, j = cli_dataset(cli_args)
        self.assertEqual(rc, 0, j)
        r = hdpsgd.dataset(**kw)
        self.assertIsInstance(r, hdpsgd.DatasetResult)
        keys = set(j) - ECHO
        # every field of the result that applies is in the JSON, and the other way round
        present = {k for k in r.columns} | set(r.numbers) | set(r.texts)
        self.assertEqual(present, keys)
        for k in keys:
            v = r[k]
            if isinstance(j[k], list):
                self.assertIsInstance(v, np.ndarray, k)
                self.assertFalse(v.flags.writeable, k)
                self.assertEqual(len(v), len(j[k]), k)
                for i, (a, b) in enumerate(zip(v, j[k])):
                    self.assertEqual(float(a), b, f"{k}[{i}]")  # the JSON's 17 digits: exact
            elif isinstance(v, bool):
                self.assertIs(v, j[k], k)
            elif isinstance(v, int):
                self.assertIs(type(j[k]), int, k)
                self.assertEqual(v, j[k], k)
            elif isinstance(v, float):  # the JSON writes 0.0 as 0: read as a float
                self.assertIsInstance(j[k], (int, float), k)
                self.assertEqual(v, float(j[k]), k)
            else:
                self.assertIsInstance(v, str, k)
                self.assertEqual(v, j[k], k)
        return r, j

    def test_features_alone(self):
        for name in ("x64.npy", "x32.npy", "x.csv"):
            with self.subTest(name):
                r, j = self.same([self.path(name)], features=self.path(name))
                self.assertIsNone(r.risk0)
                self.assertIsNone(r.energy)
                self.assertIsNone(r.test_n)
                self.assertEqual((r.n, r.d), (300, 12))
                self.assertEqual(r.storage, "float32" if name == "x32.npy" else "float64")
                # the eigenvalues are those of the centred, trace-scaled covariance (NumPy)
                x = np.load(self.path("x64.npy"))
                xc = x - x.mean(axis=0)
                lam = np.sort(np.linalg.eigvalsh(xc.T @ xc / len(x)))[::-1]
                lam *= len(lam) / lam.sum()
                tol = 1e-5 if name == "x32.npy" else 1e-10
                np.testing.assert_allclose(r.eigenvalues, lam, rtol=tol, atol=tol * lam[0])

    def test_labels_as_numbers(self):
        r, _ = self.same([self.path("x.csv"), "--labels", self.path("y.csv")],
                         features=self.path("x.csv"), labels=self.path("y.csv"))
        self.assertGreater(r.risk0, 0)
        self.assertEqual(len(r.energy), r.d)
        self.assertIsNone(r.positive_count)
        # R(0) = (1/d) sum lambda_j D_j(0)
        self.assertAlmostEqual(r.risk0, float(np.dot(r.eigenvalues, r.energy)) / r.d,
                               delta=1e-12 * r.risk0)

    def test_classes_and_held_out_set(self):
        for positive in ([1, 3], "1,3", (1, 3)):
            with self.subTest(positive=positive):
                r, j = self.same(
                    [self.path("x64.npy"), "--labels", self.path("c.npy"), "--positive", "1,3",
                     "--test-features", self.path("xt.npy"), "--test-labels", self.path("ct.npy")],
                    features=self.path("x64.npy"), labels=self.path("c.npy"), positive=positive,
                    test_features=self.path("xt.npy"), test_labels=self.path("ct.npy"))
                c = np.load(self.path("c.npy"))
                self.assertEqual(r.positive_count, int(np.isin(c, [1, 3]).sum()))
                self.assertEqual(r.test_n, 80)
                self.assertTrue(math.isfinite(r.test_mse))
        r, _ = self.same([self.path("x64.npy"), "--test-features", self.path("xt.npy")],
                         features=self.path("x64.npy"), test_features=self.path("xt.npy"))
        self.assertEqual(r.test_n, 80)
        self.assertIsNone(r.test_mse)

    def test_options(self):
        r, _ = self.same([self.path("x64.npy"), "--labels", self.path("y.npy"), "--no-center",
                          "--no-scale", "--ridge", "0.25"],
                         features=self.path("x64.npy"), labels=self.path("y.npy"), center=False,
                         scale="none", ridge=0.25)
        self.assertEqual((r.center, r.scale, r.ridge, r.scale_factor), (False, "none", 0.25, 1.0))
        self.assertEqual(r.label_mean, 0.0)

    def test_bad_files_and_arguments(self):
        bad = self.path("bad.csv")
        with open(bad, "w") as f:
            f.write("1,2,3\n4,5\n")
        rc, err = cli_dataset([bad])
        self.assertEqual(rc, 2)
        with self.assertRaises(hdpsgd.InputError) as e:
            hdpsgd.dataset(bad)
        self.assertIn(str(e.exception), err)  # the command's message, which names the file
        self.assertIn(bad, str(e.exception))
        with self.assertRaises(hdpsgd.InputError) as e:  # 300 labels for 80 rows
            hdpsgd.dataset(self.path("xt.npy"), labels=self.path("y.npy"))
        self.assertIn("one label per row", str(e.exception))
        with self.assertRaises(hdpsgd.InputError) as e:
            hdpsgd.dataset(self.path("missing.npy"))
        self.assertIn("missing.npy", str(e.exception))
        for kw, what in ((dict(scale="max"), "scale"), (dict(ridge=-1.0), "ridge"),
                         (dict(ridge=float("nan")), "ridge"), (dict(positive=[1]), "labels"),
                         (dict(test_labels=self.path("ct.npy")), "test_features"),
                         (dict(labels=self.path("c.npy"), positive=[1.5]), "integer"),
                         (dict(labels=self.path("c.npy"), positive=[]), "classes"),
                         (dict(labels=self.path("c.npy"), positive="1,x"), "integer")):
            with self.subTest(**{k: str(v) for k, v in kw.items()}):
                with self.assertRaises(hdpsgd.InputError) as e:
                    hdpsgd.dataset(self.path("x64.npy"), **kw)
                self.assertIn(what, str(e.exception))
        with self.assertRaises(hdpsgd.InputError) as e:  # a class not among the labels
            hdpsgd.dataset(self.path("x64.npy"), labels=self.path("c.npy"), positive=[7])
        rc, err = cli_dataset([self.path("x64.npy"), "--labels", self.path("c.npy"),
                               "--positive", "7"])
        self.assertEqual(rc, 2)
        self.assertIn(str(e.exception), err)
        with self.assertRaises(TypeError):
            hdpsgd.dataset(3)


if __name__ == "__main__":
    unittest.main()
