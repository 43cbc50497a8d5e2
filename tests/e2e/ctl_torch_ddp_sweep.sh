#!/bin/sh
# A user's DDP script, converted as sia-torch(7) says (examples/pytorch/ddp/train_sia.py),
# run as a hyper-parameter search under the controller daemon: `sia-ctl serve` and two
# `sia-run agent`s on loopback (cluster cpu-pair: two nodes of two t4 slots, on the CPU).
# The user copies the script into a directory of their own and submits from there with a
# relative command (["python3", "train_sia.py", ...]); the agents run elsewhere.
# App "sweep": four trials, one learning rate each, successive halving with eta 2 over
# three phases of 4 epochs (budgets 1/4, 1/2 and 1: the rungs fall on the epoch
# boundaries after epochs 1 and 2). Checks: the app ends with exactly one finished trial
# and three stopped at their rungs; every trial ran in the directory it was submitted
# from; the finished trial printed each epoch's average loss once, with the learning rate
# its StepLR schedule gives that epoch (a stop at a rung loses no scheduler step and
# leaves no empty epoch); a workdir that is not absolute is refused at submit (65), and a
# job whose workdir the nodes lack fails with one line naming it.
#   ctl_torch_ddp_sweep.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib/harness.sh"
need_torch
ST=$tmp/state
export SIA_RENDEZVOUS_TIMEOUT=60
# The user's `python3` is one that has PyTorch.
mkdir -p "$tmp/bin" && ln -s "$PY" "$tmp/bin/python3"
PATH=$tmp/bin:$PATH
NODES="t4-0 t4-1"
TRIALS="sweep-000 sweep-001 sweep-002 sweep-003 nodir"
ctl() { "$BIN/sia-ctl" --config "$tmp/config.toml" "$@"; }
stop_trials() {
  for n in $NODES; do
    for j in $TRIALS; do
      [ -d "$tmp/nodes/$n" ] && "$BIN/sia-run" --state-dir "$tmp/nodes/$n" stop --grace 0 "$j"
    done
  done
}
at_exit stop_trials
on_fail() { ctl status 2>&1 | head -40; }
logs "$tmp/ctl.log" "$tmp/agent-*.log" "$tmp/nodes/*/jobs/*/logs/rank-0.log"
. "$E2E_LIB/agent_keys.sh"
. "$E2E_LIB/cpu_pair.sh"

cpu_pair_cluster
cat >config.toml <<TOML
[controller]
state_dir = "state"
cluster = "cluster.toml"
bind = "tcp://127.0.0.1:*"
round = 1
retention = 500
time_limit = 1
heartbeat_interval = 0.5
allow = "keys/allow.toml"
TOML
agent_keys "$BIN" keys $NODES
"$BIN/sia-ctl" --config config.toml serve >ctl.log 2>&1 &
started $!
serving() { grep -q "serving tcp://127.0.0.1:[0-9]" ctl.log; }
wait_for 30 "serve did not start: $(cat ctl.log)" serving
EP=$(sed -n 's/.*serving \(tcp:\/\/127.0.0.1:[0-9]*\).*/\1/p' ctl.log | head -1)
for n in $NODES; do
  "$BIN/sia-run" --state-dir "nodes/$n" agent --connect "$EP" --node "$n" \
    --server-key state/keys/server.pub --secret-key "keys/$n.key" --cluster cluster.toml \
    --heartbeat-interval 0.5 --grace 20 --ckpt-root "$tmp/ckpt" --report-interval 0.3 \
    >"agent-$n.log" 2>&1 &
  started $!
done
connected() { grep -q "$1 connected" ctl.log; }
for n in $NODES; do wait_for 30 "agent $n did not connect" connected "$n"; done

# The user's project: the converted script, and the search beside it.
mkdir -p "$tmp/alice/cnn" && cp "$SRC/examples/pytorch/ddp/train_sia.py" "$tmp/alice/cnn/"
cd "$tmp/alice/cnn" || fail "no project directory"
EPOCHS=4
cpu_pair_search sweep "[\"python3\", \"train_sia.py\", \"--epochs\", \"$EPOCHS\",
  \"--dataset-size\", \"2048\", \"--lr\", \"{lr}\"]" "[0.3, 0.003, 0.1, 0.001]" 2
# A workdir that is not an absolute path is refused before anything is written.
sed 's/^\[template\]/&\nworkdir = "cnn"/' search.toml >relative.toml
ctl submit relative.toml >out 2>&1
st=$?
[ "$st" = 65 ] && grep -q "workdir: expected an absolute directory path" out ||
  fail "a relative workdir: status $st, $(cat out)"
ctl submit search.toml >out 2>&1 || fail "submit the sweep: $(cat out)"
cd "$tmp" || fail "no $tmp"

