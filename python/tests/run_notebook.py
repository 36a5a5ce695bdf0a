"""examples/tour.ipynb and examples/tour.py: the notebook holds the script's cells; the script
runs as a plain program, and the notebook runs in a Jupyter kernel through nbconvert, each in a
temporary folder, with their numbers and figures checked (the data cell's against NumPy's own
computation on the data set it makes). Exit 77 (skipped) without matplotlib,
nbconvert or ipykernel (apt-get install python3-matplotlib python3-nbconvert python3-ipykernel)."""
import json
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

try:
    import matplotlib  # noqa: F401
    import nbconvert  # noqa: F401
    import ipykernel  # noqa: F401
except ImportError as e:
    print(f"python_notebook skipped: {e.name} is not installed "
          "(apt-get install python3-matplotlib python3-nbconvert python3-ipykernel)")
    sys.exit(77)

src = os.path.abspath(sys.argv[1])
examples = os.path.join(src, "examples")
sys.path.insert(0, os.path.join(src, "scripts"))
from notebook_from_script import notebook  # noqa: E402

failures = []


def check(name, ok):
    print(("ok   " if ok else "FAIL ") + name)
    if not ok:
        failures.append(name)


def check_numbers(label, out):
    ode = re.search(r"ODE final risk ([0-9.]+); Monte Carlo ([0-9.]+) \+- ([0-9.]+); validate: (\w+)", out)
    des = re.search(r"designed schedule: ODE ([0-9.]+) \(([-+0-9.]+) %\), Monte Carlo ([0-9.]+) \+- ([0-9.]+)", out)
    eps = re.search(r"epsilon = ([0-9.]+) \(PLD\), ([0-9.]+) \(RDP\), ([0-9.]+) \(RDP classic\)", out)
    check(f"{label}: the ODE, the Monte Carlo and the verdict are printed", bool(ode))
    check(f"{label}: the designed schedule is printed", bool(des))
    check(f"{label}: the DP-SGD accounting is printed", bool(eps))
    if ode:
        r, m, se = float(ode.group(1)), float(ode.group(2)), float(ode.group(3))
        check(f"{label}: the Monte Carlo agrees with the ODE (5 standard errors)", abs(m - r) < 5 * se + 0.02 * r)
        check(f"{label}: validate PASS", ode.group(4) == "PASS")
    if ode and des:
        check(f"{label}: the designed schedule lowers the predicted risk", float(des.group(2)) < 0)
        check(f"{label}: and the simulated risk", float(des.group(3)) < float(ode.group(2)))
    if eps:
        pld, rdp, classic = (float(x) for x in eps.groups())
        check(f"{label}: PLD <= RDP <= classic", pld <= rdp <= classic)


def example_data(script):
    """The function example_data of tour.py's data cell (the data set it makes), compiled
    alone from the script's text."""
    import ast
    tree = ast.parse(script)
    fns = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "example_data"]
    if not fns:
        return None
    ns = {"np": np}
    exec(compile(ast.Module(body=fns, type_ignores=[]), "tour.py", "exec"), ns)
    return ns["example_data"]


def reference(x, y):
    """NumPy's numbers of docs/theory.md §9 (centring, scale = trace, Sigma = X'X/N, the
    least-squares target): scale factor, eigenvalues, R(0), tau^2, label variance."""
    n, d = x.shape
    xc, yc = x - x.mean(axis=0), y - y.mean()
    s = np.sqrt(d / np.trace(xc.T @ xc / n))
    xs = s * xc
    sigma = xs.T @ xs / n
    lam = np.sort(np.linalg.eigvalsh(sigma))[::-1]
    theta = np.linalg.solve(sigma, xs.T @ yc / n)
    return {"scale": s, "lam": lam, "risk0": 0.5 * theta @ sigma @ theta,
            "tau2": np.mean((yc - xs @ theta) ** 2), "label_var": np.mean(yc ** 2)}


