package sim

import (
	"context"
	"math"
	"slices"
	"sort"
	"time"

	"github.com/sia-sched/sia/goodput"
)

// Alloc is a policy's decision for one job: a GPU type and one node index
// (within that type, 0-based) per GPU. The zero Alloc means no GPUs.
type Alloc struct {
	Type  string
	Nodes []int
}

// GPUs returns the number of GPUs of the allocation.
func (a Alloc) GPUs() int { return len(a.Nodes) }

// Shape returns GPUs per node, grouping consecutive equal node indices (the
// artifact's run-length encoding).
func (a Alloc) Shape() []int {
	var out []int
	for i, n := range a.Nodes {
		if i == 0 || n != a.Nodes[i-1] {
			out = append(out, 1)
		} else {
			out[len(out)-1]++
		}
	}
	return out
}

func (a Alloc) equal(b Alloc) bool {
	if a.Type != b.Type || len(a.Nodes) != len(b.Nodes) {
		return false
	}
	for i := range a.Nodes {
		if a.Nodes[i] != b.Nodes[i] {
			return false
		}
	}
	return true
}

// Job is the simulator's state of one job. Policies read it through the
// exported methods and fields; only the engine changes it.
type Job struct {
	Spec JobSpec
	App  *App
	// Rigid jobs run at their requested batch size (batch tuning disabled).
	Rigid bool

	alloc       Alloc
	shape       []int // lookup shape (after respreading), empty when unallocated
	started     bool
	start       float64 // time of the first start, -1 before it
	restarts    int
	rescale     float64
	epoch       int
	progress    float64
	atomic      int
	accum       int
	completion  float64        // < 0 while running
	attained    float64        // GPU-seconds allocated
	gpuSeconds  float64        // GPU-seconds charged by the metric (per round record)
	waitReasons map[string]int // rounds waited, by the policy's reason (Explainer)
	contention  []int
	grad        goodput.GradStats
	hasGrad     bool
	learn       *learner
	engine      *engine
	lastBatch   int
}

// Name returns the job's name.
func (j *Job) Name() string { return j.Spec.Name }

// Alloc returns the job's current allocation (zero when it has no GPUs).
func (j *Job) Alloc() Alloc { return j.alloc }

// Restarts returns the number of restarts so far (the first start is not one).
func (j *Job) Restarts() int { return j.restarts }

// Started reports whether the job has ever run.
func (j *Job) Started() bool { return j.started }

// RestoreLeft returns the seconds of checkpoint-restore still to pay (> 0: a
// restart is in progress).
func (j *Job) RestoreLeft() float64 { return j.rescale }

// Attained returns the GPU-seconds allocated to the job so far.
func (j *Job) Attained() float64 { return j.attained }

// Epoch returns the current epoch and Progress the M0-equivalent iterations.
func (j *Job) Epoch() int { return j.epoch }

// Progress returns the job's training progress in M0-equivalent iterations.
func (j *Job) Progress() float64 { return j.progress }

// Completion returns the completion time, or -1 while the job is unfinished.
func (j *Job) Completion() float64 { return j.completion }

// Grad returns the gradient statistics the job last measured (false before
// its first run).
func (j *Job) Grad() (goodput.GradStats, bool) { return j.grad, j.hasGrad }

// Batch returns the job's current per-GPU batch and accumulation steps.
func (j *Job) Batch() (local, accum int) { return j.atomic, j.accum }

// Observations returns what the job measured on a GPU type (typ "" = pooled
// over types, first observation of each key wins).
func (j *Job) Observations(typ string) []goodput.Observation {
	if p := j.learn.get(typ); p != nil {
		return p.list()
	}
	return nil
}

// Params returns the throughput model fitted to the job's own observations
// on a type (typ "" = pooled), refitting when new observations arrived.
func (j *Job) Params(typ string) (goodput.Params, bool) {
	if p := j.learn.get(typ); p != nil {
		return p.fit()
	}
	return goodput.Params{}, false
}

// MaxProfiledReplicas returns the largest replica count the job has run with
// on a type (typ "" = any type).
func (j *Job) MaxProfiledReplicas(typ string) int {
	if p := j.learn.get(typ); p != nil {
		return p.maxRepl
	}
	return 0
}

