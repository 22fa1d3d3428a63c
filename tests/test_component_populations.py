"""Every component names, in ``populations()``, every population it holds.

``Network.add`` and the build check a component's populations against the
network (``Network._check_component``): a population missing from the list
escapes that check, so a rule built on another network's population would
learn from that network's input. The oracle is independent of
``populations()``: the populations and projections the component keeps as
attributes, read off the object itself, in every circuit the papers define.
"""

import numpy as np
import pytest

import neurosim as ns
from neurosim.models import example_selection, neurogenesis, osdl, self_organizing, similarity_matching

X = np.random.default_rng(0).standard_normal((40, 8))
OBSERVED = (np.random.default_rng(1).random((40, 8)) > 0.3).astype(float)


def _gabor_stream():
    A = np.random.default_rng(2).standard_normal((16, 10))
    return example_selection.SparseDictionaryStream(A / np.linalg.norm(A, axis=0), k=2, seed=0)


CIRCUITS = {
    "osdl-masked": lambda: osdl.build_network(ns.ArrayStream(X), 4, masks=ns.ArrayStream(OBSERVED), batch=5),
    "osdl-exact": lambda: osdl.build_network(ns.ArrayStream(X), 4, masks=ns.ArrayStream(OBSERVED), batch=5,
                                             e_form="exact"),
    "osdl-full": lambda: osdl.build_network(ns.ArrayStream(X), 4, batch=5),
    "nodl": lambda: neurogenesis.build_network(ns.ArrayStream(X), 4, "NODL", batch=5, beta_c=2),
    "odl": lambda: neurogenesis.build_network(ns.ArrayStream(X), 4, "ODL", batch=5, beta_c=2),
    "similarity-matching": lambda: similarity_matching.build_network(ns.ArrayStream(X), 3, "TY", 0.1),
    "example-selection": lambda: example_selection.build_network(_gabor_stream(), encoder="k_sparse",
                                                                 n_examples=40, n_selected=10, n_components=12),
    "som": lambda: self_organizing.build_som(ns.ArrayStream(X), 3, 3, steps=40),
    "neural-gas": lambda: self_organizing.build_neural_gas(ns.ArrayStream(X), 5, steps=40),
    "gng": lambda: self_organizing.build_gng(ns.ArrayStream(X)),
    "gwr": lambda: self_organizing.build_gwr(ns.ArrayStream(X)),
}


def components(net):
    out = [p.dynamics for p in net.populations.values() if p.dynamics is not None]
    out += net.signals() + list(net.unit_rules) + list(net.components)
    return out + [p.rule for p in net.projections.values() if p.rule is not None]


def held_populations(component):
    """The populations a component keeps: its Population attributes and its projections' two ends."""
    held = set()
    for value in vars(component).values():
        if isinstance(value, ns.Population):
            held.add(value.name)
        elif isinstance(value, ns.Projection):
            held |= {value.pre.name, value.post.name}
    return held


@pytest.mark.parametrize("circuit", list(CIRCUITS))
def test_populations_lists_every_population_a_component_holds(circuit):
    net = CIRCUITS[circuit]().network
    seen = set()
    for comp in components(net):
        listed = {p.name for p in comp.populations()}
        assert held_populations(comp) <= listed, type(comp).__name__
        assert listed <= set(net.populations), type(comp).__name__
        seen.add(type(comp).__name__)
    assert len(seen) >= 2  # the circuit's components were found, not an empty list
