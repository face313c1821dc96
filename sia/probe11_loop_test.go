package sia_test

// Probe 11 (issue 10): the host loop a Kubernetes or Slurm engineer writes
// first, on fleets of odd node shapes (1-16 GPUs mixed within a type),
// with churn the earlier loops (probe5, probe9) do not make: a running job
// re-declared under the same ID with its State kept (another Kind, GPU
// count, bounds, allow-list, or pipeline stages, which its Current may no
// longer satisfy), GPU types appearing and disappearing, and rounds under
// tight deadlines (expired, 1 ms, 5 ms, 20 ms). Every plan is checked by
// p11Check, written from the documentation alone (it shares no code with
// probeCheck).

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/goodput"
	"github.com/sia-sched/sia/ilp"
	"github.com/sia-sched/sia/sia"
)

var (
	p11Loops = flag.Int("probe11.loops", 6, "loops of TestProbe11HostLoop")
	p11Dump  = flag.Bool("probe11.dump", false, "log each round of TestProbe11HostLoop")
	p11Dir   = flag.String("probe11.save", "", "folder where TestProbe11HostLoop saves the problems of exact rounds past 1 s")
)

// p11Save writes the round's ilp problem to -probe11.save.
func p11Save(t *testing.T, plan *sia.Plan, name string) {
	m := sia.PlanMatrix(plan)
	t.Logf("%s: exact round past 1 s (%v, objective %v, bound %v, %d rows)", name, plan.Status, plan.Objective, plan.Bound, len(plan.Decisions))
	if *p11Dir == "" || m == nil {
		return
	}
	f, err := os.Create(filepath.Join(*p11Dir, name+".json"))
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, ilp.WriteJSON(f, m.Problem(), ilp.Meta{Name: name}))
}

// p11Shapes are the node sizes of the loop's fleets.
var p11Shapes = []int{1, 3, 5, 7, 11, 13, 15, 2, 4, 6, 8, 10, 12, 16}

type p11Host struct {
	rng   *rand.Rand
	snap  sia.Snapshot
	types []string
	next  int
	spare []sia.Node
	stats map[string]int
}

func newP11Host(seed uint64, nodes, jobs int) *p11Host {
	h := &p11Host{rng: rand.New(rand.NewPCG(seed, 11)), types: []string{"a", "b", "c"}, stats: map[string]int{}}
	h.snap.Now = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	for k := 0; k < nodes/4+h.rng.IntN(nodes); k++ {
		h.addNode(h.types[h.rng.IntN(len(h.types))])
	}
	for k := 0; k < jobs; k++ {
		h.snap.Jobs = append(h.snap.Jobs, h.newJob())
	}
	return h
}

func (h *p11Host) addNode(typ string) {
	h.snap.Nodes = append(h.snap.Nodes, sia.Node{ID: fmt.Sprintf("n%d", h.next), Type: typ, GPUs: p11Shapes[h.rng.IntN(len(p11Shapes))]})
	h.next++
}

// models draws a job's models: static (every type, some types left
// without a model), or a tracker whose spec lists some types only, or a
// hybrid-parallel static model with stages per type.
func (h *p11Host) models(kind sia.Kind) sia.Models {
	rng := h.rng
	fixed := 0
	if kind != sia.Adaptive {
		fixed = 64 << rng.IntN(3)
	}
	mk := func(stages int) goodput.Model {
		p := goodput.Params{AlphaC: 0.01 + 0.05*rng.Float64(), BetaC: 0.001 + 0.004*rng.Float64(), AlphaN: 0.02 * rng.Float64(), BetaN: 0.01 * rng.Float64(),
			AlphaR: 0.005 * rng.Float64(), BetaR: 0.002 * rng.Float64(), Gamma: 1 + rng.Float64()}
		m := goodput.Model{Params: p, Grad: goodput.GradStats{Sqr: 1, Var: 10 + 100*rng.Float64()}, InitBatch: 64, MaxBatch: 2048, FixedBatch: fixed,
			Limits: goodput.Limits{MinLocalBatch: 1, MaxLocalBatch: 256}, Stages: stages}
		if stages > 0 {
			m.MicroBatches = 2
		}
		return m
	}
	all := append(slices.Clone(h.types), "d", "e")
	switch rng.IntN(4) {
	case 0: // a tracker that excludes the types its spec lacks
		spec := bootstrap.Spec{InitBatch: 64, MaxBatch: 2048, FixedBatch: fixed, Limits: map[string]goodput.Limits{}}
		for _, t := range all {
			if rng.IntN(3) > 0 || len(spec.Limits) == 0 {
				spec.Limits[t] = goodput.Limits{MinLocalBatch: 1, MaxLocalBatch: 256}
			}
		}
		tr, err := bootstrap.New(spec, nil)
		if err != nil {
			panic(err)
		}
		for t := range spec.Limits {
			if rng.IntN(2) == 0 {
				if err := tr.Seed(t, goodput.Observation{Nodes: 1, Replicas: 1, LocalBatch: 64, StepTime: 0.05 + 0.1*rng.Float64(), SyncTime: 0}); err != nil {
					panic(err)
				}
			}
		}
		return tr
	case 1: // hybrid parallel
		s := bootstrap.Static{}
		for _, t := range all {
			if rng.IntN(4) > 0 || len(s) == 0 {
				s[t] = mk(1 + rng.IntN(4))
			}
		}
		return s
	default:
		s := bootstrap.Static{}
		for _, t := range all {
			if rng.IntN(5) > 0 {
				s[t] = mk(0)
			}
		}
		return s
	}
}

