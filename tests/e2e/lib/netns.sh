# Sourced by the e2e scripts that run the controller and its agents as separate hosts, after
# lib/harness.sh (not a test itself: the e2e tests are tests/e2e/*.sh). Needs root and
# network namespaces; without them netns_bed skips the script (77) with one line.
# The test bed: a switch (a namespace holding one bridge) and a host per name, each its own
# network namespace with one veth to the bridge and its own address in 10.203.0.0/24, and
# each process started in it through host_exec gets a mount namespace of its own where
#   /tmp        is the host's private one ($tmp/hosts/HOST/tmp; the test's $tmp stays
#               visible at its path, for the test's own instrumentation);
#   $tmp/host   is the host's local disk ($tmp/hosts/HOST/local): its state directories;
#   $tmp/shared is the one shared file system ($tmp/nfs, bind-mounted: NFS's stand-in),
#               the checkpoint root goes there.
# Everything is torn down at exit, on failure too: every process of every host killed, the
# namespaces deleted.
#   netns_bed HOST...      makes the switch and the hosts (skips without root/namespaces);
#                          sets addr_HOST (dashes as underscores) to each host's address
#   netns_addr HOST        prints the host's address
#   host_exec HOST CMD...  runs CMD on HOST (exec: $! of `host_exec ... &` is CMD's pid)
#   host_kill HOST         kill -9 of every process on HOST (its namespace stays)
#   host_lose HOST         HOST gone for good: processes, namespace and local disk
#   host_reboot HOST       processes killed, namespace deleted and made again with the
#                          same address; the local disk kept
#   host_cut HOST          a black hole: HOST's veth taken off the bridge (packets vanish,
#                          TCP times out, as in a real partition)
#   host_heal HOST         puts it back
#   pair_cut A B           only A and B lose each other (each drops what it sends to the
#                          other: a blackhole route), both still reach every other host
#   pair_heal A B          takes those routes away
# Not thread-safe: one script, one shell.

_nb_id=sia$$
_nb_hosts=
_nb_sw=${_nb_id}-sw

_nb_ns() { echo "${_nb_id}-$1"; }
# The veth end on the switch: p<index> (interface names are at most 15 characters).
_nb_port() {
  _nb_i=0
  for _nb_h in $_nb_hosts; do
    [ "$_nb_h" = "$1" ] && { echo "p$_nb_i"; return; }
    _nb_i=$((_nb_i + 1))
  done
}
netns_addr() { eval "echo \$addr_$(echo "$1" | tr - _)"; }

_nb_make_host() {  # _nb_make_host HOST: namespace, veth, address
  ns=$(_nb_ns "$1")
  port=$(_nb_port "$1")
  ip netns add "$ns" &&
    ip link add eth0 netns "$ns" type veth peer name "$port" netns "$_nb_sw" &&
    ip -n "$_nb_sw" link set "$port" master br0 &&
    ip -n "$_nb_sw" link set "$port" up &&
    ip -n "$ns" link set lo up &&
    ip -n "$ns" link set eth0 up &&
    ip -n "$ns" addr add "$(netns_addr "$1")/24" dev eth0
}

netns_bed() {
  [ "$(id -u)" -eq 0 ] || skip "not root: network namespaces need root"
  command -v ip >/dev/null 2>&1 && command -v unshare >/dev/null 2>&1 ||
    skip "no ip(8) or unshare(1)"
  ip netns add "$_nb_sw" 2>/dev/null || skip "cannot make a network namespace (ip netns add)"
  at_exit netns_teardown
  ip -n "$_nb_sw" link add br0 type bridge && ip -n "$_nb_sw" link set br0 up ||
    fail "cannot make the bridge"
  mkdir -p "$tmp/nfs" "$tmp/shared" "$tmp/host" || fail "cannot make the bed's folders"
  _nb_n=10
  for h in "$@"; do
    _nb_hosts="$_nb_hosts $h"
    eval "addr_$(echo "$h" | tr - _)=10.203.0.$_nb_n"
    _nb_n=$((_nb_n + 1))
    mkdir -p "$tmp/hosts/$h/local" "$tmp/hosts/$h/tmp/${tmp##*/}" || fail "folders of $h"
    _nb_make_host "$h" || fail "cannot make host $h"
  done
  # Reachable: a TCP connection from the first host to a listener on the last one.
  set -- $_nb_hosts
  eval "_nb_last=\${$#}"
  _nb_probe=$(netns_addr "$_nb_last")
  host_exec "$_nb_last" "$E2E_PY" -c 'import socket,sys; s=socket.socket(); s.bind((sys.argv[1], 7)); s.listen(); s.settimeout(20); s.accept()' "$_nb_probe" &
  _nb_pid=$!
  _nb_reached() {
    host_exec "$1" "$E2E_PY" -c 'import socket,sys; socket.create_connection((sys.argv[1], 7), 1)' \
      "$_nb_probe" 2>/dev/null
  }
  wait_for 20 "no TCP from $1 to $_nb_last over the bridge" _nb_reached "$1"
  wait "$_nb_pid"
}

