package sim_test

// Probes (issue 10, "any node shape") of the importable simulator as a
// researcher runs it: every policy on clusters of odd node sizes (3, 5, 6,
// 7 GPUs per node, one-node types), on generated workloads. Each run ends
// without error, finishes every job that some type can run (a job no type
// can run is reported unfinished with the policy's wait reasons, never
// silently), and gives the same per-job result when run again.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/sia/sim"
	"github.com/sia-sched/sia/sia/sim/gavel"
	"github.com/sia-sched/sia/sia/sim/pollux"
	"github.com/sia-sched/sia/sia/sim/shockwave"
	"github.com/sia-sched/sia/sia/sim/siapolicy"
	"github.com/sia-sched/sia/sia/sim/themis"
)

// probe5All adds clusters, and the slow policies (Pollux, Themis), to
// TestProbe5OddClustersEveryPolicy (several minutes).
var probe5All = flag.Bool("probe5.all", false, "more clusters in TestProbe5OddClustersEveryPolicy")

func TestProbe5OddClustersEveryPolicy(t *testing.T) {
	truth, err := sim.LoadModel()
	require.NoError(t, err)
	specs := []string{"t4:1x7,rtx:1x3", "t4:3x6,a100:1x5,rtx:2x3"}
	if *probe5All {
		specs = append(specs, "a100:3x6", "rtx:5x3,a100:1x12", "t4:2x5,a100:1x3,rtx:1x7")
	}
	if testing.Short() {
		specs = specs[:1]
	}
	type policy struct {
		name  string
		rigid bool
		round float64
		make  func(c sim.Cluster) sim.Policy
		slow  bool // run only with -probe5.all (tens of seconds per run)
	}
	policies := []policy{
		{"sia", false, 60, func(c sim.Cluster) sim.Policy {
			p, err := siapolicy.New(c, truth, siapolicy.Options{})
			require.NoError(t, err)
			return p
		}, false},
		{"sia-rigid", true, 60, func(c sim.Cluster) sim.Policy {
			p, err := siapolicy.New(c, truth, siapolicy.Options{Rigid: true})
			require.NoError(t, err)
			return p
		}, false},
		{"gavel", true, 360, func(c sim.Cluster) sim.Policy { return gavel.New(c, truth, 360) }, false},
		{"themis", true, 360, func(c sim.Cluster) sim.Policy { return themis.New(c, truth, 360, nil) }, true},
		{"shockwave", true, 360, func(c sim.Cluster) sim.Policy { return shockwave.New(c, truth, nil) }, false},
		{"pollux", false, 60, func(c sim.Cluster) sim.Policy { return pollux.New(c, truth, pollux.Options{}) }, true},
	}
	runs := 0
	for _, spec := range specs {
		c, err := sim.ParseCluster(spec, 1)
		require.NoError(t, err)
		wl, err := sim.Generate(7, 1.5, 12)
		require.NoError(t, err)
		for _, p := range policies {
			if p.slow && !*probe5All {
				continue
			}
			t.Run(fmt.Sprintf("%s/%s", spec, p.name), func(t *testing.T) {
				s, err := sim.New(c, truth, &sim.Options{Round: p.round, Rigid: p.rigid})
				require.NoError(t, err)
				res, err := s.Run(context.Background(), wl, p.make(c))
				require.NoError(t, err)
				runs++
				again, err := s.Run(context.Background(), wl, p.make(c))
				require.NoError(t, err)
				assert.Equal(t, res.Jobs, again.Jobs, "not deterministic")
				require.Len(t, res.Jobs, len(wl.Jobs))
				for _, j := range res.Jobs {
					runnable := false
					for _, g := range c.Groups {
						if truth.Supports(j.App, g.Type) && (!p.rigid || j.Replicas <= g.Nodes*g.GPUsPerNode) {
							runnable = true
						}
					}
					if runnable {
						assert.True(t, j.Finished(), "job %s (%s, %d replicas) unfinished at %.0f s: waits %v", j.Name, j.App, j.Replicas, res.End, j.WaitReasons)
						assert.GreaterOrEqual(t, j.JCT, 0.0)
					} else {
						assert.False(t, j.Finished(), "job %s runs on no type but finished", j.Name)
					}
				}
			})
		}
	}
	t.Logf("%d runs", runs)
}

// TestProbe5PolicyWithoutTruth (issue 10, "never panics on caller data"):
// a policy built with a nil ground truth is an error naming the field
// Truth, from siapolicy.New or from the first Schedule of the policies
// whose constructors return no error; never a panic mid-run.
func TestProbe5PolicyWithoutTruth(t *testing.T) {
	truth, err := sim.LoadModel()
	require.NoError(t, err)
	c, err := sim.ParseCluster("t4:1x7", 1)
	require.NoError(t, err)
	wl, err := sim.Generate(1, 1, 10)
	require.NoError(t, err)
	_, err = siapolicy.New(c, nil, siapolicy.Options{})
	var ie *sim.InputError
	require.True(t, errors.As(err, &ie), "siapolicy.New with a nil truth: %v", err)
	assert.Equal(t, "Truth", ie.Field)
	for _, p := range []sim.Policy{gavel.New(c, nil, 60), themis.New(c, nil, 60, nil), shockwave.New(c, nil, nil), pollux.New(c, nil, pollux.Options{})} {
		t.Run(p.Name(), func(t *testing.T) {
			var err error
			require.NotPanics(t, func() {
				_, err = sim.Run(context.Background(), sim.Config{Cluster: c, Truth: truth, Rigid: p.Name() != "pollux"}, wl, p)
			})
			require.True(t, errors.As(err, &ie), "%v", err)
			assert.Equal(t, "Truth", ie.Field)
			assert.ErrorIs(t, err, sim.ErrInvalidInput)
		})
	}
}
