"""Checkpoints: one path for save and load, all-or-none loading, parameter checks, masks, recordings."""

import json
import warnings

import numpy as np
import pytest

import neurosim as ns
from sm_helpers import make_sm, state_of
from neurosim.io import CheckpointParamsWarning
from test_events import growing_network


def assert_states_equal(a, b):
    sa, sb = state_of(a), state_of(b)
    assert sa.keys() == sb.keys()
    for k in sa:
        assert sa[k].shape == sb[k].shape and np.array_equal(sa[k], sb[k]), k


@pytest.mark.parametrize("save_as, load_as", [("a", "a"), ("a", "a.npz"), ("a.npz", "a"), ("a.b", "a.b")])
def test_save_and_load_take_the_same_path(tmp_path, save_as, load_as):
    a = make_sm()
    a.run(7)
    written = a.save(tmp_path / "out" / save_as)
    assert written.name.endswith(".npz") and written.exists()
    b = make_sm()
    b.load(tmp_path / "out" / load_as)
    assert b.t == 7
    assert_states_equal(a, b)


def rewrite(path, out, drop=(), replace=None):
    with np.load(path, allow_pickle=False) as f:
        data = {k: f[k] for k in f.files if k not in drop}
    data.update(replace or {})
    np.savez(out, **data)
    return out


@pytest.mark.parametrize("damage, match", [
    ({"drop": ["proj/W/weights"]}, r"lacks 'proj/W/weights' \(weights of projection 'W'\)"),
    ({"drop": ["pop/y/var/mu"]}, r"lacks 'pop/y/var/mu' \(variable 'mu' of population 'y'\)"),
    ({"replace": {"proj/M/weights": np.zeros((3, 4))}}, r"'proj/M/weights' .* shape \(3, 4\).*expected shape \(3, 3\)"),
    ({"replace": {"pop/y/ids": np.array([0, 1, 1])}}, "unit ids of population 'y' must be distinct"),
    # hand-edited values the engine never produces (issue 23): refused, not loaded unchecked
    ({"replace": {"proj/W/weights": np.full((3, 12), np.nan)}}, r"'proj/W/weights' .*NaN"),
    ({"replace": {"proj/M/weights": np.eye(3)}}, r"'proj/M/weights' .*lateral.*diagonal"),
    ({"replace": {"pop/y/var/mu": np.array([1.0, np.inf, 1.0])}}, r"'pop/y/var/mu' .*(NaN|Inf)"),
])
def test_a_damaged_checkpoint_changes_nothing(tmp_path, damage, match):
    a = make_sm()
    a.run(10)
    path = rewrite(a.save(tmp_path / "ok"), tmp_path / "bad.npz", **damage)
    a.run(5)
    before = state_of(a), a.t, a.rng.bit_generator.state, a.recorders["y"].to_dataset()
    with pytest.raises(ValueError, match=match):
        a.load(path)
    after = state_of(a)
    assert all(np.array_equal(before[0][k], after[k]) for k in after), "mu and the weights are untouched"
    assert a.t == before[1] == 15 and a.rng.bit_generator.state == before[2]
    assert a.recorders["y"].to_dataset().identical(before[3])
    a.run(5)


def test_other_parameters_are_refused_or_loaded_with_a_warning(tmp_path):
    a = make_sm()
    a.run(10)
    path = a.save(tmp_path / "ck")
    meta = json.loads(str(np.load(path)["__meta__"]))
    assert meta["params"]["y.dynamics.eta"] == 0.1 and "y.size" not in meta["params"]
    b = make_sm()
    b.populations["y"].dynamics.eta = 0.2
    b.run(3)
    before = state_of(b)
    with pytest.raises(ValueError, match=r"(?s)other parameters.*y\.dynamics\.eta: checkpoint 0\.1, this network 0\.2"):
        b.load(path)
    assert b.t == 3 and all(np.array_equal(v, state_of(b)[k]) for k, v in before.items())
    with pytest.warns(CheckpointParamsWarning, match=r"y\.dynamics\.eta: checkpoint 0\.1, this network 0\.2"):
        b.load(path, strict=False)
    assert b.t == 10 and np.array_equal(b.projections["W"].weights, a.projections["W"].weights)


