package sia

import (
	"github.com/sia-sched/sia/configset"
	"github.com/sia-sched/sia/goodput"
)

// evaluator is the per-goroutine scratch of a matrix build: the batch-size
// search with its caches (goodput.Searcher, exactly goodput.Model.Best)
// and the candidate configurations of a row.
type evaluator struct {
	search goodput.Searcher
	cands  []configset.Config
	fixed  []configset.Config // windowShapes's fixed shapes (cluster.appendFixed)
	reach  []poolReach        // the scale-up cap's per-pool reach (rowBuilder.scaleUpCap)
}

func newEvaluator() *evaluator { return &evaluator{} }

// best returns m.Best(nodes, replicas) for a model already validated.
func (ev *evaluator) best(m *goodput.Model, nodes, replicas int) (goodput.Choice, bool) {
	return ev.search.Best(m, nodes, replicas)
}
