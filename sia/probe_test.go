package sia_test

// Adversarial probes of issue 10's classes through the exported API only
// (Scheduler.Round, Snapshot, Job, Node, Models, Options), as a host embeds
// the library: random fleets of every node shape over several rounds, with
// an independent checker of every plan (probeCheck) that knows nothing of
// the round's internals beyond the evaluated entry of each decision.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/configset"
	"github.com/sia-sched/sia/goodput"
	"github.com/sia-sched/sia/ilp"
	"github.com/sia-sched/sia/sia"
)

// probeModel is a job's goodput per type: speed·r^gain·cross^(nodes−1) on
// the types of speed (Measured), no model yet on the types of none, and
// excluded on every other type.
type probeModel struct {
	speed  map[string]float64
	none   map[string]bool
	gain   float64
	cross  float64
	stages int // replica size on every type (0: data parallel)
}

func (m probeModel) Model(t string) (goodput.Model, bootstrap.Source) {
	base := goodput.Model{InitBatch: 1, MaxBatch: 1, Stages: m.stages}
	switch {
	case m.speed[t] > 0:
		return base, bootstrap.Measured
	case m.none[t]:
		return base, bootstrap.None
	}
	return base, bootstrap.Excluded
}

func (m probeModel) Evaluate(t string, nodes, replicas int) (goodput.Choice, bool) {
	s := m.speed[t]
	if s <= 0 || nodes < 1 || replicas < 1 {
		return goodput.Choice{}, false
	}
	v := s * math.Pow(float64(replicas), m.gain) * math.Pow(m.cross, float64(nodes-1))
	return goodput.Choice{Goodput: v, Throughput: v, Efficiency: 1, LocalBatch: 1, GlobalBatch: replicas}, true
}

// probeCases is the number of random fleets of TestProbeShapesAcrossRounds
// (go test ./sia -run Probe -probe.cases 5000 for a longer search).
var probeCases = flag.Int("probe.cases", 150, "random fleets of TestProbeShapesAcrossRounds")

var probeT0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// allowed reports whether job j may run on type t (Types and Models).
func probeAllowed(j *sia.Job, t string) bool {
	if j.Types != nil && !slices.Contains(j.Types, t) {
		return false
	}
	_, src := j.Models.Model(t)
	return src != bootstrap.Excluded
}

func probePinned(j *sia.Job, now time.Time) bool {
	return j.State.Current.Running() && (j.State.Restoring || j.NonPreemptible || now.Before(j.State.RestoreUntil))
}