def test_sizes_changed_by_events_are_not_parameter_differences(tmp_path):
    a = growing_network("python")
    a.run(60)  # one birth at 50
    path = a.save(tmp_path / "ck")
    b = growing_network("python")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        b.load(path)
    assert b.populations["h"].size == 6


def masked(seed=0):
    net = make_sm("XY", n=10, k=4, seed=seed)
    rng = np.random.default_rng(7)
    net.projections["W"].mask = rng.random((4, 10)) < 0.6
    net.projections["M"].mask = rng.random((4, 4)) < 0.5
    return net


def test_masks_round_trip_and_the_continued_run_is_bit_identical(tmp_path):
    ref = masked()
    ref.run(300)
    a = masked()
    a.run(150)
    path = a.save(tmp_path / "masked")
    b = make_sm("XY", n=10, k=4)  # no masks: refused (issue 23), or with strict=False they come from the checkpoint
    with pytest.raises(ValueError, match=r"W\.mask: checkpoint a 4 x 10 mask, this network none"):
        b.load(path)
    with pytest.warns(CheckpointParamsWarning, match=r"M\.mask"):
        b.load(path, strict=False)
    for name in ("W", "M"):
        assert b.projections[name].mask is not None
        assert np.array_equal(b.projections[name].mask, a.projections[name].mask)
    assert not b.projections["M"].mask.diagonal().any()
    b.run(150, backend="compiled")
    c = masked()
    c.load(path)
    c.run(150, backend="compiled")
    for net in (b, c):
        assert_states_equal(ref, net)
    masked_out = ~ref.projections["W"].mask
    assert masked_out.any() and np.all(b.projections["W"].weights[masked_out] == 0.0)


@pytest.mark.parametrize("build, t_save, more", [
    (lambda: make_sm(every=3), 200, 300),
    (lambda: growing_network("compiled"), 120, 180),
])
def test_recordings_roll_back_with_the_state(tmp_path, build, t_save, more):
    ref = build()
    ref.run(t_save + more)
    net = build()
    net.run(t_save)
    path = net.save(tmp_path / "ck")
    net.run(more)
    net.load(path)
    assert all(ds.to_dataset()[ds.time_dim].values.max() <= t_save for ds in net.recorders.values())
    net.run(more)
    for name, rec in ref.recorders.items():
        got = net.recorders[name].to_dataset()
        assert np.all(np.diff(got.time.values) > 0), "no duplicate or backward times"
        assert got.identical(rec.to_dataset()), name
    assert net.event_log.to_dict() == ref.event_log.to_dict()


def test_an_empty_population_round_trips(tmp_path):
    ref = growing_network("compiled")
    ref.triggers.clear()
    a = growing_network("compiled")
    a.triggers.clear()
    for net in (ref, a):
        net.run(10)
        net.apply(ns.Death(net.populations["h"], net.populations["h"].ids))
    a.run(5)
    path = a.save(tmp_path / "empty")
    b = growing_network("compiled")
    b.triggers.clear()
    b.load(path)
    assert b.populations["h"].size == 0 and b.projections["W"].weights.shape == (0, 6)
    assert b.populations["h"].next_id == 4
    ref.run(5)
    for net in (ref, b):
        net.apply(ns.Birth(net.populations["h"], 2))
        net.run(5)
    assert_states_equal(ref, b)


def test_checkpoint_path_appends_npz_to_the_name(tmp_path):
    # documented: "path with .npz appended unless it already ends so"; two checkpoints in one folder stay apart
    from neurosim.io import checkpoint_path

    assert checkpoint_path(tmp_path / "ck") == tmp_path / "ck.npz"
    assert checkpoint_path(tmp_path / "ck.npz") == tmp_path / "ck.npz"
    assert checkpoint_path(tmp_path / "run.b") == tmp_path / "run.b.npz"
    assert checkpoint_path(tmp_path / "first") != checkpoint_path(tmp_path / "second")


@pytest.mark.parametrize("keep", [0, 100, 0.5, -20])
def test_a_truncated_checkpoint_is_the_documented_value_error(tmp_path, keep):
    # a file cut short (disk full, a copy interrupted) is "not a neurosim checkpoint", never zipfile.BadZipFile
    a = make_sm()
    a.run(10)
    raw = a.save(tmp_path / "ok").read_bytes()
    n = int(len(raw) * keep) if isinstance(keep, float) else keep % len(raw)
    (tmp_path / "cut.npz").write_bytes(raw[:n])
    a.run(5)
    before = state_of(a)
    with pytest.raises(ValueError, match=r"cut\.npz.*not a neurosim checkpoint"):
        a.load(tmp_path / "cut")
    assert a.t == 15 and all(np.array_equal(v, state_of(a)[k]) for k, v in before.items())


