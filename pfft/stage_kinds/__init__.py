"""The kinds of stage a chain is made of, each kind's rules in one place.

A module per family of kinds (:mod:`.fft`: complex and real FFTs, :mod:`.r2r`: DCTs
and DSTs, :mod:`.resize`: spectral truncation, :mod:`.exchange`: all-to-all,
all-gather and local slice) holds, for each of its kinds, the stage (an immutable
value) and every rule about it:

- ``inverse()``: the stage that undoes its data movement (the chain run backwards);
- ``__str__``: its line of the chain;
- ``after(layout)``: the layout it leaves (the planner's walk and search use it);
- ``batched()``: the same stage on a batch stacked in a new axis 0 (``vmap``);
- ``natural_scale(shape, inverse, engine)``: the factor an engine's own transform
  applies in it (1 for a data movement);
- ``resolve(walk, at)``: the program steps it becomes (:mod:`.base`), with the step
  classes beside it: which engine runs it, in which axis order, which factor it
  carries;
- ``local_transform`` (and for one, ``exact_axes``): whether an exchange before it
  orders the block for it (its axes innermost, in their listed order if exact);
- ``pieces_route(form, send, kernels)`` and ``pieces_pass(data, route, settings,
  weighted)``, for a local transform the pieces kernel runs (:mod:`pfft.pieces`): how
  its passes go, chosen when the program is made (which pass takes the factor, which
  run as a pair), and those passes run; a kind without them never fuses with an
  exchange;
- ``join(before)``, for a kind whose stages in a row run as one step (DCT/DST): the
  run it makes with the stage before it.

What families share is in :mod:`.base` (:class:`~.base.Movement`: no factor, no
local transform; :class:`~.base.OnAxes`, :class:`~.base.OnOneAxis`: the batched form).

:data:`pfft.stages.STAGE_KINDS` is the one table of them; a new kind is a class here
and its entry there. The package imports no engine and no transport: an engine is a
value a stage's resolution is handed, never a module it imports.
"""