app_state() {
  ctl -o json status >status.json 2>status.err || return 1
  json_eval status.json "[a for a in d['data']['apps'] if a['name'] == 'sweep'][0]['state']"
}
app_done() { case "$(app_state)" in finished | failed | cancelled) true ;; *) false ;; esac; }
start=$(date +%s)
wait_for 300 "the sweep did not end (state $(app_state))" app_done
echo "app sweep ended ($(app_state)) after $(($(date +%s) - start)) s"

# A workdir the nodes do not have: the job fails at its start, with one line saying so.
cat >nodir.toml <<TOML
name = "nodir"
model = "cifar10"
command = ["python3", "train_sia.py"]
workdir = "$tmp/nowhere"
TOML
ctl submit nodir.toml >out 2>&1 || fail "submit nodir: $(cat out)"
job_failed() { ctl -o json status nodir 2>/dev/null | json_has - 'has(d, name="nodir", state="failed")'; }
wait_for 60 "nodir did not fail" job_failed
ctl status nodir | grep -q "cannot change to directory '$tmp/nowhere': No such file or directory" ||
  fail "nodir's status does not say why: $(ctl status nodir)"

"$PY" - "$tmp" "$EPOCHS" "$E2E_LIB" <<'PY' || fail "the sweep's trials"
import glob, json, os, re, sys
tmp, epochs = sys.argv[1], int(sys.argv[2])
sys.path.insert(0, sys.argv[3])
from app_trials import check, reports
d = json.load(open(tmp + "/status.json"))["data"]
app = [a for a in d["apps"] if a["name"] == "sweep"][0]
check(app["state"] == "finished", "app sweep %s" % app["state"])
jobs = {j["name"]: j for j in d["jobs"] if j.get("app") == "sweep"}
trials = sorted(jobs)
check(len(trials) == 4, "trials %s" % trials)
states = sorted(jobs[t]["state"] for t in trials)
check(states == ["finished", "stopped", "stopped", "stopped"], "trial states %s" % states)
rep = reports(tmp)
# {fraction: {trial: (step, loss)}} from each trial's "rung" reports. A start racing the
# rung (placed again before the controller read the rung report) stops before its first
# step with a rung report without a loss: counted, not a failure here.
rung, again = {}, []
for t in trials:
    for r in sorted(rep.get(t, []), key=lambda r: (r["round"], r["step"])):
        if r.get("reason") != "rung":
            continue
        if "loss" not in r:
            again.append((t, r["round"]))
            continue
        rung.setdefault(round(r["fraction"], 3), {}).setdefault(t, (r["step"], r["loss"]))
check(sorted(rung) == [0.25, 0.5], "rung reports at fractions %s" % sorted(rung))
check(len(rung[0.25]) == 4 and len(rung[0.5]) == 2, "trials at the rungs %s" % rung)
# Each rung is an epoch boundary: 2048 samples an epoch, whatever the batches.
for frac, at in rung.items():
    for t in at:
        r = [x for x in rep[t] if x.get("reason") == "rung" and "loss" in x][0]
        check(r["samples"] % 2048 == 0, "%s stopped inside an epoch: %s" % (t, r))
logs = lambda t: "".join(open(f).read() for f in sorted(
    glob.glob(tmp + "/nodes/*/jobs/%s/logs/rank-0.log" % t)))
lr = {}
for t in trials:
    check("Traceback" not in logs(t), "%s raised:\n%s" % (t, logs(t)[-3000:]))
    launches = [json.load(open(f))["data"] for f in
                glob.glob(tmp + "/nodes/*/jobs/%s/launch.json" % t)]
    check(launches and all(l["cwd"] == os.path.realpath(tmp + "/alice/cnn") for l in launches),
          "%s ran in %s" % (t, [l["cwd"] for l in launches]))
    command = launches[0]["command"]
    lr[t] = float(command[command.index("--lr") + 1])
winner = [t for t in trials if jobs[t]["state"] == "finished"][0]
lines = re.findall(r"^epoch (\d+): loss ([0-9.naif]+), lr ([0-9.e-]+),", logs(winner), re.M)
got = [int(e) for e, _, _ in lines]
check(got == list(range(epochs)), "%s printed epochs %s (once each expected)" % (winner, got))
for e, loss, rate in lines:
    check(loss not in ("nan", "inf"), "%s epoch %s: loss %s" % (winner, e, loss))
    want = lr[winner] * 0.5 ** ((int(e) + 1) // 3)  # StepLR(step_size=3, gamma=0.5)
    check(abs(float(rate) - want) <= 1e-3 * want, "%s epoch %s: lr %s, StepLR gives %g"
          % (winner, e, rate, want))
done = [r for r in rep[winner] if r["reason"] == "done"]
check(len(done) == 1 and done[0]["fraction"] == 1.0, "the winner's end %s" % done)
print("trials %s; %s finished; rungs %s; started again at a rung: %s" % (
    states, winner, {f: sorted(v) for f, v in sorted(rung.items())}, again or "none"))
PY
echo "PASS"