def check_data(label, out, ref):
    """The data cell's printed numbers (6 significant digits) against NumPy's."""
    head = re.search(r"your data: N = (\d+), d = (\d+), scale factor ([0-9.e+-]+); "
                     r"eigenvalues ([0-9.e+ -]+) \.\.\. ([0-9.e+-]+)", out)
    ls = re.search(r"least squares: R\(0\) = ([0-9.e+-]+), residual variance tau\^2 = "
                   r"([0-9.e+-]+) \(label variance ([0-9.e+-]+)\)", out)
    check(f"{label}: your data's summary is printed", bool(head) and bool(ls))
    if not (head and ls and ref):
        return
    close = lambda a, b: abs(float(a) - b) <= 6e-6 * abs(b)  # noqa: E731 (printed %.6g)
    top = head.group(4).split()
    check(f"{label}: N and d", (int(head.group(1)), int(head.group(2))) == (2000, 50))
    check(f"{label}: the scale factor is NumPy's", close(head.group(3), ref["scale"]))
    check(f"{label}: the top eigenvalues and the last are NumPy's",
          len(top) == 5 and all(close(t, v) for t, v in zip(top, ref["lam"][:5]))
          and close(head.group(5), ref["lam"][-1]))
    check(f"{label}: R(0) is NumPy's", close(ls.group(1), ref["risk0"]))
    check(f"{label}: the residual variance is NumPy's (about the noise's 0.09)",
          close(ls.group(2), ref["tau2"]) and 0.05 < ref["tau2"] < 0.13)
    check(f"{label}: the label variance is NumPy's", close(ls.group(3), ref["label_var"]))


with open(os.path.join(examples, "tour.py")) as f:
    script = f.read()
make_data = example_data(script)
check("tour.py's data cell defines example_data", make_data is not None)
ref = reference(*make_data()) if make_data else None
with open(os.path.join(examples, "tour.ipynb")) as f:
    committed = json.load(f)
made = notebook(script)
check("tour.ipynb holds tour.py's cells (scripts/notebook_from_script.py)",
      [(c["cell_type"], "".join(c["source"])) for c in committed["cells"]] ==
      [(c["cell_type"], "".join(c["source"])) for c in made["cells"]])
check("tour.ipynb is stored without outputs", all(not c.get("outputs") for c in committed["cells"]))
check("tour.py does not read sys.argv (a kernel's argv is its connection file)", "sys.argv" not in script)

with tempfile.TemporaryDirectory() as tmp:
    env = dict(os.environ, MPLBACKEND="Agg")
    p = subprocess.run([sys.executable, os.path.join(examples, "tour.py")], cwd=tmp, env=env,
                       capture_output=True, text=True, timeout=280)
    print(p.stdout)
    print(p.stderr, file=sys.stderr)
    check("tour.py exits 0", p.returncode == 0)
    png = os.path.join(tmp, "tour.png")
    check("tour.py draws tour.png", os.path.exists(png) and os.path.getsize(png) > 20000)
    png = os.path.join(tmp, "tour-data.png")
    check("tour.py draws tour-data.png (your data's spectrum)",
          os.path.exists(png) and os.path.getsize(png) > 10000)
    check_numbers("tour.py", p.stdout)
    check_data("tour.py", p.stdout, ref)

with tempfile.TemporaryDirectory() as tmp:
    env = dict(os.environ)
    env.pop("MPLBACKEND", None)
    nb_in = os.path.join(tmp, "tour.ipynb")
    with open(nb_in, "w") as f:
        json.dump(committed, f)
    p = subprocess.run([sys.executable, "-m", "nbconvert", "--to", "notebook", "--execute",
                        "--ExecutePreprocessor.timeout=280", "--ExecutePreprocessor.kernel_name=python3",
                        "--output", "executed.ipynb", nb_in], cwd=tmp, env=env, capture_output=True,
                       text=True, timeout=600)
    print(p.stderr[-3000:], file=sys.stderr)
    check("the notebook executes in a Jupyter kernel (nbconvert)", p.returncode == 0)
    executed = os.path.join(tmp, "executed.ipynb")
    if os.path.exists(executed):
        with open(executed) as f:
            cells = json.load(f)["cells"]
        outputs = [o for c in cells if c["cell_type"] == "code" for o in c.get("outputs", [])]
        text = "".join("".join(o.get("text", "")) for o in outputs if o.get("output_type") == "stream")
        print(text)
        check("no cell raised", not any(o.get("output_type") == "error" for o in outputs))
        check("both figures are shown inline (image/png): the curves and your data's spectrum",
              sum("image/png" in o.get("data", {}) for o in outputs) >= 2)
        check_numbers("tour.ipynb", text)
        check_data("tour.ipynb", text, ref)
sys.exit(1 if failures else 0)