// probeCheck asserts every invariant a host relies on: one decision per job
// in order; no GPU to two jobs; every placement on known nodes of its type,
// in range, on exactly Nodes nodes; the evaluated entry's shape is the
// placed shape; bounds, rigid counts, allowed types, pins, reservations and
// quotas kept; actions consistent with Current; a reason exactly on the
// decisions without GPUs; finite numbers. It returns the GPUs each type has
// free after the plan, per node.
func probeCheck(t *testing.T, snap sia.Snapshot, o sia.Options, plan sia.Plan) map[string]int {
	t.Helper()
	o = o.WithDefaults()
	require.Len(t, plan.Decisions, len(snap.Jobs))
	byID := map[string]sia.Node{}
	capacity := map[string]int{}
	for _, n := range snap.Nodes {
		byID[n.ID] = n
		capacity[n.Type] += n.GPUs
	}
	free := map[string]int{}
	for _, n := range snap.Nodes {
		free[n.ID] = n.GPUs
	}
	owner := map[sia.GPU]string{}
	usedType := map[string]int{}
	usedJob := map[string]sia.Allocation{}
	for i, d := range plan.Decisions {
		j := &snap.Jobs[i]
		require.Equal(t, j.ID, d.Job, "decision %d", i)
		a := d.Allocation
		cur := j.State.Current
		assert.False(t, math.IsNaN(d.Goodput) || math.IsInf(d.Goodput, 0) || d.Goodput < 0, "job %s: goodput %v", j.ID, d.Goodput)
		if !a.Running() {
			assert.Zero(t, a.GPUs, j.ID)
			assert.Empty(t, a.Placement, j.ID)
			assert.NotEqual(t, sia.ReasonNone, d.Reason, "job %s gets no GPUs and no reason (%v)", j.ID, d.Action)
			if cur.Running() {
				assert.Equal(t, sia.Preempt, d.Action, j.ID)
			} else {
				assert.Equal(t, sia.Queue, d.Action, j.ID)
			}
			assert.False(t, probePinned(j, snap.Now), "pinned job %s lost its GPUs", j.ID)
			probeReason(t, snap, o, plan, j, d.Reason, capacity)
			continue
		}
		usedJob[j.ID] = a
		assert.Equal(t, sia.ReasonNone, d.Reason, "job %s runs but has reason %v", j.ID, d.Reason)
		require.Len(t, a.Placement, a.GPUs, "job %s", j.ID)
		nodes := map[string]bool{}
		for _, g := range a.Placement {
			n, ok := byID[g.Node]
			require.True(t, ok, "job %s on unknown node %q", j.ID, g.Node)
			require.Equal(t, a.Type, n.Type, "job %s: GPU on node %s of another type", j.ID, g.Node)
			require.True(t, g.Index >= 0 && g.Index < n.GPUs, "job %s: GPU %v out of range", j.ID, g)
			if other, dup := owner[g]; dup {
				require.Failf(t, "double booking", "GPU %v given to %s and %s", g, other, j.ID)
			}
			owner[g] = j.ID
			free[g.Node]--
			nodes[g.Node] = true
		}
		assert.Equal(t, len(nodes), a.Nodes, "job %s: Nodes %d, placement spans %d", j.ID, a.Nodes, len(nodes))
		usedType[a.Type] += a.GPUs
		assert.True(t, probeAllowed(j, a.Type), "job %s on type %s it may not use", j.ID, a.Type)
		if e := sia.PlanEntry(&plan, i); e != nil {
			assert.Equal(t, e.Config.Type, a.Type, "job %s: evaluated type", j.ID)
			assert.Equal(t, e.Config.GPUs, a.GPUs, "job %s: evaluated GPUs", j.ID)
			assert.Equal(t, e.Config.Nodes, a.Nodes, "job %s: placed on %d nodes, evaluated on %d", j.ID, a.Nodes, e.Config.Nodes)
		} else {
			assert.Fail(t, "no entry", "job %s runs without an evaluated entry", j.ID)
		}
		same := cur.Running() && cur.Type == a.Type && cur.GPUs == a.GPUs && sameSet(cur.Placement, a.Placement)
		if probePinned(j, snap.Now) {
			assert.True(t, same, "pinned job %s changed: %+v -> %+v", j.ID, cur, a)
		}
		switch j.Kind {
		case sia.Rigid:
			assert.Equal(t, j.GPUs, a.GPUs, "rigid job %s resized", j.ID)
		default:
			if !same {
				assert.GreaterOrEqual(t, a.GPUs, max(j.MinGPUs, 1), "job %s below MinGPUs", j.ID)
				if j.MaxGPUs > 0 {
					assert.LessOrEqual(t, a.GPUs, j.MaxGPUs, "job %s above MaxGPUs", j.ID)
				}
				assert.LessOrEqual(t, a.GPUs, o.MaxGPUsPerJob, "job %s above MaxGPUsPerJob", j.ID)
			}
		}
		switch {
		case !cur.Running():
			assert.Equal(t, sia.Start, d.Action, j.ID)
		case cur.Type != a.Type:
			assert.Equal(t, sia.Migrate, d.Action, j.ID)
		case cur.GPUs != a.GPUs || cur.Nodes != a.Nodes:
			assert.Equal(t, sia.Resize, d.Action, j.ID)
		case !same:
			assert.Equal(t, sia.Move, d.Action, j.ID)
		default:
			assert.Equal(t, sia.Keep, d.Action, j.ID)
		}
	}
	for typ, u := range usedType {
		assert.LessOrEqual(t, u, capacity[typ]-snap.Reserved[typ], "type %s: %d GPUs used, capacity %d less reserved %d", typ, u, capacity[typ], snap.Reserved[typ])
	}
	for _, q := range snap.Quotas {
		u := 0
		for _, id := range q.Jobs {
			if a, ok := usedJob[id]; ok && (q.Type == "" || q.Type == a.Type) {
				u += a.GPUs
			}
		}
		assert.LessOrEqual(t, u, q.Limit, "quota %s exceeded", q.Name)
	}
	if plan.Status == sia.StatusOptimal {
		assert.False(t, math.IsNaN(plan.Objective) || math.IsInf(plan.Objective, 0), "optimal with objective %v", plan.Objective)
	}
	return free
}

func sameSet(a, b []sia.GPU) bool {
	if len(a) != len(b) {
		return false
	}
	m := map[sia.GPU]int{}
	for _, g := range a {
		m[g]++
	}
	for _, g := range b {
		m[g]--
	}
	for _, v := range m {
		if v != 0 {
			return false
		}
	}
	return true
}

// probeRound runs one round with a deadline that never binds, checks the
// plan and that the same snapshot gives the same plan.
func probeRound(t *testing.T, s *sia.Scheduler, snap sia.Snapshot) sia.Plan {
	t.Helper()
	plan, err := s.Round(context.Background(), snap)
	require.NoError(t, err)
	free := probeCheck(t, snap, s.Options(), plan)
	if (plan.Status == sia.StatusOptimal || len(sia.PlanFilled(&plan)) > 0) && len(snap.Quotas) == 0 && s.Options().Artifact == nil {
		// λ > 1 with p < 0: a waiting job that fits the free GPUs is never
		// left waiting by an optimal allocation (see Options.Lambda).
		for i, d := range plan.Decisions {
			j := &snap.Jobs[i]
			if d.Allocation.Running() || j.State.Current.Running() {
				continue
			}
			if how := probeFitsFree(j, snap, s.Options(), plan, free); how != "" {
				assert.Failf(t, "idle by construction", "job %s (%v, %d GPUs, min %d) waits (%v) although %s", j.ID, j.Kind, j.GPUs, j.MinGPUs, d.Reason, how)
			}
		}
	}
	again, err := s.Round(context.Background(), snap)
	require.NoError(t, err)
	require.Equal(t, len(plan.Decisions), len(again.Decisions))
	for i := range plan.Decisions {
		assert.Equal(t, plan.Decisions[i], again.Decisions[i], "round not deterministic for %s", plan.Decisions[i].Job)
	}
	return plan
}

var probeSizes = []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}

// probeFleet draws 1–3 types of 1–4 nodes each, of one or several sizes.
func probeFleet(rng *rand.Rand) []sia.Node {
	var nodes []sia.Node
	types := 1 + rng.IntN(3)
	for ti := 0; ti < types; ti++ {
		typ := fmt.Sprintf("g%d", ti)
		shapes := []int{probeSizes[rng.IntN(len(probeSizes))]}
		if rng.IntN(2) == 0 {
			shapes = append(shapes, probeSizes[rng.IntN(len(probeSizes))])
		}
		n := 1 + rng.IntN(4)
		for k := 0; k < n; k++ {
			nodes = append(nodes, sia.Node{ID: fmt.Sprintf("%s-n%d", typ, k), Type: typ, GPUs: shapes[rng.IntN(len(shapes))]})
		}
	}
	return nodes
}

