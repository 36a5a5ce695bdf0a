#!/usr/bin/env bash
# Static checks (issue 8), on exactly what the build compiles (BUILD/compile_commands.json):
#  1. cppcheck (warning, portability, performance) on the files of src/: no finding. A
#     false positive is suppressed where it occurs, with the reason:
#     /* cppcheck-suppress ID ; why */
#  2. clang -fsyntax-only -Werror with the build's own flags (-Wall -Wextra -Wpedantic) on
#     every C file of the build (library, program, tests): gcc compiles them with the same
#     warnings (and with -Werror in tests/sanitize.sh), so the code is warning-free with
#     both compilers. The fuzz harness is compiled by clang with -Werror in fuzz/run.sh.
#   tests/lint.sh SRC BUILD
set -u
src=$1
build=$2
db=$build/compile_commands.json
fail=0
for tool in cppcheck clang python3; do
  if ! command -v $tool >/dev/null 2>&1; then
    echo "$tool not found: run scripts/install-deps.sh"
    exit 1
  fi
done
if [[ ! -f $db ]]; then
  echo "$db not found: configure the build with CMake (it exports compile commands)"
  exit 1
fi

echo "== cppcheck $(cppcheck --version | cut -d' ' -f2) on src/"
mkdir -p "$build/cppcheck"
if ! cppcheck --project="$db" --file-filter="$src/src/*" --error-exitcode=1 \
     --enable=warning,portability,performance --inline-suppr -q --std=c11 \
     --cppcheck-build-dir="$build/cppcheck" \
     --template='{file}:{line}: {severity}: {message} [{id}]'; then
  echo "FAIL cppcheck: fix the finding, or suppress a false positive inline with the reason"
  fail=1
else
  echo "ok   cppcheck: no finding in src/"
fi

echo "== clang -fsyntax-only -Werror with the build's flags"
python3 - "$db" <<'PY' || fail=1
import json, shlex, subprocess, sys
entries = json.load(open(sys.argv[1]))
bad = 0
for e in entries:
    args = e.get("arguments") or shlex.split(e["command"])
    cmd = ["clang"]
    skip = False
    for a in args[1:]:
        if skip:
            skip = False
            continue
        if a == "-o":
            skip = True
            continue
        if a == "-c":
            continue
        cmd.append(a)
    cmd += ["-fsyntax-only", "-Werror"]
    r = subprocess.run(cmd, cwd=e["directory"], capture_output=True, text=True)
    if r.returncode != 0:
        bad += 1
        print(r.stdout + r.stderr, end="")
        print("FAIL clang:", e["file"])
if bad == 0:
    print("ok   clang: %d files without a warning" % len(entries))
sys.exit(1 if bad else 0)
PY
exit $fail