// MeanContention returns the mean number of active jobs over the rounds in
// which this job was active.
func (j *Job) MeanContention() float64 {
	if len(j.contention) == 0 {
		return 0
	}
	s := 0
	for _, c := range j.contention {
		s += c
	}
	return float64(s) / float64(len(j.contention))
}

// State is what a policy sees each round.
type State struct {
	// Now is the simulated time in seconds.
	Now float64
	// Round is the round length in seconds.
	Round float64
	// Cluster is the simulated cluster.
	Cluster Cluster
	// Jobs are the active jobs (submitted, not finished), in submission order.
	Jobs []*Job
}

// Policy decides allocations each round. Jobs missing from the result get no
// GPUs. Implementations may keep state between calls.
type Policy interface {
	// Name identifies the policy in reports.
	Name() string
	// Schedule returns the allocation of every job that should run. Under
	// Run, ctx has no deadline (a simulated round is not bounded by wall
	// time, see Run); it is cancelled when the run is.
	Schedule(ctx context.Context, s *State) (map[string]Alloc, error)
}

// Explainer is an optional extension of Policy: a policy that can say why
// the jobs it gave no GPUs wait (package sia's Decision.Reason, for example)
// implements it, and Run records the reasons in JobResult.WaitReasons.
type Explainer interface {
	// WaitReasons returns, for the last Schedule call, a short reason per
	// job that got no GPUs (jobs missing from the map have none).
	WaitReasons() map[string]string
}

// BatchMode says which of the job's throughput models it uses to pick its
// batch size.
type BatchMode int

const (
	// PerTypeModel: the job fits one model per GPU type (heterogeneity-aware).
	PerTypeModel BatchMode = iota
	// PooledModel: one model pooled over types (Pollux).
	PooledModel
)

// Config configures one simulation.
type Config struct {
	Cluster Cluster
	Truth   Truth
	// Round is the round length in seconds (0 = DefaultRound, else
	// MinRound..MaxRound).
	Round float64
	// Rigid runs every job at its requested batch size (batch tuning off).
	Rigid bool
	// Batch selects the model a job uses to tune its batch size.
	Batch BatchMode
	// MaxTime stops the simulation after this many simulated seconds; jobs
	// still running are reported as unfinished (0 = DefaultMaxTime, 60 days).
	// Every job must be submitted before it, and MaxTime/Round must not
	// exceed MaxRounds.
	MaxTime float64
	// Observer, if set, is called after every round.
	Observer func(RoundStat)
	// LogAllocations records every round's allocations in
	// Result.Rounds[i].Allocations.
	LogAllocations bool
}

// RoundStat summarises one round for observers and plots: the per-round log
// of a Result.
type RoundStat struct {
	// Now is the simulated time of the round's decision, in seconds.
	Now float64
	// Active counts the submitted, unfinished jobs; Running those with GPUs.
	Active  int
	Running int
	// GPUsByTyp is the number of GPUs in use per type.
	GPUsByTyp map[string]int
	// PolicyDur is the wall time of the policy's Schedule call.
	PolicyDur time.Duration
	// Allocations are the policy's allocations of the round, by job (only
	// with Config.LogAllocations: they cost memory in proportion to jobs ×
	// rounds).
	Allocations map[string]Alloc
}

// JobResult is the outcome of one job. Times are simulated seconds from the
// start of the trace.
type JobResult struct {
	Name string
	App  string
	// Submit is the arrival time; Start the time the job first got GPUs (-1
	// if never); Completion the finish time (-1 if unfinished).
	Submit     float64
	Start      float64
	Completion float64
	// JCT is Completion − Submit in seconds, -1 if unfinished.
	JCT float64
	// Restarts counts checkpoint-restarts after the first start.
	Restarts int
	// GPUSeconds are the GPU-seconds allocated (every round the job held
	// GPUs, restore time included).
	GPUSeconds float64
	// Contention is the mean number of active jobs while it was active.
	Contention float64
	// Replicas and Batch are the workload's request.
	Replicas int
	Batch    int
	// WaitReasons counts, per reason, the rounds in which the job was
	// active but got no GPUs, as the policy explained them (see
	// Explainer); nil when the policy gives no reasons or the job never
	// waited.
	WaitReasons map[string]int
}

// GPUHours returns the job's allocated GPU-hours.
func (r JobResult) GPUHours() float64 { return r.GPUSeconds / 3600 }

