package goodput

import (
	"math"
	"math/big"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestPipelineObservations: Fit and Loss accept an observation with fewer
// replicas than nodes exactly when it is a pipeline whose GPUs cover its
// nodes (Stages > 1, Nodes <= Replicas × Stages); otherwise the error names
// the field.
func TestPipelineObservations(t *testing.T) {
	obs := func(nodes, replicas, stages int) Observation {
		return Observation{Nodes: nodes, Replicas: replicas, LocalBatch: 1, StepTime: 0.5, SyncTime: 0.05, Stages: stages}
	}
	cases := []struct {
		name  string
		o     Observation
		field string // "" when accepted
	}{
		{"data parallel, 1 replica on 2 nodes", obs(2, 1, 0), "Replicas"},
		{"1-stage pipeline on 2 nodes", obs(2, 1, 1), "Replicas"},
		{"4-stage pipeline on 2 nodes", obs(2, 1, 4), ""},
		{"4-stage pipeline on 4 nodes (one GPU each)", obs(4, 1, 4), ""},
		{"4-stage pipeline on 5 nodes", obs(5, 1, 4), "Replicas"},
		{"2-stage pipeline on 3 nodes", obs(3, 1, 2), "Replicas"},
		{"two 3-stage pipelines on 5 nodes", obs(5, 2, 3), ""},
		{"two 3-stage pipelines on 7 nodes", obs(7, 2, 3), "Replicas"},
		{"pipelines at least as many as nodes", obs(3, 3, 8), ""},
		{"zero replicas of a pipeline", obs(1, 0, 4), "Replicas"},
		{"negative replicas of a pipeline", obs(2, -1, 4), "Replicas"},
		{"negative stages", obs(1, 1, -1), "Stages"},
		{"stages above MaxStages", obs(1, 1, MaxStages+1), "Stages"},
		{"nodes near MaxInt", obs(math.MaxInt, 2, MaxStages), "Replicas"},
		{"zero nodes of a pipeline", obs(0, 1, 4), "Nodes"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			in := []Observation{c.o, {Nodes: 1, Replicas: 1, LocalBatch: 1, StepTime: 0.4, SyncTime: 0.01}}
			_, fitErr := Fit(in, &FitOptions{Starts: 1})
			_, lossErr := Loss(in, Params{AlphaC: 0.1, BetaC: 0.01, AlphaN: 0.1, BetaN: 0.01, AlphaR: 0.1, BetaR: 0.01, Gamma: 1.5})
			if c.field == "" {
				assert.NoError(t, fitErr)
				assert.NoError(t, lossErr)
				return
			}
			for _, err := range []error{fitErr, lossErr} {
				require.Error(t, err)
				assert.ErrorIs(t, err, ErrInvalidInput)
				var oe *ObservationError
				require.ErrorAs(t, err, &oe)
				assert.Equal(t, 0, oe.Index)
				assert.Equal(t, c.field, oe.Field, "%v", err)
			}
		})
	}
}

// TestCoversNodesBruteForce checks CoversNodes against the exact product
// (big integers, no overflow).
func TestCoversNodesBruteForce(t *testing.T) {
	vals := []int{-1, 0, 1, 2, 3, 4, 5, 6, 7, 8, 12, 16, 1 << 31, math.MaxInt / 2, math.MaxInt - 1, math.MaxInt}
	for _, n := range vals {
		for _, r := range vals {
			for _, s := range vals {
				per := int64(max(s, 1))
				want := n >= 1 && r >= 1 && (r >= n ||
					new(big.Int).Mul(big.NewInt(int64(r)), big.NewInt(per)).Cmp(big.NewInt(int64(n))) >= 0)
				assert.Equal(t, want, CoversNodes(n, r, s), "nodes %d replicas %d stages %d", n, r, s)
			}
		}
	}
}

