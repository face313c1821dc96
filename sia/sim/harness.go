package sim

import (
	"math"
	"slices"
	"sort"

	"github.com/sia-sched/sia/goodput"
)

// JobState is the simulated state of a job as NewJob builds it, for unit
// tests of a policy that need no trace: what the engine would have
// accumulated by the time of the round.
type JobState struct {
	// Rigid runs the job at its requested batch size (as Config.Rigid or a
	// rigid category would).
	Rigid bool
	// Alloc is the job's current allocation (zero: no GPUs).
	Alloc Alloc
	// Started says the job has run before (implied by a non-zero Alloc).
	Started bool
	// Restarts, RestoreLeft (seconds of checkpoint-restore still to pay),
	// Attained (GPU-seconds), Epoch and Progress are as the Job methods of
	// the same names report them.
	Restarts    int
	RestoreLeft float64
	Attained    float64
	Epoch       int
	Progress    float64
	// Grad, if not nil, is the job's last measured gradient statistics.
	Grad *goodput.GradStats
	// Observations are the job's own measurements per GPU type, in order.
	Observations map[string][]goodput.Observation
	// Contention is the mean number of active jobs while it was active.
	Contention float64
}

// NewJob builds a simulator job in a given state, for policy unit tests
// (Run builds its own jobs; see also the simtest package). The spec must
// have a name, and app the application's constants (for example from
// Truth.App). Errors are *InputError naming the job and field.
func NewJob(spec JobSpec, app *App, st JobState) (*Job, error) {
	bad := func(field, format string, args ...any) (*Job, error) {
		return nil, inputErr("", 0, spec.Name, field, format, args...)
	}
	if err := (&Workload{Jobs: []JobSpec{spec}}).Validate(); err != nil {
		return nil, err
	}
	switch {
	case app == nil:
		return bad("App", "nil application constants")
	case st.Restarts < 0:
		return bad("Restarts", "%d, want >= 0", st.Restarts)
	case st.Epoch < 0:
		return bad("Epoch", "%d, want >= 0", st.Epoch)
	case !finiteNonNegative(st.RestoreLeft):
		return bad("RestoreLeft", "%v, want a finite number >= 0", st.RestoreLeft)
	case !finiteNonNegative(st.Attained):
		return bad("Attained", "%v, want a finite number >= 0", st.Attained)
	case !finiteNonNegative(st.Progress):
		return bad("Progress", "%v, want a finite number >= 0", st.Progress)
	case !finiteNonNegative(st.Contention):
		return bad("Contention", "%v, want a finite number >= 0", st.Contention)
	case len(st.Alloc.Nodes) > 0 && st.Alloc.Type == "":
		return bad("Alloc.Type", "GPUs without a type")
	}
	for _, n := range st.Alloc.Nodes {
		if n < 0 {
			return bad("Alloc.Nodes", "node %d, want >= 0", n)
		}
	}
	j := &Job{Spec: spec, App: app, Rigid: !app.Hybrid() && (st.Rigid || spec.Category == CategoryRigid || spec.Category == CategoryStrongScaled),
		completion: -1, start: -1, learn: newLearner(), restarts: st.Restarts, rescale: st.RestoreLeft,
		attained: st.Attained, epoch: st.Epoch, progress: st.Progress}
	if len(st.Alloc.Nodes) > 0 {
		j.alloc = Alloc{Type: st.Alloc.Type, Nodes: slices.Clone(st.Alloc.Nodes)}
		j.shape = lookupShape(j.alloc)
		j.started = true
	}
	j.started = j.started || st.Started
	if st.Grad != nil {
		j.grad, j.hasGrad = *st.Grad, true
	}
	types := make([]string, 0, len(st.Observations))
	for t := range st.Observations {
		types = append(types, t)
	}
	sort.Strings(types)
	for _, t := range types {
		for _, o := range st.Observations[t] {
			j.learn.add(t, o)
		}
	}
	if st.Contention > 0 {
		j.contention = []int{int(math.Round(st.Contention))}
	}
	return j, nil
}

func finiteNonNegative(x float64) bool { return x >= 0 && !math.IsInf(x, 0) }

// NewState builds the state a policy sees in a round, for policy unit
// tests: jobs are the active jobs in submission order (see NewJob). Errors
// are *InputError: an invalid cluster, a round length out of range, a
// duplicate job name or a job whose allocation does not fit the cluster.
func NewState(now, round float64, c Cluster, truth Truth, jobs ...*Job) (*State, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	if !(now >= 0 && now <= MaxSubmit+DefaultMaxTime) {
		return nil, inputErr("", 0, "", "Now", "%v, want 0..%d seconds", now, MaxSubmit+DefaultMaxTime)
	}
	if !(round >= MinRound && round <= MaxRound) {
		return nil, inputErr("", 0, "", "Round", "%v, want %v..%v seconds", round, MinRound, MaxRound)
	}
	s := &State{Now: now, Round: round, Cluster: c, Jobs: append([]*Job(nil), jobs...)}
	cur := make(map[string]Alloc, len(jobs))
	for _, j := range jobs {
		if j == nil {
			return nil, inputErr("", 0, "", "Jobs", "nil job")
		}
		if _, dup := cur[j.Name()]; dup {
			return nil, inputErr("", 0, j.Name(), "Jobs", "duplicate job name")
		}
		cur[j.Name()] = j.alloc
	}
	if truth != nil {
		if err := CheckAllocations(s, truth, cur); err != nil {
			return nil, err
		}
	}
	return s, nil
}