@pytest.mark.parametrize("meta", ['"just a string"', "[1, 2]", "{not json"])
def test_malformed_metadata_is_the_documented_value_error(tmp_path, meta):
    a = make_sm()
    path = rewrite(a.save(tmp_path / "ok"), tmp_path / "bad.npz", replace={"__meta__": np.array(meta)})
    with pytest.raises(ValueError, match=r"bad\.npz"):
        a.load(path)
    assert a.t == 0


@pytest.mark.parametrize("key, bad", [("t", None), ("t", "10"), ("t", 10.0), ("rng", None), ("rng", [1]),
                                      ("next_id", None), ("next_id", 3), ("event_log", None), ("event_log", [])])
def test_metadata_missing_a_field_or_of_the_wrong_json_type_is_refused(tmp_path, key, bad):
    a = make_sm()
    a.run(10)
    path = a.save(tmp_path / "ok")
    with np.load(path, allow_pickle=False) as f:
        meta = json.loads(str(f["__meta__"]))
    assert key in meta
    if bad is None:
        del meta[key]
    else:
        meta[key] = bad
    path = rewrite(path, tmp_path / "bad.npz", replace={"__meta__": np.array(json.dumps(meta))})
    a.run(5)
    before = state_of(a)
    with pytest.raises(ValueError, match=rf"bad\.npz lacks metadata '{key}' \(a JSON (int|dict)\); nothing was loaded"):
        a.load(path)
    assert a.t == 15 and all(np.array_equal(v, state_of(a)[k]) for k, v in before.items())


def test_the_fingerprint_names_the_flat_parameters_without_sizes_and_digests_only_given_groups(tmp_path):
    # io._params: a checkpoint records net.flat_params() less the population sizes (state that events
    # change); a group family is added as a digest only where one was given (StructuredSparseCode(groups=...))
    a = make_sm()
    with np.load(a.save(tmp_path / "ok"), allow_pickle=False) as f:
        params = json.loads(str(f["__meta__"]))["params"]
    sizes = {f"{name}.size" for name in a.populations}
    assert sizes <= set(a.flat_params())
    assert set(params) == set(a.flat_params()) - sizes
    assert not any(k.endswith("groups_digest") for k in params)


def test_weights_outside_the_mask_in_a_checkpoint_are_refused(tmp_path):
    a = masked()
    a.run(5)
    path = a.save(tmp_path / "ck")
    with np.load(path) as f:
        w, m = f["proj/W/weights"].copy(), f["proj/W/mask"]
    w[~m] = 1.0
    bad = rewrite(path, tmp_path / "bad.npz", replace={"proj/W/weights": w})
    b = masked()
    with pytest.raises(ValueError, match=r"bad\.npz.*'proj/W/weights' .*outside .*mask"):
        b.load(bad)
    assert b.t == 0


def test_an_unmasked_checkpoint_is_refused_by_a_masked_network(tmp_path):
    # the mask used to be dropped silently: weights then grew where the network's mask forbids them
    a = make_sm("XY", n=10, k=4)
    a.run(20)
    path = a.save(tmp_path / "plain")
    b = masked()
    mask = b.projections["W"].mask.copy()
    with pytest.raises(ValueError, match=r"(?s)other parameters.*W\.mask: checkpoint none, this network"):
        b.load(path)
    assert b.t == 0 and np.array_equal(b.projections["W"].mask, mask)
    # and the other way round: a masked checkpoint into an unmasked network
    c = make_sm("XY", n=10, k=4)
    with pytest.raises(ValueError, match=r"(?s)W\.mask: checkpoint .*mask.*this network none"):
        c.load(masked().save(tmp_path / "masked"))
    assert c.projections["W"].mask is None and c.t == 0


