package sia

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
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

// mixedCluster is heteroCluster with nodes of two sizes per type (several
// pools per type, as the fleets of examples/round-deadline have).
func mixedCluster(k int) []Node {
	var c []Node
	add := func(t string, n, g int) {
		for i := 0; i < n*k; i++ {
			c = append(c, Node{ID: fmt.Sprintf("%s-%d-%d", t, g, i), Type: t, GPUs: g})
		}
	}
	add("t4", 4, 4)
	add("t4", 2, 6)
	add("a100", 1, 8)
	add("a100", 1, 12)
	add("rtx", 2, 8)
	add("rtx", 1, 10)
	return c
}

// mixedSetup runs the first round of a snapshot on mixedCluster: its
// exact solve can take minutes, a node limit stops it the same way on
// every machine.
var mixedSetup = &Options{RoundTimeout: -1, SolverMaxNodes: 1}

// TestPoolLookupTwin: the cluster's and the matrix's pool lookups, which
// build no pool name, answer as package configset does (Set.Pool of
// Config.Pool, Config.Pool) for every configuration of a cluster with one
// and with several node sizes per type, and for shapes of no pool (and
// samePool as comparing Config.Pool); and
// the node sizes validation records per running job are those of its
// placement's nodes.
func TestPoolLookupTwin(t *testing.T) {
	for _, nodes := range [][]Node{heteroCluster(1), mixedCluster(1)} {
		snap := largeSnapshotOn(t, nodes, 200, 2, mixedSetup)
		o := (&Options{}).WithDefaults()
		cl, err := validateSnapshot(&snap, &o, true)
		require.NoError(t, err)
		m := &goodputMatrix{poolList: cl.poolList}
		cfgs := cl.set.Configs()
		for _, c := range slices.Clone(cfgs) {
			c.NodeGPUs += 1 // no such pool
			cfgs = append(cfgs, c)
			c.NodeGPUs = 0
			cfgs = append(cfgs, c)
		}
		for _, c := range cfgs {
			want, wantOK := cl.set.Pool(c.Pool())
			got, ok := cl.pool(c)
			require.Equal(t, wantOK, ok, "%v", c)
			require.Equal(t, want, got, "%v", c)
			require.Equal(t, c.Pool(), m.poolName(c), "%v", c)
			for _, d := range cfgs {
				require.Equal(t, c.Pool() == d.Pool(), samePool(c, d), "%v %v", c, d)
			}
		}
		running := 0
		for i := range snap.Jobs {
			cur := snap.Jobs[i].State.Current
			if !cur.Running() {
				continue
			}
			running++
			lo, hi := cl.nodeSizes(cur, i)
			wantLo, wantHi := cl.nodeSizes(cur, -1) // from the nodes
			require.Equal(t, [2]int{wantLo, wantHi}, [2]int{lo, hi}, "job %s", snap.Jobs[i].ID)
			require.Positive(t, lo)
		}
		require.Positive(t, running)
	}
}

// TestRoundFloorAllocsMixed: TestRoundFloorAllocs on nodes of two sizes
// per type. Before the pools were looked up without building their names
// (a string per kept job's option, a copy of a pool with its chain per
// kept job whose shape is no configuration), it made 1.90 allocations per
// job (1,957 for 1,031 jobs), 1.35 after; 1.00 before the kept rows were
// built bare without a rowBuilder (bareRow) and atJob stopped allocating
// on a nil error, 0.42 after.
func TestRoundFloorAllocsMixed(t *testing.T) {
	if testing.Short() {
		t.Skip("large snapshot")
	}
	snap := largeSnapshotOn(t, mixedCluster(8), 1200, 1, mixedSetup)
	assert.Less(t, floorAllocsPerJob(t, snap), 0.6, "allocations per job of a round out of time")
}

// TestRoundShapeCounts: the budget's counts taken from validation
// (cluster.counts) equal those of a pass over the jobs, on one and several
// node sizes per type and with GPUs reserved.
func TestRoundShapeCounts(t *testing.T) {
	for _, nodes := range [][]Node{heteroCluster(1), mixedCluster(1)} {
		snap := largeSnapshotOn(t, nodes, 200, 3, mixedSetup)
		snap.Reserved = map[string]int{"a100": 3}
		o := (&Options{}).WithDefaults()
		cl, err := validateSnapshot(&snap, &o, true)
		require.NoError(t, err)
		require.True(t, cl.counts.ok)
		twin := *cl
		twin.counts = jobCounts{}
		r, q, f := roundShape(&snap, cl)
		wr, wq, wf := roundShape(&snap, &twin)
		assert.Equal(t, [3]int{wr, wq, wf}, [3]int{r, q, f})
		assert.Positive(t, r)
		assert.Positive(t, q)
		assert.Equal(t, freeByType(&snap, &twin), freeByType(&snap, cl))
	}
}

// TestValidateFloorBytes: validating a snapshot of 5,000 jobs (2,000
// running) on 2,002 nodes allocates memory linear in the snapshot, and
// little of it: no map of the job IDs and one map of the node IDs. Before
// (a map of the job IDs, a second map of the node IDs), it allocated 167
// bytes per job; 118 after.
func TestValidateFloorBytes(t *testing.T) {
	if testing.Short() {
		t.Skip("large snapshot")
	}
	snap := largeSnapshot(t, 182, 6000, 1)
	o := (&Options{}).WithDefaults()
	var before, after runtime.MemStats
	const runs = 5
	runtime.ReadMemStats(&before)
	for range runs {
		_, err := validateSnapshot(&snap, &o, true)
		require.NoError(t, err)
	}
	runtime.ReadMemStats(&after)
	perJob := float64(after.TotalAlloc-before.TotalAlloc) / runs / float64(len(snap.Jobs))
	t.Logf("%d jobs: %.0f bytes allocated per job", len(snap.Jobs), perJob)
	assert.Less(t, perJob, 140.0)
}

// TestFullMatrixAllocsMixed: the full goodput matrix on nodes of two sizes
// per type allocates a few objects per job. Before markDominated compared
// pools without building their names (samePool), it built two strings per
// pair of entries: 90,588 allocations for 518 jobs (175 per job), 1,906
// (3.7 per job) after. Naming a job's Models errors Jobs[i].Models (atJob)
// then cost one allocation per row and type even without an error (3,460,
// 6.7 per job), until atJob returned early on nil.
func TestFullMatrixAllocsMixed(t *testing.T) {
	snap := largeSnapshotOn(t, mixedCluster(4), 600, 1, mixedSetup)
	o := (&Options{}).WithDefaults()
	cl, err := validateSnapshot(&snap, &o, true)
	require.NoError(t, err)
	allocs := testing.AllocsPerRun(2, func() {
		m, err := buildMatrix(context.Background(), &snap, &o, cl, false)
		require.NoError(t, err)
		require.False(t, m.Partial)
	})
	perJob := allocs / float64(len(snap.Jobs))
	t.Logf("%d jobs: %.0f allocations per full matrix, %.1f per job", len(snap.Jobs), allocs, perJob)
	assert.Less(t, perJob, 4.5)
}
