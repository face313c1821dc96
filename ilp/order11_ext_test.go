package ilp_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/ilp"
)

// TestQuickGreedyOrderInterruptible: quickGreedy pays for its order per
// job its pass takes, so a pass whose greedyEnd comes while it runs stops
// within a few looks at the clock: on 10,000 jobs, started 0 to 3 ms of
// the thread's CPU before its greedyEnd, at no offset does the least of
// three calls run more than 0.4 ms past it (one call alone read 0.63 and
// 0.82 ms in two CI runs' -tags clp passes, where its tries read 0.1-0.3:
// the thread clock's catch-up, see QuickGreedyPastEnd). Before, one sort of every job (1-2 ms here, which nothing
// interrupts) ran whole whenever the pass computing the profits ended
// before greedyEnd, and the pass after it stopped only then.
func TestQuickGreedyOrderInterruptible(t *testing.T) {
	if !ilp.ThreadCPUClock || raceEnabled {
		t.Skip("needs a per-thread CPU clock (Linux), without the race detector")
	}
	var offsets []time.Duration
	for off := time.Duration(0); off <= 3*time.Millisecond; off += 100 * time.Microsecond {
		offsets = append(offsets, off)
	}
	worst, at, err := ilp.QuickGreedyPastEnd(10000, offsets)
	require.NoError(t, err)
	t.Logf("most CPU past greedyEnd %v (greedyEnd %v after the start)", worst, at)
	assert.LessOrEqual(t, worst, 400*time.Microsecond, "greedyEnd %v after the start", at)
}
