package sim

import (
	"context"
	"fmt"
	"math"
	"sync"

	"github.com/sia-sched/sia/fairness"
)

// FTF computes the finish-time-fairness ratio of every finished job of a
// result (paper Eq. 6) with package fairness: for each GPU type
// g the job's fair share is N_g / N_avg GPUs of g, and its fair completion
// time is that of the job running alone on its share of g, simulated with the
// same ground truth (adaptive jobs tune their batch size; rigid jobs run at
// their requested count, and slower in proportion when their share is
// smaller; a hybrid-parallel job runs on its share rounded down to whole
// replicas, and a share below one replica leaves the type out). Isolated
// runs are memoised by the job's application, category, request and batch,
// the type and its node size, and the GPUs (for this call
// only; IsolatedRuns keeps them across calls).
func FTF(ctx context.Context, c Cluster, truth Truth, wl *Workload, res *Result, rigid bool) ([]fairness.Ratio, error) {
	return NewIsolatedRuns(truth).FTF(ctx, c, wl, res, rigid)
}

// IsolatedRuns memoises the isolated runs behind finish-time fairness
// across FTF calls with one ground truth, so that policies compared on the
// same cluster and workloads simulate each isolated run once. It is safe
// for concurrent use: two calls that need the same run at once may both
// simulate it, with the same (deterministic) result.
type IsolatedRuns struct {
	truth Truth
	mu    sync.Mutex
	jct   map[string]float64
}

// NewIsolatedRuns returns an empty memo of isolated runs under truth.
func NewIsolatedRuns(truth Truth) *IsolatedRuns {
	return &IsolatedRuns{truth: truth, jct: map[string]float64{}}
}

func (r *IsolatedRuns) get(key string) (float64, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.jct[key]
	return t, ok
}

func (r *IsolatedRuns) put(key string, t float64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.jct[key] = t
}

// FTF is the package's FTF with the memo's ground truth, reusing (and
// adding to) its isolated runs.
func (memo *IsolatedRuns) FTF(ctx context.Context, c Cluster, wl *Workload, res *Result, rigid bool) ([]fairness.Ratio, error) {
	truth := memo.truth
	var types []fairness.TypeGPUs
	for _, g := range c.Groups {
		types = append(types, fairness.TypeGPUs{Type: g.Type, GPUs: g.Nodes * g.GPUsPerNode})
	}
	specs := map[string]JobSpec{}
	for _, j := range wl.Jobs {
		specs[j.Name] = j
	}
	iso := func(spec JobSpec) fairness.IsolatedFunc {
		return func(typ string, gpus int) (float64, error) {
			g, ok := c.Group(typ)
			if !ok || !truth.Supports(spec.App, typ) {
				return 0, fairness.ErrUnavailable
			}
			run := gpus
			app, _ := truth.App(spec.App)
			if s, ok := app.ReplicaGPUs(typ); !ok {
				return 0, fairness.ErrUnavailable
			} else if run -= run % s; run == 0 {
				return 0, fairness.ErrUnavailable // a fair share below one replica
			}
			isRigid := !app.Hybrid() && (rigid || spec.Category == CategoryRigid)
			if isRigid {
				run = spec.Replicas
				if run > g.Nodes*g.GPUsPerNode {
					return 0, fairness.ErrUnavailable
				}
			}
			key := fmt.Sprint(spec.App, "/", spec.Category, "/", spec.Replicas, "/", spec.Batch, "/", typ, "/", g.GPUsPerNode, "/", run, "/", isRigid)
			t, ok := memo.get(key)
			if !ok {
				nodes := (run + g.GPUsPerNode - 1) / g.GPUsPerNode
				cl := Cluster{Groups: []NodeGroup{{Type: typ, Nodes: nodes, GPUsPerNode: g.GPUsPerNode}}}
				one := &Workload{Name: "isolated", Jobs: []JobSpec{{Name: spec.Name, App: spec.App, Replicas: spec.Replicas, Batch: spec.Batch, Category: spec.Category}}}
				r, err := Run(ctx, Config{Cluster: cl, Truth: truth, Round: 60, Rigid: isRigid && !app.Hybrid()}, one, Fixed{GPUs: run})
				if err != nil {
					return 0, err
				}
				t = r.Jobs[0].JCT
				if t <= 0 {
					return 0, fairness.ErrUnavailable
				}
				memo.put(key, t)
			}
			if isRigid && gpus < run {
				t *= float64(run) / float64(gpus)
			}
			return t, nil
		}
	}
	var jobs []fairness.Job
	for _, j := range res.Jobs {
		if j.JCT < 0 || !(j.Contention > 0) {
			continue
		}
		jobs = append(jobs, fairness.Job{ID: j.Name, SharedJCT: j.JCT, AvgJobs: math.Max(j.Contention, 1e-9), Isolated: iso(specs[j.Name])})
	}
	if len(jobs) == 0 {
		return nil, nil
	}
	return fairness.Compute(types, jobs, nil)
}