// Finished reports whether the job completed.
func (r JobResult) Finished() bool { return r.Completion >= 0 }

// Result is the outcome of simulating one workload.
type Result struct {
	Workload string
	Policy   string
	Jobs     []JobResult
	// PolicyTimes are the wall times of every Schedule call.
	PolicyTimes []time.Duration
	// Rounds are per-round statistics.
	Rounds []RoundStat
	// End is the simulated time when the run stopped.
	End float64
}

// Bounds of Config (seconds). Every run has at most MaxRounds rounds, so a
// run of any valid input ends.
const (
	DefaultRound   = 60
	MinRound       = 1
	MaxRound       = 86400
	DefaultMaxTime = 60 * 86400
	MaxRounds      = 1 << 24
)

// stallRounds ends a simulation early when, after the last arrival, the
// policy has left every active job without GPUs for this many rounds in a row
// (for example rigid jobs larger than every GPU type): they are reported as
// unfinished.
const stallRounds = 100

type engine struct {
	cfg   Config
	jobs  []*Job
	now   float64
	round float64
}

// defaultTimes fills in the round length and the simulated-time limit
// (DefaultRound, DefaultMaxTime) and checks both against their bounds.
func (cfg *Config) defaultTimes() error {
	if cfg.Round == 0 {
		cfg.Round = DefaultRound
	}
	if !(cfg.Round >= MinRound && cfg.Round <= MaxRound) {
		return inputErr("", 0, "", "Round", "%v, want %v..%v seconds", cfg.Round, MinRound, MaxRound)
	}
	if cfg.MaxTime == 0 {
		cfg.MaxTime = DefaultMaxTime
	}
	if !(cfg.MaxTime > 0 && cfg.MaxTime <= MaxSubmit+DefaultMaxTime) {
		return inputErr("", 0, "", "MaxTime", "%v, want more than 0 and at most %d seconds", cfg.MaxTime, MaxSubmit+DefaultMaxTime)
	}
	return nil
}

// Run simulates one workload under a policy.
//
// Same input, same output: a simulated round has no wall-clock deadline.
// Policy.Schedule gets ctx without its deadline (cancelling ctx, or its
// deadline passing, still ends the run, with ctx's error and no result), so
// that what a policy decides never depends on how fast the machine ran the
// rounds before. Policies that bound their own work must do so by
// deterministic limits (package siapolicy runs package sia's rounds without
// a deadline).
func Run(ctx context.Context, cfg Config, wl *Workload, pol Policy) (*Result, error) {
	if ctx == nil {
		ctx = context.Background()
	}
	if err := cfg.check(wl, pol); err != nil {
		return nil, err
	}
	e, err := newEngine(cfg, wl, pol)
	if err != nil {
		return nil, err
	}
	res := &Result{Workload: wl.Name, Policy: pol.Name()}
	if err := e.simulate(ctx, pol, res); err != nil {
		return nil, err
	}
	res.End = e.now
	res.Jobs = e.results()
	return res, nil
}

// check validates a run's configuration, policy and workload, filling in
// the default times.
func (cfg *Config) check(wl *Workload, pol Policy) error {
	if cfg.Truth == nil {
		return inputErr("", 0, "", "Truth", "no ground truth")
	}
	if err := cfg.Cluster.Validate(); err != nil {
		return err
	}
	if pol == nil {
		return inputErr("", 0, "", "Policy", "nil policy")
	}
	if err := wl.Validate(); err != nil {
		return err
	}
	if err := cfg.defaultTimes(); err != nil {
		return err
	}
	if n := cfg.MaxTime / cfg.Round; n > MaxRounds {
		return inputErr("", 0, "", "MaxTime", "%v s in rounds of %v s is %.0f rounds, at most %d", cfg.MaxTime, cfg.Round, n, MaxRounds)
	}
	for _, spec := range wl.Jobs {
		if spec.Submit >= cfg.MaxTime {
			return inputErr(wl.File, spec.Line, spec.Name, "time", "submitted at %v s, not before the end of the simulation (MaxTime %v s)", spec.Submit, cfg.MaxTime)
		}
	}
	return nil
}

