#!/bin/sh
# Every option sia-worker --help shows appears in its page, sia-worker(7) (the check of
# tests/man, which expects section 1 pages, run on a copy named sia-worker.1).
#   worker_man.sh BIN_DIR SOURCE_DIR
set -eu
BIN=$1
SRC=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp "$SRC/man/sia-worker.7" "$tmp/sia-worker.1"
"$SRC/tests/man/check_options.sh" "$BIN" "$tmp" sia-worker
