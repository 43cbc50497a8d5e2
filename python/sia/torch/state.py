"""What a checkpoint holds, and how it goes back into a job.

A checkpoint is one ``torch.save`` dictionary (format version 1) inside the
checksummed file :mod:`sia.checkpoint` writes: the step, progress, samples and
data position (epoch, samples into it, seed), B0, the gradient statistics'
averages, the batch plan applied in this round, the model (unwrapped), the
optimizer, the learning-rate scheduler, rank 0's random states and every
object given to :func:`register_state`.  None of it depends on the world size,
so a job resumes with any number of ranks.

Promises: every rank that restores gets the same tensors (rank 0 reads the
file and sends it); a payload that ``torch.load`` cannot read is status 65;
registered objects get their state back as soon as they are registered.
With SIA_TORCH_DEBUG=1 rank 0 logs a CRC-32 of the model and optimizer state
when it saves and after it restores (equal when the restore is exact).
Not thread-safe: the training thread calls it.
"""

import io
import os
import random
import zlib

import torch

from sia import checkpoint
from sia.status import DATA, SiaError
from sia.torch.diagnostics import log

FORMAT = 1


def register(s, name, obj):
    """Checkpoints ``obj`` (anything with ``state_dict()`` and
    ``load_state_dict()``) under ``name`` in session ``s``, and restores it now
    if the job was restored from a checkpoint that holds it."""
    if not (hasattr(obj, "state_dict") and hasattr(obj, "load_state_dict")):
        raise TypeError(f"register_state({name!r}): the object needs state_dict() "
                        "and load_state_dict()")
    s.states[name] = obj
    saved = (s.restored or {}).get("user", {})
    if name in saved:
        obj.load_state_dict(saved[name])


def _payload(s):
    model = s.model
    rng = {"torch": torch.get_rng_state(), "python": random.getstate()}
    if s.device.type == "cuda":
        rng["cuda"] = torch.cuda.get_rng_state(s.device)
    return {
        "format": FORMAT,
        "step": s.step, "progress": s.progress, "samples": s.samples,
        "epoch": s.epoch, "position": s.position, "seed": s.seed,
        "init_batch_size": s.init_batch, "gns": s.gns.state_dict(),
        "plan": {"round": s.contract.round, "applied": s.plan},
        "model": model.module.state_dict() if model else None,
        "optimizer": model.optimizer.state_dict() if model else None,
        "scheduler": _scheduler_state(model.scheduler) if model else None,
        "user": {name: obj.state_dict() for name, obj in s.states.items()},
        "rng": rng,
    }


def _debug():
    return os.environ.get("SIA_TORCH_DEBUG", "") not in ("", "0")


def state_crc(*states):
    """CRC-32 of state dicts (tensors' bytes, keys, values) walked in a fixed
    order: equal for equal model and optimizer states, on any device."""
    crc = 0

    def walk(x):
        nonlocal crc
        if isinstance(x, torch.Tensor):
            crc = zlib.crc32(x.detach().cpu().contiguous().numpy().tobytes(), crc)
        elif isinstance(x, dict):
            for key in sorted(x, key=str):
                crc = zlib.crc32(str(key).encode(), crc)
                walk(x[key])
        elif isinstance(x, (list, tuple)):
            for v in x:
                walk(v)
        else:
            crc = zlib.crc32(repr(x).encode(), crc)

    for state in states:
        walk(state)
    return "%08x" % crc


def _scheduler_state(scheduler):
    if scheduler is None:
        return None
    # sia's guard on scheduler.step is an instance attribute: not state.
    return {k: v for k, v in scheduler.state_dict().items() if k != "step"}


def write_checkpoint(s):
    """Rank 0: the session's state to SIA_CKPT_DIR; returns the file's path."""
    payload = _payload(s)
    buffer = io.BytesIO()
    torch.save(payload, buffer)
    path = checkpoint.save(s.contract.ckpt_dir, s.step, buffer.getbuffer(),
                           generation=s.contract.round)
    if _debug():
        log(f"checkpoint step {s.step}: model and optimizer state crc "
                    f"{state_crc(payload['model'], payload['optimizer'])}", s.rank)
    return path


def decode(found, device):
    """The state in ``found``, (path, payload) as sia.checkpoint.load_latest
    returns it, with its tensors on ``device``."""
    path, payload = found
    try:
        state = torch.load(io.BytesIO(payload), map_location=device)
    except Exception as e:  # any failure to unpickle is a bad checkpoint
        raise SiaError(DATA, f"{path}: unreadable checkpoint payload ({e})") from None
    if not isinstance(state, dict) or state.get("format") != FORMAT:
        raise SiaError(DATA, f"{path}: not a sia.torch checkpoint (format "
                       f"{state.get('format') if isinstance(state, dict) else '?'})")
    return state


def apply_session(s, state):
    """The session's part of a restored checkpoint."""
    s.step, s.progress, s.samples = state["step"], state["progress"], state["samples"]
    s.epoch, s.position, s.seed = state["epoch"], state["position"], state["seed"]
    s.init_batch = state["init_batch_size"]
    s.gns.load_state_dict(state["gns"])
    if state["plan"]["round"] == s.contract.round:
        s.plan = state["plan"]["applied"]
        if s.plans is not None:
            s.plans.applied = s.plan
    if s.root:
        rng = state["rng"]
        torch.set_rng_state(rng["torch"].cpu())
        random.setstate(rng["python"])
        if "cuda" in rng and s.device.type == "cuda":
            torch.cuda.set_rng_state(rng["cuda"].cpu(), s.device)


def apply_model(s, wrapper):
    """The model's, optimizer's and scheduler's part of a restored checkpoint."""
    state = s.restored
    if state is None or state["model"] is None:
        return
    wrapper.module.load_state_dict(state["model"])
    wrapper.optimizer.load_state_dict(state["optimizer"])
    if wrapper.scheduler is not None and state["scheduler"] is not None:
        wrapper.scheduler.load_state_dict(state["scheduler"])
    if _debug() and s.root:
        crc = state_crc(wrapper.module.state_dict(), wrapper.optimizer.state_dict())
        log(f"restored step {s.step}: model and optimizer state crc {crc}",
                    s.rank)
