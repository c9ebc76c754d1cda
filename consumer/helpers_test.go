package consumer_test

import "github.com/godlpack/godlpack/internal/testkit/testprod"

// snapshot reads the process-wide owner and export counters.
var snapshot = testprod.Snapshot
