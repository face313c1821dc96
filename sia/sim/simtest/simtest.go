// Package simtest builds simulator states for unit and property tests of a
// policy, without running a trace: random snapshots of a cluster with jobs
// in every state (queued, running, restoring, restarted, with and without
// measurements), every allocation fitting the cluster. Check the policy's
// answer with sim.CheckAllocations.
package simtest

import (
	"fmt"
	"math/rand/v2"

	"github.com/sia-sched/sia/goodput"
	"github.com/sia-sched/sia/sia/sim"
)

// Options shape RandomState. A nil *Options gives the defaults.
type Options struct {
	// Jobs is the number of jobs (0 = 1..16, drawn).
	Jobs int
	// Round is the round length in seconds (0 = sim.DefaultRound).
	Round float64
	// Apps are the applications to draw from (nil = sim.AppNames that the
	// ground truth knows and some type of the cluster supports).
	Apps []string
}

// RandomState returns a random round state on cluster c under truth: the
// same rng state gives the same State. Running jobs hold GPUs of a type
// their application supports, packed onto nodes without exceeding any;
// some are restoring, some have restarted, and running jobs have measured
// what their allocation would give (truth.StepTime).
func RandomState(rng *rand.Rand, c sim.Cluster, truth sim.Truth, opt *Options) (*sim.State, error) {
	var o Options
	if opt != nil {
		o = *opt
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if o.Round == 0 {
		o.Round = sim.DefaultRound
	}
	apps := o.Apps
	if apps == nil {
		for _, a := range sim.AppNames {
			if _, ok := truth.App(a); !ok {
				continue
			}
			for _, t := range c.Types() {
				if truth.Supports(a, t) {
					apps = append(apps, a)
					break
				}
			}
		}
	}
	if len(apps) == 0 {
		return nil, fmt.Errorf("simtest: no application of %s runs on cluster %s", truth.Name(), c)
	}
	n := o.Jobs
	if n == 0 {
		n = 1 + rng.IntN(16)
	}
	free := map[string][]int{}
	for _, g := range c.Groups {
		f := make([]int, g.Nodes)
		for i := range f {
			f[i] = g.GPUsPerNode
		}
		free[g.Type] = f
	}
	now := o.Round * float64(1+rng.IntN(1000))
	jobs := make([]*sim.Job, 0, n)
	for i := 0; i < n; i++ {
		app := apps[rng.IntN(len(apps))]
		consts, ok := truth.App(app)
		if !ok {
			return nil, fmt.Errorf("simtest: ground truth %s has no application %q", truth.Name(), app)
		}
		spec := sim.JobSpec{Name: fmt.Sprintf("%s-%d", app, i), App: app, Submit: float64(rng.IntN(int(now))),
			Replicas: 1 << rng.IntN(4), Batch: consts.InitBatch * (1 + rng.IntN(4))}
		switch rng.IntN(6) {
		case 0:
			spec.Category = sim.CategoryRigid
		case 1:
			spec.Category = sim.CategoryStrongScaled
		}
		st := sim.JobState{Epoch: rng.IntN(max(consts.MaxEpochs, 1))}
		st.Progress = truth.Progress(app, st.Epoch)
		if rng.IntN(3) > 0 {
			want := 1 + rng.IntN(8)
			switch spec.Category {
			case sim.CategoryRigid:
				want = spec.Replicas // rigid jobs run at their request or not at all
			case sim.CategoryStrongScaled:
				want = min(want, spec.Replicas)
			}
			st.Alloc = randomAlloc(rng, c, truth, app, want, free)
		}
		if st.Alloc.GPUs() > 0 {
			st.Restarts = rng.IntN(4)
			if rng.IntN(4) == 0 {
				st.RestoreLeft = consts.RestartDelay * rng.Float64()
			}
			st.Attained = float64(st.Alloc.GPUs()) * (now - spec.Submit) * rng.Float64()
			g := truth.GradStats(app, float64(spec.Batch), st.Epoch)
			st.Grad = &g
			lo, _ := truth.LocalRange(app, st.Alloc.Type)
			shape := st.Alloc.Shape()
			if step, sync, ok := truth.StepTime(app, st.Alloc.Type, shape, max(lo, 1)); ok && step > sync {
				st.Observations = map[string][]goodput.Observation{st.Alloc.Type: {{Nodes: len(shape), Replicas: st.Alloc.GPUs(),
					LocalBatch: max(lo, 1), StepTime: step, SyncTime: sync}}}
			}
			st.Contention = float64(1 + rng.IntN(n))
		}
		j, err := sim.NewJob(spec, consts, st)
		if err != nil {
			return nil, err
		}
		jobs = append(jobs, j)
	}
	return sim.NewState(now, o.Round, c, truth, jobs...)
}

// randomAlloc takes want free GPUs of a random type the application
// supports, node by node; zero when fewer are free.
func randomAlloc(rng *rand.Rand, c sim.Cluster, truth sim.Truth, app string, want int, free map[string][]int) sim.Alloc {
	var types []string
	for _, t := range c.Types() {
		if truth.Supports(app, t) {
			types = append(types, t)
		}
	}
	if len(types) == 0 {
		return sim.Alloc{}
	}
	t := types[rng.IntN(len(types))]
	a := sim.Alloc{Type: t}
	f := free[t]
	total := 0
	for _, g := range f {
		total += g
	}
	if total < want {
		return sim.Alloc{}
	}
	start := rng.IntN(len(f))
	for k := 0; k < len(f) && len(a.Nodes) < want; k++ {
		node := (start + k) % len(f)
		for f[node] > 0 && len(a.Nodes) < want {
			f[node]--
			a.Nodes = append(a.Nodes, node)
		}
	}
	return a
}
