package sia_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/internal/measure"
	"github.com/sia-sched/sia/sia"
)

// probeBigFleet is a fleet unlike the paper's: eight types, most mixing
// node sizes of 1 to 16 GPUs (primes among them), about gpus GPUs in all.
func probeBigFleet(gpus int) []sia.Node {
	shapes := [][]int{{16, 12, 10, 7}, {9, 6}, {15, 5}, {13}, {11, 14}, {3, 4, 8}, {1, 2}, {6}}
	var nodes []sia.Node
	total := 0
	for k := 0; total < gpus; k++ {
		ti := k % len(shapes)
		sh := shapes[ti]
		r := sh[(k/len(shapes))%len(sh)]
		nodes = append(nodes, sia.Node{ID: fmt.Sprintf("n%d", k), Type: fmt.Sprintf("t%d", ti), GPUs: r})
		total += r
	}
	return nodes
}

// TestProbeDeadlineOddFleet: on a 16,000-GPU fleet of mixed odd node sizes
// with 5,000 jobs (rigid counts off the sizes and spanning pools, hybrid
// jobs, pins), a round whose ctx is already expired, cancelled (no
// deadline), 1 ns, 5 ms or 20 ms away returns within the contract in CPU
// time (max(D, floor) + max(2 ms, D/10), with the same slack for a shared
// machine as TestRoundDeadline), with a valid plan that still starts queued
// jobs, and allocates memory linear in the snapshot (CPU and memory are
// not asserted under the race detector).
func TestProbeDeadlineOddFleet(t *testing.T) {
	if testing.Short() {
		t.Skip("large snapshot")
	}
	if !measure.ThreadCPUAvailable {
		t.Skip("no thread CPU clock on this system")
	}
	rng := rand.New(rand.NewPCG(10, 10))
	nodes := probeBigFleet(16000)
	snap := sia.Snapshot{Now: probeT0, Nodes: nodes}
	for k := 0; k < 2500; k++ {
		snap.Jobs = append(snap.Jobs, probeJob(rng, fmt.Sprintf("j%d", k), nodes, probeT0))
	}
	// a first round (bounded) places half of them; then more arrive
	s, err := sia.New(nil)
	require.NoError(t, err)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	p0, err := s.Round(ctx, snap)
	cancel()
	require.NoError(t, err)
	snap.Advance(&p0, probeT0.Add(time.Minute))
	for k := 2500; k < 5000; k++ {
		snap.Jobs = append(snap.Jobs, probeJob(rng, fmt.Sprintf("j%d", k), nodes, snap.Now))
	}
	for i := range snap.Jobs {
		snap.Jobs[i].NonPreemptible = snap.Jobs[i].NonPreemptible && i%5 == 0 // a few pins
	}
	require.NoError(t, snap.Validate())
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpu := func(f func()) time.Duration {
		r0 := measure.Read()
		f()
		return measure.Read().Since(r0)
	}
	contract := func(d time.Duration) time.Duration { return max(2*time.Millisecond, d/10) }
	type run struct {
		name string
		d    time.Duration
		ctx  func() (context.Context, context.CancelFunc)
	}
	expired := func() (context.Context, context.CancelFunc) { return context.WithTimeout(context.Background(), 0) }
	runs := []run{
		{"expired", 0, expired},
		{"cancelled", 0, func() (context.Context, context.CancelFunc) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel()
			return ctx, cancel
		}},
		{"1ns", time.Nanosecond, func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), time.Nanosecond)
		}},
		{"5ms", 5 * time.Millisecond, func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 5*time.Millisecond)
		}},
		{"20ms", 20 * time.Millisecond, func() (context.Context, context.CancelFunc) {
			return context.WithTimeout(context.Background(), 20*time.Millisecond)
		}},
	}
	floor := time.Duration(1<<63 - 1)
	var ms runtime.MemStats
	for _, r := range runs {
		best := time.Duration(1<<63 - 1)
		var plan sia.Plan
		var alloc uint64
		for try := 0; try < 2; try++ {
			ctx, cancel := r.ctx()
			var p sia.Plan
			runtime.ReadMemStats(&ms)
			a0 := ms.TotalAlloc
			took := cpu(func() { p, err = s.Round(ctx, snap) })
			runtime.ReadMemStats(&ms)
			cancel()
			require.NoError(t, err, r.name)
			if took < best {
				best, plan, alloc = took, p, ms.TotalAlloc-a0
			}
		}
		if r.name == "expired" {
			floor = best
		}
		started := 0
		for _, d := range plan.Decisions {
			if d.Action == sia.Start {
				started++
			}
		}
		t.Logf("%s: least CPU %v (floor %v), %v, %d started, %.1f MB allocated", r.name, best, floor, plan.Status, started, float64(alloc)/1e6)
		if !sia.RaceEnabled { // the race detector's slowdown and allocations vary far beyond the allowance
			assert.LessOrEqual(t, best, 2*max(r.d, floor)+5*contract(r.d), "%s: CPU of the round", r.name)
			assert.Less(t, alloc, uint64(400<<20), "%s: memory linear in the snapshot", r.name)
		}
		assert.NotEqual(t, sia.StatusOptimal, plan.Status, r.name)
		free := probeCheck(t, snap, s.Options(), plan)
		if started == 0 {
			// the first round's plan (cut by its wall-clock deadline) leaves
			// a fleet that depends on the machine's load: a round out of time
			// starts queued jobs when one fits the free GPUs
			for i, d := range plan.Decisions {
				j := &snap.Jobs[i]
				if d.Action == sia.Queue && !j.State.Current.Running() {
					if how := probeFitsFree(j, snap, s.Options(), plan, free); how != "" {
						assert.Failf(t, "nothing started", "%s: a round out of time starts no queued job although job %s fits %s", r.name, j.ID, how)
						break
					}
				}
			}
		}
	}
}

