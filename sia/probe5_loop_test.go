package sia_test

// Probes (issue 10) of a host's control loop through the exported API only:
// 60+ rounds per case on a small fleet where jobs finish, fail, restart and
// are resubmitted under the same ID with another Kind or other bounds;
// running jobs' bounds change; nodes drain, return, grow and shrink; quotas
// and reservations change; the jobs' bootstrap.Trackers learn from Observe
// between rounds (also from reports the tracker must refuse: a type outside
// the spec, zero or NaN times). Every round's plan passes probeCheck, and
// the round is checked as a host relies on it: Round does not change the
// snapshot nor the trackers, the plan shares no memory with the snapshot,
// the same snapshot gives the same plan at Parallelism 1..4 and again on
// the same Scheduler, and Snapshot and Plan survive a JSON round trip (the
// decoded snapshot gives the same plan).

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/goodput"
	"github.com/sia-sched/sia/sia"
)

// loopJob is what the host of the control loop knows of a job beyond the
// snapshot: its true throughput per type (what Observe reports) and its
// tracker (nil for a job with bootstrap.Static models).
type loopJob struct {
	truth   map[string]goodput.Params
	tracker *bootstrap.Tracker
	stages  map[string]int // a hybrid-parallel job's pipeline stages per type
}

// loopHost is the host: its snapshot, its jobs and its random source.
type loopHost struct {
	rng   *rand.Rand
	snap  sia.Snapshot
	jobs  map[string]*loopJob
	done  []string   // IDs of jobs that finished (resubmitted later)
	spare []sia.Node // drained nodes that may return
	types []string   // every type the fleet may have
	next  int        // next fresh job ID
	obs   [4]int     // Observe calls accepted, refused as they must be, refits, of a pipeline over more nodes than replicas
	fixes int        // rounds the host had to fix after a typed error
}

func newLoopHost(seed uint64) *loopHost {
	rng := rand.New(rand.NewPCG(seed, 5))
	h := &loopHost{rng: rng, jobs: map[string]*loopJob{}, types: []string{"a", "b", "c"}}
	h.snap.Now = probeT0
	for k := 0; k < 2+rng.IntN(4); k++ {
		typ := h.types[rng.IntN(len(h.types))]
		h.snap.Nodes = append(h.snap.Nodes, sia.Node{ID: fmt.Sprintf("n%d", k), Type: typ, GPUs: probeSizes[rng.IntN(len(probeSizes))]})
	}
	return h
}

// newJob draws a job (fresh, or resubmitted under the ID of a finished
// one): Kind, bounds and allow-list at random, with a tracker (usually) or
// static models.
func (h *loopHost) newJob(id string) sia.Job {
	rng := h.rng
	lj := &loopJob{truth: map[string]goodput.Params{}}
	spec := bootstrap.Spec{InitBatch: 16, MaxBatch: 16 << rng.IntN(5), Limits: map[string]goodput.Limits{}}
	static := bootstrap.Static{}
	for _, typ := range append(slices.Clone(h.types), "z") { // "z": a type the fleet never has
		if rng.IntN(5) == 0 && len(spec.Limits) > 0 {
			continue // the job cannot run on typ
		}
		p := goodput.Params{AlphaC: 0.01 + 0.05*rng.Float64(), BetaC: 0.001 + 0.004*rng.Float64(), AlphaN: 0.02 * rng.Float64(), BetaN: 0.01 * rng.Float64(),
			AlphaR: 0.005 * rng.Float64(), BetaR: 0.002 * rng.Float64(), Gamma: 1 + rng.Float64()}
		lj.truth[typ] = p
		lim := goodput.Limits{MinLocalBatch: 1, MaxLocalBatch: 32 << rng.IntN(3)}
		spec.Limits[typ] = lim
		static[typ] = goodput.Model{Params: p, InitBatch: spec.InitBatch, MaxBatch: spec.MaxBatch, Limits: lim}
	}
	j := sia.Job{ID: id, Kind: sia.Kind(rng.IntN(3)), Submitted: h.snap.Now.Add(-time.Duration(rng.IntN(600)) * time.Second)}
	capacity := 0
	for _, n := range h.snap.Nodes {
		capacity += n.GPUs
	}
	if j.Kind != sia.Adaptive {
		spec.FixedBatch = spec.InitBatch << rng.IntN(3)
		spec.MaxBatch = max(spec.MaxBatch, spec.FixedBatch)
		for typ, m := range static {
			m.FixedBatch, m.MaxBatch = spec.FixedBatch, spec.MaxBatch
			static[typ] = m
		}
	}
	h.bounds(&j, capacity)
	if rng.IntN(5) == 0 {
		j.Types = []string{h.types[rng.IntN(len(h.types))], "z"}
	}
	j.NonPreemptible = rng.IntN(10) == 0
	if rng.IntN(8) == 0 { // hybrid parallel: 1-4 pipeline stages per type
		spec.Stages, spec.MicroBatches, spec.Limits = map[string]int{}, 1+rng.IntN(4), nil
		spec.MaxBatch = max(spec.MaxBatch, spec.InitBatch)
		for _, typ := range slices.Sorted(maps.Keys(lj.truth)) {
			spec.Stages[typ] = 1 + rng.IntN(4)
		}
		if j.Kind == sia.Rigid {
			j.GPUs = spec.Stages[slices.Sorted(maps.Keys(spec.Stages))[0]] * (1 + rng.IntN(2))
		}
		tr, err := bootstrap.New(spec, nil)
		if err != nil {
			panic(err)
		}
		lj.tracker, lj.stages = tr, spec.Stages
		j.Models = tr
	} else if rng.IntN(4) == 0 {
		j.Models = static
	} else {
		tr, err := bootstrap.New(spec, nil)
		if err != nil {
			panic(err)
		}
		lj.tracker = tr
		j.Models = tr
	}
	h.jobs[id] = lj
	return j
}

