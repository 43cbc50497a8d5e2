# Sourced by the e2e scripts that wait on a live system (not a test itself: the e2e tests
# are tests/e2e/*.sh). The script defines fail MESSAGE, which reports and exits.
# wait_for SECONDS WHAT COMMAND...: polls COMMAND until it succeeds; fails with WHAT after
# SECONDS.
wait_for() {
  limit=$1 what=$2
  shift 2
  end=$(($(date +%s) + limit))
  until "$@"; do
    [ "$(date +%s)" -ge "$end" ] && fail "after ${limit} s: $what"
    sleep 0.3
  done
}
