package ilp_test

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/ilp"
)

// cloneProblem7 is a deep copy of p.
func cloneProblem7(p *ilp.Problem) *ilp.Problem {
	q := *p
	q.Capacity = maps7(p.Capacity)
	q.Reserved = maps7(p.Reserved)
	q.Jobs = slices.Clone(p.Jobs)
	for i := range q.Jobs {
		q.Jobs[i].Options = slices.Clone(p.Jobs[i].Options)
	}
	q.Quotas = slices.Clone(p.Quotas)
	for i := range q.Quotas {
		q.Quotas[i].Jobs = slices.Clone(p.Quotas[i].Jobs)
		q.Quotas[i].Types = slices.Clone(p.Quotas[i].Types)
	}
	return &q
}

func maps7(m map[string]int) map[string]int {
	if m == nil {
		return nil
	}
	c := make(map[string]int, len(m))
	for k, v := range m {
		c[k] = v
	}
	return c
}

// TestProbe7SolveLeavesInput: Solve modifies neither the problem nor the
// warm start, on every path (scaled values, a model cut short, the late
// admission, keepWarm's fallback), and solves of one problem from several
// goroutines at once agree (run with -race, it finds shared writes).
func TestProbe7SolveLeavesInput(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 10))
	per := 10
	if testing.Short() || raceEnabled {
		per = 3
	}
	for shape := 0; shape < 9; shape++ {
		for it := 0; it < per; it++ {
			p, unit, desc := shape7(rng, shape)
			want, _, ok, tooBig := dpTwin(p, unit)
			if !ok || tooBig {
				continue
			}
			orig := cloneProblem7(p)
			warm := slices.Clone(want)
			for _, step := range []time.Duration{0, 5 * time.Microsecond, 300 * time.Microsecond} {
				for _, s := range []*ilp.Settings{nil, {WarmStart: warm}, {MaxNodes: 1, Tolerance: 0.1}} {
					if step == 0 {
						_, err := ilp.Solve(context.Background(), p, s)
						require.NoError(t, err)
					} else {
						_, _, err := ilp.SteppedSolve(p, 0, step, s)
						require.NoError(t, err)
					}
					require.Equal(t, orig, p, "%s: problem modified (step %v, %+v)", desc, step, s)
					require.Equal(t, want, warm, "%s: warm start modified", desc)
				}
			}
			// concurrent solves of the same problem
			first, err := ilp.Solve(context.Background(), p, &ilp.Settings{WarmStart: warm})
			require.NoError(t, err)
			var wg sync.WaitGroup
			sols := make([]ilp.Solution, 4)
			for g := range sols {
				wg.Add(1)
				go func() {
					defer wg.Done()
					sols[g], _ = ilp.Solve(context.Background(), p, &ilp.Settings{WarmStart: warm})
				}()
			}
			wg.Wait()
			for g := range sols {
				assert.Equal(t, first, sols[g], "%s: goroutine %d", desc, g)
			}
		}
	}
}

// TestProbe7JSONRoundTrip: every problem of the twin's shapes (one shared
// Unallocated, as the format has) written by WriteJSON reads back equal,
// values of 1e-300 to 1e278 and counts of 2^40 included, with its Meta.
func TestProbe7JSONRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	n := 0
	for shape := 0; shape < 9; shape++ {
		for it := 0; it < 30; it++ {
			p, _, desc := shape7(rng, shape)
			u := p.Jobs[0].Unallocated
			for i := range p.Jobs {
				p.Jobs[i].Unallocated = u
			}
			if p.Validate() != nil {
				continue // the new Unallocated may put values off the grid
			}
			opt := float64(it) / 3
			var b bytes.Buffer
			require.NoError(t, ilp.WriteJSON(&b, p, ilp.Meta{Name: fmt.Sprint("r", it), Optimum: &opt}), desc)
			q, meta, err := ilp.ParseJSON(b.Bytes())
			require.NoError(t, err, "%s: %s", desc, b.String())
			require.Equal(t, fmt.Sprint("r", it), meta.Name)
			require.NotNil(t, meta.Optimum)
			require.Equal(t, opt, *meta.Optimum)
			norm := func(p *ilp.Problem) *ilp.Problem {
				c := cloneProblem7(p)
				if len(c.Reserved) == 0 {
					c.Reserved = nil
				}
				for i := range c.Jobs {
					if len(c.Jobs[i].Options) == 0 {
						c.Jobs[i].Options = nil
					}
				}
				if len(c.Quotas) == 0 {
					c.Quotas = nil
				}
				for i := range c.Quotas {
					if len(c.Quotas[i].Types) == 0 {
						c.Quotas[i].Types = nil
					}
					if len(c.Quotas[i].Jobs) == 0 {
						c.Quotas[i].Jobs = nil
					}
					slices.Sort(c.Quotas[i].Jobs) // a set: written in job order
				}
				return c
			}
			require.Equal(t, norm(p), norm(q), "%s: %s", desc, b.String())
			n++
		}
	}
	t.Logf("%d problems round-tripped", n)
	assert.Greater(t, n, 150)
}

// TestProbe7MaxNodesCount: Solution.Nodes, the nodes explored, is at most
// Settings.MaxNodes: the node that the limit refused was counted (Nodes 2
// with MaxNodes 1), on the twin's shapes.
func TestProbe7MaxNodesCount(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 12))
	var probs []*ilp.Problem
	for shape := 0; shape < 9; shape++ {
		for range 40 {
			p, _, _ := shape7(rng, shape)
			if p.Validate() == nil {
				probs = append(probs, p)
			}
		}
	}
	limited := 0
	for i, p := range probs {
		for _, max := range []int{1, 2, 5, 50} {
			sol, err := ilp.Solve(context.Background(), p, &ilp.Settings{MaxNodes: max})
			require.NoError(t, err)
			require.NoError(t, p.Check(sol.Assignment))
			require.LessOrEqual(t, sol.Nodes, max, "problem %d (%d jobs), MaxNodes %d: %v", i, len(p.Jobs), max, sol.Status)
			if sol.Status == ilp.Feasible {
				limited++
			}
		}
	}
	t.Logf("%d solves stopped by MaxNodes", limited)
	assert.Positive(t, limited)
}