// newEngine returns the engine of a checked run with one Job per workload
// job, each checked against the ground truth and the cluster's types.
func newEngine(cfg Config, wl *Workload, pol Policy) (*engine, error) {
	e := &engine{cfg: cfg, round: cfg.Round}
	for _, spec := range wl.Jobs {
		app, ok := cfg.Truth.App(spec.App)
		if !ok {
			return nil, inputErr(wl.File, spec.Line, spec.Name, "application", "unknown application %q for ground truth %s", spec.App, cfg.Truth.Name())
		}
		supported := false
		for _, t := range cfg.Cluster.Types() {
			if cfg.Truth.Supports(spec.App, t) {
				supported = true
			}
		}
		if !supported {
			return nil, inputErr(wl.File, spec.Line, spec.Name, "application", "%s cannot run on any GPU type of cluster %s", spec.App, cfg.Cluster)
		}
		if app.Hybrid() {
			if err := checkHybridJob(wl, spec, app, cfg.Rigid, pol); err != nil {
				return nil, err
			}
		}
		j := &Job{Spec: spec, App: app, Rigid: !app.Hybrid() && (cfg.Rigid || spec.Category == CategoryRigid || spec.Category == CategoryStrongScaled),
			completion: -1, start: -1, learn: newLearner(), engine: e}
		e.jobs = append(e.jobs, j)
	}
	return e, nil
}

// simulate runs the rounds until every job has finished, MaxTime is
// reached or the run stalls (stallRounds), appending each round's
// statistics to res.
func (e *engine) simulate(ctx context.Context, pol Policy, res *Result) error {
	roundCtx := withoutDeadline(ctx)
	idle := 0 // consecutive rounds with active jobs, none running, no arrivals left
	lastSubmit := e.lastSubmit()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		if e.finished() || e.now >= e.cfg.MaxTime || idle >= stallRounds {
			return nil
		}
		e.advance()
		active := e.active()
		if len(active) == 0 {
			continue
		}
		rs, err := e.schedule(roundCtx, pol, active)
		if cerr := ctx.Err(); cerr != nil {
			// a round cut short by the cancellation never enters a result
			return cerr
		}
		if err != nil {
			return err
		}
		res.PolicyTimes = append(res.PolicyTimes, rs.PolicyDur)
		if rs.Running == 0 && e.now > lastSubmit {
			idle++
		} else {
			idle = 0
		}
		res.Rounds = append(res.Rounds, rs)
		if e.cfg.Observer != nil {
			e.cfg.Observer(rs)
		}
	}
}

// lastSubmit returns the last arrival time of the workload.
func (e *engine) lastSubmit() float64 {
	last := 0.0
	for _, j := range e.jobs {
		last = math.Max(last, j.Spec.Submit)
	}
	return last
}

// finished reports whether every job has completed.
func (e *engine) finished() bool {
	for _, j := range e.jobs {
		if j.completion < 0 {
			return false
		}
	}
	return true
}

// advance runs every job for one round under its allocation and moves the
// clock to the next round's decision.
func (e *engine) advance() {
	for _, j := range e.jobs {
		e.step(j, e.round)
	}
	e.now += e.round
}

// active returns the submitted, unfinished jobs in submission order.
func (e *engine) active() []*Job {
	var active []*Job
	for _, j := range e.jobs {
		if j.Spec.Submit <= e.now && j.completion < 0 {
			active = append(active, j)
		}
	}
	return active
}

// schedule runs one round's decision: it asks the policy for the active
// jobs' allocations (ctx has no deadline, see Run), checks and applies
// them, and returns the round's statistics.
func (e *engine) schedule(ctx context.Context, pol Policy, active []*Job) (RoundStat, error) {
	for _, j := range active {
		j.contention = append(j.contention, len(active))
	}
	st := &State{Now: e.now, Round: e.round, Cluster: e.cfg.Cluster, Jobs: active}
	t0 := time.Now()
	allocs, err := pol.Schedule(ctx, st)
	dur := time.Since(t0)
	if err != nil {
		return RoundStat{}, &PolicyError{Policy: pol.Name(), Now: e.now, Err: err}
	}
	if err := checkAllocs(e.cfg.Cluster, e.cfg.Truth, active, allocs); err != nil {
		return RoundStat{}, &PolicyError{Policy: pol.Name(), Now: e.now, Err: err}
	}
	rs := RoundStat{Now: e.now, Active: len(active), GPUsByTyp: map[string]int{}, PolicyDur: dur}
	if e.cfg.LogAllocations {
		rs.Allocations = make(map[string]Alloc, len(allocs))
		for name, a := range allocs {
			if len(a.Nodes) > 0 {
				rs.Allocations[name] = Alloc{Type: a.Type, Nodes: slices.Clone(a.Nodes)}
			}
		}
	}
	e.countWaits(pol, active, allocs)
	for _, j := range active {
		e.apply(j, allocs[j.Spec.Name])
		if g := j.alloc.GPUs(); g > 0 {
			j.gpuSeconds += float64(g) * e.round
			rs.Running++
			rs.GPUsByTyp[j.alloc.Type] += g
		}
	}
	return rs, nil
}

