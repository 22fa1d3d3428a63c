"""Recordings of a sparse projection's weights: one value per synapse, named by its two units' stable ids.

A :class:`~neurosim.recording.Recorder` of a sparse projection
(``Projection(connectivity=...)``) samples ``weights`` as they are stored,
one value per synapse, so its memory grows with the synapses and not with
``post x pre``. Each chunk of samples remembers the synapses it was taken on
(the stable ids of both ends of each, in synapse order) and the units alive;
a structural change (a link, an unlink, a birth or a death) starts a new
chunk. :meth:`Recorder.to_dataset <neurosim.recording.Recorder.to_dataset>`
gives one of two layouts, chosen as for units (``layout="auto"``: the first
unless it holds more than 4 times the values of the second):

* ``"dense"`` (keyed by synapse): ``weights(time, synapse)`` with the
  coordinates ``post(synapse)`` and ``pre(synapse)``, the stable ids of each
  synapse's post and pre unit, over the union of the synapses ever recorded
  (sorted by post id, then pre id; NaN where a synapse did not exist at a
  sample). While the synapses stay the same this is exactly the
  projection's weights, in its synapse order, sample by sample.
  Multapses (several synapses between one pair) repeat a pair and add the
  coordinate ``multapse(synapse)`` (0 for a pair's first synapse).
* ``"slots"``: ``weights(time, synapse_slot)``, each sample's synapses in
  the first slots in synapse order, NaN after them, with the coordinates
  ``post_id(time, synapse_slot)`` and ``pre_id(time, synapse_slot)`` (-1 for
  an empty slot). Its size is the samples times the most synapses at any
  sample, whatever the turnover (what a zarr store streams).

Both also say which units were alive at each sample (a unit may be alive
without synapses): the dense layout with the dims ``unit`` and ``pre_unit``
(every id seen) and the boolean coordinates ``unit_alive(time, unit)`` and
``pre_unit_alive(time, pre_unit)``; the slot layout with
``unit_id(time, slot)`` and ``pre_unit_id(time, pre_slot)``, as the slot
layout of units has them. :func:`synapses_to_dense` and
:func:`synapses_to_scipy` turn one sample of either layout into the
projection's matrix at that step (``Projection.to_dense()`` /
``Projection.to_scipy()`` then, bit for bit).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from neurosim._lazy import lazy_module

if TYPE_CHECKING:
    import scipy.sparse
    import xarray as xr

    from neurosim.synapses import Projection
else:
    xr = lazy_module("xarray")  # imported on first use (neurosim/_lazy.py)

__all__ = ["synapses_to_dense", "synapses_to_scipy", "synapse_slots_to_dense"]

#: names a recording of synapses uses besides the time dim (a time_dim must differ from them)
SYNAPSE_NAMES = ("synapse", "synapse_slot", "post", "pre", "multapse", "post_id", "pre_id", "unit_alive",
                 "pre_unit_alive")


def synapse_ids(projection: Projection) -> tuple[np.ndarray, ...]:
    """What a chunk of samples of a sparse projection is taken on.

    Parameters
    ----------
    projection : neurosim.Projection
        A sparse projection.

    Returns
    -------
    tuple of numpy.ndarray
        ``(post unit ids, pre unit ids, post id of each synapse, pre id of
        each synapse)``, the last two in synapse order.
    """
    post, pre = projection.synapses()
    return projection.post.ids.copy(), projection.pre.ids.copy(), post, pre


def _ordinals(post: np.ndarray, pre: np.ndarray) -> np.ndarray:
    """Each synapse's rank among the synapses of its pair (pairs of one row lie next to each other)."""
    n = post.size
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    start = np.ones(n, dtype=bool)
    start[1:] = (post[1:] != post[:-1]) | (pre[1:] != pre[:-1])
    first = np.maximum.accumulate(np.where(start, np.arange(n), 0))
    return np.arange(n) - first


def synapse_cells(chunks: list, layout: str) -> int:
    """Values per variable of :func:`synapse_dataset` in ``layout`` (samples times synapses).

    Parameters
    ----------
    chunks : list of tuple
        ``(times, ids, data)`` as a recorder keeps them (``ids`` from :func:`synapse_ids`).
    layout : {"dense", "slots"}
        The layout to size.

    Returns
    -------
    int
    """
    n_time = sum(c[0].size for c in chunks)
    if layout == "slots":
        return n_time * max([c[1][2].size for c in chunks], default=0)
    return n_time * _union(chunks)[0].shape[0]


