"""The README's set-up commands and examples are the ones that work, after its first command alone."""

import importlib.metadata as md
import os
import pathlib
import re
import signal
import subprocess
import sys
import sysconfig
import venv

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()
DISTRIBUTION = "neurosim-circuits"


def _blocks(lang):
    return re.findall(rf"```{lang}\n(.*?)```", README, flags=re.S)


def _canonical(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def _core_closure(installed):
    """Names of the distributions ``pip install -e .`` installs: pyproject's dependencies, and theirs, no extras.

    The project's own requirements are read from pyproject.toml (the installed
    metadata may predate an edit; on Python 3.10, without tomllib, from the
    installed metadata); those of the others from their installed metadata,
    with the extras that a requirement names (``foo[bar]``).
    """
    from packaging.requirements import Requirement

    try:
        import tomllib  # Python >= 3.11
    except ImportError:
        ours = installed[DISTRIBUTION].requires or []
    else:
        ours = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    todo = [(Requirement(text), "") for text in ours]
    seen: dict[str, set] = {}
    while todo:
        req, extra = todo.pop()
        if req.marker is not None and not req.marker.evaluate({"extra": extra}):
            continue
        name = _canonical(req.name)
        extras = set(req.extras) | {""}
        if extras <= seen.get(name, set()):
            continue
        if name not in installed:
            pytest.fail(f"{req.name}, a dependency of {DISTRIBUTION}, is not installed in "
                        f"{sysconfig.get_paths()['purelib']}")
        seen.setdefault(name, set()).update(extras)
        todo += [(Requirement(text), e) for text in installed[name].requires or [] for e in extras]
    return set(seen)


@pytest.fixture(scope="module")
def core_python(tmp_path_factory):
    """The python of a virtual environment holding what ``python -m pip install -e .`` alone installs.

    The README promises that its examples run after its first command. This
    environment has neurosim (as installed here, e.g. editable) and the
    distributions of its core dependencies, linked from this environment's
    site-packages, and none of the extras (test, dask, zarr, peers, cuda, ...)
    that the test environment also holds: an example that needs one fails
    here with ModuleNotFoundError, as it would for a user.
    """
    here = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    installed = {}
    for dist in md.distributions(path=sorted(here)):
        installed.setdefault(_canonical(dist.metadata["Name"]), dist)
    if DISTRIBUTION not in installed:
        pytest.skip(f"{DISTRIBUTION} is not installed in this environment's site-packages")
    env = tmp_path_factory.mktemp("core-env")
    venv.create(env, with_pip=False, symlinks=True)
    python = env / "bin" / "python"
    target = pathlib.Path(subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                         capture_output=True, text=True, check=True).stdout.strip())
    for name in _core_closure(installed) | {DISTRIBUTION}:
        dist = installed[name]
        if dist.files is None:
            pytest.fail(f"{name} lists no files (its RECORD is missing): it cannot be linked into {env}")
        base = pathlib.Path(dist.locate_file(""))
        # the top-level entries of its files (packages, modules, .pth files, its .dist-info); not its scripts in bin/
        for top in {f.parts[0] for f in dist.files if f.parts[0] not in ("..", "__pycache__")}:
            if not (target / top).exists():
                (target / top).symlink_to(base / top)
    return python


def test_readme_opens_with_the_two_setup_commands_and_ci_runs_the_second():
    first = _blocks("bash")[0].strip().splitlines()
    assert len(first) == 2
    assert first[0].startswith("python -m pip install -e . && python -m neurosim run ")
    assert first[1] == 'python -m pip install -e ".[test]" && python -m pytest'
    assert first[1] in (ROOT / ".ci" / "run").read_text().splitlines()


def test_flagship_named_in_the_readme_is_listed_by_the_cli(capsys):
    from neurosim.cli import main

    name = _blocks("bash")[0].split("neurosim run ")[1].split()[0]
    main(["list"])
    assert name in capsys.readouterr().out.split()


@pytest.mark.slow
def test_the_core_environment_has_neurosim_and_its_dependencies_and_no_extra(core_python, tmp_path):
    # guards the fixture: the examples would pass vacuously in an environment that still held the extras
    code = ("import importlib.util, neurosim, numba, sklearn, xarray; print(neurosim.__file__); "
            "print([m for m in ('pytest', 'hypothesis', 'distributed', 'numpydoc') if importlib.util.find_spec(m)])")
    proc = subprocess.run([str(core_python), "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    where, extras = proc.stdout.splitlines()
    assert pathlib.Path(where).resolve() == ROOT / "neurosim" / "__init__.py"
    assert extras == "[]"


@pytest.mark.slow
@pytest.mark.parametrize("index", range(len(_blocks("python"))))
def test_readme_python_examples_run_as_scripts(index, tmp_path, core_python):
    """Each python block, saved as a file and run with ``python file.py``, as a user runs it after ``pip install -e .``.

    Not exec() in this process: a sweep's worker processes import the script
    that started them, so an example without its ``__main__`` guard works
    under exec and never finished as a script (issue 23). The script's own
    file also makes a local_rule's source retrievable, as for any user's.
    The interpreter is that of :func:`core_python`: an example that needs
    an extra fails (three did, needing scikit-learn, issue 40).
    """
    script = tmp_path / f"readme_block_{index}.py"
    script.write_text(_blocks("python")[index])
    # a session of its own: on a timeout the example's worker processes are stopped with it
    proc = subprocess.Popen([str(core_python), str(script)], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"README python block {index} did not finish in 300 s as a script:\n{err[-3000:]}")
    assert proc.returncode == 0, f"README python block {index} failed as a script:\n{err[-3000:]}"
