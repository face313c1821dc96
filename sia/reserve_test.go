package sia

import (
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPlaceReserveByStarts: the time Round keeps for placement grows with
// the requests placement will place anew (queued jobs, at most one per free
// GPU), not with the job count alone: the same jobs on a cluster whose
// GPUs are all withheld (Snapshot.Reserved: nothing can start) get a
// reserve smaller by the starts' cost, and a round whose queued jobs can
// all start gets at least placeCostPerStart for each. Before the reserve
// was sized by the work (2 µs per job whatever it did), both rounds got
// the same reserve, and rounds starting 1,500 jobs at a 100 ms deadline
// spent up to 17 ms of CPU past D in placement.
func TestPlaceReserveByStarts(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	nodes := heteroCluster(8) // 512 GPUs
	jobs := genJobs(rand.New(rand.NewPCG(3, 7)), 200, now)
	o := (&Options{}).WithDefaults()
	reserve := func(reserved map[string]int) time.Duration {
		snap := Snapshot{Now: now, Nodes: nodes, Jobs: jobs, Reserved: reserved}
		cl, err := validateSnapshot(&snap, &o, true)
		require.NoError(t, err)
		b := planBudget(time.Minute, &snap, cl, &o) // time to spare: the whole matrix
		require.False(t, b.phased)
		return b.reserve
	}
	open := reserve(nil)
	full := reserve(map[string]int{"t4": 8 * 6 * 4, "a100": 8 * 2 * 8, "rtx": 8 * 3 * 8})
	assert.GreaterOrEqual(t, open, placeCostFixed+200*(placeCostPerJob+placeCostPerStart), "200 queued jobs, 512 free GPUs: every job may start")
	assert.Equal(t, placeCostFixed+200*placeCostPerJob, full, "no free GPU: no start")
	assert.Equal(t, 200*placeCostPerStart+512*placeCostPerGPU, open-full, "200 starts on 512 free GPUs")

	// Fewer free GPUs than queued jobs: one start per free GPU.
	few := reserve(map[string]int{"t4": 8*6*4 - 10, "a100": 8 * 2 * 8, "rtx": 8 * 3 * 8})
	assert.Equal(t, 10*(placeCostPerStart+placeCostPerGPU), few-full)
}

// TestPlaceReserveByFreeGPUs: placement lists every GPU a start takes, work
// that cannot be cut short, so the reserve grows with the free GPUs the
// starts may take, not only with their number: on nodes of thousands of
// GPUs the same starts may place a hundred times the GPUs. Before the
// reserve knew only the starts, and a 20 ms round on 10⁶ GPUs started 424
// jobs on 930,000 GPUs and spent 100 ms of CPU (TestProbeHugeNodes).
func TestPlaceReserveByFreeGPUs(t *testing.T) {
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	jobs := genJobs(rand.New(rand.NewPCG(3, 7)), 20, now)
	o := (&Options{}).WithDefaults()
	reserve := func(gpusPerNode int) time.Duration {
		nodes := []Node{{ID: "a", Type: "t4", GPUs: gpusPerNode}, {ID: "b", Type: "a100", GPUs: gpusPerNode}, {ID: "c", Type: "rtx", GPUs: gpusPerNode}}
		snap := Snapshot{Now: now, Nodes: nodes, Jobs: jobs}
		cl, err := validateSnapshot(&snap, &o, true)
		require.NoError(t, err)
		return planBudget(time.Minute, &snap, cl, &o).reserve
	}
	small, huge := reserve(64), reserve(4096)
	assert.Equal(t, 3*(4096-64)*placeCostPerGPU, huge-small, "20 starts either way; 12,096 more free GPUs")
}
