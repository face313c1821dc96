package simcheck

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sort"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/sia/sim"
	"github.com/sia-sched/sia/sia/sim/gavel"
	"github.com/sia-sched/sia/sia/sim/pollux"
	"github.com/sia-sched/sia/sia/sim/siapolicy"
)

// checked wraps a policy and checks every decision it hands the simulator
// against the cluster and the active jobs.
type checked struct {
	sim.Policy
	t        *testing.T
	cluster  sim.Cluster
	rigid    bool // every job must get exactly its requested GPUs
	shapes   bool // rules (a) and (b) of design §6 must hold
	rounds   int
	placed   int
	violated int
}

func (c *checked) Schedule(ctx context.Context, s *sim.State) (map[string]sim.Alloc, error) {
	out, err := c.Policy.Schedule(ctx, s)
	if err != nil {
		return out, err
	}
	c.rounds++
	active := map[string]*sim.Job{}
	for _, j := range s.Jobs {
		active[j.Name()] = j
	}
	type nodeKey struct {
		typ  string
		node int
	}
	used := map[nodeKey]int{}
	perType := map[string]int{}
	names := make([]string, 0, len(out))
	for name := range out {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		a := out[name]
		j, ok := active[name]
		if !assert.True(c.t, ok, "%s: allocation for %q, which is not an active job", c.Name(), name) {
			c.violated++
			continue
		}
		if a.GPUs() == 0 {
			continue
		}
		g, ok := c.cluster.Group(a.Type)
		if !assert.True(c.t, ok, "%s: job %s on unknown type %q", c.Name(), name, a.Type) {
			c.violated++
			continue
		}
		c.placed++
		for _, n := range a.Nodes {
			if !assert.True(c.t, n >= 0 && n < g.Nodes, "%s: job %s on node %d of %s (has %d)", c.Name(), name, n, a.Type, g.Nodes) {
				c.violated++
				continue
			}
			used[nodeKey{a.Type, n}]++
		}
		perType[a.Type] += a.GPUs()
		if c.rigid {
			assert.Equal(c.t, j.Spec.Replicas, a.GPUs(), "%s: rigid job %s", c.Name(), name)
		}
		if c.shapes && g.GPUsPerNode&(g.GPUsPerNode-1) == 0 {
			shape := a.Shape()
			if a.GPUs() <= g.GPUsPerNode {
				assert.Len(c.t, shape, 1, "%s: job %s with %d GPUs split over nodes %v (rule a)", c.Name(), name, a.GPUs(), a.Nodes)
			} else {
				for _, k := range shape {
					assert.Equal(c.t, g.GPUsPerNode, k, "%s: job %s with %d GPUs not on whole nodes %v (rule b)", c.Name(), name, a.GPUs(), a.Nodes)
				}
			}
		}
	}
	for k, n := range used {
		g, _ := c.cluster.Group(k.typ)
		if !assert.LessOrEqual(c.t, n, g.GPUsPerNode, "%s: node %d of %s over-committed at t=%.0f", c.Name(), k.node, k.typ, s.Now) {
			c.violated++
		}
	}
	for typ, n := range perType {
		if !assert.LessOrEqual(c.t, n, c.cluster.Capacity(typ), "%s: type %s over capacity at t=%.0f", c.Name(), typ, s.Now) {
			c.violated++
		}
	}
	return out, nil
}

type policyCase struct {
	name   string
	rigid  bool // the simulation runs jobs at their requested size
	shapes bool
	round  float64
	make   func(c sim.Cluster, truth sim.Truth) (sim.Policy, error)
}

func policies() []policyCase {
	siaWith := func(o siapolicy.Options) func(sim.Cluster, sim.Truth) (sim.Policy, error) {
		return func(c sim.Cluster, truth sim.Truth) (sim.Policy, error) { return siapolicy.New(c, truth, o) }
	}
	return []policyCase{
		{name: "sia", shapes: true, round: 60, make: siaWith(siapolicy.Options{})},
		{name: "sia-oracle", shapes: true, round: 60, make: siaWith(siapolicy.Options{Mode: bootstrap.Oracle})},
		{name: "sia-noprof", shapes: true, round: 60, make: siaWith(siapolicy.Options{Mode: bootstrap.NoProfiling})},
		{name: "sia-rigid", rigid: true, round: 60, make: siaWith(siapolicy.Options{Rigid: true})},
		{name: "gavel", rigid: true, round: 360, make: func(c sim.Cluster, truth sim.Truth) (sim.Policy, error) {
			return gavel.New(c, truth, 360), nil
		}},
		{name: "pollux", round: 60, make: func(c sim.Cluster, truth sim.Truth) (sim.Policy, error) {
			// A smaller search keeps the test quick; the structure is the same.
			return pollux.New(c, truth, pollux.Options{Population: 20, Generations: 10, Seed: 7}), nil
		}},
	}
}

