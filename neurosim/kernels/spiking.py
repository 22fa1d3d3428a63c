"""Numba kernels for spiking populations: leaky integrate-and-fire steps and spike transmission.

The arithmetic copies Brian2's generated code for the same equations
(expression trees, constants, order of updates), so that the same network
gives the same spikes bit for bit (``tests/spiking/``). Two rules hold for
every kernel here: no ``fastmath`` (no reassociation, no contraction into
fused multiply-adds), and every new value of a step is computed from the old
ones before any is written (Brian2's state updaters do the same).

All arrays are ``(batch, n)``: one row per independent sample.
"""

import math

from numba import njit

__all__ = ["lif_current_exact", "lif_current_euler", "lif_conductance_euler", "transmit_sparse", "transmit_fired", "transmit_dense", "transmit_delayed",
           "transmit_dense_delayed", "transmit_synapse_delays", "clip"]


@njit(cache=True, nogil=True, inline="always")
def _refractory(left):
    """One step of a unit's refractory countdown: ``(steps left, whether it integrates this step)``."""
    if left > 0.0:
        left -= 1.0
    return left, left <= 0.0


@njit(cache=True, nogil=True, inline="always")
def _fire(v, spikes, fired, countdown, b, i, k, vi, active, left, v_threshold, v_reset, refractory_steps):
    """Threshold, reset and refractoriness of unit ``i`` after its update ``vi``; returns the count of fired units."""
    if active and vi > v_threshold:
        spikes[b, i] = 1.0
        v[b, i] = v_reset
        left = refractory_steps
        fired[b, k] = i
        k += 1
    else:
        spikes[b, i] = 0.0
        v[b, i] = vi
    countdown[b, i] = left
    return k


@njit(cache=True, nogil=True, inline="always")
def _lif(form, v, ge, gi, countdown, spikes, fired, n_fired, c0, c1, c2, c3, c4, c5, v_threshold, v_reset,
         refractory_steps):
    """The LIF step of one of the three forms (``form``, a constant the kernels pass: 0 current-based exact,
    1 current-based Euler, 2 conductance-based Euler; numba keeps only its branch), with its constants
    ``c0..c5`` as the public kernels name them. One loop: integrate unless refractory, decay the synaptic
    variables, threshold/reset/refractoriness (:func:`_fire`), and test what it wrote for finiteness."""
    batch, n = v.shape
    bad = 0
    for b in range(batch):
        k = 0
        for i in range(n):
            left, active = _refractory(countdown[b, i])
            g_e = ge[b, i]
            g_i = gi[b, i]
            vi = v[b, i]
            if form == 0:
                if active:
                    vi = c0 + ((c1 * g_e + c2 * g_i) + c3 * vi)
                ge[b, i] = c4 * g_e
                gi[b, i] = c5 * g_i
            elif form == 1:
                if active:
                    vi = c1 * ((c0 + (g_e + g_i)) - vi) + vi
                ge[b, i] = c2 * g_e + g_e
                gi[b, i] = c3 * g_i + g_i
            else:
                if active:
                    vi = c3 * ((c0 + ((g_e * (c1 - vi)) + (g_i * (c2 - vi)))) - vi) + vi
                ge[b, i] = c4 * g_e + g_e
                gi[b, i] = c5 * g_i + g_i
            k = _fire(v, spikes, fired, countdown, b, i, k, vi, active, left, v_threshold, v_reset, refractory_steps)
            bad |= not (vi - vi == 0.0) or not (g_e - g_e == 0.0) or not (g_i - g_i == 0.0)
        n_fired[b] = k
    return bad == 0


