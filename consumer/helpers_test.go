package consumer_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/godlpack/godlpack/producer"
)

// counts snapshots the producer's process-wide owner and export counters.
type counts struct{ owners, exports int64 }

func snapshot() counts { return counts{producer.LiveOwners(), producer.LiveExports()} }

func (c counts) delta() counts {
	return counts{producer.LiveOwners() - c.owners, producer.LiveExports() - c.exports}
}

func (c counts) requireDelta(t *testing.T, owners, exports int64, msgAndArgs ...any) {
	t.Helper()
	require.Equal(t, counts{owners, exports}, c.delta(), msgAndArgs...)
}
