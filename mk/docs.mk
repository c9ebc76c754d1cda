# make docs: the API reference, generated from the docstrings and the stubs
# (python/godlpack/*.pyi) by pdoc into docs/api/ (git-ignored: built, not committed).
DOC_TOOLS ?= .doctools
.PHONY: docs
$(DOC_TOOLS)/.deps:
	$(BASEPYTHON) -m venv $(DOC_TOOLS)
	$(DOC_TOOLS)/bin/pip install -q --disable-pip-version-check pdoc numpy
	touch $@

docs: ext $(DOC_TOOLS)/.deps
	rm -rf docs/api
	PYTHONPATH=python $(DOC_TOOLS)/bin/pdoc -o docs/api --docformat markdown godlpack godlpack.conformance
	@echo "API reference: docs/api/index.html"
