"""Spike trains from recorded activity: events with a ``spike`` dimension, firing rates, ISI statistics (issue 42).

A spiking population's activity is 1.0 in the steps its units spike, so a
recording of ``activity`` (``net.record(population, ["activity"])``) holds
its spike trains. :func:`spike_events` turns it into events: one entry per
spike along a ``spike`` dimension, with the unit's stable id (so births and
deaths keep their meaning), the step and the time. A spike recorded at step
``s`` happened in the step that ended there; Brian2 labels the same spike
with the step's start, ``(s - 1) dt``.
"""

from __future__ import annotations

import numpy as np
import xarray as xr

__all__ = ["spike_events", "firing_rates", "isi_cv"]


def _activity(data: xr.Dataset | xr.DataArray) -> tuple[xr.DataArray, xr.DataArray | None]:
    """The activity with its unit axis last, and the slot layout's ``unit_id(time, slot)`` (None when dense)."""
    unit_id = None
    if isinstance(data, xr.Dataset):
        if "activity" not in data:
            raise ValueError(f"the dataset has no 'activity' variable (it has {sorted(map(str, data.data_vars))}); "
                             "record the spiking population's activity")
        if "slot" in data["activity"].dims and "unit_id" in data:
            unit_id = data["unit_id"]
        data = data["activity"]
    axis = "slot" if unit_id is not None else "unit"
    if not isinstance(data, xr.DataArray) or axis not in data.dims or not ({"time", "step"} & set(data.coords)):
        raise ValueError("expected a recorded activity with 'time' (or 'step') and 'unit' dimensions (or a store's "
                         "slot layout: 'slot' and its 'unit_id')")
    return data, unit_id


def spike_events(data: xr.Dataset | xr.DataArray, batch: int = 0) -> xr.Dataset:
    """The spikes of a recorded activity as events.

    Parameters
    ----------
    data : xarray.Dataset or xarray.DataArray
        A recording of a spiking population's ``activity`` (1.0 where a
        unit spiked), dims ``(time, [batch,] unit)``, or a recording store
        read in its slot layout (:func:`neurosim.store.open_store`: dims
        ``(time, [batch,] slot)`` with ``unit_id(time, slot)``, the ids
        alive in each slot), so a long run streamed to disk with births
        and deaths is read without aligning its units first.
    batch : int, default=0
        Which batch row.

    Returns
    -------
    xarray.Dataset
        Dimension ``spike`` (in time order, then by unit), with variables
        ``unit`` (stable ids), ``step`` and, when the recording has times,
        ``time``; along dimension ``unit_id`` (every unit alive in some
        recorded sample, spiking or not), ``samples_alive``: the samples in
        which the unit was alive (all of them without births and deaths);
        attrs ``n_units`` (units recorded), ``steps`` and ``duration``
        (seconds, when the network had ``dt``).

    Raises
    ------
    ValueError
        When ``data`` is not a recorded activity, or holds values other
        than 0 and 1.

    Examples
    --------
    >>> import neurosim as ns
    >>> from neurosim.analysis.spikes import spike_events, firing_rates
    >>> net = ns.Network(dt=1e-4)
    >>> p = ns.Population("p", 2, dynamics=ns.LIF(v_rest=-0.04))
    >>> _ = net.add(p)
    >>> _ = net.record(p, ["activity"])
    >>> _ = net.run(1000)
    >>> ev = spike_events(net.recorders["p"].to_dataset())
    >>> ev.sizes["spike"], ev.unit.values[:2].tolist(), ev.step.values[:2].tolist()
    (10, [0, 1], [139, 139])
    """
    da, unit_id = _activity(data)
    if "batch" in da.dims:
        da = da.isel(batch=batch)
    axis = "unit" if unit_id is None else "slot"
    da = da.transpose(*[d for d in da.dims if d != axis], axis)
    # NaN: no unit alive there (a dense recording before a unit's birth or after its death, an empty slot)
    values = np.nan_to_num(da.values, nan=0.0, posinf=np.inf, neginf=-np.inf)
    if unit_id is not None:
        ids = unit_id.transpose(*da.dims).values
        values = np.where(ids >= 0, values, 0.0)
        alive_ids, samples_alive = np.unique(ids[ids >= 0], return_counts=True)
    else:
        alive = (~np.isnan(da.values)).sum(axis=0)
        alive_ids, samples_alive = da.unit.values[alive > 0], alive[alive > 0]
    if not np.isin(values, (0.0, 1.0)).all():
        raise ValueError("the activity holds values other than 0 and 1: not a spiking population's recording")
    t_idx, u_idx = np.nonzero(values)
    units = da.unit.values[u_idx] if unit_id is None else ids[t_idx, u_idx]
    coords = {"unit": ("spike", units)}
    steps = da.step.values if "step" in da.coords else np.arange(values.shape[0]) + 1
    coords["step"] = ("spike", steps[t_idx])
    n_units = values.shape[1] if unit_id is None else alive_ids.size
    attrs = {"n_units": int(n_units), "steps": int(values.shape[0])}
    if "time" in da.coords and np.issubdtype(da.time.dtype, np.timedelta64):
        seconds = da.time.values.astype("timedelta64[ns]").astype(np.int64) * 1e-9
        coords["time"] = ("spike", seconds[t_idx])
        if values.shape[0] > 1:
            dt = float(np.median(np.diff(seconds)))
            attrs["duration"] = dt * values.shape[0]
    ds = xr.Dataset({**coords, "samples_alive": ("unit_id", samples_alive.astype(np.int64))},
                    coords={"unit_id": alive_ids.astype(np.int64)}, attrs=attrs)
    ds["samples_alive"].attrs = {"long_name": "recorded samples in which the unit was alive"}
    ds["unit"].attrs = {"long_name": "stable id of the unit that spiked"}
    ds["step"].attrs = {"long_name": "step at whose end the spike was recorded"}
    if "time" in ds:
        ds["time"].attrs = {"units": "s", "long_name": "time at the end of the step of the spike"}
    return ds


