// Package siapolicy drives package sia's scheduling round from the simulator:
// it keeps one bootstrap.Tracker per job (seeded according to the profiling
// mode, refined with what the job actually ran on), builds a sia.Snapshot each
// round and turns the plan into simulator allocations.
package siapolicy

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/goodput"
	"github.com/sia-sched/sia/sia"
	"github.com/sia-sched/sia/sia/sim"
)

// Options configure the adapter.
type Options struct {
	// Mode is the throughput-model bootstrapping: bootstrap.Profiled (1-GPU
	// profiles of every type at submission, cross-type projection),
	// bootstrap.Oracle (every profile known) or bootstrap.NoProfiling.
	Mode bootstrap.Mode
	// Rigid makes every job rigid at its requested GPU count and batch size
	// (Sia chooses only the GPU type).
	Rigid bool
	// Sia are the scheduler's options (nil: the published artifact's variant,
	// which the paper's figures were produced with). Simulated rounds have
	// no deadline, so that the same input gives the same output on any
	// machine under any load: RoundTimeout must be 0 or negative and
	// SolverDeadline 0, and New runs the rounds with no RoundTimeout and, when
	// SolverMaxNodes is 0, with DefaultSolverMaxNodes. To simulate a
	// deadline-bound host, wrap a scheduler in Scheduler instead.
	Sia *sia.Options
	// CapAtRequest caps the scheduler's goodput estimates at the workload's
	// batch_size, as the published simulator does (jobs themselves still use
	// the application's maximum batch size).
	CapAtRequest bool
	// Fit is passed to goodput.Fit on every refit (nil: one start, as the
	// artifact).
	Fit *goodput.FitOptions
	// Scheduler, if set, runs the rounds instead of a *sia.Scheduler built
	// from Sia: anything with Round's shape, so that a modified Sia (an
	// edited matrix, another solver, a wrapper that logs) is a few lines.
	Scheduler Rounder
	// Name, if set, is the policy's name in reports (default "sia" with
	// "-rigid", "-oracle" or "-noprof" as the options say).
	Name string
	// NoSeed (Mode Profiled only) skips seeding the trackers with the jobs'
	// 1-GPU profiles: each type's model is learned only from what the job ran
	// on there, as in the published simulator.
	NoSeed bool
	// Projection (Mode Profiled only) selects how types without multi-GPU
	// data of their own are estimated (default: the tracker's projection).
	Projection Projection
	// ArtifactPlacement places the scheduler's allocations with the
	// published simulator's round-robin placer (see placeRoundRobin) instead
	// of package sia's placement.
	ArtifactPlacement bool
}

// Projection selects the cross-type projection of Mode Profiled.
type Projection int

const (
	// TrackerProjection is bootstrap.Tracker's Profiled projection: from the
	// type with the most multi-GPU observations, by the ratio of the two
	// types' fitted 1-GPU throughputs, replaced once the type has multi-GPU
	// data of its own.
	TrackerProjection Projection = iota
	// StaticRatioProjection is bootstrap.RatioProjection, the published
	// simulator's rule: a type the job has not run on is projected from the
	// first cluster type the job has a model for, by the ratio of the static
	// 1-GPU throughputs of the profiles (Truth.Xput1), applied to goodput;
	// a type's own model (even 1-GPU only) replaces it.
	StaticRatioProjection
	// NoProjection keeps every type's own model (seeded or learned) and
	// projects nothing.
	NoProjection
)

// Rounder runs one scheduling round: *sia.Scheduler implements it.
type Rounder interface {
	Round(ctx context.Context, snap sia.Snapshot) (sia.Plan, error)
}

// RounderFunc adapts a function to Rounder.
type RounderFunc func(ctx context.Context, snap sia.Snapshot) (sia.Plan, error)

// Round implements Rounder.
func (f RounderFunc) Round(ctx context.Context, snap sia.Snapshot) (sia.Plan, error) {
	return f(ctx, snap)
}

// Policy adapts package sia to sim.Policy. Use one per simulated workload.
type Policy struct {
	opt     Options
	truth   sim.Truth
	nodes   []sia.Node
	types   []string
	perNode map[string]int
	sched   Rounder
	jobs    map[string]*jobState
	name    string
	why     map[string]string // last round's Decision.Reason per waiting job
}

type jobState struct {
	tracker   *bootstrap.Tracker
	models    sia.Models // tracker, or a projection over it
	fed       map[string]int
	placement []sia.GPU
	peak      int
}

