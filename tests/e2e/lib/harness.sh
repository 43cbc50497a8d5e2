# The e2e scripts' one harness (not a test itself: the tests are tests/e2e/*.sh). Every
# script starts with
#   . "$(dirname "$0")/lib/harness.sh"
# and is run as NAME.sh BIN_DIR SOURCE_DIR (ctest does; status 77 is a skip). It promises:
#   BIN, SRC   the two arguments as absolute paths (a script run without them: status 64);
#   tmp        a private (0700) temporary directory, the working directory from here on,
#              removed at exit with everything the script started (see `started`);
#   the environment of a clean machine: NO_COLOR=1, no SIA_* settings from the caller
#              (config, cluster, state directory, client connection, checkpoint root),
#              XDG_CONFIG_HOME=$tmp/xdg, no GPU (CUDA_VISIBLE_DEVICES empty), $BIN first
#              on PATH, one OpenMP thread;
#   skip WHY   prints "skipped: WHY" and exits 77;
#   fail WHY   prints "FAIL: WHY", then what the script's on_fail prints (a function it may
#              define: the controller's status...), then the last lines of each file named
#              by `logs` that exists, and exits 1;
#   logs PATTERN...  files (globs, expanded when fail runs) whose tails fail shows;
#   started PID...   processes to end at exit (SIGTERM, then SIGKILL once they had 5 s);
#   at_exit CMD      a command run at exit, before the processes end (stop workers...);
#   wait_for SECONDS WHAT COMMAND...  polls COMMAND every 0.2 s until it succeeds; fails
#              with WHAT after SECONDS (the only waiting there is: no sleep stands for an
#              event);
#   json_get FILE PATH, json_eval FILE EXPR, json_has FILE EXPR, json_select FILE EXPR,
#   json_check WHAT FILE EXPR: JSON read through a parser (lib/jsonq.py: FILE is a path or
#              -, PATH is like .data.jobs[0].name, EXPR a Python expression over d, docs,
#              find, has, count, values, match); json_select prints the documents (JSON
#              Lines) for which EXPR holds; json_check fails with WHAT and the start of
#              the document;
#   need_torch sets PY (SIA_PYTHON, else /usr/bin/python3) and skips when it cannot
#              import torch.
# Not thread-safe in any sense: one script, one shell.

[ $# -ge 2 ] && [ -d "$1" ] && [ -d "$2" ] || {
  echo "usage: $0 BIN_DIR SOURCE_DIR" >&2
  exit 64
}
BIN=$(cd "$1" && pwd)
SRC=$(cd "$2" && pwd)
E2E_LIB=$SRC/tests/e2e/lib
tmp=$(mktemp -d) || exit 1
chmod 700 "$tmp"
export NO_COLOR=1 CUDA_VISIBLE_DEVICES= OMP_NUM_THREADS=1 XDG_CONFIG_HOME=$tmp/xdg
unset SIA_CLUSTER SIA_STATE_DIR SIA_CONFIG SIA_CTL_STATE_DIR SIA_CLIENT_CONNECT \
  SIA_CHECKPOINT_ROOT SIA_AGENT_CONNECT SIA_AGENT_CONTROLLER_USER
PATH=$BIN:$PATH
_e2e_pids=
_e2e_exit=
_e2e_logs=

started() { _e2e_pids="$_e2e_pids $*"; }
at_exit() { _e2e_exit="${_e2e_exit}$*
"; }
logs() { _e2e_logs="$_e2e_logs $*"; }

_e2e_cleanup() {
  _e2e_rc=$?
  set +e
  trap - EXIT INT TERM
  cd / || true
  [ -n "$_e2e_exit" ] && eval "$_e2e_exit" >/dev/null 2>&1
  for p in $_e2e_pids; do kill -TERM "$p" 2>/dev/null; done
  for p in $_e2e_pids; do
    n=0
    while kill -0 "$p" 2>/dev/null && [ "$n" -lt 25 ]; do
      sleep 0.2
      n=$((n + 1))
    done
    kill -KILL "$p" 2>/dev/null
    wait "$p" 2>/dev/null
  done
  if [ -n "${SIA_E2E_KEEP:-}" ]; then
    rm -rf "$SIA_E2E_KEEP"
    cp -r "$tmp" "$SIA_E2E_KEEP"
  fi
  rm -rf "$tmp"
  exit "$_e2e_rc"
}
trap '_e2e_cleanup' EXIT
trap 'exit 1' INT TERM
cd "$tmp" || exit 1

skip() {
  echo "skipped: $*"
  exit 77
}

fail() {
  set +e
  echo "FAIL: $*"
  command -v on_fail >/dev/null 2>&1 && on_fail 2>&1
  for f in $_e2e_logs; do
    [ -f "$f" ] && { echo "--- $f"; tail -n 8 "$f"; }
  done
  exit 1
}

wait_for() {
  _wf_limit=$1
  _wf_end=$(($(date +%s) + $1))
  _wf_what=$2
  shift 2
  until "$@"; do
    [ "$(date +%s)" -ge "$_wf_end" ] && fail "after $_wf_limit s: $_wf_what"
    sleep 0.2
  done
}

# The interpreter for jsonq.py: a plain one (a version manager's shim costs seconds a call
# on a loaded machine).
E2E_PY=${SIA_PYTHON:-/usr/bin/python3}
[ -x "$E2E_PY" ] || E2E_PY=python3
json_get() { "$E2E_PY" "$E2E_LIB/jsonq.py" get "$1" "$2"; }
json_eval() { "$E2E_PY" "$E2E_LIB/jsonq.py" eval "$1" "$2"; }
json_has() { "$E2E_PY" "$E2E_LIB/jsonq.py" has "$1" "$2"; }
json_select() { "$E2E_PY" "$E2E_LIB/jsonq.py" select "$1" "$2"; }
json_check() {
  if [ "$2" = - ]; then
    cat >"$tmp/.json_check.in"
    set -- "$1" "$tmp/.json_check.in" "$3"
  fi
  "$E2E_PY" "$E2E_LIB/jsonq.py" has "$2" "$3" ||
    fail "$1 (not so: $3, in $(head -c 400 "$2"))"
}

need_torch() {
  PY=${SIA_PYTHON:-/usr/bin/python3}
  "$PY" -c "import torch" >/dev/null 2>&1 || skip "no PyTorch for $PY"
  export PYTHONPATH="$SRC/python" PYTHONDONTWRITEBYTECODE=1
}
