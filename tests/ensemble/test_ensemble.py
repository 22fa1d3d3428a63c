"""neurosim.Ensemble: members of one structure run together give exactly their solo numbers."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis_profiles import examples

import neurosim as ns
from neurosim.models.similarity_matching import build_network
from neurosim.streams import ArrayStream


def _member(seed, regularizer="XY", eta=0.1, alpha=0.1, n=10, k=3, tol=0.0):
    X = np.random.default_rng(100 + seed).normal(size=(40, n))
    return build_network(ArrayStream(X), k, regularizer, alpha, beta=0.999, eta=eta, tol=tol,
                         max_iter=30 if tol == 0 else 400,
                         zero_start=True, seed=seed, record=("activity",), record_every=2).network


def _state(net):
    return [net.projections[p].weights.copy() for p in sorted(net.projections)] + [
        pop.state[v].copy() for pop in net.populations.values() for v in sorted(pop.state)]


@pytest.mark.parametrize("regularizer, tol", [("XY", 0.0), ("TY", 1e-4), ("YY", 0.0)])
def test_members_give_exactly_their_solo_numbers(regularizer, tol):
    etas = [0.1, 0.2, 0.15, 0.1, 0.25]
    solo = [_member(s, regularizer, eta=e, tol=tol) for s, e in enumerate(etas)]
    for n in solo:
        n.run(25)
    ens = ns.Ensemble([_member(s, regularizer, eta=e, tol=tol) for s, e in enumerate(etas)])
    ens.run(10, threads=2)
    ens.run(15, threads=2)  # split runs continue exactly
    for a, b in zip(ens.networks, solo):
        assert a.t == b.t == 25
        for u, v in zip(_state(a), _state(b)):
            assert np.array_equal(u, v)
    da = ens.recording("y")
    assert da.dims[0] == "network" and da.shape[0] == len(etas)
    for i, b in enumerate(solo):
        ref = next(iter(b.recorders.values())).to_dataset()["activity"]
        assert np.array_equal(da.isel(network=i).values, ref.values)
    # per-member parameters were honoured: different etas give different activity
    assert not np.array_equal(da.isel(network=0).values, da.isel(network=1).values)


def test_thread_count_does_not_change_numbers():
    runs = []
    for threads in (1, 2):
        ens = ns.Ensemble([_member(s) for s in range(3)])
        ens.run(12, threads=threads)
        runs.append([_state(n) for n in ens.networks])
    for a, b in zip(*runs):
        for u, v in zip(a, b):
            assert np.array_equal(u, v)


def test_a_failing_member_is_reported_and_the_others_finish():
    nets = [_member(s) for s in range(3)]
    nets[1].projections["M"].weights = -3.0 * (np.ones((3, 3)) - np.eye(3))  # not contracting
    nets[1].populations["y"].dynamics.eta = 1.0
    ens = ns.Ensemble(nets)
    with pytest.raises(ns.SimulationDiverged) as info:
        ens.run(5, threads=2)
    assert info.value.member == 1
    assert nets[0].t == nets[2].t == 5 and nets[1].t < 5


@pytest.mark.parametrize("bad, err, text", [
    ([], ValueError, "at least one"),
    (None, TypeError, "sequence"),
    ([1], TypeError, r"networks\[0\]"),
])
def test_bad_member_lists(bad, err, text):
    with pytest.raises(err, match=text):
        ns.Ensemble(bad)


def test_structure_mismatches_name_the_member_and_what_differs():
    a = _member(0)
    with pytest.raises(ValueError, match=r"networks\[1\] differs .* populations"):
        ns.Ensemble([a, _member(1, k=4)])
    with pytest.raises(ValueError, match=r"networks\[1\] differs .* (components|projections)"):
        ns.Ensemble([a, _member(1, regularizer="TY")])
    with pytest.raises(ValueError, match="appears twice"):
        ns.Ensemble([a, a])


@pytest.mark.parametrize("kw, err, text", [
    (dict(steps=-1), ValueError, "steps"), (dict(steps=2, backend="gpu"), ValueError, "backend"),
    (dict(steps=2, threads=0), ValueError, "threads"), (dict(steps=2, precision="float32"), ValueError, "cuda"),
])
def test_bad_run_arguments(kw, err, text):
    with pytest.raises(err, match=text):
        ns.Ensemble([_member(0)]).run(**kw)


@settings(max_examples=examples(25), deadline=None)
@given(st.lists(st.one_of(st.none(), st.integers(), st.text(max_size=3), st.floats()), max_size=4))
def test_constructor_refuses_hostile_lists(items):
    with pytest.raises((TypeError, ValueError)):
        ns.Ensemble(items)
