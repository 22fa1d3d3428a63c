"""The COBA benchmark network (Brette et al. 2007): population rate, CV of the inter-spike intervals, raster.

4,000 conductance-based LIF units (80 % excitatory, p = 0.02, dt = 0.1 ms,
reversal potentials 0 and -80 mV, forward Euler; Brette et al.'s benchmark 1,
:func:`neurosim.models.spiking.coba_network`), each seed drawing its own
connectivity and initial state. Brian2 on the same draws gives the same
spikes (``tests/spiking/test_coba_brian2.py``). The same outputs as
:mod:`spiking_cuba`: ``spiking_coba.nc`` and ``coba_raster.png``.
"""

from __future__ import annotations

import pathlib

from neurosim.simulations.spiking_cuba import DEFAULT_SEEDS, DEFAULT_STEPS, run_benchmark, statistics_tables

NAME = "spiking_coba"
DESCRIPTION = "Brette et al. (2007) COBA network: 4,000 conductance-based LIF units, rate, CV of the ISIs (issue 42)"
#: the shortened arguments of ``neurosim reproduce --quick``: 100 ms
QUICK = {"steps": 1000}
#: the figures the report shows (docs/reports/spiking.md): what this run writes -> its name there
REPORT_FIGURES = {"coba_raster.png": "spiking_coba.png"}
__all__ = ["run", "tables", "build", "DEFAULT_SEEDS", "DEFAULT_STEPS"]


def build(seed: int):
    """The COBA network of one seed (its connectivity and initial state), not recording."""
    from neurosim.models.spiking import coba_inputs, coba_network

    return coba_network(*coba_inputs(seed), record=False)


def run(steps=None, out=f"out/{NAME}", seed=0, progress=True, n_seeds=None) -> dict[str, pathlib.Path]:
    """Run the COBA network on ``n_seeds`` seeds for ``steps`` steps (0.1 ms each, default 1 s).

    The arguments and the files written are those of :func:`neurosim.simulations.spiking_cuba.run`
    (``dataset``, ``raster``).
    """
    return run_benchmark(NAME, build, "COBA", "Brette et al. 2007, benchmark 1 (COBA)", steps, out, seed, progress,
                         n_seeds)


def tables(ds) -> list:
    """The report's table: rate, CV of the ISIs and spikes per seed, and their mean ± sd."""
    return statistics_tables(ds, NAME)


if __name__ == "__main__":
    from neurosim.cli import script_main

    script_main(run, NAME)
