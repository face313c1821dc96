package sia

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/sia-sched/sia/internal/measure"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// threadCPU reads the CPU time of the calling thread (lock it with
// runtime.LockOSThread): unlike wall time, it does not grow with the
// machine's load. The CPU time between two readings is their Since. ok is
// false where it cannot be read (tests skip).
func threadCPU() (r measure.Reading, ok bool) {
	return measure.Read(), measure.ThreadCPUAvailable
}

// largeSnapshot returns a snapshot of the heterogeneous cluster scaled k
// times with about 5n/6 jobs: n/2 were placed by one round, a third of those
// have finished since (their GPUs are free), a few of the others are pinned,
// and n/2 are queued.
func largeSnapshot(tb testing.TB, k, n int, seed uint64) Snapshot {
	tb.Helper()
	return largeSnapshotOn(tb, heteroCluster(k), n, seed, &Options{RoundTimeout: -1})
}

// largeSnapshotOn is largeSnapshot on the given nodes, its first round
// run with the given options.
func largeSnapshotOn(tb testing.TB, nodes []Node, n int, seed uint64, o *Options) Snapshot {
	tb.Helper()
	rng := rand.New(rand.NewPCG(seed, 7))
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	jobs := genJobs(rng, n, now)
	snap := Snapshot{Now: now, Nodes: nodes, Jobs: jobs[:n/2]}
	s, err := New(o)
	require.NoError(tb, err)
	p, err := s.Round(context.Background(), snap)
	require.NoError(tb, err)
	applyPlan(&snap, &p, time.Minute)
	// A third of the running jobs finish, which frees GPUs.
	kept := snap.Jobs[:0]
	for i, j := range snap.Jobs {
		if i%3 == 0 && j.State.Current.Running() {
			continue
		}
		if i%50 == 1 && j.State.Current.Running() {
			j.NonPreemptible = true
		}
		kept = append(kept, j)
	}
	snap.Jobs = append(kept, jobs[n/2:]...)
	return snap
}

// contract is the overshoot Round may take past a deadline D.
func contract(d time.Duration) time.Duration { return max(2*time.Millisecond, d/10) }

// TestRoundDeadline: on a large snapshot, Round spends no more CPU than
// its deadline and the contract allow (the least of three tries, in the
// round thread's CPU time, so that a busy machine does not fail it), with a valid plan whose status is not optimal
// unless proven, and, under tight deadlines, still starts queued jobs.
func TestRoundDeadline(t *testing.T) {
	if testing.Short() {
		t.Skip("large snapshot")
	}
	snap := largeSnapshot(t, 32, 3000, 1)
	queued := 0
	for i := range snap.Jobs {
		if !snap.Jobs[i].State.Current.Running() {
			queued++
		}
	}
	require.Greater(t, queued, 1000)
	s, err := New(nil)
	require.NoError(t, err)
	// Times are the CPU time of the round's thread (the round runs on one
	// goroutine, locked to it), which a loaded machine does not stretch as
	// it does wall time.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if _, ok := threadCPU(); !ok {
		t.Skip("no thread CPU clock on this system")
	}
	cpu := func(f func()) time.Duration {
		c0, _ := threadCPU()
		f()
		c1, _ := threadCPU()
		return c1.Since(c0)
	}
	// The round's floor: its work that cannot be interrupted, measured as
	// the least CPU of three rounds that are out of time when they start.
	floor := time.Duration(1<<63 - 1)
	for try := 0; try < 3; try++ {
		ctx, cancel := context.WithTimeout(context.Background(), 0)
		var err error
		floor = min(floor, cpu(func() { _, err = s.Round(ctx, snap) }))
		cancel()
		require.NoError(t, err)
	}
	t.Logf("%d jobs: floor %v CPU", len(snap.Jobs), floor)
	deadlines := []time.Duration{0, time.Millisecond, 5 * time.Millisecond, 20 * time.Millisecond, 100 * time.Millisecond}
	if raceEnabled {
		deadlines = deadlines[:3] // the plans' invariants only, no time bound
	}
	for _, d := range deadlines {
		t.Run(d.String(), func(t *testing.T) {
			runtime.LockOSThread() // the subtest's own goroutine
			defer runtime.UnlockOSThread()
			best := time.Duration(1<<63 - 1)
			var plan Plan
			var tm timings
			for try := 0; try < 3; try++ {
				ctx, cancel := context.WithTimeout(context.Background(), d)
				var p Plan
				var ptm timings
				var err error
				took := cpu(func() { p, ptm, err = roundTimed(ctx, s, snap) })
				cancel()
				require.NoError(t, err)
				if took < best {
					best, plan, tm = took, p, ptm
				}
			}
			t.Logf("deadline %v: least CPU %v, status %v, matrix partial %v, wall timings %+v", d, best, plan.Status, plan.matrix.Partial, tm)
			// The contract is max(D, floor) + contract(D); the bound is
			// generous for the CPU a shared machine's caches cost
			// (BenchmarkRoundDeadlineSweep and examples/round-deadline
			// measure the distribution in wall time).
			if !raceEnabled {
				assert.LessOrEqual(t, best, 2*max(d, floor)+5*contract(d), "CPU of a round with deadline %v", d)
			}
			checkPlan(t, &snap, &plan)
			if plan.matrix.Partial {
				assert.Equal(t, StatusFeasible, plan.Status, "a partial matrix proves nothing")
			}
			if plan.Status != StatusOptimal {
				assert.True(t, plan.Bound <= plan.Objective, "bound %v, objective %v", plan.Bound, plan.Objective)
			}
			started := 0
			for _, dd := range plan.Decisions {
				if dd.Action == Start {
					started++
				}
			}
			assert.Positive(t, started, "a round out of time still starts queued jobs on free GPUs")
		})
	}
}

