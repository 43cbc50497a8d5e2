# Sourced by the e2e scripts that check a job's loss across its rounds (not a test itself:
# the e2e tests are tests/e2e/*.sh).
# loss_over START: reads reports of one round, in order (JSON Lines), and prints their mean
# loss per step: each report that carries a loss weighs the steps it covers, its step less
# the report's before (START: the step before the first report; "-": the first report only
# gives its step). Nothing is printed when no report covers a step. No single report is
# used alone, because on a busy machine one may cover a single step (a report sent at a
# batch change or a preemption): one step's loss is noise.
loss_over() {
  awk -v prev="$1" '
    {
      step = loss = ""
      if (match($0, /"step":[0-9]+/)) step = substr($0, RSTART + 7, RLENGTH - 7) + 0
      if (match($0, /"loss":[-+0-9.eE]+/)) loss = substr($0, RSTART + 7, RLENGTH - 7) + 0
      if (step == "") next
      if (prev != "-" && loss != "" && step > prev) {
        w += step - prev
        s += (step - prev) * loss
      }
      prev = step
    }
    END { if (w > 0) printf "%.6g\n", s / w }'
}
