#!/usr/bin/env bash
# `pip install ./python` as a Python user does it, offline, into fresh virtual environments of
# Debian's python3 (--system-site-packages for Debian's NumPy and setuptools):
#   1. finding the library of a CMake build (HDPSGD_BUILD_DIR),
#   2. building it from the source tree (a copy, so that pip's build folders stay out of it),
# then importing it from another folder and comparing a number with the program's.
# Usage: pip_install.sh PYTHON3 SOURCE_DIR BUILD_DIR HDPSGD_CLI
set -u
py=$1 src=$2 build=$3 cli=$4
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
pass=0 fail=0
check() { local name=$1; shift; if "$@"; then pass=$((pass + 1)); echo "ok   $name"; else fail=$((fail + 1)); echo "FAIL $name"; fi; }
if ! "$py" -c 'import venv, ensurepip, setuptools' 2>/dev/null; then
  echo "skipped: $py lacks venv/ensurepip or setuptools (apt-get install python3-venv python3-setuptools)"; exit 77
fi
"$cli" ode --set clip.c=0.7 --json "$work/ref.json" -o /dev/null
want=$("$py" -c 'import json,sys; print(repr(json.load(open(sys.argv[1]))["final_risk"]))' "$work/ref.json")
probe='import hdpsgd, sys; r = hdpsgd.ode(hdpsgd.Model(overrides={"clip.c": 0.7})); print(repr(r.final_risk)); print(hdpsgd._lib.LIBRARY_PATH)'

# copy of the source tree without builds and git
mkdir "$work/src"
(cd "$src" && tar --exclude='./build*' --exclude=./.git --exclude='./python/build' --exclude='*.egg-info' -cf - .) | tar -xf - -C "$work/src"

for mode in find build; do
  "$py" -m venv --system-site-packages "$work/venv-$mode"
  if [[ $mode == find ]]; then
    (cd "$work" && env HDPSGD_BUILD_DIR="$build" "$work/venv-$mode/bin/pip" install -q --no-build-isolation --no-index "$work/src/python") >"$work/pip-$mode.log" 2>&1
  else
    (cd "$work" && env -u HDPSGD_BUILD_DIR -u HDPSGD_LIBRARY PKG_CONFIG_PATH=/nonexistent "$work/venv-$mode/bin/pip" install -q --no-build-isolation --no-index "$work/src/python") >"$work/pip-$mode.log" 2>&1
  fi
  rc=$?; ((rc == 0)) || tail -20 "$work/pip-$mode.log"
  check "pip install ($mode the library) exits 0" test $rc -eq 0
  out=$(cd / && env -u HDPSGD_LIBRARY -u PYTHONPATH -u LD_LIBRARY_PATH "$work/venv-$mode/bin/python" -c "$probe" 2>&1)
  echo "$out"
  check "venv ($mode): same final risk as the program" test "$(echo "$out" | head -1)" = "$want"
  if [[ $mode == build ]]; then
    check "venv (build): the library is inside the package" bash -c "echo '$out' | tail -1 | grep -q '$work/venv-build/lib/python3.*/site-packages/hdpsgd/libhdpsgd.so'"
  fi
  check "venv ($mode): py.typed installed" bash -c "ls '$work'/venv-$mode/lib/python3*/site-packages/hdpsgd/py.typed >/dev/null"
done
check "a Python without NumPy gets an ImportError that names NumPy" bash -c \
  "cd '$work' && env -u PYTHONPATH '$work/venv-find/bin/python' -I -S -c 'import sys; sys.path.insert(0, \"$(ls -d "$work"/venv-find/lib/python3*/site-packages)\"); import hdpsgd' 2>&1 | grep -q 'hdpsgd needs NumPy'"
echo "$pass passed, $fail failed"
((fail == 0))
