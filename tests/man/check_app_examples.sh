#!/bin/sh
# Checks that the App examples work exactly as written: the one of sia-formats(5) (App,
# "Example (the data part, as TOML)"), taken from the page itself, and
# examples/sweep/sweep.toml. Each is submitted with --dry-run (status 0, every trial
# listed, nothing written) and for real to a fresh state directory (status 0); then status
# shows the app, each trial with its hyper-parameter values (table and JSON), `status APP`
# the app and its trials, `status --state running` keeps the app and `--state finished`
# drops it, and `explain APP` its scheduler, metric and trials.
#   check_app_examples.sh BIN_DIR SOURCE_DIR
# Exit status: 0 all work; 1 one does not (said on stderr); 2 usage.
set -u
me=check_app_examples.sh
if [ "$#" -ne 2 ] || [ ! -x "$1/sia-ctl" ]; then
  echo "usage: $me BIN_DIR SOURCE_DIR" >&2
  exit 2
fi
BIN=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
command -v python3 >/dev/null 2>&1 || { echo "$me: SKIP: no python3"; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export NO_COLOR=1 XDG_CONFIG_HOME="$tmp/xdg"
unset SIA_CLUSTER SIA_STATE_DIR SIA_CONFIG SIA_CTL_STATE_DIR
fail() { echo "$me: FAIL: $*" >&2; exit 1; }

# The page's example: the lines between .EX and .EE after its heading, roff escapes undone.
awk '/^Example \(the data part, as TOML\):/ { want = 1; next }
     want && /^\.EX/ { inside = 1; next }
     inside && /^\.EE/ { exit }
     inside { print }' "$SRC/man/sia-formats.5" |
  sed -e 's/\\-/-/g' -e 's/\\(dq/"/g' -e 's/\\&//g' -e 's/\\e/\\/g' >"$tmp/formats.toml"
grep -q '^name = ' "$tmp/formats.toml" || fail "no App example found in sia-formats.5"
cat >"$tmp/cluster.toml" <<'TOML'
name = "examples"
[[node_groups]]
gpu_type = "t4"
gpus_per_node = 4
count = 2
TOML

# check NAME FILE: the checks above on one example, in a state directory of its own.
check() {
  name=$1 file=$2 st=$tmp/state-$1
  printf '[controller]\nstate_dir = "%s"\ncluster = "%s"\n' "$st" "$tmp/cluster.toml" \
    >"$tmp/config-$name.toml"
  ctl() { "$BIN/sia-ctl" --config "$tmp/config-$name.toml" "$@"; }
  app=$(sed -n 's/^name = "\(.*\)"$/\1/p' "$file" | head -1)
  ctl submit --dry-run "$file" >"$tmp/out" 2>&1 || fail "$name: submit --dry-run: $(cat "$tmp/out")"
  grep -q "would submit app $app: " "$tmp/out" || fail "$name: dry run: $(cat "$tmp/out")"
  [ ! -e "$st/inbox" ] || fail "$name: the dry run wrote $st/inbox"
  ctl submit "$file" >"$tmp/out" 2>&1 || fail "$name: submit: $(cat "$tmp/out")"
  ctl submit --dry-run "$file" >"$tmp/out" 2>&1
  [ $? -eq 65 ] || fail "$name: a dry run of a submitted app was not refused with 65"
  grep -q "is submitted already" "$tmp/out" || fail "$name: dry run again: $(cat "$tmp/out")"
  ctl -o json status >"$tmp/status.json" 2>"$tmp/err" || fail "$name: status: $(cat "$tmp/err")"
  python3 - "$tmp/status.json" "$app" <<'PY' || fail "$name: status -o json"
import json, sys
d = json.load(open(sys.argv[1]))["data"]
app = sys.argv[2]
assert [a["name"] for a in d["apps"]] == [app], d["apps"]
trials = [j for j in d["jobs"] if j["app"] == app]
assert len(trials) == len(d["apps"][0]["trials"]) > 1, trials
for t in trials:
    assert t["state"] == "submitted" and t["hparams"] and all(
        isinstance(v, float) or isinstance(v, int) for v in t["hparams"].values()), t
values = [tuple(sorted(t["hparams"].items())) for t in trials]
assert len(set(values)) == len(values), values  # every trial its own values
PY
  ctl status "$app" >"$tmp/out" 2>&1 || fail "$name: status $app: $(cat "$tmp/out")"
  grep -q "HPARAMS" "$tmp/out" && grep -q "$app-000 *lr=" "$tmp/out" ||
    fail "$name: status $app shows no trial with its lr: $(cat "$tmp/out")"
  ctl status --state running >"$tmp/out" 2>&1 || fail "$name: status --state running"
  [ "$(grep -c "^$app " "$tmp/out")" -eq 0 ] || fail "$name: --state running kept the inbox app"
  ctl -o json status --state submitted >"$tmp/status.json" 2>&1 || fail "$name: --state submitted"
  python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))["data"]
assert [a["name"] for a in d["apps"]] == [sys.argv[2]], d["apps"]' "$tmp/status.json" "$app" ||
    fail "$name: --state submitted dropped the app"
  ctl -o json status --state finished >"$tmp/status.json" 2>&1 || fail "$name: --state finished"
  python3 -c 'import json,sys
d=json.load(open(sys.argv[1]))["data"]
assert d["apps"] == [] and d["jobs"] == [], d' "$tmp/status.json" ||
    fail "$name: --state finished kept the app"
  ctl explain "$app" >"$tmp/out" 2>&1 || fail "$name: explain $app: $(cat "$tmp/out")"
  grep -q "^app $app: submitted" "$tmp/out" && grep -q "ranked on loss" "$tmp/out" &&
    grep -q "$app-000 *lr=" "$tmp/out" || fail "$name: explain $app: $(cat "$tmp/out")"
  echo "$name: app $app of $(grep -c "^$app-" "$tmp/out") trials submitted, shown and explained"
}
check formats "$tmp/formats.toml"
check sweep "$SRC/examples/sweep/sweep.toml"
