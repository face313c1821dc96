package simcli

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/sia"
	"github.com/sia-sched/sia/sia/sim"
	"github.com/sia-sched/sia/sia/sim/gavel"
	"github.com/sia-sched/sia/sia/sim/pollux"
	"github.com/sia-sched/sia/sia/sim/shockwave"
	"github.com/sia-sched/sia/sia/sim/siapolicy"
	"github.com/sia-sched/sia/sia/sim/themis"
)

// Env is what a policy's constructor gets for one simulated workload: the
// run's cluster and ground truth and the command line's settings.
type Env struct {
	Cluster sim.Cluster
	Truth   sim.Truth
	// Round is the round length in seconds (-round, or the policy's own
	// default).
	Round float64
	// Seed is -seed.
	Seed uint64
	// P and Lambda are -p and -lambda (0 = the library's defaults), and
	// Artifact the knobs of -variant (nil = paper).
	P, Lambda float64
	Artifact  *sia.ArtifactKnobs
}

// SiaOptions returns the scheduler options the flags ask for.
func (e Env) SiaOptions() *sia.Options {
	return &sia.Options{Artifact: e.Artifact, P: e.P, Lambda: e.Lambda}
}

// Policy registers a policy under a name of the -policy flag.
type Policy struct {
	// Name is the policy's name on the command line (no commas or spaces).
	Name string
	// Round is the policy's default round length when -round is not given
	// (0 = 60 s).
	Round time.Duration
	// Rigid runs jobs at their requested size (as sim.Config.Rigid), and
	// Batch selects the jobs' batch-size model.
	Rigid bool
	Batch sim.BatchMode
	// New returns a fresh policy for one workload (policies keep state
	// between rounds).
	New func(Env) (sim.Policy, error)
}

// Registry is a set of named policies, in registration order.
type Registry struct {
	specs []Policy
}

// ErrRegistry is wrapped by the errors of Register.
var ErrRegistry = errors.New("simcli: bad registration")

// NewRegistry returns an empty registry.
func NewRegistry() *Registry { return &Registry{} }

// Builtin returns a registry of the built-in policies: sia, sia-rigid,
// pollux, gavel, shockwave, themis, sia-oracle, sia-noprof and
// sia-artifact (the published simulator's Sia; names "sia+mod..." and "sia-artifact+mod..." select one
// difference at a time, see variants.go).
func Builtin() *Registry {
	r := NewRegistry()
	sia := func(opt siapolicy.Options) func(Env) (sim.Policy, error) {
		return func(env Env) (sim.Policy, error) {
			o := opt
			o.Sia = env.SiaOptions()
			return siapolicy.New(env.Cluster, env.Truth, o)
		}
	}
	for _, p := range append([]Policy{
		{Name: "sia", New: sia(siapolicy.Options{})},
		{Name: "sia-rigid", Rigid: true, New: sia(siapolicy.Options{Rigid: true})},
		{Name: "pollux", Batch: sim.PooledModel, New: func(env Env) (sim.Policy, error) {
			return pollux.New(env.Cluster, env.Truth, pollux.Options{Seed: env.Seed}), nil
		}},
		{Name: "gavel", Round: 360 * time.Second, Rigid: true, New: func(env Env) (sim.Policy, error) {
			return gavel.New(env.Cluster, env.Truth, env.Round), nil
		}},
		{Name: "shockwave", Round: shockwave.DefaultRound * time.Second, Rigid: true, New: func(env Env) (sim.Policy, error) {
			return shockwave.New(env.Cluster, env.Truth, nil), nil
		}},
		{Name: "themis", Round: themis.DefaultRound * time.Second, Rigid: true, New: func(env Env) (sim.Policy, error) {
			return themis.New(env.Cluster, env.Truth, env.Round, nil), nil
		}},
		{Name: "sia-oracle", New: sia(siapolicy.Options{Mode: bootstrap.Oracle})},
		{Name: "sia-noprof", New: sia(siapolicy.Options{Mode: bootstrap.NoProfiling})},
		siaArtifactPolicy(),
	}, taggedPolicies()...) {
		if err := r.Register(p); err != nil {
			panic(err) // the built-in names are distinct
		}
	}
	return r
}

// Default is the registry of Main and Run: the built-in policies and those
// added with Register.
var Default = Builtin()

// Register adds a policy to the default registry; it panics on an invalid
// or duplicate name (as database/sql.Register), so call it from main or init.
func Register(p Policy) {
	if err := Default.Register(p); err != nil {
		panic(err)
	}
}

// Register adds a policy. Errors wrap ErrRegistry: an empty name, a name
// with a comma or space, a name already registered, no constructor.
func (r *Registry) Register(p Policy) error {
	switch {
	case p.Name == "" || strings.ContainsAny(p.Name, ", \t\n"):
		return fmt.Errorf("%w: policy name %q (want a non-empty name without commas or spaces)", ErrRegistry, p.Name)
	case p.New == nil:
		return fmt.Errorf("%w: policy %q has no constructor", ErrRegistry, p.Name)
	case p.Round != 0 && (p.Round < time.Duration(sim.MinRound)*time.Second || p.Round > time.Duration(sim.MaxRound)*time.Second):
		return fmt.Errorf("%w: policy %q: round %v out of range", ErrRegistry, p.Name, p.Round)
	}
	if _, dup := r.find(p.Name); dup {
		return fmt.Errorf("%w: policy %q registered twice", ErrRegistry, p.Name)
	}
	r.specs = append(r.specs, p)
	return nil
}

// Names returns the registered policy names in registration order.
func (r *Registry) Names() []string {
	out := make([]string, len(r.specs))
	for i, p := range r.specs {
		out[i] = p.Name
	}
	return out
}

// find returns the policy registered under name.
func (r *Registry) find(name string) (Policy, bool) {
	for _, p := range r.specs {
		if p.Name == name {
			return p, true
		}
	}
	return Policy{}, false
}

// lookup returns the registered policy, or a Sia variant with modifiers.
func (r *Registry) lookup(name string) (Policy, bool) {
	if p, ok := r.find(name); ok {
		return p, true
	}
	if p, ok, err := siaVariantPolicy(name); ok && err == nil {
		return p, true
	}
	return Policy{}, false
}
