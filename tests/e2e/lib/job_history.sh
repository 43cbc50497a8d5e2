# Sourced by the e2e scripts that check what a controller's jobs did, after lib/harness.sh
# (not a test itself: the e2e tests are tests/e2e/*.sh). Read through the JSON parser.
# max_step REPORTS...: the highest step in these report files (JSON Lines); nothing when
# there is none.
max_step() {
  cat "$@" 2>/dev/null | json_eval - 'max(values(docs, "step"), default="")'
}
# gpu_counts JOB PLACEMENT...: how many different GPU counts (0 left out) JOB held in these
# Placement documents (2 or more: it was rescaled).
gpu_counts() {
  _gc_job=$1
  shift
  cat "$@" | json_eval - "len({sum(len(n['gpus']) for n in job['nodes']) for p in docs for job in p['data']['jobs'] if job['name'] == '$_gc_job'} - {0})"
}
# job_state JOB: the job's state as the controller says (through ctl, which the script
# defines); nothing when it cannot say.
job_state() {
  ctl -o json status "$1" 2>/dev/null | json_eval - "find(d, name='$1')[0]['state']" 2>/dev/null
}
