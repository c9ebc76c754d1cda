# A real fuzz run of every Go fuzz target, FUZZTIME each (go test fuzzes one
# target at a time). Inputs that fail are written by Go to
# <package>/testdata/fuzz/<Target>/: commit them, and plain `go test` runs
# them as seeds from then on (consumer/testdata/fuzz/FuzzValidate holds some).
FUZZTIME ?= 60s
# FUZZFLAGS=-parallel=1: one fuzzing worker (default: one per CPU), for a run
# beside other work (CI's lanes).
FUZZFLAGS ?=
# dir:FuzzName for every `func FuzzName` in a _test.go file; each runs in its
# folder, so the examples' own Go modules (examples/vecmath) fuzz too.
FUZZ_TARGETS = $(shell git ls-files '*_test.go' | xargs grep -o '^func Fuzz[A-Za-z0-9_]*' | \
	sed 's|^|./|; s|/[^/]*:func |:|' | sort -u)
.PHONY: fuzz
fuzz:
	@set -e; for pt in $(FUZZ_TARGETS); do \
	  pkg=$${pt%%:*}; t=$${pt##*:}; echo "== $$t in $$pkg for $(FUZZTIME)"; \
	  (cd $$pkg && go test -run='^$$' -fuzz="^$$t$$" -fuzztime=$(FUZZTIME) $(FUZZFLAGS) .); \
	done
