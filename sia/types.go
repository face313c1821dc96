package sia

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/goodput"
)

// Sentinel errors. Every error this package returns wraps one of them (use
// errors.Is). Bad caller data is an *InputError, pinned jobs that cannot fit
// together an *InfeasibleError (use errors.As); both name the job, node, GPU
// type and field concerned.
//
// Errors of every package of this module share one shape: Field is the path
// of the offending field, Reason says what is wrong, the item (Job, Node,
// Type, Index, …) names the offending entity where there is one, and
// Unwrap() []error returns the package's sentinel and, when there is one,
// the underlying error (Err) of another package.
var (
	// ErrInvalidInput marks a snapshot or options that break a documented
	// rule.
	ErrInvalidInput = errors.New("sia: invalid input")
	// ErrInfeasible marks a snapshot whose pinned jobs (checkpoint-restore in
	// progress, non-preemptible) do not fit the cluster together.
	ErrInfeasible = errors.New("sia: infeasible")
)

// InputError describes one offending item of a Snapshot or Options. It wraps
// ErrInvalidInput and, when there is one, the underlying error of another
// package.
type InputError struct {
	// Job, Node and Type name the job, node and GPU type concerned ("" when
	// not applicable).
	Job, Node, Type string
	// Field is the path of the offending field, e.g. "Jobs[3].MinGPUs" or
	// "Options.P".
	Field string
	// Reason says what is wrong.
	Reason string
	// Err is the underlying error of another package, or nil.
	Err error
}

// Error implements error.
func (e *InputError) Error() string {
	return "sia: invalid input: " + describe(e.Job, e.Node, e.Type, e.Field, e.Reason)
}

// Unwrap returns ErrInvalidInput and Err (when not nil).
func (e *InputError) Unwrap() []error { return unwrap(ErrInvalidInput, e.Err) }

// InfeasibleError reports pinned jobs (checkpoint-restore in progress,
// non-preemptible) that do not fit the cluster together. It wraps
// ErrInfeasible and, when there is one, the solver's error.
type InfeasibleError struct {
	// Job and Type name the first pinned job that does not fit and its GPU
	// type ("" when the solver found the conflict).
	Job, Type string
	// Field is the path of the offending field, e.g.
	// "Jobs[3].State.Current.GPUs".
	Field string
	// Reason says what does not fit.
	Reason string
	// Err is the underlying error (the solver's), or nil.
	Err error
}

// Error implements error.
func (e *InfeasibleError) Error() string {
	return "sia: infeasible: " + describe(e.Job, "", e.Type, e.Field, e.Reason)
}

// Unwrap returns ErrInfeasible and Err (when not nil).
func (e *InfeasibleError) Unwrap() []error { return unwrap(ErrInfeasible, e.Err) }

func describe(job, node, typ, field, reason string) string {
	msg := ""
	if job != "" {
		msg += fmt.Sprintf("job %q: ", job)
	}
	if node != "" {
		msg += fmt.Sprintf("node %q: ", node)
	}
	if typ != "" {
		msg += fmt.Sprintf("type %q: ", typ)
	}
	if field != "" {
		msg += field + ": "
	}
	return msg + reason
}

func unwrap(sentinel, err error) []error {
	if err == nil {
		return []error{sentinel}
	}
	return []error{sentinel, err}
}

// Node is a machine with GPUs GPUs of one type. Type is an opaque,
// host-chosen name ("a100", "rtx", "t4"). Nodes may have any GPU count, and
// the nodes of one type may differ in size (see "Node shapes" in the package
// documentation).
type Node struct {
	ID   string
	Type string
	GPUs int
}

// Types returns the GPU types of the snapshot's nodes in order of first
// appearance (the column order of the goodput matrix).
func (s *Snapshot) Types() []string {
	var out []string
	seen := map[string]bool{}
	for _, n := range s.Nodes {
		if !seen[n.Type] {
			seen[n.Type] = true
			out = append(out, n.Type)
		}
	}
	return out
}

// Kind says which of a job's dimensions the scheduler may choose.
type Kind int

const (
	// Adaptive jobs let Sia choose GPU type, GPU count and batch size.
	Adaptive Kind = iota
	// StrongScaling jobs have a fixed global batch size (their models'
	// goodput.Model.FixedBatch, or MaxBatch for a model without one); Sia
	// chooses type and count. No scale-up cap applies.
	StrongScaling
	// Rigid jobs have a fixed batch size (as StrongScaling) and a fixed GPU
	// count (Job.GPUs);
	// Sia chooses only the type. The count need not be a configuration
	// shape (12 GPUs on 8-GPU nodes is placed as 8 + 4).
	Rigid
)

