"""Many networks stepped together: an ensemble of one structure on every core, or on a GPU.

Sweeps over seeds and parameters of small networks are what most scripts
run. :class:`Ensemble` runs a list of networks of one structure as one job:

* ``backend="cpu"``: the members' own compiled segments on a pool of
  threads (numba releases the GIL inside a segment), each member on one
  numba and BLAS thread. A member's numbers are therefore exactly those of
  ``member.run(steps)`` alone, whatever the number of threads.
* ``backend="cuda"``: one CUDA block per member stepping a whole chunk of
  steps in one launch (:mod:`neurosim.cuda.ensemble`); the similarity-matching
  family only (see there).

Members keep their own state, recorders, step counter and parameters (which
may differ: a sweep of ``eta`` or ``alpha`` is an ensemble of networks that
differ in them); after ``run`` each member is exactly where a run of its own
would have left it and can go on alone.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from neurosim._lazy import lazy_module
from neurosim._validation import check_choice, check_int
from neurosim.network import Network

if TYPE_CHECKING:
    import xarray as xr
else:
    xr = lazy_module("xarray")  # imported on first use (neurosim/_lazy.py)

__all__ = ["Ensemble"]


def _structure(net: Network) -> tuple:
    """What members of one ensemble must share: entities, sizes, wiring, components, batch."""
    pops = tuple((p.name, p.size, p.batch, type(p.dynamics).__name__) for p in net.populations.values())
    projs = tuple((p.name, p.pre.name, p.post.name, p.sign, p.weights.shape, type(p.rule).__name__,
                   None if p.mask is None else p.mask.tobytes(),
                   (p.synapse_index.indptr.tobytes(), p.synapse_index.indices.tobytes()) if p.sparse else None)
                  for p in net.projections.values())
    comps = tuple(type(c).__name__ for c in net.schedule().components)
    inputs = tuple((i.population.name, type(i.stream).__name__, i.stream.dim) for i in net.inputs)
    return (("populations", pops), ("projections", projs), ("components", comps), ("inputs", inputs),
            ("batch", net.batch))


def _check_stores(nets):
    """Refuse members whose recorders would write one store (they would replace each other's samples)."""
    from neurosim.network import _resolved

    seen = []
    for i, net in enumerate(nets):
        for rec in net.recorders.values():
            if rec.store is None:
                continue
            here = _resolved(rec.store)
            for j, other, there in seen:
                if j != i and (here == there or here in there.parents or there in here.parents):
                    raise ValueError(f"networks[{j}] and networks[{i}]: recorders {other.name!r} and {rec.name!r} "
                                     f"would both write the store {rec.store}; a store holds one recorder's "
                                     "samples: give each member's recorders store= paths of their own")
            seen.append((i, rec, here))


class Ensemble:
    """A list of networks of one structure, run together.

    Parameters
    ----------
    networks : sequence of :class:`~neurosim.Network`, at least one
        Same populations (names, sizes), projections (names, wiring, signs,
        masks), components and batch; numeric parameters and initial state
        may differ. A network may appear only once, and no two members'
        recorders may write one store.

    Raises
    ------
    TypeError
        If ``networks`` is not a sequence of Networks.
    ValueError
        If it is empty, repeats a network, or the members differ in
        structure (the message names the first difference).

    Examples
    --------
    Three networks of one structure with different seeds, run on threads;
    each member gives exactly what it gives run alone:

    >>> import numpy as np
    >>> import neurosim as ns
    >>> def build(seed):
    ...     net = ns.Network(seed=seed)
    ...     x, y = ns.Population("x", 3), ns.Population("y", 2, dynamics=ns.Linear())
    ...     _ = net.add(x, y, ns.Projection("W", x, y, rule=ns.Oja(rate=0.01)))
    ...     _ = net.connect(ns.GaussianStream([3.0, 2.0, 1.0], seed=seed), x)
    ...     _ = net.record(y, every=5)
    ...     return net
    >>> ens = ns.Ensemble([build(s) for s in range(3)])
    >>> _ = ens.run(20, threads=2)
    >>> activity = ens.recording("y")
    >>> activity.dims, activity.shape
    (('network', 'time', 'batch', 'unit'), (3, 4, 1, 2))
    >>> alone = build(1).run(20)
    >>> bool(np.array_equal(alone["W"].weights, ens.networks[1]["W"].weights))
    True
    """

    def __init__(self, networks: Sequence[Network]) -> None:
        if isinstance(networks, Network) or not hasattr(networks, "__iter__"):
            raise TypeError(f"networks must be a sequence of neurosim.Network; got {type(networks).__name__}")
        nets = list(networks)
        if not nets:
            raise ValueError("networks must hold at least one Network; got an empty sequence")
        for i, n in enumerate(nets):
            if not isinstance(n, Network):
                raise TypeError(f"networks[{i}] must be a neurosim.Network; got {type(n).__name__}")
        if len({id(n) for n in nets}) != len(nets):
            raise ValueError("networks must be distinct objects; the same Network appears twice")
        ref = _structure(nets[0])
        for i, n in enumerate(nets[1:], start=1):
            got = _structure(n)
            for (what, a), (_, b) in zip(ref, got):
                if a != b:
                    raise ValueError(f"networks[{i}] differs from networks[0] in its {what}: {b!r} vs {a!r}; "
                                     "an ensemble's members share one structure")
        _check_stores(nets)
        self.networks = nets

    def __len__(self) -> int:
        return len(self.networks)

    def __repr__(self) -> str:
        return f"Ensemble({len(self)} x {self.networks[0].name!r})"

    def run(self, steps: int, backend: str = "cpu", threads: int | None = None,
            precision: str = "float64") -> Ensemble:
        """Advance every member ``steps`` steps.

        A member that fails (e.g. :class:`~neurosim.SimulationDiverged`)
        stops where its own run would have; the others still run. The first
        failure (by member index) is raised after all have finished, with
        ``member`` (its index) set on the exception.

        Parameters
        ----------
        steps : int >= 0
            Steps to run every member.
        backend : {"cpu", "cuda"}
            Threads of this process, or one GPU (the ``cuda`` extra; the dense
            rate family of paper 002 only).
        threads : int >= 1, optional
            CPU threads (default :func:`neurosim.max_threads`); each runs
            whole members on one numba and BLAS thread.
        precision : {"float64", "float32"}
            GPU arithmetic (``backend="cuda"`` only).

        Returns
        -------
        Ensemble
            This ensemble.

        Raises
        ------
        Exception
            The first member's failure, with ``member`` set.
        ValueError
            If an argument is out of range.
        """
        steps = check_int("steps", steps, low=0)
        backend = check_choice("backend", backend, {"cpu", "cuda"})
        precision = check_choice("precision", precision, {"float64", "float32"})
        if precision != "float64" and backend != "cuda":
            raise ValueError(f"precision={precision!r} needs backend='cuda'; the CPU runs in float64")
        if backend == "cuda":
            from neurosim.cuda.ensemble import run_ensemble_on_gpu

            run_ensemble_on_gpu(self.networks, steps, precision)
            return self
        from neurosim.threads import _check, max_threads

        threads = max_threads() if threads is None else _check(threads, "threads")
        errors = {}

        def one(i):
            import numba

            numba.set_num_threads(1)  # per Python thread: this member's kernels stay serial
            try:
                self.networks[i].run(steps)
            except Exception as err:  # noqa: BLE001 -- reported after the others finished
                errors[i] = err

        try:
            from threadpoolctl import threadpool_limits
        except ImportError:  # pragma: no cover
            limits = contextlib.nullcontext()
        else:
            limits = threadpool_limits(limits=1, user_api="blas")
        with limits:
            if threads == 1:
                for i in range(len(self)):
                    one(i)
            else:
                with concurrent.futures.ThreadPoolExecutor(max_workers=threads) as pool:
                    list(pool.map(one, range(len(self))))
        if errors:
            first = min(errors)
            err = errors[first]
            err.member = first
            raise err
        return self

    def recording(self, target: str, variable: str = "activity") -> xr.DataArray:
        """One recorded variable of every member, stacked along a new ``network`` dimension.

        Reads the first recorder of each member that records ``variable`` of
        the population or projection named ``target``.

        Parameters
        ----------
        target : str
            Name of the recorded population or projection.
        variable : str, optional
            The recorded variable.

        Returns
        -------
        xarray.DataArray
            Dims ``network`` (the member's index) then the recording's own.

        Raises
        ------
        ValueError
            A member records no such variable, or its recording is not
            sampled as the first member's: another ``every``, ``time_dim``,
            time step ``dt``, step counter ``t`` or other recorded steps
            (stacking them would pad with NaN where the steps do not meet);
            the message names the member and what differs.
        """
        recs = []
        for i, net in enumerate(self.networks):
            found = [r for r in net.recorders.values() if r.target.name == target and variable in r.variables]
            if not found:
                raise ValueError(f"networks[{i}] records no {variable!r} of {target!r}")
            recs.append(found[0])
        ref_net, ref = self.networks[0], recs[0]
        datasets: list[xr.Dataset] = []
        for i, (net, rec) in enumerate(zip(self.networks, recs)):
            diffs = [f"{what} {mine!r} (networks[0]: {theirs!r})" for what, mine, theirs in (
                ("every", rec.every, ref.every), ("time_dim", rec.time_dim, ref.time_dim),
                ("dt", net.dt, ref_net.dt), ("t (steps run)", net.t, ref_net.t)) if mine != theirs]
            ds = rec.to_dataset()
            if not diffs and not np.array_equal(ds[rec.time_dim].values, datasets[0][ref.time_dim].values if datasets
                                                else ds[rec.time_dim].values):
                times = ds[rec.time_dim].values
                diffs.append(f"recorded steps ({times.size} samples from {times[:1].tolist()} to "
                             f"{times[-1:].tolist()}; networks[0]: {datasets[0][ref.time_dim].size} samples)")
            if diffs:
                raise ValueError(f"networks[{i}]'s recording of {variable!r} of {target!r} (recorder {rec.name!r}) "
                                 f"differs from networks[0]'s in {', '.join(diffs)}; Ensemble.recording stacks "
                                 "members sampled at the same steps (record them alike and run them together)")
            datasets.append(ds)
        arrays = [ds[variable] for ds in datasets]
        return xr.concat(arrays, dim="network").assign_coords(network=np.arange(len(arrays)))
