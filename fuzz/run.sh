#!/usr/bin/env bash
# Builds the libFuzzer harnesses with clang and -fsanitize=fuzzer,address,undefined in
# BUILD — the model parser (fuzz/fuzz_model.c), spectrum files with the eigenvalue
# binning (fuzz/fuzz_spectrum.c) and the strings handed to gnuplot (fuzz/fuzz_plot_quote.c)
# and the data readers, .npy, IDX and CSV gzipped or not, with the preparation behind them
# (fuzz/fuzz_dataset.c) — and fuzzes them for SECONDS in all (default 60: a third to the model
# parser, a third to the spectra, a sixth to the figure strings, a sixth to the data readers).
#   fuzz/run.sh BUILD [SECONDS] [HDPSGD]      HDPSGD: a built hdpsgd, for the key dictionary
# Seeds: models/*.ini, tests/bad-input/ (models, and the --set lines of *.set) and
# fuzz/corpus/ (inputs that once crashed: keep every one there as a regression test).
# Fails on any crash, leak, sanitizer report or timeout; the input is then saved as
# BUILD/crash-* (or leak-*, timeout-*) and the command to reproduce it is printed.
# Environment: FUZZ_SEED=N repeats a run (libFuzzer's -seed), CLANG=clang-14 picks clang.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=$1
secs=${2:-60}
bin=${3:-}
clang=${CLANG:-clang}
if ! command -v "$clang" >/dev/null 2>&1; then
  echo "fuzz: $clang not found: apt-get install clang libclang-rt-14-dev (or run scripts/install-deps.sh)" >&2
  exit 1
fi
mkdir -p "$build"
build=$(cd "$build" && pwd)

# the harness, the parser and nothing else (no OpenMP, no solvers): the core's model (model.c
# and model_read.c, model_finalize.c, model_write.c, model_with.c) and schema, and the families' sections
# of the model files (their tables, not their numerics);
# the privacy conversions (and the schedules their accountant reads), since finalize turns a
# budget given as (epsilon, delta) into rho; and what finalize reaches since the data-set keys,
# the label-noise laws and [sgd]: the data set's reading and preparation (data.source = file),
# the clipping factors (an empirical law's sample is checked there), the finite set's
# calibration (the accountant) and the problem's divergence threshold
schema_src=("$src/src/core/model_read.c" "$src/src/core/model_finalize.c" "$src/src/core/model_write.c"
            "$src/src/core/model_with.c"
            "$src/src/core/schema.c" "$src/src/families/families.c" "$src/src/families/rf_keys.c"
            "$src/src/families/nc_keys.c" "$src/src/families/kl_keys.c" "$src/src/families/si_keys.c"
            "$src/src/families/net_keys.c"
            "$src/src/core/privacy.c" "$src/src/core/schedule.c"
            "$src/src/core/model_data.c" "$src/src/core/data_bias.c" "$src/src/core/dataset.c"
            "$src/src/core/dataset_read.c" "$src/src/core/dataset_csv.c" "$src/src/core/dataset_load.c"
            "$src/src/core/clip.c" "$src/src/core/clip_fit.c" "$src/src/core/clip_rows.c"
            "$src/src/core/finite.c" "$src/src/core/accountant.c" "$src/src/core/problem.c"
            "$src/src/core/spectrum.c")
schema_pc="inih gsl zlib lapacke openblas"
# shellcheck disable=SC2046
"$clang" -std=gnu11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
  -fno-omit-frame-pointer -Wall -Wextra -Wpedantic -Werror -I"$src/include" -I"$src/src" \
  $(pkg-config --cflags $schema_pc) "$src/fuzz/fuzz_model.c" "$src/src/core/model.c" "${schema_src[@]}" "$src/src/core/error.c" \
  $(pkg-config --libs $schema_pc) -lm -o "$build/fuzz_model"
# the strings handed to gnuplot (fuzz/fuzz_plot_quote.c: only src/cli/plot_vars.c)
"$clang" -std=gnu11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
  -fno-omit-frame-pointer -Wall -Wextra -Wpedantic -Werror -I"$src/include" -I"$src/src" \
  "$src/fuzz/fuzz_plot_quote.c" "$src/src/cli/plot_vars.c" -lm -o "$build/fuzz_plot_quote"
# shellcheck disable=SC2046
"$clang" -std=gnu11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
  -fno-omit-frame-pointer -Wall -Wextra -Wpedantic -Werror -I"$src/include" -I"$src/src" \
  $(pkg-config --cflags $schema_pc) "$src/fuzz/fuzz_spectrum.c" "$src/src/core/model.c" "${schema_src[@]}" \
  "$src/src/core/error.c" $(pkg-config --libs $schema_pc) -lm \
  -o "$build/fuzz_spectrum"

# the data readers and the preparation (fuzz/fuzz_dataset.c: src/core/dataset*.c, LAPACKE)
# shellcheck disable=SC2046
"$clang" -std=gnu11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all \
  -fno-omit-frame-pointer -Wall -Wextra -Wpedantic -Werror -I"$src/include" -I"$src/src" \
  $(pkg-config --cflags zlib lapacke openblas gsl) "$src/fuzz/fuzz_dataset.c" "$src/src/core/dataset_read.c" \
  "$src/src/core/dataset_csv.c" "$src/src/core/dataset.c" "$src/src/core/error.c" \
  $(pkg-config --libs zlib lapacke openblas gsl) -lm -o "$build/fuzz_dataset"

