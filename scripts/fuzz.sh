#!/bin/sh
# Builds the libFuzzer targets of fuzz/ (clang, ASan + UBSan; fuzz/README.md) and runs
# them one after the other, each from its seed corpus (fuzz/make_corpus.sh) plus the
# corpus earlier runs grew, with its dictionary (fuzz/TARGET.dict). Prints per target the
# executions, executions per second, coverage (edges, features), corpus size and
# findings; an input that crashes, leaks, times out or trips a sanitizer is kept under
# the findings folder (FINDINGS/TARGET/crash-*, ...). Exit status 1 when anything was
# found, 0 otherwise.
#   scripts/fuzz.sh [TARGET...] [--time S | --runs N | --build-only]
#     TARGET      fuzz targets to run (default: all; see fuzz/CMakeLists.txt)
#     --time S    run each target for S seconds (default 60)
#     --runs N    run each target for N executions instead
#     --build-only  build the targets, run none (scripts/test.sh builds them beside the
#                 suite, then runs them)
#   SIA_FUZZ_BUILD_DIR   build folder (default build-fuzz)
#   SIA_FUZZ_FINDINGS    findings folder (default BUILD/fuzz-findings)
#   SIA_BUILD_JOBS       parallel compile jobs (default: the number of CPUs)
#   SIA_FUZZ_OPTIONS     more libFuzzer options for every target (e.g. -max_len=4096)
set -eu
cd "$(dirname "$0")/.."
limit="-max_total_time=60"
targets=""
build_only=0
while [ $# -gt 0 ]; do
  case "$1" in
    --time) [ $# -ge 2 ] || { echo "fuzz: --time needs seconds" >&2; exit 64; }
            limit="-max_total_time=$2"; shift 2 ;;
    --runs) [ $# -ge 2 ] || { echo "fuzz: --runs needs a count" >&2; exit 64; }
            limit="-runs=$2"; shift 2 ;;
    --build-only) build_only=1; shift ;;
    -h|--help) sed -n '2,/^[^#]/{/^#/p;}' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) echo "fuzz: unknown option $1 (see scripts/fuzz.sh --help)" >&2; exit 64 ;;
    *) targets="$targets $1"; shift ;;
  esac
done
all="$(sed -n '/^set(SIA_FUZZ_TARGETS/,/)/{s/set(SIA_FUZZ_TARGETS//;s/)//;p;}' fuzz/CMakeLists.txt |
  tr -s ' \n' '  ' | sed 's/^ *//; s/ *$//')"
[ -n "$targets" ] || targets="$all"
for t in $targets; do
  case " $all " in *" $t "*) ;; *) echo "fuzz: no target $t (known: $all)" >&2; exit 64 ;; esac
done
if ! command -v clang++ >/dev/null 2>&1; then
  echo "fuzz: clang++ not found (Debian: apt-get install clang libclang-rt-14-dev)" >&2
  exit 69
fi

build="${SIA_FUZZ_BUILD_DIR:-build-fuzz}"
findings="${SIA_FUZZ_FINDINGS:-$build/fuzz-findings}"
launcher=""
if command -v ccache >/dev/null 2>&1; then
  launcher="-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache"
fi
# shellcheck disable=SC2086
CC=clang CXX=clang++ cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release -DSIA_FUZZ=ON \
  -DSIA_BUILD_TESTS=OFF -DSIA_BUILD_BENCH=OFF -DSIA_ENABLE_CUDA=OFF $launcher >/dev/null
bins=""
for t in $targets; do bins="$bins fuzz_$t"; done
# shellcheck disable=SC2086
cmake --build "$build" -j "${SIA_BUILD_JOBS:-$(nproc 2>/dev/null || echo 2)}" --target $bins >"$build/fuzz-build.log" ||
  { cat "$build/fuzz-build.log" >&2; echo "fuzz: build failed" >&2; exit 70; }
[ "$build_only" = 0 ] || exit 0

seeds="$build/fuzz-seeds"
rm -rf "$seeds"
fuzz/make_corpus.sh "$seeds"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
status=0
printf '%-14s %12s %8s %7s %7s %7s %s\n' target executions exec/s cov ft corpus findings
for t in $targets; do
  corpus="$build/fuzz-corpus/$t"
  mkdir -p "$corpus" "$findings/$t" "$seeds/$t"
  log="$build/fuzz-$t.log"
  before="$(find "$findings/$t" -type f | wc -l)"
  rc=0
  # shellcheck disable=SC2086
  "$build/bin/fuzz_$t" "$limit" -dict="fuzz/$t.dict" -timeout=10 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="$findings/$t/" ${SIA_FUZZ_OPTIONS:-} \
    "$corpus" "$seeds/$t" >"$log" 2>&1 || rc=$?
  found=$(($(find "$findings/$t" -type f | wc -l) - before))
  if [ "$rc" -ne 0 ] && [ "$found" -eq 0 ]; then found=1; fi
  execs="$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)"
  rate="$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)"
  last="$(grep -E '^#[0-9]+' "$log" | tail -n 1)"
  cov="$(printf '%s' "$last" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')"
  ft="$(printf '%s' "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')"
  printf '%-14s %12s %8s %7s %7s %7s %s\n' "$t" "${execs:-?}" "${rate:-?}" "${cov:-?}" \
    "${ft:-?}" "$(find "$corpus" -type f | wc -l)" "$found"
  if [ "$found" -ne 0 ]; then
    status=1
    echo "fuzz: $t: finding(s) in $findings/$t/ (log: $log):" >&2
    grep -E 'ERROR: |runtime error: |SUMMARY: |fuzz: internal error|uncaught exception|Test unit written' \
      "$log" | head -n 8 >&2
  fi
done
exit "$status"
