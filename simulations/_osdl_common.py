"""What the paper-003 (OSDL) scripts share: the code solver, the seeds, the start of a run and its dataset file.

Not a simulation (the leading underscore keeps it out of ``neurosim list``).

Every OSDL script runs its ``point`` over its ``GRID`` on ``n_seeds`` seeds
(:data:`DEFAULT_SEEDS` by default) through the sweep layer, stores one
Dataset whose attributes name the simulation, the paper, the run's length
and seeds and the script's own settings, and reports mean ± sd over seeds.
"""

from __future__ import annotations

import pathlib

from neurosim.simulations._harness import prepare_seeded, run_grid, write_dataset

__all__ = ["SOLVER", "DEFAULT_SEEDS", "PAPER", "run_seeds", "write_osdl_dataset"]

#: the code solver: Table 2, the paper's re-weighting (the circuit's default "auto" would use FISTA for
#: disjoint groups and trees); the numbers in docs/reports/paper003.md are Table 2's
SOLVER = "table2"
#: seeds per run (``n_seeds``'s default): a mean and a spread over seeds for every reported number
DEFAULT_SEEDS = 3
#: the paper the scripts reproduce, as the datasets' ``paper`` attribute names it
PAPER = "003"


def run_seeds(name: str, point, grid: dict, steps, default_steps: int, min_steps: int, out, seed, progress,
              resume: bool, n_seeds):
    """Check a script's arguments, create ``out`` and run ``point`` over ``grid`` on ``n_seeds`` seeds.

    Parameters
    ----------
    name : str
        The simulation's name (progress lines, the sweep's name).
    point : callable
        One run: ``point(**grid_values, seed, steps)`` returning a Dataset.
    grid : dict
        The values of ``point``'s parameters.
    steps : int or None
        Steps of every run; ``default_steps`` when None, else at least ``min_steps``.
    default_steps, min_steps : int
    out : path
        Output folder (created); the finished networks are kept in ``out/runs``.
    seed : int >= 0
        The first seed: the runs use ``seed, seed + 1, ..., seed + n_seeds - 1``.
    progress : bool
        Print progress lines.
    resume : bool
        Keep the networks already finished in ``out/runs`` and run only the others.
    n_seeds : int >= 1 or None
        :data:`DEFAULT_SEEDS` when None.

    Returns
    -------
    runs : xarray.Dataset
        The sweep's results, with a ``seed`` dimension (:func:`~neurosim.simulations._harness.run_grid`).
    steps, seed, n_seeds : int
        Checked.
    out : pathlib.Path
        Created.
    say : callable
        ``say(msg)`` prints ``[name] msg`` when ``progress``.
    """
    steps, seed, n_seeds, out, say = prepare_seeded(name, steps, default_steps, min_steps, out, seed, progress,
                                                    n_seeds, DEFAULT_SEEDS)
    runs = run_grid(name, point, grid, seed, steps, out, resume, n_seeds=n_seeds)
    return runs, steps, seed, n_seeds, out, say


def write_osdl_dataset(ds, name: str, out, steps: int, seed: int, n_seeds: int, **settings) -> dict[str, pathlib.Path]:
    """Label ``ds`` (simulation, paper, steps, seeds, then ``settings`` in order) and write it to ``out/<name>.nc``.

    Parameters
    ----------
    ds : xarray.Dataset
        The script's results; its attributes are replaced.
    name : str
        The simulation's name.
    out : pathlib.Path
        Output folder.
    steps, seed, n_seeds : int
        The run's length, first seed and number of seeds (as :func:`run_seeds` returned them).
    **settings
        The script's own settings, stored as attributes after the common ones.

    Returns
    -------
    dict of str to pathlib.Path
        ``{"dataset": path}``, the first entry of the run's paths.
    """
    ds.attrs = {"simulation": name, "paper": PAPER, "steps": steps, "seed": seed, "n_seeds": n_seeds, **settings}
    return write_dataset(ds, out, name)
