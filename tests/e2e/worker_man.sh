#!/bin/sh
# Every option sia-worker --help shows appears in its page, sia-worker(7) (the check of
# tests/man, which expects section 1 pages, run on a copy named sia-worker.1).
#   worker_man.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib/harness.sh"
cp "$SRC/man/sia-worker.7" "$tmp/sia-worker.1" || fail "cannot copy sia-worker.7"
"$SRC/tests/man/check_options.sh" "$BIN" "$tmp" sia-worker >out 2>&1 ||
  fail "sia-worker(7) misses options of --help: $(cat out)"
cat out
