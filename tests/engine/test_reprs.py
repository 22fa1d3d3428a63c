"""Reprs say what an entity is: names, sizes, rules, step, recorded variables (issue 26)."""

import neurosim as ns
from sm_helpers import make_sm


def test_population_repr_names_size_dynamics_variables_and_ids_after_a_death():
    net = make_sm(every=5)
    y = net.populations["y"]
    assert repr(y) == "Population('y', size=3, dynamics=Jacobi, batch=1, variables=['activity', 'mu'])"
    assert repr(net.populations["x"]).startswith("Population('x', size=12, dynamics=input,")
    net.apply(ns.Death(y, [1]))
    assert "size=2" in repr(y) and "ids=[0, 2]" in repr(y)
    big = ns.Population("big", 20, max_size=30)
    assert "max_size=30" in repr(big) and "ids=" not in repr(big)


def test_projection_repr_names_pre_post_shape_sign_and_the_rule_with_its_parameters():
    net = make_sm()
    assert repr(net.projections["W"]) == (
        "Projection('W', x -> y, sign=+1, weights=3x12, "
        "rule=NormalizedHebbian(alpha=0.08, signal='sqnorm_x', rate_variable='mu'))")
    m = repr(net.projections["M"])
    assert "sign=-1, weights=3x3, lateral" in m
    x, z = ns.Population("x", 4), ns.Population("z", 2)
    masked = ns.Projection("P", x, z, mask=[[1, 0, 0, 1], [0, 1, 0, 0]], rule=ns.Sanger(0.02))
    assert repr(masked) == "Projection('P', x -> z, sign=+1, weights=2x4, mask=3 of 8 synapses, rule=Sanger(rate=0.02))"


def test_recorder_repr_counts_samples_as_the_run_goes():
    net = make_sm(every=5)
    rec = net.recorders["y"]
    assert repr(rec) == "Recorder('y', population 'y', variables=['activity', 'mu'], every=5, samples=0)"
    net.run(23)
    assert "samples=4)" in repr(rec) and rec.n_samples == 4 == rec.to_dataset().sizes["time"]
    alone = ns.Recorder(net.projections["W"], "weights", every=2, name="w", time_dim="t_w")
    assert repr(alone) == ("Recorder('w', projection 'W', variables=['weights'], every=2, samples=0, "
                           "time_dim='t_w', not in a network)")


def test_network_repr_is_short_and_multi_line_with_step_entities_and_recordings():
    net = make_sm(every=5)
    net.run(10)
    lines = repr(net).splitlines()
    assert lines == [
        "<Network 'network': t=10, batch=1, seed=0>",
        "  populations: x (12, input GaussianStream), y (3, Jacobi)",
        "  projections: W x->y (3x12, +1, NormalizedHebbian), M y->y (3x3, -1, NormalizedHebbian)",
        "  components:  CumulativeActivity on y",
        "  recorders:   y.activity, y.mu every 5 (samples: 2)",
    ]
    net.apply(ns.Birth(net.populations["y"], 2))
    assert repr(net).splitlines()[-1] == "  events:      2 units born or killed"


def test_network_repr_shortens_long_lists():
    net = ns.Network(seed=3, name="many")
    net.add(*[ns.Population(f"p{i}", 2) for i in range(9)])
    line = repr(net).splitlines()[1]
    assert line.endswith("p5 (2, input), ... (3 more)") and "p6" not in line


def test_network_repr_of_a_sparse_projection_gives_its_shape_and_synapses():
    # a sparse projection's weights are 1-D (one per synapse): the repr names the unit grid and the synapse count
    net = ns.Network(seed=0)
    x, y = ns.Population("x", 5), ns.Population("y", 4, dynamics=ns.Linear())
    net.add(x, y, ns.Projection("W", x, y, connectivity=ns.FixedInDegree(2)))
    assert repr(net).splitlines()[2] == "  projections: W x->y (4x5, 8 synapses, +1, fixed)"