@njit(cache=True, nogil=True)
def lif_current_exact(v, ge, gi, countdown, spikes, fired, n_fired, c0, c_ge, c_gi, c_v, a_ge, a_gi, v_threshold,
                      v_reset, refractory_steps):
    """One step of current-based LIF with exponential synaptic currents, integrated exactly.

    ``dv/dt = (ge + gi - (v - v_rest)) / tau_m`` (``v`` frozen while
    refractory), ``dge/dt = -ge / tau_e``, ``dgi/dt = -gi / tau_i``: the
    linear system's exact solution over one step, in Brian2's optimised form
    (``v' = c0 + ((c_ge ge + c_gi gi) + c_v v)``, ``ge' = a_ge ge``;
    constants from :func:`neurosim.dynamics.spiking.current_exact_constants`).
    Then the threshold ``v' > v_threshold`` (not while refractory), the reset
    ``v = v_reset`` and ``refractory_steps`` steps of refractoriness.

    Parameters
    ----------
    v, ge, gi : (batch, n) arrays, updated in place.
    countdown : (batch, n) array, refractory steps left (a unit that spiked
        ``k`` steps ago integrates again when ``k >= refractory_steps``).
    spikes : (batch, n) array, written: 1.0 where a unit spiked this step, else 0.0.
    fired : (batch, n) int array, written: the units that spiked, ascending, in its first ``n_fired[b]`` entries.
    n_fired : (batch,) int array, written.
    c0, c_ge, c_gi, c_v, a_ge, a_gi : float, the step's constants.
    v_threshold, v_reset : float.
    refractory_steps : float, a whole number of steps.

    Returns
    -------
    bool
        Whether every value written to ``v``, ``ge`` and ``gi`` is finite
        (tested as written, so a segment needs no separate pass over them).
    """
    return _lif(0, v, ge, gi, countdown, spikes, fired, n_fired, c0, c_ge, c_gi, c_v, a_ge, a_gi, v_threshold,
                v_reset, refractory_steps)


@njit(cache=True, nogil=True)
def lif_current_euler(v, ge, gi, countdown, spikes, fired, n_fired, v_rest, dt_tau_m, m_dt_tau_e, m_dt_tau_i,
                      v_threshold, v_reset, refractory_steps):
    """One step of the same current-based LIF by forward Euler, in Brian2's optimised form.

    ``v' = dt_tau_m ((v_rest + (ge + gi)) - v) + v``, ``ge' = m_dt_tau_e ge + ge``
    with ``dt_tau_m = dt / tau_m`` and ``m_dt_tau_e = -dt / tau_e``; threshold,
    reset and refractoriness as :func:`lif_current_exact`.

    Parameters
    ----------
    v, ge, gi, countdown, spikes, fired, n_fired : arrays, as :func:`lif_current_exact`.
    v_rest, dt_tau_m, m_dt_tau_e, m_dt_tau_i : float.
    v_threshold, v_reset, refractory_steps : float.

    Returns
    -------
    bool
        Whether every value written to ``v``, ``ge`` and ``gi`` is finite.
    """
    return _lif(1, v, ge, gi, countdown, spikes, fired, n_fired, v_rest, dt_tau_m, m_dt_tau_e, m_dt_tau_i, 0.0, 0.0,
                v_threshold, v_reset, refractory_steps)


@njit(cache=True, nogil=True)
def lif_conductance_euler(v, ge, gi, countdown, spikes, fired, n_fired, v_rest, e_e, e_i, dt_tau_m, m_dt_tau_e,
                          m_dt_tau_i, v_threshold, v_reset, refractory_steps):
    """One step of conductance-based LIF by forward Euler (Brette et al.'s COBA), in Brian2's optimised form.

    ``dv/dt = (ge (e_e - v) + gi (e_i - v) - (v - v_rest)) / tau_m`` with
    conductances in units of the leak's, as
    ``v' = dt_tau_m ((v_rest + ((ge (e_e - v)) + (gi (e_i - v)))) - v) + v``;
    ``ge' = m_dt_tau_e ge + ge``. Threshold, reset and refractoriness as
    :func:`lif_current_exact`.

    Parameters
    ----------
    v, ge, gi, countdown, spikes, fired, n_fired : arrays, as :func:`lif_current_exact`.
    v_rest, e_e, e_i : float, volts (rest and the reversal potentials).
    dt_tau_m, m_dt_tau_e, m_dt_tau_i : float.
    v_threshold, v_reset, refractory_steps : float.

    Returns
    -------
    bool
        Whether every value written to ``v``, ``ge`` and ``gi`` is finite.
    """
    return _lif(2, v, ge, gi, countdown, spikes, fired, n_fired, v_rest, e_e, e_i, dt_tau_m, m_dt_tau_e, m_dt_tau_i,
                v_threshold, v_reset, refractory_steps)


