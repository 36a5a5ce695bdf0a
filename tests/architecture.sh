#!/usr/bin/env bash
# The layering of docs/architecture.md: a file under src/<layer>/ includes headers of its own
# layer and of earlier layers only (core, io, sim, families, drivers, cli), public headers
# included; the public headers keep the same order among themselves.
#   architecture.sh SRC_DIR
set -u
src=$1
python3 - "$src" <<'PY'
import re, sys, pathlib
root = pathlib.Path(sys.argv[1])
order = ["core", "io", "sim", "families", "drivers", "cli"]
public = {"error": "core", "model": "core", "spectrum": "core", "clip": "core",
          "schedule": "core", "problem": "core", "ode": "core", "privacy": "core", "version": "core",
          "rng": "sim", "sim": "sim", "rf": "families", "kl": "families", "nc": "families",
          "si": "families", "validate": "drivers", "grid": "drivers", "ncsweep": "drivers", "sweep": "drivers", "klsweep": "drivers", "rfexp": "drivers", "siexp": "drivers", "design": "drivers", "rates": "drivers",
          "hdpsgd": "drivers", "handle": "drivers"}
bad, files = [], 0
def check(path, layer):
    global files
    files += 1
    for n, line in enumerate(path.read_text().splitlines(), 1):
        m = re.match(r'\s*#\s*include\s+"([^"]+)"', line)
        if not m:
            continue
        inc = m.group(1)
        if inc.startswith("hdpsgd/"):
            target = public.get(inc[7:].removesuffix(".h"))
            if target is None:
                bad.append(f"{path}:{n}: {inc} is a public header with no layer in this test")
                continue
        elif "/" in inc:
            target = inc.split("/")[0]
        else:
            target = layer  # a header of its own folder
        if target not in order:
            continue
        if order.index(target) > order.index(layer):
            bad.append(f"{path}:{n}: the {layer} layer includes {inc} of the later {target} layer")
for layer in order:
    for path in sorted((root / "src" / layer).glob("*.[ch]")):
        check(path, layer)
for path in sorted((root / "include" / "hdpsgd").glob("*.h")):
    check(path, public.get(path.stem, "drivers"))
for b in bad:
    print("FAIL", b)
print(f"{files - len(bad)} passed, {len(bad)} failed")
sys.exit(1 if bad else 0)
PY
