package bootstrap

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"

	"github.com/sia-sched/sia/goodput"
	"github.com/sia-sched/sia/internal/strictjson"
)

// ErrInvalidInput is wrapped by every error this package returns for bad
// caller data (specs, options, observations, measurements, serialised state).
// Use errors.Is(err, bootstrap.ErrInvalidInput); the concrete error is often a
// *InputError naming the offending type and field.
var ErrInvalidInput = errors.New("bootstrap: invalid input")

// InputError names the GPU type and field of a bad input. It wraps
// ErrInvalidInput (or the underlying goodput error, which wraps
// goodput.ErrInvalidInput).
type InputError struct {
	// Type is the GPU type concerned, or "" when none applies.
	Type string
	// Field names the offending field, e.g. "Spec.InitBatch" or
	// "Measurement.StepTime".
	Field string
	// Reason says what is wrong.
	Reason string
	// Err is the wrapped cause; nil means ErrInvalidInput.
	Err error
}

// Error implements error.
func (e *InputError) Error() string {
	where := e.Field
	if e.Type != "" {
		where = fmt.Sprintf("type %q: %s", e.Type, e.Field)
	}
	return fmt.Sprintf("bootstrap: invalid input: %s: %s", where, e.Reason)
}

// Unwrap returns the cause, ErrInvalidInput when none was recorded.
func (e *InputError) Unwrap() []error {
	if e.Err == nil {
		return []error{ErrInvalidInput}
	}
	return []error{ErrInvalidInput, e.Err}
}

// Mode selects how a Tracker fills in GPU types the job has no multi-GPU data
// for. The three modes reproduce the paper's bootstrapping comparison (§5.6).
type Mode int

const (
	// Profiled is the paper's design and the default: the host seeds each
	// type with 1-GPU profiles (Tracker.Seed, replicas = 1 only); a fit on
	// 1-GPU data predicts near-perfect scaling, which is the "assume the
	// first multi-GPU step scales perfectly" rule; once some type A has
	// multi-GPU observations, every type B without its own multi-GPU data is
	// projected from A (est_B(N) = x_B(1)/x_A(1) · x_A(N)).
	Profiled Mode = iota
	// Oracle assumes every profile is known up front: Seed accepts any
	// configuration (multi-GPU and multi-node rows too) and there is no
	// projection.
	Oracle
	// NoProfiling seeds nothing (Seed is an error) and never projects: a
	// type the job has not run on has no model (Source None), and the
	// scheduler offers only its 1-GPU configuration, at the value of the
	// job's smallest configuration.
	NoProfiling
)