// probeJob draws a job: adaptive, strong-scaling or rigid, with random
// bounds, allow-lists and excluded or model-less types.
func probeJob(rng *rand.Rand, id string, nodes []sia.Node, t0 time.Time) sia.Job {
	types := (&sia.Snapshot{Nodes: nodes}).Types()
	total := map[string]int{}
	all := 0
	for _, n := range nodes {
		total[n.Type] += n.GPUs
		all += n.GPUs
	}
	m := probeModel{speed: map[string]float64{}, none: map[string]bool{}, gain: 0.5 + 0.5*rng.Float64(), cross: 0.7 + 0.3*rng.Float64()}
	for _, typ := range types {
		switch rng.IntN(6) {
		case 0:
			m.none[typ] = true
		case 1: // excluded
		default:
			m.speed[typ] = 0.5 + rng.Float64()
		}
	}
	if rng.IntN(8) == 0 {
		m.stages = 2 + rng.IntN(2)
	}
	j := sia.Job{ID: id, Kind: sia.Kind(rng.IntN(3)), Models: m, Submitted: t0.Add(-time.Duration(rng.IntN(3600)) * time.Second)}
	switch j.Kind {
	case sia.Rigid:
		j.GPUs = 1 + rng.IntN(all)
		if rng.IntN(3) == 0 {
			typ := types[rng.IntN(len(types))]
			j.GPUs = 1 + rng.IntN(total[typ]) // up to the whole type
		}
		if m.stages > 0 {
			j.GPUs = max(j.GPUs/m.stages, 1) * m.stages
		}
	default:
		if rng.IntN(3) == 0 {
			j.MinGPUs = 1 + rng.IntN(max(all/2, 1))
		}
		if rng.IntN(3) == 0 {
			j.MaxGPUs = max(j.MinGPUs, 1) + rng.IntN(all)
		}
	}
	if rng.IntN(4) == 0 {
		j.Types = []string{types[rng.IntN(len(types))]}
	}
	if rng.IntN(8) == 0 {
		j.NonPreemptible = true
	}
	return j
}

// TestProbeShapesAcrossRounds runs random fleets of every node shape for
// several rounds: each round the plan is applied (Snapshot.Advance), some
// jobs finish and new ones arrive, so that running jobs fragment the nodes.
// Every plan must pass probeCheck and be deterministic.
func TestProbeShapesAcrossRounds(t *testing.T) {
	cases := *probeCases
	if testing.Short() {
		cases = min(cases, 30)
	}
	var rounds, running, queued int
	defer func() { t.Logf("%d rounds, %d running decisions, %d queued", rounds, running, queued) }()
	for c := 0; c < cases; c++ {
		rng := rand.New(rand.NewPCG(uint64(c), 77))
		opts := sia.Options{RoundTimeout: -1, Seed: rng.Uint64N(3)}
		if rng.IntN(3) == 0 {
			opts.MaxGPUsPerJob = 1 + rng.IntN(16)
		}
		if rng.IntN(4) == 0 {
			opts.P, opts.Lambda = 0.5, -2
		}
		if rng.IntN(5) == 0 {
			opts.Artifact = sia.PublishedArtifact()
		}
		s, err := sia.New(&opts)
		require.NoError(t, err)
		nodes := probeFleet(rng)
		snap := sia.Snapshot{Now: probeT0, Nodes: nodes}
		next := 0
		for r := 0; r < 5; r++ {
			for k := rng.IntN(4); k > 0; k-- {
				snap.Jobs = append(snap.Jobs, probeJob(rng, fmt.Sprintf("j%d", next), nodes, snap.Now))
				next++
			}
			snap.Reserved, snap.Quotas = nil, nil
			if rng.IntN(4) == 0 {
				probeLimits(rng, &snap)
			}
			ok := t.Run(fmt.Sprintf("case%d/round%d", c, r), func(t *testing.T) {
				plan, err := s.Round(context.Background(), snap)
				if errors.Is(err, sia.ErrInfeasible) { // pins beyond a reservation or quota
					var ie *sia.InfeasibleError
					require.ErrorAs(t, err, &ie)
					snap.Reserved, snap.Quotas = nil, nil
				}
				plan = probeRound(t, s, snap)
				rounds++
				for _, d := range plan.Decisions {
					if d.Allocation.Running() {
						running++
					} else {
						queued++
					}
				}
				snap.Advance(&plan, snap.Now.Add(time.Duration(10+rng.IntN(60))*time.Second)) // restores may pin
			})
			if !ok {
				t.Logf("snapshot: nodes %v", nodes)
				for _, j := range snap.Jobs {
					t.Logf("  job %s kind %v gpus %d min %d max %d types %v np %v models %+v state %+v", j.ID, j.Kind, j.GPUs, j.MinGPUs, j.MaxGPUs, j.Types, j.NonPreemptible, j.Models, j.State)
				}
				t.Logf("  reserved %v quotas %+v options %+v now %v", snap.Reserved, snap.Quotas, opts, snap.Now)
				break
			}
			// some jobs finish
			snap.Jobs = slices.DeleteFunc(snap.Jobs, func(sia.Job) bool { return rng.IntN(4) == 0 })
		}
	}
}

