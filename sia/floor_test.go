package sia

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/goodput"
	"github.com/sia-sched/sia/sia/siatest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countedModels wraps a job's models and counts the goodput predictions
// (Evaluator) the matrix asks of it, so a test can see how much of the
// round's floor a round past its deadline still does.
type countedModels struct {
	Models
	n *atomic.Int64
}

func (c countedModels) Evaluate(t string, nodes, replicas int) (goodput.Choice, bool) {
	c.n.Add(1)
	m, _ := c.Model(t)
	if m.Hybrid() {
		return goodput.Choice{}, false
	}
	return m.Best(nodes, replicas)
}

// TestRoundPastDeadlineFloor: a round whose clock (injected, so the test
// does not depend on the machine's load) is far past its deadline from the
// start still validates the snapshot and returns a valid plan, but stops
// its floor's optional work: the running jobs' goodput is predicted for at
// most the first keepCheckJobs of them (each then keeps its configuration
// unvalued, without a batch size), placement makes no eviction, every
// running job keeps its GPUs, queued jobs start on free GPUs, and the
// status is not optimal.
func TestRoundPastDeadlineFloor(t *testing.T) {
	snap := largeSnapshot(t, 8, 600, 3)
	var running atomic.Int64
	nRunning := 0
	for i := range snap.Jobs {
		if j := &snap.Jobs[i]; j.State.Current.Running() {
			j.Models = countedModels{j.Models, &running}
			nRunning++
		}
	}
	require.Greater(t, nRunning, 3*keepCheckJobs)
	s, err := New(nil)
	require.NoError(t, err)
	p := roundOutOfTime(t, s, snap)
	checkPlan(t, &snap, &p)
	checkAdmissible(t, &snap, &p)
	assert.Zero(t, running.Load(), "goodput predictions for running jobs past D + S/4 (the clock is read at the first)")
	assert.Equal(t, StatusFeasible, p.Status)
	started, unvalued := 0, 0
	for i, d := range p.Decisions {
		j := &snap.Jobs[i]
		assert.False(t, d.Evicted, "job %s evicted by a placement past its time", j.ID)
		if j.State.Current.Running() {
			assert.Equal(t, Keep, d.Action, "running job %s keeps its allocation", j.ID)
			assert.ElementsMatch(t, j.State.Current.Placement, d.Allocation.Placement, "job %s", j.ID)
			if e := p.entry(i); e != nil && e.unvalued {
				unvalued++
			}
		}
		if d.Action == Start {
			started++
		}
	}
	assert.Equal(t, nRunning, unvalued, "running jobs kept without a prediction")
	assert.Positive(t, started, "queued jobs start on free GPUs")

	// With the real clock and time to spare, the same snapshot gets every
	// prediction and no unvalued entry.
	running.Store(0)
	s.now = nil
	full, err := s.Round(context.Background(), snap)
	require.NoError(t, err)
	assert.GreaterOrEqual(t, running.Load(), int64(nRunning))
	for i := range full.Decisions {
		if e := full.entry(i); e != nil {
			assert.False(t, e.unvalued, "job %s", snap.Jobs[i].ID)
		}
	}
}

// roundOutOfTime runs a round of s on snap that is out of time when it
// starts: its clock (injected) reads an hour late and its ctx has expired.
// s keeps the late clock.
func roundOutOfTime(t *testing.T, s *Scheduler, snap Snapshot) Plan {
	t.Helper()
	s.now = func() time.Time { return time.Now().Add(time.Hour) }
	ctx, cancel := context.WithTimeout(context.Background(), 0)
	defer cancel()
	p, err := s.Round(ctx, snap)
	require.NoError(t, err)
	return p
}

// modelCalls wraps a job's models and counts the Model calls made of it.
type modelCalls struct {
	m Models
	n *atomic.Int64
}

func (c modelCalls) Model(t string) (goodput.Model, bootstrap.Source) {
	c.n.Add(1)
	return c.m.Model(t)
}

// TestRoundFloorModelCalls: a round out of time when it starts (injected
// clock) asks each running job's Models for its model once, for the type
// it runs on (validation reads it and the kept row uses it), and a queued
// job's Models not at all unless its cheap row is built. Before, the kept
// row asked again (two calls per running job, about 0.3 µs each on 5,000
// jobs: a map lookup of a job's models is a cache miss).
func TestRoundFloorModelCalls(t *testing.T) {
	snap := largeSnapshot(t, 8, 600, 3)
	calls := make([]atomic.Int64, len(snap.Jobs))
	for i := range snap.Jobs {
		snap.Jobs[i].Models = modelCalls{snap.Jobs[i].Models, &calls[i]}
	}
	s, err := New(nil)
	require.NoError(t, err)
	p := roundOutOfTime(t, s, snap)
	n := make([]int64, len(calls))
	for i := range calls {
		n[i] = calls[i].Load()
	}
	checkPlan(t, &snap, &p) // which asks the models too
	types := int64(len(snap.Types()))
	running, cheap := 0, 0
	for i := range snap.Jobs {
		j := &snap.Jobs[i]
		n := n[i]
		if cur := j.State.Current; cur.Running() {
			// A type without a model has no batch size: the plan asks
			// for the model's defaults once more (defaultBatch).
			if _, src := j.Models.(modelCalls).m.Model(cur.Type); src != bootstrap.None {
				running++
				assert.Equal(t, int64(1), n, "running job %s", j.ID)
			}
			continue
		}
		assert.LessOrEqual(t, n, types+1, "queued job %s: no row or a cheap one", j.ID)
		if n > 0 {
			cheap++
		}
	}
	assert.Greater(t, running, 100)
	assert.Positive(t, cheap)
	assert.Less(t, cheap, len(snap.Jobs)/4, "queued jobs past the floor's rows get no model")
}

