#!/bin/sh
# sia-ctl fsck on a real state directory: a round with fake node commands makes one, then
# records are appended to its journal; a flipped byte in a record mid-journal, a torn last
# line, a malformed inbox request and a cut round document make `sia-ctl round` refuse to
# start (65). Checks: fsck names each problem (file, line and byte offset) and exits 65,
# -o json prints an Fsck document, fsck exits 75 while another process holds the state
# lock (and moves nothing), --repair keeps every intact record, moves the damaged files
# aside as FILE.damaged-TIME and exits 0, a second fsck finds it clean, and the next round
# runs and still knows every job.
#   ctl_fsck.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib/harness.sh"
command -v python3 >/dev/null 2>&1 || skip "no python3"
command -v flock >/dev/null 2>&1 || skip "no flock(1)"
ST=$tmp/state
ctl() { "$BIN/sia-ctl" --config "$tmp/config.toml" "$@"; }

cat >cluster.toml <<'TOML'
name = "pair"
[[node_groups]]
gpu_type = "t4"
gpus_per_node = 2
count = 2
TOML
cat >config.toml <<TOML
[controller]
state_dir = "state"
cluster = "cluster.toml"
time_limit = 1
[nodes]
status = ["$SRC/tests/data/ctl/fake_node.sh", "status", "{node}", "$tmp"]
reports = ["$SRC/tests/data/ctl/fake_node.sh", "reports", "{node}", "$tmp"]
apply = ["$SRC/tests/data/ctl/fake_node.sh", "apply", "{node}", "$tmp"]
TOML
for j in a b; do
  printf 'name = "%s"\nmodel = "cifar10"\nmax_gpus = 2\ncommand = ["/bin/true"]\n' $j >$j.toml
done
ctl -q submit a.toml >/dev/null || fail "submit a"
ctl -q round >/dev/null || fail "first round"
ctl -q submit b.toml >/dev/null || fail "submit b"

# Three node-seen records after the snapshot, framed as the controller frames them.
python3 - "$ST" <<'PY' || fail "appending records"
import json, sys, zlib
st = sys.argv[1]
seq = json.load(open(st + "/snapshot.json"))["data"]["seq"]
with open(st + "/journal.jsonl", "a") as f:
    for i, node in enumerate(["t4-0", "t4-1", "t4-0"]):
        rec = {"seq": seq + 1 + i, "type": "node-seen", "node": node, "up": True,
               "error": "", "time": 1000 + i}
        body = json.dumps(rec, separators=(",", ":"), sort_keys=True)
        rec["crc"] = "%08x" % (zlib.crc32(body.encode()) & 0xffffffff)
        f.write(json.dumps(rec, separators=(",", ":"), sort_keys=True) + "\n")
PY
ctl fsck >out 2>err || fail "fsck of an intact state directory: $(cat out err)"
grep -q ": clean; journal: 3 of 3 records intact" out || fail "clean summary: $(cat out)"

# The damage.
python3 - "$ST/journal.jsonl" <<'PY'
import sys
p = sys.argv[1]
lines = open(p, "rb").read().split(b"\n")
lines[1] = lines[1].replace(b"t4-1", b"t4-9")
open(p, "wb").write(b"\n".join(lines) + b'{"crc":"0badf00d","seq":')
PY
offset=$(head -1 "$ST/journal.jsonl" | wc -c)
printf '{"apiVersion": "sia/v1", "kind": "ControllerRequest", "data": {"type": "launch"}}\n' \
  >"$ST/inbox/00000000000000000001-1-0.json"
round_doc=$(ls "$ST"/rounds/r000001-placement.json) || fail "no kept placement"
head -c 20 "$round_doc" >"$round_doc.cut" && mv "$round_doc.cut" "$round_doc"

ctl -q round >out 2>err
[ $? -eq 65 ] || fail "a round on the damaged journal should exit 65: $(cat err)"

ctl fsck >out 2>err
rc=$?
[ $rc -eq 65 ] || fail "fsck of a damaged state directory exits $rc, not 65: $(cat out err)"
grep -q "^$ST/journal.jsonl: line 2 (byte $offset): corrupted (checksum mismatch)$" out ||
  fail "the flipped record: $(cat out)"
grep -q "^$ST/journal.jsonl: line 4 (byte [0-9]*): incomplete last record" out ||
  fail "the torn tail: $(cat out)"
grep -q "^$ST/inbox/00000000000000000001-1-0.json: .*type" out || fail "the inbox file: $(cat out)"
grep -q "^$round_doc: " out || fail "the round document: $(cat out)"
grep -q "^$ST: 4 problems (sia-ctl fsck --repair); journal: 2 of 4 records intact" out ||
  fail "the summary: $(cat out)"
ctl fsck -o json >out.json
[ $? -eq 65 ] || fail "fsck -o json exit status"
json_check "the Fsck document" out.json 'd["kind"] == "Fsck" and not d["data"]["clean"] and not d["data"]["repaired"] and len(d["data"]["problems"]) == 4'
json_check "the first problem" out.json \
  'd["data"]["problems"][0]["line"] == 2 and d["data"]["problems"][0]["lost"] == "record 8 (node-seen: t4-9)"'

# Never under a live controller.
# (one process that holds the lock itself, so that killing it releases it)
sh -c 'exec 9>>"$1" && flock 9 && exec sleep 60' sh "$ST/lock" &
locker=$!
started "$locker"
lock_held() { ! flock -n "$ST/lock" true; }
wait_for 30 "the locking process did not take the lock" lock_held
ctl fsck --repair >out 2>err
rc=$?
kill "$locker"
wait "$locker" 2>/dev/null
[ $rc -eq 75 ] || fail "fsck --repair under a held lock exits $rc, not 75: $(cat err)"
grep -q "lock held" err || fail "the lock message: $(cat err)"
ls "$ST" | grep -q damaged && fail "a refused repair moved files"

ctl fsck --repair >out 2>err || fail "fsck --repair: $(cat out err)"
grep -q "^warning: $ST/journal.jsonl: line 2: dropped record 8 (node-seen: t4-9)$" out ||
  fail "the warning naming what is lost: $(cat out)"
grep -q "repaired; the controller starts" out || fail "repair summary: $(cat out)"
for f in "$ST/journal.jsonl" "$ST/inbox/00000000000000000001-1-0.json" "$round_doc"; do
  ls "$f".damaged-* >/dev/null 2>&1 || fail "$f was not moved aside"
done
ctl fsck >out 2>err || fail "fsck after the repair: $(cat out err)"
grep -q ": clean;" out || fail "clean after the repair: $(cat out)"
ctl -q round >out 2>err || fail "a round after the repair: $(cat err)"
ctl -o json status >out 2>err || fail "status: $(cat err)"
json_check "jobs a and b" out 'has(d, name="a") and has(d, name="b")'
echo "ok"
