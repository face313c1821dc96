package ilptest_test

import (
	"testing"

	"github.com/sia-sched/sia/ilp/ilptest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHardCorpus: every corpus instance is valid, of the documented size,
// and the same seed gives the same problem.
func TestHardCorpus(t *testing.T) {
	for _, c := range ilptest.HardCorpus() {
		p := ilptest.Hard(c)
		require.NoError(t, p.Validate(), c.Name())
		assert.Len(t, p.Jobs, c.Jobs)
		assert.Len(t, p.Capacity, c.Types)
		total, opts := 0, 0
		for _, v := range p.Capacity {
			total += v
		}
		for _, j := range p.Jobs {
			opts += len(j.Options)
		}
		assert.InDelta(t, c.GPUs, total, 0.1*float64(c.GPUs), c.Name())
		t.Logf("%s: %d GPUs, %d options", c.Name(), total, opts)
	}
	c := ilptest.HardCorpus()[0]
	assert.Equal(t, ilptest.Hard(c), ilptest.Hard(c))
}