// probeLimits draws reservations and quotas for the snapshot.
func probeLimits(rng *rand.Rand, snap *sia.Snapshot) {
	capacity := map[string]int{}
	for _, n := range snap.Nodes {
		capacity[n.Type] += n.GPUs
	}
	types := snap.Types()
	snap.Reserved = map[string]int{}
	for _, typ := range types {
		if rng.IntN(2) == 0 {
			snap.Reserved[typ] = rng.IntN(capacity[typ] + 1)
		}
	}
	for k := rng.IntN(3); k > 0; k-- {
		q := sia.Quota{Name: fmt.Sprintf("q%d", k), Limit: rng.IntN(20)}
		if rng.IntN(2) == 0 {
			q.Type = types[rng.IntN(len(types))]
		}
		for _, j := range snap.Jobs {
			if rng.IntN(2) == 0 {
				q.Jobs = append(q.Jobs, j.ID)
			}
		}
		snap.Quotas = append(snap.Quotas, q)
	}
}

// probeFitsFree reports a way job j could run on the GPUs the plan leaves
// free, as they lie on the nodes ("" when none): an adaptive or
// strong-scaling job's smallest single-node configuration (the smallest
// chain size of the node's size that is ≥ MinGPUs) on one node with that
// many free GPUs; a rigid job's count on one node with that many free.
//
// Types on which some allocation of the plan has a part off its node's
// chain (a rigid 3 GPUs on an 11-GPU node) were skipped until the fill
// step: such a part blocks the smallest chain size that holds it
// (configset.Set.Charge) in the allocation problem, and the GPUs it blocks
// but does not use are now given to waiting jobs after placement
// (TestProbeChargeStrandsGPUs).
func probeFitsFree(j *sia.Job, snap sia.Snapshot, o sia.Options, plan sia.Plan, free map[string]int) string {
	o = o.WithDefaults()
	for _, n := range snap.Nodes {
		if !probeAllowed(j, n.Type) || snap.Reserved[n.Type] > 0 {
			continue
		}
		need := 0
		switch j.Kind {
		case sia.Rigid:
			// a count off the chain blocks the chain size that holds it
			if k := slices.IndexFunc(configset.Chain(n.GPUs), func(c int) bool { return c >= j.GPUs }); k >= 0 {
				need = configset.Chain(n.GPUs)[k]
			}
		default:
			m, _ := j.Models.Model(n.Type)
			for _, c := range configset.Chain(n.GPUs) {
				if c >= max(j.MinGPUs, 1) && (j.MaxGPUs == 0 || c <= j.MaxGPUs) && c <= o.MaxGPUsPerJob && c%max(m.Stages, 1) == 0 {
					need = c
					break
				}
			}
		}
		if need > 0 && need <= free[n.ID] {
			return fmt.Sprintf("%d GPUs on node %s (%d of %d free)", need, n.ID, free[n.ID], n.GPUs)
		}
	}
	return ""
}

// TestProbeScaleUpCapOnEveryNodeSize: on one node of R GPUs (1–16), a lone
// adaptive job grows round by round to the whole node, and a lone job with
// MinGPUs m ≤ R starts at once. The scale-up cap (2× the peak) alone offers
// nothing above the peak where the node's sizes leave wider gaps (1, 7 on a
// 7-GPU node; 1, 2, 6 on a 6-GPU node): the job stayed at 1 (or 2) GPUs for
// ever, and a MinGPUs off the sizes (4 on a 7-GPU node) was queued for ever
// as "no admissible type".
func TestProbeScaleUpCapOnEveryNodeSize(t *testing.T) {
	s, err := sia.New(nil)
	require.NoError(t, err)
	m := probeModel{speed: map[string]float64{"g": 1}, gain: 0.95, cross: 0.9}
	for _, r := range probeSizes {
		snap := sia.Snapshot{Now: probeT0, Nodes: []sia.Node{{ID: "n0", Type: "g", GPUs: r}}, Jobs: []sia.Job{{ID: "a", Models: m}}}
		var hist []int
		for k := 0; k < 8; k++ {
			plan := probeRound(t, s, snap)
			hist = append(hist, plan.Decisions[0].Allocation.GPUs)
			snap.Advance(&plan, snap.Now.Add(time.Hour)) // past every restore
		}
		assert.Equal(t, r, hist[len(hist)-1], "%d-GPU node: a lone adaptive job's GPUs per round %v", r, hist)
		for min := 1; min <= r; min++ {
			snap := sia.Snapshot{Now: probeT0, Nodes: []sia.Node{{ID: "n0", Type: "g", GPUs: r}}, Jobs: []sia.Job{{ID: "b", MinGPUs: min, Models: m}}}
			plan := probeRound(t, s, snap)
			d := plan.Decisions[0]
			assert.GreaterOrEqual(t, d.Allocation.GPUs, min, "%d-GPU node, MinGPUs %d: %v (%v)", r, min, d.Action, d.Reason)
		}
	}
}

// TestProbeNoModelEveryPool: a type whose nodes have two sizes (8 and 6
// GPUs) is two pools. A job without a model yet on the type (bootstrap.None)
// is offered the type's smallest configuration; it was offered it in the
// first pool only, so with that pool full the job waited ("lost the
// optimisation") while the other pool was idle.
func TestProbeNoModelEveryPool(t *testing.T) {
	s, err := sia.New(nil)
	require.NoError(t, err)
	none := probeModel{none: map[string]bool{"g": true}, gain: 1, cross: 1}
	full := sia.Job{ID: "full", Kind: sia.Rigid, GPUs: 8, NonPreemptible: true, Models: none,
		State: sia.JobState{Current: sia.Allocation{Type: "g", Nodes: 1, GPUs: 8, Placement: probeGPUs("big", 8)}}}
	for _, j := range []sia.Job{
		{ID: "adaptive", Models: none},
		{ID: "strong", Kind: sia.StrongScaling, Models: none},
		{ID: "rigid3", Kind: sia.Rigid, GPUs: 3, Models: none},
		{ID: "rigid6", Kind: sia.Rigid, GPUs: 6, Models: none},
	} {
		snap := sia.Snapshot{Now: probeT0, Nodes: []sia.Node{{ID: "big", Type: "g", GPUs: 8}, {ID: "small", Type: "g", GPUs: 6}},
			Jobs: []sia.Job{full, j}}
		plan := probeRound(t, s, snap)
		d := plan.Decisions[1]
		assert.Equal(t, sia.Start, d.Action, "job %s: %v (%v) with node small idle", j.ID, d.Action, d.Reason)
	}
}