// probeHeadOfQueue is a snapshot whose queue is headed by 300 jobs that can
// never start on its 20 free GPUs (100 too large, 100 whose Models exclude
// every type, 100 whose Types name none of the cluster's), then 10 small
// jobs that fit.
func probeHeadOfQueue() sia.Snapshot {
	nodes := []sia.Node{{ID: "a0", Type: "A", GPUs: 8}, {ID: "a1", Type: "A", GPUs: 8}, {ID: "b0", Type: "B", GPUs: 4}}
	m := probeModel{speed: map[string]float64{"A": 1, "B": 1}, gain: 0.9, cross: 0.9}
	onlyC := probeModel{speed: map[string]float64{"C": 1}, gain: 0.9, cross: 0.9} // excludes A and B
	snap := sia.Snapshot{Now: probeT0, Nodes: nodes}
	for k := 0; k < 300; k++ {
		switch k % 3 {
		case 0:
			snap.Jobs = append(snap.Jobs, sia.Job{ID: fmt.Sprintf("huge%d", k), Kind: sia.Rigid, GPUs: 1000, Models: m})
		case 1:
			snap.Jobs = append(snap.Jobs, sia.Job{ID: fmt.Sprintf("excluded%d", k), Models: onlyC})
		default:
			snap.Jobs = append(snap.Jobs, sia.Job{ID: fmt.Sprintf("elsewhere%d", k), Types: []string{"H100"}, Models: m})
		}
	}
	for k := 0; k < 10; k++ {
		snap.Jobs = append(snap.Jobs, sia.Job{ID: fmt.Sprintf("small%d", k), Models: m})
	}
	return snap
}

// probeOutOfTime runs a round of probeHeadOfQueue under ctx, checks the
// plan and returns it with the number of jobs started.
func probeOutOfTime(t *testing.T, ctx context.Context, opts *sia.Options) (sia.Snapshot, sia.Plan, int) {
	t.Helper()
	snap := probeHeadOfQueue()
	s, err := sia.New(opts)
	require.NoError(t, err)
	plan, err := s.Round(ctx, snap)
	require.NoError(t, err)
	probeCheck(t, snap, s.Options(), plan)
	started := 0
	for _, d := range plan.Decisions {
		if d.Action == sia.Start {
			started++
		}
	}
	return snap, plan, started
}

// TestProbeOutOfTimeReasons: in a round out of time, the jobs too large for
// the cluster, or with no type of it in Types, say so: they read "deadline"
// (their rows were not built), round after round, though they can never run.
func TestProbeOutOfTimeReasons(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 0)
	defer cancel()
	snap, plan, _ := probeOutOfTime(t, ctx, nil)
	for i, d := range plan.Decisions {
		switch j := snap.Jobs[i]; {
		case j.Kind == sia.Rigid:
			assert.Equal(t, sia.ReasonTooLarge, d.Reason, j.ID)
		case j.Types != nil:
			assert.Equal(t, sia.ReasonNoAdmissibleType, d.Reason, j.ID)
		}
	}
}

// TestProbeOutOfTimeHeadOfQueue: a round out of time builds the cheap rows
// of a few queued jobs only. It built them for the first queued jobs in
// snapshot order, so a queue headed by jobs that can never start started
// nothing on the free GPUs, round after round, while the deadline was
// tight. They go to the smallest jobs that may start, and rows that turn
// out empty do not count.
func TestProbeOutOfTimeHeadOfQueue(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 0)
	defer cancel()
	_, _, started := probeOutOfTime(t, ctx, nil)
	assert.Equal(t, 10, started, "the small jobs start on the free GPUs")
	// on four matrix workers each builds its own guaranteed rows (8): the
	// small jobs all lie in the last worker's range
	_, _, started = probeOutOfTime(t, ctx, &sia.Options{Parallelism: 4})
	assert.GreaterOrEqual(t, started, 8, "the small jobs start on the free GPUs")
}