def _union(chunks: list) -> tuple[np.ndarray, list]:
    """The union of the chunks' synapse keys ``(post, pre, multapse)`` (sorted) and each chunk's columns in it.

    A chunk's synapses are in synapse order, which is increasing ``(post id,
    pre id)`` (units keep their positions in id order), so chunks taken on
    the same synapses -- the whole recording, while the structure does not
    change -- need no sort.
    """
    if not chunks:
        return np.zeros((0, 3), dtype=np.int64), []
    first = chunks[0][1]
    if all(c[1] is first or (c[1][2].shape == first[2].shape and np.array_equal(c[1][2], first[2])
                             and np.array_equal(c[1][3], first[3])) for c in chunks[1:]):
        keys = np.column_stack([first[2], first[3], _ordinals(first[2], first[3])]).astype(np.int64)
        columns = np.arange(keys.shape[0])
        return keys, [columns] * len(chunks)
    keys = np.concatenate([np.column_stack([c[1][2], c[1][3], _ordinals(c[1][2], c[1][3])]).astype(np.int64)
                           for c in chunks])
    order = np.lexsort((keys[:, 2], keys[:, 1], keys[:, 0]))
    ranked = keys[order]
    new = np.ones(ranked.shape[0], dtype=bool)
    new[1:] = np.any(ranked[1:] != ranked[:-1], axis=1)
    inverse = np.empty(keys.shape[0], dtype=np.int64)
    inverse[order] = np.cumsum(new) - 1
    bounds = np.cumsum([0] + [c[1][2].size for c in chunks])
    return ranked[new], [inverse[bounds[i]:bounds[i + 1]] for i in range(len(chunks))]


def synapse_dataset(chunks: list, variables: list, attrs: dict, tdim: str, layout: str) -> xr.Dataset:
    """The recorded samples of a sparse projection in ``layout`` (without time coordinate values and attributes).

    Parameters
    ----------
    chunks : list of tuple
        ``(times, ids, data)``: the steps of a chunk's samples, its
        :func:`synapse_ids`, and ``{variable: (samples, synapses)}``.
    variables : list of str
        The recorded variables.
    attrs : dict
        ``{variable: attributes}``.
    tdim : str
        The time dimension's name.
    layout : {"dense", "slots"}
        See the module's documentation.

    Returns
    -------
    xarray.Dataset
    """
    n_time = sum(c[0].size for c in chunks)
    rows = np.cumsum([0] + [c[0].size for c in chunks])
    coords: dict[str, Any] = {}
    data_vars = {}
    if layout == "slots":
        width = max([c[1][2].size for c in chunks], default=0)
        for v in variables:
            out = np.full((n_time, width), np.nan)
            for k, (_, ids, data) in enumerate(chunks):
                out[rows[k]:rows[k + 1], : ids[2].size] = data[v]
            data_vars[v] = ((tdim, "synapse_slot"), out, attrs[v])
        for name, dim, which in (("unit_id", "slot", 0), ("pre_unit_id", "pre_slot", 1),
                                 ("post_id", "synapse_slot", 2), ("pre_id", "synapse_slot", 3)):
            at = np.full((n_time, max([c[1][which].size for c in chunks], default=0)), -1, dtype=np.int64)
            for k, (_, ids, _) in enumerate(chunks):
                at[rows[k]:rows[k + 1], : ids[which].size] = ids[which]
            coords[name] = ((tdim, dim), at)
        ds = xr.Dataset(data_vars, coords=coords)
        ds["post_id"].attrs["long_name"] = "stable id of the post unit of the synapse in each slot (-1: empty)"
        ds["pre_id"].attrs["long_name"] = "stable id of the pre unit of the synapse in each slot (-1: empty)"
        ds["unit_id"].attrs["long_name"] = "stable id of the post unit alive in each slot (-1: empty)"
        return ds
    union, columns = _union(chunks)
    for v in variables:
        out = np.full((n_time, union.shape[0]), np.nan)
        for k, (_, _, data) in enumerate(chunks):
            out[rows[k]:rows[k + 1], columns[k]] = data[v]
        data_vars[v] = ((tdim, "synapse"), out, attrs[v])
    coords["post"] = ("synapse", union[:, 0], {"long_name": "stable id of the synapse's post unit"})
    coords["pre"] = ("synapse", union[:, 1], {"long_name": "stable id of the synapse's pre unit"})
    if union.shape[0] and union[:, 2].max() > 0:
        coords["multapse"] = ("synapse", union[:, 2], {"long_name": "rank of the synapse among its pair's"})
    for dim, which in (("unit", 0), ("pre_unit", 1)):
        ids = np.unique(np.concatenate([c[1][which] for c in chunks])) if chunks else np.zeros(0, dtype=np.int64)
        alive = np.zeros((n_time, ids.size), dtype=bool)
        for k, c in enumerate(chunks):
            alive[rows[k]:rows[k + 1], np.searchsorted(ids, c[1][which])] = True
        coords[dim] = (dim, ids, {"long_name": f"stable {'post' if which == 0 else 'pre'} unit id"})
        coords[f"{dim}_alive"] = ((tdim, dim), alive, {"long_name": "whether the unit was alive at the sample"})
    return xr.Dataset(data_vars, coords=coords)