def firing_rates(events: xr.Dataset, units=None) -> xr.DataArray:
    """Mean firing rate of each unit over the time it was alive in the recording, in Hz.

    A unit born or removed during the recording is counted over its own
    lifetime, not the whole recording's (``samples_alive``, from
    :func:`spike_events`), as a spike count over the time a neuron was
    recorded.

    Parameters
    ----------
    events : xarray.Dataset
        From :func:`spike_events` of a network with ``dt``.
    units : array_like of int, optional
        Stable ids to report (default: the units that spiked; pass the
        population's ids to include silent ones). A unit never alive in the
        recording has rate NaN.

    Returns
    -------
    xarray.DataArray
        Dimension ``unit``.
    """
    if "duration" not in events.attrs:
        raise ValueError("rates need the recording's duration: record a network with Network(dt=...)")
    ids = np.unique(events.unit.values) if units is None else np.asarray(units)
    counts = np.array([np.count_nonzero(events.unit.values == u) for u in ids], dtype=float)
    sample_seconds = events.attrs["duration"] / events.attrs["steps"]
    if "samples_alive" in events:  # (events made before it was kept: the whole recording)
        alive = events["samples_alive"].reindex(unit_id=ids, fill_value=0).values
        seconds = np.where(alive > 0, alive * sample_seconds, np.nan)
    else:
        seconds = np.full(ids.shape, events.attrs["duration"])
    return xr.DataArray(counts / seconds, dims="unit", coords={"unit": ids},
                        attrs={"units": "Hz", "long_name": "firing rate"})


def isi_cv(events: xr.Dataset, min_intervals: int = 2) -> xr.DataArray:
    """Coefficient of variation of each unit's inter-spike intervals (std / mean).

    Parameters
    ----------
    events : xarray.Dataset
        From :func:`spike_events`.
    min_intervals : int, default=2
        Units with fewer intervals are left out.

    Returns
    -------
    xarray.DataArray
        Dimension ``unit`` (the units with enough intervals).
    """
    units, cvs = [], []
    step = events.step.values
    for u in np.unique(events.unit.values):
        isi = np.diff(np.sort(step[events.unit.values == u])).astype(float)
        if isi.size >= min_intervals:
            units.append(u)
            cvs.append(isi.std() / isi.mean())
    return xr.DataArray(np.array(cvs), dims="unit", coords={"unit": np.array(units, dtype=np.int64)},
                        attrs={"long_name": "CV of the inter-spike intervals"})
