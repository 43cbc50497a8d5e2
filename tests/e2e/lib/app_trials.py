"""Imported by the e2e scripts that check an app's trials (not a test itself: the e2e
tests are tests/e2e/*.sh): the trials' reports from every node, and their rung reports.
Plain functions over the files of a finished run."""

import glob
import json
import sys


def check(ok, what):
    """Fails the test (exit 1) with ``what`` unless ``ok``."""
    if not ok:
        print("FAIL:", what)
        sys.exit(1)


def reports(state_dir):
    """Each job's reports, from every node it ran on: {job: [report, ...]}."""
    out = {}
    for f in glob.glob(state_dir + "/nodes/*/jobs/*/reports.jsonl"):
        with open(f) as lines:
            for line in lines:
                r = json.loads(line)
                out.setdefault(r["job"], []).append(r)
    return out


def rungs(all_reports, trials):
    """{fraction (3 decimals): {trial: (step, loss)}}: what each trial reported when it
    stopped at a rung (its workers' "rung" report).  A trial is started once per phase
    it trains in: none may be started again at a rung it has reached (such a start
    would stop at once, its "rung" report without a loss)."""
    out = {}
    for t in trials:
        for r in sorted(all_reports.get(t, []), key=lambda r: (r["round"], r["step"])):
            if r.get("reason") == "rung":
                check("loss" in r, "%s started again at its rung (round %d): %s"
                      % (t, r["round"], r))
                out.setdefault(round(r["fraction"], 3), {}).setdefault(
                    t, (r["step"], r["loss"]))
    return out
