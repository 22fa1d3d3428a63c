"""Numba kernels of Izhikevich's simple spiking model (Izhikevich 2003): a forward Euler step and the reset.

The arithmetic copies Brian2's generated C++ for the model written as Brian2
users write it, in SI units (``dv/dt = (0.04/ms/mV)*v**2 + (5/ms)*v +
140*mV/ms - u + I``, ``du/dt = a*(b*v - u)``, ``method="euler"``): the same
expression trees, the same loop-invariant constants, ``v**2`` as ``v * v``
(GCC expands Brian2's ``pow(v, 2)`` into that product; the object code calls
no ``pow``), no ``fastmath`` (no reassociation, no fused multiply-adds) and
every new value computed from the old ones before any is written. The same
network therefore gives Brian2's spikes bit for bit
(``tests/spiking/test_izhikevich_brian2.py``).

The step and the reset are two kernels because Brian2 runs them in two
slots with the synapses in between (thresholds, synapses, resets): a spike
arriving through ``v_post += w`` at a unit that spiked in the same step is
overwritten by its reset.

State arrays are ``(batch, n)``: one row per independent sample; the per-unit
parameters ``a``, ``b``, ``c``, ``d`` are ``(n,)``, shared by the samples.
"""

from numba import njit

__all__ = ["izhikevich_euler", "izhikevich_reset"]


@njit(cache=True, nogil=True)
def izhikevich_euler(v, u, current, a, b, spikes, fired, n_fired, dt, k_rest, k_linear, k_square, v_threshold):
    """One forward Euler step of Izhikevich's model and its threshold, in Brian2's generated arithmetic (no reset).

    ``u' = (dt (a (b v - u))) + u`` and
    ``v' = (dt ((k_rest + ((I + (k_linear v)) + (k_square (v v)))) - u)) + v``,
    both from the old ``v`` and ``u``; then a unit spikes when
    ``v' >= v_threshold``. ``v`` keeps its value above the threshold:
    :func:`izhikevich_reset` resets the units listed in ``fired`` once the
    step's spikes have been delivered.

    Parameters
    ----------
    v : (batch, n) array
        Membrane potentials, V; updated in place.
    u : (batch, n) array
        Recovery variables, V/s; updated in place.
    current : (batch, n) array
        Input currents ``I``, V/s (read).
    a, b : (n,) arrays
        Per-unit time scale and sensitivity of the recovery, 1/s (read).
    spikes : (batch, n) array
        Written: 1.0 where a unit spiked this step, else 0.0.
    fired : (batch, n) int array
        Written: the units that spiked, ascending, in the first ``n_fired[b]`` entries.
    n_fired : (batch,) int array
        Written.
    dt : float
        The step, s.
    k_rest, k_linear, k_square : float
        Brian2's loop invariants ``140 mV/ms`` (V/s), ``5/ms`` (1/s) and
        ``0.04/(mV ms)`` (1/(V s)): 140.0, 5000.0 and 40000.0.
    v_threshold : float
        V.

    Returns
    -------
    bool
        Whether every value written to ``v`` and ``u`` is finite (tested as
        written, so a segment needs no separate pass over them).
    """
    batch, n = v.shape
    bad = 0
    for s in range(batch):
        k = 0
        for i in range(n):
            vi = v[s, i]
            ui = u[s, i]
            u_new = (dt * (a[i] * ((b[i] * vi) - ui))) + ui
            v_new = (dt * ((k_rest + ((current[s, i] + (k_linear * vi)) + (k_square * (vi * vi)))) - ui)) + vi
            u[s, i] = u_new
            v[s, i] = v_new
            if v_new >= v_threshold:
                spikes[s, i] = 1.0
                fired[s, k] = i
                k += 1
            else:
                spikes[s, i] = 0.0
            bad |= not (v_new - v_new == 0.0) or not (u_new - u_new == 0.0)
        n_fired[s] = k
    return bad == 0


@njit(cache=True, nogil=True)
def izhikevich_reset(v, u, c, d, fired, n_fired):
    """Brian2's reset ``v = c; u += d`` of the units that spiked in the step.

    Parameters
    ----------
    v, u : (batch, n) arrays
        Updated in place.
    c : (n,) array
        Per-unit reset potential, V.
    d : (n,) array
        Per-unit increment of the recovery variable, V/s.
    fired, n_fired : int arrays
        As written by :func:`izhikevich_euler`.

    Returns
    -------
    bool
        Whether every value written is finite.
    """
    bad = 0
    for s in range(n_fired.shape[0]):
        for m in range(n_fired[s]):
            i = fired[s, m]
            v[s, i] = c[i]
            ui = u[s, i] + d[i]
            u[s, i] = ui
            bad |= not (c[i] - c[i] == 0.0) or not (ui - ui == 0.0)
    return bad == 0
