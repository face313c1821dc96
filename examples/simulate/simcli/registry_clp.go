//go:build clp

package simcli

import (
	"time"

	"github.com/sia-sched/sia/sia/sim"
	"github.com/sia-sched/sia/sia/sim/gavel"
)

// taggedPolicies are the built-in policies that need the clp build tag:
// gavel-clp is Gavel with its time-share LP solved by CLP (gavel.CLP)
// instead of gonum's dense simplex, for clusters of thousands of jobs.
func taggedPolicies() []Policy {
	return []Policy{
		{Name: "gavel-clp", Round: 360 * time.Second, Rigid: true, New: func(env Env) (sim.Policy, error) {
			p := gavel.New(env.Cluster, env.Truth, env.Round)
			p.Solver = gavel.CLP
			return p, nil
		}},
	}
}
