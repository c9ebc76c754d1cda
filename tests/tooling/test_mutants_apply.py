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


def test_every_recorded_killer_names_a_mutant_and_one_of_its_tests():
    """tools/mutant_killers.json: each mutant's killing test, run first. A
    stale entry costs only time, so say it here: a renamed mutant or test
    file (--record-killers writes the file again)."""
    import json

    with open(mutants.KILLERS_FILE, encoding="utf-8") as f:
        killers = json.load(f)
    by_name = {m.name: m for m in mutants.MUTANTS}
    stale = []
    for name, killer in killers.items():
        m = by_name.get(name)
        files = {p.split("::")[0] for p in m.pytest} if m else set()
        if m is None or (killer != mutants.GO_TESTS and killer.split("::")[0] not in files) or \
                (killer == mutants.GO_TESTS and not m.go):
            stale.append(f"{name}: {killer}")
    assert stale == [], "stale entries (run tools/mutants.py --record-killers): " + "; ".join(stale)
    # A mutant that crashes its test process names no test: it runs its whole list.
    assert len(killers) >= len(mutants.MUTANTS) - 10, "mutants without a recorded killer run their whole list"
