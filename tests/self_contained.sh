#!/usr/bin/env bash
# The repository stands on its own (issue 22): no tracked file points outside it. The
# mathematics is cited as docs/theory.md sections and the papers by their names (docs/theory.md,
# Appendix A); a citation of an out-of-tree document, or of a paper by a file name, fails here.
# Usage: self_contained.sh SRC_DIR
set -u
cd "$1" || exit 2
pattern='\.\./shared|THEORY|shared/seeds|seed ?00[0-9]'
fail=0 n=0
while IFS= read -r -d '' f; do
  n=$((n + 1))
  [[ $f == tests/self_contained.sh ]] && continue
  if grep -nIE "$pattern" "$f" >/tmp/hdpsgd-selfcontained.$$ 2>/dev/null; then
    fail=$((fail + 1))
    echo "FAIL $f points outside the repository:"; sed 's/^/    /' /tmp/hdpsgd-selfcontained.$$ | head -5
  fi
done < <(git ls-files -z 2>/dev/null || find . -type f -not -path './.git/*' -print0)
rm -f /tmp/hdpsgd-selfcontained.$$
[[ $n -gt 0 ]] || { echo "FAIL no files found"; exit 1; }
echo "$((n - fail)) passed, $fail failed"
[[ $fail -eq 0 ]]
