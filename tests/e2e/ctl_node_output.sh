#!/bin/sh
# A node command that prints nothing or too much (100 MB, over the 64 MiB limit of
# sia-config(5) [nodes]) is that node's failure, with a warning naming it, and the round
# goes on with the other nodes: `sia-ctl round` with tests/data/ctl/fake_node.sh nodes.
#   ctl_node_output.sh BIN_DIR SOURCE_DIR
. "$(dirname "$0")/lib/harness.sh"
ctl() { "$BIN/sia-ctl" --config "$tmp/config.toml" "$@"; }
node="$SRC/tests/data/ctl/fake_node.sh"
printf 'name = "pair"\n[[node_groups]]\ngpu_type = "t4"\ngpus_per_node = 2\ncount = 2\n' \
  >cluster.toml
cat >config.toml <<TOML
[controller]
state_dir = "state"
cluster = "cluster.toml"
time_limit = 1
[nodes]
status = ["$node", "status", "{node}", "$tmp"]
reports = ["$node", "reports", "{node}", "$tmp"]
apply = ["$node", "apply", "{node}", "$tmp"]
TOML
for j in a b c; do
  printf 'name = "%s"\nmodel = "cifar10"\nmax_gpus = 1\ncommand = ["/bin/true"]\n' $j >$j.toml
done

# t4-1's status prints 100 MB: it is down, a runs on t4-0.
echo huge >t4-1.status
ctl -q submit a.toml >/dev/null || fail "submit a"
ctl -o json round >out 2>err || fail "round with an oversized status: $(cat err)"
grep -q "warning: node t4-1 is down: printed more than 64 MiB on standard output" err ||
  fail "the oversized status warning: $(cat err)"
json_check "a placed on t4-0" out 'match(find(d["data"]["jobs"], name="a"), "placement", " t4-0:")'
rm t4-1.status

# t4-1's reports print 100 MB and t4-0's apply prints nothing: warnings, the round goes on.
echo huge >t4-1.reports
echo empty >t4-0.apply
ctl -q submit b.toml >/dev/null || fail "submit b"
ctl round >out 2>err || fail "round with oversized reports, an empty apply: $(cat err)"
grep -q "warning: node t4-1: reports: printed more than 64 MiB" err ||
  fail "the oversized reports warning: $(cat err)"
grep -q "warning: node t4-0: delivery failed: node t4-0: apply: empty input, expected a sia document" \
  err || fail "the empty apply warning: $(cat err)"
rm t4-1.reports t4-0.apply

# Every status empty: no node answered (69), and each is named.
echo empty >t4-0.status
echo empty >t4-1.status
ctl -q submit c.toml >/dev/null || fail "submit c"
ctl round >out 2>err
[ $? -eq 69 ] || fail "a round with no node answering should exit 69: $(cat err)"
for n in t4-0 t4-1; do
  grep -q "node $n is down: node $n: status: empty input, expected a sia document" err ||
    fail "$n's empty status: $(cat err)"
done
echo ok