// randomCluster draws a small heterogeneous cluster from the types the
// built-in model truth knows.
func randomCluster(rng *rand.Rand) (sim.Cluster, error) {
	specs := []string{"heterogeneous", "homogeneous", "physical"}
	if k := rng.IntN(4); k < len(specs) {
		return sim.ParseCluster(specs[k], 1)
	}
	types := []struct {
		name string
		per  []int
	}{{"t4", []int{4}}, {"a100", []int{8}}, {"rtx", []int{8}}, {"quad", []int{4}}, {"v100", []int{8}}}
	spec := ""
	for _, ty := range types {
		if rng.IntN(2) == 0 && spec != "" {
			continue
		}
		if spec != "" {
			spec += ","
		}
		spec += fmt.Sprintf("%s:%dx%d", ty.name, 1+rng.IntN(4), ty.per[0])
	}
	return sim.ParseCluster(spec, 1)
}

type outcome struct {
	jobs   []sim.JobResult
	rounds int
}

func run(t *testing.T, pc policyCase, c sim.Cluster, truth sim.Truth, wl *sim.Workload) outcome {
	t.Helper()
	pol, err := pc.make(c, truth)
	require.NoError(t, err)
	ck := &checked{Policy: pol, t: t, cluster: c, rigid: pc.rigid, shapes: pc.shapes}
	// Long enough for every job of a short workload to finish on any of
	// these clusters.
	cfg := sim.Config{Cluster: c, Truth: truth, Round: pc.round, Rigid: pc.rigid, MaxTime: 20 * 24 * 3600}
	res, err := sim.Run(context.Background(), cfg, wl, ck)
	require.NoError(t, err, "%s on %s", pc.name, c)
	require.Zero(t, ck.violated, "%s on %s: constraint violations", pc.name, c)

	// No job lost: every submitted job is reported exactly once, finished
	// (completion after submission) or unfinished.
	require.Len(t, res.Jobs, len(wl.Jobs), "%s: jobs reported", pc.name)
	seen := map[string]bool{}
	for _, j := range res.Jobs {
		require.False(t, seen[j.Name], "%s: job %s reported twice", pc.name, j.Name)
		seen[j.Name] = true
		if j.Completion >= 0 {
			assert.GreaterOrEqual(t, j.Completion, j.Submit, "%s: job %s finished before it was submitted", pc.name, j.Name)
			assert.InDelta(t, j.Completion-j.Submit, j.JCT, 1e-6, "%s: job %s", pc.name, j.Name)
		}
		assert.GreaterOrEqual(t, j.Restarts, 0)
		assert.GreaterOrEqual(t, j.GPUSeconds, 0.0)
	}
	for _, s := range wl.Jobs {
		assert.True(t, seen[s.Name], "%s: job %s lost", pc.name, s.Name)
	}
	return outcome{jobs: res.Jobs, rounds: ck.rounds}
}

// TestRandomSimulations drives every policy over random workloads and
// clusters, checking every round's decisions, that no job is lost, and that
// every job finishes on a cluster that can run it.
func TestRandomSimulations(t *testing.T) {
	truth, err := sim.LoadModel()
	require.NoError(t, err)
	seeds := 4
	if testing.Short() || raceEnabled {
		seeds = 1
	}
	for seed := 1; seed <= seeds; seed++ {
		rng := rand.New(rand.NewPCG(uint64(seed), 99))
		c, err := randomCluster(rng)
		require.NoError(t, err)
		wl, err := sim.Generate(uint64(seed), 0.5+rng.Float64(), 10+float64(rng.IntN(20)))
		require.NoError(t, err)
		for _, pc := range policies() {
			t.Run(fmt.Sprintf("seed=%d/%s/%s", seed, c, pc.name), func(t *testing.T) {
				o := run(t, pc, c, truth, wl)
				assert.Positive(t, o.rounds)
				for _, j := range o.jobs {
					assert.GreaterOrEqual(t, j.Completion, 0.0, "job %s (%s) unfinished on %s", j.Name, j.App, c)
				}
			})
		}
	}
}

// TestDeterministicAcrossGOMAXPROCS runs the same simulations twice each under
// GOMAXPROCS 1, 2 and 8 and requires identical per-job results.
func TestDeterministicAcrossGOMAXPROCS(t *testing.T) {
	truth, err := sim.LoadModel()
	require.NoError(t, err)
	c, err := sim.ParseCluster("heterogeneous", 1)
	require.NoError(t, err)
	hours := 0.75
	if raceEnabled {
		hours = 0.25
	}
	wl, err := sim.Generate(11, hours, 20)
	require.NoError(t, err)
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	for _, pc := range policies() {
		t.Run(pc.name, func(t *testing.T) {
			var ref []sim.JobResult
			for _, procs := range []int{1, 2, 8} {
				runtime.GOMAXPROCS(procs)
				reps := 1
				if procs == 1 {
					reps = 2 // same settings twice: identical runs
				}
				for rep := 0; rep < reps; rep++ {
					got := run(t, pc, c, truth, wl).jobs
					if ref == nil {
						ref = got
						continue
					}
					require.Equal(t, ref, got, "GOMAXPROCS=%d run %d differs", procs, rep)
				}
			}
		})
	}
}