def _slot_chunks(ds: xr.Dataset, variables: list) -> tuple[str, list]:
    """``(time dim, chunks)`` of a slot-layout recording: runs of consecutive samples on the same synapses."""
    tdim = str(ds["post_id"].dims[0])
    cols = [np.asarray(ds[name].values) for name in ("unit_id", "pre_unit_id", "post_id", "pre_id")]
    values = {v: np.asarray(ds[v].values) for v in variables}
    times = np.asarray(ds[tdim].values)
    n_time = times.size
    chunks: list = []
    start = 0
    for t in range(1, n_time + 1):
        if t < n_time and all(np.array_equal(c[t], c[start]) for c in cols):
            continue
        ids = tuple(c[start][c[start] >= 0] for c in cols)
        n_syn = ids[2].size
        chunks.append((times[start:t], ids, {v: a[start:t, :n_syn] for v, a in values.items()}))
        start = t
    return tdim, chunks


def synapse_slots_to_dense(ds: xr.Dataset) -> xr.Dataset:
    """The dense (keyed by synapse) layout of a slot-layout recording of a sparse projection (e.g. a zarr store's).

    Parameters
    ----------
    ds : xarray.Dataset
        A recording with the ``synapse_slot`` dimension and the ``post_id``,
        ``pre_id``, ``unit_id`` and ``pre_unit_id`` coordinates.

    Returns
    -------
    xarray.Dataset
        Dims ``(time, synapse)``, ``unit`` and ``pre_unit`` (see the module's
        documentation); the other variables (the event log) and the
        attributes as they were, ``attrs["layout"] = "dense"``.

    Raises
    ------
    ValueError
        If ``ds`` is not such a recording.
    """
    missing = [n for n in ("post_id", "pre_id", "unit_id", "pre_unit_id") if n not in ds.variables]
    if "synapse_slot" not in ds.dims or missing:
        raise ValueError(f"not a slot-layout recording of a sparse projection (dim 'synapse_slot' and the coordinates "
                         f"post_id, pre_id, unit_id, pre_unit_id); missing: {missing or ['synapse_slot']}")
    variables = [v for v in ds.data_vars if "synapse_slot" in ds[v].dims]
    tdim, chunks = _slot_chunks(ds, variables)
    out = synapse_dataset(chunks, variables, {v: dict(ds[v].attrs) for v in variables}, tdim, "dense")
    out = out.assign_coords({name: ds[name] for name in ds.coords if ds[name].dims and ds[name].dims[0] == tdim
                             and len(ds[name].dims) == 1})
    for name, var in ds.data_vars.items():
        if name not in variables:
            out[name] = var
    out.attrs = dict(ds.attrs)
    out.attrs["layout"] = "dense"
    return out


def _one_sample(ds: xr.Dataset, time, variable: str):
    """``(values, post ids, pre ids, alive post ids, alive pre ids, the sample as a Dataset)`` of one sample."""
    if not isinstance(ds, xr.Dataset):
        raise TypeError(f"ds must be the xarray.Dataset of a recording of a sparse projection (it says which units "
                        f"were alive); got {type(ds).__name__}")
    if variable not in ds.data_vars:
        raise ValueError(f"variable {variable!r} is not in the recording; it holds {sorted(map(str, ds.data_vars))}")
    var = ds[variable]
    dense = "synapse" in var.dims
    if not dense and "synapse_slot" not in var.dims:
        raise ValueError(f"{variable!r} is not a recording of a sparse projection's synapses (dims {var.dims}; "
                         "expected 'synapse' or 'synapse_slot')")
    if var.ndim == 2:
        tdim = var.dims[0]
        if time is None:
            if var.shape[0] != 1:
                raise ValueError(f"time must name one of the recording's {var.shape[0]} samples (a value of its "
                                 f"{tdim!r} coordinate); got None")
            ds = ds.isel({tdim: 0})
        else:
            try:
                ds = ds.sel({tdim: time})
            except KeyError:
                raise ValueError(f"time={time!r} is not a sample of the recording; {tdim} holds "
                                 f"{ds[tdim].values[:5].tolist()}...") from None
            if ds[variable].ndim != 1:
                raise ValueError(f"time must name one sample; time={time!r} names {ds[variable].shape[0]}")
    values = np.asarray(ds[variable].values)
    if dense:
        there = ~np.isnan(values)
        post, pre = np.asarray(ds["post"].values)[there], np.asarray(ds["pre"].values)[there]
        alive_post = np.asarray(ds["unit"].values)[np.asarray(ds["unit_alive"].values)]
        alive_pre = np.asarray(ds["pre_unit"].values)[np.asarray(ds["pre_unit_alive"].values)]
        values = values[there]
    else:
        post_id = np.asarray(ds["post_id"].values)
        there = post_id >= 0
        post, pre, values = post_id[there], np.asarray(ds["pre_id"].values)[there], values[there]
        unit_id, pre_unit_id = np.asarray(ds["unit_id"].values), np.asarray(ds["pre_unit_id"].values)
        alive_post, alive_pre = unit_id[unit_id >= 0], pre_unit_id[pre_unit_id >= 0]
    return values, post, pre, alive_post, alive_pre, ds


