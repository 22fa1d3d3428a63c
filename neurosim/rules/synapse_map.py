"""The loops that apply a per-synapse rule to every synapse of a projection, generated for each rule.

A per-synapse rule (:func:`~neurosim.rules.local_rule` with
``per_synapse=True``) is one function ``f(w, post, pre, *post_variables,
*params)`` returning a synapse's new weight. Its compiled path maps ``f``
over the synapses with one of four loops:

* **sparse**: every stored synapse, row by row (``indptr``, ``indices``);
* **dense**: every ``(i, j)`` except a lateral projection's diagonal and
  the synapses its mask leaves out (those stay zero);

each **serial** or **row-parallel** (numba's thread pool over post units,
:mod:`neurosim.kernels.parallel`). Every synapse gets the same arithmetic
(``f``'s) whichever loop runs it, so the four give the same bits on the
same synapses, for any thread count.

The loops differ between rules only in how many post variables and
parameters they pass on, which a fixed numba function cannot take, so they
are written as source per rule (:class:`~neurosim.codegen.GeneratedKernel`)
and compiled inside the segments that use them. ``f`` is inlined into them
(numba IR inlining, ``inline="always"``): a call per synapse cost 3-4 times
the built-in ``csr_oja`` kernel, inlined it costs about 1.2 times. Inlined
code is compiled with the loop's options, so the loops keep the bounds
checks a user kernel has (:func:`~neurosim.rules.local_rule`). Before the
loop the activities are copied transposed into the workspaces ``post_t``
``(n_post, batch)`` and ``pre_t`` ``(n_pre, batch)``, so that ``f`` gets
contiguous vectors (strided column views cost 1.6 times more).
"""

from __future__ import annotations

from neurosim.codegen import GeneratedKernel

__all__ = ["synapse_maps", "STORAGES"]

#: the loops of :func:`synapse_maps`, by storage
STORAGES = ("sparse", "dense")

_TRANSPOSE = """\
    for b in range(post.shape[0]):
        for i in range(post.shape[1]):
            post_t[i, b] = post[b, i]
        for j in range(pre.shape[1]):
            pre_t[j, b] = pre[b, j]
"""

_SPARSE = '''\
def {{name}}(weights, indptr, indices, post, pre, post_t, pre_t{args}):
    """{doc}: ``weights[s] = f(weights[s], post_t[i], pre_t[j], ...)`` for every stored synapse ``s = (i, j)``."""
{transpose}    bad = 0
    for i in {loop}(indptr.shape[0] - 1):
        y = post_t[i]
{loads}        for s in range(indptr[i], indptr[i + 1]):
            v = {{synapse}}(weights[s], y, pre_t[indices[s]]{passed})
            weights[s] = v
            if not (v - v == 0.0):
                bad += 1
    return bad == 0
'''

_DENSE = '''\
def {{name}}(weights, lateral, mask, use_mask, post, pre, post_t, pre_t{args}):
    """{doc}: ``weights[i, j] = f(weights[i, j], post_t[i], pre_t[j], ...)`` for every synapse ``(i, j)``."""
{transpose}    bad = 0
    n_pre = weights.shape[1]
    for i in {loop}(weights.shape[0]):
        y = post_t[i]
{loads}        for j in range(n_pre):
            if (lateral and j == i) or (use_mask and not mask[i, j]):
                continue
            v = {{synapse}}(weights[i, j], y, pre_t[j]{passed})
            weights[i, j] = v
            if not (v - v == 0.0):
                bad += 1
    return bad == 0
'''


def synapse_maps(synapse, n_variables: int, n_params: int, name: str) -> dict[tuple[str, bool], GeneratedKernel]:
    """The four loops mapping ``synapse`` over a projection, by ``(storage, row_parallel)``.

    Parameters
    ----------
    synapse : numba dispatcher
        The per-synapse function ``f(w, post, pre, *post_variables, *params)``,
        compiled with ``inline="always"``.
    n_variables, n_params : int
        How many post variables (passed to ``f`` as ``v[i]``) and parameters
        it takes after ``pre``.
    name : str
        The rule's name, for messages.

    Returns
    -------
    dict
        ``{("sparse" | "dense", row_parallel): GeneratedKernel}``. Each
        returns whether every weight it wrote is finite. Arguments: sparse
        ``(weights, indptr, indices, post, pre, post_t, pre_t, *variables,
        *params)``; dense ``(weights, lateral, mask, use_mask, post, pre,
        post_t, pre_t, *variables, *params)``, ``post_t`` and ``pre_t``
        workspaces of shapes ``(n_post, batch)`` and ``(n_pre, batch)``.
    """
    variables = [f"v{k}" for k in range(n_variables)]
    params = [f"p{k}" for k in range(n_params)]
    fields = {"args": "".join(f", {a}" for a in variables + params),
              "loads": "".join(f"        a{k} = v{k}[i]\n" for k in range(n_variables)),
              "passed": "".join(f", {a}" for a in [f"a{k}" for k in range(n_variables)] + params),
              "transpose": _TRANSPOSE}
    maps: dict[tuple[str, bool], GeneratedKernel] = {}
    for storage, template in (("sparse", _SPARSE), ("dense", _DENSE)):
        doc = f"{name} on the synapses of a {storage} projection"
        serial = GeneratedKernel(f"{name}.{storage}", template.format(loop="range", doc=doc, **fields),
                                 {"synapse": synapse}, {"boundscheck": True})
        maps[storage, False] = serial
        maps[storage, True] = GeneratedKernel(f"{name}.{storage}_rows",
                                              template.format(loop="prange", doc=doc + ", row-parallel", **fields),
                                              {"synapse": synapse}, {"boundscheck": True, "parallel": True},
                                              serial=serial)
    return maps