// countWaits records, for every active job the round gives no GPUs, the
// reason the policy gives (Explainer).
func (e *engine) countWaits(pol Policy, active []*Job, allocs map[string]Alloc) {
	ex, ok := pol.(Explainer)
	if !ok {
		return
	}
	why := ex.WaitReasons()
	for _, j := range active {
		if r := why[j.Spec.Name]; r != "" && len(allocs[j.Spec.Name].Nodes) == 0 {
			if j.waitReasons == nil {
				j.waitReasons = map[string]int{}
			}
			j.waitReasons[r]++
		}
	}
}

// results returns every job's outcome, in workload order.
func (e *engine) results() []JobResult {
	var out []JobResult
	for _, j := range e.jobs {
		jr := JobResult{Name: j.Spec.Name, App: j.Spec.App, Submit: j.Spec.Submit, Completion: j.completion, JCT: -1,
			Start: j.start, Restarts: j.restarts, GPUSeconds: j.gpuSeconds, Contention: j.MeanContention(), Replicas: j.Spec.Replicas, Batch: j.Spec.Batch,
			WaitReasons: j.waitReasons}
		if j.completion >= 0 {
			jr.JCT = j.completion - j.Spec.Submit
		}
		out = append(out, jr)
	}
	return out
}

// CheckAllocations validates a policy's allocations for a state as Run does
// after every Schedule call: every job named is active, every type is a type
// of the cluster the job's application supports, node indices are in range
// and no node holds more GPUs than it has. Errors are *InputError naming the
// job. Use it in a policy's unit tests (see the simtest package).
func CheckAllocations(s *State, truth Truth, allocs map[string]Alloc) error {
	if s == nil || truth == nil {
		return inputErr("", 0, "", "State", "nil state or ground truth")
	}
	return checkAllocs(s.Cluster, truth, s.Jobs, allocs)
}

// checkAllocs validates a policy's allocations: known active jobs, known types,
// node indices in range, no node over capacity, no job on an unsupported type.
func checkAllocs(cl Cluster, truth Truth, active []*Job, allocs map[string]Alloc) error {
	byName := map[string]*Job{}
	for _, j := range active {
		byName[j.Spec.Name] = j
	}
	used := map[string][]int{}
	names := make([]string, 0, len(allocs))
	for n := range allocs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		a := allocs[name]
		j, ok := byName[name]
		if !ok {
			return inputErr("", 0, name, "", "allocation for a job that is not active")
		}
		if len(a.Nodes) == 0 {
			continue
		}
		g, ok := cl.Group(a.Type)
		if !ok {
			return inputErr("", 0, name, "Type", "unknown GPU type %q", a.Type)
		}
		if !truth.Supports(j.Spec.App, a.Type) {
			return inputErr("", 0, name, "Type", "%s cannot run on %s", j.Spec.App, a.Type)
		}
		if j.App.Hybrid() {
			if err := checkWholeReplicas(name, j.App, a, g.GPUsPerNode); err != nil {
				return err
			}
		}
		u := used[a.Type]
		if u == nil {
			u = make([]int, g.Nodes)
			used[a.Type] = u
		}
		for _, n := range a.Nodes {
			if n < 0 || n >= g.Nodes {
				return inputErr("", 0, name, "Nodes", "node %d of type %s out of range 0..%d", n, a.Type, g.Nodes-1)
			}
			u[n]++
			if u[n] > g.GPUsPerNode {
				return inputErr("", 0, name, "Nodes", "node %d of type %s over capacity (%d GPUs)", n, a.Type, g.GPUsPerNode)
			}
		}
	}
	return nil
}

