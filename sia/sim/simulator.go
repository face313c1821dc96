package sim

import (
	"context"

	"github.com/sia-sched/sia/fairness"
)

// Options configure a Simulator. A nil *Options gives the defaults.
type Options struct {
	// Round is the round length in seconds (0 = DefaultRound, 60 s; else
	// MinRound..MaxRound).
	Round float64
	// MaxTime ends the simulation (0 = DefaultMaxTime, 60 days); see
	// Config.MaxTime.
	MaxTime float64
	// Rigid runs every job at its requested batch size and GPU count.
	Rigid bool
	// Batch selects the throughput model a job tunes its batch size with.
	Batch BatchMode
	// Observer, if set, is called after every round.
	Observer func(RoundStat)
	// LogAllocations records every round's allocations in the Result.
	LogAllocations bool
}

// Simulator runs trace-driven simulations of one cluster under one ground
// truth. It holds no state between runs: Run is safe for concurrent use
// (each call with its own Policy value).
type Simulator struct {
	cfg Config
}

// New returns a Simulator for a cluster and ground truth (opt nil = the
// defaults). Errors wrap ErrInvalidInput and name the field.
func New(c Cluster, truth Truth, opt *Options) (*Simulator, error) {
	if truth == nil {
		return nil, inputErr("", 0, "", "Truth", "no ground truth")
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	var o Options
	if opt != nil {
		o = *opt
	}
	cfg := Config{Cluster: c, Truth: truth, Round: o.Round, MaxTime: o.MaxTime, Rigid: o.Rigid, Batch: o.Batch,
		Observer: o.Observer, LogAllocations: o.LogAllocations}
	if err := cfg.defaultTimes(); err != nil {
		return nil, err
	}
	if cfg.Batch != PerTypeModel && cfg.Batch != PooledModel {
		return nil, inputErr("", 0, "", "Batch", "unknown batch mode %d", cfg.Batch)
	}
	return &Simulator{cfg: cfg}, nil
}

// Config returns the simulator's configuration with defaults filled in.
func (s *Simulator) Config() Config { return s.cfg }

// Cluster returns the simulated cluster.
func (s *Simulator) Cluster() Cluster { return s.cfg.Cluster }

// Truth returns the ground truth.
func (s *Simulator) Truth() Truth { return s.cfg.Truth }

// Run simulates a workload under a policy (see the package-level Run). The
// same workload, policy state and seed give the same result, apart from
// the wall times (PolicyTimes, RoundStat.PolicyDur).
func (s *Simulator) Run(ctx context.Context, wl *Workload, pol Policy) (*Result, error) {
	return Run(ctx, s.cfg, wl, pol)
}

// FTF computes the finish-time-fairness ratio of every finished job of a
// result of this simulator (see the package-level FTF).
func (s *Simulator) FTF(ctx context.Context, wl *Workload, res *Result) ([]fairness.Ratio, error) {
	return FTF(ctx, s.cfg.Cluster, s.cfg.Truth, wl, res, s.cfg.Rigid)
}
