"""The README's "Load a CSV in Python" snippet, as written, on every kind of CSV the toolkit
writes (the commands of a selection of tests/golden/cases.txt, run in a temporary folder):
NumPy's and pandas' readings agree, row for row and column for column."""
import math
import os
import re
import shlex
import subprocess
import sys
import tempfile

import numpy as np
try:
    import pandas as pd
except ImportError:
    print("python_csv skipped: pandas is not installed (apt-get install python3-pandas)")
    sys.exit(77)

cli, src = os.environ["HDPSGD_CLI"], os.environ["HDPSGD_SOURCE_DIR"]
with open(os.path.join(src, "README.md")) as f:
    readme = f.read()
section = readme[readme.index("**Load a CSV in Python.**"):]
snippet = re.search(r"```python\n(.*?)```", section, re.S).group(1)
CASES = ["ode-default", "sim-default", "sde-default", "validate-default", "rf-small", "kl-run",
         "kl-bound", "kl-init", "nc-default", "si-default", "schedule-output", "rates-small",
         "si-exp-eps", "rf-exp-p1", "sweep-small"]
failures = []


def check(name, ok):
    print(("ok   " if ok else "FAIL ") + name)
    if not ok:
        failures.append(name)


with tempfile.TemporaryDirectory() as tmp:
    os.makedirs(os.path.join(tmp, "out"))
    subprocess.run([cli, "ode", "-o", os.path.join(tmp, "out", "my.ode.csv")], check=True,
                   capture_output=True)
    ns = {}
    old = os.getcwd()
    os.chdir(tmp)
    try:
        exec(snippet, ns)  # the README's code, as written
    finally:
        os.chdir(old)
    load_csv = ns["load_csv"]
    with open(os.path.join(src, "tests", "golden", "cases.txt")) as f:
        lines = [ln for ln in f if ln.strip() and not ln.startswith("#")]
    cases = {ln.split("|")[0].strip(): ln.split("|")[1] for ln in lines}
    csvs = []
    for name in CASES:
        d = os.path.join(tmp, name)
        os.makedirs(d)
        args = shlex.split(cases[name].replace("@DIR", d))
        p = subprocess.run([cli, *args], cwd=src, capture_output=True, text=True)
        check(f"{name} runs", p.returncode == 0)
        for root, _, files in os.walk(d):
            csvs += [os.path.join(root, x) for x in files if x.endswith(".csv")]
    tables = 0
    for path in sorted(csvs):
        rel = os.path.relpath(path, tmp)
        with open(path) as f:
            body = [ln for ln in f if not ln.startswith("#")]
        if os.path.basename(path) == "row.csv" or not body or "," not in body[0]:
            tables += 1  # a sweep point's row (results.csv holds them), a schedule table
            continue
        a = np.atleast_1d(load_csv(path))
        b = pd.read_csv(path, comment="#", float_precision="round_trip")  # as the README says
        same = list(a.dtype.names) == [str(c) for c in b.columns] and len(a) == len(b)
        for col in b.columns if same else []:
            x, y = a[col], b[col]
            if pd.api.types.is_numeric_dtype(y) and not pd.api.types.is_bool_dtype(y):
                same = same and np.array_equal(x, y.to_numpy(dtype=float), equal_nan=True)
            else:  # text (family names, verdicts): nan in NumPy, the text in pandas
                same = same and bool(np.all(np.isnan(x)))
        check(f"{rel}: NumPy and pandas read {len(b)} rows x {len(b.columns)} columns alike", same)
    check("the CSVs were read (not only tables)", len(csvs) - tables >= len(CASES))
sys.exit(1 if failures else 0)