// TestRoundFloorAllocs: a round out of time when it starts (injected
// clock) allocates a bounded number of objects per job: validation,
// the kept jobs' rows, the greedy allocation, placement and the decisions
// use slices per step, not maps or slices per job or GPU. Before the floor
// was cut it made about 24 allocations per job (59,206 for 2,504 jobs);
// before placement.Result shared one backing array and spannedCurrent
// skipped its maps for one-size placements, 3.26 (8,152); before the
// placement requests shared one array for their current GPUs, 2.41;
// before the kept rows were built bare without a rowBuilder (bareRow)
// and atJob stopped allocating on a nil error, 0.67 (1,682).
func TestRoundFloorAllocs(t *testing.T) {
	if testing.Short() {
		t.Skip("large snapshot")
	}
	snap := largeSnapshot(t, 32, 3000, 1)
	assert.Less(t, floorAllocsPerJob(t, snap), 0.25, "allocations per job of a round out of time")
}

// floorAllocsPerJob returns the allocations per snapshot job of a round of
// snap that is out of time when it starts (expired ctx, clock an hour on).
func floorAllocsPerJob(t *testing.T, snap Snapshot) float64 {
	s, err := New(nil)
	require.NoError(t, err)
	s.now = func() time.Time { return time.Now().Add(time.Hour) }
	allocs := testing.AllocsPerRun(3, func() {
		ctx, cancel := context.WithTimeout(context.Background(), 0)
		defer cancel()
		_, err := s.Round(ctx, snap)
		require.NoError(t, err)
	})
	perJob := allocs / float64(len(snap.Jobs))
	t.Logf("%d jobs: %.0f allocations per round, %.2f per job", len(snap.Jobs), allocs, perJob)
	return perJob
}

// TestRoundPlacementCut: kept jobs fragment three 4-GPU nodes so that a
// queued 4-GPU job fits only by moving one of them. With time, placement
// moves it and the job starts; in a round past its deadline (injected
// clock) placement makes no eviction: every running job keeps its GPUs and
// the queued job waits, saying the deadline is why (not fragmentation).
func TestRoundPlacementCut(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	tbl := siatest.Table{"A": {1: 1, 2: 2, 4: 4}}
	run := func(id string, gpus int, node string, idx ...int) Job {
		j := Job{ID: id, Kind: Rigid, GPUs: gpus, Models: tbl, Submitted: t0}
		j.State.Current = Allocation{Type: "A", Nodes: 1, GPUs: gpus}
		for _, i := range idx {
			j.State.Current.Placement = append(j.State.Current.Placement, GPU{Node: node, Index: i})
		}
		return j
	}
	snap := Snapshot{Now: t0.Add(time.Hour), Nodes: []Node{{ID: "a0", Type: "A", GPUs: 4}, {ID: "a1", Type: "A", GPUs: 4}, {ID: "a2", Type: "A", GPUs: 4}},
		Jobs: []Job{run("k1", 1, "a0", 0), run("k2", 1, "a1", 0), run("k3", 2, "a2", 0, 1), {ID: "n", Kind: Rigid, GPUs: 4, Models: tbl, Submitted: t0}}}
	s, err := New(nil)
	require.NoError(t, err)
	full, err := s.Round(context.Background(), snap)
	require.NoError(t, err)
	checkPlan(t, &snap, &full)
	d, _ := full.Decision("n")
	require.Equal(t, Start, d.Action, "with time, a kept job moves for n")

	p := roundOutOfTime(t, s, snap)
	checkPlan(t, &snap, &p)
	for _, d := range p.Decisions[:3] {
		assert.Equal(t, Keep, d.Action, d.Job)
		assert.False(t, d.Evicted, d.Job)
	}
	d, _ = p.Decision("n")
	assert.Equal(t, Queue, d.Action)
	assert.Equal(t, ReasonDeadline, d.Reason)
	assert.NotEqual(t, StatusOptimal, p.Status)
}

// BenchmarkMatrixFloor measures the matrix floor of a round out of time
// when it starts, on 5,000 jobs (2,000 running) and 2,002 nodes: validating the snapshot
// and building the phased matrix with every running job's current
// configuration kept unvalued (the clock past keepEnd) and the first
// queued jobs' cheap rows. cpu-µs/op is the CPU time of the benchmark's
// thread, which the machine's load does not stretch.
func BenchmarkMatrixFloor(b *testing.B) {
	snap := largeSnapshot(b, 182, 6000, 1)
	o := (&Options{}).WithDefaults()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	ctx, cancel := context.WithTimeout(context.Background(), 0)
	defer cancel()
	late := func() time.Time { return time.Now().Add(time.Hour) }
	var vcpu, mcpu time.Duration
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		c0, _ := threadCPU()
		cl, err := validateSnapshot(&snap, &o, true)
		c1, _ := threadCPU()
		if err != nil {
			b.Fatal(err)
		}
		cl.clk = newRoundClock(ctx, time.Now(), late)
		if _, err := buildMatrix(ctx, &snap, &o, cl, true); err != nil {
			b.Fatal(err)
		}
		c2, _ := threadCPU()
		vcpu += c1.Since(c0)
		mcpu += c2.Since(c1)
	}
	b.ReportMetric(float64(vcpu.Microseconds())/float64(b.N), "validate-cpu-µs/op")
	b.ReportMetric(float64(mcpu.Microseconds())/float64(b.N), "matrix-cpu-µs/op")
}
