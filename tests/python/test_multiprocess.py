"""Several ranks over gloo on 127.0.0.1: the stop vote, restores with another
world size, in-place batch plans, out-of-memory restarts."""

import argparse
import collections
import io
import json
import os
import tempfile
import unittest

import torch

from helpers import SCENARIO, Job, recorded_ids, reports, wait_for  # before sia
import scenario
from sia import checkpoint

NEEDS_TORCH = True


class MultiProcess(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.dir = self.tmp.name
        self.ckpt = os.path.join(self.dir, "ckpt")
        self.report = os.path.join(self.dir, "reports.jsonl")
        self.record = os.path.join(self.dir, "ids")
        self.dump = os.path.join(self.dir, "dump")

    def tearDown(self):
        self.tmp.cleanup()

    def job(self, world, args, port=None, **env):
        env = dict(dict(SIA_JOB="t", SIA_ROUND=1, SIA_CKPT_DIR=self.ckpt,
                        SIA_REPORT=self.report, SIA_REPORT_INTERVAL=0.1), **env)
        return Job(self.dir, [SCENARIO, "--record", self.record, "--dump", self.dump]
                   + args, world, port=port, **env)

    def wait_step(self, step, round=1):
        return wait_for(lambda: [r for r in reports(self.report)
                                 if r["round"] == round and r["step"] >= step],
                        what=f"a report at step {step}")

    def dumps(self):
        with open(self.dump) as f:
            return [line.split() for line in f]

    def test_stop_vote_restore_other_world_and_exactly_once(self):
        args = ["--dataset-size", "1500", "--epochs", "1", "--slow", "0.02"]
        # 2 ranks x 8 x 3 micro-steps; SIGTERM reaches rank 1 only.
        job = self.job(2, args, SIA_LOCAL_BSZ=8, SIA_ACCUM_STEPS=2)
        self.wait_step(5)
        job.signal([1])
        self.assertEqual(job.wait(), [75, 75], job.logs())
        last = reports(self.report)[-1]
        self.assertEqual(last["reason"], "preempted")
        self.assertEqual(os.listdir(self.ckpt).count("latest"), 1)
        saved = self.dumps()[-1]
        self.assertEqual(saved[:2], ["save", str(last["step"])])
        # 3 ranks x 7, no accumulation, restore: same state, then the epoch ends.
        job = self.job(3, args[:-2], SIA_ROUND=2, SIA_LOCAL_BSZ=7, SIA_RESTORE=1)
        self.assertEqual(job.wait(), [0, 0, 0], job.logs())
        self.assertIn(f"restored step {last['step']}", job.log(0))
        loaded = [d for d in self.dumps() if d[0] == "load"]
        self.assertEqual(loaded, [["load", saved[1], saved[2]]])
        ids = recorded_ids([f"{self.record}.{r}" for r in range(3)])
        counts = collections.Counter(ids)
        self.assertEqual(sorted(counts), list(range(1500)))
        self.assertEqual(set(counts.values()), {1})
        done = reports(self.report)[-1]
        self.assertEqual((done["reason"], done["world_size"], done["local_bsz"]),
                         ("done", 3, 7))
        self.assertEqual(done["samples"], 1500)

    def rung_round(self, round, args, statuses, **env):
        """One round of a trial (2 ranks x 8): its reports, after the statuses."""
        job = self.job(2, args, SIA_ROUND=round, SIA_LOCAL_BSZ=8,
                       SIA_RESTORE=int(round > 1), SIA_REPORT_INTERVAL=0.05, **env)
        self.assertEqual(job.wait(), statuses, job.logs())
        return [r for r in reports(self.report) if r["round"] == round]

    def assert_rung(self, rs, step, fraction):
        """The round's reports rise to ``fraction`` and end "rung" at ``step``."""
        fractions = [r["fraction"] for r in rs]
        self.assertEqual(fractions, sorted(fractions))
        last = rs[-1]
        self.assertEqual((last["reason"], last["step"]), ("rung", step))
        self.assertAlmostEqual(last["fraction"], fraction)
        with open(os.path.join(self.ckpt, "latest")) as f:
            self.assertEqual(f.read().strip(), f"ckpt-{step:012d}.pt")

    def test_a_trial_stops_at_its_rung_of_max_steps(self):
        # 12 steps of 16 samples (the one epoch of 1000 is not the limit).
        args = ["--steps", "12", "--dataset-size", "1000", "--slow", "0.03"]
        rs = self.rung_round(1, args, [75, 75], SIA_STOP_FRACTION=0.5)
        self.assertGreater(len(rs), 1)
        for r in rs:
            self.assertAlmostEqual(r["fraction"], r["step"] / 12)
        self.assert_rung(rs, 6, 0.5)
        self.assertIn("loss", rs[-1])
        # Restarted below its next rung: it trains on to it.
        rs = self.rung_round(2, args, [75, 75], SIA_STOP_FRACTION=0.75)
        self.assert_rung(rs, 9, 0.75)
        self.assertIn("loss", rs[-1])
        # The last phase (no SIA_STOP_FRACTION): to the end.
        rs = self.rung_round(3, args, [0, 0])
        self.assertEqual((rs[-1]["reason"], rs[-1]["step"], rs[-1]["fraction"]),
                         ("done", 12, 1.0))
        ids = recorded_ids([f"{self.record}.{r}" for r in range(2)])
        self.assertEqual(len(ids), 12 * 16)
        self.assertEqual(len(set(ids)), 12 * 16)

    def test_a_trial_stops_at_its_rung_of_epochs(self):
        # 3 epochs of 480 samples, 30 steps of 16 each: half is step 45, mid-epoch 1.
        args = ["--epochs", "3", "--dataset-size", "480", "--slow", "0.01"]
        rs = self.rung_round(1, args, [75, 75], SIA_STOP_FRACTION=0.5)
        for r in rs:
            self.assertAlmostEqual(r["fraction"], r["samples"] / 1440)
        self.assert_rung(rs, 45, 0.5)
        self.assertEqual((rs[-1]["epoch"], rs[-1]["samples"]), (1, 720))
        self.assertIn("loss", rs[-1])
        # Restarted at its rung: it stops before a step, as the reference worker.
        rs = self.rung_round(2, args, [75, 75], SIA_STOP_FRACTION=0.5)
        self.assertEqual([r["reason"] for r in rs], ["rung"])
        self.assert_rung(rs, 45, 0.5)
        rs = self.rung_round(3, args, [0, 0])
        self.assertEqual((rs[-1]["reason"], rs[-1]["step"], rs[-1]["fraction"]),
                         ("done", 90, 1.0))
        counts = collections.Counter(recorded_ids([f"{self.record}.{r}"
                                                   for r in range(2)]))
        self.assertEqual(sorted(counts), list(range(480)))
        self.assertEqual(set(counts.values()), {3})

    def test_rank_0_waits_for_a_port_still_held(self):
        # The previous round's store still holds MASTER_PORT (bound, not listening):
        # rank 0 retries until it is free instead of failing the job.
        import socket
        import time
        from helpers import free_port
        holder = socket.socket()
        holder.bind(("0.0.0.0", free_port()))
        port = holder.getsockname()[1]
        job = self.job(2, ["--dataset-size", "64", "--epochs", "1"], port=port,
                       SIA_LOCAL_BSZ=8)
        time.sleep(2)
        holder.close()
        self.assertEqual(job.wait(), [0, 0], job.logs())

    def test_batch_plan_in_place(self):
        plan_file = os.path.join(self.dir, "batch-plan.json")
        job = self.job(2, ["--dataset-size", "100000", "--slow", "0.01"],
                       SIA_LOCAL_BSZ=16, SIA_BATCH_PLAN=plan_file)
        self.wait_step(3)

        def write(doc):
            with open(plan_file + ".tmp", "w") as f:
                header = {"type": "batch_plan", "job": "t", "round": 1}
                json.dump(dict(header, **doc), f)
            os.replace(plan_file + ".tmp", plan_file)

        write({"plan": 1, "batch_size": 30, "local_bsz": 4, "accum_steps": 2})  # bad
        wait_for(lambda: "ignoring batch plan 1" in job.log(0), what="a warning")
        write({"plan": 1, "round": 0, "batch_size": 8, "local_bsz": 4})  # old round
        write({"plan": 1, "batch_size": 24, "local_bsz": 4, "accum_steps": 2})
        batch = wait_for(lambda: [r for r in reports(self.report)
                                  if r["reason"] == "batch"], what="a batch report")
        self.assertEqual([(r["plan"], r["local_bsz"], r["accum_steps"],
                           r["batch_size"]) for r in batch], [(1, 4, 2, 24)])
        self.assertNotIn("step_time", batch[0])  # none measured at the new batch yet
        before = [r for r in reports(self.report) if r["plan"] == 0][-1]
        after = wait_for(lambda: [r for r in reports(self.report)
                                  if r["reason"] == "interval" and r["plan"] == 1],
                         what="an interval report after the plan")[0]
        self.assertEqual((after["local_bsz"], after["accum_steps"]), (4, 2))
        self.assertEqual(after["samples"] - batch[0]["samples"],
                         24 * (after["step"] - batch[0]["step"]))
        self.assertGreater(batch[0]["step"], before["step"] - 1)
        self.assertTrue(all(p.poll() is None for p in job.procs))  # same processes
        job.signal()
        self.assertEqual(job.wait(), [75, 75], job.logs())

    def test_out_of_memory_halves_the_local_batch(self):
        # The last rank cannot take micro-batches above 4: 16 -> 8 x 2 -> 4 x 4.
        job = self.job(2, ["--steps", "12", "--oom-above", "4",
                           "--dataset-size", "2000"], SIA_LOCAL_BSZ=16)
        pids = [p.pid for p in job.procs]
        self.assertEqual(job.wait(), [0, 0], job.logs())
        self.assertEqual(pids, [p.pid for p in job.procs])
        done = reports(self.report)[-1]
        self.assertEqual((done["reason"], done["step"], done["local_bsz"],
                          done["accum_steps"], done["batch_size"]),
                         ("done", 12, 4, 3, 32))
        self.assertEqual(job.log(0).count("out of memory at local batch"), 2)

    def test_uneven_last_batch_is_the_exact_mean(self):
        # One step over the whole dataset, from w = 0 with plain SGD at lr 1:
        # w = mean of x y over the samples, however they were split.
        for world, size, local, accum in ((3, 2, 4, 1), (1, 10, 4, 2)):
            job = self.job(world, ["--model", "linear", "--optimizer", "sgd",
                                   "--lr", "1", "--lr-scaling", "none",
                                   "--dataset-size", str(size), "--batch-size", "4"],
                           SIA_LOCAL_BSZ=local, SIA_ACCUM_STEPS=accum)
            self.assertEqual(job.wait(), [0] * world, job.logs())
            _, payload = checkpoint.load_latest(self.ckpt)
            state = torch.load(io.BytesIO(payload))
            self.assertEqual(state["step"], 1)
            args = argparse.Namespace(dataset_size=size, features=8, model="linear",
                                      noise=1.0)
            x, y, _ = scenario.data(args).tensors
            expected = (x * y).mean(0)
            self.assertTrue(torch.allclose(state["model"]["weight"][0], expected,
                                           atol=1e-6), (state["model"], expected))

    def test_out_of_memory_at_local_batch_one(self):
        job = self.job(2, ["--steps", "5", "--oom-above", "0"], SIA_LOCAL_BSZ=1)
        self.assertEqual(job.wait(), [71, 71], job.logs())
        self.assertIn("out of memory at local batch 1", job.log(1))


if __name__ == "__main__":
    unittest.main()