// String returns "profiled", "oracle" or "no-profiling".
func (m Mode) String() string {
	switch m {
	case Profiled:
		return "profiled"
	case Oracle:
		return "oracle"
	case NoProfiling:
		return "no-profiling"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// Source says where the model a Tracker returns for a GPU type comes from.
type Source int

const (
	// None: no model for the type. Schedulers offer only the 1-GPU (one
	// replica) configuration of the type, valued like the job's smallest
	// configuration (as the published artifact does).
	None Source = iota
	// Seeded: fitted on the type's own observations, all with one replica
	// (profiles or 1-GPU runs). Such a fit has no network cost and predicts
	// near-perfect scaling.
	Seeded
	// Projected: the type has only 1-GPU data; its model is the projection of
	// another type's multi-GPU model (see Tracker.Model).
	Projected
	// Measured: fitted on the type's own observations including at least one
	// with more than one replica.
	Measured
	// Excluded: the job cannot run on the type at all (for a Tracker: the
	// type is not in the job's Spec, Limits or Stages). Unlike None ("no
	// model yet"), schedulers never offer an excluded type.
	Excluded
)

// HasModel reports whether s comes with a fitted model (Seeded, Projected or
// Measured).
func (s Source) HasModel() bool { return s == Seeded || s == Projected || s == Measured }

// String returns "none", "seeded", "projected", "measured" or "excluded".
func (s Source) String() string {
	switch s {
	case None:
		return "none"
	case Seeded:
		return "seeded"
	case Projected:
		return "projected"
	case Measured:
		return "measured"
	case Excluded:
		return "excluded"
	}
	return fmt.Sprintf("Source(%d)", int(s))
}

// Spec describes the job's batch-size range and per-type limits: the parts of
// goodput.Model that do not come from measurements.
type Spec struct {
	// InitBatch is M0, the job's initial global batch size (≥ 1).
	InitBatch int
	// MaxBatch is the largest global batch size an adaptive job may use
	// (≥ InitBatch; ignored when FixedBatch is set).
	MaxBatch int
	// Limits gives the per-GPU batch bounds per GPU type (memory). A type
	// absent from Limits cannot run the job: Model returns Source Excluded
	// (schedulers never offer the type) and Seed/Observe return an error. Ignored for hybrid-parallel jobs, which
	// use Stages instead (a type must then appear in Stages).
	Limits map[string]goodput.Limits
	// FixedBatch is the global batch size of a strong-scaling or rigid job,
	// which the scheduler does not tune (InitBatch ≤ FixedBatch ≤ MaxCount);
	// 0 means adaptive: the batch is chosen in [InitBatch, MaxBatch].
	FixedBatch int
	// Stages gives, for a hybrid-parallel job, the pipeline stages (GPUs per
	// replica) per GPU type; nil for data-parallel jobs. It is the job's
	// replica size for the scheduler (goodput.Model.Stages of every model the
	// tracker returns), and the types it lists are the only ones the job can
	// use.
	Stages map[string]int
	// MicroBatches is the number of size-1 micro-batches each pipeline
	// replica runs per optimizer step (hybrid-parallel jobs only).
	MicroBatches int
	// Grad is the initial estimate of the gradient statistics, replaced by
	// the first reported ones. Zero means unknown: efficiency is then M0/M
	// (more GPUs help only through a smaller per-GPU batch at M0).
	Grad goodput.GradStats
}

// Hybrid reports whether the spec describes a hybrid-parallel job.
func (s Spec) Hybrid() bool { return len(s.Stages) > 0 || s.MicroBatches > 0 }

// Validate checks the spec; errors wrap ErrInvalidInput and name the field.
func (s Spec) Validate() error {
	if s.InitBatch < 1 {
		return &InputError{Field: "Spec.InitBatch", Reason: fmt.Sprintf("%d, want >= 1", s.InitBatch)}
	}
	switch {
	case s.FixedBatch < 0:
		return &InputError{Field: "Spec.FixedBatch", Reason: fmt.Sprintf("%d, want >= 0 (0: adaptive)", s.FixedBatch)}
	case s.FixedBatch > 0 && s.FixedBatch < s.InitBatch:
		return &InputError{Field: "Spec.FixedBatch", Reason: fmt.Sprintf("%d is below InitBatch %d", s.FixedBatch, s.InitBatch)}
	case s.FixedBatch > MaxCount:
		return &InputError{Field: "Spec.FixedBatch", Reason: fmt.Sprintf("%d, want <= %d", s.FixedBatch, MaxCount)}
	case (s.FixedBatch == 0 || s.Hybrid()) && s.MaxBatch < s.InitBatch:
		return &InputError{Field: "Spec.MaxBatch", Reason: fmt.Sprintf("%d is below InitBatch %d", s.MaxBatch, s.InitBatch)}
	}
	if err := s.Grad.Validate(); err != nil {
		return &InputError{Field: "Spec.Grad", Reason: err.Error(), Err: err}
	}
	if s.Hybrid() {
		if s.MicroBatches < 1 {
			return &InputError{Field: "Spec.MicroBatches", Reason: fmt.Sprintf("%d, want >= 1 for a hybrid-parallel job", s.MicroBatches)}
		}
		if len(s.Stages) == 0 {
			return &InputError{Field: "Spec.Stages", Reason: "empty for a hybrid-parallel job"}
		}
		for _, t := range slices.Sorted(maps.Keys(s.Stages)) {
			if t == "" {
				return &InputError{Field: "Spec.Stages", Reason: "empty GPU type name"}
			}
			if s.Stages[t] < 1 {
				return &InputError{Type: t, Field: "Spec.Stages", Reason: fmt.Sprintf("%d, want >= 1", s.Stages[t])}
			}
		}
		return nil
	}
	if len(s.Limits) == 0 {
		return &InputError{Field: "Spec.Limits", Reason: "no GPU type: the job could run nowhere"}
	}
	for _, t := range slices.Sorted(maps.Keys(s.Limits)) {
		if t == "" {
			return &InputError{Field: "Spec.Limits", Reason: "empty GPU type name"}
		}
		if err := s.Limits[t].Validate(); err != nil {
			return &InputError{Type: t, Field: "Spec.Limits", Reason: err.Error(), Err: err}
		}
	}
	return nil
}

// Options tune a Tracker. A nil *Options means the defaults: Mode Profiled and
// goodput.Fit's default settings.
type Options struct {
	// Mode selects seeding and projection; the zero value is Profiled.
	Mode Mode
	// Fit is passed to goodput.Fit on every refit; nil means its defaults.
	Fit *goodput.FitOptions
}

// Validate checks the options; errors wrap ErrInvalidInput.
func (o *Options) Validate() error {
	if o == nil {
		return nil
	}
	if o.Mode < Profiled || o.Mode > NoProfiling {
		return &InputError{Field: "Options.Mode", Reason: fmt.Sprintf("unknown mode %d", int(o.Mode))}
	}
	if o.Fit != nil && (o.Fit.Starts < 0 || o.Fit.MaxIterations < 0) {
		return &InputError{Field: "Options.Fit", Reason: "negative Starts or MaxIterations"}
	}
	return nil
}

// Measurement is what a host reports after running a job for a while on one
// configuration of one GPU type.
type Measurement struct {
	// Nodes and Replicas give the configuration (Replicas is the number of
	// data-parallel replicas: GPUs for data-parallel jobs, pipelines for
	// hybrid-parallel ones), as in the round's Decision (Allocation.Nodes,
	// Decision.Replicas). Replicas >= Nodes for a data-parallel job; a
	// pipeline may span nodes, so a hybrid-parallel job may have fewer
	// replicas than nodes as long as its Replicas × Spec.Stages GPUs cover
	// them (for example one 4-stage pipeline over 2 nodes). The tracker
	// records the type's stages with the observation (goodput.Observation.Stages).
	Nodes, Replicas int
	// LocalBatch is the per-GPU (micro-)batch size the job ran with.
	LocalBatch int
	// StepTime is the measured seconds of the micro-batch that ends with
	// the gradient all-reduce (an optimizer step without extra accumulation),
	// SyncTime the part of it spent in the all-reduce (0 ≤ SyncTime <
	// StepTime), so StepTime − SyncTime is the compute time of one
	// micro-batch. A job that accumulates s extra micro-batches per step
	// reports StepTime = T_step − s·T_micro (the profile formats and the
	// published artifact use the same convention).
	StepTime, SyncTime float64
	// Grad, if not nil, are the latest gradient statistics; they replace the
	// previous ones without a refit.
	Grad *goodput.GradStats
}

// typeState is what a Tracker knows about one GPU type.
type typeState struct {
	name   string
	obs    []goodput.Observation // distinct (Nodes, Replicas, LocalBatch) keys, first report kept
	params goodput.Params
	fitted bool
	multi  int // observations with Replicas > 1
}

// Tracker is the life cycle of one job's throughput models, one per GPU type:
// seeded from 1-GPU profiles, projected across types, refined from what the
// host reports. The host owns one Tracker per job, keeps it between
// scheduling rounds, feeds it with Seed and Observe, and hands it to the
// scheduler, which only reads it (Model).
//
// A Tracker refits a type's parameters (goodput.Fit, milliseconds) only when
// an observation with a new (nodes, replicas, local batch) key arrives for
// it; repeated reports of a known key, and gradient statistics, cost nothing.
// Model does no fitting and no allocation-heavy work, so it is cheap to call
// every round.
//
// A Tracker is deterministic (its state depends only on the sequence of
// calls), cheap to Clone, and serialisable with encoding/json. It is not safe
// for concurrent mutation; concurrent calls of Model alone are safe.
type Tracker struct {
	spec    Spec
	opts    Options
	types   []typeState // sorted by name
	grad    goodput.GradStats
	refits  int
	version uint64
}

// New returns a Tracker for a job with the given spec. It has no models until
// Seed or Observe provide data.
func New(spec Spec, opts *Options) (*Tracker, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	t := &Tracker{spec: cloneSpec(spec), grad: spec.Grad}
	if opts != nil {
		t.opts = *opts
		if opts.Fit != nil {
			f := *opts.Fit
			t.opts.Fit = &f
		}
	}
	return t, nil
}

// Spec returns (a copy of) the job's spec.
func (t *Tracker) Spec() Spec { return cloneSpec(t.spec) }

// Mode returns the tracker's mode.
func (t *Tracker) Mode() Mode { return t.opts.Mode }

// Grad returns the current gradient statistics.
func (t *Tracker) Grad() goodput.GradStats { return t.grad }

// Refits returns how many times the tracker has fitted parameters so far.
func (t *Tracker) Refits() int { return t.refits }

// Version changes whenever a model the tracker returns may have changed (new
// parameters or gradient statistics). Hosts and schedulers may use it to
// cache evaluations.
func (t *Tracker) Version() uint64 { return t.version }

// Types returns the GPU types the job can run on (the keys of Spec.Limits, or
// of Spec.Stages for a hybrid-parallel job), sorted.
func (t *Tracker) Types() []string {
	if t.spec.Hybrid() {
		return slices.Sorted(maps.Keys(t.spec.Stages))
	}
	return slices.Sorted(maps.Keys(t.spec.Limits))
}

func (t *Tracker) known(gpuType string) bool {
	if t.spec.Hybrid() {
		_, ok := t.spec.Stages[gpuType]
		return ok
	}
	_, ok := t.spec.Limits[gpuType]
	return ok
}

// Seed adds profile rows for one GPU type and refits it once. In Profiled
// mode every row must have one replica (the 1-GPU profiles collected at
// submission, over several batch sizes); in Oracle mode any configuration is
// allowed; in NoProfiling mode seeding is an error. Rows whose (nodes,
// replicas, local batch) key is already known are ignored.
func (t *Tracker) Seed(gpuType string, rows ...goodput.Observation) error {
	if t.opts.Mode == NoProfiling {
		return &InputError{Type: gpuType, Field: "Seed", Reason: "seeding is disabled in no-profiling mode"}
	}
	if !t.known(gpuType) {
		return &InputError{Type: gpuType, Field: "Seed", Reason: "type not in the job's Spec (Limits or Stages)"}
	}
	if len(rows) == 0 {
		return &InputError{Type: gpuType, Field: "Seed", Reason: "no rows"}
	}
	checked := make([]goodput.Observation, len(rows)) // the caller's rows stay as given
	for i, r := range rows {
		r, err := checkObs(gpuType, fmt.Sprintf("Seed row %d", i), r, t.stages(gpuType))
		if err != nil {
			return err
		}
		checked[i] = r
		if t.opts.Mode == Profiled && r.Replicas != 1 {
			return &InputError{Type: gpuType, Field: fmt.Sprintf("Seed row %d: Replicas", i),
				Reason: fmt.Sprintf("%d: profiled mode seeds 1-GPU (one replica) profiles only; use Oracle mode for full profiles", r.Replicas)}
		}
	}
	ts := t.state(gpuType)
	n, multi := len(ts.obs), ts.multi
	for _, r := range checked {
		ts.add(r)
	}
	if len(ts.obs) == n {
		return nil
	}
	if err := t.refit(ts); err != nil {
		ts.obs, ts.multi = ts.obs[:n], multi // a failed fit changes nothing
		return err
	}
	return nil
}

// Observe records a measurement on one GPU type. When its (nodes, replicas,
// local batch) key is new for the type, the type is refitted (and refit is
// true); otherwise only the gradient statistics (if any) are updated.
func (t *Tracker) Observe(gpuType string, m Measurement) (refit bool, err error) {
	if !t.known(gpuType) {
		return false, &InputError{Type: gpuType, Field: "Observe", Reason: "type not in the job's Spec (Limits or Stages)"}
	}
	o := goodput.Observation{Nodes: m.Nodes, Replicas: m.Replicas, LocalBatch: m.LocalBatch, StepTime: m.StepTime, SyncTime: m.SyncTime}
	o, err = checkObs(gpuType, "Measurement", o, t.stages(gpuType))
	if err != nil {
		return false, err
	}
	if m.Grad != nil {
		if err := m.Grad.Validate(); err != nil {
			return false, &InputError{Type: gpuType, Field: "Measurement.Grad", Reason: err.Error(), Err: err}
		}
	}
	defer func() {
		if err == nil && m.Grad != nil && *m.Grad != t.grad {
			t.grad = *m.Grad
			t.version++
		}
	}()
	ts := t.state(gpuType)
	n, multi := len(ts.obs), ts.multi
	if ts.add(o) {
		if err := t.refit(ts); err != nil {
			ts.obs, ts.multi = ts.obs[:n], multi // a failed fit changes nothing
			return false, err
		}
		refit = true
	}
	return refit, nil
}

// SetGrad replaces the gradient statistics (no refit).
func (t *Tracker) SetGrad(g goodput.GradStats) error {
	if err := g.Validate(); err != nil {
		return &InputError{Field: "Grad", Reason: err.Error(), Err: err}
	}
	if g != t.grad {
		t.grad = g
		t.version++
	}
	return nil
}

// stages returns the pipeline stages of a replica on gpuType (Spec.Stages)
// for a hybrid-parallel job, 0 for a data-parallel one.
func (t *Tracker) stages(gpuType string) int {
	if t.spec.Hybrid() {
		return t.spec.Stages[gpuType]
	}
	return 0
}

// checkObs validates an observation of a job whose replicas have stages
// pipeline stages on the type (0: data parallel) and returns it with its
// Stages set to them. Replicas counts replicas (pipelines for a
// hybrid-parallel job), so Replicas < Nodes is valid exactly for a pipeline
// that spans nodes with at least one GPU on each (Nodes <= Replicas ×
// Stages, goodput.CoversNodes): the shapes the scheduler may start and
// goodput.Model.Best predicts.
func checkObs(gpuType, field string, o goodput.Observation, stages int) (goodput.Observation, error) {
	bad := func(f, why string) (goodput.Observation, error) {
		return o, &InputError{Type: gpuType, Field: field + "." + f, Reason: why}
	}
	if o.Stages != 0 && o.Stages != stages && !(o.Stages == 1 && stages <= 1) {
		return bad("Stages", fmt.Sprintf("%d, want the job's %d pipeline stages on the type (Spec.Stages; 0 or 1: data parallel) or 0", o.Stages, stages))
	}
	o.Stages = stages
	switch {
	case o.Nodes < 1:
		return bad("Nodes", fmt.Sprintf("%d, want >= 1", o.Nodes))
	case o.Replicas < 1:
		return bad("Replicas", fmt.Sprintf("%d, want >= 1", o.Replicas))
	case !goodput.CoversNodes(o.Nodes, o.Replicas, stages) && stages > 1:
		return bad("Replicas", fmt.Sprintf("%d pipelines of %d stages cannot span Nodes = %d: want Nodes <= Replicas × %d (at least one GPU per node)", o.Replicas, stages, o.Nodes, stages))
	case !goodput.CoversNodes(o.Nodes, o.Replicas, stages):
		return bad("Replicas", fmt.Sprintf("%d, want >= Nodes = %d (one GPU per data-parallel replica)", o.Replicas, o.Nodes))
	case o.LocalBatch < 1:
		return bad("LocalBatch", fmt.Sprintf("%d, want >= 1", o.LocalBatch))
	case !(o.StepTime > 0) || math.IsInf(o.StepTime, 0):
		return bad("StepTime", fmt.Sprintf("%v, want a finite value > 0", o.StepTime))
	case !(o.SyncTime >= 0) || math.IsInf(o.SyncTime, 0):
		return bad("SyncTime", fmt.Sprintf("%v, want a finite value >= 0", o.SyncTime))
	case !(o.SyncTime < o.StepTime):
		return bad("SyncTime", fmt.Sprintf("%v is not below StepTime %v", o.SyncTime, o.StepTime))
	}
	return o, nil
}

// state returns the state of a type, creating it (in sorted position).
func (t *Tracker) state(name string) *typeState {
	i := sort.Search(len(t.types), func(i int) bool { return t.types[i].name >= name })
	if i < len(t.types) && t.types[i].name == name {
		return &t.types[i]
	}
	t.types = append(t.types, typeState{})
	copy(t.types[i+1:], t.types[i:])
	t.types[i] = typeState{name: name}
	return &t.types[i]
}

func (t *Tracker) lookup(name string) *typeState {
	i := sort.Search(len(t.types), func(i int) bool { return t.types[i].name >= name })
	if i < len(t.types) && t.types[i].name == name {
		return &t.types[i]
	}
	return nil
}

// add records o unless its key is known; it reports whether it was new.
func (ts *typeState) add(o goodput.Observation) bool {
	for _, p := range ts.obs {
		if p.Nodes == o.Nodes && p.Replicas == o.Replicas && p.LocalBatch == o.LocalBatch {
			return false
		}
	}
	ts.obs = append(ts.obs, o)
	if o.Replicas > 1 || o.Nodes > 1 { // a network measurement (also one pipeline over nodes)
		ts.multi++
	}
	return true
}

func (t *Tracker) refit(ts *typeState) error {
	var init *goodput.Params
	if ts.fitted {
		p := ts.params
		init = &p
	}
	fo := goodput.FitOptions{}
	if t.opts.Fit != nil {
		fo = *t.opts.Fit
	}
	fo.Init = init
	p, err := goodput.Fit(ts.obs, &fo)
	if err != nil {
		return &InputError{Type: ts.name, Field: "observations", Reason: err.Error(), Err: err}
	}
	ts.params, ts.fitted = p, true
	t.refits++
	t.version++
	return nil
}

// Source returns where the model for gpuType would come from (see Model).
func (t *Tracker) Source(gpuType string) Source {
	_, s := t.Model(gpuType)
	return s
}

// Reference returns the type a Projected model of gpuType is projected from.
func (t *Tracker) Reference(gpuType string) (string, bool) {
	ts := t.lookup(gpuType)
	if t.opts.Mode != Profiled || ts == nil || !ts.fitted || ts.multi > 0 || !t.known(gpuType) {
		return "", false
	}
	a := t.reference()
	if a == nil || a.name == gpuType {
		return "", false
	}
	return a.name, true
}

// reference picks the projection source: the fitted type with the most
// multi-GPU observations; ties go to the type with more observations, then
// to the smaller name. nil when no type has multi-GPU data.
func (t *Tracker) reference() *typeState {
	var best *typeState
	for i := range t.types {
		ts := &t.types[i]
		if !ts.fitted || ts.multi == 0 || !t.known(ts.name) {
			continue
		}
		if best == nil || ts.multi > best.multi || (ts.multi == best.multi && len(ts.obs) > len(best.obs)) {
			best = ts
		}
	}
	return best
}

// base returns the goodput.Model of a type with the given params.
func (t *Tracker) base(gpuType string, p goodput.Params) goodput.Model {
	m := goodput.Model{
		Params:     p,
		Grad:       t.grad,
		InitBatch:  t.spec.InitBatch,
		MaxBatch:   t.spec.MaxBatch,
		FixedBatch: t.spec.FixedBatch,
	}
	if t.spec.Hybrid() {
		m.Stages = t.spec.Stages[gpuType]
		m.MicroBatches = t.spec.MicroBatches
		m.Limits = goodput.Limits{MinLocalBatch: 1, MaxLocalBatch: 1}
	} else {
		m.Limits = t.spec.Limits[gpuType]
	}
	return m
}

// Model returns the job's goodput model on gpuType and its source:
//
//   - Measured or Seeded: fitted on the type's own observations;
//   - Projected (Profiled mode only): the type has only 1-GPU data and another
//     type A has multi-GPU data. A is the type with the most multi-GPU
//     observations (ties: more observations, then the smaller name). The
//     projection est_B(N) = x_B(1)/x_A(1) · x_A(N) is expressed as A's
//     parameters with every time term scaled by k = x_A(1)/x_B(1), with B's
//     memory limits (or pipeline stages). x(1) is each type's own 1-GPU
//     throughput at the largest per-GPU batch both types can hold (one
//     pipeline replica for hybrid-parallel jobs). The projection is dropped
//     as soon as B has multi-GPU data of its own.
//   - None: no data for the type yet; the returned Model then carries the
//     batch range and limits only;
//   - Excluded: the type is not in the spec (Limits, or Stages for a
//     hybrid-parallel job): the job cannot run on it. The returned Model
//     carries the batch range only.
func (t *Tracker) Model(gpuType string) (goodput.Model, Source) {
	if !t.known(gpuType) {
		return goodput.Model{InitBatch: t.spec.InitBatch, MaxBatch: t.spec.MaxBatch, FixedBatch: t.spec.FixedBatch}, Excluded
	}
	ts := t.lookup(gpuType)
	if ts == nil || !ts.fitted {
		return t.base(gpuType, goodput.Params{}), None
	}
	if ts.multi > 0 {
		return t.base(gpuType, ts.params), Measured
	}
	if t.opts.Mode == Profiled {
		if a := t.reference(); a != nil && a.name != gpuType {
			mb := t.base(gpuType, ts.params)
			ma := t.base(a.name, a.params)
			xa, xb := t.unitThroughput(ma, mb)
			if xa > 0 && xb > 0 && !math.IsInf(xa/xb, 0) {
				k := xa / xb
				p := a.params
				p.AlphaC *= k
				p.BetaC *= k
				p.AlphaN *= k
				p.BetaN *= k
				p.AlphaR *= k
				p.BetaR *= k
				if p.Validate() == nil {
					mb.Params = p
					return mb, Projected
				}
			}
		}
	}
	return t.base(gpuType, ts.params), Seeded
}

// unitThroughput returns x_A(1) and x_B(1), each from its own model.
func (t *Tracker) unitThroughput(a, b goodput.Model) (xa, xb float64) {
	if t.spec.Hybrid() {
		ca, oka := a.Best(1, 1)
		cb, okb := b.Best(1, 1)
		if !oka || !okb {
			return 0, 0
		}
		return ca.Throughput, cb.Throughput
	}
	ref := float64(min(a.Limits.MaxLocalBatch, b.Limits.MaxLocalBatch))
	return a.Params.Throughput(1, 1, ref, 0), b.Params.Throughput(1, 1, ref, 0)
}

// Observations returns a copy of the distinct observations recorded for a
// type (seed rows and measurements), in arrival order.
func (t *Tracker) Observations(gpuType string) []goodput.Observation {
	ts := t.lookup(gpuType)
	if ts == nil {
		return nil
	}
	return append([]goodput.Observation(nil), ts.obs...)
}

// Clone returns an independent deep copy. Hosts seed one prototype per
// application and Clone it for each submitted job, which saves the seed fits.
func (t *Tracker) Clone() *Tracker {
	c := *t
	c.spec = cloneSpec(t.spec)
	if t.opts.Fit != nil {
		f := *t.opts.Fit
		c.opts.Fit = &f
	}
	c.types = make([]typeState, len(t.types))
	for i, ts := range t.types {
		ts.obs = append([]goodput.Observation(nil), ts.obs...)
		c.types[i] = ts
	}
	return &c
}

func cloneSpec(s Spec) Spec {
	if s.Limits != nil {
		l := make(map[string]goodput.Limits, len(s.Limits))
		for k, v := range s.Limits {
			l[k] = v
		}
		s.Limits = l
	}
	if s.Stages != nil {
		st := make(map[string]int, len(s.Stages))
		for k, v := range s.Stages {
			st[k] = v
		}
		s.Stages = st
	}
	return s
}

// trackerJSON is the serialised form of a Tracker.
type trackerJSON struct {
	Spec    Spec                `json:"spec"`
	Mode    Mode                `json:"mode"`
	Fit     *goodput.FitOptions `json:"fit,omitempty"`
	Grad    goodput.GradStats   `json:"grad"`
	Refits  int                 `json:"refits"`
	Version uint64              `json:"version"`
	Types   []typeJSON          `json:"types"`
}

type typeJSON struct {
	Name         string                `json:"name"`
	Observations []goodput.Observation `json:"observations"`
	Params       *goodput.Params       `json:"params,omitempty"`
}

// MarshalJSON serialises the tracker's whole state (spec, options,
// observations and fitted parameters), so a host can keep it between runs.
func (t *Tracker) MarshalJSON() ([]byte, error) {
	j := trackerJSON{Spec: t.spec, Mode: t.opts.Mode, Fit: t.opts.Fit, Grad: t.grad,
		Refits: t.refits, Version: t.version}
	for _, ts := range t.types {
		tj := typeJSON{Name: ts.name, Observations: ts.obs}
		if ts.fitted {
			p := ts.params
			tj.Params = &p
		}
		j.Types = append(j.Types, tj)
	}
	return json.Marshal(j)
}

// UnmarshalJSON restores a tracker written by MarshalJSON, without refitting.
// The state is validated; unknown keys, keys given twice and keys in
// another case are rejected (a misspelt key would otherwise drop its data
// silently). Errors wrap ErrInvalidInput.
func (t *Tracker) UnmarshalJSON(data []byte) error {
	var j trackerJSON
	if err := strictjson.Decode(data, &j); err != nil {
		return &InputError{Field: "JSON", Reason: err.Error(), Err: err}
	}
	opts := &Options{Mode: j.Mode, Fit: j.Fit}
	nt, err := New(j.Spec, opts)
	if err != nil {
		return err
	}
	if j.Refits < 0 {
		return &InputError{Field: "JSON", Reason: "negative refits"}
	}
	if err := j.Grad.Validate(); err != nil {
		return &InputError{Field: "JSON.grad", Reason: err.Error(), Err: err}
	}
	nt.grad, nt.refits, nt.version = j.Grad, j.Refits, j.Version
	for i, tj := range j.Types {
		if !nt.known(tj.Name) {
			return &InputError{Type: tj.Name, Field: fmt.Sprintf("JSON.types[%d]", i), Reason: "type not in the spec"}
		}
		if nt.lookup(tj.Name) != nil {
			return &InputError{Type: tj.Name, Field: fmt.Sprintf("JSON.types[%d]", i), Reason: "duplicate type"}
		}
		ts := nt.state(tj.Name)
		for k, o := range tj.Observations {
			o, err := checkObs(tj.Name, fmt.Sprintf("JSON.types[%d].observations[%d]", i, k), o, nt.stages(tj.Name))
			if err != nil {
				return err
			}
			ts.add(o)
		}
		if tj.Params != nil {
			if err := tj.Params.Validate(); err != nil {
				return &InputError{Type: tj.Name, Field: fmt.Sprintf("JSON.types[%d].params", i), Reason: err.Error(), Err: err}
			}
			if len(ts.obs) == 0 {
				return &InputError{Type: tj.Name, Field: fmt.Sprintf("JSON.types[%d].params", i), Reason: "parameters without observations"}
			}
			ts.params, ts.fitted = *tj.Params, true
		}
	}
	*t = *nt
	return nil
}

// Static is a fixed set of models, one per GPU type, for hosts that know
// every job's throughput up front (oracle experiments, tests). Model returns
// Measured for the types present and None ("no model yet") otherwise, or
// Excluded for a hybrid-parallel job (one with a model with Stages), whose
// replica size on an absent type is unknown. It has the same Model method as
// Tracker, so it satisfies the scheduler's model interface. To forbid types,
// list the allowed ones in the scheduler's job (sia.Job.Types) or use a
// Tracker, whose Spec excludes the types it lacks.
type Static map[string]goodput.Model

// Model returns s[gpuType] and Measured, or None when the type is absent
// (Excluded when another type's model is hybrid-parallel).
func (s Static) Model(gpuType string) (goodput.Model, Source) {
	m, ok := s[gpuType]
	if !ok {
		for _, o := range s {
			if o.Hybrid() {
				return goodput.Model{}, Excluded
			}
		}
		return goodput.Model{}, None
	}
	return m, Measured
}

// SeedProfiles seeds the tracker from seed-profile rows (ReadSeed,
// ReadSeedFile: gpu_type, local_bsz, placement, step_time, sync_time), one
// Seed call per GPU type in sorted order. rename maps the file's type names
// to the cluster's (e.g. "t4" → "aws", "dgx" → "dgx-ext"); names absent
// from rename are used as they are. Rows of types the job's spec does not
// list are skipped. It returns the types seeded.
func (t *Tracker) SeedProfiles(rows []SeedRow, rename map[string]string) ([]string, error) {
	byType := map[string][]goodput.Observation{}
	for _, r := range rows {
		name := r.GPUType
		if to, ok := rename[name]; ok {
			name = to
		}
		if !t.known(name) {
			continue
		}
		byType[name] = append(byType[name], r.Observation())
	}
	types := slices.Sorted(maps.Keys(byType))
	for _, ty := range types {
		if err := t.Seed(ty, byType[ty]...); err != nil {
			return nil, err
		}
	}
	return types, nil
}