// TestBestPipelineAcrossNodes: Model.Best (and a Searcher) predict a
// pipeline that spans nodes with the multi-node network term, and refuse
// a shape whose GPUs cannot cover the nodes; a data-parallel model keeps
// Replicas >= Nodes.
func TestBestPipelineAcrossNodes(t *testing.T) {
	p := Params{AlphaC: 0.1, BetaC: 0.01, AlphaN: 0.3, BetaN: 0.02, AlphaR: 0.05, BetaR: 0.01, Gamma: 1.5}
	m := Model{Params: p, Grad: GradStats{Sqr: 1, Var: 1}, InitBatch: 4, MaxBatch: 64,
		Limits: Limits{MinLocalBatch: 1, MaxLocalBatch: 1}, Stages: 4, MicroBatches: 4}
	require.NoError(t, m.Validate())
	var s Searcher
	for _, c := range []struct {
		nodes, replicas int
		ok              bool
	}{{1, 1, true}, {2, 1, true}, {4, 1, true}, {5, 1, false}, {8, 2, true}, {9, 2, false}, {0, 1, false}, {2, 0, false}} {
		ch, ok := m.Best(c.nodes, c.replicas)
		ch2, ok2 := s.Best(&m, c.nodes, c.replicas)
		assert.Equal(t, c.ok, ok, "Best(%d, %d)", c.nodes, c.replicas)
		assert.Equal(t, ok, ok2, "Searcher.Best(%d, %d)", c.nodes, c.replicas)
		assert.Equal(t, ch, ch2)
		if !ok {
			continue
		}
		want := 3*float64(m.Stages-1+m.MicroBatches)*p.AccumTime(1) + p.NetTime(c.nodes, c.replicas)
		assert.InDelta(t, float64(m.MicroBatches*c.replicas)/want, ch.Throughput, 1e-12)
	}
	one, _ := m.Best(1, 1)
	two, _ := m.Best(2, 1)
	assert.Less(t, two.Throughput, one.Throughput, "a pipeline over 2 nodes pays the multi-node network term")

	dp := m
	dp.Stages, dp.MicroBatches = 0, 0
	dp.Limits = Limits{MinLocalBatch: 1, MaxLocalBatch: 32}
	_, ok := dp.Best(2, 1)
	assert.False(t, ok, "a data-parallel replica is one GPU")
	_, ok = s.Best(&dp, 2, 1)
	assert.False(t, ok)
}

// TestFitPipelineAcrossNodesKind: observations of one pipeline over
// several nodes are fitted in the kind Model.Best predicts them with
// (several nodes): from exact data the fitted network time of that shape
// matches the truth.
func TestFitPipelineAcrossNodesKind(t *testing.T) {
	truth := Params{AlphaC: 0.08, BetaC: 0.02, AlphaN: 0.25, BetaN: 0.01, AlphaR: 0.04, BetaR: 0.005, Gamma: 1.2}
	var obs []Observation
	for _, sh := range [][2]int{{1, 1}, {1, 2}, {1, 4}, {2, 1}, {3, 1}, {2, 2}, {4, 3}} {
		for _, b := range []int{1, 2, 4} {
			step := truth.SyncTime(sh[0], sh[1], float64(b))
			obs = append(obs, Observation{Nodes: sh[0], Replicas: sh[1], LocalBatch: b, StepTime: step,
				SyncTime: step - truth.AccumTime(float64(b)), Stages: 4})
		}
	}
	p, err := Fit(obs, nil)
	require.NoError(t, err)
	fitted, err := Loss(obs, p)
	require.NoError(t, err)
	atTruth, err := Loss(obs, truth)
	require.NoError(t, err)
	assert.LessOrEqual(t, fitted, atTruth*1.05, "the fit is about as good as the truth")
	for _, n := range []int{2, 3} {
		assert.InEpsilon(t, truth.SyncTime(n, 1, 1), p.SyncTime(n, 1, 1), 0.02, "one pipeline over %d nodes", n)
	}
}
