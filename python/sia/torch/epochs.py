"""The epoch loop that resumes where the job stopped.

``for epoch in remaining_epochs_until(n, max_steps=None, checkpoint_steps=0)``
yields the epochs still to train, starting with the checkpointed one (whose data
position the :class:`~sia.torch.data.ElasticDataLoader` resumes mid-epoch).  It
ends after epoch n - 1, or once ``max_steps`` optimizer steps have been taken (counted
since the job began, across restarts: the job ends at exactly that step).
When it ends, rank 0 writes the last checkpoint and the "done" report; with
``checkpoint_steps`` it also checkpoints every that many steps.  ``epochs`` and
``max_steps`` are the training the reports' fraction (and SIA_STOP_FRACTION)
measure.  Asking it for the next epoch is a step boundary (a stop, a rung, a
periodic checkpoint happen there, after the script's end-of-epoch code), and
an epoch it yields is never one the data position has already finished.

In profiling mode (SIA_PROFILE_STEPS) it keeps yielding until the measurement
ends the process.  Code before the loop runs again at every restart, so it
must not depend on how far training went.  Not thread-safe.
"""

from sia.torch import runtime


def remaining_epochs_until(epochs, max_steps=None, checkpoint_steps=0):
    s = runtime.session()
    s.max_steps = max_steps
    s.epochs = epochs
    s.checkpoint_steps = checkpoint_steps
    while True:
        s.settle_epoch()  # a restore on an epoch boundary: the next epoch
        if not (s.profiling or (s.epoch < epochs and not s.steps_done())):
            break
        s.boundary()  # after the script's code for the previous epoch
        epoch = s.epoch
        yield epoch
        if s.epoch == epoch and not s.steps_done():
            s.epoch, s.position = epoch + 1, 0  # the body ended the epoch early
    s.finish(preempted=False)
