"""Every sabotage of tools/mutants.py still applies exactly once to the code
it names: a refactor that changes the text a mutant replaces makes `make
mutants` refuse to run, and this says so in `make test`, before CI's mutants
step does."""
import os
import sys

from gomod import ROOT

sys.path.insert(0, os.path.join(ROOT, "tools"))
import mutants  # noqa: E402


def test_every_sabotage_applies_exactly_once():
    stale = []
    for m in mutants.MUTANTS:
        with open(os.path.join(ROOT, m.file), encoding="utf-8") as f:
            if f.read().count(m.old) != 1:
                stale.append(m.name)
    assert stale == [], "update tools/mutants.py: " + ", ".join(stale)
    assert len(mutants.MUTANTS) >= 60
