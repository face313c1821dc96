package sia

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPlanBudget: the budget of a round with a deadline is consistent at
// every deadline: placement's reserve is sized for the starts the matrix
// may make (at most one per queued row it values and per free GPU), the
// queued rows it values fit the matrix's share of what is left after the
// reserve and the running jobs' rows (k·row ≤ matrixShare·(left − fixed −
// keep − min(k, free)·start)), and reserve and matrix together fit the time
// left. On 5,000 jobs (2,000 running) with a 20 ms deadline it values
// hundreds of queued rows; before the budget was one (placeReserve sized
// for every queued job that could start, 0.5 ms + 2 µs per job + 5 µs per
// start: 25 ms), the reserve alone exceeded the deadline, the matrix
// valued only the late cheap rows and the round started about 30 jobs.
func TestPlanBudget(t *testing.T) {
	if testing.Short() {
		t.Skip("large snapshot")
	}
	snap := largeSnapshot(t, 182, 6000, 1)
	for _, par := range []int{1, 4} {
		o := (&Options{Parallelism: par}).WithDefaults()
		t.Run(fmt.Sprintf("parallelism=%d", par), func(t *testing.T) { checkBudget(t, &snap, &o) })
	}
}

// checkBudget checks planBudget's properties at deadlines from past to a
// minute (see TestPlanBudget).
func checkBudget(t *testing.T, snap *Snapshot, o *Options) {
	cl, err := validateSnapshot(snap, o, true)
	require.NoError(t, err)
	running, queued, free := roundShape(snap, cl)
	require.InDelta(t, 5000, len(snap.Jobs), 50)
	require.Greater(t, queued, 2500)
	require.Greater(t, free, 1000)
	w := workers(o, len(snap.Jobs))
	jobs, types := len(snap.Jobs), time.Duration(len(cl.types))
	row := types * cheapRowCostPerType / time.Duration(w)
	for _, left := range []time.Duration{-time.Millisecond, 0, 2 * time.Millisecond, 5 * time.Millisecond, 20 * time.Millisecond, 100 * time.Millisecond, time.Second, time.Minute} {
		t.Run(fmt.Sprint(left), func(t *testing.T) {
			b := planBudget(left, snap, cl, o)
			assert.LessOrEqual(t, b.starts, min(queued, free))
			assert.Equal(t, placeReserve(jobs, b.starts, free), b.reserve)
			if !b.phased {
				assert.Equal(t, min(queued, free), b.starts, "time to spare: every start")
				assert.LessOrEqual(t, b.reserve+b.matrix, left)
				return
			}
			assert.GreaterOrEqual(t, b.capRows, b.floorRows)
			keep := time.Duration(running) * keepCostPerJob / time.Duration(w)
			if b.bareFirst {
				keep = time.Duration(running) * bareCostPerJob / time.Duration(w)
			}
			if b.capRows == math.MaxInt {
				return // every queued row fits
			}
			k := b.capRows * w // in all workers
			assert.Equal(t, min(queued, free, k), b.starts, "the starts are bounded by the rows valued")
			if b.capRows > b.floorRows {
				// The afforded rows fit the matrix's share.
				assert.LessOrEqual(t, float64(time.Duration(k-w)*row), matrixShare*float64(left-placeReserve(jobs, 0, free)-keep-time.Duration(min(k-w, free))*placeCostPerStart))
				assert.LessOrEqual(t, b.reserve+b.matrix, left, "reserve and matrix fit the time left")
			}
			if left >= 20*time.Millisecond {
				assert.GreaterOrEqual(t, k, 200, "hundreds of queued rows")
				assert.Less(t, b.reserve, left, "the reserve leaves the matrix time")
			}
		})
	}
}