// declare (re)declares job j's spec: Kind, bounds, allow-list and models,
// keeping its ID and State (the host recreated the job object while its
// pods still run).
func (h *p11Host) declare(j *sia.Job) {
	rng := h.rng
	j.Kind = sia.Kind(rng.IntN(3))
	j.MinGPUs, j.MaxGPUs, j.GPUs, j.Types = 0, 0, 0, nil
	switch j.Kind {
	case sia.Rigid:
		j.GPUs = []int{1, 2, 3, 4, 5, 6, 7, 8, 11, 12, 13, 16, 24, 30}[rng.IntN(14)]
	default:
		if rng.IntN(3) == 0 {
			j.MinGPUs = 1 + rng.IntN(8)
		}
		if rng.IntN(3) == 0 {
			j.MaxGPUs = max(j.MinGPUs, 1) + rng.IntN(12)
		}
	}
	if rng.IntN(4) == 0 {
		j.Types = []string{h.types[rng.IntN(len(h.types))], "d"}
	}
	j.Models = h.models(j.Kind)
	j.NonPreemptible = rng.IntN(12) == 0
}

func (h *p11Host) newJob() sia.Job {
	j := sia.Job{ID: fmt.Sprintf("j%d", h.next), Submitted: h.snap.Now.Add(-time.Duration(h.rng.IntN(3600)) * time.Second)}
	h.next++
	h.declare(&j)
	return j
}

// churn is what happens between two rounds.
func (h *p11Host) churn() {
	rng := h.rng
	s := &h.snap
	s.Jobs = slices.DeleteFunc(s.Jobs, func(j sia.Job) bool { return rng.IntN(12) == 0 })
	for i := range s.Jobs {
		j := &s.Jobs[i]
		pinned := p11Pinned(j, s.Now)
		switch rng.IntN(12) {
		case 0: // failed: requeued
			j.State.Current, j.State.RestoreUntil = sia.Allocation{}, time.Time{}
			h.stats["failed"]++
		case 1, 2: // re-declared under the same ID, State kept
			if !pinned {
				h.declare(j)
				j.NonPreemptible = false
				h.stats["redeclared"]++
				if j.State.Current.Running() {
					h.stats["redeclared running"]++
				}
			}
		}
	}
	for k := rng.IntN(5 + len(s.Jobs)/10); k > 0; k-- {
		s.Jobs = append(s.Jobs, h.newJob())
	}
	switch rng.IntN(8) {
	case 0: // drain a node
		if len(s.Nodes) > 1 {
			k := rng.IntN(len(s.Nodes))
			h.spare = append(h.spare, s.Nodes[k])
			s.Nodes = slices.Delete(s.Nodes, k, k+1)
		}
	case 1: // a node returns
		if len(h.spare) > 0 {
			s.Nodes = append(s.Nodes, h.spare[0])
			h.spare = h.spare[1:]
		}
	case 2: // a new node, maybe of a type the fleet never had
		typ := h.types[rng.IntN(len(h.types))]
		if rng.IntN(3) == 0 {
			typ = []string{"d", "e"}[rng.IntN(2)]
		}
		h.addNode(typ)
	case 3: // a whole type disappears
		present := s.Types()
		if len(present) > 1 {
			gone := present[rng.IntN(len(present))]
			s.Nodes = slices.DeleteFunc(s.Nodes, func(n sia.Node) bool { return n.Type == gone })
			h.stats["type gone"]++
		}
	}
	if dropped := s.DropDepartedNodes(); len(dropped) > 0 {
		h.stats["dropped"] += len(dropped)
	}
	s.Reserved, s.Quotas = nil, nil
	present := s.Types()
	if rng.IntN(4) == 0 {
		s.Reserved = map[string]int{present[rng.IntN(len(present))]: rng.IntN(6)}
	}
	if rng.IntN(3) == 0 {
		for qn := 0; qn < 1+rng.IntN(2); qn++ {
			q := sia.Quota{Name: fmt.Sprint("q", qn), Limit: rng.IntN(24)}
			if rng.IntN(2) == 0 {
				q.Type = present[rng.IntN(len(present))]
			}
			for _, j := range s.Jobs {
				if rng.IntN(2) == 0 {
					q.Jobs = append(q.Jobs, j.ID)
				}
			}
			s.Quotas = append(s.Quotas, q)
		}
	}
}