// bounds draws j's GPU bounds for its Kind.
func (h *loopHost) bounds(j *sia.Job, capacity int) {
	rng := h.rng
	j.MinGPUs, j.MaxGPUs, j.GPUs = 0, 0, 0
	if j.Kind == sia.Rigid {
		j.GPUs = 1 + rng.IntN(max(capacity/2, 1))
		return
	}
	if rng.IntN(3) == 0 {
		j.MinGPUs = 1 + rng.IntN(4)
	}
	if rng.IntN(3) == 0 {
		j.MaxGPUs = max(j.MinGPUs, 1) + rng.IntN(8)
	}
}

// observe reports what each running job measured on its allocation, and a
// few reports a tracker must refuse (and not learn from).
func (h *loopHost) observe(t *testing.T, plan sia.Plan) {
	for i, d := range plan.Decisions {
		lj := h.jobs[d.Job]
		a := d.Allocation
		if lj.tracker == nil || !a.Running() || d.Replicas < 1 {
			continue
		}
		if d.Replicas < a.Nodes {
			h.obs[3]++ // a pipeline spanning nodes (TestProbe5HybridAcrossNodesObserve)
		}
		p := lj.truth[a.Type]
		b := max(d.LocalBatch, 1)
		step := p.SyncTime(a.Nodes, d.Replicas, float64(b))
		sync := math.Min(p.NetTime(a.Nodes, d.Replicas), step/2)
		_, err := lj.tracker.Observe(a.Type, bootstrap.Measurement{Nodes: a.Nodes, Replicas: d.Replicas, LocalBatch: b, StepTime: step, SyncTime: sync})
		require.NoError(t, err, "job %s (decision %d): Observe on %s of %+v (stages %v, nodes %+v)", d.Job, i, a.Type, d, lj.stages, h.snap.Nodes)
		h.obs[0]++
		v := lj.tracker.Version()
		for _, bad := range []struct {
			typ string
			m   bootstrap.Measurement
		}{
			{"nosuch", bootstrap.Measurement{Nodes: 1, Replicas: 1, LocalBatch: b, StepTime: step}},
			{a.Type, bootstrap.Measurement{Nodes: a.Nodes, Replicas: d.Replicas, LocalBatch: b, StepTime: 0}},
			{a.Type, bootstrap.Measurement{Nodes: a.Nodes, Replicas: d.Replicas, LocalBatch: b, StepTime: math.NaN()}},
			{a.Type, bootstrap.Measurement{Nodes: a.Nodes, Replicas: d.Replicas, LocalBatch: b, StepTime: step, SyncTime: math.Inf(1)}},
			{a.Type, bootstrap.Measurement{Nodes: 0, Replicas: d.Replicas, LocalBatch: b, StepTime: step}},
		} {
			_, err := lj.tracker.Observe(bad.typ, bad.m)
			require.Error(t, err, "job %s: Observe(%s, %+v) accepted", d.Job, bad.typ, bad.m)
			require.ErrorIs(t, err, bootstrap.ErrInvalidInput)
			require.Equal(t, v, lj.tracker.Version(), "job %s: a refused Observe changed the tracker", d.Job)
			h.obs[1]++
		}
		// a type the job may use but the fleet does not have
		if tp, ok := lj.truth["z"]; ok && h.rng.IntN(4) == 0 {
			refit, err := lj.tracker.Observe("z", bootstrap.Measurement{Nodes: 1, Replicas: 1, LocalBatch: 1, StepTime: tp.SyncTime(1, 1, 1)})
			require.NoError(t, err)
			if refit {
				h.obs[2]++
			}
		}
	}
}