# a fresh working corpus, the seeds, and a directory with valid and invalid data files
rm -rf "$build/corpus" "$build/seeds" "$build/data"
mkdir -p "$build/corpus" "$build/seeds" "$build/data"
# (not the models of a real data set: reading 60 000 images is no parser input, and its
# seconds would be reported as a timeout)
for f in "$src"/models/*.ini; do
  grep -q '^ *features *=' "$f" || cp "$f" "$build/seeds/"
done
cp "$src"/tests/bad-input/*.ini "$build/seeds/"
for f in "$src"/tests/bad-input/*.set; do
  grep -v -e '^; expect' -e '^--set$' "$f" > "$build/seeds/$(basename "$f").txt" || true
done
cp "$src"/fuzz/corpus/* "$build/seeds/" 2>/dev/null || true
cp "$src"/tests/bad-input/*.txt "$build/data/"
find "$src/models" -maxdepth 1 -type f ! -name '*.ini' -exec cp {} "$build/data/" \;

# dictionary: sections, keys, section.key= from `hdpsgd keys`, and values that matter
{
  printf '"="\n"inf"\n"nan"\n"1e999"\n"-0"\n"0x1p-1074"\n"/dev/zero"\n"."\n"#"\n";"\n'
  if [[ -n $bin && -x $bin ]]; then
    "$bin" keys | awk '
      /^\[/ { sec = substr($1, 2, length($1) - 2); printf "\"[%s]\"\n", sec; next }
      NF >= 2 && $2 == "=" { printf "\"%s\"\n\"%s.%s=\"\n", $1, sec, $1 }'
    # enum values listed in the help texts ("a | b | c")
    "$bin" keys | grep -oE '[a-z][a-z0-9-]*( \| [a-z][a-z0-9-]*)+' | sed 's/ | /\n/g' | sort -u |
      sed 's/.*/"&"/'
  fi
} > "$build/model.dict"
dict=(-dict="$build/model.dict")

seed=()
[[ -n ${FUZZ_SEED:-} ]] && seed=(-seed="$FUZZ_SEED")
cd "$build/data"
echo "fuzz: $secs s on $(ls "$build/seeds" | wc -l) seeds; reproduce a failure with:"
echo "  HDPSGD_FUZZ_DIR=$build/data $build/fuzz_model $build/crash-..."
# fuzz NAME BINARY SECONDS PREFIX CORPUS SEEDS [ARGS...]: run one target, fail on any report
fuzz() {
  local name=$1 binary=$2 t=$3 prefix=$4 corpus=$5 seeds=$6 log="$build/$4fuzz.log"
  shift 6
  set +e
  HDPSGD_FUZZ_DIR="$build/data" UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
    "$binary" "$@" "${seed[@]}" -max_total_time="$t" -timeout=10 -rss_limit_mb=2048 \
    -max_len=4096 -print_final_stats=1 -artifact_prefix="$build/$prefix" "$corpus" "$seeds" \
    >"$log" 2>&1
  local status=$?
  set -e
  if [[ $status -ne 0 ]]; then
    grep -v -e '^#[0-9]' "$log" | tail -n 80
    echo "fuzz: $name FAILED (status $status): see $log; add the input to the seed corpus once fixed"
    exit 1
  fi
  echo "fuzz: $name: no crash, leak or sanitizer report ($(grep -o 'stat::number_of_executed_units: [0-9]*' "$log" | grep -o '[0-9]*$') inputs)"
}
fuzz "model parser" "$build/fuzz_model" "$((secs - secs / 3 - 2 * (secs / 6)))" "" "$build/corpus" \
  "$build/seeds" "${dict[@]}"

# spectra: seeds are the spectrum files of the repository (text mode: a leading even byte)
rm -rf "$build/spectrum-corpus" "$build/spectrum-seeds"
mkdir -p "$build/spectrum-corpus" "$build/spectrum-seeds"
for f in "$src"/tests/bad-input/*.txt "$src"/fuzz/spectrum-corpus/*; do
  [[ -f $f ]] && { printf '\0'; cat "$f"; } > "$build/spectrum-seeds/$(basename "$f")"
done
printf '\1\x20\x05\x00\x31\x05\x31\x0a\x31\x0f\x02' > "$build/spectrum-seeds/edges-recipe"
fuzz "spectra" "$build/fuzz_spectrum" "$((secs / 3 > 1 ? secs / 3 : 1))" spectrum- \
  "$build/spectrum-corpus" "$build/spectrum-seeds"

# the strings of figures: seeds are the payloads of tests/cli/plot_hostile.sh
rm -rf "$build/plot-corpus"
mkdir -p "$build/plot-corpus"
fuzz "figure strings" "$build/fuzz_plot_quote" "$((secs / 6 > 1 ? secs / 6 : 1))" plot- \
  "$build/plot-corpus" "$src/fuzz/plot-corpus"

# the data readers: seeds are small .npy, IDX and CSV files (first byte: the name and gzip)
rm -rf "$build/dataset-corpus"
mkdir -p "$build/dataset-corpus"
fuzz "data readers" "$build/fuzz_dataset" "$((secs / 6 > 1 ? secs / 6 : 1))" dataset- \
  "$build/dataset-corpus" "$src/fuzz/dataset-corpus"
