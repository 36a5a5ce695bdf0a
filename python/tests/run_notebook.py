"""Runs examples/notebook.py in a temporary folder and checks what it printed and drew.
Exit 77 (skipped) without matplotlib."""
import os
import re
import subprocess
import sys
import tempfile

try:
    import matplotlib  # noqa: F401
except ImportError:
    print("python_notebook skipped: matplotlib is not installed (apt-get install python3-matplotlib)")
    sys.exit(77)

notebook = os.path.abspath(sys.argv[1])
with tempfile.TemporaryDirectory() as tmp:
    fig = os.path.join(tmp, "nb.png")
    p = subprocess.run([sys.executable, notebook, fig], cwd=tmp, capture_output=True, text=True,
                       timeout=280)
    print(p.stdout)
    print(p.stderr, file=sys.stderr)
    failures = []

    def check(name, ok):
        print(("ok   " if ok else "FAIL ") + name)
        if not ok:
            failures.append(name)

    check("notebook.py exits 0", p.returncode == 0)
    png = b""
    if os.path.exists(fig):
        with open(fig, "rb") as f:
            png = f.read()
    check("the figure is a PNG", png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 20000)
    check("the schedule table was written", os.path.exists(os.path.join(tmp, "nb.schedule.tab")))
    out = p.stdout
    ode = re.search(r"^ODE: final excess risk ([0-9.]+)", out, re.M)
    mc = re.search(r"^Monte Carlo: ([0-9.]+) \+- ([0-9.]+)", out, re.M)
    des = re.search(r"^designed schedule: ODE final risk ([0-9.]+) \(([-+0-9.]+) %\), "
                    r"Monte Carlo ([0-9.]+) \+- ([0-9.]+)", out, re.M)
    check("the ODE's final risk is printed", bool(ode))
    check("the Monte Carlo is printed", bool(mc))
    check("the designed schedule is printed", bool(des))
    if ode and mc and des:
        r, m, se = float(ode.group(1)), float(mc.group(1)), float(mc.group(2))
        check("the Monte Carlo agrees with the ODE (5 standard errors)", abs(m - r) < 5 * se + 0.02 * r)
        check("the designed schedule lowers the predicted risk", float(des.group(2)) < 0)
        check("and the simulated risk", float(des.group(3)) < m)
    check("validate PASS", "PASS" in out)
sys.exit(1 if failures else 0)
