"""Tests of hdpsgd.sweep, run by ctest -L python (python_sweep): the same columns and numbers
as ``hdpsgd sweep``'s results.csv, chaining (``commands=("schedule", "sim")`` simulates the
designed schedule), the sweep file's defaults, and bad arguments. Environment as
test_hdpsgd.py's."""

import math
import os
import subprocess
import tempfile
import unittest

import hdpsgd
from test_hdpsgd import CLI, MODELS

BASE = os.path.join(MODELS, "default.ini")
SMALL = {"data.d": 30, "sim.runs": 6, "ode.bins": 8}


def cli_sweep(text):
    """Run `hdpsgd sweep` on a sweep file's text; results.csv as (header, rows of texts)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "s.ini")
        with open(path, "w") as f:
            f.write(text)
        p = subprocess.run([CLI, "sweep", path, "-o", os.path.join(tmp, "out"), "--threads", "2"],
                           capture_output=True, text=True)
        if p.returncode != 0:
            raise AssertionError(f"hdpsgd sweep: exit {p.returncode}\n{p.stderr}")
        with open(os.path.join(tmp, "out", "results.csv")) as f:
            lines = f.read().splitlines()
    return lines[0].split(","), [ln.split(",") for ln in lines[1:]]


def same_column(test, name, texts, values):
    test.assertEqual(len(texts), len(values), name)
    for i, (t, v) in enumerate(zip(texts, values)):
        if values.dtype == bool:
            test.assertEqual(t, "true" if v else "false", f"{name}[{i}]")
        elif values.dtype.kind in "iu":
            test.assertEqual(int(t), int(v), f"{name}[{i}]")
        elif values.dtype.kind == "f":
            if t == "":
                test.assertTrue(math.isnan(v), f"{name}[{i}]: {v} for an empty field")
            else:
                test.assertEqual(float(t), float(v), f"{name}[{i}]")
        else:
            test.assertEqual(t, str(v), f"{name}[{i}]")


class Test_sweep(unittest.TestCase):
    def test_the_same_results_as_the_command(self):
        head, rows = cli_sweep(
            f"[sweep]\nmodel = {BASE}\ncommands = ode, schedule, sim, validate\n"
            "schedule_families = output, pl\nschedule_knots = 4\n"
            "[axes]\nclip.c = 0.5, 1\nprivacy.rho = 0.5:1:2:log\n"
            "[set]\ndata.d = 30\nsim.runs = 6\node.bins = 8\n")
        m = hdpsgd.Model(BASE, overrides=SMALL)
        r = hdpsgd.sweep(m, {"clip.c": [0.5, 1], "privacy.rho": "0.5:1:2:log"},
                         commands=("ode", "schedule", "sim", "validate"),
                         schedule_families=["output", "pl"], schedule_knots=4, threads=2)
        self.assertEqual(list(r.names), head)
        self.assertEqual(len(rows), 4)
        for j, name in enumerate(head):
            same_column(self, name, [row[j] for row in rows], r[name])
        self.assertEqual(r.axes, ("clip.c", "privacy.rho"))
        self.assertEqual(list(r.status), ["ok"] * 4)
        self.assertEqual(r.validate_pass.dtype, bool)
        self.assertEqual(r.d.dtype.kind, "i")
        frame = r.to_frame()
        self.assertEqual(list(frame.columns if hasattr(frame, "columns") else frame), head)
        with self.assertRaises(ValueError):
            r.sim_final_risk[0] = 1.0  # read-only columns

    def test_schedule_hands_its_design_to_sim(self):
        m = hdpsgd.Model(BASE, overrides=SMALL)
        axes = {"clip.c": [0.5]}
        chained = hdpsgd.sweep(m, axes, commands=("schedule", "sim", "ode"),
                               schedule_families="pl", schedule_knots=4)
        before = hdpsgd.sweep(m, axes, commands=("sim", "schedule"), schedule_families="pl",
                              schedule_knots=4)
        self.assertNotEqual(chained.sim_final_risk[0], before.sim_final_risk[0])
        # the base schedule's sim is hdpsgd.sim on the point's model
        base = hdpsgd.sim(m.replace({"clip.c": 0.5}))
        self.assertEqual(before.sim_final_risk[0], float("%.10g" % base.final_risk_mean))
        # the designed schedule's sim is hdpsgd.sim with the design's table
        d = hdpsgd.design(m.replace({"clip.c": 0.5}), family="pl", knots=4)
        with tempfile.TemporaryDirectory() as tmp:
            s = hdpsgd.sim(d.designed_model(os.path.join(tmp, "best.tab")))
        self.assertEqual(chained.sim_final_risk[0], float("%.10g" % s.final_risk_mean))
        self.assertEqual(chained.ode_final_risk[0], chained.schedule_table_final_risk[0])

    def test_rates_as_the_command(self):
        path = os.path.join(MODELS, "isotropic-output.ini")
        m = hdpsgd.Model(path, overrides={"data.d": 60})
        r = hdpsgd.sweep(m, {"clip.c": [2]}, commands="schedule, rates",
                         schedule_families="output", rates_gammas="0.01:0.1:3",
                         rates_families=["output", "inverse-time"])
        want = hdpsgd.rates(m.replace({"clip.c": 2}), gammas=(0.01, 0.1, 3),
                            families="output,inverse-time")
        for k in ("output", "inverse_time"):
            self.assertEqual(r[f"rates_{k}_slope"][0], float("%.10g" % want[k + "_slope"]))
        self.assertEqual(r.rates_ode_solves[0], want.ode_solves)

    def test_defaults_are_the_sweep_files(self):
        import inspect
        p = inspect.signature(hdpsgd.sweep).parameters
        self.assertEqual(p["schedule_knots"].default, 8)
        self.assertEqual(p["schedule_families"].default, "all")
        self.assertEqual(p["schedule_refine_tol"].default, 1e-5)
        self.assertEqual(p["commands"].default, ("ode",))
        r = hdpsgd.sweep(hdpsgd.Model(overrides=SMALL))  # one point, ode
        self.assertEqual(r.names[-2:], ("ode_final_risk", "status"))
        self.assertEqual(r.ode_final_risk[0],
                         float("%.10g" % hdpsgd.ode(hdpsgd.Model(overrides=SMALL)).final_risk))

    def test_bad_arguments(self):
        m = hdpsgd.Model(overrides=SMALL)
        for kw in ({"commands": ("ode", "fit")}, {"commands": ("sim", "sim")}, {"commands": ()},
                   {"commands": ("rates",)},  # rates_gammas missing
                   {"commands": ("schedule",), "schedule_refine": True,
                    "schedule_families": "output"},
                   {"commands": ("schedule",), "schedule_knots": 1},
                   {"commands": ("schedule",), "schedule_families": "best"}):
            with self.assertRaises(hdpsgd.InputError, msg=str(kw)):
                hdpsgd.sweep(m, {"clip.c": [1]}, **kw)
        with self.assertRaisesRegex(hdpsgd.InputError, r"at point 1 \(clip.c=-1\)"):
            hdpsgd.sweep(m, {"clip.c": [1, -1]})
        with self.assertRaises(hdpsgd.InputError):
            hdpsgd.sweep(m, {"clip.c": "1:2:0"})
        with self.assertRaises(hdpsgd.InputError):
            hdpsgd.sweep(m, [("clip.c", [1])])
        # a control character of an axis is shown escaped, as the library shows it (user trial:
        # the newline and the escape sequence reached the message as they were)
        with self.assertRaises(hdpsgd.InputError) as cm:
            hdpsgd.sweep(m, {"clip.c": ["1", "0.5\n\x1b[2J"]})
        self.assertIn("at point 1 (clip.c=0.5\\x0a\\x1b[2J)", str(cm.exception))
        self.assertFalse(any(c in str(cm.exception) for c in "\n\x1b"))
        with self.assertRaises(hdpsgd.InputError) as cm:
            hdpsgd.sweep(m, {"clip.c\x1b": []})
        self.assertIn("axis clip.c\\x1b: no values", str(cm.exception))

    def test_progress_may_stop_it(self):
        seen = []

        def progress(what, done, total, value):
            seen.append((what, done, total))
            return what == "sweep"

        with self.assertRaises(hdpsgd.Cancelled):
            hdpsgd.sweep(hdpsgd.Model(overrides=SMALL), {"clip.c": [0.5, 1]}, progress=progress)
        self.assertEqual(seen[-1], ("sweep", 1, 2))


if __name__ == "__main__":
    unittest.main()
