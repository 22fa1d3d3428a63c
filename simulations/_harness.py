"""What every simulation script does before and around its work: checked arguments, an output folder, progress lines, figures.

Not a simulation (the leading underscore keeps it out of ``neurosim list``).
"""

from __future__ import annotations

import pathlib

from neurosim._validation import check_bool, check_int

__all__ = ["prepare", "pyplot", "save_figure", "runs_folder", "run_grid"]


def prepare(name: str, steps, default_steps: int, min_steps: int, out, seed, progress):
    """Check the common arguments and create ``out``.

    Returns
    -------
    steps : int
        ``default_steps`` when None, else checked to be ``>= min_steps``.
    seed : int
    out : pathlib.Path
        Created.
    say : callable
        ``say(msg)`` prints ``[name] msg`` when ``progress``.
    """
    steps = default_steps if steps is None else check_int("steps", steps, low=min_steps)
    seed = check_int("seed", seed, low=0)
    progress = check_bool("progress", progress)
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)

    def say(msg):
        if progress:
            print(f"[{name}] {msg}", flush=True)

    return steps, seed, out, say


def pyplot():
    """``matplotlib.pyplot`` on the non-interactive Agg backend (scripts write files; no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def save_figure(fig, path, dpi: int = 80) -> pathlib.Path:
    """Write ``fig`` to ``path`` and close it; return the path."""
    import matplotlib.pyplot as plt

    path = pathlib.Path(path)
    fig.savefig(path, dpi=dpi)
    plt.close(fig)
    return path


def runs_folder(out: pathlib.Path, resume: bool) -> pathlib.Path:
    """``out/runs``, where a simulation's :class:`~neurosim.Sweep` stores each finished network.

    With ``resume`` what is there is kept (the sweep loads finished runs and
    runs the rest; a folder from other settings is refused); without, it is
    cleared first.
    """
    import shutil

    folder = pathlib.Path(out) / "runs"
    if not check_bool("resume", resume) and folder.exists():
        shutil.rmtree(folder)
    return folder


def run_grid(name: str, point, grid: dict, seed: int, steps: int, out, resume: bool):
    """The networks of one figure: a :class:`~neurosim.Sweep` of ``point`` over ``grid`` at ``seed``, stored in ``out/runs``.

    Returns the Dataset without its ``seed`` dimension; raises RuntimeError
    naming the first failure if any network failed.
    """
    from neurosim.experiment import Sweep

    runs = Sweep(point, grid=grid, seeds=[seed], fixed={"steps": steps}, name=name).run(
        progress=False, out=runs_folder(out, resume))
    runs = runs.sel(seed=seed, drop=True)
    failed = [str(e) for e in runs.error.values.ravel() if str(e)]
    if failed:
        raise RuntimeError(f"{len(failed)} of the networks failed: {failed[0]}")
    return runs
