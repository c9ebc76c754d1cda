# One-line sabotages of the core invariants (tools/mutants.py), each built in a
# copy of the tree and run against the tests that should catch it; fails if
# any survives. MUTANTS="substring ..." runs a subset; it takes tools/mutants.py's
# flags too (CI: MUTANTS="--baseline collect").
MUTANTS ?=
.PHONY: mutants
mutants: venv probe
	$(PYTHON) tools/mutants.py $(MUTANTS)
