package bootstrap

import (
	"fmt"
	"math"

	"github.com/sia-sched/sia/goodput"
)

// RatioProjection is the cross-type bootstrapping of the published Sia
// simulator, for hosts that reproduce it (the paper's §3.2 states the rule,
// est_A(N) = x_A(1)/x_B(1) · x_B(N); the simulator applies it differently
// from Tracker's Profiled mode):
//
//   - each type's model is fitted only on what the job ran on there (feed the
//     Tracker with Observe; create it in NoProfiling mode so that it neither
//     seeds nor projects by itself);
//   - a type A the job has not run on is projected from the first type B of
//     Order that has a model (not the type with the most multi-GPU data),
//     and the projection is applied to goodput: the goodput of A's
//     configuration with r replicas is B's best goodput with r replicas on
//     ⌈r / PerNode[B]⌉ nodes of B (B's memory limits), times the static ratio
//     Xput1[A] / Xput1[B] of 1-GPU profile throughputs;
//   - as soon as the job has run on A, even on one GPU, A's own model
//     replaces the projection.
//
// It implements the scheduler's Models interface and its optional Evaluator
// extension (Evaluate), which the scheduler uses for every type whose Source
// is not None. Like Tracker.Model, Model and Evaluate do not mutate state.
type RatioProjection struct {
	// Tracker holds the job's own models (required).
	Tracker *Tracker
	// Order lists the cluster's GPU types; the first one with a model is the
	// projection source.
	Order []string
	// Xput1 is each type's static 1-GPU throughput (samples per second) of
	// the job's application; a type without a positive entry can neither be
	// projected nor be a source.
	Xput1 map[string]float64
	// PerNode is each type's GPUs per node, which converts a projected
	// configuration's replicas to the source type's node count.
	PerNode map[string]int
}

// Validate checks the projection's settings; errors wrap ErrInvalidInput.
func (p *RatioProjection) Validate() error {
	switch {
	case p == nil || p.Tracker == nil:
		return &InputError{Field: "RatioProjection.Tracker", Reason: "missing"}
	}
	for _, t := range p.Order {
		if x, ok := p.Xput1[t]; ok && (math.IsNaN(x) || math.IsInf(x, 0) || x < 0) {
			return &InputError{Type: t, Field: "RatioProjection.Xput1", Reason: fmt.Sprintf("%v, want a finite value >= 0", x)}
		}
		if n, ok := p.PerNode[t]; ok && n < 1 {
			return &InputError{Type: t, Field: "RatioProjection.PerNode", Reason: fmt.Sprintf("%d, want >= 1", n)}
		}
	}
	return nil
}

// source returns the projection source for gpuType: the first type of Order,
// other than gpuType, with a model of its own and a positive Xput1, and the
// goodput ratio Xput1[gpuType] / Xput1[source].
func (p *RatioProjection) source(gpuType string) (string, float64, bool) {
	xa := p.Xput1[gpuType]
	if !(xa > 0) {
		return "", 0, false
	}
	for _, b := range p.Order {
		if b == gpuType {
			continue
		}
		if _, src := p.Tracker.Model(b); src == None {
			continue
		}
		xb := p.Xput1[b]
		if !(xb > 0) || p.PerNode[b] < 1 {
			return "", 0, false // the first type with a model decides
		}
		return b, xa / xb, true
	}
	return "", 0, false
}

// Model returns gpuType's own model when the job has run on it; otherwise,
// when a source type exists, the type's batch range and limits with Source
// Projected (its goodput then comes from Evaluate); otherwise Source None.
func (p *RatioProjection) Model(gpuType string) (goodput.Model, Source) {
	m, src := p.Tracker.Model(gpuType)
	if src != None {
		return m, src
	}
	if _, _, ok := p.source(gpuType); ok {
		return m, Projected
	}
	return m, None
}

// Evaluate returns the best choice of the configuration (nodes, replicas) of
// gpuType: from the type's own model, or projected as described on
// RatioProjection (the choice's batch sizes are the source type's, its
// Goodput and Throughput scaled by the ratio). ok is false for
// configurations without a feasible batch size and for types without a model.
func (p *RatioProjection) Evaluate(gpuType string, nodes, replicas int) (goodput.Choice, bool) {
	if m, src := p.Tracker.Model(gpuType); src != None {
		return m.Best(nodes, replicas)
	}
	b, ratio, ok := p.source(gpuType)
	if !ok || replicas < 1 {
		return goodput.Choice{}, false
	}
	mb, _ := p.Tracker.Model(b)
	per := p.PerNode[b]
	c, ok := mb.Best((replicas+per-1)/per, replicas)
	if !ok {
		return goodput.Choice{}, false
	}
	c.Goodput *= ratio
	c.Throughput *= ratio
	return c, true
}
