package sia

import (
	"fmt"
	"log/slog"
	"math"
	"strings"
	"time"
)

// Default option values (paper §3.3 and §5; the paper's and the artifact's
// settings).
// The published artifact's constants (ArtifactKnobs).
const (
	// artifactFiller is the artifact's goodput of invalid configurations.
	artifactFiller = 1e-4
	// artifactClip is the artifact's clip of the option values.
	artifactClip = 3000.0
	// artifactGrid is the artifact's rounding step of the option values.
	artifactGrid = 0.01
)

const (
	// DefaultP is the fairness exponent p.
	DefaultP = -0.5
	// DefaultLambda is |λ|, the cost of leaving a job without GPUs.
	DefaultLambda = 1.1
	// DefaultScaleUpFactor caps a job at this many times the largest number
	// of replicas it has run with.
	DefaultScaleUpFactor = 2.0
	// DefaultMaxGPUsPerJob is the largest configuration offered.
	DefaultMaxGPUsPerJob = 64
	// DefaultRestartCost is S for jobs without their own.
	DefaultRestartCost = 30 * time.Second
	// DefaultRoundTimeout is the deadline Round gives itself when ctx has
	// none (Options.RoundTimeout). A round of the paper's cluster scaled to
	// 2,048 GPUs and 1,500 jobs takes about 50 ms on one core; on hard
	// instances the solver would otherwise search for minutes while its
	// incumbent is already within a fraction of a per cent of the bound.
	// Five seconds is a twelfth of the paper's 60 s round.
	DefaultRoundTimeout = 5 * time.Second
	// MaxP is the largest |p| accepted: beyond it (r·G)^p over- or
	// underflows for ordinary goodput ratios.
	MaxP = 10.0
	// MaxLambda is the largest |λ| accepted.
	MaxLambda = 1e6
	// MaxScaleUpFactor is the largest ScaleUpFactor accepted.
	MaxScaleUpFactor = 1e6
)

// ArtifactKnobs are the published artifact's deviations from the paper's
// formulas (§3.3), each usable on its own; Options.Artifact nil means none
// (the paper), PublishedArtifact every one. The paper's settings are the
// default because they are what the paper describes; the knobs are
// workarounds of the artifact's solver (CBC) and profiling pipeline.
type ArtifactKnobs struct {
	// Filler gives invalid configurations (batch limits, no feasible batch,
	// beyond the scale-up cap) the goodput 1e-4 instead of removing them.
	// Configurations outside the job's hard bounds (MinGPUs, MaxGPUs,
	// replica size, rigid count) are still removed.
	Filler bool
	// Round rounds option values to 0.01 (and λ with them); the solver is
	// told (ilp.Problem.Grid) so it can prove optimality on the grid.
	Round bool
	// Clip caps option values at 3000 (so r = 0 gives 3000 instead of
	// removing the option when p < 0).
	Clip bool
	// RestartGrace sets the restart factor to 1 while the job's age is below
	// its restart penalty S.
	RestartGrace bool
	// ModelPenalties takes S from the artifact's table by Job.Application
	// (substring match): deepspeech2 25 s, imagenet 250, cifar10 30, bert
	// 120, yolov3 45, others 30; JobState.RestartCost still wins when set.
	ModelPenalties bool
	// BlindFirst treats every type as having no model until the job has run
	// (JobState.PeakReplicas = 0), so a new job's first placement ignores GPU
	// type: every type's one-replica configuration gets the same value.
	BlindFirst bool
}

// PublishedArtifact returns every knob on: the published simulator's runs.
func PublishedArtifact() *ArtifactKnobs {
	return &ArtifactKnobs{Filler: true, Round: true, Clip: true, RestartGrace: true, ModelPenalties: true, BlindFirst: true}
}

// Stage names a step of a round, for observers.
type Stage int

const (
	// StageMatrix builds the goodput matrix.
	StageMatrix Stage = iota
	// StageSolve solves the allocation problem.
	StageSolve
	// StagePlace places allocations onto nodes.
	StagePlace
)

// String returns "matrix", "solve" or "place".
func (s Stage) String() string {
	switch s {
	case StageMatrix:
		return "matrix"
	case StageSolve:
		return "solve"
	case StagePlace:
		return "place"
	}
	return fmt.Sprintf("Stage(%d)", int(s))
}

