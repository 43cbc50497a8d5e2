"""sia.torch: PyTorch training under the sia scheduler, in a few lines.

::

    import sia.torch
    device = sia.torch.init()
    model = sia.torch.wrap(model, optimizer, scheduler)
    loader = sia.torch.ElasticDataLoader(dataset, batch_size=64, shuffle=True)
    for epoch in sia.torch.remaining_epochs_until(30):
        for x, y in loader:
            optimizer.zero_grad()
            loss = loss_fn(model(x.to(device)), y.to(device))
            loss.backward()
            optimizer.step()
            sia.torch.record_loss(loss)

does the worker contract of sia-worker(7) for the script: the process group,
the batch the scheduler gives the job (with gradient accumulation), reports,
checkpoints on SIGTERM and restores with any world size, in-place batch plans,
gradient statistics, learning-rate scaling, profiling, and the stop of an
app's trial at its rung (SIA_STOP_FRACTION).  See sia-torch(7).
"""

from sia.torch.data import ElasticDataLoader
from sia.torch.epochs import remaining_epochs_until
from sia.torch import state as _state
from sia.torch.parallel import AdaptiveDataParallel
from sia.torch.runtime import session as _session

__all__ = ["AdaptiveDataParallel", "ElasticDataLoader", "current", "init",
           "record_loss", "register_state", "remaining_epochs_until", "wrap"]


def init():
    """Reads the contract, joins the other ranks and restores the checkpoint
    (SIA_RESTORE=1); returns the torch.device this rank trains on.  Called by
    the other functions when the script does not call it first."""
    return _session().device


def wrap(model, optimizer, scheduler=None, lr_scaling=None):
    """The model wrapped for data-parallel training; ``optimizer.step()`` and
    ``scheduler.step()`` become sia's.  ``lr_scaling``: "adascale", "sqrt",
    "linear" or "none" (default: AdaScale for SGD, sqrt for Adam and AdamW,
    else none)."""
    return AdaptiveDataParallel(model, optimizer, scheduler, lr_scaling)


def record_loss(loss):
    """The current micro-batch's loss (a tensor or number), for the reports."""
    _session().record_loss(loss)


def register_state(name, obj):
    """Checkpoints ``obj`` (anything with ``state_dict()`` and
    ``load_state_dict()``) under ``name``, and restores it now if the job was
    restored from a checkpoint that holds it."""
    _state.register(_session(), name, obj)


def current():
    """The session: rank, world, device, local_bsz, micro, batch_size, step,
    epoch, progress (read them; do not assign)."""
    return _session()