// lookupShape turns an allocation into the shape used for profile lookups:
// GPUs per node, respread over the profiled node limit of the type if the
// allocation spans more nodes.
func lookupShape(a Alloc) []int {
	shape := a.Shape()
	if m := physicalNodes(a.Type); m > 0 && len(shape) > m {
		r := sum(shape)
		per := (r + m - 1) / m
		shape = shape[:0:0]
		for r > 0 {
			k := min(per, r)
			shape = append(shape, k)
			r -= k
		}
	}
	return shape
}

// apply diffs a job's new allocation against its current one, charging
// restarts as the artifact does: a type change or a resume restarts; a shape
// change within a type restarts; other node ids with the same shape are free.
func (e *engine) apply(j *Job, a Alloc) {
	if len(a.Nodes) == 0 {
		a = Alloc{}
	}
	if a.equal(j.alloc) {
		return
	}
	if a.Type != j.alloc.Type {
		if len(a.Nodes) == 0 {
			j.alloc, j.shape, j.atomic = Alloc{}, nil, 0
			return
		}
		j.alloc = Alloc{Type: a.Type, Nodes: append([]int(nil), a.Nodes...)}
		j.shape = lookupShape(j.alloc)
		e.restart(j)
		return
	}
	shape := lookupShape(a)
	j.alloc = Alloc{Type: a.Type, Nodes: append([]int(nil), a.Nodes...)}
	if !slices.Equal(shape, j.shape) {
		j.shape = shape
		e.restart(j)
	}
}

func (e *engine) restart(j *Job) {
	e.updateBatch(j)
	j.rescale = j.App.RestartDelay
	if j.started {
		j.restarts++
	} else {
		j.start = e.now
	}
	j.started = true
}

// step advances a job by seconds under its current allocation
// (artifact job.py:Job.step).
func (e *engine) step(j *Job, seconds float64) {
	if j.completion >= 0 || len(j.shape) == 0 {
		return
	}
	t := e.now
	gpus := float64(sum(j.shape))
	delay := math.Min(j.rescale, seconds)
	t += delay
	j.attained += delay * gpus
	j.rescale -= delay
	seconds -= delay
	tr := e.cfg.Truth
	for seconds > 0 && j.completion < 0 {
		batch, iter, ok := e.stepCost(j)
		if !ok {
			return
		}
		rate := j.App.gain(j.grad, batch) / iter / j.App.Slowdown
		next := tr.Progress(j.Spec.App, j.epoch+1)
		if j.progress+rate*seconds < next {
			j.progress += rate * seconds
			t += seconds
			j.attained += seconds * gpus
			seconds = 0
		} else {
			delta := math.Round((next - j.progress) / rate)
			if delta > seconds {
				delta = seconds
			}
			j.epoch++
			if j.epoch >= j.App.MaxEpochs {
				j.completion = t + delta
			}
			j.progress = next
			t += delta
			j.attained += delta * gpus
			seconds -= delta
		}
		e.updateBatch(j)
	}
}

// updateBatch picks the job's per-GPU batch size and accumulation steps for
// its current placement (artifact job.py:Job.update_local_bsz).
func (e *engine) updateBatch(j *Job) {
	if len(j.shape) == 0 {
		return
	}
	if j.App.Hybrid() {
		// MicroBatches size-1 micro-batches per replica: never tuned.
		j.atomic, j.accum = 1, max(j.App.MicroBatches-1, 0)
		return
	}
	tr := e.cfg.Truth
	app, typ := j.Spec.App, j.alloc.Type
	n, r := len(j.shape), sum(j.shape)
	minLocal, _ := tr.LocalRange(app, typ)
	maxLocal := tr.PlacementMaxLocal(app, typ, j.shape)
	if maxLocal < 1 {
		maxLocal = 1
	}
	batch := 0
	if j.Rigid {
		batch = j.Spec.Batch
	} else {
		key := typ
		if e.cfg.Batch == PooledModel {
			key = ""
		}
		par, ok := j.Params(key)
		if ok && j.hasGrad {
			m := goodput.Model{Params: par, Grad: j.grad, InitBatch: j.App.InitBatch, MaxBatch: j.App.MaxBatch,
				Limits: goodput.Limits{MinLocalBatch: max(1, minLocal), MaxLocalBatch: max(maxLocal, max(1, minLocal))}}
			if c, ok := m.Best(n, r); ok {
				j.atomic, j.accum = c.LocalBatch, c.AccumSteps
			} else {
				ok = false
			}
			if ok {
				e.capBatch(j, r)
				return
			}
		}
		batch = max(j.App.InitBatch, minLocal*r)
	}
	local := (batch + r - 1) / r
	accum := (local+maxLocal-1)/maxLocal - 1
	if r == 1 && batch > j.App.InitBatch {
		accum = max(accum, 1)
	}
	j.accum = accum
	j.atomic = (local + accum) / (accum + 1)
	e.capBatch(j, r)
}