// Epoch is the time origin of the simulated snapshots.
var Epoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// DefaultSolverMaxNodes is the solver's branch-and-bound node limit in a
// simulated round whose Options.Sia leaves SolverMaxNodes 0: a bound on a
// round's work that does not depend on the machine (the simulator's rounds
// have no deadline). It is a safety net, not a tuning knob: every round of
// Sia's runs on saturn and philly workload 1 (both variants) solves to
// proven optimality under it.
const DefaultSolverMaxNodes = 1 << 20

// simulatedOptions returns the scheduler options of a simulated round: o
// (nil: the published artifact's variant) without a deadline
// (RoundTimeout negative; ctx has none under sim.Run) and with the solver's
// node limit DefaultSolverMaxNodes unless o sets one. A deadline would make
// the plans depend on the machine's speed and load (the solver stops where
// it has got to), so o's RoundTimeout and SolverDeadline must not be
// positive (an error wrapping sia.ErrInvalidInput).
func simulatedOptions(o *sia.Options) (*sia.Options, error) {
	so := sia.Options{Artifact: sia.PublishedArtifact()}
	if o != nil {
		so = *o
	}
	if so.RoundTimeout > 0 {
		return nil, noDeadline("RoundTimeout", so.RoundTimeout)
	}
	if so.SolverDeadline > 0 {
		return nil, noDeadline("SolverDeadline", so.SolverDeadline)
	}
	so.RoundTimeout = -1
	if so.SolverMaxNodes == 0 {
		so.SolverMaxNodes = DefaultSolverMaxNodes
	}
	return &so, nil
}

// noDeadline is simulatedOptions' error for a positive deadline option: a
// *sia.InputError (wrapping sia.ErrInvalidInput) naming the field.
func noDeadline(field string, d time.Duration) error {
	return &sia.InputError{Field: "Options.Sia." + field, Reason: fmt.Sprintf("%v: a simulated round has no deadline (it would depend on the machine's load); leave it 0 and bound the solver with SolverMaxNodes", d)}
}

// New returns a Sia policy for a cluster and ground truth.
func New(c sim.Cluster, truth sim.Truth, opt Options) (*Policy, error) {
	if truth == nil {
		return nil, &sim.InputError{Field: "Truth", Reason: "no ground truth (the policy was built with a nil sim.Truth)"}
	}
	sched := opt.Scheduler
	if sched == nil {
		so, err := simulatedOptions(opt.Sia)
		if err != nil {
			return nil, err
		}
		s, err := sia.New(so)
		if err != nil {
			return nil, err
		}
		sched = s
	}
	if opt.Fit == nil {
		opt.Fit = &goodput.FitOptions{Starts: 1}
	}
	if opt.Projection < TrackerProjection || opt.Projection > NoProjection {
		return nil, fmt.Errorf("siapolicy: unknown projection %d", int(opt.Projection))
	}
	p := &Policy{opt: opt, truth: truth, sched: sched, jobs: map[string]*jobState{}, types: c.Types(), perNode: map[string]int{}}
	for _, g := range c.Groups {
		p.perNode[g.Type] = g.GPUsPerNode
		for k := 0; k < g.Nodes; k++ {
			p.nodes = append(p.nodes, sia.Node{ID: nodeID(g.Type, k), Type: g.Type, GPUs: g.GPUsPerNode})
		}
	}
	p.name = "sia"
	if opt.Rigid {
		p.name = "sia-rigid"
	}
	switch opt.Mode {
	case bootstrap.Oracle:
		p.name += "-oracle"
	case bootstrap.NoProfiling:
		p.name += "-noprof"
	}
	if opt.Name != "" {
		p.name = opt.Name
	}
	return p, nil
}

// WaitReasons implements sim.Explainer: the Decision.Reason of every job the
// last round gave no GPUs.
func (p *Policy) WaitReasons() map[string]string { return p.why }

// explain records the Decision.Reason of every job the plan gives no GPUs
// (WaitReasons), whichever placement turns the plan into allocations.
func (p *Policy) explain(plan *sia.Plan) {
	p.why = map[string]string{}
	for _, d := range plan.Decisions {
		if !d.Allocation.Running() && d.Reason != sia.ReasonNone {
			p.why[d.Job] = d.Reason.String()
		}
	}
}

// fillPlacements gives the running jobs that this policy did not place (a
// state built by hand or by another policy) concrete GPUs: on each node of
// their allocation, the lowest GPU indices no other job holds. sia.Round
// needs every running job's GPUs.
func (p *Policy) fillPlacements(snap *sia.Snapshot, allocs []sim.Alloc) {
	used := map[sia.GPU]bool{}
	for _, j := range snap.Jobs {
		for _, g := range j.State.Current.Placement {
			used[g] = true
		}
	}
	for i := range snap.Jobs {
		cur := &snap.Jobs[i].State.Current
		if !cur.Running() || len(cur.Placement) > 0 {
			continue
		}
		for _, k := range allocs[i].Nodes {
			g := sia.GPU{Node: nodeID(cur.Type, k)}
			for used[g] {
				g.Index++
			}
			used[g] = true
			cur.Placement = append(cur.Placement, g)
		}
	}
}

