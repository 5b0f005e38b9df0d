"""``minitensor.compile``: record a step's backend calls once, replay them without the per-op Python work.

:mod:`.capture` records (it sits just above the tensor core, so optimizers can register their per-step host
work with it); :mod:`.plan`, :mod:`.plan_fast` and :mod:`.fuse` turn a recording into a replay plan; :mod:`.api` is the
``compile`` wrapper with its guards and plan cache. This package file imports none of them, so lower layers
(``minitensor.optim``) can import :mod:`.capture` without pulling in the layers above them.
"""
