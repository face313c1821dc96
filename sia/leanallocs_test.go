package sia

import (
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// twoCopies returns snap's cluster and jobs twice, the copy's node and
// job IDs suffixed with "~2" (its running jobs placed on the copied nodes
// exactly as the originals): a snapshot of twice the size with the same
// types, node shapes and jobs.
func twoCopies(snap Snapshot) Snapshot {
	out := snap
	out.Nodes = append(append([]Node(nil), snap.Nodes...), snap.Nodes...)
	for k := len(snap.Nodes); k < len(out.Nodes); k++ {
		out.Nodes[k].ID += "~2"
	}
	out.Jobs = append(append([]Job(nil), snap.Jobs...), snap.Jobs...)
	for i := len(snap.Jobs); i < len(out.Jobs); i++ {
		j := &out.Jobs[i]
		j.ID += "~2"
		if pl := j.State.Current.Placement; len(pl) > 0 {
			moved := make([]GPU, len(pl))
			for g := range pl {
				moved[g] = GPU{Node: pl[g].Node + "~2", Index: pl[g].Index}
			}
			j.State.Current.Placement = moved
		}
	}
	return out
}

// TestLeanRoundAllocsPerJob: a lean round allocates nothing per job (each
// per-job array is one block): on a snapshot twice the size (twoCopies:
// twice the nodes, running and queued jobs) it makes at most a few more
// allocations, whatever the number of jobs. A structural bound (no clock):
// one allocation per job, map or slice, adds thousands.
func TestLeanRoundAllocsPerJob(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's allocations are counted too")
	}
	snap := largeSnapshot(t, 32, 3000, 1)
	big := twoCopies(snap)
	require.NoError(t, big.Validate())
	one := floorAllocs(t, snap, false)
	two := floorAllocs(t, big, false)
	t.Logf("%d jobs: %.0f allocations; %d jobs: %.0f", len(snap.Jobs), one, len(big.Jobs), two)
	// A few more: slices that grow by doubling, and the fill's starts on
	// twice the free GPUs. Before the pinned jobs' bounds were checked
	// without a message and the rigid jobs' shapes without a slice each,
	// this added 98.
	assert.LessOrEqual(t, two-one, float64(16), "allocations added by %s more jobs", strconv.Itoa(len(snap.Jobs)))
}

// TestAppendFixedTwin: cluster.appendFixed gives configset.Set.Fixed's
// shapes, in its order, on clusters of one and several node sizes per
// type, for every count up to past each type's capacity.
func TestAppendFixedTwin(t *testing.T) {
	for _, nodes := range [][]Node{
		heteroCluster(4),
		{{ID: "a", Type: "x", GPUs: 8}, {ID: "b", Type: "x", GPUs: 6}, {ID: "c", Type: "x", GPUs: 6}, {ID: "d", Type: "y", GPUs: 4}, {ID: "e", Type: "x", GPUs: 3}},
		{{ID: "a", Type: "x", GPUs: 16}, {ID: "b", Type: "y", GPUs: 5}},
	} {
		o := (*Options)(nil).WithDefaults()
		cl, err := validateSnapshot(&Snapshot{Now: time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC), Nodes: nodes}, &o, true)
		require.NoError(t, err)
		for _, ty := range cl.types {
			for g := -1; g <= cl.capacity[ty]+2; g++ {
				want := cl.set.Fixed(ty, g)
				got := cl.appendFixed(nil, ty, g)
				assert.Equal(t, len(want), len(got), "type %s, %d GPUs", ty, g)
				if len(want) > 0 {
					assert.Equal(t, want, got, "type %s, %d GPUs", ty, g)
				}
			}
		}
	}
}

// TestFillerOwnersTwin: the filler of a lean layout reading validation's
// GPU owners (layout.gpus) counts what the filler counting the layout's
// GPUs counts: idle GPUs per node, the pools' node lists, the GPUs held
// per reserved type and per quota, and the free GPUs of every node with idle GPUs; on fleets
// whose types have nodes of two alternating sizes, with reservations and
// quotas.
func TestFillerOwnersTwin(t *testing.T) {
	for _, c := range []struct {
		name string
		snap Snapshot
	}{
		{"hetero", largeSnapshot(t, 8, 600, 3)},
		{"fleet", fleetSnapshot(t, placeFleet{Jobs: 400, GPUs: 800, Types: 4, Seed: 2})},
	} {
		t.Run(c.name, func(t *testing.T) {
			snap := c.snap
			snap.Reserved = map[string]int{snap.Nodes[0].Type: 3}
			var ids []string
			for i := range snap.Jobs {
				if i%3 == 0 {
					ids = append(ids, snap.Jobs[i].ID)
				}
			}
			snap.Quotas = []Quota{{Name: "q", Jobs: ids, Limit: 1 << 20}, {Name: "t", Type: snap.Nodes[len(snap.Nodes)-1].Type, Jobs: ids[:len(ids)/2], Limit: 1 << 20}}
			o := (*Options)(nil).WithDefaults()
			cl, err := validateSnapshot(&snap, &o, true)
			require.NoError(t, err)
			m, _, _, ok := leanKept(&snap, &o, cl, &leanScratch{})
			require.True(t, ok)
			lay := leanLayout(&snap, m)
			lay.nodeAt = cl.nodeAt
			counted := newFiller(&snap, m, &lay)
			lay.gpus = cl.gpus
			owners := newFiller(&snap, m, &lay)
			require.NotNil(t, counted)
			require.NotNil(t, owners)
			assert.Equal(t, counted.idle, owners.idle)
			assert.Equal(t, counted.pools, owners.pools)
			assert.Equal(t, counted.poolOf, owners.poolOf)
			assert.Equal(t, counted.typeOf, owners.typeOf)
			assert.Equal(t, counted.types, owners.types)
			assert.Equal(t, counted.typeUse, owners.typeUse)
			assert.Equal(t, counted.qUse, owners.qUse)
			assert.Positive(t, len(counted.pools))
			for k := range snap.Nodes {
				if counted.idle[k] > 0 { // the nodes the fill may place on
					assert.Equal(t, counted.freeOn(k), owners.freeOn(k), "node %s", snap.Nodes[k].ID)
				}
			}
		})
	}
}
