package sia_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/sia"
)

// TestProbe5SharedSnapshotConcurrent: a host runs what-if rounds
// concurrently on one snapshot value (the same Jobs, Nodes, Placement and
// Quotas memory, the same trackers), on Schedulers of different options
// and Parallelism 1..4 (go test -race). Each plan equals its sequential
// twin and the snapshot is unchanged.
func TestProbe5SharedSnapshotConcurrent(t *testing.T) {
	for seed := uint64(0); seed < 3; seed++ {
		h := newLoopHost(100 + seed)
		var scheds []*sia.Scheduler
		for k, o := range probe5LoopOptions {
			o.RoundTimeout = -1
			o.Parallelism = 1 + k
			s, err := sia.New(&o)
			require.NoError(t, err)
			scheds = append(scheds, s)
		}
		for r := 0; r < 12; r++ { // warm the trackers and fragment the fleet
			h.churn()
			plan := h.roundOrFix(t, scheds[0])
			h.snap.Advance(&plan, h.snap.Now.Add(time.Duration(30+h.rng.IntN(300))*time.Second))
			h.observe(t, plan)
		}
		h.snap.DropDepartedNodes()
		if err := h.snap.Validate(); err != nil {
			h.roundOrFix(t, scheds[0]) // let the host fix it first
		}
		before := cloneSnap(h.snap)
		want := make([]sia.Plan, len(scheds))
		for k, s := range scheds {
			p, err := s.Round(context.Background(), h.snap)
			require.NoError(t, err)
			want[k] = p
		}
		const each = 3
		got := make([][]sia.Plan, len(scheds))
		var wg sync.WaitGroup
		for k := range scheds {
			got[k] = make([]sia.Plan, each)
			for e := 0; e < each; e++ {
				wg.Add(1)
				go func(k, e int) {
					defer wg.Done()
					p, err := scheds[k].Round(context.Background(), h.snap)
					assert.NoError(t, err)
					got[k][e] = p
				}(k, e)
			}
		}
		wg.Wait()
		for k := range scheds {
			for e := 0; e < each; e++ {
				assert.Equal(t, want[k].Decisions, got[k][e].Decisions, "seed %d: scheduler %d, run %d", seed, k, e)
			}
		}
		assert.Equal(t, before, h.snap, "concurrent rounds changed the snapshot")
		assert.NotEmpty(t, h.snap.Jobs)
	}
}
