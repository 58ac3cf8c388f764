"""What a plan's programs run for each FFT step, as wisdom would file it: shared by the
pytest suite and the scripts ``tests/test_mpi.py`` runs under ``mpirun``."""
import numpy as np


def fft_steps(plan, device_kind: str) -> list[tuple[str, str]]:
    """``(wisdom key, engine name)`` of every FFT step of ``plan``'s forward and
    backward programs, each key rebuilt from the step's own fields as
    :func:`pfft.wisdom.stage_key` files a measured step (what ``engine="auto"`` on GPUs
    looks up)."""
    from pfft import wisdom
    from pfft.autodiff import BACKWARD, FORWARD
    from pfft.program import Fft, RealFft

    precision = np.result_type(plan.dtype, np.complex64)
    out = []
    for variant in (FORWARD, BACKWARD):
        program = plan.programs[variant]
        for step, shape in zip(program.steps, program.shapes):
            if isinstance(step, (Fft, RealFft)):
                real = isinstance(step, RealFft)
                inverse = (not step.stage.to_complex) if real else step.inverse
                key = wisdom.stage_key(device_kind, precision, shape, step.positions,
                                       real=real, inverse=inverse, scale=step.scale)
                out.append((key, step.engine.name))
    return out