def test_a_mask_of_other_content_is_refused(tmp_path):
    a = masked()
    a.run(5)
    path = a.save(tmp_path / "ck")
    b = masked()
    m = b.projections["W"].mask.copy()
    m[0, :] = ~m[0, :]
    b.projections["W"].mask = m
    with pytest.raises(ValueError, match=r"W\.mask: .*differ"):
        b.load(path)
    assert b.t == 0 and np.array_equal(b.projections["W"].mask, m)
    with pytest.warns(CheckpointParamsWarning, match=r"W\.mask"):
        b.load(path, strict=False)
    assert np.array_equal(b.projections["W"].mask, a.projections["W"].mask)


def test_masks_after_births_compare_on_the_units_alive_in_both(tmp_path):
    # a checkpoint taken after a birth has a larger mask; the units of the fresh network must still agree
    a = growing_network("python")
    a.projections["W"].mask = np.ones(a.projections["W"].shape, bool)
    a.run(60)  # one birth at 50
    path = a.save(tmp_path / "ck")
    b = growing_network("python")
    b.projections["W"].mask = np.ones(b.projections["W"].shape, bool)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        b.load(path)
    assert b.projections["W"].mask.shape == a.projections["W"].mask.shape


@pytest.mark.parametrize("saved, loaded", [
    (lambda: ns.schedules.InverseTime(0.02, 50), lambda: ns.schedules.LinearRamp(0.5, 0, 10)),
    (lambda: ns.schedules.InverseTime(0.02, 50), lambda: ns.schedules.InverseTime(0.02, 60)),
    (lambda: ns.schedules.Piecewise({0: 0.1, 10: 0.05}), lambda: ns.schedules.Piecewise({0: 0.1, 20: 0.05})),
    (lambda: ns.schedules.InverseTime(0.02, 50), lambda: 0.02),
])
def test_schedules_are_part_of_the_fingerprint(tmp_path, saved, loaded):
    a = make_sm()
    a.projections["W"].rule.alpha = saved()
    a.run(10)
    path = a.save(tmp_path / "ck")
    b = make_sm()
    b.projections["W"].rule.alpha = loaded()
    b.run(2)
    before = state_of(b)
    with pytest.raises(ValueError, match=r"(?s)other parameters.*W\.rule\.alpha: checkpoint "):
        b.load(path)
    assert b.t == 2 and all(np.array_equal(v, state_of(b)[k]) for k, v in before.items())
    same = make_sm()
    same.projections["W"].rule.alpha = saved()
    same.load(path)  # the same schedule loads
    assert same.t == 10


def test_a_refused_resume_touches_nothing(tmp_path):
    # the checkpoint (step 60) is past this run's end (step 5 + 20): refused before anything is loaded
    make_sm().run(60, checkpoint=tmp_path / "ck")
    b = make_sm()
    b.run(5)
    before = state_of(b), b.rng.bit_generator.state, b.recorders["y"].to_dataset()
    with pytest.raises(ValueError, match="past the end of this run"):
        b.run(20, checkpoint=tmp_path / "ck", resume=True)
    assert b.t == 5 and b.rng.bit_generator.state == before[1]
    assert all(np.array_equal(v, state_of(b)[k]) for k, v in before[0].items())
    assert b.recorders["y"].to_dataset().identical(before[2])
    with pytest.raises(ValueError, match="backend"):
        b.run(100, checkpoint=tmp_path / "ck", resume=True, backend="nope")
    assert b.t == 5
    b.run(20)


def test_a_file_that_is_not_this_circuits_checkpoint_is_never_overwritten(tmp_path):
    # issue 23: output paths are replaced only when they hold what this library wrote for the same circuit
    data = tmp_path / "data.npz"
    np.savez(data, x=np.arange(3))
    a = make_sm()
    with pytest.raises(ValueError, match=r"data\.npz exists and is not a neurosim checkpoint"):
        a.save(tmp_path / "data")
    with pytest.raises(ValueError, match="not a neurosim checkpoint"):
        a.run(5, checkpoint=tmp_path / "data")
    assert a.t == 0  # refused before the run started
    (tmp_path / "notes.npz").write_text("not even a zip")
    with pytest.raises(ValueError, match="not a neurosim checkpoint"):
        a.save(tmp_path / "notes")
    other = make_sm("TY").save(tmp_path / "other")
    with pytest.raises(ValueError, match="checkpoint of another circuit"):
        a.save(other)
    with np.load(data) as f:
        assert np.array_equal(f["x"], np.arange(3))
    assert (tmp_path / "notes.npz").read_text() == "not even a zip"
    # the same circuit's checkpoint is replaced (a rerun), and overwrite=True replaces anything
    a.run(3, checkpoint=tmp_path / "ck")
    a.run(2, checkpoint=tmp_path / "ck")
    assert make_sm().load(tmp_path / "ck").t == 5
    a.save(data, overwrite=True)
    assert make_sm().load(data).t == 5