func p11Pinned(j *sia.Job, now time.Time) bool {
	return j.State.Current.Running() && (j.State.Restoring || j.NonPreemptible || now.Before(j.State.RestoreUntil))
}

// p11Stages returns job j's replica size on type t and whether t is a type
// the job may use (allow-list, not Excluded), and whether it has a model.
func p11Stages(j *sia.Job, t string) (size int, allowed, model bool) {
	if j.Types != nil && !slices.Contains(j.Types, t) {
		return 0, false, false
	}
	m, src := j.Models.Model(t)
	if src == bootstrap.Excluded {
		return 0, false, false
	}
	return max(m.Stages, 1), true, src != bootstrap.None
}

// p11MinSize is the smallest GPU count job j may get on a type whose
// replica size is size.
func p11MinSize(j *sia.Job, size int) int {
	n := max(j.MinGPUs, 1)
	if j.Kind == sia.Rigid {
		n = j.GPUs
	}
	return (n + size - 1) / size * size
}

// p11Check checks a plan against the documented contract, from the
// snapshot alone. deadline says the round had one.
func p11Check(t *testing.T, snap sia.Snapshot, o sia.Options, plan sia.Plan, deadline bool) {
	t.Helper()
	o = o.WithDefaults()
	require.Len(t, plan.Decisions, len(snap.Jobs))
	nodes := map[string]sia.Node{}
	capacity := map[string]int{}
	for _, n := range snap.Nodes {
		nodes[n.ID] = n
		capacity[n.Type] += n.GPUs
	}
	owner := map[sia.GPU]string{}
	used := map[string]int{}
	alloc := map[string]sia.Allocation{}
	for i, d := range plan.Decisions {
		j := &snap.Jobs[i]
		cur := j.State.Current
		a := d.Allocation
		require.Equal(t, j.ID, d.Job)
		pinned := p11Pinned(j, snap.Now)
		if !a.Running() {
			require.Zero(t, a.GPUs, j.ID)
			require.Empty(t, a.Placement, j.ID)
			require.False(t, pinned, "pinned job %s lost its GPUs (%v)", j.ID, d.Reason)
			want := sia.Queue
			if cur.Running() {
				want = sia.Preempt
			}
			require.Equal(t, want, d.Action, j.ID)
			p11Reason(t, snap, o, j, d.Reason, capacity, deadline)
			continue
		}
		require.Equal(t, sia.ReasonNone, d.Reason, j.ID)
		alloc[j.ID] = a
		require.Len(t, a.Placement, a.GPUs, j.ID)
		span := map[string]bool{}
		for _, g := range a.Placement {
			n, ok := nodes[g.Node]
			require.True(t, ok, "job %s on a node the snapshot lacks: %v", j.ID, g)
			require.Equal(t, a.Type, n.Type, "job %s: GPU %v of another type", j.ID, g)
			require.True(t, g.Index >= 0 && g.Index < n.GPUs, "job %s: GPU %v out of range", j.ID, g)
			if o, dup := owner[g]; dup {
				require.Failf(t, "double booking", "GPU %v to %s and %s", g, o, j.ID)
			}
			owner[g] = j.ID
			span[g.Node] = true
		}
		require.Equal(t, len(span), a.Nodes, "job %s: %d nodes declared, %d used", j.ID, a.Nodes, len(span))
		used[a.Type] += a.GPUs
		same := cur.Running() && cur.Type == a.Type && cur.Nodes == a.Nodes && sameSet(cur.Placement, a.Placement)
		if pinned {
			require.True(t, same, "pinned job %s changed: %+v -> %+v", j.ID, cur, a)
			continue
		}
		size, allowed, _ := p11Stages(j, a.Type)
		require.True(t, allowed, "job %s on type %s it may not use (Types %v)", j.ID, a.Type, j.Types)
		require.Zero(t, a.GPUs%size, "job %s: %d GPUs, replica size %d on %s", j.ID, a.GPUs, size, a.Type)
		require.Equal(t, a.GPUs/size, d.Replicas, "job %s: replicas", j.ID)
		if j.Kind == sia.Rigid {
			require.Equal(t, j.GPUs, a.GPUs, "rigid job %s of %d GPUs runs on %d (%v, kept %v)", j.ID, j.GPUs, a.GPUs, d.Action, d.Kept)
		} else {
			require.GreaterOrEqual(t, a.GPUs, max(j.MinGPUs, 1), "job %s below MinGPUs (%v, kept %v)", j.ID, d.Action, d.Kept)
			if j.MaxGPUs > 0 {
				require.LessOrEqual(t, a.GPUs, j.MaxGPUs, "job %s above MaxGPUs (%v, kept %v)", j.ID, d.Action, d.Kept)
			}
			require.LessOrEqual(t, a.GPUs, o.MaxGPUsPerJob, j.ID)
		}
		if e := sia.PlanEntry(&plan, i); e != nil {
			require.Equal(t, [3]any{e.Config.Type, e.Config.Nodes, e.Config.GPUs}, [3]any{a.Type, a.Nodes, a.GPUs}, "job %s: placed shape is not the evaluated one", j.ID)
		}
		switch {
		case !cur.Running():
			require.Equal(t, sia.Start, d.Action, j.ID)
		case cur.Type != a.Type:
			require.Equal(t, sia.Migrate, d.Action, j.ID)
		case cur.GPUs != a.GPUs || cur.Nodes != a.Nodes:
			require.Equal(t, sia.Resize, d.Action, j.ID)
		case !same:
			require.Equal(t, sia.Move, d.Action, j.ID)
		default:
			require.Equal(t, sia.Keep, d.Action, j.ID)
		}
		if d.Restart {
			require.Contains(t, []sia.Action{sia.Resize, sia.Move, sia.Migrate, sia.Start}, d.Action, j.ID)
		}
	}
	for typ, u := range used {
		res := snap.Reserved[typ]
		require.LessOrEqual(t, u, max(capacity[typ]-res, 0), "type %s over capacity %d less reserved %d", typ, capacity[typ], res)
	}
	for _, q := range snap.Quotas {
		u := 0
		for _, id := range q.Jobs {
			if a, ok := alloc[id]; ok && (q.Type == "" || q.Type == a.Type) {
				u += a.GPUs
			}
		}
		require.LessOrEqual(t, u, q.Limit, "quota %s", q.Name)
	}
	if plan.Status == sia.StatusOptimal {
		require.False(t, math.IsInf(plan.Objective, 0) || math.IsNaN(plan.Objective))
	}
	if !math.IsInf(plan.Bound, 0) && !math.IsNaN(plan.Bound) && !math.IsNaN(plan.Objective) {
		tol := 1e-9 * math.Max(1, math.Abs(plan.Bound))
		if o.P < 0 { // minimised
			require.GreaterOrEqual(t, plan.Objective, plan.Bound-tol, "objective below the bound (%v)", plan.Status)
		} else {
			require.LessOrEqual(t, plan.Objective, plan.Bound+tol, "objective above the bound (%v)", plan.Status)
		}
	}
}

