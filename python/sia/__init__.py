"""sia: the job side of the sia scheduler.

The package itself imports nothing heavy: the PyTorch integration lives in
:mod:`sia.torch` (``import sia.torch``), and the modules beside it hold what does
not need torch -- the worker contract's environment (:mod:`sia.contract`),
reports (:mod:`sia.reports`), checkpoint files (:mod:`sia.checkpoint`), batch
plans (:mod:`sia.batch_plan`), gradient statistics (:mod:`sia.gradient_noise`)
and data positions (:mod:`sia.positions`).  See sia-worker(7) and sia-torch(7).
"""

__version__ = "0.1.0"
