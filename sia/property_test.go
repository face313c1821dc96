package sia

import (
	"context"
	"fmt"
	"github.com/sia-sched/sia/sia/siatest"
	"math"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/sia-sched/sia/bootstrap"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// randomCluster returns a small heterogeneous cluster; with odd = true it
// includes a type with 6-GPU nodes (virtual 4 + 2).
func randomCluster(rng *rand.Rand, odd bool) []Node {
	var c []Node
	add := func(t string, n, g int) {
		for i := 0; i < n; i++ {
			c = append(c, Node{ID: fmt.Sprintf("%s-%d", t, i), Type: t, GPUs: g})
		}
	}
	add("t4", 1+rng.IntN(4), 4)
	add("a100", 1+rng.IntN(2), 8)
	if rng.IntN(2) == 0 {
		add("rtx", 1+rng.IntN(3), 8)
	}
	if odd {
		add("v6", 1+rng.IntN(2), 6)
	}
	return c
}

// scenarioGen drives random multi-round scenarios like a host would.
type scenarioGen struct {
	rng  *rand.Rand
	snap Snapshot
	next int
}

func newScenarioGen(seed uint64, odd bool) *scenarioGen {
	rng := rand.New(rand.NewPCG(seed, 99))
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return &scenarioGen{rng: rng, snap: Snapshot{Now: now, Nodes: randomCluster(rng, odd)}}
}

// step removes and adds jobs and sets restore/non-preemptible flags.
func (g *scenarioGen) step() {
	rng := g.rng
	var keep []Job
	for _, j := range g.snap.Jobs {
		if rng.IntN(8) != 0 {
			keep = append(keep, j)
		}
	}
	g.snap.Jobs = keep
	for n := rng.IntN(4); n > 0; n-- {
		js := genJobs(rng, 1, g.snap.Now)
		j := js[0]
		j.ID = fmt.Sprintf("j%d", g.next)
		g.next++
		if rng.IntN(6) == 0 {
			j.NonPreemptible = true
		}
		if rng.IntN(8) == 0 {
			// Only table goodputs on a100 and t4, replica size 2 on a100.
			j.Kind, j.GPUs, j.MinGPUs, j.MaxGPUs = Adaptive, 0, 0, 0
			j.Models = pipelined{siatest.Table{"a100": {1: 2, 2: 3.5, 4: 6}, "t4": {1: 1, 2: 1.8, 4: 3}}, map[string]int{"a100": 2, "t4": 1}}
		}
		g.snap.Jobs = append(g.snap.Jobs, j)
	}
	for i := range g.snap.Jobs {
		st := &g.snap.Jobs[i].State
		st.Restoring = st.Current.Running() && rng.IntN(5) == 0
	}
}

// checkPlan asserts the invariants every plan must meet.
func checkPlan(t *testing.T, snap *Snapshot, p *Plan) {
	t.Helper()
	require.Len(t, p.Decisions, len(snap.Jobs))
	nodes := map[string]Node{}
	capacity := map[string]int{}
	for _, n := range snap.Nodes {
		nodes[n.ID] = n
		capacity[n.Type] += n.GPUs
	}
	used := map[string]int{}
	owner := map[GPU]string{}
	for i, d := range p.Decisions {
		j := &snap.Jobs[i]
		require.Equal(t, j.ID, d.Job)
		a := d.Allocation
		if !a.Running() {
			assert.Contains(t, []Action{Queue, Preempt}, d.Action, "job %s", j.ID)
			assert.False(t, j.State.Restoring || (j.NonPreemptible && j.State.Current.Running()), "pinned job %s lost its GPUs", j.ID)
			continue
		}
		require.Len(t, a.Placement, a.GPUs, "job %s", j.ID)
		used[a.Type] += a.GPUs
		perNode := map[string]int{}
		for _, g := range a.Placement {
			n, ok := nodes[g.Node]
			require.True(t, ok, "job %s on unknown node %s", j.ID, g.Node)
			require.Equal(t, a.Type, n.Type, "job %s", j.ID)
			require.True(t, g.Index >= 0 && g.Index < n.GPUs)
			other, dup := owner[g]
			require.False(t, dup, "GPU %v given to %s and %s", g, other, j.ID)
			owner[g] = j.ID
			perNode[g.Node]++
		}
		require.Equal(t, a.Nodes, len(perNode), "job %s", j.ID)
		r := nodes[a.Placement[0].Node].GPUs
		uniform := true
		for n := range perNode {
			uniform = uniform && nodes[n].GPUs == r
		}
		// A kept job keeps the GPUs the host placed it on, whatever their
		// shape, and the fill step's shapes of idle GPUs split as they were
		// idle (shaped.go); every other job is placed by rules (a) and (b).
		shaped := p.entry(i) != nil && p.entry(i).Shaped
		if d.Action != Keep && !shaped && uniform && r&(r-1) == 0 { // power-of-two nodes: rules (a) and (b)
			switch {
			case a.GPUs <= r:
				assert.Equal(t, 1, len(perNode), "rule (a): job %s with %d GPUs split", j.ID, a.GPUs)
			case a.GPUs%r == 0:
				for n, c := range perNode {
					assert.Equal(t, r, c, "rule (b): job %s takes %d GPUs of node %s", j.ID, c, n)
				}
			}
		}
		// The allocation is an entry of the job's row.
		e := p.entry(i)
		require.NotNil(t, e, d.Job)
		assert.Equal(t, a.Type, e.Config.Type)
		assert.Equal(t, a.GPUs, e.Config.GPUs)
		pinned := j.State.Restoring || (j.NonPreemptible && j.State.Current.Running())
		if d.Action != Keep && !pinned {
			// placed in the shape whose goodput was predicted
			assert.Equal(t, e.Config.Nodes, a.Nodes, "job %s: entry %v", j.ID, e.Config)
		}
		if d.Action == Keep && len(j.State.Current.Placement) > 0 {
			assert.ElementsMatch(t, j.State.Current.Placement, a.Placement, "kept job %s", j.ID)
		}
		if pinned {
			// A pin keeps the host's allocation even if it breaks bounds.
		} else if j.Kind == Rigid {
			assert.Equal(t, j.GPUs, a.GPUs, "rigid job %s", j.ID)
		} else {
			if j.MinGPUs > 0 {
				assert.GreaterOrEqual(t, a.GPUs, j.MinGPUs, "job %s", j.ID)
			}
			if j.MaxGPUs > 0 {
				assert.LessOrEqual(t, a.GPUs, j.MaxGPUs, "job %s", j.ID)
			}
		}
		if m, _ := j.Models.Model(a.Type); m.Stages > 0 && !pinned {
			p := m.Stages
			assert.Zero(t, a.GPUs%p, "job %s: not a multiple of its replica size", j.ID)
		}
		if pinned {
			assert.Equal(t, j.State.Current.Type, a.Type, "pinned job %s", j.ID)
			assert.Equal(t, j.State.Current.GPUs, a.GPUs, "pinned job %s", j.ID)
			if len(j.State.Current.Placement) > 0 {
				assert.Equal(t, Keep, d.Action, "pinned job %s", j.ID)
				assert.True(t, sameGPUs(j.State.Current.Placement, a.Placement), "pinned job %s moved", j.ID)
			}
		}
		if e.unvalued {
			// kept by a round out of time without a prediction: the job
			// keeps its batch size
			assert.Equal(t, Keep, d.Action, "job %s: unvalued entry", j.ID)
			assert.Zero(t, d.GlobalBatch, "job %s", j.ID)
		} else {
			assert.Greater(t, d.GlobalBatch, 0, "job %s", j.ID)
		}
	}
	for ty, u := range used {
		assert.LessOrEqual(t, u, capacity[ty]-snap.Reserved[ty], "type %s over capacity", ty)
	}
	for _, q := range snap.Quotas {
		in := map[string]bool{}
		for _, id := range q.Jobs {
			in[id] = true
		}
		u := 0
		for _, d := range p.Decisions {
			if in[d.Job] && (q.Type == "" || q.Type == d.Allocation.Type) {
				u += d.Allocation.GPUs
			}
		}
		assert.LessOrEqual(t, u, q.Limit, "quota %s", q.Name)
	}
}

// TestRoundProperties plays random multi-round scenarios and checks every
// plan: capacity, placement rules, pins, job bounds; and the solver's
// objective against brute force when the instance is small.
func TestRoundProperties(t *testing.T) {
	seeds := 60
	if testing.Short() {
		seeds = 15
	}
	actionCount := map[Action]int{}
	filled := 0
	defer func() { t.Logf("%d plans filled", filled) }()
	for seed := 0; seed < seeds; seed++ {
		g := newScenarioGen(uint64(seed), seed%3 == 0)
		opts := Options{Seed: uint64(seed % 2)}
		switch seed % 5 {
		case 2:
			opts.Artifact = PublishedArtifact()
		case 4:
			opts.P, opts.Lambda = 0.5, -1.1
		}
		s, err := New(&opts)
		require.NoError(t, err)
		for round := 0; round < 12; round++ {
			g.step()
			if seed%4 == 1 && len(g.snap.Nodes) > 0 {
				g.snap.Reserved = map[string]int{"t4": 1}
			} else {
				g.snap.Reserved = nil
			}
			p, err := s.Round(context.Background(), g.snap)
			require.NoError(t, err, "seed %d round %d", seed, round)
			checkPlan(t, &g.snap, &p)
			for _, d := range p.Decisions {
				actionCount[d.Action]++
			}
			if len(p.filled) > 0 {
				// The fill step started jobs on GPUs the charges left idle:
				// the plan is beyond the charged problem, bounded by the
				// uncharged one, and Optimal only when that one proves it.
				filled++
				if len(g.snap.Jobs) <= 5 {
					best, _ := bruteForce(uncharged(p.matrix))
					tol := 1e-9 * math.Max(1, math.Abs(best))
					assert.False(t, better(p.Objective, best, p.matrix.Sense) && math.Abs(best-p.Objective) > tol, "seed %d round %d: filled objective %v beyond %v", seed, round, p.Objective, best)
					if p.Status == StatusOptimal {
						assert.InDelta(t, best, p.Objective, tol, "seed %d round %d", seed, round)
					}
				}
				assert.Contains(t, []Status{StatusOptimal, StatusFeasible}, p.Status, "seed %d round %d", seed, round)
				applyPlan(&g.snap, &p, time.Minute)
				continue
			}
			if len(g.snap.Jobs) <= 5 {
				best, _ := bruteForce(p.matrix)
				assert.InDelta(t, best, p.Objective, 1e-9*math.Max(1, math.Abs(best)), "seed %d round %d", seed, round)
			}
			// The solver proves every round; a plan that placement had to
			// change (a job unplaced or kept in place) is only Feasible.
			want := StatusOptimal
			if l := planLists(&p); len(l.unplaced) > 0 || len(l.kept) > 0 {
				want = StatusFeasible
			}
			assert.Equal(t, want, p.Status, "seed %d round %d", seed, round)
			applyPlan(&g.snap, &p, time.Minute)
		}
	}
	// The scenarios exercise every kind of change.
	for _, a := range []Action{Start, Keep, Resize, Migrate, Preempt} {
		assert.Positive(t, actionCount[a], "no %v in %v", a, actionCount)
	}
}

// lists are a plan's jobs by what placement did, sorted by ID (as
// Plan's lists were before the decisions carried them).
type lists struct {
	evicted, migrated, unplaced, kept []string
}

func planLists(p *Plan) lists {
	var l lists
	for _, d := range p.Decisions {
		if d.Evicted {
			l.evicted = append(l.evicted, d.Job)
		}
		if d.Action == Migrate {
			l.migrated = append(l.migrated, d.Job)
		}
		if d.Reason == ReasonUnplaceable {
			l.unplaced = append(l.unplaced, d.Job)
		}
		if d.Kept {
			l.kept = append(l.kept, d.Job)
		}
	}
	for _, s := range [][]string{l.evicted, l.migrated, l.unplaced, l.kept} {
		slices.Sort(s)
	}
	return l
}

// playScenario runs a fixed random scenario and returns its plans.
func playScenario(t *testing.T, seed uint64) []Plan {
	g := newScenarioGen(seed, true)
	s, err := New(&Options{Seed: 7})
	require.NoError(t, err)
	var plans []Plan
	for round := 0; round < 10; round++ {
		g.step()
		p, err := s.Round(context.Background(), g.snap)
		require.NoError(t, err)
		plans = append(plans, p)
		applyPlan(&g.snap, &p, time.Minute)
	}
	return plans
}

// TestDeterminism: identical input gives identical plans, also across
// GOMAXPROCS 1, 2 and 8.
func TestDeterminism(t *testing.T) {
	prev := runtime.GOMAXPROCS(0)
	defer runtime.GOMAXPROCS(prev)
	for _, seed := range []uint64{3, 11} {
		runtime.GOMAXPROCS(1)
		want := playScenario(t, seed)
		for _, procs := range []int{1, 2, 8} {
			runtime.GOMAXPROCS(procs)
			got := playScenario(t, seed)
			require.Equal(t, want, got, "seed %d GOMAXPROCS %d", seed, procs)
		}
	}
}

// TestConcurrentRounds runs rounds concurrently on distinct snapshots (run
// with -race) and checks that each equals its sequential result.
func TestConcurrentRounds(t *testing.T) {
	s, err := New(nil)
	require.NoError(t, err)
	var snaps []Snapshot
	var want []Plan
	for seed := uint64(0); seed < 6; seed++ {
		g := newScenarioGen(seed+100, false)
		for i := 0; i < 3; i++ {
			g.step()
		}
		snaps = append(snaps, g.snap)
		p, err := s.Round(context.Background(), g.snap)
		require.NoError(t, err)
		want = append(want, p)
	}
	got := make([]Plan, len(snaps))
	errs := make([]error, len(snaps))
	var wg sync.WaitGroup
	for i := range snaps {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			p, err := s.Round(context.Background(), snaps[i])
			got[i], errs[i] = p, err
		}(i)
	}
	wg.Wait()
	for i := range snaps {
		require.NoError(t, errs[i])
		assert.Equal(t, want[i], got[i])
	}
}

// TestParallelMatrix: building the matrix on several goroutines gives the
// same plan as on one.
func TestParallelMatrix(t *testing.T) {
	snap, err := steadySnapshot(8, 300, 3)
	require.NoError(t, err)
	one, err := New(nil)
	require.NoError(t, err)
	four, err := New(&Options{Parallelism: 4})
	require.NoError(t, err)
	a, err := one.Round(context.Background(), snap)
	require.NoError(t, err)
	b, err := four.Round(context.Background(), snap)
	require.NoError(t, err)
	assert.Equal(t, a, b)
	// A bad model (found while building the matrix) is reported the same
	// way: the first failing job in snapshot order.
	snap.Jobs[250].Models = bootstrap.Static{"t4": {InitBatch: 1, MaxBatch: 1}}
	snap.Jobs[290].Models = bootstrap.Static{"t4": {InitBatch: 1, MaxBatch: 1}}
	_, e1 := one.Round(context.Background(), snap)
	_, e4 := four.Round(context.Background(), snap)
	require.Error(t, e1)
	assert.Equal(t, e1.Error(), e4.Error())
	assert.Contains(t, e1.Error(), snap.Jobs[250].ID)
}
