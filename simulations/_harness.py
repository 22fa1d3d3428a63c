"""What every simulation script does before and around its work: checked arguments, an output folder, progress lines,
seeds, the dataset file, figures.

Not a simulation (the leading underscore keeps it out of ``neurosim list``).
"""

from __future__ import annotations

import pathlib

from neurosim._validation import check_bool, check_int

__all__ = ["prepare", "prepare_seeded", "progress_printer", "output_folder", "seed_count", "pyplot", "save_figure",
           "write_dataset", "report_written", "save_final_figure", "runs_folder", "check_runs_succeeded", "run_grid",
           "mean_sd"]


def progress_printer(name: str, progress: bool):
    """``say(msg)``: prints ``[name] msg`` (flushed, so progress shows while a long run goes on) when ``progress``."""

    def say(msg):
        if progress:
            print(f"[{name}] {msg}", flush=True)

    return say


def output_folder(out) -> pathlib.Path:
    """``out`` as a path, created with its parents if missing."""
    out = pathlib.Path(out)
    out.mkdir(parents=True, exist_ok=True)
    return out


def seed_count(n_seeds, default: int) -> int:
    """The number of seeds a run repeats on: ``default`` when ``n_seeds`` is None, else ``n_seeds`` checked (>= 1)."""
    return check_int("n_seeds", default if n_seeds is None else n_seeds, low=1)


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
    return steps, seed, output_folder(out), progress_printer(name, progress)


def prepare_seeded(name: str, steps, default_steps: int, min_steps: int, out, seed, progress, n_seeds,
                   default_seeds: int):
    """:func:`prepare` for a run repeated on several seeds: the same, and ``n_seeds`` checked by :func:`seed_count`.

    Returns
    -------
    steps, seed : int
    n_seeds : int
        ``default_seeds`` when None.
    out : pathlib.Path
        Created.
    say : callable
    """
    steps, seed, out, say = prepare(name, steps, default_steps, min_steps, out, seed, progress)
    return steps, seed, seed_count(n_seeds, default_seeds), out, say


def pyplot():
    """``matplotlib.pyplot`` on the non-interactive Agg backend (scripts write files; no display needed)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


#: every figure of the reproductions is written at least this sharp (dots per inch): at the scripts'
#: figure sizes (9-15 inches wide) that is 1350-2250 pixels, enough to print at full page width
MIN_DPI = 150


def save_figure(fig, path, dpi: int = MIN_DPI, **kwargs) -> pathlib.Path:
    """Write ``fig`` to ``path`` at ``dpi >= MIN_DPI`` and close it; return the path.

    ``kwargs`` go to ``Figure.savefig`` (e.g. ``bbox_inches="tight"``).
    """
    import matplotlib.pyplot as plt

    if dpi < MIN_DPI:
        raise ValueError(f"dpi must be at least {MIN_DPI} (figures must print); got {dpi}")
    path = pathlib.Path(path)
    fig.savefig(path, dpi=dpi, **kwargs)
    plt.close(fig)
    return path


def write_dataset(ds, out, name: str) -> dict[str, pathlib.Path]:
    """Write a simulation's Dataset ``ds`` to ``out/<name>.nc`` (h5netcdf, as every reproduction stores its numbers).

    Returns
    -------
    dict of str to pathlib.Path
        ``{"dataset": path}``: the first entry of the paths a run returns.
    """
    path = pathlib.Path(out) / f"{name}.nc"
    ds.to_netcdf(path, engine="h5netcdf")
    return {"dataset": path}


def report_written(say, paths: dict) -> dict:
    """Say which files a run wrote (one line, every path of ``paths``) and return ``paths``."""
    say(f"wrote {', '.join(str(p) for p in paths.values())}")
    return paths


def save_final_figure(fig, path, key: str, paths: dict, say) -> dict:
    """Write a run's last figure and end the run: :func:`save_figure`, then :func:`report_written`.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    path : path
        The PNG to write.
    key : str
        Its name among the run's paths.
    paths : dict of str to pathlib.Path
        What the run wrote before; ``paths[key]`` is added.
    say : callable
        The run's progress printer (:func:`progress_printer`).

    Returns
    -------
    dict of str to pathlib.Path
        ``paths``, what the run returns.
    """
    paths[key] = save_figure(fig, path)
    return report_written(say, paths)


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


def check_runs_succeeded(runs, what: str = "networks") -> None:
    """Raise RuntimeError naming the first failure if any run of a sweep failed.

    Parameters
    ----------
    runs : xarray.Dataset
        A :class:`~neurosim.Sweep`'s results; a failed run has a non-empty ``error``.
    what : str
        What the runs are, in the message (``"3 of the networks failed: ..."``).
    """
    failed = [str(e) for e in runs.error.values.ravel() if str(e)]
    if failed:
        raise RuntimeError(f"{len(failed)} of the {what} failed: {failed[0]}")


def run_grid(name: str, point, grid: dict, seed: int, steps: int, out, resume: bool, n_seeds: int | None = None):
    """The networks of one figure: a :class:`~neurosim.Sweep` of ``point`` over ``grid``, stored in ``out/runs``.

    Without ``n_seeds`` (the old form) one run per grid point at ``seed``,
    returned without a ``seed`` dimension. With ``n_seeds`` (>= 1) the
    seeds ``seed, seed + 1, ..., seed + n_seeds - 1`` and the Dataset keeps
    its ``seed`` dimension (coordinate: the seeds), so a script reports a
    mean and a spread over seeds. Raises RuntimeError naming the first
    failure if any network failed.
    """
    from neurosim.experiment import Sweep

    seeds = [seed] if n_seeds is None else [seed + r for r in range(check_int("n_seeds", n_seeds, low=1))]
    runs = Sweep(point, grid=grid, seeds=seeds, fixed={"steps": steps}, name=name).run(
        progress=False, out=runs_folder(out, resume))
    if n_seeds is None:
        runs = runs.sel(seed=seed, drop=True)
    check_runs_succeeded(runs)
    return runs


def mean_sd(values, fmt: str = ".2f") -> str:
    """``"mean ± sd (n)"`` of per-seed values (sd with ddof 1; the value alone for one seed)."""
    import numpy as np

    v = np.asarray(getattr(values, "values", values), dtype=float).ravel()
    if v.size < 2:
        return f"{float(v.mean()):{fmt}}"
    return f"{float(v.mean()):{fmt}} ± {float(v.std(ddof=1)):{fmt}}"