// capBatch applies the artifact's memory fix and the max-batch cap.
func (e *engine) capBatch(j *Job, r int) {
	if m, ok := e.cfg.Truth.ReplicaMaxLocal(j.Spec.App, j.alloc.Type, r); ok && j.atomic > m {
		j.atomic = m
	}
	count := r * (j.accum + 1)
	if c := j.App.MaxBatch / count; j.atomic > c {
		j.atomic = c
	}
	if j.atomic < 1 {
		j.atomic = 1
	}
}

// stepCost measures one optimizer step of a running job under its current
// placement: the global batch, the step's duration, and the observation the
// job records (its gradient statistics at the batch become j.grad). false
// when the ground truth has no step time for the placement.
func (e *engine) stepCost(j *Job) (batch, iter float64, ok bool) {
	tr := e.cfg.Truth
	n, r := len(j.shape), sum(j.shape)
	if j.App.Hybrid() {
		return e.pipelineCost(j, n, r)
	}
	local := j.atomic * (j.accum + 1)
	batch = float64(r * local)
	if batch <= 0 {
		return 0, 0, false
	}
	step, sync, ok := tr.StepTime(j.Spec.App, j.alloc.Type, j.shape, j.atomic)
	if !ok || !(step > 0) {
		return 0, 0, false
	}
	j.grad, j.hasGrad = tr.GradStats(j.Spec.App, batch, j.epoch), true
	if sync < step {
		// A step whose all-reduce is not shorter than the step itself
		// leaves no accumulation time to fit (goodput.Fit rejects it);
		// the job learns nothing from it.
		j.learn.add(j.alloc.Type, goodput.Observation{Nodes: n, Replicas: r, LocalBatch: j.atomic, StepTime: step, SyncTime: sync})
	}
	return batch, step + (step-sync)*float64(j.accum), true
}

// pipelineCost is stepCost for a hybrid-parallel job on n nodes and gpus
// GPUs: gpus/S pipeline replicas of MicroBatches size-1 micro-batches (see
// pipelineStep). The job records the step as the library observes a
// pipeline job: Replicas = pipelines, LocalBatch 1, StepTime = per-stage
// micro-batch time + all-reduce.
func (e *engine) pipelineCost(j *Job, n, gpus int) (batch, iter float64, ok bool) {
	s, ok := j.App.ReplicaGPUs(j.alloc.Type)
	if !ok || gpus%s != 0 {
		return 0, 0, false
	}
	r := gpus / s
	fwd, sync, ok := e.cfg.Truth.StepTime(j.Spec.App, j.alloc.Type, j.shape, 1)
	if !ok || !(fwd > 0) || !(sync >= 0) {
		return 0, 0, false
	}
	batch = float64(j.App.MicroBatches * r)
	j.grad, j.hasGrad = e.cfg.Truth.GradStats(j.Spec.App, batch, j.epoch), true
	j.learn.add(j.alloc.Type, goodput.Observation{Nodes: n, Replicas: r, LocalBatch: 1, StepTime: fwd + sync, SyncTime: sync})
	return batch, pipelineStep(s, j.App.MicroBatches, fwd, sync), true
}

// noDeadline is a context that keeps its parent's cancellation and values
// but reports no deadline: the context a policy's Schedule gets from Run.
type noDeadline struct{ context.Context }

// Deadline reports none.
func (noDeadline) Deadline() (time.Time, bool) { return time.Time{}, false }

// withoutDeadline returns ctx without its deadline (see Run).
func withoutDeadline(ctx context.Context) context.Context {
	if _, ok := ctx.Deadline(); !ok {
		return ctx
	}
	return noDeadline{ctx}
}
