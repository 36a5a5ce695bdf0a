# Sourced by the shell tests in tests/cli: check NAME COMMAND... runs COMMAND, prints
# "ok   NAME" or "FAIL NAME" and counts it in the caller's pass and fail (set them to 0 first).
check() { # check NAME COMMAND...
  local name=$1; shift
  if "$@"; then pass=$((pass + 1)); echo "ok   $name"; else fail=$((fail + 1)); echo "FAIL $name"; fi
}
