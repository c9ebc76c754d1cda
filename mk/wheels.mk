# make wheels: manylinux2014 release wheels, x86-64 and aarch64, for CPython
# 3.11-3.15 (3.14 and 3.15 from mk/debian-pythons.sh's Debian root where the
# machine lacks them), built with zig from PyPI (tools/zigcc.py), repaired
# and checked by auditwheel, then run: x86-64 in fresh venvs (demo and the
# NumPy-only suite), aarch64 under qemu-user where Debian has that CPython
# (mk/wheels.sh, mk/qemu-arm64.sh). `make wheels-ci` (CI): BASEPYTHON's
# version, x86-64 only, the demo and the tests that must hold against an
# installed wheel rather than the source tree (test_scaffold.py failed there).
# Beside them, `make wheels-foreign`: win_amd64, macosx_12_0_arm64,
# macosx_12_0_x86_64 and macosx_12_0_universal2 (3.13, 3.14) wheels for every
# CPython each target has headers for
# (tools/crosswheel.py; built and statically checked, not run: docs/install.md).
WHEELS_OUT ?= dist/wheels
.PHONY: wheels wheels-ci wheels-foreign
wheels: $(WHEEL_TOOLS)/.deps wheels-foreign
	OUT=$(WHEELS_OUT) WHEEL_TOOLS=$(WHEEL_TOOLS) bash mk/wheels.sh

wheels-foreign: cross-deps
	$(CROSS_ENV) $(PYTHON) tools/crosswheel.py -w $(WHEELS_OUT)

wheels-ci: $(WHEEL_TOOLS)/.deps
	OUT=$(WHEELS_OUT) WHEEL_TOOLS=$(WHEEL_TOOLS) ARCHS=x86_64 SUITE=1 TESTS="tooling/test_scaffold.py tooling/test_packaging.py" \
	  PYTHONS=$$($(BASEPYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])') bash mk/wheels.sh
