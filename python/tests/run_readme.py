"""Runs the example of the README's "Use it from Python" section as written, in a temporary
folder, and checks the figure and the table it writes. Exit 77 (skipped) without matplotlib."""
import os
import re
import subprocess
import sys
import tempfile

try:
    import matplotlib  # noqa: F401
except ImportError:
    print("python_readme skipped: matplotlib is not installed (apt-get install python3-matplotlib)")
    sys.exit(77)

with open(sys.argv[1]) as f:
    readme = f.read()
section = readme[readme.index("## Use it from Python"):]
code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
lines = [ln for ln in code.splitlines() if ln.strip() and not ln.startswith("import")]
print(f"the example: {len(lines)} lines after the import")
with tempfile.TemporaryDirectory() as tmp:
    env = dict(os.environ, MPLBACKEND="Agg")
    p = subprocess.run([sys.executable, "-c", code], cwd=tmp, env=env, capture_output=True,
                       text=True, timeout=280)
    print(p.stdout, p.stderr)
    ok = p.returncode == 0
    png = os.path.join(tmp, "python.png")
    ok = ok and os.path.getsize(png) > 20000 if os.path.exists(png) else False
    ok = ok and os.path.exists(os.path.join(tmp, "best.tab"))
    ok = ok and len(lines) <= 12
print("ok" if ok else "FAIL")
sys.exit(0 if ok else 1)
