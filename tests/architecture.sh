#!/usr/bin/env bash
# The layering of docs/architecture.md: a file under src/<layer>/ includes headers of its own
# layer and of earlier layers only (core, io, sim, families, drivers, cli), public headers
# included; the public headers keep the same order among themselves. And the core knows no
# model family: no core file (src/core/, the core's public headers) names an identifier
# that a family's public header declares (hdp_kl_keys, HDP_NC_CE, ...) or has a family
# section's name as a string ("kl"); it reaches them through hdp_family_sections only.
#   architecture.sh SRC_DIR
set -u
src=$1
python3 - "$src" <<'PY'
import re, sys, pathlib
root = pathlib.Path(sys.argv[1])
order = ["core", "io", "sim", "families", "drivers", "cli"]
public = {"error": "core", "progress": "core", "model": "core", "spectrum": "core", "clip": "core",
          "schedule": "core", "problem": "core", "ode": "core", "privacy": "core", "accountant": "core", "finite": "core", "dataset": "core", "version": "core", "fields": "core",
          "rng": "sim", "sim": "sim", "rf": "families", "kl": "families", "nc": "families",
          "si": "families", "net": "families", "netexp": "drivers", "validate": "drivers", "grid": "drivers", "ncsweep": "drivers", "sweep": "drivers", "klsweep": "drivers", "rfexp": "drivers", "siexp": "drivers", "design": "drivers", "rates": "drivers",
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

def code(path):  # the text without comments
    return re.sub(r'/\*.*?\*/|//[^\n]*', ' ', path.read_text(), flags=re.S)
family_ids, family_sections = set(), set()
for stem, layer in public.items():
    if layer == "families":
        text = code(root / "include" / "hdpsgd" / f"{stem}.h")
        family_ids |= set(re.findall(r'\b(?:hdp|HDP)_(?:' + stem + r'|dpgd)_\w+', text, re.I))
for path in sorted((root / "src" / "families").glob("*.c")):
    family_sections |= set(re.findall(r'(?:hdp_schema_section \w+ = \{"|HDP_SECTION_DEFINE\()(\w+)',
                                      code(path)))
if not family_sections or not family_ids:
    bad.append("no family section or identifier found: the check below would check nothing")
core_files = sorted((root / "src" / "core").glob("*.[ch]")) + [
    root / "include" / "hdpsgd" / f"{s}.h" for s, l in public.items()
    if l == "core" and (root / "include" / "hdpsgd" / f"{s}.h").exists()]
for path in core_files:
    files += 1
    text = code(path)
    names = sorted(set(re.findall(r'\b\w+\b', text)) & family_ids)
    names += sorted(set(re.findall(r'"(\w+)"', text)) & family_sections)
    if names:
        bad.append(f"{path}: the core names the model families' {', '.join(names)}")
for b in bad:
    print("FAIL", b)
print(f"{files - len(bad)} passed, {len(bad)} failed")
sys.exit(1 if bad else 0)
PY