// churn applies what happens between rounds: jobs finish, fail, are
// resubmitted, change bounds; nodes drain, return, grow, shrink; quotas and
// reservations change.
func (h *loopHost) churn() {
	rng := h.rng
	s := &h.snap
	s.Jobs = slices.DeleteFunc(s.Jobs, func(j sia.Job) bool {
		if j.State.Current.Running() && rng.IntN(8) == 0 || rng.IntN(20) == 0 {
			h.done = append(h.done, j.ID)
			return true
		}
		return false
	})
	for i := range s.Jobs {
		j := &s.Jobs[i]
		switch rng.IntN(20) {
		case 0: // the job failed: the host lost its GPUs and requeues it
			j.State.Current = sia.Allocation{}
			j.State.RestoreUntil = time.Time{}
		case 1: // the user edits the job's bounds (not of a pinned one)
			if !probePinned(j, s.Now) {
				capacity := 0
				for _, n := range s.Nodes {
					capacity += n.GPUs
				}
				h.bounds(j, capacity)
			}
		}
	}
	for k := rng.IntN(4); k > 0; k-- {
		id := ""
		if len(h.done) > 0 && rng.IntN(2) == 0 {
			id, h.done = h.done[0], h.done[1:] // resubmitted under the same ID
		} else {
			id = fmt.Sprintf("j%d", h.next)
			h.next++
		}
		s.Jobs = append(s.Jobs, h.newJob(id))
	}
	switch rng.IntN(6) {
	case 0: // drain
		if len(s.Nodes) > 1 {
			k := rng.IntN(len(s.Nodes))
			h.spare = append(h.spare, s.Nodes[k])
			s.Nodes = slices.Delete(s.Nodes, k, k+1)
		}
	case 1: // return
		if len(h.spare) > 0 {
			s.Nodes = append(s.Nodes, h.spare[0])
			h.spare = h.spare[1:]
		}
	case 2: // grow or shrink
		k := rng.IntN(len(s.Nodes))
		s.Nodes[k].GPUs = max(1, min(16, s.Nodes[k].GPUs+rng.IntN(7)-3))
	}
	s.DropDepartedNodes()
	s.Reserved, s.Quotas = nil, nil
	// mostly a type the fleet has now (one it lacks is an error naming
	// Reserved or Quotas[0].Type, which the host then resolves)
	present := s.Types()
	someType := func() string {
		if rng.IntN(10) == 0 || len(present) == 0 {
			return h.types[rng.IntN(len(h.types))]
		}
		return present[rng.IntN(len(present))]
	}
	if rng.IntN(3) == 0 {
		s.Reserved = map[string]int{someType(): rng.IntN(4)}
	}
	if rng.IntN(3) == 0 && len(s.Jobs) > 0 {
		q := sia.Quota{Name: "q", Limit: rng.IntN(12)}
		if rng.IntN(2) == 0 {
			q.Type = someType()
		}
		for _, j := range s.Jobs {
			if rng.IntN(2) == 0 {
				q.Jobs = append(q.Jobs, j.ID)
			}
		}
		s.Quotas = []sia.Quota{q}
	}
}

