"""The README's set-up commands and examples are the ones that work."""

import os
import pathlib
import re
import signal
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def _blocks(lang):
    return re.findall(rf"```{lang}\n(.*?)```", README, flags=re.S)


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
@pytest.mark.parametrize("index", range(len(_blocks("python"))))
def test_readme_python_examples_run_as_scripts(index, tmp_path):
    """Each python block, saved as a file and run with ``python file.py``, as a user runs it.

    Not exec() in this process: a sweep's worker processes import the script
    that started them, so an example without its ``__main__`` guard works
    under exec and never finished as a script (issue 23). The script's own
    file also makes a local_rule's source retrievable, as for any user's.
    """
    script = tmp_path / f"readme_block_{index}.py"
    script.write_text(_blocks("python")[index])
    # a session of its own: on a timeout the example's worker processes are stopped with it
    proc = subprocess.Popen([sys.executable, str(script)], cwd=tmp_path, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        out, err = proc.communicate(timeout=300)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        out, err = proc.communicate()
        pytest.fail(f"README python block {index} did not finish in 300 s as a script:\n{err[-3000:]}")
    assert proc.returncode == 0, f"README python block {index} failed as a script:\n{err[-3000:]}"
