package sia_test

import (
	"context"
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/goodput"
	"github.com/sia-sched/sia/sia"
)

// funcModel predicts goodput with f (any value, including NaN and ±Inf).
type funcModel func(t string, nodes, replicas int) goodput.Choice

func (funcModel) Model(string) (goodput.Model, bootstrap.Source) {
	return goodput.Model{InitBatch: 1, MaxBatch: 1}, bootstrap.Measured
}

func (f funcModel) Evaluate(t string, nodes, replicas int) (goodput.Choice, bool) {
	return f(t, nodes, replicas), true
}

// TestProbeNumbers runs rounds whose models predict extreme or broken
// numbers and whose options sit at their documented limits (class 5 of
// issue 10): every round ends with an error naming the field or a plan that
// passes probeCheck, whose objective and bound are not NaN, and whose
// Status is Optimal only with a finite objective.
func TestProbeNumbers(t *testing.T) {
	val := func(v float64) funcModel {
		return func(_ string, _, r int) goodput.Choice {
			return goodput.Choice{Goodput: v * float64(r), Throughput: v * float64(r), Efficiency: 1, LocalBatch: 1, GlobalBatch: r}
		}
	}
	odd := map[string]funcModel{
		"NaN":      val(math.NaN()),
		"+Inf":     val(math.Inf(1)),
		"-1":       val(-1),
		"0":        val(0),
		"1e308":    val(1e308),
		"1e-308":   val(1e-308),
		"smallest": val(math.SmallestNonzeroFloat64),
		"NaN on 2 GPUs": func(_ string, _, r int) goodput.Choice {
			v := float64(r)
			if r == 2 {
				v = math.NaN()
			}
			return goodput.Choice{Goodput: v, Throughput: v, Efficiency: 1, LocalBatch: 1, GlobalBatch: r}
		},
		"falls off a cliff": func(_ string, _, r int) goodput.Choice {
			v := math.Pow(1e-100, float64(r-1))
			return goodput.Choice{Goodput: v, Throughput: v, Efficiency: 1, LocalBatch: 1, GlobalBatch: r}
		},
		"explodes": func(_ string, _, r int) goodput.Choice {
			v := math.Pow(1e100, float64(r-1))
			return goodput.Choice{Goodput: v, Throughput: v, Efficiency: 1, LocalBatch: 1, GlobalBatch: r}
		},
		"NaN throughput and efficiency": func(_ string, _, r int) goodput.Choice {
			return goodput.Choice{Goodput: float64(r), Throughput: math.NaN(), Efficiency: math.Inf(-1), LocalBatch: -5, AccumSteps: -1, GlobalBatch: math.MaxInt}
		},
		"batch overflow": func(_ string, _, r int) goodput.Choice {
			return goodput.Choice{Goodput: float64(r), Throughput: 1, Efficiency: 1, LocalBatch: math.MaxInt, AccumSteps: math.MaxInt, GlobalBatch: math.MaxInt}
		},
	}
	optsList := map[string]sia.Options{
		"defaults":        {},
		"p -10":           {P: -sia.MaxP},
		"p +10":           {P: sia.MaxP, Lambda: -1},
		"max lambda":      {Lambda: sia.MaxLambda},
		"max scale-up":    {ScaleUpFactor: sia.MaxScaleUpFactor},
		"huge per job":    {MaxGPUsPerJob: math.MaxInt},
		"huge restart":    {RestartCost: time.Duration(math.MaxInt64)},
		"one solver node": {SolverMaxNodes: 1},
		"parallel":        {Parallelism: 1000},
		"artifact":        {Artifact: sia.PublishedArtifact()},
		"p tiny":          {P: -1e-300},
	}
	nodes := []sia.Node{{ID: "a0", Type: "A", GPUs: 8}, {ID: "a1", Type: "A", GPUs: 6}, {ID: "b0", Type: "B", GPUs: 4}}
	sane := probeModel{speed: map[string]float64{"A": 1, "B": 1}, gain: 0.9, cross: 0.9}
	cases := 0
	for oname, o := range optsList {
		o.RoundTimeout = -1
		s, err := sia.New(&o)
		require.NoError(t, err, oname)
		for mname, m := range odd {
			cases++
			t.Run(oname+"/"+mname, func(t *testing.T) {
				snap := sia.Snapshot{Now: probeT0, Nodes: nodes, Jobs: []sia.Job{
					{ID: "odd", Models: m},
					{ID: "sane", Models: sane, Submitted: probeT0.Add(-time.Hour)},
					{ID: "odd-running", Kind: sia.StrongScaling, Models: m,
						State: sia.JobState{Current: sia.Allocation{Type: "A", Nodes: 1, GPUs: 2, Placement: probeGPUs("a0", 2)}, Restarts: 3, PeakReplicas: 2}},
					{ID: "rigid", Kind: sia.Rigid, GPUs: 5, Models: m},
				}}
				plan, err := s.Round(context.Background(), snap)
				if err != nil {
					var ie *sia.InputError
					require.ErrorAs(t, err, &ie)
					assert.NotEmpty(t, ie.Job, "%v", err)
					return
				}
				probeCheck(t, snap, s.Options(), plan)
				assert.False(t, math.IsNaN(plan.Objective) || math.IsNaN(plan.Bound), "objective %v bound %v", plan.Objective, plan.Bound)
				if plan.Status == sia.StatusOptimal {
					assert.False(t, math.IsInf(plan.Objective, 0), "optimal at %v", plan.Objective)
				}
				for _, d := range plan.Decisions {
					if d.Allocation.Running() && d.GlobalBatch != 0 {
						assert.Positive(t, d.LocalBatch, d.Job)
						assert.GreaterOrEqual(t, d.AccumSteps, 0, d.Job)
					}
				}
			})
		}
	}
	t.Logf("%d rounds", cases)
}
