# stop_point.sh — sourced by the tests that signal a command at a known point (robust.sh,
# schedule.sh): with HDPSGD_TEST_STOP=POINT the command stops itself (SIGSTOP) there, and a
# stopped process stays stopped, so the test waits for that state, looks, sends its signal
# and SIGCONT. No race, no timer.
wait_stopped() {   # until process $1 is stopped (state T) or gone; 0 when stopped
  local st
  for _ in $(seq 1 6000); do
    st=$(sed -n 's/^[0-9]* (.*) \([A-Za-z]\).*/\1/p' "/proc/$1/stat" 2>/dev/null) || return 1
    [[ -z "$st" ]] && return 1
    [[ "$st" == T || "$st" == t ]] && return 0
    sleep 0.01
  done
  return 1
}
