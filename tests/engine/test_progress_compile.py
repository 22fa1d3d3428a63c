"""The progress bar shows a compile phase and no ETA before a step has been timed (issue 26).

Numba compiles a segment on its first call (seconds to a minute); counting
that time as the steps' made tqdm print ``ETA 47:22``. The segment modules are
forgotten (``codegen._loaded``) so that the run's first segment is fresh in
this process, as in a new one.
"""

import logging
import re

import pytest

from neurosim import codegen, engine
from sm_helpers import make_sm

ETA = re.compile(r"<\d\d:\d\d")  # tqdm's "[elapsed<remaining, rate]"


def _frames(err):
    """The progress bar's successive renderings (tqdm redraws with carriage returns)."""
    return [f.strip() for f in err.replace("\n", "\r").split("\r") if "step" in f or "/" in f]


def _count(frame):
    m = re.search(r"\|\s*(\d+)/(\d+)", frame)
    return int(m.group(1)) if m else None


@pytest.mark.parametrize("cached, word", [(False, "compiling"), (True, "loading")])
def test_compile_phase_is_shown_without_eta(monkeypatch, capsys, caplog, cached, word):
    monkeypatch.setattr(codegen, "_loaded", {})  # the segment is compiled (or loaded) again on its first call
    monkeypatch.setattr(engine, "_in_disk_cache", lambda segment: cached)
    net = make_sm(every=50)
    with caplog.at_level(logging.INFO, logger="neurosim.engine"):
        # compiled before the first step (with "auto" a new structure's first steps run its Python form)
        net.run(3000, progress=True, leave=True, backend="compiled")  # leave: the closing frame stays
    frames = _frames(capsys.readouterr().err)
    phase = [i for i, f in enumerate(frames) if f"{word} segment 1" in f]
    assert phase, frames
    # the compile phase comes before any step is counted, and shows neither ETA nor rate
    assert all(_count(frames[i]) == 0 for i in phase)
    first_counted = next(i for i, f in enumerate(frames) if (_count(f) or 0) > 0)
    assert first_counted > phase[0]
    for f in frames[:first_counted + 1]:
        assert not ETA.search(f) and "step/s" not in f, f
    # once a segment has run without compiling, tqdm's ETA and rate come back (the last frame at least)
    assert ETA.search(frames[-1]) and "step/s" in frames[-1] and "3000/3000" in frames[-1]
    assert any(f"{word} segment 1" in r.getMessage() for r in caplog.records)
    assert any("segment 1 ready in" in r.getMessage() for r in caplog.records)


def test_without_progress_nothing_is_printed_but_the_log_line_is_given(monkeypatch, capsys, caplog):
    monkeypatch.setattr(codegen, "_loaded", {})
    net = make_sm(every=50)
    with caplog.at_level(logging.INFO, logger="neurosim.engine"):
        net.run(200, backend="compiled")
    assert capsys.readouterr().err == ""
    assert any("segment 1" in r.getMessage() and r.name == "neurosim.engine" for r in caplog.records)


def test_a_warm_segment_starts_without_a_compile_phase(capsys):
    net = make_sm(every=50)
    net.run(10, backend="compiled")  # compiled (or loaded) here
    net.run(3000, progress=True, leave=True)  # leave: the closing frame stays
    err = capsys.readouterr().err
    assert "compiling" not in err and "loading" not in err
    assert ETA.search(_frames(err)[-1])


def test_the_in_disk_cache_probe_answers_false_for_an_object_without_numba_cache():
    assert engine._in_disk_cache(object()) is False