// BenchmarkRoundDeadlineSweep measures how far past its deadline Round
// returns on snapshots of 512 GPUs and 500 jobs, 2,048 GPUs and 2,500 jobs
// (1,500 queued) and 8,192 GPUs and about 4,200 jobs, per deadline: overshoot p50/p99/max
// (µs), the longest solve and the longest rest of a round (validation,
// matrix, placement), the jobs started and the share of partial matrices
// and of optimal plans.
func BenchmarkRoundDeadlineSweep(b *testing.B) {
	for _, c := range []struct{ k, n int }{{8, 600}, {32, 3000}, {128, 5000}} {
		snap := largeSnapshot(b, c.k, c.n, 1)
		s, err := New(nil)
		if err != nil {
			b.Fatal(err)
		}
		for _, d := range []time.Duration{0, 5 * time.Millisecond, 20 * time.Millisecond, 100 * time.Millisecond, time.Second} {
			b.Run(fmt.Sprintf("gpus=%d/jobs=%d/deadline=%v", 64*c.k, len(snap.Jobs), d), func(b *testing.B) {
				var over []time.Duration
				var solveMax, restMax, valMax, matMax, placeMax time.Duration
				started, partial, optimal := 0, 0, 0
				for i := 0; i < b.N; i++ {
					ctx, cancel := context.WithTimeout(context.Background(), d)
					start := time.Now()
					p, tm, err := roundTimed(ctx, s, snap)
					over = append(over, time.Since(start)-d)
					cancel()
					if err != nil {
						b.Fatal(err)
					}
					solveMax = max(solveMax, tm.Solve)
					restMax = max(restMax, tm.Total-tm.Solve)
					valMax = max(valMax, tm.Other)
					matMax = max(matMax, tm.Matrix)
					placeMax = max(placeMax, tm.Place)
					for _, dd := range p.Decisions {
						if dd.Action == Start {
							started++
						}
					}
					if p.matrix.Partial {
						partial++
					}
					if p.Status == StatusOptimal {
						optimal++
					}
				}
				slices.Sort(over)
				q := func(f float64) float64 {
					return float64(over[min(len(over)-1, int(f*float64(len(over))))].Microseconds())
				}
				b.ReportMetric(q(0.5), "over-p50-µs")
				b.ReportMetric(q(0.99), "over-p99-µs")
				b.ReportMetric(float64(over[len(over)-1].Microseconds()), "over-max-µs")
				b.ReportMetric(float64(solveMax.Microseconds()), "solve-max-µs")
				b.ReportMetric(float64(restMax.Microseconds()), "rest-max-µs")
				b.ReportMetric(float64(valMax.Microseconds()), "other-max-µs") // validation and everything outside the observed steps
				b.ReportMetric(float64(matMax.Microseconds()), "matrix-max-µs")
				b.ReportMetric(float64(placeMax.Microseconds()), "place-max-µs")
				b.ReportMetric(float64(started)/float64(b.N), "started/op")
				b.ReportMetric(float64(partial)/float64(b.N), "partial/op")
				b.ReportMetric(float64(optimal)/float64(b.N), "optimal/op")
			})
		}
	}
}