// probeGPUs lists GPUs 0..n-1 of a node.
func probeGPUs(node string, n int) []sia.GPU {
	out := make([]sia.GPU, n)
	for k := range out {
		out[k] = sia.GPU{Node: node, Index: k}
	}
	return out
}

// TestProbeBoundsWithoutConfigurationSize: an adaptive or strong-scaling
// job whose bounds [MinGPUs, MaxGPUs] hold no configuration size of any type
// (3 GPUs exactly on 8-GPU nodes; 9 on 8-GPU nodes; 4–5 on 6-GPU nodes;
// 10–12 on 7-GPU nodes) was queued for ever as "no admissible type" on an
// idle cluster. It runs, on its smallest count in the bounds, shaped as a
// rigid job's.
func TestProbeBoundsWithoutConfigurationSize(t *testing.T) {
	s, err := sia.New(nil)
	require.NoError(t, err)
	m := probeModel{speed: map[string]float64{"g": 1}, gain: 0.95, cross: 0.9}
	for _, r := range []int{4, 6, 7, 8, 12, 16} {
		for _, w := range [][2]int{{3, 3}, {4, 5}, {3, 5}, {5, 5}, {9, 9}, {10, 12}, {2*r - 1, 2*r - 1}} {
			for _, k := range []sia.Kind{sia.Adaptive, sia.StrongScaling} {
				snap := sia.Snapshot{Now: probeT0, Nodes: []sia.Node{{ID: "n0", Type: "g", GPUs: r}, {ID: "n1", Type: "g", GPUs: r}},
					Jobs: []sia.Job{{ID: "j", Kind: k, MinGPUs: w[0], MaxGPUs: w[1], Models: m}}}
				plan := probeRound(t, s, snap)
				d := plan.Decisions[0]
				if w[0] > 2*r {
					assert.Equal(t, sia.ReasonTooLarge, d.Reason)
					continue
				}
				assert.Equal(t, sia.Start, d.Action, "%d-GPU nodes, %v job in [%d, %d]: %v", r, k, w[0], w[1], d.Reason)
			}
		}
	}
}

// probeReason asserts that reason r, given to job j which gets no GPUs, is
// true, and that the reasons a host can check from the snapshot alone
// (too large, no admissible type) are given whenever they hold.
func probeReason(t *testing.T, snap sia.Snapshot, o sia.Options, plan sia.Plan, j *sia.Job, r sia.QueueReason, capacity map[string]int) {
	t.Helper()
	allowed, tooLarge := 0, 0
	reserved := false
	for _, typ := range snap.Types() {
		if !probeAllowed(j, typ) {
			continue
		}
		m, _ := j.Models.Model(typ)
		p := max(m.Stages, 1)
		if j.Kind == sia.Rigid && j.GPUs%p != 0 {
			continue // no whole number of replicas: no configuration on typ at any size
		}
		allowed++
		reserved = reserved || snap.Reserved[typ] > 0
		size, limit := (max(j.MinGPUs, 1)+p-1)/p*p, min(capacity[typ], o.MaxGPUsPerJob)
		if j.Kind == sia.Rigid { // whole replicas (above)
			size, limit = j.GPUs, capacity[typ]
		} else if j.MaxGPUs > 0 && j.MaxGPUs < size {
			return // bounds that hold no whole replica: no admissible configuration
		}
		if size > limit {
			tooLarge++
		}
	}
	quota := false
	for _, q := range snap.Quotas {
		quota = quota || slices.Contains(q.Jobs, j.ID)
	}
	// What Job.Types and the bounds alone say (a round out of time asks
	// the Models of the jobs whose row it did not build nothing, and then
	// says only this, or Deadline)
	allowedT, tooLargeT := 0, 0
	for _, typ := range snap.Types() {
		if j.Types != nil && !slices.Contains(j.Types, typ) {
			continue
		}
		allowedT++
		size, limit := max(j.MinGPUs, 1), min(capacity[typ], o.MaxGPUsPerJob)
		if j.Kind == sia.Rigid {
			size, limit = j.GPUs, capacity[typ]
		}
		if size > limit {
			tooLargeT++
		}
	}
	switch {
	case allowedT == 0:
		assert.Equal(t, sia.ReasonNoAdmissibleType, r, "job %s: no type in Types", j.ID)
		return
	case tooLargeT == allowedT && allowed == 0 && r == sia.ReasonNoAdmissibleType:
		return // both are true
	case tooLargeT == allowedT:
		assert.Equal(t, sia.ReasonTooLarge, r, "job %s: larger than every type in Types", j.ID)
		return
	case (allowed == 0 || tooLarge == allowed) && r == sia.ReasonDeadline && plan.Status != sia.StatusOptimal:
		return // only its Models say it cannot run
	case allowed == 0 && r == sia.ReasonTooLarge:
		return // both are true
	}
	switch {
	case allowed == 0:
		assert.Equal(t, sia.ReasonNoAdmissibleType, r, "job %s: no type allowed", j.ID)
		return
	case tooLarge == allowed:
		assert.Equal(t, sia.ReasonTooLarge, r, "job %s: larger than every allowed type", j.ID)
		return
	}
	switch r {
	case sia.ReasonTooLarge:
		assert.Fail(t, "false reason", "job %s: too large, but fits %d of %d allowed types", j.ID, allowed-tooLarge, allowed)
	case sia.ReasonNoAdmissibleType:
		// every configuration of the probe models is valid
		if _, probe := j.Models.(probeModel); probe {
			assert.Fail(t, "false reason", "job %s: no admissible type, but %d types allowed", j.ID, allowed)
		}
	case sia.ReasonQuota:
		assert.True(t, quota, "job %s: quota, but no quota covers it", j.ID)
	case sia.ReasonReserved:
		assert.True(t, reserved, "job %s: reserved, but no allowed type has reserved GPUs", j.ID)
	case sia.ReasonDeadline, sia.ReasonUnplaceable:
		assert.NotEqual(t, sia.StatusOptimal, plan.Status, "job %s: %v in a plan proven optimal", j.ID, r)
	case sia.ReasonLostOptimisation:
	default:
		assert.Fail(t, "no reason", "job %s: reason %v", j.ID, r)
	}
}