// TestProbeCancelledAdmits: a cancelled ctx (no deadline) is out of time
// too: the round returns at once and admits what it can. It built no cheap
// row (its deadline was RoundTimeout away), so it started nothing.
func TestProbeCancelledAdmits(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, started := probeOutOfTime(t, ctx, nil)
	assert.Equal(t, 10, started, "the small jobs start on the free GPUs")
}

// TestProbeHugeNodes: a million GPUs on 245 nodes of up to MaxGPUsPerNode
// (4,096, 4,095 and 3,000 GPUs: chains of 13, 2 and 6 sizes), 1,000 jobs of
// every kind, some rigid counts in the hundreds of thousands: under an
// expired and a 20 ms deadline, and in the next round (the jobs started
// holding their GPUs) expired and 5 ms, the round returns within the
// contract (thread CPU, as TestProbeDeadlineOddFleet), allocates memory
// linear in the snapshot (GPUs included), and its plan is valid.
func TestProbeHugeNodes(t *testing.T) {
	if testing.Short() {
		t.Skip("large snapshot")
	}
	if !measure.ThreadCPUAvailable {
		t.Skip("no thread CPU clock on this system")
	}
	snap := hugeNodesSnapshot()
	s, err := sia.New(nil)
	require.NoError(t, err)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var plan0 sia.Plan
	floor := time.Duration(1<<63 - 1)
	var ms runtime.MemStats
	for k, d := range []time.Duration{0, 20 * time.Millisecond, 0, 5 * time.Millisecond} {
		if k == 2 { // the next round: the jobs the last plan started hold their GPUs
			snap.Advance(&plan0, snap.Now.Add(time.Minute))
			floor = time.Duration(1<<63 - 1)
		}
		best := time.Duration(1<<63 - 1)
		var plan sia.Plan
		var alloc uint64
		for try := 0; try < 2; try++ {
			ctx, cancel := context.WithTimeout(context.Background(), d)
			runtime.ReadMemStats(&ms)
			a0 := ms.TotalAlloc
			r0 := measure.Read()
			p, err := s.Round(ctx, snap)
			took := measure.Read().Since(r0)
			runtime.ReadMemStats(&ms)
			cancel()
			require.NoError(t, err)
			if took < best {
				best, plan, alloc = took, p, ms.TotalAlloc-a0
			}
		}
		if d == 0 {
			floor = best
		}
		started, running := 0, 0
		for _, dd := range plan.Decisions {
			if dd.Action == sia.Start {
				started++
			}
			if dd.Allocation.Running() {
				running++
			}
		}
		plan0 = plan
		t.Logf("deadline %v: least CPU %v (floor %v), %v, %d started, %d running, %.1f MB allocated", d, best, floor, plan.Status, started, running, float64(alloc)/1e6)
		if !sia.RaceEnabled { // (the race detector slows the standard path more than the lean one the floor measures)
			assert.LessOrEqual(t, best, 2*max(d, floor)+5*max(2*time.Millisecond, d/10), "deadline %v", d)
		}
		assert.Less(t, alloc, uint64(200<<20), "memory linear in the snapshot")
		assert.Positive(t, running)
		if k == 1 || k == 3 { // the check is slower than the round on a million GPUs
			probeCheck(t, snap, s.Options(), plan)
		}
	}
}

// hugeNodesSnapshot returns the snapshot of TestProbeHugeNodes and
// BenchmarkProbeHugeNodes: a million GPUs on 245 nodes of 4,096, 4,095 and
// 3,000 GPUs (three types) and 1,000 probe jobs.
func hugeNodesSnapshot() sia.Snapshot {
	var nodes []sia.Node
	total := 0
	for k := 0; total < 1_000_000; k++ {
		r := []int{4096, 4095, 3000}[k%3]
		nodes = append(nodes, sia.Node{ID: fmt.Sprintf("n%d", k), Type: fmt.Sprintf("t%d", k%3), GPUs: r})
		total += r
	}
	rng := rand.New(rand.NewPCG(3, 3))
	snap := sia.Snapshot{Now: probeT0, Nodes: nodes}
	for k := 0; k < 1000; k++ {
		snap.Jobs = append(snap.Jobs, probeJob(rng, fmt.Sprintf("j%d", k), nodes, probeT0))
	}
	return snap
}

// BenchmarkProbeHugeNodes: a round out of time on a million GPUs (245 nodes
// of 3,000–4,096 GPUs) and 1,000 jobs: the floor that GPUs, not jobs,
// dominate (validation, placement and the decisions are linear in them).
func BenchmarkProbeHugeNodes(b *testing.B) {
	snap := hugeNodesSnapshot()
	s, err := sia.New(nil)
	require.NoError(b, err)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ctx, cancel := context.WithTimeout(context.Background(), 0)
		_, err := s.Round(ctx, snap)
		cancel()
		require.NoError(b, err)
	}
}