// String returns "adaptive", "strong-scaling" or "rigid".
func (k Kind) String() string {
	switch k {
	case Adaptive:
		return "adaptive"
	case StrongScaling:
		return "strong-scaling"
	case Rigid:
		return "rigid"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Models supplies a job's goodput model per GPU type. *bootstrap.Tracker
// (the host-owned, online-refined models) and bootstrap.Static (fixed models)
// implement it. The scheduler only calls Model, possibly from several
// goroutines when the host runs rounds concurrently on distinct snapshots
// sharing a Models value; implementations must not mutate state in Model.
//
// A model with Source bootstrap.None ("no model yet") makes the scheduler
// offer only the type's smallest configuration (one replica), valued like
// the job's smallest configuration, as the published artifact does for types
// without a model. Source bootstrap.Excluded says the job cannot run on the
// type: the scheduler never offers it (nor does it for types outside
// Job.Types).
//
// The model's Stages (goodput.Model.Stages) is the job's replica size on the
// type, whatever the Source: a hybrid-parallel job's pipeline stages, whose
// GPUs it takes in whole replicas (a *bootstrap.Tracker takes them from
// bootstrap.Spec.Stages and excludes the types it does not list); 0 for a
// data-parallel job (one GPU per replica).
type Models interface {
	Model(gpuType string) (goodput.Model, bootstrap.Source)
}

// Evaluator is an optional extension of Models for hosts that predict goodput
// per configuration directly (tables in tests, external predictors). When a
// job's Models also implements Evaluator, the matrix uses Evaluate instead of
// goodput.Model.Best for the types whose Source is not None. ok = false marks
// the configuration invalid.
type Evaluator interface {
	Evaluate(gpuType string, nodes, replicas int) (c goodput.Choice, ok bool)
}

// GPU identifies one GPU: its node and its index on the node (0-based).
type GPU struct {
	Node  string
	Index int
}

// Allocation is a job's configuration and, when placed, its GPUs.
type Allocation struct {
	// Type is the GPU type; "" (with GPUs = 0) means no allocation.
	Type string
	// Nodes and GPUs give the shape: GPUs GPUs over Nodes nodes.
	Nodes, GPUs int
	// Placement lists the concrete GPUs (len = GPUs) when known.
	Placement []GPU
}

// Running reports whether the allocation holds GPUs.
func (a Allocation) Running() bool { return a.GPUs > 0 }

// JobState is what the host knows about a job between rounds.
type JobState struct {
	// Current is the job's allocation from the previous round (zero when it
	// is queued or suspended). Its shape must fit the cluster (Nodes nodes
	// of its type holding GPUs GPUs). Round needs Placement: the GPUs the job
	// actually holds, which placement keeps and no other job is given; a
	// running job without it is an error. It must refer to the snapshot's nodes: a host that lost a node, or
	// does not know where a job runs, clears Current of the jobs concerned
	// (they are then treated as queued).
	Current Allocation
	// Restarts counts the checkpoint-restarts so far (N in the restart
	// factor; the first start does not count). Advance counts them.
	Restarts int
	// RestartCost is S, the seconds of progress one restart wastes; 0 means
	// Options.RestartCost (or the artifact's per-model table, see
	// Artifact.ModelPenalties).
	RestartCost time.Duration
	// Restoring marks a job in the middle of a checkpoint-restore, as the
	// host knows it: it is pinned to Current this round. Hosts that call
	// Advance leave it false: RestoreUntil then says when a restore ends.
	// A pinned job (Restoring, or RestoreUntil after Snapshot.Now, or
	// NonPreemptible) is pinned to Current this round. A pinned job's Current must lie within
	// its bounds (MinGPUs, MaxGPUs, replica size, Types) and the pinned jobs
	// must fit their types' capacity less Reserved; a pinned job keeps
	// Current even when it is larger than Options.MaxGPUsPerJob.
	Restoring bool
	// RestoreUntil is when the job's current checkpoint-restore ends (zero:
	// none); while Snapshot.Now is before it the job is pinned as if
	// Restoring. Advance sets it from Decision.RestoreUntil.
	RestoreUntil time.Time
	// PeakReplicas is the largest number of replicas (GPUs for
	// data-parallel jobs) the job has run with on any type; 0 if it never
	// ran. It drives the scale-up cap (Options.ScaleUpFactor).
	// Advance keeps it.
	PeakReplicas int
}

// Job is one active job of a snapshot.
type Job struct {
	// ID names the job; unique within a snapshot.
	ID string
	// Application optionally names the model ("cifar10", "bert", …). It is
	// used only by the artifact's per-model restart penalties.
	Application string
	// Kind says what the scheduler may choose.
	Kind Kind
	// Submitted is when the job arrived; the job's age Now − Submitted enters
	// the restart factor. It must not be after Snapshot.Now; the zero time
	// means "long ago" (restart factor ≈ 1 − N·S/age → 1).
	Submitted time.Time
	// MinGPUs and MaxGPUs bound the GPU count (0 = 1 and no bound beyond
	// Options.MaxGPUsPerJob). Ignored for Rigid jobs.
	MinGPUs, MaxGPUs int
	// GPUs is the fixed GPU count of a Rigid job. A host may change it
	// (or a job's Kind and bounds) between rounds: a running job whose
	// Current no longer lies within its bounds is resized, migrated or
	// preempted, unless it is pinned, which is an error.
	GPUs int
	// Types, if not nil, lists the GPU types the job may use (an allow-list,
	// e.g. the types its container image supports); no other type is ever
	// offered, and a running job on another type is migrated or preempted.
	// Names of types the cluster does not have are allowed. nil means every
	// type its Models do not exclude (bootstrap.Excluded). An empty non-nil
	// list is an error.
	Types []string
	// NonPreemptible jobs keep their allocation once running (they are
	// pinned to State.Current, see JobState.Restoring).
	NonPreemptible bool
	// Models gives the job's goodput models per type.
	Models Models
	// State is the job's current allocation and history.
	State JobState
}

// replicaSize returns the GPUs of one replica of job j on type t, where
// stages are those of the job's model on t (goodput.Model.Stages, from
// bootstrap.Spec.Stages): for a hybrid-parallel job its stages, 1 for a
// data-parallel job. Negative stages are an error naming the job and type.
func replicaSize(j *Job, t string, stages int) (int, error) {
	if stages < 0 {
		return 0, &InputError{Job: j.ID, Type: t, Field: "Models",
			Reason: fmt.Sprintf("%d pipeline stages (goodput.Model.Stages), want >= 0 (0: data parallel)", stages)}
	}
	return max(stages, 1), nil
}

// atJob returns err with the Field of an *InputError raised about job i's
// Models ("Models") written as the host wrote it, "Jobs[i].Models".
func atJob(err error, i int) error {
	if err == nil {
		return nil // before ie, which errors.As moves to the heap: no allocation per row and type
	}
	var ie *InputError
	if !errors.As(err, &ie) || !strings.HasPrefix(ie.Field, "Models") {
		return err
	}
	c := *ie
	c.Field = "Jobs[" + strconv.Itoa(i) + "]." + ie.Field
	return &c
}

// Snapshot is the input of one scheduling round. Time is an input: the
// library keeps no clock.
type Snapshot struct {
	// Now is the time of the round; it must not be the zero time.
	Now time.Time
	// Nodes are the inventory the scheduler may allocate; the order of first
	// appearance of the types fixes the column order of the goodput matrix.
	Nodes []Node
	// Jobs are the active jobs (queued and running).
	Jobs []Job
	// Reserved withholds a number of GPUs per type from this round (may be
	// nil). It lowers the type's capacity for the allocation; it does not
	// name GPUs, so placement may use any GPU of the type. An entry is at
	// least 0; one above its type's capacity this round (some of its nodes
	// down or drained) withholds the whole type, and one for a type no node
	// of the snapshot has (its nodes all down or drained this round, or a
	// name the cluster never had) has no effect: the type's capacity is 0.
	// Type names are matched exactly.
	Reserved map[string]int
	// Quotas are extra capacity rows (per-queue quotas per type).
	Quotas []Quota
}

// Quota limits the GPUs that a group of jobs (a queue, a tenant) may hold
// together: of type Type, or of all types when Type is "".
type Quota struct {
	// Name identifies the quota in messages.
	Name string
	// Jobs lists the IDs of the jobs the quota covers.
	Jobs []string
	// Type is the GPU type counted, or "" for all types. A quota of a type
	// no node of the snapshot has (its nodes all down or drained this
	// round, or a name the cluster never had) has no effect: it counts
	// nothing. Its other rules (Jobs, Limit) still hold. Type names are
	// matched exactly.
	Type string
	// Limit is the most GPUs the jobs may hold together (≥ 0).
	Limit int
}