// TestProbeScaleUpCapPerPool: on a type with 15- and 7-GPU nodes (sizes 1, 3,
// 15 and 1, 7), a job with MinGPUs 3 whose 15-GPU node is taken must be
// offered the 7-GPU node: the scale-up cap reaches each pool's next size
// above the peak, not only the type's smallest (3, in the full pool).
func TestProbeScaleUpCapPerPool(t *testing.T) {
	s, err := sia.New(nil)
	require.NoError(t, err)
	m := probeModel{speed: map[string]float64{"g": 1}, gain: 0.95, cross: 0.9}
	for _, c := range []struct{ big, small, min int }{{15, 7, 3}, {9, 7, 6}, {12, 5, 4}, {14, 10, 7}} {
		full := sia.Job{ID: "full", Kind: sia.Rigid, GPUs: c.big, NonPreemptible: true, Models: m,
			State: sia.JobState{Current: sia.Allocation{Type: "g", Nodes: 1, GPUs: c.big, Placement: probeGPUs("big", c.big)}}}
		snap := sia.Snapshot{Now: probeT0, Nodes: []sia.Node{{ID: "big", Type: "g", GPUs: c.big}, {ID: "small", Type: "g", GPUs: c.small}},
			Jobs: []sia.Job{full, {ID: "j", MinGPUs: c.min, Models: m}}}
		plan := probeRound(t, s, snap)
		d := plan.Decisions[1]
		assert.Equal(t, sia.Start, d.Action, "%+v: %v", c, d.Reason)
		assert.Equal(t, c.small, d.Allocation.GPUs, "%+v", c)
	}
}

// TestProbeBoundsWithoutSizeInOnePool: bounds that hold a configuration size
// of one pool of a type but not of another (4–5 GPUs: 4 on 8-GPU nodes,
// none on 6-GPU nodes) give the other pool the smallest count's shape too,
// so the job is not kept off an idle 6-GPU node while the 8-GPU one is full.
func TestProbeBoundsWithoutSizeInOnePool(t *testing.T) {
	s, err := sia.New(nil)
	require.NoError(t, err)
	m := probeModel{speed: map[string]float64{"g": 1}, gain: 0.95, cross: 0.9}
	for _, c := range []struct{ big, small, min, max int }{{8, 6, 4, 5}, {16, 12, 8, 8}, {8, 10, 4, 4}, {12, 9, 2, 2}} {
		full := sia.Job{ID: "full", Kind: sia.Rigid, GPUs: c.big, NonPreemptible: true, Models: m,
			State: sia.JobState{Current: sia.Allocation{Type: "g", Nodes: 1, GPUs: c.big, Placement: probeGPUs("big", c.big)}}}
		for _, k := range []sia.Kind{sia.Adaptive, sia.StrongScaling} {
			snap := sia.Snapshot{Now: probeT0, Nodes: []sia.Node{{ID: "big", Type: "g", GPUs: c.big}, {ID: "small", Type: "g", GPUs: c.small}},
				Jobs: []sia.Job{full, {ID: "j", Kind: k, MinGPUs: c.min, MaxGPUs: c.max, Models: m}}}
			plan := probeRound(t, s, snap)
			d := plan.Decisions[1]
			assert.Equal(t, sia.Start, d.Action, "%+v %v: %v", c, k, d.Reason)
			assert.Equal(t, c.min, d.Allocation.GPUs, "%+v %v", c, k)
		}
	}
}

// TestProbeChargeOneNode: on a pool of one node, a part off the node's chain
// (a rigid 5 GPUs on a 15-GPU node, whose sizes are 1, 3, 15) was charged
// the smallest chain size that holds it (the whole node), so a 1-GPU job
// waited beside 10 idle GPUs (lost-optimisation). On one node any parts
// whose GPUs fit are placeable: they are charged their GPUs.
func TestProbeChargeOneNode(t *testing.T) {
	s, err := sia.New(nil)
	require.NoError(t, err)
	m := probeModel{speed: map[string]float64{"g": 1}, gain: 0.9, cross: 0.9}
	for _, c := range []struct{ node, rigid int }{{15, 5}, {11, 2}, {8, 6}, {13, 4}, {7, 3}, {6, 5}} {
		held := sia.Job{ID: "rigid", Kind: sia.Rigid, GPUs: c.rigid, Models: m,
			State: sia.JobState{Current: sia.Allocation{Type: "g", Nodes: 1, GPUs: c.rigid, Placement: probeGPUs("n0", c.rigid)}}}
		snap := sia.Snapshot{Now: probeT0, Nodes: []sia.Node{{ID: "n0", Type: "g", GPUs: c.node}},
			Jobs: []sia.Job{held, {ID: "small", Models: m}}}
		plan := probeRound(t, s, snap)
		assert.Equal(t, sia.Start, plan.Decisions[1].Action, "%d-GPU node beside a rigid %d: %v with %d GPUs idle",
			c.node, c.rigid, plan.Decisions[1].Reason, c.node-c.rigid)
	}
}

