#!/usr/bin/env bash
# Installs the build into a throw-away prefix and builds examples/ against it
# twice — with CMake's find_package(hdpsgd) and with pkg-config — then runs the
# examples and checks their output; also the installed program, man page and
# bash completion; and, given a python3 with NumPy (third argument), the installed Python
# package: it must load the installed libhdpsgd.so, not the build tree's.
set -u
build=$1
src=$2
python=${3:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
check() { local name=$1; shift
  if "$@"; then pass=$((pass + 1)); echo "ok   $name"; else fail=$((fail + 1)); echo "FAIL $name"; fi; }
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1
check "cmake --install" test $? -eq 0
libdir=$(dirname "$(find "$prefix" -name libhdpsgd.so | head -n1)")
for f in bin/hdpsgd include/hdpsgd/hdpsgd.h include/hdpsgd/version.h share/man/man1/hdpsgd.1 \
         share/bash-completion/completions/hdpsgd share/hdpsgd/models/default.ini \
         share/hdpsgd/plots/validate.gp; do
  check "installed $f" test -e "$prefix/$f"
done
check "static library" test -e "$libdir/libhdpsgd.a"
check "CMake package" test -e "$libdir/cmake/hdpsgd/hdpsgdConfig.cmake"
check "pkg-config file" test -e "$libdir/pkgconfig/hdpsgd.pc"
"$prefix/bin/hdpsgd" --version | grep -q '^hdpsgd 0\.'
check "installed hdpsgd --version" test $? -eq 0

run_examples() { # run_examples LABEL DIR
  local dir=$2
  (cd "$dir" && LD_LIBRARY_PATH=$libdir ./ode_in_code) >"$work/ode.out" 2>&1
  check "$1: ode_in_code runs" test $? -eq 0
  check "$1: ode_in_code prints the final risk" grep -q '^final excess risk 0\.' "$work/ode.out"
  LD_LIBRARY_PATH=$libdir "$dir/validate_model" "$src/models/isotropic-output.ini" 40 >"$work/val.out" 2>&1
  check "$1: validate_model agrees" test $? -eq 0
  check "$1: validate_model output" grep -q ': agree$' "$work/val.out"
  LD_LIBRARY_PATH=$libdir "$dir/design_for_budget" 2 1e-5 >"$work/des.out" 2>&1
  check "$1: design_for_budget runs" test $? -eq 0
  check "$1: design_for_budget calibrates rho" grep -q '^(epsilon, delta) = (2, 1e-05): rho = ' "$work/des.out"
  check "$1: design_for_budget names the best family" grep -q '^best: ' "$work/des.out"
}

cmake -S "$src/examples" -B "$work/ex-cmake" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release \
  >"$work/cmake.log" 2>&1 && cmake --build "$work/ex-cmake" >>"$work/cmake.log" 2>&1
rc=$?; [[ $rc -eq 0 ]] || cat "$work/cmake.log"
check "examples build with find_package(hdpsgd)" test $rc -eq 0
run_examples "find_package" "$work/ex-cmake"

cp -r "$src/examples" "$work/ex-pc"
PKG_CONFIG_PATH=$libdir/pkgconfig make -C "$work/ex-pc" >"$work/make.log" 2>&1
rc=$?; [[ $rc -eq 0 ]] || cat "$work/make.log"
check "examples build with pkg-config" test $rc -eq 0
run_examples "pkg-config" "$work/ex-pc"
(cd "$work" && env -u LD_LIBRARY_PATH "$work/ex-pc/ode_in_code") >"$work/ode-rpath.out" 2>&1
check "pkg-config examples run without LD_LIBRARY_PATH (rpath)" test $? -eq 0
for d in README.md docs/theory.md docs/reliability.md docs/architecture.md docs/gallery.md; do
  check "documentation installed: share/doc/hdpsgd/$d" test -s "$prefix/share/doc/hdpsgd/$d"
done
check "the gallery's figures installed" bash -c "ls '$prefix'/share/doc/hdpsgd/docs/gallery/*.png >/dev/null"
check "the man page points at the installed documentation" grep -q 'share/doc/hdpsgd' "$prefix/share/man/man1/hdpsgd.1"
check "pkg-config --libs names the library" bash -c "PKG_CONFIG_PATH='$libdir/pkgconfig' pkg-config --libs hdpsgd | grep -q -- -lhdpsgd"
check "pkg-config --static links GSL without libgslcblas" bash -c "! PKG_CONFIG_PATH='$libdir/pkgconfig' pkg-config --libs --static hdpsgd | grep -q gslcblas"
check "find_package(hdpsgd) links GSL without libgslcblas" bash -c "! grep -rq gslcblas '$work/ex-cmake/CMakeFiles' --include=link.txt"
check "pkg-config --static adds the private dependencies" bash -c "PKG_CONFIG_PATH='$libdir/pkgconfig' pkg-config --libs --static hdpsgd | grep -q sundials_cvode"

# the installed sweep examples run from the prefix: their base models are installed where
# they point (../../models from share/hdpsgd/examples/sweeps); run from another folder
mkdir -p "$work/cwd"
for ex in grid design chain; do
  (cd "$work/cwd" && "$prefix/bin/hdpsgd" sweep "$prefix/share/hdpsgd/examples/sweeps/$ex.ini" --dry-run) \
    >"$work/dry-$ex.out" 2>"$work/dry-$ex.err"
  rc=$?; [[ $rc -eq 0 ]] || cat "$work/dry-$ex.err"
  check "installed examples/sweeps/$ex.ini checks from the prefix" test $rc -eq 0
done
check "the installed grid.ini lists its 30 points" test "$(wc -l <"$work/dry-grid.out")" -eq 30
# a sweep's default output folder is NAME-out in the current directory, not beside the file
printf '[sweep]\nmodel = ../../models/isotropic-output.ini\ncommands = ode\n[axes]\nclip.c = 1, 2\n[set]\ndata.d = 20\n' \
  >"$work/tiny.ini"
cp "$work/tiny.ini" "$prefix/share/hdpsgd/examples/sweeps/tiny.ini"
(cd "$work/cwd" && "$prefix/bin/hdpsgd" sweep "$prefix/share/hdpsgd/examples/sweeps/tiny.ini") >"$work/tiny.out" 2>&1
rc=$?; [[ $rc -eq 0 ]] || cat "$work/tiny.out"
check "a sweep of an installed model runs from another folder" test $rc -eq 0
check "the sweep's default folder is in the current directory" test -s "$work/cwd/tiny-out/results.csv"
check "nothing is written beside the sweep file" test ! -e "$prefix/share/hdpsgd/examples/sweeps/tiny-out"
# the pkg-config route without LD_LIBRARY_PATH: an rpath to pkg-config's libdir (README)
pclib=$(PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config --variable=libdir hdpsgd)
cc -o "$work/ode_rpath" "$src/examples/ode_in_code.c" $(PKG_CONFIG_PATH=$libdir/pkgconfig pkg-config --cflags --libs hdpsgd) \
  -Wl,-rpath,"$pclib" -lm >"$work/rpath.log" 2>&1
rc=$?; [[ $rc -eq 0 ]] || cat "$work/rpath.log"
check "pkg-config build with -Wl,-rpath,\$(pkg-config --variable=libdir hdpsgd)" test $rc -eq 0
env -u LD_LIBRARY_PATH "$work/ode_rpath" >"$work/ode_rpath.out" 2>&1
check "it runs without LD_LIBRARY_PATH" grep -q '^final excess risk 0\.' "$work/ode_rpath.out"
env -u LD_LIBRARY_PATH "$work/ex-cmake/ode_in_code" >"$work/ode_cmake.out" 2>&1
check "find_package's build runs without LD_LIBRARY_PATH (RPATH)" grep -q '^final excess risk 0\.' "$work/ode_cmake.out"

check "man page renders" bash -c "grep -q '^.SH MODEL KEYS' '$prefix/share/man/man1/hdpsgd.1' && grep -q 'clip.c' '$prefix/share/man/man1/hdpsgd.1'"
out=$(bash --norc -c "shopt -u extglob; source '$prefix/share/bash-completion/completions/hdpsgd'; COMP_WORDS=(hdpsgd ode --set clip.f); COMP_CWORD=3; _hdpsgd; echo \${COMPREPLY[*]}")
check "bash completion of model keys" test "$out" = "clip.feature_norm="
out=$(bash --norc -c "shopt -u extglob; source '$prefix/share/bash-completion/completions/hdpsgd'; COMP_WORDS=(hdpsgd val); COMP_CWORD=1; _hdpsgd; echo \${COMPREPLY[*]}")
check "bash completion of commands" test "$out" = "validate"
if [[ -n $python ]]; then
  pydir=$(ls -d "$prefix"/lib/python3*/*-packages 2>/dev/null | head -1)
  check "the Python package is installed where the interpreter of a plain prefix looks" \
    bash -c "[[ '$pydir' == '$prefix'/lib/python3.*/site-packages ]]"
  for f in __init__.py _lib.py _config.py; do
    check "installed Python package: hdpsgd/$f" test -e "$pydir/hdpsgd/$f"
  done
  check "the installed _config.py names the installed library" \
    grep -q "^LIBRARY = \"$prefix/.*libhdpsgd\.so\.0\"\$" "$pydir/hdpsgd/_config.py"
  "$prefix/bin/hdpsgd" ode --set clip.c=0.7 --json "$work/ode.json" -o /dev/null
  (cd "$work" && env -u HDPSGD_LIBRARY -u LD_LIBRARY_PATH PYTHONPATH="$pydir" "$python" - "$prefix" "$work/ode.json" <<'PY'
import json, sys, hdpsgd
prefix, ref = sys.argv[1], sys.argv[2]
assert hdpsgd.__file__.startswith(prefix), hdpsgd.__file__
assert hdpsgd._lib.LIBRARY_PATH.startswith(prefix), hdpsgd._lib.LIBRARY_PATH
r = hdpsgd.ode(hdpsgd.Model(overrides={"clip.c": 0.7}))
with open(ref) as f:
    want = json.load(f)["final_risk"]
assert r.final_risk == want, (r.final_risk, want)
print("installed hdpsgd", hdpsgd.__version__, "from", hdpsgd._lib.LIBRARY_PATH, "final risk", r.final_risk)
PY
  ) >"$work/py.out" 2>&1
  rc=$?; [[ $rc -eq 0 ]] || cat "$work/py.out"
  check "installed Python package loads the installed library, same numbers as the program" test $rc -eq 0
else
  echo "skip the Python package: no python3 with NumPy"
fi
echo "$pass passed, $fail failed"
[[ $fail -eq 0 ]]