// cloneSnap deep-copies the snapshot's slices and maps (Models are shared).
func cloneSnap(s sia.Snapshot) sia.Snapshot {
	c := s
	c.Nodes = slices.Clone(s.Nodes)
	c.Jobs = slices.Clone(s.Jobs)
	for i := range c.Jobs {
		c.Jobs[i].Types = slices.Clone(c.Jobs[i].Types)
		c.Jobs[i].State.Current.Placement = slices.Clone(c.Jobs[i].State.Current.Placement)
	}
	if s.Reserved != nil {
		c.Reserved = map[string]int{}
		for k, v := range s.Reserved {
			c.Reserved[k] = v
		}
	}
	c.Quotas = slices.Clone(s.Quotas)
	for i := range c.Quotas {
		c.Quotas[i].Jobs = slices.Clone(c.Quotas[i].Jobs)
	}
	return c
}

func clonePlanDecisions(p sia.Plan) []sia.Decision {
	ds := slices.Clone(p.Decisions)
	for i := range ds {
		ds[i].Allocation.Placement = slices.Clone(ds[i].Allocation.Placement)
	}
	return ds
}

// roundOrFix runs the round; an error must be typed and name a job, and is
// then resolved as a host would (unpin the jobs, drop the reservations) and
// the round run again.
func (h *loopHost) roundOrFix(t *testing.T, s *sia.Scheduler) sia.Plan {
	plan, err := s.Round(context.Background(), h.snap)
	verr := h.snap.Validate()
	if err == nil {
		require.NoError(t, verr, "Round accepts a snapshot Validate rejects")
		return plan
	}
	require.Error(t, verr, "Validate accepts a snapshot Round rejects: %v", err)
	require.Equal(t, err.Error(), verr.Error(), "Validate and Round disagree")
	var ie *sia.InputError
	var fe *sia.InfeasibleError
	require.True(t, errors.As(err, &ie) || errors.As(err, &fe), "untyped error: %v", err)
	field := ""
	if ie != nil {
		field = ie.Field
	} else {
		field = fe.Field
	}
	require.True(t, strings.HasPrefix(field, "Jobs[") || strings.HasPrefix(field, "Reserved") || strings.HasPrefix(field, "Quotas["),
		"error names no field of the snapshot: %v", err)
	h.fixes++
	t.Log(err)
	for i := range h.snap.Jobs {
		h.snap.Jobs[i].NonPreemptible = false
		h.snap.Jobs[i].State.RestoreUntil = time.Time{}
	}
	h.snap.Reserved, h.snap.Quotas = nil, nil
	plan, err = s.Round(context.Background(), h.snap)
	require.NoError(t, err)
	return plan
}