// TestProbeChargeStrandsGPUs: on a pool of several nodes, a part of a
// configuration off its node's chain (a rigid 5 GPUs on 15-GPU nodes, whose
// sizes are 1, 3, 15) is charged the smallest chain size that holds it
// (configset.Set.Charge: 15), so that every allocation the solver returns
// is placeable. Before the fill step the GPUs it blocked stayed idle while
// a job that fits them waited (reason lost-optimisation): 10 of 30 beside
// a rigid 5 and a rigid 15 on two 15-GPU nodes, 2 of 16 beside a rigid 6
// and a rigid 8 on two of the paper's 8-GPU nodes. Now the waiting job
// starts on those GPUs (an adaptive job on the most valuable entry of its
// row that fits — here its only one, a never-run job being offered 1 GPU —,
// a rigid job of exactly the idle count on them), and the plan
// says it goes beyond the charged problem: Feasible, its objective the
// plan's, a bound at least as good. Where the solver preempts the running
// rigid job for the waiting one, the fill restarts it on the GPUs left
// idle (a shape of them, shaped.go) instead of leaving them idle.
func TestProbeChargeStrandsGPUs(t *testing.T) {
	s, err := sia.New(nil)
	require.NoError(t, err)
	m := probeModel{speed: map[string]float64{"g": 1}, gain: 0.9, cross: 0.9}
	for _, c := range []struct{ node, rigid int }{{15, 5}, {11, 2}, {8, 6}, {13, 4}, {7, 3}} {
		held := sia.Job{ID: "rigid", Kind: sia.Rigid, GPUs: c.rigid, Models: m,
			State: sia.JobState{Current: sia.Allocation{Type: "g", Nodes: 1, GPUs: c.rigid, Placement: probeGPUs("n0", c.rigid)}}}
		whole := sia.Job{ID: "whole", Kind: sia.Rigid, GPUs: c.node, Models: m,
			State: sia.JobState{Current: sia.Allocation{Type: "g", Nodes: 1, GPUs: c.node, Placement: probeGPUs("n1", c.node)}}}
		nodes := []sia.Node{{ID: "n0", Type: "g", GPUs: c.node}, {ID: "n1", Type: "g", GPUs: c.node}}
		for _, waiting := range []sia.Job{{ID: "small", Models: m}, {ID: "rest", Kind: sia.Rigid, GPUs: c.node - c.rigid, Models: m}} {
			snap := sia.Snapshot{Now: probeT0, Nodes: nodes, Jobs: []sia.Job{held, whole, waiting}}
			plan := probeRound(t, s, snap)
			d := plan.Decisions[2]
			idle := 2 * c.node
			for _, d := range plan.Decisions {
				idle -= len(d.Allocation.Placement)
			}
			require.Equal(t, ilp.Minimize, sia.PlanMatrix(&plan).Sense)
			t.Logf("two %d-GPU nodes beside a rigid %d, waiting %s: %v %d GPUs, %d of %d idle, %v objective %.4g bound %.4g",
				c.node, c.rigid, waiting.ID, d.Action, d.Allocation.GPUs, idle, 2*c.node, plan.Status, plan.Objective, plan.Bound)
			if !assert.Equal(t, sia.Start, d.Action, "two %d-GPU nodes beside a rigid %d: %s %v with %d GPUs idle",
				c.node, c.rigid, waiting.ID, d.Reason, c.node-c.rigid) {
				continue
			}
			assert.Equal(t, sia.ReasonNone, d.Reason)
			for _, g := range d.Allocation.Placement {
				assert.Equal(t, "n0", g.Node, "only n0 has idle GPUs")
			}
			if waiting.Kind == sia.Rigid && len(sia.PlanFilled(&plan)) > 0 {
				assert.Equal(t, 0, idle, "a rigid job of the idle count takes them all")
			}
			if filled := sia.PlanFilled(&plan); len(filled) > 0 {
				// the waiting job, and the rigid one when the solver
				// preempted it for the waiting one and the fill restarts
				// it on the GPUs left idle
				for _, id := range filled {
					assert.Contains(t, []string{waiting.ID, "rigid"}, id)
				}
				if slices.Contains(filled, "rigid") {
					assert.True(t, sia.PlanEntry(&plan, 0).Shaped, "the rigid job moved to a shape of idle GPUs")
					assert.Equal(t, sia.Move, plan.Decisions[0].Action)
				}
				// beyond the charged problem: Feasible, or Optimal when the
				// uncharged relaxation's optimum proves it
				assert.GreaterOrEqual(t, plan.Objective, plan.Bound*(1-1e-9), "the bound bounds the filled plan (p < 0: minimised)")
				if plan.Status == sia.StatusOptimal {
					assert.InDelta(t, plan.Bound, plan.Objective, 1e-9*plan.Bound)
				} else {
					assert.Equal(t, sia.StatusFeasible, plan.Status)
				}
			}
		}
	}
}