@pytest.mark.filterwarnings("ignore:StructuredSparseCode")
def test_group_families_are_part_of_the_fingerprint(tmp_path):
    # params() names a family by kind and counts: two families of 4 pairs over 8 units read the same
    from neurosim.models import osdl

    X = np.random.default_rng(0).standard_normal((4, 2, 5))

    def build(groups):
        return osdl.build_network(ns.ArrayStream(X), 8, groups=groups, batch=2, n_sweeps=1, code_iter=5).network

    pairs, shifted = [[0, 1], [2, 3], [4, 5], [6, 7]], [[1, 2], [3, 4], [5, 6], [7, 0]]
    a = build(pairs)
    a.run(2)
    path = a.save(tmp_path / "ck")
    b = build(shifted)
    with pytest.raises(ValueError, match=r"groups_digest: checkpoint "):
        b.load(path)
    assert b.t == 0
    assert build(pairs).load(path).t == 2
    assert build(ns.GroupStructure.from_sets(pairs, 8)).load(path).t == 2


def test_an_invalid_network_refuses_resume_before_loading(tmp_path):
    # the engine's validation used to run after the checkpoint was assigned
    def build():
        net = make_sm()
        net.add(ns.Population("z", 2))  # neither dynamics nor input: the network cannot run
        return net

    a = build()
    a.projections["W"].weights = np.full(a.projections["W"].shape, 0.5)
    a.save(tmp_path / "ck")
    b = build()
    w = b.projections["W"].weights.copy()
    with pytest.raises(ValueError, match="neither dynamics nor an input"):
        b.run(5, checkpoint=tmp_path / "ck", resume=True)
    assert np.array_equal(b.projections["W"].weights, w)


def test_a_mid_run_checkpoint_carries_the_solvers_unreported_count(tmp_path):
    # A solver counts the samples it did not converge on and the engine reports the count at the end of
    # the run. A checkpoint written mid-run holds the count so far; a run resumed from it reports the
    # same total as the run that was never interrupted.
    from neurosim.coding import NonConvergenceWarning

    rng = np.random.default_rng(0)
    D = rng.standard_normal((8, 5))
    D /= np.linalg.norm(D, axis=1, keepdims=True)
    X = rng.standard_normal((10, 5))

    def build():
        net = ns.Network(seed=0)
        x = ns.Population("x", 5)
        a = ns.Population("a", 8, dynamics=ns.SparseCode("feature_sign", lam=0.01, warm_start=False, max_iter=1))
        net.add(x, a)
        net.connect(ns.ArrayStream(X), x)
        net.add(ns.Projection("D", x, a, init=D))
        return net

    def counts(rec):
        return [w.message.args[0].split(" sample(s)")[0].rsplit(" ", 1)[1] for w in rec
                if issubclass(w.category, NonConvergenceWarning)]

    whole = build()
    with pytest.warns(NonConvergenceWarning) as rec:
        whole.run(10)
    (total,) = counts(rec)
    assert int(total) >= 5  # one iteration rarely solves a lasso problem
    path = tmp_path / "mid.npz"
    first = build()
    first.add_callback(lambda n: n.save(path) if n.t == 8 else None, phase="record", when="after")
    with pytest.warns(NonConvergenceWarning):
        first.run(10)
    resumed = build().load(path)
    assert resumed.t == 8
    assert resumed.populations["a"].dynamics.info[1] > 0  # the count of steps 1-8, not yet reported
    with pytest.warns(NonConvergenceWarning) as rec:
        resumed.run(2)
    assert counts(rec) == [total]


def test_resume_refuses_a_checkpoint_saved_with_other_parameters(tmp_path):
    # run(resume=True) loads as load(path) does, strictly: a network built with other parameters is refused
    # with the differences named, not silently resumed from the other circuit's state
    make_sm().run(10, checkpoint=tmp_path / "ck")
    other = make_sm(beta=0.5)
    with pytest.raises(ValueError, match="saved with other parameters"):
        other.run(20, checkpoint=tmp_path / "ck", resume=True)
    assert other.t == 0
