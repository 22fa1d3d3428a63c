"""Figures of recorded Datasets, matplotlib only.

Every function draws on a given :class:`matplotlib.axes.Axes` (or a new
figure when ``ax`` is None) and returns the axes (or the figure for
faceted plots), so scripts compose them. They read the Datasets that
recorders (:meth:`neurosim.Recorder.to_dataset`) and sweeps
(:class:`neurosim.Sweep`) produce:

* :func:`activity`: a time x unit heatmap; units absent at a time (not yet
  born, dead) are NaN and drawn as gaps;
* :func:`tiles`: weights or receptive fields as a grid of small images;
* :func:`plot_topographic_map`: a dictionary learned with a torus group
  family, each element drawn at its place on the torus;
* :func:`plot_tree_dictionary`: a dictionary learned with a tree group
  family, elements drawn as the nodes of the tree, coarse to fine;
* :func:`units_alive`: units alive over time with births and deaths, from
  the event log (``event_step``, ``event_kind``, ``event_population``);
* :func:`graph`: a growing network (GNG, GWR, a SOM's grid) drawn in input
  space over the data -- prototypes as points, edges as lines -- from the
  circuit or network itself, from arrays, or (:func:`graph_at`) from the
  recordings of its prototypes and its edges at a step;
* :func:`edge_counts`: edges linked and unlinked per step, from the event log;
* :func:`band`: a median and a quantile band over repeats (seeds);
* :func:`facet`: learning curves, one panel per value of a sweep dimension,
  a line per value of another, a band over seeds.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import ArrayLike

from neurosim._validation import check_array, check_int
from neurosim.analysis.receptive_fields import _patch_side  # one rule for the side of square patches

if TYPE_CHECKING:
    import xarray as xr
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from neurosim.groups import GroupStructure

__all__ = ["activity", "tiles", "plot_topographic_map", "plot_tree_dictionary", "tree_layout", "units_alive",
           "alive_counts", "graph", "graph_at", "edge_counts", "band", "facet", "raster"]


def _axes(ax, figsize=(6.0, 3.5)):
    if ax is not None:
        return ax
    import matplotlib.pyplot as plt

    return plt.subplots(figsize=figsize)[1]


def _time_dim(da) -> str:
    for d in ("time", "step", "t"):
        if d in da.dims:
            return d
    return da.dims[0]


def activity(ds: xr.Dataset | xr.DataArray, variable: str = "activity", batch: int = 0, ax: Axes | None = None,
             cmap: str = "viridis", **kwargs: Any) -> Axes:
    """Heatmap of ``ds[variable]`` (time x unit); NaN (units not alive) left blank.

    Parameters
    ----------
    ds : xarray.Dataset or DataArray
        A recording with a time dimension and ``unit`` (dense layout: units
        by stable id, NaN where a unit does not exist).
    variable : str
        The variable of a Dataset to draw.
    batch : int
        The sample of a batched recording to draw.
    ax : matplotlib.axes.Axes, optional
        Where to draw; default a new figure's axes.
    cmap : str, optional
        Matplotlib colormap name.
    **kwargs
        Passed to :meth:`matplotlib.axes.Axes.pcolormesh`.

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on (with a colorbar).
    """
    da = ds[variable] if hasattr(ds, "data_vars") else ds
    if "batch" in da.dims:
        da = da.isel(batch=batch)
    tdim = _time_dim(da)
    unit = "unit" if "unit" in da.dims else next(d for d in da.dims if d != tdim)
    da = da.transpose(unit, tdim)
    ax = _axes(ax)
    values = np.ma.masked_invalid(np.asarray(da.values, dtype=float))
    t, u = da[tdim].values, da[unit].values
    mesh = ax.pcolormesh(np.arange(t.size + 1), np.arange(u.size + 1), values, cmap=cmap, shading="flat", **kwargs)
    ax.set_xticks(_ticks(t.size), [str(t[i]) for i in _ticks(t.size)])
    ax.set_yticks(_ticks(u.size), [str(u[i]) for i in _ticks(u.size)])
    ax.set_xlabel(tdim)
    ax.set_ylabel(f"{unit} (id)")
    ax.figure.colorbar(mesh, ax=ax, label=da.name or variable)
    return ax


def raster(events: xr.Dataset, ax: Axes | None = None, color: Any = "k", size: float = 2.0) -> Axes:
    """A spike raster: one dot per spike, time (or step) against unit.

    Parameters
    ----------
    events : xarray.Dataset
        From :func:`neurosim.analysis.spike_events`.
    ax : matplotlib Axes, optional
        Where to draw (default: a new figure).
    color : color, default="k"
        The dots' colour.
    size : float, default=2.0
        Dot size (points squared).

    Returns
    -------
    matplotlib.axes.Axes
    """
    ax = _axes(ax)
    if "time" in events:
        ax.scatter(events.time.values * 1e3, events.unit.values, s=size, c=color, marker=".", linewidths=0)
        ax.set_xlabel("time (ms)")
    else:
        ax.scatter(events.step.values, events.unit.values, s=size, c=color, marker=".", linewidths=0)
        ax.set_xlabel("step")
    ax.set_ylabel("unit")
    return ax


def _ticks(n: int, most: int = 8) -> np.ndarray:
    return np.unique(np.linspace(0, n - 1, min(n, most)).round().astype(int)) if n else np.array([], int)


def tiles(weights: ArrayLike, shape: tuple[int, int] | None = None, ncols: int | None = None, ax: Axes | None = None,
          cmap: str = "gray", symmetric: bool = True) -> Axes:
    """Rows of ``weights`` (units x inputs) as a grid of ``shape`` images, each scaled to its own range.

    An all-zero or all-NaN row is drawn blank (a dead unit).

    Parameters
    ----------
    weights : array_like or xarray.DataArray, shape (units, inputs)
        One image per row.
    shape : tuple of int, optional
        ``(height, width)`` of an image; default the square the input size
        makes.
    ncols : int, optional
        Tiles per row of the grid; default about the square root of the
        number of units.
    ax : matplotlib.axes.Axes, optional
        Where to draw; default a new figure's axes.
    cmap : str, optional
        Matplotlib colormap name.
    symmetric : bool, optional
        Scale each tile by its largest absolute value (0 at mid-colour);
        ``False``: stretch its range to the colormap.

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on.

    Raises
    ------
    ValueError
        If ``weights`` is not 2-D or ``shape`` does not hold a row.
    """
    W = np.asarray(getattr(weights, "values", weights), dtype=float)
    if W.ndim != 2:
        raise ValueError(f"weights must be 2-D (units x inputs); got shape {W.shape}")
    n, m = W.shape
    if shape is None:
        side = int(round(np.sqrt(m)))
        if side * side != m:
            raise ValueError(f"shape is needed: {m} inputs are not a square image")
        shape = (side, side)
    if shape[0] * shape[1] != m:
        raise ValueError(f"shape {shape} does not hold {m} inputs")
    ncols = ncols or int(np.ceil(np.sqrt(max(n, 1))))
    nrows = int(np.ceil(n / ncols)) if n else 1
    h, w = shape
    canvas = np.full((nrows * (h + 1) + 1, ncols * (w + 1) + 1), np.nan)
    for i in range(n):
        row = W[i]
        if not np.isfinite(row).any() or not np.any(row[np.isfinite(row)]):
            continue
        scale = np.nanmax(np.abs(row))
        img = row.reshape(shape) / scale if symmetric else (row.reshape(shape) - np.nanmin(row)) / np.ptp(row) * 2 - 1
        r, c = divmod(i, ncols)
        canvas[1 + r * (h + 1):1 + r * (h + 1) + h, 1 + c * (w + 1):1 + c * (w + 1) + w] = img
    ax = _axes(ax, figsize=(0.5 * ncols + 1, 0.5 * nrows + 1))
    ax.imshow(np.ma.masked_invalid(canvas), cmap=cmap, vmin=-1, vmax=1, interpolation="nearest")
    ax.set_xticks([])
    ax.set_yticks([])
    return ax


def plot_topographic_map(W: ArrayLike, shape: tuple[int, int] | GroupStructure, patch_size: int | None = None,
                         ax: Axes | None = None, cmap: str = "gray") -> Axes:
    """A topographic dictionary: element ``j`` drawn at ``(j // cols, j % cols)`` of its torus.

    The layout of :meth:`neurosim.groups.GroupStructure.torus` (paper 003's
    topographic experiments): neighbouring tiles are neighbours on the torus
    (the left and right edges, and the top and bottom, are neighbours too).

    Parameters
    ----------
    W : array_like, shape (rows*cols, patch_size**2)
        Dictionary, atoms as rows.
    shape : (int, int) or GroupStructure
        The torus ``(rows, cols)``, or a torus group structure (its ``grid``).
    patch_size : int, optional
        Side of the square patches; inferred when the row length is a square.
    ax : matplotlib Axes, optional
        Where to draw; default a new figure's axes.
    cmap : str
        Matplotlib colormap name.

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on.
    """
    grid: Any = getattr(shape, "grid", shape)  # a pair, or a GroupStructure's grid
    if grid is None or isinstance(grid, (str, bytes)) or not hasattr(grid, "__len__") or len(grid) != 2:
        raise TypeError(f"shape must be a pair (rows, cols) or a torus GroupStructure; got {shape!r}")
    rows, cols = check_int("rows", grid[0], low=1), check_int("cols", grid[1], low=1)
    W = check_array("W", W, ndim=2, shape=(rows * cols, None))
    p = _patch_side(W.shape[1], patch_size)
    return tiles(W, (p, p), ncols=cols, ax=ax, cmap=cmap)


def tree_layout(parent: ArrayLike) -> tuple[np.ndarray, np.ndarray]:
    """Positions of the nodes of a rooted forest for drawing: ``(x, depth)``.

    Leaves take consecutive ``x`` in depth-first order (children in index
    order, trees in root order); a parent sits at the mean ``x`` of its
    children, so subtrees never overlap. ``depth`` is 0 at a root.

    Parameters
    ----------
    parent : array_like of int, shape (n,)
        ``parent[j]`` is ``j``'s parent, -1 for a root; must describe a
        forest (no cycles).

    Returns
    -------
    x : numpy.ndarray of float, shape (n,)
        Horizontal positions.
    depth : numpy.ndarray of int64, shape (n,)
        Levels, 0 at the roots.

    Raises
    ------
    ValueError
        If ``parent`` is not a forest.

    Examples
    --------
    >>> from neurosim.plot import tree_layout
    >>> x, depth = tree_layout([-1, 0, 0])
    >>> x.tolist(), depth.tolist()
    ([0.5, 0.0, 1.0], [0, 1, 1])
    """
    par = np.asarray(parent)
    if par.ndim != 1 or par.size == 0 or not (np.issubdtype(par.dtype, np.integer)):
        raise ValueError(f"parent must be a non-empty 1-D integer array; got {par.dtype} of shape {par.shape}")
    n = par.size
    if np.any((par < -1) | (par >= n)) or np.any(par == np.arange(n)):
        raise ValueError(f"parent entries must be -1 (root) or another node in [0, {n - 1}]")
    children: list[list[int]] = [[] for _ in range(n)]
    for j, p in enumerate(par):
        if p >= 0:
            children[p].append(j)
    x, depth = np.full(n, np.nan), np.full(n, -1, dtype=np.int64)
    nxt = 0
    # iterative post-order walk: a deep tree must not hit Python's recursion limit
    for root in np.flatnonzero(par == -1):
        depth[root] = 0
        stack = [(int(root), False)]
        while stack:
            j, done = stack.pop()
            if done:
                x[j] = np.mean(x[children[j]]) if children[j] else nxt
                nxt += 0 if children[j] else 1
                continue
            stack.append((j, True))
            for c in reversed(children[j]):
                depth[c] = depth[j] + 1
                stack.append((c, False))
    if np.any(depth < 0):
        raise ValueError("parent must describe a forest: some nodes are on a cycle (reach no root)")
    return x, depth


def plot_tree_dictionary(W: ArrayLike, parent: ArrayLike, patch_size: int | None = None, ax: Axes | None = None,
                         cmap: str = "gray") -> Axes:
    """A hierarchical dictionary drawn as its tree: the root on top, coarse to fine.

    Element ``j`` is drawn as a ``patch_size x patch_size`` tile at the
    position of node ``j`` (:func:`tree_layout`: one row per depth, each
    parent centred over its children) with a line to its parent; paper 003's
    hierarchical family (:meth:`neurosim.groups.GroupStructure.tree`) lets
    an element be active only with its ancestors, so the upper rows hold the
    general (coarse) elements and the lower rows their refinements. Each
    tile is scaled to its own largest absolute value, 0 mid-grey.

    Parameters
    ----------
    W : array_like, shape (n, patch_size**2)
        Dictionary, atoms as rows.
    parent : array_like of int, shape (n,)
        Parent of each element, -1 for a root (``GroupStructure.parent``).
    patch_size, ax, cmap : optional
        As :func:`plot_topographic_map`: the patches' side (inferred from a
        square row length), the axes to draw on (default a new figure's) and
        the colormap.

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on.
    """
    W = check_array("W", W, ndim=2)
    if W.shape[0] < 1:
        raise ValueError("W must hold at least one element (row)")
    p = _patch_side(W.shape[1], patch_size)
    par = np.asarray(parent)
    if par.shape != (W.shape[0],):
        raise ValueError(f"parent must have one entry per row of W ({W.shape[0]}); got shape {par.shape}")
    x, depth = tree_layout(par)
    width, levels = int(np.nanmax(x)) + 1, int(depth.max()) + 1
    ax = _axes(ax, figsize=(min(0.6 * width + 1, 40.0), 0.8 * levels + 1))
    half = 0.4
    for j in range(W.shape[0]):
        if par[j] >= 0:
            ax.plot([x[par[j]], x[j]], [depth[par[j]] + half, depth[j] - half], color="0.6", lw=0.6, zorder=0)
        tile = W[j].reshape(p, p)
        scale = np.abs(tile).max()
        ax.imshow(tile / scale if scale > 0 else tile, cmap=cmap, vmin=-1, vmax=1, interpolation="nearest",
                  extent=(x[j] - half, x[j] + half, depth[j] + half, depth[j] - half), zorder=1)
    ax.set_xlim(-0.6, width - 0.4)
    ax.set_ylim(levels - 0.4, -0.6)  # depth grows downwards: the root on top
    ax.set_aspect("equal")
    ax.set_xticks([])
    ax.set_yticks(np.arange(levels), [str(d) for d in range(levels)])
    ax.set_ylabel("depth")
    return ax


def alive_counts(ds: xr.Dataset, initial: int, steps: ArrayLike | None = None,
                 population: str | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Units alive after each step and births/deaths per step, from a Dataset's event log.

    Parameters
    ----------
    ds : xarray.Dataset
        Holds ``event_step``, ``event_kind`` and ``event_population`` (a
        recording or one run of a sweep; padding rows with ``event_step < 0``
        are ignored). A recording in which no unit was born or killed has
        none of them: no events.
    initial : int
        Units alive before step 1.
    steps : array of int, optional
        The steps to report (default: 1 .. the last event step).
    population : str, optional
        Count only this population's events.

    Returns
    -------
    steps, alive, births, deaths : numpy arrays
        The steps, units alive after each, births and deaths at each.
    """
    if "event_step" not in ds:
        step, kind, pop = np.zeros(0, dtype=np.int64), np.zeros(0, dtype=str), np.zeros(0, dtype=str)
    else:
        step = np.asarray(ds["event_step"].values).astype(np.int64).ravel()
        kind = np.asarray(ds["event_kind"].values).astype(str).ravel()
        pop = np.asarray(ds["event_population"].values).astype(str).ravel()
    keep = step >= 0
    if population is not None:
        keep &= pop == population
    steps, (births, deaths), (born_by, dead_by) = _per_step(step[keep], kind[keep], ("birth", "death"), steps)
    return steps, initial + born_by - dead_by, births, deaths


def _per_step(step: np.ndarray, kind: np.ndarray, kinds: tuple[str, ...],
              steps: ArrayLike | None) -> tuple[np.ndarray, list[np.ndarray], list[np.ndarray]]:
    """``steps, at, by``: for each of ``kinds``, the events ``(step, kind)`` of that kind at each of ``steps`` and
    up to it (so sparse step lists still give the right totals); ``steps`` default ``1 .. the last event step``."""
    if steps is None:
        steps = np.arange(1, (step.max() if step.size else 0) + 1)
    steps = np.asarray(steps, dtype=np.int64)
    at = [np.array([np.sum((step == s) & (kind == k)) for s in steps], dtype=np.int64) for k in kinds]
    by = [np.array([np.sum((step <= s) & (kind == k)) for s in steps], dtype=np.int64) for k in kinds]
    return steps, at, by


def units_alive(ds: xr.Dataset, initial: int, steps: ArrayLike | None = None, population: str | None = None,
                ax: Axes | None = None, label: str | None = None) -> Axes:
    """Units alive over time (line) with births (up) and deaths (down) per step as bars; see :func:`alive_counts`.

    Parameters
    ----------
    ds : xarray.Dataset
        Holds the event log (``event_step``, ``event_kind``, ``event_population``).
    initial : int
        Units alive before step 1.
    steps : array of int, optional
        The steps to draw (default: 1 .. the last event step).
    population : str, optional
        Count only this population's events.
    ax : matplotlib.axes.Axes, optional
        Where to draw; default a new figure's axes.
    label : str, optional
        Legend label of the line (default ``"units alive"``).

    Returns
    -------
    matplotlib.axes.Axes
        The axes of the line (the bars are on a twin axis).
    """
    steps, alive, births, deaths = alive_counts(ds, initial, steps, population)
    ax = _axes(ax)
    ax.step(steps, alive, where="post", color="k", label=label or "units alive")
    ax.set_xlabel("step")
    ax.set_ylabel("units alive")
    if births.any() or deaths.any():
        ev = ax.twinx()
        ev.bar(steps, births, color="tab:green", alpha=0.5, width=1.0, label="births")
        ev.bar(steps, -deaths, color="tab:red", alpha=0.5, width=1.0, label="deaths")
        ev.set_ylabel("births / deaths per step")
        ev.axhline(0, color="0.5", lw=0.5)
    return ax


def graph(prototypes: Any, adjacency: ArrayLike | None = None, data: ArrayLike | None = None, ax: Axes | None = None,
          dims: tuple[int, int] = (0, 1), color: Any = "tab:red", data_color: Any = "0.8") -> Axes:
    """A network drawn in input space: each unit at its prototype, each edge a line between two units.

    ``graph(circuit, data=X)`` draws a circuit of
    :mod:`neurosim.models.self_organizing` (Growing Neural Gas, Grow When
    Required: their edges; a SOM or Neural Gas: its units) or a
    :class:`~neurosim.Network` with one competitive population as it is now;
    ``graph(P, A)`` draws prototypes and an adjacency matrix given as arrays.

    Parameters
    ----------
    prototypes : array (units, dim), circuit or Network
        Rows of the prototype projection's weights (NaN rows, units absent
        from a recording, are skipped). Or a circuit with ``prototypes``
        (and ``edges``) projections, as ``build_gng``, ``build_gwr``,
        ``build_som`` and ``build_neural_gas`` return; or a network whose one
        population with :class:`~neurosim.dynamics.competitive.BestMatchingUnit`
        dynamics has one feed-forward projection (the prototypes) and at most
        one lateral projection (the edges). A projection that says which
        synapses exist (sparse, or masked) has an edge between two units
        where either has a synapse from the other; an unmasked dense one
        where either weight is nonzero.
    adjacency : array (units, units), optional
        Nonzero where two units are linked (the edges projection's weights
        or mask); read above the diagonal. Required with an array of
        prototypes; with a circuit or network it replaces their edges (a
        SOM's grid, say).
    data : array (samples, dim), optional
        Drawn first, in light grey.
    ax : matplotlib.axes.Axes, optional
        Where to draw; default a new 4.5 x 4.5 inch figure.
    dims : (int, int)
        The two input coordinates drawn, each in ``[0, dim)``.
    color : matplotlib color, optional
        Colour of the units and edges.
    data_color : matplotlib color, optional
        Colour of ``data``.

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on: ``collections`` holds the data (if given), the
        edges (a ``LineCollection``, if there are any) and the units.

    Raises
    ------
    TypeError
        ``prototypes`` is none of the above, or an array without ``adjacency``.
    ValueError
        ``adjacency`` not square of the prototypes' count, ``dims`` outside
        ``[0, dim)``, or a network without exactly one competitive population
        with one prototype projection and at most one lateral projection.

    Examples
    --------
    >>> import numpy as np
    >>> from neurosim import plot
    >>> P = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0]])
    >>> A = np.array([[0, 1, 0], [1, 0, 1], [0, 1, 0]])
    >>> ax = plot.graph(P, A)
    >>> len(ax.collections[0].get_segments())  # edges 0-1 and 1-2
    2
    """
    if hasattr(prototypes, "network") or _is_network(prototypes):
        P, a, b = _graph_of(prototypes)
        if adjacency is not None:
            a, b = _adjacency_pairs(adjacency, P.shape[0])
    else:
        if isinstance(prototypes, (str, bytes)) or not hasattr(prototypes, "__len__"):
            raise TypeError(f"prototypes must be an array (units, dim), a circuit of neurosim.models.self_organizing or "
                            f"a Network; got {type(prototypes).__name__}")
        P = check_array("prototypes", prototypes, ndim=2, finite=False)
        if adjacency is None:
            raise TypeError("graph(prototypes, adjacency): with an array of prototypes give the adjacency "
                            "(units x units, nonzero where two units are linked), or pass the circuit or network "
                            "itself, whose edges are found")
        a, b = _adjacency_pairs(adjacency, P.shape[0])
    i, j = (check_int("dims[0]", dims[0], low=0, high=P.shape[1] - 1),
            check_int("dims[1]", dims[1], low=0, high=P.shape[1] - 1))
    ax = _axes(ax, figsize=(4.5, 4.5))
    if data is not None:
        D = check_array("data", data, ndim=2)
        ax.scatter(D[:, i], D[:, j], s=2, color=data_color, zorder=0)
    alive = np.all(np.isfinite(P), axis=1)
    keep = alive[a] & alive[b]
    a, b = a[keep], b[keep]
    if a.size:
        from matplotlib.collections import LineCollection

        segs = np.stack([P[a][:, [i, j]], P[b][:, [i, j]]], axis=1)
        ax.add_collection(LineCollection(list(segs), colors=color, linewidths=0.8, zorder=1))
    ax.scatter(P[alive, i], P[alive, j], s=10, color=color, zorder=2)
    ax.set_aspect("equal", adjustable="datalim")
    return ax


def _adjacency_pairs(adjacency: ArrayLike, n: int) -> tuple[np.ndarray, np.ndarray]:
    """``(a, b)``, ``a < b``, where an ``(n, n)`` adjacency is nonzero above the diagonal (NaN is no edge)."""
    A = check_array("adjacency", adjacency, shape=(n, n), finite=False)
    a, b = np.nonzero(np.triu(np.nan_to_num(A) != 0, 1))
    return a, b


def _is_network(obj: Any) -> bool:
    from neurosim.network import Network

    return isinstance(obj, Network)


def _graph_of(source: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The prototypes ``(units, dim)`` and the edges ``(a, b)``, ``a < b`` (rows), of a circuit or a network."""
    from neurosim.synapses import Projection

    prototypes, edges = getattr(source, "prototypes", None), getattr(source, "edges", None)
    if not isinstance(prototypes, Projection):  # a network, or a circuit without the handles
        prototypes, edges = _competitive_projections(source if _is_network(source) else source.network)
    # a sparse prototype projection (receptive fields) has 1-D weights: 0 outside a unit's field, as to_dense has it
    P = prototypes.to_dense() if prototypes.sparse else np.asarray(prototypes.weights, dtype=np.float64)
    if edges is None:
        return P, np.zeros(0, dtype=np.intp), np.zeros(0, dtype=np.intp)
    if not (isinstance(edges, Projection) and edges.lateral and edges.post is prototypes.post):
        raise ValueError(f"the edges must be a lateral projection of the prototypes' population "
                         f"{prototypes.post.name!r}; got {getattr(edges, 'name', edges)!r}")
    if edges.structured:  # its synapses are its edges (a GNG's are sparse, 1.0 each)
        post, pre = edges.synapse_index.pairs()
    else:
        post, pre = np.nonzero(np.asarray(edges.weights) != 0)
    pairs = np.unique(np.stack([np.minimum(post, pre), np.maximum(post, pre)], axis=1), axis=0)
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    return P, pairs[:, 0], pairs[:, 1]


def _competitive_projections(net: Any) -> tuple[Any, Any]:
    """The prototype projection and the lateral one (or None) of a network's one competitive population."""
    from neurosim.dynamics.competitive import BestMatchingUnit

    maps = [pop for pop in net.populations.values() if isinstance(pop.dynamics, BestMatchingUnit)]
    if len(maps) != 1:
        raise ValueError(f"graph(network) draws a network with one competitive population (BestMatchingUnit "
                         f"dynamics); {net.name!r} has {len(maps)}: {[p.name for p in maps]}. Pass the prototypes "
                         "and the adjacency as arrays instead")
    (pop,) = maps
    feedforward = [p for p in net.projections.values() if p.post is pop and not p.lateral]
    lateral = [p for p in net.projections.values() if p.post is pop and p.lateral]
    if len(feedforward) != 1 or len(lateral) > 1:
        raise ValueError(f"graph(network) needs one prototype projection onto {pop.name!r} and at most one lateral "
                         f"projection (the edges); got {[p.name for p in feedforward]} and {[p.name for p in lateral]}")
    return feedforward[0], (lateral[0] if lateral else None)


def graph_at(prototypes_ds: xr.Dataset, edges_ds: xr.Dataset, step: int = -1, data: ArrayLike | None = None,
             ax: Axes | None = None, **kwargs: Any) -> Axes:
    """:func:`graph` of one recorded sample: the Datasets of the prototypes' and the edges' ``weights``.

    The prototypes' recording must be in the dense layout (units by stable
    id; the default for a few hundred units); the edges may be a dense or
    masked projection's recording (dense layout) or a sparse one's (one
    value per synapse, either layout, :func:`neurosim.recording.synapses_to_dense`);
    both taken at the same steps.

    Parameters
    ----------
    prototypes_ds : xarray.Dataset
        The recording of the prototype projection's ``weights``.
    edges_ds : xarray.Dataset
        The recording of the edges projection's ``weights`` (lateral, unit x unit).
    step : int, optional
        Index of the sample along the time dimension (default -1, the last).
    data : array (samples, dim), optional
        Drawn first, in light grey.
    ax : matplotlib.axes.Axes, optional
        Where to draw.
    **kwargs
        Passed to :func:`graph` (``dims``, ``color``, ``data_color``).

    Returns
    -------
    matplotlib.axes.Axes
        The axes :func:`graph` drew on.

    Raises
    ------
    ValueError
        The edges recording is not lateral.
    """
    W = prototypes_ds["weights"]
    E = edges_ds["weights"]
    tdim = _time_dim(W)
    sample = W.isel({tdim: step})
    w = sample.values
    if "synapse" in E.dims or "synapse_slot" in E.dims:
        from neurosim.synapse_recording import synapses_to_dense

        edges = synapses_to_dense(edges_ds, time=sample[tdim].item())
        if not np.array_equal(edges["unit"].values, edges["pre_unit"].values):
            raise ValueError("the edges recording must be lateral (unit x unit)")
        # on the prototypes' unit axis (every id recorded), no edge where a unit was not alive
        e = edges.reindex(unit=W["unit"].values, pre_unit=W["unit"].values, fill_value=0.0).values
    else:
        e = E.isel({_time_dim(E): step}).values
        if "pre_unit" in E.dims and E.sizes["pre_unit"] != E.sizes["unit"]:
            raise ValueError("the edges recording must be lateral (unit x unit)")
    return graph(w, np.nan_to_num(e), data=data, ax=ax, **kwargs)


def edge_counts(ds: xr.Dataset, steps: ArrayLike | None = None,
                projection: str | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Edges linked and unlinked per step and edges existing after each step, from a Dataset's event log.

    Reads ``event_step``, ``event_kind`` and ``event_population`` (the
    projection's name for synapse events).

    Parameters
    ----------
    ds : xarray.Dataset
        A recording with the event log (``event_*`` variables).
    steps : array_like of int, optional
        The steps to count at; default ``1 .. last event step``.
    projection : str, optional
        Count only the events of the projection of this name; default all.

    Returns
    -------
    steps : ndarray of int64
        The steps counted at.
    existing : ndarray of int64
        Edges existing after each step (counted from 0 before step 1).
    linked, unlinked : ndarray of int64
        Edges linked and unlinked at each step.
    """
    step = np.asarray(ds["event_step"].values).astype(np.int64).ravel()
    kind = np.asarray(ds["event_kind"].values).astype(str).ravel()
    keep = (step >= 0) & np.isin(kind, ["link", "unlink"])
    if projection is not None:
        keep &= np.asarray(ds["event_population"].values).astype(str).ravel() == projection
    steps, (linked, unlinked), (linked_by, unlinked_by) = _per_step(step[keep], kind[keep], ("link", "unlink"), steps)
    return steps, linked_by - unlinked_by, linked, unlinked


def band(ax: Axes, x: ArrayLike, Y: ArrayLike, color: Any = None, quantiles: tuple[float, float] = (0.1, 0.9),
         label: str | None = None, **kwargs: Any) -> Axes:
    """Median of ``Y`` over its first axis (repeats) against ``x``, with the ``quantiles`` band shaded.

    Parameters
    ----------
    ax : matplotlib.axes.Axes
        Where to draw.
    x : array_like, shape (n,)
        Abscissae.
    Y : array_like, shape (repeats, n) or (n,)
        Values; NaN (a failed repeat) is ignored.
    color : matplotlib color, optional
        Line and band colour.
    quantiles : tuple of float, optional
        Lower and upper quantile of the band, in [0, 1].
    label : str, optional
        Legend label of the median line.
    **kwargs
        Passed to :meth:`matplotlib.axes.Axes.plot`.

    Returns
    -------
    matplotlib.axes.Axes
        ``ax``.
    """
    Y = np.asarray(Y, dtype=float)
    if Y.ndim == 1:
        Y = Y[None]
    with np.errstate(all="ignore"):
        import warnings

        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # all-NaN columns (e.g. a failed run) stay NaN
            mid = np.nanmedian(Y, axis=0)
            lo, hi = np.nanquantile(Y, quantiles[0], axis=0), np.nanquantile(Y, quantiles[1], axis=0)
    (line,) = ax.plot(x, mid, color=color, label=label, **kwargs)
    if Y.shape[0] > 1:
        ax.fill_between(x, lo, hi, color=line.get_color(), alpha=0.25, lw=0)
    return ax


def facet(da: xr.DataArray, x: str, col: str | None = None, hue: str | None = None, over: str = "seed",
          sharey: bool = True, ncols: int | None = None) -> Figure:
    """Learning curves: a panel per value of ``col``, a line per value of ``hue``, a band over ``over``.

    Parameters
    ----------
    da : xarray.DataArray
        Dimensions ``x``, and optionally ``col``, ``hue`` and ``over``; any
        other dimension must have been selected or reduced away.
    x, col, hue, over : str
        Dimension names.
    sharey : bool, optional
        Panels share the y axis.
    ncols : int, optional
        Panels per row (default up to 4).

    Returns
    -------
    matplotlib.figure.Figure
        Laid out by matplotlib's constrained layout at each draw, so a title
        added afterwards (``fig.suptitle(...)``) gets room of its own above
        the panels' titles.
    """
    import matplotlib.pyplot as plt

    dims = [d for d in (x, col, hue) if d is not None]
    if over in da.dims:
        dims.append(over)
    extra = [d for d in da.dims if d not in dims]
    if extra:
        raise ValueError(f"facet: select or reduce the dimensions {extra} first (plotting {dims})")
    cols = list(da[col].values) if col else [None]
    hues = list(da[hue].values) if hue else [None]
    ncols = ncols or min(len(cols), 4)
    nrows = int(np.ceil(len(cols) / ncols))
    # constrained, not tight_layout() once here: a suptitle the caller adds later would cover the panels' titles
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.0 * ncols, 3.0 * nrows), squeeze=False, sharey=sharey,
                             layout="constrained")
    for k, cv in enumerate(cols):
        ax = axes.flat[k]
        sub = da.sel({col: cv}) if col else da
        for hv in hues:
            line = sub.sel({hue: hv}) if hue else sub
            Y = line.transpose(over, x).values if over in line.dims else line.transpose(x).values[None]
            band(ax, da[x].values, Y, label=None if hv is None else f"{hue}={hv}")
        ax.set_title(f"{col}={cv}" if col else (da.name or ""), fontsize=9)
        ax.set_xlabel(x)
    for ax in axes.flat[len(cols):]:
        ax.set_visible(False)
    axes.flat[0].set_ylabel(da.name or "")
    if hue:
        axes.flat[0].legend(fontsize=7)
    return fig