// TestProbeFleetChanges: between rounds the fleet changes as a real one
// does — a node leaves, a node comes back with fewer GPUs, a node of a new
// size (or a new type) joins — and the host calls DropDepartedNodes before
// the round. Every round is valid and passes probeCheck; no job is kept on
// GPUs that left.
func TestProbeFleetChanges(t *testing.T) {
	s, err := sia.New(&sia.Options{RoundTimeout: -1})
	require.NoError(t, err)
	rounds := 0
	for c := 0; c < 60; c++ {
		rng := rand.New(rand.NewPCG(uint64(c), 99))
		snap := sia.Snapshot{Now: probeT0, Nodes: probeFleet(rng)}
		next := 0
		for r := 0; r < 6; r++ {
			for k := rng.IntN(4); k > 0; k-- {
				snap.Jobs = append(snap.Jobs, probeJob(rng, fmt.Sprintf("j%d", next), snap.Nodes, snap.Now))
				next++
			}
			switch rng.IntN(4) {
			case 0:
				if len(snap.Nodes) > 1 {
					k := rng.IntN(len(snap.Nodes))
					snap.Nodes = slices.Delete(slices.Clone(snap.Nodes), k, k+1)
				}
			case 1:
				k := rng.IntN(len(snap.Nodes))
				snap.Nodes = slices.Clone(snap.Nodes)
				snap.Nodes[k].GPUs = max(1, snap.Nodes[k].GPUs-1-rng.IntN(3))
			case 2:
				snap.Nodes = append(slices.Clone(snap.Nodes), sia.Node{ID: fmt.Sprintf("new%d", r), Type: snap.Nodes[rng.IntN(len(snap.Nodes))].Type, GPUs: probeSizes[rng.IntN(len(probeSizes))]})
			case 3:
				snap.Nodes = append(slices.Clone(snap.Nodes), sia.Node{ID: fmt.Sprintf("new%d", r), Type: "fresh", GPUs: probeSizes[rng.IntN(len(probeSizes))]})
			}
			dropped := snap.DropDepartedNodes()
			ok := t.Run(fmt.Sprintf("case%d/round%d", c, r), func(t *testing.T) {
				for _, id := range dropped {
					for _, j := range snap.Jobs {
						if j.ID == id {
							assert.False(t, j.State.Current.Running(), id)
						}
					}
				}
				plan, err := s.Round(context.Background(), snap)
				if err != nil {
					// a pinned job whose Current no longer fits its
					// shrunk type is the host's to resolve: say which
					var ie *sia.InputError
					var fe *sia.InfeasibleError
					require.True(t, errors.As(err, &ie) || errors.As(err, &fe), "%v", err)
					t.Log(err)
					for i := range snap.Jobs {
						snap.Jobs[i].NonPreemptible = false
						snap.Jobs[i].State.RestoreUntil = time.Time{}
					}
					plan, err = s.Round(context.Background(), snap)
					require.NoError(t, err)
				}
				probeCheck(t, snap, s.Options(), plan)
				rounds++
				snap.Advance(&plan, snap.Now.Add(time.Duration(10+rng.IntN(60))*time.Second))
			})
			if !ok {
				break
			}
			snap.Jobs = slices.DeleteFunc(snap.Jobs, func(sia.Job) bool { return rng.IntN(4) == 0 })
		}
	}
	t.Logf("%d rounds", rounds)
}

// TestProbeRigidEveryCount: on idle fleets of one type with mixed odd node
// sizes, a lone rigid job of every count from 1 to the type's capacity
// starts, with the shape whose goodput was predicted (probeCheck), and so
// does a lone adaptive or strong-scaling job whose MinGPUs is that count
// (when it is within MaxGPUsPerJob).
func TestProbeRigidEveryCount(t *testing.T) {
	s, err := sia.New(&sia.Options{RoundTimeout: -1, MaxGPUsPerJob: 1 << 20})
	require.NoError(t, err)
	m := probeModel{speed: map[string]float64{"g": 1}, gain: 0.9, cross: 0.9}
	fleets := [][]int{{6, 6, 6}, {8, 8, 6, 6}, {7, 7, 7}, {16, 12, 10, 7}, {5, 3}, {13, 11}, {9, 9, 1}, {15, 14, 2}, {4, 4, 4, 4, 4}}
	cases := 0
	for _, sizes := range fleets {
		var nodes []sia.Node
		capacity := 0
		for k, r := range sizes {
			nodes = append(nodes, sia.Node{ID: fmt.Sprintf("n%d", k), Type: "g", GPUs: r})
			capacity += r
		}
		for g := 1; g <= capacity; g++ {
			for _, j := range []sia.Job{
				{ID: "rigid", Kind: sia.Rigid, GPUs: g, Models: m},
				{ID: "adaptive", MinGPUs: g, Models: m},
				{ID: "strong", Kind: sia.StrongScaling, MinGPUs: g, MaxGPUs: g, Models: m},
			} {
				cases++
				snap := sia.Snapshot{Now: probeT0, Nodes: nodes, Jobs: []sia.Job{j}}
				plan := probeRound(t, s, snap)
				d := plan.Decisions[0]
				if assert.Equal(t, sia.Start, d.Action, "nodes %v, %s job of %d GPUs: %v", sizes, j.ID, g, d.Reason) {
					assert.GreaterOrEqual(t, d.Allocation.GPUs, g)
					if j.Kind != sia.Adaptive {
						assert.Equal(t, g, d.Allocation.GPUs)
					}
				}
			}
		}
	}
	t.Logf("%d rounds", cases)
}