// TestRoundOutOfTimeParallel: a round out of time when it starts, with the
// matrix built on several goroutines, still keeps every invariant and starts
// queued jobs; with time, it gives the same plan as on one goroutine.
func TestRoundOutOfTimeParallel(t *testing.T) {
	snap := largeSnapshot(t, 8, 600, 3)
	for _, par := range []int{1, 3} {
		s, err := New(&Options{Parallelism: par})
		require.NoError(t, err)
		ctx, cancel := context.WithTimeout(context.Background(), 0)
		p, err := s.Round(ctx, snap)
		cancel()
		require.NoError(t, err)
		checkPlan(t, &snap, &p)
		checkAdmissible(t, &snap, &p)
		assert.True(t, p.matrix.Partial)
		assert.Equal(t, StatusFeasible, p.Status)
		started, deadline := 0, 0
		for _, d := range p.Decisions {
			if d.Action == Start {
				started++
			}
			if d.Reason == ReasonDeadline {
				deadline++
			}
		}
		assert.GreaterOrEqual(t, started, minCheapRows, "parallelism %d", par)
		assert.Positive(t, deadline, "parallelism %d: jobs left out say so", par)
	}
	one, err := New(&Options{Parallelism: 1, RoundTimeout: -1})
	require.NoError(t, err)
	three, err := New(&Options{Parallelism: 3, RoundTimeout: -1})
	require.NoError(t, err)
	p1, err := one.Round(context.Background(), snap)
	require.NoError(t, err)
	p3, err := three.Round(context.Background(), snap)
	require.NoError(t, err)
	assert.Equal(t, p1.Decisions, p3.Decisions)
}

// BenchmarkRoundFloor measures the work a round does even when it is out
// of time when it starts (the constants of deadline.go are sized from it):
// per job, the validation, the matrix (current configurations and the first
// queued jobs' cheap rows) and placement with the plan.
func BenchmarkRoundFloor(b *testing.B) {
	for _, c := range []struct{ k, n int }{{32, 3000}, {128, 5000}} {
		snap := largeSnapshot(b, c.k, c.n, 1)
		running := 0
		for i := range snap.Jobs {
			if snap.Jobs[i].State.Current.Running() {
				running++
			}
		}
		s, err := New(nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("gpus=%d/jobs=%d", 64*c.k, len(snap.Jobs)), func(b *testing.B) {
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			var tm timings
			var cpu time.Duration
			for i := 0; i < b.N; i++ {
				ctx, cancel := context.WithTimeout(context.Background(), 0)
				c0, _ := threadCPU()
				_, ptm, err := roundTimed(ctx, s, snap)
				c1, _ := threadCPU()
				cpu += c1.Since(c0)
				cancel()
				if err != nil {
					b.Fatal(err)
				}
				tm.Other += ptm.Other
				tm.Matrix += ptm.Matrix
				tm.Place += ptm.Place
				tm.Solve += ptm.Solve
			}
			per := func(d time.Duration, n int) float64 {
				return float64(d.Nanoseconds()) / 1e3 / float64(b.N) / float64(n)
			}
			b.ReportMetric(per(tm.Other, len(snap.Jobs)), "validate-µs/job")
			b.ReportMetric(per(tm.Matrix, running), "keep-µs/running-job")
			b.ReportMetric(per(tm.Solve, len(snap.Jobs)), "greedy-µs/job")
			b.ReportMetric(per(tm.Place, len(snap.Jobs)), "place-µs/job")
			b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/op") // the round's thread, whatever the load
		})
	}
}

// timings are a round's step times as its Observer reports them; Other is
// the rest of Total (validation, the plan).
type timings struct {
	Matrix, Solve, Place, Other, Total time.Duration
}

// roundTimed runs s.Round with an observer that times the steps.
func roundTimed(ctx context.Context, s *Scheduler, snap Snapshot) (Plan, timings, error) {
	var tm timings
	c := *s
	c.opts.Observer = func(e Event) {
		switch e.Stage {
		case StageMatrix:
			tm.Matrix += e.Duration
		case StageSolve:
			tm.Solve += e.Duration
		case StagePlace:
			tm.Place += e.Duration
		}
	}
	start := time.Now()
	p, err := c.Round(ctx, snap)
	tm.Total = time.Since(start)
	tm.Other = tm.Total - tm.Matrix - tm.Solve - tm.Place
	return p, tm, err
}

// TestFirstBySizeTwin checks cheapFirst's counting sort against sorting
// the keys: the same first indices for every limit, sizes small and large
// (the fallback), ties kept in index order.
func TestFirstBySizeTwin(t *testing.T) {
	rng := rand.New(rand.NewPCG(10, 10))
	for trial := 0; trial < 300; trial++ {
		n := rng.IntN(60)
		top := []int{1, 4, 16, 1000, 1 << 31}[trial%5]
		var keys []uint64
		for i := 0; i < n; i++ {
			if rng.IntN(3) > 0 {
				size := 1 + rng.IntN(min(top, 1<<31-1))
				keys = append(keys, uint64(size)<<32|uint64(i))
			}
		}
		want := slices.Clone(keys)
		slices.Sort(want)
		limit := rng.IntN(len(keys) + 1)
		out := make([]int, limit)
		if !firstBySize(keys, out) {
			require.Greater(t, top, 4*len(keys)+64, "trial %d: fell back on small sizes", trial)
			continue
		}
		for k := range out {
			require.Equal(t, int(uint32(want[k])), out[k], "trial %d, position %d", trial, k)
		}
	}
}