// p11Reason checks that a queued job's reason is true: a fact of the
// snapshot for too-large, no-admissible-type, quota and reserved; a
// deadline only for a round with one; lost-optimisation only for a job
// that could run somewhere.
func p11Reason(t *testing.T, snap sia.Snapshot, o sia.Options, j *sia.Job, r sia.QueueReason, capacity map[string]int, deadline bool) {
	t.Helper()
	fits, admissible, bounded := false, false, false
	for typ, c := range capacity {
		size, allowed, _ := p11Stages(j, typ)
		if !allowed || j.Kind == sia.Rigid && j.GPUs%size != 0 {
			continue // no configuration of the job on typ
		}
		n := p11MinSize(j, size)
		if j.Kind != sia.Rigid && j.MaxGPUs > 0 && n > j.MaxGPUs {
			bounded = true // no whole replica within MaxGPUs: either reason is true
			continue
		}
		admissible = true
		if n <= c && (j.Kind == sia.Rigid || n <= o.MaxGPUsPerJob) {
			fits = true
		}
	}
	inQuota := false
	for _, q := range snap.Quotas {
		inQuota = inQuota || slices.Contains(q.Jobs, j.ID)
	}
	switch r {
	case sia.ReasonNone:
		require.Fail(t, "no reason", "job %s gets no GPUs and no reason", j.ID)
	case sia.ReasonTooLarge:
		require.False(t, fits, "job %s too-large, but it fits a type it may use", j.ID)
	case sia.ReasonNoAdmissibleType:
		require.False(t, fits && admissible, "job %s no-admissible-type, but it fits a type it may use: %+v; models %+v; capacity %v", j.ID, *j, j.Models, capacity)
	case sia.ReasonQuota:
		require.True(t, inQuota, "job %s queued for a quota it is not in", j.ID)
	case sia.ReasonReserved:
		require.NotEmpty(t, snap.Reserved, "job %s queued for a reservation, none is made", j.ID)
	case sia.ReasonDeadline:
		require.True(t, deadline || o.SolverMaxNodes > 0, "job %s: deadline reason in a round without one: %+v", j.ID, *j)
	case sia.ReasonLostOptimisation, sia.ReasonUnplaceable:
		require.True(t, fits, "job %s queued as %v, but it fits no type it may use", j.ID, r)
	default:
		require.Fail(t, "unknown reason", "job %s: %v", j.ID, r)
	}
	if deadline && r == sia.ReasonDeadline {
		return // a row the round had no time to build: its Models are not asked (reason.go, whyNotBuilt)
	}
	if !admissible && !((deadline || bounded) && r == sia.ReasonTooLarge) { // a row not built: sized by Types alone
		require.Equal(t, sia.ReasonNoAdmissibleType, r, "job %s: no type admits it (deadline %v): %+v capacity %v", j.ID, deadline, *j, capacity)
	} else if !fits && r != sia.ReasonNoAdmissibleType {
		require.Equal(t, sia.ReasonTooLarge, r, "job %s fits no type", j.ID)
	}
}

