#!/bin/sh
# Checkpoints are used only when complete: a crash mid-write (a truncated temporary file,
# even a truncated newer ckpt file that `latest` does not name) leaves the previous
# checkpoint in charge; a damaged file that `latest` does name gives way to the newest
# intact checkpoint, with a warning; with none intact the restore fails with status 65 and
# a clear message -- never a silent restart from step 0.
#   worker_checkpoint_integrity.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib/harness.sh"
logs "$tmp/err" "$tmp/err1"
W=$BIN/sia-worker
export SIA_JOB=e2e-integrity SIA_CKPT_DIR=$tmp/ck
export SIA_REPORT=$tmp/reports.jsonl SIA_LOCAL_BSZ=16
ck=$tmp/ck

# run EXPECTED_STATUS RESTORE STEPS
run() {
  SIA_RESTORE=$2 "$W" --steps "$3" 2>"$tmp/err"
  st=$?
  [ "$st" -eq "$1" ] || fail "sia-worker exited $st, expected $1"
}

run 0 0 50
[ "$(cat "$ck/latest")" = ckpt-000000000050.bin ] || fail "latest: $(cat "$ck/latest")"

# A writer died while writing step 60: its temporary file and a truncated ckpt file.
size=$(wc -c <"$ck/ckpt-000000000050.bin")
head -c $((size / 2)) "$ck/ckpt-000000000050.bin" >"$ck/.ckpt-000000000060.bin.tmp.999999"
head -c $((size / 2)) "$ck/ckpt-000000000050.bin" >"$ck/ckpt-000000000060.bin"
run 0 1 70
[ ! -e "$ck/ckpt-000000000060.bin" ] || fail "the truncated leftover was kept"
grep -q "restored step 50 " "$tmp/err" || fail "did not resume from step 50"
tail -1 "$SIA_REPORT" | json_has - 'd["step"] == 70' || fail "did not finish at step 70"
[ "$(cat "$ck/latest")" = ckpt-000000000070.bin ] || fail "latest after step 70"
[ ! -e "$ck/.ckpt-000000000060.bin.tmp.999999" ] || fail "stale temporary file kept"

# The checkpoint `latest` names is truncated: the newest intact one instead, said aloud.
truncate -s 100 "$ck/ckpt-000000000070.bin"
run 0 1 90
grep -q "ckpt-000000000070.bin: corrupt checkpoint: truncated.*restoring the newest intact checkpoint, ckpt-000000000050.bin (step 50)" "$tmp/err" ||
  fail "no warning about the fallback"
grep -q "restored step 50 " "$tmp/err" || fail "did not fall back to step 50"
[ "$(cat "$ck/latest")" = ckpt-000000000090.bin ] || fail "latest after step 90"
cp "$ck/ckpt-000000000090.bin" "$tmp/good.bin"

# None intact: refuse, say why, change nothing.
lines=$(wc -l <"$SIA_REPORT")
truncate -s 100 "$ck/ckpt-000000000090.bin"
run 65 1 100
grep -q "ckpt-000000000090.bin: corrupt checkpoint: truncated" "$tmp/err" ||
  fail "unclear message"
[ "$(wc -l <"$SIA_REPORT")" -eq "$lines" ] || fail "a refused restore trained anyway"
[ "$(cat "$ck/latest")" = ckpt-000000000090.bin ] || fail "latest changed"

# A flipped byte: the checksum catches it.
cp "$tmp/good.bin" "$ck/ckpt-000000000090.bin"
printf 'X' | dd of="$ck/ckpt-000000000090.bin" bs=1 seek=200 conv=notrunc 2>/dev/null
run 65 1 100
grep -q "checksum mismatch" "$tmp/err" || fail "checksum not checked"

# A 2-rank job: rank 0's refusal reaches rank 1, both exit 65.
export WORLD_SIZE=2 MASTER_ADDR=127.0.0.1 MASTER_PORT=$((20000 + $$ % 20000 + 7))
RANK=1 SIA_RESTORE=1 "$W" --steps 100 2>"$tmp/err1" &
p1=$!
started "$p1"
RANK=0 SIA_RESTORE=1 "$W" --steps 100 2>"$tmp/err"
st0=$?
wait "$p1"
st1=$?
[ "$st0" -eq 65 ] && [ "$st1" -eq 65 ] || fail "2 ranks exited $st0 and $st1, expected 65"
grep -q "rank 1: rank 0: .*checksum mismatch" "$tmp/err1" || fail "rank 1 message"
echo ok