@njit(cache=True, nogil=True, inline="always")
def _deliver(row, j, pre_ptr, post_by_pre, signed_by_pre):
    """Add unit ``j``'s synapses' signed weights to their post units in ``row``, in order; the number added."""
    for k in range(pre_ptr[j], pre_ptr[j + 1]):
        row[post_by_pre[k]] += signed_by_pre[k]
    return pre_ptr[j + 1] - pre_ptr[j]


@njit(cache=True, nogil=True)
def transmit_sparse(target, spikes, pre_ptr, post_by_pre, signed_by_pre):
    """``target[post] += sign * w`` for every synapse of every unit that spiked, in Brian2's event order.

    Units in ascending order, each one's synapses in ascending post order,
    each added on its own: a target receiving several spikes sums them in
    that order, as Brian2's spike queue delivers them. The synapses are laid
    out by pre unit (``pre_ptr``), so a spike reads its synapses
    contiguously.

    Parameters
    ----------
    target : (batch, n_post) array, the post population's variable, updated in place.
    spikes : (batch, n_pre) array, nonzero where a pre unit spiked.
    pre_ptr : (n_pre + 1,) int array, unit ``j``'s synapses are ``pre_ptr[j]:pre_ptr[j + 1]``.
    post_by_pre : (n_synapses,) int array, each synapse's post unit, in that layout.
    signed_by_pre : (n_synapses,) array, each synapse's ``sign * weight``, in that layout.

    Returns
    -------
    int
        The number of synaptic events delivered.
    """
    batch, n_pre = spikes.shape
    events = 0
    for b in range(batch):
        row = target[b]
        for j in range(n_pre):
            if spikes[b, j] != 0.0:
                events += _deliver(row, j, pre_ptr, post_by_pre, signed_by_pre)
    return events


@njit(cache=True, nogil=True)
def transmit_fired(target, fired, n_fired, pre_ptr, post_by_pre, signed_by_pre):
    """:func:`transmit_sparse` from a list of the units that spiked (a LIF population's ``fired``).

    The same events in the same order, without a pass over every pre unit.

    Parameters
    ----------
    target : (batch, n_post) array, updated in place.
    fired : (batch, n_pre) int array, the units that spiked, ascending, in the first ``n_fired[b]`` entries.
    n_fired : (batch,) int array.
    pre_ptr, post_by_pre, signed_by_pre : arrays, as :func:`transmit_sparse`.

    Returns
    -------
    int
        The number of synaptic events delivered.
    """
    events = 0
    for b in range(n_fired.shape[0]):
        row = target[b]
        for m in range(n_fired[b]):
            events += _deliver(row, fired[b, m], pre_ptr, post_by_pre, signed_by_pre)
    return events


@njit(cache=True, nogil=True)
def transmit_dense(target, spikes, weights, mask, use_mask, sign):
    """:func:`transmit_sparse` for a dense ``(n_post, n_pre)`` weight matrix (with its mask when ``use_mask``).

    Parameters
    ----------
    target : (batch, n_post) array, updated in place.
    spikes : (batch, n_pre) array.
    weights : (n_post, n_pre) array.
    mask : (n_post, n_pre) bool array, the synapses that exist (read when ``use_mask``).
    use_mask : bool.
    sign : float.

    Returns
    -------
    int
        The number of synaptic events delivered.
    """
    batch, n_pre = spikes.shape
    n_post = weights.shape[0]
    events = 0
    for b in range(batch):
        for j in range(n_pre):
            if spikes[b, j] != 0.0:
                for i in range(n_post):
                    if not use_mask or mask[i, j]:
                        target[b, i] += sign * weights[i, j]
                        events += 1
    return events


@njit(cache=True, nogil=True, inline="always")
def _push(history, spikes, n):
    """Write this step's spikes into the ring ``history`` at slot ``n % slots``."""
    slots, batch, n_pre = history.shape
    w = n % slots
    for b in range(batch):
        for j in range(n_pre):
            history[w, b, j] = spikes[b, j]


