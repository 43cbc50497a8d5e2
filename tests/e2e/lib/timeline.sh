# Sourced by the e2e scripts that check, from the workers' own timelines, that a controller
# ran every job exactly once (after lib/harness.sh and lib/job_history.sh; not a test
# itself). Every worker is started through a wrapper that logs its start and end on one
# timeline file (all hosts are this machine: one clock).
# timeline_wrapper WRAPPER EVENTS: writes the wrapper script WRAPPER, which appends
#   "start JOB ROUND RANK TIME NETNS" (the network namespace it runs in: its host) and "end JOB ROUND RANK TIME STATUS" to EVENTS around the
#   command it is given (a job's command is [WRAPPER, program, args...]). A stop signal is
#   the worker's to handle; the wrapper waits to log the end.
# timeline_lost EVENTS NETNS: a host lost at once with its processes: every rank started
#   there that logged no end is recorded as ended now (killed, status 137).
# timeline_check EVENTS: fails the script unless, per job, no two rounds (generations) ran
#   at once on any node, every started rank ended, nothing started after the job finished
#   (a rank 0 exit 0), and the job finished at most once. Prints one line of figures.
# steps_check STATUS_JSON STEPS REPORTS_GLOB JOB...: fails unless no JOB trained past STEPS
#   (the highest step in the report files REPORTS_GLOB, "%s" standing for the job) and a
#   job finished in STATUS_JSON (a Status document) reached STEPS exactly.
# Not thread-safe: one script, one shell.

timeline_wrapper() {
  cat >"$1" <<EOF
#!/bin/sh
trap : TERM INT
echo "start \$SIA_JOB \$SIA_ROUND \$RANK \$(date +%s.%N) \$(readlink /proc/self/ns/net)" >>"$2"
"\$@"
st=\$?
echo "end \$SIA_JOB \$SIA_ROUND \$RANK \$(date +%s.%N) \$st" >>"$2"
exit \$st
EOF
  chmod 0755 "$1"
  : >>"$2"
}

timeline_lost() {
  awk -v ns="$2" -v now="$(date +%s.%N)" '
    $1 == "start" && $6 == ns { k = $2 " " $3 " " $4; open[k] = 1 }
    $1 == "end" { delete open[$2 " " $3 " " $4] }
    END { for (k in open) print "end " k " " now " 137" }' "$1" >"$tmp/.timeline.lost"
  cat "$tmp/.timeline.lost" >>"$1"
}

timeline_check() {
  awk '
  $1 == "start" { k = $2 " " $3; if (!(k in s) || $5 < s[k]) s[k] = $5; job[k] = $2; rnd[k] = $3; n[k]++ }
  $1 == "end"   { k = $2 " " $3; if ($5 > e[k]) e[k] = $5; m[k]++; if ($6 == 0 && $4 == 0) done[$2]++
                  if ($6 == 0 && $4 == 0 && (!($2 in fin) || $5 < fin[$2])) fin[$2] = $5 }
  END {
    bad = 0
    for (k in s) {
      if (m[k] < n[k]) { print "round " rnd[k] " of " job[k] ": " n[k] " rank(s) started, " m[k] + 0 " ended"; bad = 1 }
      for (k2 in s) {
        if (k2 == k || job[k2] != job[k] || rnd[k2] + 0 <= rnd[k] + 0) continue
        if (s[k2] < e[k]) { printf "%s: round %s started at %.3f before round %s ended at %.3f\n", job[k], rnd[k2], s[k2], rnd[k], e[k]; bad = 1 }
        if (job[k] in fin && s[k2] > fin[job[k]]) { print job[k] ": round " rnd[k2] " started after the job finished"; bad = 1 }
      }
    }
    for (j in done) if (done[j] > 1) { print j ": finished " done[j] " times"; bad = 1 }
    exit bad
  }' "$1" >"$tmp/.timeline.out" || fail "the workers' timeline: $(cat "$tmp/.timeline.out")"
  echo "timeline: $(awk '$1 == "start" && $4 == 0' "$1" | wc -l) generation starts, no overlap"
}

steps_check() {
  _sc_status=$1 _sc_steps=$2 _sc_glob=$3
  shift 3
  for j in "$@"; do
    # shellcheck disable=SC2059,SC2046
    max=$(max_step $(printf "$_sc_glob" "$j"))
    [ -z "$max" ] || [ "$max" -le "$_sc_steps" ] || fail "job $j trained to step $max, past $_sc_steps"
    if json_has "$_sc_status" "has(d['data']['jobs'], name='$j', state='finished')"; then
      [ "$max" = "$_sc_steps" ] || fail "finished job $j reached step $max, not $_sc_steps"
    fi
  done
}
