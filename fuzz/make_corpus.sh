#!/bin/sh
# Writes the seed corpus of every fuzz target, OUT/TARGET/, from what the tree holds:
# the bundled data (data/), the test inputs (tests/data), the golden cases' inputs and
# outputs (tests/golden), and the small hand-written seeds of fuzz/seeds/TARGET (the
# formats nothing else in the tree holds a file of). Files over 32 KiB are left out (a
# seed that large only slows the fuzzer down). Idempotent: existing files are replaced.
#   fuzz/make_corpus.sh OUT
set -eu
[ $# -eq 1 ] || { echo "usage: fuzz/make_corpus.sh OUT" >&2; exit 64; }
src="$(cd "$(dirname "$0")/.." && pwd)"
out="$1"

# add TARGET FILE...: copies each small regular file, named after its path in the tree.
add() {
  target="$1"
  shift
  mkdir -p "$out/$target"
  for f in "$@"; do
    [ -f "$f" ] || continue
    [ "$(wc -c <"$f")" -le 32768 ] || continue
    cp "$f" "$out/$target/$(printf '%s' "${f#"$src"/}" | tr '/' '_')"
  done
}

cd "$src"
for t in fuzz/seeds/*/; do
  t="$(basename "$t")"
  add "$t" "$src"/fuzz/seeds/"$t"/*
done
add document "$src"/data/clusters/* "$src"/data/examples/* "$src"/tests/data/*.json \
  "$src"/tests/data/*.toml "$src"/tests/data/*.jsonl "$src"/tests/golden/*/*/stdin \
  "$src"/tests/golden/*/*/stdout
add workload "$src"/data/workloads/*/*.csv "$src"/tests/data/workload-* \
  "$src"/data/examples/jobs.json "$src"/tests/golden/sia-ctl/submit-*/stdin
add node_outputs "$src"/tests/golden/sia-run/*/stdout
add allow_list "$src"/fuzz/seeds/keys/*