def _positions(values, post, pre, alive_post, alive_pre):
    """Rows, columns and the CSR row pointers of the synapses (in synapse order) among the units alive."""
    rows = np.searchsorted(alive_post, post)
    cols = np.searchsorted(alive_pre, pre)
    indptr = np.zeros(alive_post.size + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=alive_post.size), out=indptr[1:])
    return rows, cols, indptr


def synapses_to_dense(ds: xr.Dataset, time=None, variable: str = "weights") -> xr.DataArray:
    """One sample of a recorded sparse projection as its ``(post, pre)`` matrix, with stable ids as coordinates.

    The projection's :meth:`~neurosim.synapses.Projection.to_dense` at that
    step: rows and columns are the units alive then (in position order,
    i.e. increasing id), 0 where there was no synapse, multapses summed.

    Parameters
    ----------
    ds : xarray.Dataset
        A recorder's Dataset of a sparse projection (either layout), or one
        read from its zarr store.
    time : optional
        A value of the recording's time coordinate (as ``ds.sel`` takes it);
        may be omitted when ``ds`` holds one sample.
    variable : str, default="weights"
        The recorded variable.

    Returns
    -------
    xarray.DataArray
        Dims ``(unit, pre_unit)``: post and pre stable ids.

    Raises
    ------
    TypeError
        If ``ds`` is not a Dataset.
    ValueError
        If it is not a recording of a sparse projection, ``variable`` is not
        in it, or ``time`` names no single sample.

    Examples
    --------
    >>> import numpy as np
    >>> import neurosim as ns
    >>> from neurosim.recording import synapses_to_dense
    >>> net = ns.Network(seed=0)
    >>> x, y = ns.Population("x", 3), ns.Population("y", 2, dynamics=ns.Linear())
    >>> W = ns.Projection("W", x, y, connectivity=ns.FromIndices([0, 1], [2, 0]), init=ns.Constant(0.5))
    >>> _ = net.add(x, y, W)
    >>> _ = net.connect(ns.GaussianStream(np.ones(3), seed=1), x)
    >>> rec = net.record(W, "weights")
    >>> _ = net.run(2)
    >>> ds = rec.to_dataset()
    >>> ds.weights.dims, ds.post.values.tolist(), ds.pre.values.tolist()
    (('time', 'synapse'), [0, 1], [2, 0])
    >>> synapses_to_dense(ds, time=2).values.tolist()
    [[0.0, 0.0, 0.5], [0.5, 0.0, 0.0]]
    """
    values, post, pre, alive_post, alive_pre, one = _one_sample(ds, time, variable)
    rows, cols, _ = _positions(values, post, pre, alive_post, alive_pre)
    out = np.zeros((alive_post.size, alive_pre.size))
    np.add.at(out, (rows, cols), values)
    coords = {"unit": alive_post, "pre_unit": alive_pre}
    coords.update({name: c for name, c in one.coords.items() if c.ndim == 0})
    return xr.DataArray(out, dims=("unit", "pre_unit"), coords=coords, name=variable, attrs=dict(one[variable].attrs))


def synapses_to_scipy(ds: xr.Dataset, time=None, variable: str = "weights") -> scipy.sparse.csr_array:
    """One sample of a recorded sparse projection as a ``scipy.sparse.csr_array`` of shape ``(post, pre)``.

    The projection's :meth:`~neurosim.synapses.Projection.to_scipy` at that
    step: rows and columns are the units alive then in position order
    (increasing stable id; :func:`synapses_to_dense` gives the ids as
    coordinates), every synapse a stored entry, multapses summed.

    Parameters
    ----------
    ds, time, variable
        As :func:`synapses_to_dense`: the recording (a sparse projection's,
        either layout, or read from its store), the sample's time (omitted
        for a single sample) and the variable (default ``"weights"``).

    Returns
    -------
    scipy.sparse.csr_array

    Raises
    ------
    TypeError
        If ``ds`` is not a Dataset.
    ValueError
        As :func:`synapses_to_dense`.
    """
    import scipy.sparse as sp

    values, post, pre, alive_post, alive_pre, _ = _one_sample(ds, time, variable)
    _, cols, indptr = _positions(values, post, pre, alive_post, alive_pre)
    out = sp.csr_array((np.array(values, dtype=np.float64), cols, indptr), shape=(alive_post.size, alive_pre.size))
    out.sum_duplicates()
    return out