// checkHostContract checks what the host relies on beyond the plan's
// validity: no mutation, no aliasing, determinism, JSON round trips.
func (h *loopHost) checkHostContract(t *testing.T, scheds []*sia.Scheduler, plan sia.Plan, before sia.Snapshot, versions map[string]uint64) {
	assert.Equal(t, before, h.snap, "Round changed the caller's snapshot")
	for id, v := range versions {
		assert.Equal(t, v, h.jobs[id].tracker.Version(), "Round changed job %s's tracker", id)
	}
	// the plan shares no memory with the snapshot: overwrite, in place,
	// every GPU the snapshot's jobs list
	want := clonePlanDecisions(plan)
	for i := range h.snap.Jobs {
		for k := range h.snap.Jobs[i].State.Current.Placement {
			h.snap.Jobs[i].State.Current.Placement[k] = sia.GPU{Node: "scribbled", Index: -7}
		}
	}
	assert.Equal(t, want, plan.Decisions, "the plan aliases the snapshot's Placement")
	// nor do its decisions share memory: a host appending to one
	// decision's GPUs changes no other decision
	for i := range plan.Decisions {
		_ = append(plan.Decisions[i].Allocation.Placement, sia.GPU{Node: "appended", Index: -1})
	}
	assert.Equal(t, want, plan.Decisions, "appending to a decision's Placement changed another decision")
	h.snap = before
	before = cloneSnap(before)
	// the same snapshot, the same plan: other Parallelism, same Scheduler again
	for _, s := range scheds {
		again, err := s.Round(context.Background(), h.snap)
		require.NoError(t, err)
		assert.Equal(t, want, again.Decisions, "Parallelism %d: another plan", s.Options().Parallelism)
		assert.Equal(t, plan.Status, again.Status)
	}
	// JSON: the plan decodes to itself, the snapshot to one giving the same plan
	b, err := json.Marshal(plan)
	require.NoError(t, err)
	var back sia.Plan
	require.NoError(t, json.Unmarshal(b, &back))
	assert.Equal(t, want, back.Decisions, "plan JSON round trip")
	assert.Equal(t, plan.Status, back.Status)
	for _, v := range [][2]float64{{plan.Objective, back.Objective}, {plan.Bound, back.Bound}} {
		assert.True(t, v[0] == v[1] || math.IsNaN(v[0]) && math.IsNaN(v[1]), "plan JSON round trip: %v became %v", v[0], v[1])
	}
	b, err = json.Marshal(h.snap)
	require.NoError(t, err)
	var snap sia.Snapshot
	require.NoError(t, json.Unmarshal(b, &snap))
	decoded, err := scheds[0].Round(context.Background(), snap)
	require.NoError(t, err)
	assert.Equal(t, want, decoded.Decisions, "the snapshot decoded from JSON gives another plan")
	assert.Equal(t, before, h.snap)
	// out of time: an expired deadline still gives a valid plan with true
	// reasons, keeps the pinned jobs, and changes nothing in the snapshot
	ctx, cancel := context.WithDeadline(context.Background(), time.Unix(0, 0))
	defer cancel()
	late, err := scheds[len(scheds)-1].Round(ctx, h.snap)
	require.NoError(t, err)
	assert.NotEqual(t, sia.StatusOptimal, late.Status, "a round out of time called optimal")
	probeCheck(t, h.snap, scheds[0].Options(), late)
	_, _ = probe5Reasons(t, h.snap, late)
	assert.Equal(t, before, h.snap)
}

// probe5LoopOptions are the option sets of the loop: defaults, and values
// at their limits.
var probe5LoopOptions = []sia.Options{
	{},
	{P: -sia.MaxP, Lambda: sia.MaxLambda, ScaleUpFactor: 1, MaxGPUsPerJob: 4},
	{P: 1, Lambda: -1, NoScaleUpCap: true, RestartCost: time.Hour},
	{ScaleUpFactor: sia.MaxScaleUpFactor, RestartCost: time.Nanosecond, Artifact: sia.PublishedArtifact()},
	{SolverMaxNodes: 1, Seed: math.MaxUint64, Lambda: 1e-300, MaxGPUsPerJob: 1 << 30},
}

// probe5Loops is the number of loops of TestProbe5ControlLoop (go test
// ./sia -run Probe5ControlLoop -probe5.loops 200 for a longer search).
var probe5Loops = flag.Int("probe5.loops", 5, "loops of 60 rounds of TestProbe5ControlLoop")