// Event reports one finished step of a round to Options.Observer.
type Event struct {
	// Stage is the step that finished.
	Stage Stage
	// Duration is its wall time (measured with the time package; a report
	// only: the clock enters decisions through the round's deadline alone).
	Duration time.Duration
	// Jobs is the number of jobs and Offered the number of matrix entries
	// offered to the solver (0 before the matrix is built).
	Jobs, Offered int
	// Status is the solver status (StageSolve and later; StatusUnknown
	// before).
	Status Status
	// Evicted is the number of jobs evicted by placement (StagePlace).
	Evicted int
	// Err is the error the step failed with, if any.
	Err error
}

// Options configure the scheduler. The zero value (or a nil *Options) means
// the defaults listed per field; Validate checks a value and WithDefaults
// fills in the defaults.
type Options struct {
	// P is the fairness exponent p applied to every goodput-matrix entry;
	// 0 means DefaultP (−0.5). For p < 0 the allocation problem is
	// minimised (the sense is flipped so that more goodput is still better).
	P float64
	// Lambda is λ, the objective value of leaving a job without GPUs. 0 means
	// DefaultLambda with the sign opposite to P (1.1 for p < 0, −1.1 for
	// p > 0). It must have the sign opposite to P and |λ| ≤ MaxLambda.
	//
	// What λ guarantees. Every valid configuration (not an artifact filler)
	// of a job that would not be restarted — a queued job, or a running job
	// on its current configuration — has a normalised goodput G ≥ 1, so its
	// value G^p is ≤ 1 for p < 0 and ≥ 1 for p > 0. With p > 0, or with
	// p < 0 and |λ| > 1, waiting is therefore worse for such a job than any
	// of those configurations, none of them is dominated by waiting, and an
	// optimal allocation never leaves the job waiting while the GPUs (and
	// quotas) one of them needs are idle. It does not guarantee every job a
	// GPU when there are enough GPUs for all: the objective may prefer to
	// give a GPU to a job that gains more from it than a waiting job would
	// (4 GPUs, three linearly scaling jobs, p = −0.5, λ = 1.1: 2 + 2 + 0 GPUs
	// is worth 2·2^−0.5 + 1.1 ≈ 2.51, better than 2 + 1 + 1 at ≈ 2.71). With
	// p < 0, only |λ| above the number of jobs makes any allocation that
	// leaves a job waiting worse than one that gives every job a valid
	// configuration it would not be restarted on. Running jobs that would
	// be restarted are discounted by the restart factor and may be
	// preempted whatever λ is.
	Lambda float64
	// ScaleUpFactor caps adaptive jobs at ScaleUpFactor × JobState.
	// PeakReplicas replicas (at least 1): the artifact's "scale up at most
	// 2× per round". 0 means DefaultScaleUpFactor (2); must be ≥ 1.
	ScaleUpFactor float64
	// NoScaleUpCap disables the scale-up cap.
	NoScaleUpCap bool
	// MaxGPUsPerJob is the largest configuration offered; 0 means
	// DefaultMaxGPUsPerJob (64).
	MaxGPUsPerJob int
	// RestartCost is S for jobs whose State.RestartCost is 0; 0 means
	// DefaultRestartCost (30 s).
	RestartCost time.Duration
	// SolverDeadline bounds the allocation solve; 0 means no bound beyond
	// the caller's ctx. On the deadline the best feasible allocation found
	// is used and the plan's Status says Feasible.
	SolverDeadline time.Duration
	// RoundTimeout is the deadline of a round whose ctx has none (see
	// Scheduler.Round for what a deadline guarantees); 0 means
	// DefaultRoundTimeout (5 s), a negative value no deadline at all (the
	// round then lasts as long as the solver needs to prove optimality,
	// which can be minutes on hard instances). A ctx deadline always wins.
	RoundTimeout time.Duration
	// SolverMaxNodes caps the solver's branch-and-bound nodes (0 = none).
	SolverMaxNodes int
	// Parallelism is the number of goroutines that build the goodput matrix
	// and check the snapshot's jobs each on its own, the lean round's kept
	// and cheap rows included (rows and those checks are independent; the
	// result, and the first error of an invalid snapshot, are the same for
	// any value). 0 or 1 means none: the round runs on the caller's
	// goroutine only. Snapshots below 128 jobs always run on one goroutine.
	// Models.Model is then called from several goroutines (see Models).
	Parallelism int
	// Seed breaks ties: with Seed ≠ 0 the jobs are presented to the solver
	// in a seeded pseudo-random order, so equally good allocations are not
	// always resolved in favour of the first jobs of the snapshot. 0 keeps
	// snapshot order. Same seed and snapshot, same plan.
	Seed uint64
	// Artifact, if not nil, turns on the published artifact's deviations
	// from the paper (PublishedArtifact: all of them); nil means the paper.
	Artifact *ArtifactKnobs
	// Logger, if not nil, receives one Debug record per round (jobs,
	// options, status, objective, bound, evictions, time).
	Logger *slog.Logger
	// Observer, if not nil, is called with an Event after each step of a
	// round (the gonum optimize.Recorder idea: a hook instead of a metrics
	// dependency), synchronously on the goroutine running the round.
	Observer func(Event)
}

