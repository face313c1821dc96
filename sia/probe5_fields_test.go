package sia_test

// Probes (issue 10, class "inputs accepted then misread"): an error raised
// by a job's Models names the field as the host wrote it, Jobs[i].Models,
// whichever step of the round finds it (validation for a running job, the
// matrix for a queued one), and under every Parallelism.

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/goodput"
	"github.com/sia-sched/sia/sia"
)

// badModels answers one type with a broken model: Stages < 0, a Source out
// of range, or a measured model whose fields are invalid.
type badModels struct {
	how string
	on  string // the broken type ("" = every type)
}

func (b badModels) Model(t string) (goodput.Model, bootstrap.Source) {
	good := goodput.Model{InitBatch: 8, MaxBatch: 8, Params: goodput.Params{AlphaC: 0.1, BetaC: 0.01, Gamma: 1}, Limits: goodput.Limits{MinLocalBatch: 1, MaxLocalBatch: 8}}
	if b.on != "" && t != b.on {
		return good, bootstrap.Measured
	}
	switch b.how {
	case "stages":
		good.Stages = -2
		return good, bootstrap.Measured
	case "source":
		return good, bootstrap.Source(42)
	case "invalid":
		good.InitBatch = 0
		good.Params.AlphaC = math.NaN()
		return good, bootstrap.Measured
	}
	return good, bootstrap.Measured
}

func TestProbe5ModelsFieldPath(t *testing.T) {
	nodes := []sia.Node{{ID: "a0", Type: "a", GPUs: 4}, {ID: "b0", Type: "b", GPUs: 4}}
	fine := badModels{how: "fine"}
	cases := 0
	for _, how := range []string{"stages", "source", "invalid"} {
		for _, running := range []bool{false, true} {
			for _, at := range []int{0, 2} {
				for _, par := range []int{1, 3} {
					jobs := []sia.Job{{ID: "x", Models: fine}, {ID: "y", Models: fine}, {ID: "z", Models: fine}}
					jobs[at].Models = badModels{how: how, on: "a"}
					if running {
						jobs[at].State.Current = sia.Allocation{Type: "a", Nodes: 1, GPUs: 2, Placement: []sia.GPU{{Node: "a0", Index: 0}, {Node: "a0", Index: 1}}}
					}
					name := fmt.Sprintf("%s/running=%v/at=%d/par=%d", how, running, at, par)
					cases++
					t.Run(name, func(t *testing.T) {
						s, err := sia.New(&sia.Options{RoundTimeout: -1, Parallelism: par})
						require.NoError(t, err)
						_, err = s.Round(context.Background(), sia.Snapshot{Now: probeT0, Nodes: nodes, Jobs: jobs})
						require.Error(t, err)
						var ie *sia.InputError
						require.True(t, errors.As(err, &ie), "%v", err)
						assert.True(t, errors.Is(err, sia.ErrInvalidInput))
						assert.Equal(t, jobs[at].ID, ie.Job, "%v", err)
						assert.Equal(t, "a", ie.Type, "%v", err)
						assert.Equal(t, fmt.Sprintf("Jobs[%d].Models", at), ie.Field, "%v", err)
					})
				}
			}
		}
	}
	t.Logf("%d cases", cases)
}
