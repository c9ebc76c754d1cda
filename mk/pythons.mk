# make test-pythons: build, import and run the NumPy-only suite with every
# CPython >= 3.11 found (pyenv or python3.X on PATH); missing ones are skipped.
.PHONY: test-pythons
test-pythons:
	bash mk/pythons.sh
