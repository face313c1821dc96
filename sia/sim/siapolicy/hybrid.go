package siapolicy

import (
	"fmt"

	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/sia/sim"
)

// SchedulesHybrid implements sim.HybridScheduler: package sia schedules
// hybrid-parallel jobs in whole replicas (a tracker with bootstrap.Spec.Stages:
// the replica size per type), except with Options.Rigid (a rigid GPU count
// cannot be whole replicas on every type) or Options.ArtifactPlacement (the
// published simulator's round-robin placer splits replicas), under which
// sim.Run refuses a workload with a hybrid job.
func (p *Policy) SchedulesHybrid() bool { return !p.opt.Rigid && !p.opt.ArtifactPlacement }

// newHybridJob builds the tracker of a hybrid-parallel job (paper §5.3):
// Spec.Stages are the application's pipeline stages on the cluster's types,
// Spec.MicroBatches its micro-batches per replica, and the batch range its
// validated one (with Options.CapAtRequest, capped at the workload's
// batch_size but never below one replica's micro-batches). It is seeded
// as data-parallel jobs are, with the profiles in pipeline units (one
// replica in Mode Profiled), and always projects with the tracker's own
// rule (Options.Projection applies to data-parallel jobs).
func (p *Policy) newHybridJob(j *sim.Job) (*jobState, error) {
	if !p.SchedulesHybrid() {
		return nil, fmt.Errorf("siapolicy: job %q: %w", j.Spec.Name, sim.ErrHybridUnsupported)
	}
	spec := bootstrap.Spec{InitBatch: j.App.InitBatch, MaxBatch: j.App.MaxBatch, Stages: map[string]int{},
		MicroBatches: j.App.MicroBatches}
	if p.opt.CapAtRequest {
		spec.MaxBatch = min(spec.MaxBatch, max(j.Spec.Batch, j.App.MicroBatches, spec.InitBatch))
	}
	for _, t := range p.types {
		if s, ok := j.App.ReplicaGPUs(t); ok && p.truth.Supports(j.Spec.App, t) {
			spec.Stages[t] = s
		}
	}
	if len(spec.Stages) == 0 {
		return nil, fmt.Errorf("siapolicy: job %q: hybrid-parallel %s has pipeline stages on none of the cluster's types %v", j.Spec.Name, j.App.Name, p.types)
	}
	tr, err := bootstrap.New(spec, &bootstrap.Options{Mode: p.opt.Mode, Fit: p.opt.Fit})
	if err != nil {
		return nil, fmt.Errorf("siapolicy: job %q: %w", j.Spec.Name, err)
	}
	st := &jobState{tracker: tr, models: tr, fed: map[string]int{}}
	seed := p.opt.Mode == bootstrap.Oracle || (p.opt.Mode == bootstrap.Profiled && !p.opt.NoSeed)
	if err := p.seed(j, tr, seed); err != nil {
		return nil, err
	}
	return st, nil
}

var _ sim.HybridScheduler = (*Policy)(nil)
