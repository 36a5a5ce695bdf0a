#!/usr/bin/env bash
# Installs what hdpsgd needs from Debian's packages, and nothing else.
# Idempotent: packages already installed are skipped, and apt-get is not run at
# all when nothing is missing. Works as root (no sudo needed) or via sudo.
#   scripts/install-deps.sh [--with-datasets] [--with-bench]
# --with-datasets (opt-in) adds the real data sets that only the examples and tests on real data
# need (the test dataset_real, skipped without them): Fashion-MNIST (dataset-fashion-mnist,
# 30 MB in /usr/share/datasets/fashion-mnist) and scikit-learn with its bundled digits
# (python3-sklearn, digits.csv.gz).
# --with-bench (opt-in) adds what the benchmark bench/real_rows.sh compares against: Debian's
# PyTorch (python3-torch, several hundred MB with its libraries), and the data sets of
# --with-datasets it runs on. Neither option is used by CI.
set -euo pipefail
with_datasets=0
with_bench=0
for a in "$@"; do
  case $a in
    --with-datasets) with_datasets=1 ;;
    --with-bench) with_bench=1 with_datasets=1 ;;
    *) echo "install-deps: unknown option '$a' (accepted: --with-datasets, --with-bench)" >&2
       exit 2 ;;
  esac
done

packages=(
  gcc make cmake pkg-config   # compiler and build system
  libsundials-dev             # CVODE: the ODE solver of the theory side
  libgsl-dev                  # quadrature, minimisers, root finders, statistics, RNG
  libopenblas-dev liblapacke-dev  # BLAS/LAPACK kernels (random features, linear algebra)
  libinih-dev                 # INI parser for model files
  zlib1g-dev                  # gzipped data files (.npy.gz, IDX .gz, .csv.gz)
  libcmocka-dev               # unit tests
  gnuplot-nox                 # figures (used at run time)
  libopenmpi-dev openmpi-bin  # hdpsgd sweep across ranks and machines (optional at build time)
  python3                     # JSON checks in the command-line tests
  python3-numpy               # the Python package (python/, ctest -L python)
  python3-venv python3-setuptools  # tests: pip install ./python into a fresh virtual environment
  python3-matplotlib python3-pandas python3-nbconvert python3-ipykernel  # tests: the notebook, the README's Python
  valgrind                    # CI: memcheck of small runs (ctest -L valgrind)
  cppcheck                    # CI: static analysis of src/ (ctest -L lint)
  clang libclang-rt-14-dev    # CI: libFuzzer + sanitizer runtimes (ctest -L fuzz), clang warnings
  libomp-dev                  # CI: clang's OpenMP header (omp.h) for the clang warning check
  groff-base                  # CI: the man page formats without warnings (ctest -R cli_man)
)
if ((with_datasets)); then
  packages+=(dataset-fashion-mnist python3-sklearn)
fi
if ((with_bench)); then
  packages+=(python3-torch)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done
# python3 may come from elsewhere (pyenv, /usr/local): then it is not missing
if [[ " ${missing[*]-} " == *" python3 "* ]] && command -v python3 >/dev/null 2>&1; then
  missing=("${missing[@]/python3/}")
fi
read -r -a missing <<<"${missing[*]-}"

if ((${#missing[@]} == 0)); then
  echo "install-deps: all dependencies are installed"
  exit 0
fi

sudo=()
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1; then sudo=(sudo); else
    echo "install-deps: need root (or sudo) to install: ${missing[*]}" >&2
    exit 1
  fi
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update -q
"${sudo[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}"
