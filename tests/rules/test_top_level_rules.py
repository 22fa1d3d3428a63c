"""Every rule the README and docs/rules.md show is an attribute of ``neurosim`` (issue 26)."""

import pathlib
import re

import neurosim as ns
import neurosim.rules

ROOT = pathlib.Path(__file__).resolve().parents[2]
TEXTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def _ns_names():
    """Names written ``ns.Name`` in README.md and docs/*.md (code and prose)."""
    names = set()
    for path in TEXTS:
        names |= set(re.findall(r"\bns\.([A-Za-z_]\w*)", path.read_text()))
    return names


def _rule_table_names():
    """First-column names of docs/rules.md's table of ready-made rules (`` `Sanger(rate)` `` -> Sanger)."""
    text = (ROOT / "docs" / "rules.md").read_text()
    section = text.split("## Ready-made rules", 1)[1].split("\n## ", 1)[0]
    return set(re.findall(r"^\| `([A-Za-z_]\w*)\(", section, flags=re.M))


def test_the_parsers_find_what_the_docs_show():
    assert {"Oja", "Network", "local_rule"} <= _ns_names()
    assert {"Oja", "Sanger", "OjaSubspace", "BCM", "Foldiak", "Delta", "NormalizedHebbian"} <= _rule_table_names()


def test_every_name_written_ns_dot_is_public_at_top_level():
    missing = sorted(n for n in _ns_names() if n not in ns.__all__ or not hasattr(ns, n))
    assert missing == []


def test_every_ready_made_rule_is_public_at_top_level_and_the_same_class():
    for name in _rule_table_names():
        assert name in ns.__all__, name
        assert getattr(ns, name) is getattr(neurosim.rules, name)
        assert issubclass(getattr(ns, name), ns.Rule)