func nodeID(typ string, k int) string { return typ + "/" + strconv.Itoa(k) }

func nodeIndex(id string) (int, error) {
	i := strings.LastIndexByte(id, '/')
	if i < 0 {
		return 0, fmt.Errorf("siapolicy: bad node id %q", id)
	}
	return strconv.Atoi(id[i+1:])
}

// Name implements sim.Policy.
func (p *Policy) Name() string { return p.name }

func (p *Policy) rigid(j *sim.Job) bool {
	return p.opt.Rigid || j.Spec.Category == sim.CategoryRigid
}

func (p *Policy) newJob(j *sim.Job) (*jobState, error) {
	if j.App.Hybrid() {
		return p.newHybridJob(j)
	}
	spec := bootstrap.Spec{InitBatch: j.App.InitBatch, MaxBatch: j.App.MaxBatch, Limits: map[string]goodput.Limits{}}
	if p.rigid(j) || j.Spec.Category == sim.CategoryStrongScaled {
		spec.FixedBatch = max(j.Spec.Batch, spec.InitBatch)
	} else if p.opt.CapAtRequest {
		spec.MaxBatch = min(spec.MaxBatch, max(j.Spec.Batch, spec.InitBatch))
	}
	for _, t := range p.types {
		if !p.truth.Supports(j.Spec.App, t) {
			continue
		}
		lo, hi := p.truth.LocalRange(j.Spec.App, t)
		spec.Limits[t] = goodput.Limits{MinLocalBatch: max(lo, 1), MaxLocalBatch: max(hi, lo, 1)}
	}
	mode := p.opt.Mode
	seed := mode == bootstrap.Oracle || (mode == bootstrap.Profiled && !p.opt.NoSeed)
	if mode == bootstrap.Profiled && p.opt.Projection != TrackerProjection {
		// The tracker must not project by itself: Oracle mode accepts the
		// 1-GPU seeds and never projects, NoProfiling neither seeds nor
		// projects. Observations are fed as in Profiled mode (feed keys on
		// p.opt.Mode).
		mode = bootstrap.NoProfiling
		if seed {
			mode = bootstrap.Oracle
		}
	}
	tr, err := bootstrap.New(spec, &bootstrap.Options{Mode: mode, Fit: p.opt.Fit})
	if err != nil {
		return nil, fmt.Errorf("siapolicy: job %q: %w", j.Spec.Name, err)
	}
	st := &jobState{tracker: tr, models: tr, fed: map[string]int{}}
	if p.opt.Mode == bootstrap.Profiled && p.opt.Projection == StaticRatioProjection {
		rp := &bootstrap.RatioProjection{Tracker: tr, Order: p.types, Xput1: map[string]float64{}, PerNode: p.perNode}
		for _, t := range p.types {
			if p.truth.Supports(j.Spec.App, t) {
				rp.Xput1[t] = p.truth.Xput1(j.Spec.App, t)
			}
		}
		if err := rp.Validate(); err != nil {
			return nil, fmt.Errorf("siapolicy: job %q: %w", j.Spec.Name, err)
		}
		st.models = rp
	}
	if err := p.seed(j, tr, seed); err != nil {
		return nil, err
	}
	return st, nil
}

// seed gives a new job's tracker the profiles its mode knows of: the 1-GPU
// (for a hybrid job, one-replica) profile of every type in Mode Profiled,
// every profile in Mode Oracle, nothing when seed is false.
func (p *Policy) seed(j *sim.Job, tr *bootstrap.Tracker, seed bool) error {
	for _, t := range p.types {
		if !p.truth.Supports(j.Spec.App, t) || !seed {
			continue
		}
		var rows []goodput.Observation
		switch p.opt.Mode {
		case bootstrap.Profiled:
			rows = p.truth.SeedProfile(j.Spec.App, t)
		case bootstrap.Oracle:
			rows = p.truth.Profile(j.Spec.App, t, 0, 0)
		}
		if len(rows) > 0 {
			if err := tr.Seed(t, rows...); err != nil {
				return fmt.Errorf("siapolicy: job %q: seeding %s: %w", j.Spec.Name, t, err)
			}
		}
	}
	return nil
}

