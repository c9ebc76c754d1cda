# make wheels: manylinux2014 release wheels, x86-64 and aarch64, for every
# CPython 3.11-3.13 found, built with zig from PyPI (tools/zigcc.py), repaired
# and checked by auditwheel, then run: x86-64 in fresh venvs (demo and the
# NumPy-only suite), aarch64 under qemu-user where Debian has that CPython
# (mk/wheels.sh, mk/qemu-arm64.sh). `make wheels-ci` (CI): BASEPYTHON's
# version, x86-64 only, demo only.
WHEELS_OUT ?= dist/wheels
.PHONY: wheels wheels-ci
wheels: $(WHEEL_TOOLS)/.deps
	OUT=$(WHEELS_OUT) WHEEL_TOOLS=$(WHEEL_TOOLS) bash mk/wheels.sh

wheels-ci: $(WHEEL_TOOLS)/.deps
	OUT=$(WHEELS_OUT) WHEEL_TOOLS=$(WHEEL_TOOLS) ARCHS=x86_64 SUITE=0 \
	  PYTHONS=$$($(BASEPYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])') bash mk/wheels.sh