host_exec() {
  _nb_h=$1
  shift
  exec_in() {
    ip netns exec "$(_nb_ns "$_nb_h")" unshare --mount --propagation private sh -c '
      t=$1 h=$2; shift 2
      mount --bind "$t/hosts/$h/local" "$t/host" &&
        mount --bind "$t/nfs" "$t/shared" &&
        mount --rbind "$t" "$t/hosts/$h/tmp/${t##*/}" &&
        mount --rbind "$t/hosts/$h/tmp" /tmp || exit 71
      exec "$@"' sh "$tmp" "$_nb_h" "$@"
  }
  exec_in "$@"
}

host_kill() {
  # Until the namespace is empty: one kill of a snapshot of its processes misses the ones
  # forked after the snapshot (an agent starting a generation as it dies), which would then
  # outlive "their host" and run until their own fence. Dead when gone from the namespace
  # (a zombie of ours counts as gone).
  _nb_killed() {
    _nb_empty=0
    for p in $(ip netns pids "$(_nb_ns "$1")" 2>/dev/null); do
      [ "$(cut -d' ' -f3 "/proc/$p/stat" 2>/dev/null)" = Z ] && continue
      kill -9 "$p" 2>/dev/null
      _nb_empty=1
    done
    return "$_nb_empty"
  }
  wait_for 30 "the processes of $1 did not die" _nb_killed "$1"
}

host_lose() {
  host_kill "$1"
  ip netns del "$(_nb_ns "$1")"
  rm -rf "$tmp/hosts/$1/local"
  mkdir -p "$tmp/hosts/$1/local"  # a mount point for nothing: the host is not used again
}

host_reboot() {
  host_kill "$1"
  ip -n "$_nb_sw" link del "$(_nb_port "$1")" 2>/dev/null  # the veth, both ends, now
  ip netns del "$(_nb_ns "$1")"
  _nb_gone() { ! ip -n "$_nb_sw" link show "$(_nb_port "$1")" >/dev/null 2>&1; }
  wait_for 30 "the old veth of $1 did not go" _nb_gone "$1"
  _nb_make_host "$1" || fail "cannot make host $1 again"
}

host_cut() { ip -n "$_nb_sw" link set "$(_nb_port "$1")" nomaster || fail "cannot cut $1"; }
host_heal() { ip -n "$_nb_sw" link set "$(_nb_port "$1")" master br0 || fail "cannot heal $1"; }

pair_cut() {
  ip -n "$(_nb_ns "$1")" route add blackhole "$(netns_addr "$2")/32" &&
    ip -n "$(_nb_ns "$2")" route add blackhole "$(netns_addr "$1")/32" ||
    fail "cannot cut $1 from $2"
}
pair_heal() {
  ip -n "$(_nb_ns "$1")" route del blackhole "$(netns_addr "$2")/32" &&
    ip -n "$(_nb_ns "$2")" route del blackhole "$(netns_addr "$1")/32" ||
    fail "cannot heal $1 and $2"
}

netns_teardown() {
  # Twice: a process may have forked while the first kills went out.
  for _nb_pass in 1 2; do
    for h in $_nb_hosts; do
      _nb_pids=$(ip netns pids "$(_nb_ns "$h")" 2>/dev/null)
      [ -n "$_nb_pids" ] && kill -9 $_nb_pids 2>/dev/null
    done
  done
  for h in $_nb_hosts; do ip netns del "$(_nb_ns "$h")" 2>/dev/null; done
  ip netns del "$_nb_sw" 2>/dev/null
  return 0
}