// feed reports the job's new measurements to its tracker. In Oracle mode the
// tracker already holds every profile (the job's own measurements come from
// the same data), so only the gradient statistics are reported: refitting
// hundreds of rows on every new configuration would add nothing.
func (p *Policy) feed(j *sim.Job, st *jobState) error {
	for _, t := range p.types {
		if p.opt.Mode == bootstrap.Oracle {
			for _, o := range j.Observations(t)[st.fed[t]:] {
				st.peak = max(st.peak, o.Replicas)
			}
			st.fed[t] = len(j.Observations(t))
			continue
		}
		obs := j.Observations(t)
		for _, o := range obs[st.fed[t]:] {
			sync := math.Min(o.SyncTime, o.StepTime*(1-1e-9))
			if _, err := st.tracker.Observe(t, bootstrap.Measurement{Nodes: o.Nodes, Replicas: o.Replicas, LocalBatch: o.LocalBatch, StepTime: o.StepTime, SyncTime: sync}); err != nil {
				return fmt.Errorf("siapolicy: job %q: %w", j.Spec.Name, err)
			}
			st.peak = max(st.peak, o.Replicas)
		}
		st.fed[t] = len(obs)
	}
	if g, ok := j.Grad(); ok {
		if err := st.tracker.SetGrad(g); err != nil {
			return fmt.Errorf("siapolicy: job %q: %w", j.Spec.Name, err)
		}
	}
	return nil
}

// Schedule implements sim.Policy.
func (p *Policy) Schedule(ctx context.Context, s *sim.State) (map[string]sim.Alloc, error) {
	snap := sia.Snapshot{Now: Epoch.Add(time.Duration(s.Now * float64(time.Second))), Nodes: p.nodes}
	active := map[string]bool{}
	allocs := make([]sim.Alloc, 0, len(s.Jobs))
	for _, j := range s.Jobs {
		name := j.Spec.Name
		active[name] = true
		st := p.jobs[name]
		if st == nil {
			var err error
			if st, err = p.newJob(j); err != nil {
				return nil, err
			}
			p.jobs[name] = st
		}
		if err := p.feed(j, st); err != nil {
			return nil, err
		}
		sj := sia.Job{ID: name, Application: j.Spec.App, Submitted: Epoch.Add(time.Duration(j.Spec.Submit * float64(time.Second))),
			Models: st.models}
		switch {
		case j.App.Hybrid():
			// Adaptive in whole replicas: its tracker's Spec.Stages are the
			// replica size per type (goodput.Model.Stages).
		case p.rigid(j):
			sj.Kind, sj.GPUs = sia.Rigid, j.Spec.Replicas
		case j.Spec.Category == sim.CategoryStrongScaled:
			sj.Kind, sj.MaxGPUs = sia.StrongScaling, j.Spec.Replicas
		}
		a := j.Alloc()
		sj.State = sia.JobState{Restarts: j.Restarts(), Restoring: j.RestoreLeft() > 0, PeakReplicas: st.peak,
			RestartCost: time.Duration(j.App.RestartCost * float64(time.Second))}
		if a.GPUs() > 0 {
			shape := a.Shape()
			sj.State.Current = sia.Allocation{Type: a.Type, Nodes: len(shape), GPUs: a.GPUs(), Placement: st.placement}
		}
		snap.Jobs = append(snap.Jobs, sj)
		allocs = append(allocs, a)
	}
	p.fillPlacements(&snap, allocs)
	for name := range p.jobs {
		if !active[name] {
			delete(p.jobs, name)
		}
	}
	plan, err := p.sched.Round(ctx, snap)
	if err != nil {
		return nil, err
	}
	p.explain(&plan)
	if p.opt.ArtifactPlacement {
		return p.placeArtifact(&plan)
	}
	out := map[string]sim.Alloc{}
	for _, d := range plan.Decisions {
		st := p.jobs[d.Job]
		if !d.Allocation.Running() {
			st.placement = nil
			continue
		}
		gpus := append([]sia.GPU(nil), d.Allocation.Placement...)
		sort.Slice(gpus, func(a, b int) bool {
			ia, _ := nodeIndex(gpus[a].Node)
			ib, _ := nodeIndex(gpus[b].Node)
			if ia != ib {
				return ia < ib
			}
			return gpus[a].Index < gpus[b].Index
		})
		nodes := make([]int, len(gpus))
		for i, g := range gpus {
			k, err := nodeIndex(g.Node)
			if err != nil {
				return nil, err
			}
			nodes[i] = k
		}
		st.placement = gpus
		out[d.Job] = sim.Alloc{Type: d.Allocation.Type, Nodes: nodes}
	}
	return out, nil
}
