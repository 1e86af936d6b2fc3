#!/usr/bin/env bash
# Fuzzes the compiler with libFuzzer (issue 16): builds tools/epl-fuzz with
# clang 22, coverage and AddressSanitizer into build-fuzz/ (installing
# Debian's clang-22 and its runtime if missing), seeds it with every
# `// -----` chunk of the test corpus, and runs it.
#
#   scripts/fuzz.sh [RUNS [SEED]]     default: 100000 inputs, seed 1
#
# Extra libFuzzer flags go in EPL_FUZZ_FLAGS (e.g. "-max_total_time=600").
# A finding (crash, sanitizer report, a pass leaving invalid IR, a failure
# without a diagnostic, a timeout) stops the run; its input is written to
# build-fuzz/fuzz/findings/. The plain build's epl-fuzz replays it
# (`build/bin/epl-fuzz FILE`, EPL_FUZZ_VERBOSE=1 prints the diagnostics);
# fixed, it becomes a lit test of the pass that failed.
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${1:-100000}
SEED=${2:-1}
BUILD_DIR=${EPL_FUZZ_BUILD_DIR:-build-fuzz}

EPL_EXTRA_PKGS="clang-22 libclang-rt-22-dev" scripts/setup.sh
if [[ ! -f "$BUILD_DIR/build.ninja" ]]; then
  CC=clang-22 CXX=clang++-22 cmake -G Ninja -S . -B "$BUILD_DIR" \
    -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir \
    -DCMAKE_BUILD_TYPE=Release \
    -DLLVM_USE_SANITIZER=Address \
    -DLLVM_USE_SANITIZE_COVERAGE=ON
fi
ninja -C "$BUILD_DIR" -j "${EPL_JOBS:-$(nproc)}" epl-fuzz

work="$BUILD_DIR/fuzz"
rm -rf "$work/seeds"
mkdir -p "$work/corpus" "$work/findings"
/usr/bin/python3 test/fuzz/mutate.py --corpus test --write-corpus "$work/seeds"

# allow_user_poisoning=0: see docs/reliability.md (LLVM's BumpPtrAllocator
# inlined into instrumented code). Leaks are the tools' context, left to
# the OS by design.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0:allow_user_poisoning=0}
# New inputs go to corpus/ (kept between runs); seeds/ is read only.
# shellcheck disable=SC2086 # EPL_FUZZ_FLAGS: several flags.
exec "$BUILD_DIR/bin/epl-fuzz" -runs="$RUNS" -seed="$SEED" \
  -timeout=30 -rss_limit_mb=4096 -max_len=65536 \
  -print_final_stats=1 -artifact_prefix="$work/findings/" \
  ${EPL_FUZZ_FLAGS:-} "$work/corpus" "$work/seeds"