// TestProbe5ControlLoop: 5 loops of 60 rounds (2 under -short), one per
// option set of probe5LoopOptions.
func TestProbe5ControlLoop(t *testing.T) {
	loops, rounds := *probe5Loops, 60
	if testing.Short() {
		loops = 2
	}
	total := 0
	var obs [4]int
	fixes, decisions, running, measured, reasons, hybrid, known, idle := 0, 0, 0, 0, 0, 0, 0, 0
	for c := 0; c < loops; c++ {
		o := probe5LoopOptions[c%len(probe5LoopOptions)]
		o.RoundTimeout = -1
		var scheds []*sia.Scheduler
		for par := 1; par <= 4; par++ {
			op := o
			op.Parallelism = par
			s, err := sia.New(&op)
			require.NoError(t, err)
			scheds = append(scheds, s)
		}
		h := newLoopHost(uint64(c))
		ok := t.Run(fmt.Sprintf("loop%d", c), func(t *testing.T) {
			for r := 0; r < rounds; r++ {
				h.churn()
				before := cloneSnap(h.snap)
				versions := map[string]uint64{}
				for id, lj := range h.jobs {
					if lj.tracker != nil {
						versions[id] = lj.tracker.Version()
					}
				}
				plan := h.roundOrFix(t, scheds[0])
				before = cloneSnap(h.snap) // after a fix, the snapshot the plan is of
				free := probeCheck(t, h.snap, scheds[0].Options(), plan)
				idle += probe5Idle(t, h.snap, scheds[0].Options(), plan, free)
				c, k := probe5Reasons(t, h.snap, plan)
				reasons, known = reasons+c, known+k
				h.checkHostContract(t, scheds, plan, before, versions)
				if t.Failed() {
					h.dump(t, plan)
					t.Fatalf("round %d", r)
				}
				total++
				for _, d := range plan.Decisions {
					decisions++
					if d.Allocation.Running() {
						running++
						if st := h.jobs[d.Job].stages; st != nil {
							hybrid++
							p := st[d.Allocation.Type]
							assert.Equal(t, d.Allocation.GPUs, d.Replicas*p, "hybrid job %s: %d GPUs for %d replicas of %d stages", d.Job, d.Allocation.GPUs, d.Replicas, p)
						}
						if tr := h.jobs[d.Job].tracker; tr != nil && tr.Source(d.Allocation.Type) == bootstrap.Measured {
							measured++
						}
					}
				}
				h.snap.Advance(&plan, h.snap.Now.Add(time.Duration(30+h.rng.IntN(300))*time.Second))
				h.observe(t, plan)
			}
		})
		fixes += h.fixes
		for k := range obs {
			obs[k] += h.obs[k]
		}
		if !ok {
			break
		}
	}
	assert.Greater(t, running, decisions/4, "too few jobs run for the loop to probe anything")
	assert.Greater(t, measured, running/10, "too few trackers learn")
	t.Logf("%d rounds, %d decisions (%d with GPUs, %d of them on measured models), %d rounds fixed by the host after a typed error, %d quota or reservation reasons checked, %d hybrid-parallel allocations; %d configurations blocked only by charges above GPUs (known limit)", total, decisions, running, measured, fixes, reasons, hybrid, known)
	t.Logf("%d waiting jobs checked not to fit the free GPUs of an optimal plan", idle)
	t.Logf("%d rounds; Observe: %d accepted, %d refused as they must be, %d refits on a type outside the fleet; %d of them of a pipeline spanning more nodes than replicas", total, obs[0], obs[1], obs[2], obs[3])
}

// probe5Reasons checks the quota and reservation reasons against the plan
// and the round's matrix: a job queued (or preempted) for ReasonQuota has
// every configuration blocked by a quota covering it (its limit less what
// the quota's other jobs hold in the plan); for ReasonReserved, no
// configuration fits its type's free GPUs outside the reservation.
//
// Known limits (before the fill step; TestProbe5QuotaCountsGPUs): the
// allocation counts quotas and capacity in the entries' charges, not their
// GPUs; a quota or reservation reason that only charges explain is counted
// in known (an error with -probe5.known).
func probe5Reasons(t *testing.T, snap sia.Snapshot, plan sia.Plan) (checked, known int) {
	t.Helper()
	m := sia.PlanMatrix(&plan)
	if m == nil {
		return 0, 0
	}
	capacity := map[string]int{}
	for _, n := range snap.Nodes {
		capacity[n.Type] += n.GPUs
	}
	used := map[string]int{}
	held := map[string]sia.Allocation{}
	for _, d := range plan.Decisions {
		if d.Allocation.Running() {
			used[d.Allocation.Type] += d.Allocation.GPUs
			held[d.Job] = d.Allocation
		}
	}
	usedCharged := map[string]int{}
	charged := map[string]int{} // the chosen entries' charges (≥ GPUs)
	for k, d := range plan.Decisions {
		if e := sia.PlanEntry(&plan, k); e != nil && d.Allocation.Running() {
			charged[d.Job] = max(e.Charge, d.Allocation.GPUs)
			usedCharged[d.Allocation.Type] += charged[d.Job]
		}
	}
	quotaUsed := make([]int, len(snap.Quotas))
	quotaCharged := make([]int, len(snap.Quotas))
	for q, quota := range snap.Quotas {
		for _, id := range quota.Jobs {
			if a, ok := held[id]; ok && (quota.Type == "" || quota.Type == a.Type) {
				quotaUsed[q] += a.GPUs
				quotaCharged[q] += charged[id]
			}
		}
	}
	for i, d := range plan.Decisions {
		if d.Reason != sia.ReasonQuota && d.Reason != sia.ReasonReserved {
			continue
		}
		checked++
		row := m.Rows[i]
		require.NotEmpty(t, row.Entries, "job %s: %v without configurations", d.Job, d.Reason)
		for _, e := range row.Entries {
			g := e.Config.GPUs
			blocked, byCharge := false, false
			for q, quota := range snap.Quotas {
				if slices.Contains(quota.Jobs, d.Job) && (quota.Type == "" || quota.Type == e.Config.Type) {
					blocked = blocked || quotaUsed[q]+g > quota.Limit
					byCharge = byCharge || quotaCharged[q]+max(g, e.Charge) > quota.Limit
				}
			}
			if d.Reason == sia.ReasonQuota {
				if !blocked && byCharge && !*probe5Known {
					known++ // TestProbe5QuotaCountsGPUs: quotas count charges
					continue
				}
				assert.True(t, blocked, "job %s: reason quota, but its %d GPUs of %s fit every quota covering it (%+v, used %v GPUs, %v charged)", d.Job, g, e.Config.Type, snap.Quotas, quotaUsed, quotaCharged)
				continue
			}
			typ := e.Config.Type
			fits := used[typ]+g <= capacity[typ]-snap.Reserved[typ]
			if !blocked && fits && usedCharged[typ]+max(g, e.Charge) > capacity[typ]-snap.Reserved[typ] && !*probe5Known {
				known++ // the per-pool charges strand GPUs (TestProbeChargeStrandsGPUs)
				continue
			}
			assert.True(t, blocked || !fits,
				"job %s: reason reserved, but its %d GPUs of %s fit outside the reservation (used %d, capacity %d, reserved %d)", d.Job, g, typ, used[typ], capacity[typ], snap.Reserved[typ])
		}
	}
	return checked, known
}

