package sia

import (
	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/goodput"
)

// pipelined gives a test job's models a replica size per type, the way a
// hybrid-parallel job's models carry it (goodput.Model.Stages, from
// bootstrap.Spec.Stages), without changing their goodput: a type outside
// stages is excluded, and each configuration is worth what the inner models
// give it (their Evaluate, or their model's data-parallel search for the
// configuration's replicas).
type pipelined struct {
	inner  Models
	stages map[string]int
}

func (p pipelined) Model(t string) (goodput.Model, bootstrap.Source) {
	m, src := p.inner.Model(t)
	s, ok := p.stages[t]
	if !ok {
		return m, bootstrap.Excluded
	}
	m.Stages = s
	return m, src
}

func (p pipelined) Evaluate(t string, nodes, replicas int) (goodput.Choice, bool) {
	if e, ok := p.inner.(Evaluator); ok {
		return e.Evaluate(t, nodes, replicas)
	}
	m, _ := p.inner.Model(t)
	return m.Best(nodes, replicas)
}

// unpipelined returns the models a pipelined wraps (m itself otherwise).
func unpipelined(m Models) Models {
	for {
		p, ok := m.(pipelined)
		if !ok {
			return m
		}
		m = p.inner
	}
}