@njit(cache=True, nogil=True)
def transmit_dense_delayed(target, spikes, history, step, weights, mask, use_mask, sign):
    """:func:`transmit_dense` of the spikes of ``history.shape[0] - 1`` steps ago (a uniform delay).

    The ring as :func:`transmit_delayed`. Then ``step[0] += 1``.

    Parameters
    ----------
    target, spikes, history, step : arrays
        As :func:`transmit_delayed`.
    weights, mask, use_mask, sign : as :func:`transmit_dense`.

    Returns
    -------
    int
        The synaptic events delivered, as :func:`transmit_dense` counts them.
    """
    n = step[0]
    _push(history, spikes, n)
    events = transmit_dense(target, history[(n + 1) % history.shape[0]], weights, mask, use_mask, sign)
    step[0] = n + 1
    return events


@njit(cache=True, nogil=True)
def transmit_synapse_delays(target, spikes, history, step, pre_ptr, post_by_pre, signed_by_pre, delay_by_pre):
    """:func:`transmit_sparse` with a delay per synapse (whole steps), in Brian2's spike-queue order.

    ``history`` is the ring of the pre population's last ``D + 1`` spike
    vectors (``D`` the longest delay); this step's spikes go into slot
    ``step % (D + 1)``. A synapse of delay ``d`` delivers the spikes of ``d``
    steps ago. The synapses are laid out by pre unit and, within a unit, by
    delay, then post unit (``delay_by_pre`` ascending within each unit's
    range). Delivery order is Brian2's: spikes in the order they were
    queued (the longest delay first, i.e. the earliest spike), within one
    queueing the pre units ascending, within a unit its synapses by post unit.
    Then ``step[0] += 1``.

    Parameters
    ----------
    target, spikes, history, step : arrays
        As :func:`transmit_delayed`, the ring reaching back ``D`` steps, the longest delay.
    pre_ptr, post_by_pre, signed_by_pre : arrays, as :func:`transmit_sparse`, in the by-delay layout.
    delay_by_pre : (n_synapses,) int array, each synapse's delay in steps, in that layout.

    Returns
    -------
    int
        The number of synaptic events delivered.
    """
    slots, batch, n_pre = history.shape
    n = step[0]
    _push(history, spikes, n)
    events = 0
    for d in range(slots - 1, -1, -1):
        if n < d:
            continue  # nothing was queued that long ago
        r = (n - d) % slots
        for b in range(batch):
            row = target[b]
            for j in range(n_pre):
                if history[r, b, j] != 0.0:
                    lo, hi = pre_ptr[j], pre_ptr[j + 1]
                    while lo < hi:  # the first of unit j's synapses with delay >= d (binary search)
                        mid = (lo + hi) // 2
                        if delay_by_pre[mid] < d:
                            lo = mid + 1
                        else:
                            hi = mid
                    k = lo
                    while k < pre_ptr[j + 1] and delay_by_pre[k] == d:
                        row[post_by_pre[k]] += signed_by_pre[k]
                        events += 1
                        k += 1
    step[0] = n + 1
    return events


@njit(cache=True, nogil=True, inline="always")
def clip(x, lo, hi):
    """Brian2's ``clip``: ``lo`` below it, ``hi`` above it (``x < lo ? lo : (x > hi ? hi : x)``)."""
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


@njit(cache=True, nogil=True)
def transmit_delayed(target, spikes, history, step, pre_ptr, post_by_pre, signed_by_pre):
    """:func:`transmit_sparse` of the spikes of ``history.shape[0] - 1`` steps ago (a uniform delay).

    ``history`` is a ring of the pre population's last ``D + 1`` spike
    vectors: this step's spikes go into slot ``step % (D + 1)``, and the
    slot ``D`` steps back is delivered, in Brian2's order (pre units
    ascending, then their synapses by post unit). Slots not yet written
    (the first ``D`` steps) hold no spikes. Then ``step[0] += 1``.

    Parameters
    ----------
    target : (batch, n_post) array, updated in place.
    spikes : (batch, n_pre) array, this step's spikes.
    history : (D + 1, batch, n_pre) array, the ring, updated in place.
    step : (1,) int array, the ring's step counter.
    pre_ptr, post_by_pre, signed_by_pre : arrays, as :func:`transmit_sparse`.

    Returns
    -------
    int
        The number of synaptic events delivered.
    """
    n = step[0]
    _push(history, spikes, n)
    events = transmit_sparse(target, history[(n + 1) % history.shape[0]], pre_ptr, post_by_pre, signed_by_pre)
    step[0] = n + 1
    return events
