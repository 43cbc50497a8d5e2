#!/bin/sh
# A smoke of one benchmark, so that none of them rots: runs it as bench/README.md documents,
# in its smallest case (SIA_BENCH_SMOKE=1 for the programs, bench/smoke.hpp; small
# arguments for the scripts), and checks that it ended well and printed each of its
# figures. How fast is not asserted: the figures themselves go to bench/README.md.
# The suite runs one per bench (ctest -L bench); bench/paper and bench/heldout have their
# own, tests/e2e/paper_experiments.sh and tests/e2e/heldout_bench.sh.
#   bench/smoke.sh BIN_DIR SOURCE_DIR NAME
#   NAME: model_accuracy estimate_speed policy_runtime sim_speed ctl_round_latency
#         request_limits sim_identity deadlines reservations torch_ddp_step
#         rebuild_check slurm_latency
set -u
[ $# -eq 3 ] || { echo "usage: bench/smoke.sh BIN_DIR SOURCE_DIR NAME" >&2; exit 64; }
BIN=$(cd "$1" && pwd) || exit 66
SRC=$(cd "$2" && pwd) || exit 66
NAME=$3
export SIA_BENCH_SMOKE=1 NO_COLOR=1 SIA_DATA_DIR="$SRC/data"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
out=$tmp/out
fail() {
  echo "FAIL: bench $NAME: $*"
  echo "--- stdout"
  cat "$out"
  echo "--- stderr"
  cat "$tmp/err"
  exit 1
}
# run CMD...: the bench, which must end with status 0.
run() {
  "$@" >"$out" 2>"$tmp/err" || fail "$* ended with status $?"
}
# has ERE WHAT: a line of its output matches ERE (extended regular expression).
has() {
  grep -Eq "$1" "$out" || fail "no $2 (no line matching /$1/)"
}
# count ERE N WHAT: exactly N lines match ERE.
count() {
  n=$(grep -Ec "$1" "$out")
  [ "$n" -eq "$2" ] || fail "$n $3, expected $2 (lines matching /$1/)"
}
num='[0-9]+(\.[0-9]+)?'
case $NAME in
  model_accuracy)
    run "$BIN/bench_model_accuracy"
    has '^Fit on 1- and 2-GPU placements' "heading of the fit accuracy table"
    has "^cifar10 +\\(all types\\) +0 +[0-9]+ +$num% +$num%\$" "pooled accuracy of cifar10"
    has '^Bootstrapped' "heading of the bootstrap table"
    has "^cifar10 +\\(5 types\\) +Eq\\. 1 \\(each other type\\) +0 +[0-9]+ +$num% +$num%\$" \
      "bootstrapped accuracy of cifar10"
    ;;
  estimate_speed)
    run "$BIN/bench_estimate_speed"
    has '^ *GPUs +jobs +entries +cold \(ms\) +warm \(ms\)$' "table heading"
    count "^ +[0-9]+ +[0-9]+ +[0-9]+ +$num +$num\$" 1 "rows"
    has "^ +64 +31 +[1-9][0-9]* " "row of 64 GPUs and 31 jobs"
    ;;
  policy_runtime)
    run "$BIN/bench_policy_runtime" "$BIN"
    has "^ +64 +32 +[1-9][0-9]* +$num +$num +$num +[0-9.e+-]+  [a-z]" "solve row of 64 GPUs"
    has "^ +64 +$num / $num / $num +$num / $num / $num +$num / $num / $num +$num / $num / $num\$" \
      "in-process policy row of 64 GPUs"
    has "^ +64 +$num +$num +$num +$num\$" "Gavel row of 64 GPUs"
    has '^Pipeline through pipes' "pipeline heading"
    has "^ +64 +$num\$" "pipeline row of 64 GPUs"
    ;;
  sim_speed)
    run "$BIN/bench_sim_speed" "$SRC/data"
    row=" +[0-9]+ jobs +$num s +avg JCT $num h, [0-9]+ rounds\$"
    count "^philly/workload-1 \\(8 h\\) +(default|reference) +(fairness|-) $row" 4 "Philly cases"
    count "^saturn 1-6 end to end \\(48 h\\) +(default|reference) +fairness $row" 2 "Saturn cases"
    ;;
  ctl_round_latency)
    run "$BIN/bench_ctl_round_latency"
    has '^submitted 40 jobs in [0-9]+ ms' "submission line"
    has '^4 agents connected in [0-9]+ ms' "connection line"
    count "^ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9]+ +-?[0-9]+ +$num\$" 2 "round rows"
    has "^round +$num +$num +$num\$" "round latency row"
    has "^  delivery \\(4 ASSIGN/ACK\\) +$num +$num +$num\$" "delivery row"
    # Bad input: one line and the usage status, nothing run.
    "$BIN/bench_ctl_round_latency" --jobs many >"$out" 2>"$tmp/err"
    status=$?
    [ "$status" -eq 64 ] || fail "--jobs many: status $status, expected 64"
    grep -q '^bench_ctl_round_latency: --jobs many: expected a positive whole number$' \
      "$tmp/err" || fail "--jobs many: no line naming the flag"
    ;;
  request_limits)
    # 10 queued jobs, a 2 MB command line, 2 rounds before and after.
    run sh "$SRC/bench/request_limits.sh" "$BIN" 10 2 2
    mem="controller VmHWM: [0-9]+ MB +VmRSS: [0-9]+ MB +; rounds median $num s, max $num s"
    has "^before: 10 queued jobs; $mem; state [0-9]+ MB\$" \
      "line before the submission"
    has "^oversized submission \\(2 MB command line\\): status 65 in $num s, 1 line\\(s\\)" \
      "the submission's answer"
    has "^after: +$mem; state grew -?[0-9]+ MB over 2 rounds\$" \
      "line after the submission"
    has '^agents: [0-9]+ losses of the controller$' "agents line"
    ;;
  sim_identity)
    # Its first two cases, each with its four files, then the same again: identical.
    run "$SRC/bench/sim_identity.sh" "$BIN" "$tmp/a"
    has '^2 case\(s\) in .*, 0 failed$' "summary line"
    [ "$(find "$tmp/a" -type f | wc -l)" -eq 8 ] || fail "not the 8 files of 2 cases"
    run "$SRC/bench/sim_identity.sh" "$BIN" "$tmp/b"
    diff -r "$tmp/a" "$tmp/b" >"$out" 2>&1 || fail "two runs differ"
    ;;
  reservations)
    # The tiny workload without and with the two bundled reservations.
    run "$SRC/bench/reservations.sh" "$BIN"
    count '^== workload-tiny.csv ' 3 "headings"
    count "^average JCT +$num h\$" 3 "average JCT rows"
    count "^p99 JCT +$num h\$" 3 "p99 JCT rows"
    count "^GPU hours lent by reservations +$num\$" 2 "lent rows"
    count "^take-backs \\(GPUs in use\\) +[0-9]+ \\([0-9]+\\)\$" 2 "take-back rows"
    ;;
  deadlines)
    # The tiny workload, every job guaranteed: the three policies' deadline figures.
    run "$SRC/bench/deadlines.sh" "$BIN" 1:7
    has '^== workload-tiny.csv --deadlines 1:7$' "heading"
    has '^deadlines$' "deadline table"
    for p in sia edf elasticflow; do
      has "^$p +$num % +$num % +($num %|-) +$num h +$num +$num\$" "deadline row of $p"
      has "^$p +$num h +${num}x .* $num ms +$num ms\$" "runtime row of $p"
    done
    ;;
  torch_ddp_step)
    # One round of 12 steps (2 timed) at batch 16, by the Python with torch.
    py=${SIA_PYTHON:-/usr/bin/python3}
    "$py" -c 'import torch' 2>/dev/null || { echo "bench $NAME: skipped: $py has no torch"; exit 77; }
    run "$py" "$SRC/bench/torch_ddp_step.py" --rounds 1 --steps 12 --batch 16
    has '^small CNN, 2 CPU ranks \(gloo\), global batch 16, 12 steps' "heading"
    has "^round 1: DDP $num ms, sia\.torch $num ms, sia\.torch / DDP $num\$" "round line"
    has "^median sia\.torch / DDP over 1 round\(s\): $num\$" "median line"
    # Bad input: one line and the usage status, nothing run.
    "$py" "$SRC/bench/torch_ddp_step.py" --steps 5 >"$out" 2>"$tmp/err"
    status=$?
    [ "$status" -eq 64 ] || fail "--steps 5: status $status, expected 64"
    grep -q '^torch_ddp_step: --steps must be above 10$' "$tmp/err" ||
      fail "--steps 5: no line naming the flag"
    ;;
  slurm_latency)
    # The start latency through Slurm and through sia-run, and the controller's CPU with
    # 10 jobs over 3 rounds, on the e2e Slurm bed (no root, slurm-wlm or munge: skipped).
    "$SRC/bench/slurm_latency.sh" "$BIN" "$SRC" >"$out" 2>"$tmp/err"
    status=$?
    [ "$status" -eq 77 ] && { echo "bench $NAME: skipped: $(cat "$out")"; exit 77; }
    [ "$status" -eq 0 ] || fail "slurm_latency.sh ended with status $status"
    has '^mode +event +from +to +latency$' "heading"
    has "^slurm +start +\(none\) +[a-z0-9]+ n[1-3]:1 +$num s\$" "Slurm's start latency"
    has "^sia-run +start +\(none\) +[a-z0-9]+ n[1-3]:1 +$num s\$" "sia-run's start latency"
    has "^cpu +10 jobs \([0-9]+ Slurm jobs running\): first round $num s CPU \($num s wall\); rounds 2-3: median $num s CPU \($num s wall\), max $num s\$" \
      "the controller's CPU per round"
    ;;
  rebuild_check)
    # A copy of the sources set up twice, building one small library: the second builds
    # nothing.
    run "$SRC/bench/rebuild_check.sh" "$SRC" sia_deadline
    has "^first setup \(demo\.sh\): [1-9][0-9]* build steps in $num s\$" "first setup's line"
    has "^second setup \(test\.sh\): 0 build steps in $num s\$" "second setup's line"
    ;;
  *)
    echo "bench/smoke.sh: unknown bench $NAME" >&2
    exit 64
    ;;
esac
echo "bench $NAME: ran and printed its figures"
