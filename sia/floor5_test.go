package sia

import (
	"math/rand/v2"
	"strconv"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestJobIDsTwin: the pointer-free ID table validation uses to find
// duplicate job IDs answers as a map of the IDs does, on sets of every
// size (the table's doubling and wrap-around) with many duplicates.
func TestJobIDsTwin(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 5))
	for _, n := range []int{0, 1, 2, 5, 6, 7, 13, 100, 1000, 5000} {
		jobs := make([]Job, n)
		for i := range jobs {
			jobs[i].ID = "j" + strconv.Itoa(rng.IntN(max(1, n)))
		}
		set, twin := newJobIDs(n), map[string]bool{}
		for i := range jobs {
			_, dup := twin[jobs[i].ID]
			twin[jobs[i].ID] = true
			require.Equal(t, dup, set.add(jobs, i), "n=%d job %d %q", n, i, jobs[i].ID)
		}
		assert.LessOrEqual(t, 4*len(twin), 3*len(set.slot)+3, "n=%d: the table is at most 3/4 full", n)
	}
}
