"""Rank 0's reports (sia-worker(7), Reports): the sums of the steps since the
last report, and the report built from them and the session.

Promises: a report's timings are means over the steps measured since the
previous report (the last interval's when none was), always at the batch the
report names: a "batch" report, which announces a new batch, has none.  Ranks
other than 0 keep no sums and send nothing.  Not thread-safe.
"""

import time

from sia.reports import ReportSink


class Interval:
    """Sums over the steps since the last report."""

    def __init__(self):
        self.steps = 0
        self.loss_sum = self.loss_count = 0.0
        self.timed = 0
        self.step_time = self.sync_time = 0.0

    def loss(self):
        return self.loss_sum / self.loss_count if self.loss_count else None


class Reporter:
    def __init__(self, contract, root):
        self.contract = contract
        self.sink = ReportSink(contract.report) if root else None
        self.interval = Interval()
        self.last = None  # the last interval with steps
        self.sent_at = time.monotonic()

    def due(self):
        return (self.sink is not None and time.monotonic() - self.sent_at
                >= self.contract.report_interval)

    def batch_changing(self, session):
        """Before a batch plan: the timings taken at the old batch go out."""
        if self.sink is not None and self.interval.timed:
            self.send(session, "interval")
        self.last = None

    def send(self, s, reason):
        """The report of session ``s`` with ``reason``; starts a new interval."""
        if self.sink is not None:
            self.sink.send(self._build(s, reason))
        if self.interval.steps > 0 and reason != "batch":
            self.last = self.interval
        self.interval = Interval()
        self.sent_at = time.monotonic()

    def _build(self, s, reason):
        c = self.contract
        r = {"type": "report", "job": c.job, "round": c.round, "step": s.step,
             "epoch": s.epoch, "samples": s.samples, "progress": s.progress,
             "local_bsz": s.local_bsz, "accum_steps": s.micro - 1,
             "world_size": s.world, "nodes": -(-s.world // c.local_world_size),
             "batch_size": s.batch_size, "reason": reason, "plan": s.plan}
        if c.gpu_type:
            r["gpu_type"] = c.gpu_type
        r["fraction"] = s.fraction()  # left out while unknown (None)
        iv = None if reason == "batch" else \
            self.interval if self.interval.steps > 0 else self.last
        if iv is not None:
            r["loss"] = iv.loss()
            if iv.timed:
                r["step_time"] = iv.step_time / iv.timed
                r["sync_time"] = iv.sync_time / iv.timed
        est = s.gns.estimate()
        if est is not None:
            r["grad_sqr"], r["grad_var"] = est
        return r

    def close(self):
        if self.sink is not None:
            self.sink.close()