// p11Deadlines are the rounds' deadlines: none (0), expired (-1), tight.
var p11Deadlines = []time.Duration{0, 0, -1, time.Millisecond, 5 * time.Millisecond, 20 * time.Millisecond}

// TestProbe11HostLoop: loops of 40 rounds with churn and deadlines; every
// plan passes p11Check; an error is typed and names a job, node, quota or
// reservation of the snapshot; a round under a deadline returns (a hang
// detector: at most 1 s past it, the contract's overshoot is measured by
// the deadline benchmarks).
func TestProbe11HostLoop(t *testing.T) {
	loops := *p11Loops
	if testing.Short() {
		loops = 2
	}
	p11Loop(t, loops, 40, 12, 0, -1)
}

// TestProbe11HostLoopLarge: the loop on fleets of 40-200 nodes and 150+
// jobs, where tight deadlines cut rounds short (the lean round).
func TestProbe11HostLoopLarge(t *testing.T) {
	if testing.Short() {
		t.Skip("-short")
	}
	p11Loop(t, max(*p11Loops/3, 1), 12, 160, 150, 100*time.Millisecond)
}

// p11Loop runs the loops; timeout is Options.RoundTimeout (negative: the
// rounds without a ctx deadline have none, and are exact).
func p11Loop(t *testing.T, loops, rounds, nodes, jobs int, timeout time.Duration) {
	total := map[string]int{}
	worst := time.Duration(0)
	for l := 0; l < loops; l++ {
		h := newP11Host(uint64(l)+1+uint64(nodes)<<8, nodes, jobs)
		opts := sia.Options{RoundTimeout: timeout, Parallelism: 1 + l%2, MaxGPUsPerJob: []int{0, 16}[l%2]}
		s, err := sia.New(&opts)
		require.NoError(t, err)
		for r := 0; r < rounds; r++ {
			h.churn()
			ctx, cancel := context.Background(), context.CancelFunc(func() {})
			dl := p11Deadlines[h.rng.IntN(len(p11Deadlines))]
			var at time.Time
			switch {
			case dl < 0:
				at = time.Now().Add(-time.Second)
			case dl > 0:
				at = time.Now().Add(dl)
			}
			exact := at.IsZero() && timeout < 0
			start := time.Now()
			if exact {
				// an exact round, bounded here at 3 s: one past 1 s is
				// counted and its problem saved (-probe11.save)
				at = start.Add(3 * time.Second)
			}
			if !at.IsZero() {
				ctx, cancel = context.WithDeadline(ctx, at)
			}
			plan, err := s.Round(ctx, h.snap)
			if exact && err == nil && time.Since(start) > time.Second {
				total["exact round past 1 s"]++
				p11Save(t, &plan, fmt.Sprintf("loop%d-round%d", l, r))
				dl = 1
			}
			past := time.Since(at)
			cancel()
			if !at.IsZero() && dl > 0 && !exact {
				worst = max(worst, past)
				require.Less(t, past, time.Second, "loop %d round %d: returned %v past its deadline", l, r, past)
			}
			if err != nil {
				var ie *sia.InputError
				var fe *sia.InfeasibleError
				require.True(t, errors.As(err, &ie) || errors.As(err, &fe), "loop %d round %d: untyped error %v", l, r, err)
				total["errors"]++
				t.Logf("loop %d round %d: %v", l, r, err)
				// resolved as a host would: unpin, drop quotas and reservations
				for i := range h.snap.Jobs {
					h.snap.Jobs[i].NonPreemptible = false
					h.snap.Jobs[i].State.RestoreUntil = time.Time{}
				}
				h.snap.Reserved, h.snap.Quotas = nil, nil
				plan, err = s.Round(context.Background(), h.snap)
				require.NoError(t, err, "loop %d round %d", l, r)
				dl = 0
			}
			if *p11Dump {
				t.Logf("loop %d round %d: deadline %v", l, r, dl)
				if *p11Dir != "" {
					b, err := json.Marshal(h.snap)
					require.NoError(t, err)
					require.NoError(t, os.WriteFile(filepath.Join(*p11Dir, "last-snapshot.json"), b, 0o644))
				}
			}
			// An exact round has its 3 s bound as a deadline: the steps'
			// shares of it may end one unproven, with deadline reasons, on a
			// slow run (-race: 0.7 s, status feasible).
			p11Check(t, h.snap, opts, plan, dl != 0 || timeout >= 0 || exact && plan.Status != sia.StatusOptimal)
			for _, d := range plan.Decisions {
				total[d.Action.String()]++
				if d.Reason != sia.ReasonNone {
					total["reason "+d.Reason.String()]++
				}
			}
			total[plan.Status.String()]++
			total["rounds"]++
			h.snap.Advance(&plan, h.snap.Now.Add(time.Duration(30+h.rng.IntN(600))*time.Second))
		}
		for k, v := range h.stats {
			total[k] += v
		}
	}
	t.Logf("%v; most past a deadline %v", total, worst)
	require.Positive(t, total["start"])
	require.Positive(t, total["redeclared running"])
}