// knobs returns the effective artifact knobs (none for the paper).
func (o *Options) knobs() ArtifactKnobs {
	if o.Artifact == nil {
		return ArtifactKnobs{}
	}
	return *o.Artifact
}

// WithDefaults returns a copy of o (nil allowed) with every zero field set to
// its default.
func (o *Options) WithDefaults() Options {
	var d Options
	if o != nil {
		d = *o
	}
	if d.P == 0 {
		d.P = DefaultP
	}
	if d.Lambda == 0 {
		d.Lambda = DefaultLambda
		if d.P > 0 {
			d.Lambda = -DefaultLambda
		}
	}
	if d.ScaleUpFactor == 0 {
		d.ScaleUpFactor = DefaultScaleUpFactor
	}
	if d.MaxGPUsPerJob == 0 {
		d.MaxGPUsPerJob = DefaultMaxGPUsPerJob
	}
	if d.RestartCost == 0 {
		d.RestartCost = DefaultRestartCost
	}
	if d.RoundTimeout == 0 {
		d.RoundTimeout = DefaultRoundTimeout
	}
	return d
}

// Validate checks the options (after defaults are applied); errors wrap
// ErrInvalidInput and name the field.
func (o *Options) Validate() error {
	d := o.WithDefaults()
	bad := func(field, format string, args ...any) error {
		return &InputError{Field: "Options." + field, Reason: fmt.Sprintf(format, args...)}
	}
	finite := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	switch {
	case !finite(d.P) || math.Abs(d.P) > MaxP:
		return bad("P", "%v, want a finite non-zero value with |p| <= %v", d.P, MaxP)
	case !finite(d.Lambda) || math.Abs(d.Lambda) > MaxLambda:
		return bad("Lambda", "%v, want a finite value with |λ| <= %v", d.Lambda, MaxLambda)
	case (d.P < 0) == (d.Lambda < 0):
		return bad("Lambda", "%v must have the sign opposite to P = %v", d.Lambda, d.P)
	case !finite(d.ScaleUpFactor) || d.ScaleUpFactor < 1 || d.ScaleUpFactor > MaxScaleUpFactor:
		return bad("ScaleUpFactor", "%v, want a finite value in [1, %v]", d.ScaleUpFactor, MaxScaleUpFactor)
	case d.MaxGPUsPerJob < 1:
		return bad("MaxGPUsPerJob", "%d, want >= 1 (0 = default %d)", d.MaxGPUsPerJob, DefaultMaxGPUsPerJob)
	case d.RestartCost < 0:
		return bad("RestartCost", "%v, want >= 0", d.RestartCost)
	case d.SolverDeadline < 0:
		return bad("SolverDeadline", "%v, want >= 0", d.SolverDeadline)
	case d.Parallelism < 0:
		return bad("Parallelism", "%d, want >= 0", d.Parallelism)
	case d.SolverMaxNodes < 0:
		return bad("SolverMaxNodes", "%d, want >= 0", d.SolverMaxNodes)
	}
	return nil
}

// artifactPenalties is the artifact's per-model restart penalty table
// (sia.py:get_restart_penalty), matched by substring in this order.
var artifactPenalties = []struct {
	name string
	s    time.Duration
}{
	{"deepspeech", 25 * time.Second},
	{"imagenet", 250 * time.Second},
	{"cifar", 30 * time.Second},
	{"bert", 120 * time.Second},
	{"yolov3", 45 * time.Second},
}

// restartCost returns S for a job.
func (o *Options) restartCost(j *Job) time.Duration {
	if j.State.RestartCost > 0 {
		return j.State.RestartCost
	}
	if o.knobs().ModelPenalties {
		for _, p := range artifactPenalties {
			if strings.Contains(j.Application, p.name) {
				return p.s
			}
		}
		return 30 * time.Second
	}
	return o.RestartCost
}
