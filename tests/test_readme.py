"""The README's set-up commands and examples are the ones that work."""

import linecache
import pathlib
import re

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


@pytest.mark.parametrize("index", range(len(_blocks("python"))))
def test_readme_python_examples_run(index, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # examples may write files
    src = _blocks("python")[index]
    name = f"README.md python block {index}"
    # as for a script or notebook, the source must be retrievable (a local_rule's kernel is copied into segments)
    linecache.cache[name] = (len(src), None, src.splitlines(True), name)
    exec(compile(src, name, "exec"), {"__name__": "__main__"})
