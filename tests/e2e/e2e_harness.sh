#!/bin/sh
# The e2e harness itself (lib/harness.sh, lib/jsonq.py): a skip is status 77 with one
# line; a failure is status 1 with its reason, the script's on_fail and the tails of its
# logs; the temporary directory goes and the processes the script started end with it,
# whichever way it ends; wait_for gives up after its time; JSON checks read the document,
# not the order of its keys; a script run without its two folders is a usage error.
#   e2e_harness.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib/harness.sh"

# child NAME BODY: a script in the working directory that sources the harness, then BODY.
child() {
  printf '#!/bin/sh\n. "%s/harness.sh"\n%s\n' "$E2E_LIB" "$2" >"$1.sh"
  chmod +x "$1.sh"
}
run_child() { "./$1.sh" "$BIN" "$SRC" >"$1.out" 2>&1; }

child skipper 'echo "$tmp" >"$OLDPWD/skipper.tmp"; skip "no widget here"; echo after'
run_child skipper
rc=$?
[ "$rc" -eq 77 ] || fail "skip exited $rc, not 77: $(cat skipper.out)"
[ "$(cat skipper.out)" = "skipped: no widget here" ] || fail "skip printed: $(cat skipper.out)"
[ -d "$(cat skipper.tmp)" ] && fail "skip left its temporary directory"

child failer 'sleep 300 &
started $!
echo $! >"$OLDPWD/failer.pid"
for i in 1 2 3 4 5 6 7 8 9 10 11 12; do echo "log line $i"; done >w.log
logs "$tmp/w.log" "$tmp/absent.log"
on_fail() { echo "status: degraded"; }
fail "the widget broke"'
run_child failer
rc=$?
[ "$rc" -eq 1 ] || fail "fail exited $rc, not 1: $(cat failer.out)"
[ "$(head -1 failer.out)" = "FAIL: the widget broke" ] || fail "fail's first line: $(cat failer.out)"
grep -q "^status: degraded$" failer.out || fail "fail did not run on_fail: $(cat failer.out)"
grep -q "^log line 12$" failer.out && grep -q "^log line 5$" failer.out &&
  ! grep -q "^log line 4$" failer.out || fail "fail did not show the log's last 8 lines"
grep -q absent failer.out && fail "fail named a log that does not exist"
gone() { ! kill -0 "$(cat failer.pid)" 2>/dev/null; }
wait_for 30 "a process the failed script started is still running" gone

child passer 'echo "$tmp" >"$OLDPWD/passer.tmp"; [ "$(pwd)" = "$tmp" ] || exit 5
[ "$(stat -c %a "$tmp")" = 700 ] || exit 6
[ -z "${SIA_CONFIG:-}" ] && [ "$NO_COLOR" = 1 ] || exit 7
echo ok'
SIA_CONFIG=/nonexistent run_child passer || fail "a passing script: $(cat passer.out)"
[ "$(cat passer.out)" = ok ] || fail "a passing script printed: $(cat passer.out)"
[ -d "$(cat passer.tmp)" ] && fail "a passing script left its temporary directory"

child waiter 'wait_for 1 "the flag never came" test -f flag'
run_child waiter
rc=$?
[ "$rc" -eq 1 ] || fail "wait_for on what never happens exited $rc"
[ "$(head -1 waiter.out)" = "FAIL: after 1 s: the flag never came" ] ||
  fail "wait_for's failure: $(cat waiter.out)"

"$E2E_LIB/../e2e_harness.sh" >usage.out 2>&1
rc=$?
[ "$rc" -eq 64 ] || fail "a script without its folders exited $rc, not 64"

# JSON: the same facts in two key orders and layouts pass the same checks.
printf '{"kind":"RunStatus","data":{"jobs":[{"name":"a","state":"running","step":3},{"state":"finished","name":"b","step":7}]}}\n' >one.json
python3 -m json.tool --sort-keys one.json >two.json
for f in one.json two.json; do
  [ "$(json_get $f .data.jobs[1].name)" = b ] || fail "json_get in $f: $(json_get $f .data.jobs[1].name)"
  json_get $f .data.jobs[0] | json_has - 'd == {"name": "a", "state": "running", "step": 3}' ||
    fail "json_get of an object in $f: $(json_get $f .data.jobs[0])"
  json_has $f 'has(d, name="b", state="finished")' || fail "has() in $f"
  json_has $f 'has(d, name="a", state="finished")' && fail "has() matched a wrong pair in $f"
  [ "$(json_eval $f 'max(values(d, "step"))')" = 7 ] || fail "values() in $f"
  json_check "b finished" $f 'count(d, state="finished") == 1'
done
json_get one.json .data.nosuch >/dev/null && fail "json_get of a missing field succeeded"
cat one.json two.json | json_has - 'len(docs) == 2 and docs[0] == docs[1]' ||
  fail "two documents on stdin"
printf '{"type":"report","step":1}\n{"type":"report","step":2}\n' | json_has - 'values(docs, "step") == [1, 2]' ||
  fail "JSON Lines"
echo 'not json' >bad.json
json_has bad.json 'True' 2>bad.err
rc=$?
[ "$rc" -eq 2 ] || fail "a file that is not JSON: status $rc"
grep -q "bad.json: not JSON" bad.err || fail "a file that is not JSON: $(cat bad.err)"
json_has one.json 'd["data"]["nosuch"] == 1' && fail "a missing key was true"
json_has one.json 'd[' 2>syntax.err
rc=$?
[ "$rc" -eq 2 ] && grep -q "SyntaxError" syntax.err || fail "a broken expression: status $rc"
child checker "$(cat <<'BODY'
echo '{"state":"running"}' >s.json
json_check "the job finished" s.json 'd["state"] == "finished"'
BODY
)"
run_child checker
rc=$?
[ "$rc" -eq 1 ] || fail "a json_check that does not hold exited $rc: $(cat checker.out)"
grep -q '^FAIL: the job finished (not so: d\["state"\] == "finished", in {"state":"running"})$' \
  checker.out || fail "json_check's failure: $(cat checker.out)"
echo ok