// dump logs the fleet and every job of a failed round, for a report.
func (h *loopHost) dump(t *testing.T, plan sia.Plan) {
	t.Logf("nodes %+v reserved %v quotas %+v", h.snap.Nodes, h.snap.Reserved, h.snap.Quotas)
	for i, j := range h.snap.Jobs {
		d := plan.Decisions[i]
		t.Logf("%s: %v GPUs %d min %d max %d types %v stages %v nonpreemptible %v current %s/%d/%d -> %v %s/%d (%v)", j.ID, j.Kind, j.GPUs, j.MinGPUs, j.MaxGPUs, j.Types,
			h.jobs[j.ID].stages, j.NonPreemptible, j.State.Current.Type, j.State.Current.Nodes, j.State.Current.GPUs, d.Action, d.Allocation.Type, d.Allocation.GPUs, d.Reason)
	}
}

// probe5Idle: in a plan proven optimal, without quotas or reservations, under the
// objective's guarantee (p > 0, or p < 0 and λ > 1; not the artifact's
// variant), no waiting job fits the GPUs the plan leaves free (Options.
// Lambda's doc; probeFitsFree knows the shapes that fit). It returns the
// number of waiting jobs checked.
func probe5Idle(t *testing.T, snap sia.Snapshot, o sia.Options, plan sia.Plan, free map[string]int) int {
	t.Helper()
	d := o.WithDefaults()
	reserved := false
	for _, r := range snap.Reserved {
		reserved = reserved || r > 0
	}
	if plan.Status != sia.StatusOptimal || len(snap.Quotas) > 0 || reserved || o.Artifact != nil || d.P < 0 && d.Lambda <= 1 {
		return 0
	}
	n := 0
	for i, dec := range plan.Decisions {
		j := &snap.Jobs[i]
		if dec.Allocation.Running() || j.State.Current.Running() || probe5Hybrid(j, snap) {
			continue // (probeFitsFree knows no replica sizes)
		}
		n++
		if how := probeFitsFree(j, snap, o, plan, free); how != "" {
			assert.Failf(t, "idle by construction", "job %s (%v, %d GPUs, min %d) waits (%v) although %s", j.ID, j.Kind, j.GPUs, j.MinGPUs, dec.Reason, how)
		}
	}
	return n
}

// probe5Hybrid reports whether job j has a replica size above 1 on a type.
func probe5Hybrid(j *sia.Job, snap sia.Snapshot) bool {
	for _, t := range snap.Types() {
		if m, _ := j.Models.Model(t); m.Stages > 1 {
			return true
		}
	}
	return false
}
