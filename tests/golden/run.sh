#!/bin/sh
# Golden-file CLI test: runs one case folder against the built programs and compares
# stdout, stderr and the exit status with the files kept beside it.
#   run.sh BIN_DIR SOURCE_DIR CASE_DIR
# A case folder holds:
#   cmd      one shell command line; $BIN is the folder of the programs, $DATA the
#            project's data/, $CASE the case folder, $TESTDATA tests/data
#   stdin    (optional) fed to the command
#   stdout, stderr, status   what it must print and return (stderr/stdout may be absent:
#            then they must be empty)
# With SIA_UPDATE_GOLDEN=1 the expected files are rewritten from what the command did.
set -u
BIN=$1
SRC=$2
CASE=$3
# Relative paths, so that messages naming files do not depend on where the tree lives.
DATA=data
TESTDATA=tests/data
export BIN DATA CASE TESTDATA
export NO_COLOR=1 SIA_DATA_DIR="$DATA"
# The solvers' wall-clock limit (--time-limit, 2 s) is a safety net that a loaded machine
# can trip, giving a worse answer than the work limits give; the goldens compare the
# answer, so they run on the work limits alone (a case may still pass --time-limit).
export SIA_CTL_TIME_LIMIT=86400
unset SIA_CLUSTER SIA_CATALOG SIA_CONFIG
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$SRC" || exit 2
if [ -f "$CASE/stdin" ]; then
  sh -c "$(cat "$CASE/cmd")" <"$CASE/stdin" >"$tmp/stdout" 2>"$tmp/stderr"
else
  sh -c "$(cat "$CASE/cmd")" </dev/null >"$tmp/stdout" 2>"$tmp/stderr"
fi
echo $? >"$tmp/status"
if [ "${SIA_UPDATE_GOLDEN:-0}" = 1 ]; then
  cp "$tmp/status" "$CASE/status"
  for f in stdout stderr; do
    if [ -s "$tmp/$f" ]; then cp "$tmp/$f" "$CASE/$f"; else rm -f "$CASE/$f"; fi
  done
  echo "updated $CASE"
  exit 0
fi
fail=0
for f in status stdout stderr; do
  want="$CASE/$f"
  [ -f "$want" ] || want=/dev/null
  if ! cmp -s "$want" "$tmp/$f"; then
    echo "--- $f differs for $CASE ($(cat "$CASE/cmd"))"
    diff -u "$want" "$tmp/$f" | head -40
    fail=1
  fi
done
exit $fail
