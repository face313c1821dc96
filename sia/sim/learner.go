package sim

import (
	"github.com/sia-sched/sia/goodput"
)

// obsKey identifies a throughput observation: (nodes, replicas, per-GPU batch).
type obsKey struct{ n, r, b int }

// profile is a set of observations with a lazily refitted model.
type profile struct {
	obs     map[obsKey]goodput.Observation
	order   []obsKey // insertion order, for deterministic fits
	params  goodput.Params
	fitted  bool
	dirty   bool
	maxRepl int
}

func newProfile() *profile { return &profile{obs: map[obsKey]goodput.Observation{}} }

// add records an observation; the first one of a key wins (as in the artifact).
func (p *profile) add(o goodput.Observation) bool {
	k := obsKey{o.Nodes, o.Replicas, o.LocalBatch}
	if _, ok := p.obs[k]; ok {
		return false
	}
	p.obs[k] = o
	p.order = append(p.order, k)
	p.dirty = true
	if o.Replicas > p.maxRepl {
		p.maxRepl = o.Replicas
	}
	return true
}

func (p *profile) list() []goodput.Observation {
	out := make([]goodput.Observation, len(p.order))
	for i, k := range p.order {
		out[i] = p.obs[k]
	}
	return out
}

// fit returns the fitted parameters, refitting if observations were added.
func (p *profile) fit() (goodput.Params, bool) {
	if len(p.order) == 0 {
		return goodput.Params{}, false
	}
	if p.dirty {
		opts := &goodput.FitOptions{Starts: 1}
		if p.fitted {
			prev := p.params
			opts.Init = &prev
		}
		obs := p.list()
		par, err := goodput.Fit(obs, opts)
		p.dirty = false
		if err != nil {
			return p.params, p.fitted
		}
		p.params, p.fitted = par, true
	}
	return p.params, p.fitted
}

// learner is what a job knows about its own throughput: observations of what
// it ran on, per GPU type and pooled over types (first observation of a key
// wins, whatever type produced it, as in the heterogeneity-unaware baseline).
type learner struct {
	perType map[string]*profile
	pooled  *profile
}

func newLearner() *learner {
	return &learner{perType: map[string]*profile{}, pooled: newProfile()}
}

func (l *learner) add(typ string, o goodput.Observation) {
	p := l.perType[typ]
	if p == nil {
		p = newProfile()
		l.perType[typ] = p
	}
	p.add(o)
	l.pooled.add(o)
}

func (l *learner) get(typ string) *profile {
	if typ == "" {
		return l.pooled
	}
	return l.perType[typ]
}
