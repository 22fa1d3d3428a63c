"""progress=None (auto): a bar when someone watches (a terminal), silence in batch runs, one rule everywhere."""

import fcntl
import os
import pty
import struct
import subprocess
import sys
import termios

import pytest

from neurosim import progress

SCRIPT = """
import numpy as np
import neurosim as ns
from neurosim.streams import ArrayStream

def model(eta, seed):
    net = ns.Network(seed=seed, name=f"net{seed}")
    x, y = ns.Population("x", 3), ns.Population("y", 2, dynamics=ns.Linear())
    net.add(x, y)
    net.connect(ArrayStream(np.random.default_rng(seed).normal(size=(50, 3))), x)
    net.add(ns.Projection("W", x, y, rule=ns.Oja(eta)))
    net.record(y, "activity")
    return net

if __name__ == "__main__":
    model(0.01, 0).run(50)
    print("RUN DONE", flush=True)
    ns.Sweep(model, {"eta": [0.01, 0.02]}, seeds=1, steps=5, name="the_sweep").run()
    print("SWEEP DONE", flush=True)
"""


def _run(tmp_path, stderr_is_a_terminal, **env):
    script = tmp_path / "script.py"
    script.write_text(SCRIPT)
    env = {k: v for k, v in dict(os.environ, **env).items() if k != progress.ENV or k in env}
    if not stderr_is_a_terminal:
        r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=env, timeout=300,
                           cwd=tmp_path)
        assert r.returncode == 0, r.stderr
        return r.stdout, r.stderr
    main, child = pty.openpty()
    # a terminal of 30 rows by 120 columns: tqdm fits its bar to the width, and a new pty has none
    fcntl.ioctl(child, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 120, 0, 0))
    try:
        p = subprocess.Popen([sys.executable, str(script)], stdout=subprocess.PIPE, stderr=child, env=env,
                             cwd=tmp_path, text=True)
        os.close(child)
        child = None
        chunks = []
        while True:
            try:
                data = os.read(main, 65536)
            except OSError:  # the terminal's other end closed: the process is gone
                break
            if not data:
                break
            chunks.append(data)
        out = p.communicate(timeout=300)[0]
        assert p.returncode == 0, b"".join(chunks).decode(errors="replace")
    finally:
        os.close(main)
        if child is not None:
            os.close(child)
    return out, b"".join(chunks).decode(errors="replace")


def test_the_rule():
    assert progress.resolve(True) is True and progress.resolve(False) is False
    with pytest.raises(TypeError, match="progress must be a bool"):
        progress.resolve("yes")


@pytest.mark.parametrize("value, expected", [("1", True), ("0", False)])
def test_the_environment_decides_what_is_left_on_auto(monkeypatch, value, expected):
    monkeypatch.setenv(progress.ENV, value)
    assert progress.resolve(None) is expected
    assert progress.resolve(not expected) is (not expected)  # an explicit argument wins
    with progress.quiet():
        assert progress.resolve(None) is False and progress.resolve(True) is True


def test_a_bad_environment_value_is_named(monkeypatch):
    monkeypatch.setenv(progress.ENV, "yes")
    with pytest.raises(ValueError, match="NEUROSIM_PROGRESS must be 0 or 1"):
        progress.resolve(None)


def test_auto_follows_whether_standard_error_is_a_terminal(monkeypatch):
    monkeypatch.delenv(progress.ENV, raising=False)

    class Stream:
        def __init__(self, tty):
            self.tty = tty

        def isatty(self):
            return self.tty

    monkeypatch.setattr(sys, "stderr", Stream(True))
    assert progress.resolve(None) is True
    monkeypatch.setattr(sys, "stderr", Stream(False))
    assert progress.resolve(None) is False


@pytest.mark.slow
def test_a_script_in_a_terminal_shows_bars_and_a_batch_run_is_silent(tmp_path):
    out, err = _run(tmp_path, True)
    assert "RUN DONE" in out and "SWEEP DONE" in out
    # the run's bar (named after its network) and the sweep's bar over its two runs; none for the sweep's runs
    assert "net0" in err and "50/50" in err and "the_sweep" in err and "2/2" in err
    assert "net1" not in err and "5/5" not in err
    out, err = _run(tmp_path, False)
    assert "RUN DONE" in out and "SWEEP DONE" in out and "net0" not in err and "the_sweep" not in err
    out, err = _run(tmp_path, False, NEUROSIM_PROGRESS="1")  # a redirected script that asks for the bars
    assert "net0" in err and "the_sweep" in err and "5/5" not in err


def test_dictionary_learning_shows_its_alternations_and_the_objective(capsys):
    import numpy as np

    from neurosim.coding.basis import learn_bases
    from neurosim.estimators import DictionaryLearner

    X = np.random.default_rng(0).normal(size=(30, 6))
    learn_bases(X, 4, 0.1, max_iter=3, tol=0.0, seed=0, progress=True)
    err = capsys.readouterr().err  # tqdm redraws at most every 0.1 s: the first frame is sure, the last not
    assert "learn_bases" in err and "0/3" in err and "alternation" in err
    learn_bases(X, 4, 0.1, max_iter=3, tol=0.0, seed=0, progress=False)
    assert capsys.readouterr().err == ""
    learner = DictionaryLearner(4, alpha=0.1, max_iter=2, tol=0.0, random_state=0, progress=True).fit(X)
    assert "0/2" in capsys.readouterr().err and learner.get_params()["progress"] is True
    DictionaryLearner(4, alpha=0.1, max_iter=2, tol=0.0, random_state=0).fit(X)  # auto: stderr is no terminal here
    assert capsys.readouterr().err == ""
    with pytest.raises(TypeError, match="progress"):
        DictionaryLearner(4, progress="yes").fit(X)
