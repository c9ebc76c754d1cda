# make wine-test: godlpack's Windows build run here under Wine (tools/wine_test.py):
# the Windows CPython of the cross builds' jar imports the cross-built win_amd64
# wheel and runs the core test files, a pyext extension's checks (opmod), Go
# runtimes side by side, a `python -m godlpack new` project's own tests
# (its module generated from its //pyext: directives, then cross-built), and
# the stable ABI: opmod.pyd and the project's cp312-abi3 wheel, built with
# CPython 3.12's headers against python3.dll, each run on 3.13.
# Installs Debian's wine when missing; the Windows CPython, its wheels and the
# Wine-only shims (tools/wine_shims.py) are cached in CROSS_CACHE/wine
# (mk/cross.mk); the Wine prefix ($TMPDIR/godlpack-wine-X-prefix) is not.
.PHONY: wine-test
wine-test: cross-deps
	$(CROSS_ENV) $(PYTHON) tools/wine_test.py