// TestProbe11RigidNotWholeReplicas: a rigid job of 6 GPUs whose replicas
// are 4-GPU pipelines on every type has no configuration anywhere: its
// reason is no-admissible-type whatever the cluster's size (it read
// too-large on a 7-GPU node, as if a larger cluster would run it, and
// no-admissible-type on a 16-GPU one).
func TestProbe11RigidNotWholeReplicas(t *testing.T) {
	m := goodput.Model{Params: goodput.Params{AlphaC: 0.02, BetaC: 0.002, Gamma: 1.2}, Grad: goodput.GradStats{Sqr: 1, Var: 50},
		InitBatch: 64, MaxBatch: 2048, FixedBatch: 64, Limits: goodput.Limits{MinLocalBatch: 1, MaxLocalBatch: 256}, Stages: 4, MicroBatches: 2}
	s, err := sia.New(&sia.Options{RoundTimeout: -1})
	require.NoError(t, err)
	for _, gpus := range []int{5, 7, 8, 16} {
		snap := sia.Snapshot{Now: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC),
			Nodes: []sia.Node{{ID: "n", Type: "a", GPUs: gpus}},
			Jobs:  []sia.Job{{ID: "r", Kind: sia.Rigid, GPUs: 6, Models: bootstrap.Static{"a": m}}}}
		plan, err := s.Round(context.Background(), snap)
		require.NoError(t, err)
		require.Equal(t, sia.ReasonNoAdmissibleType, plan.Decisions[0].Reason, "node of %d GPUs", gpus)
	}
}
