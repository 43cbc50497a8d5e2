# Sourced by the e2e scripts that start `sia-ctl serve` with agents on this machine, after
# lib/harness.sh (not a test itself). The controller makes its own key pair in STATE/keys
# on its first start (agents pin STATE/keys/server.pub) and lets clients with its state
# directory in as admin; each agent needs a key of its own on the allow-list.
# agent_keys BIN_DIR DIR NODE...: DIR/NODE.key and DIR/NODE.pub for each node (sia-ctl
# keygen) and DIR/allow.toml listing each as [[agent]] node = NODE. Fails the script
# (the harness's fail) when a key cannot be made.
agent_keys() {
  kbin=$1 kdir=$2
  shift 2
  mkdir -p "$kdir" || fail "cannot create $kdir"
  : >"$kdir/allow.toml"
  for n in "$@"; do
    "$kbin/sia-ctl" keygen "$kdir/$n" >/dev/null || fail "sia-ctl keygen $kdir/$n"
    printf '[[agent]]\nnode = "%s"\nkey = "%s"\n' "$n" \
      "$(sed -n 's/^public *= *"\(.*\)"/\1/p' "$kdir/$n.pub")" >>"$kdir/allow.toml"
  done
}
