//go:build clp

package gavel

import (
	"fmt"
	"strconv"

	"github.com/sia-sched/sia/ilp"
)

// CLP is an LPSolver that solves the time-share LP with COIN-OR CLP's dual
// simplex (through ilp.RelaxCLP: each job's options are its types at its
// GPU count, valued at its throughput there). It is sparse, so it stays fast
// where Simplex's dense tableau does not (thousands of active jobs). It is
// available with the build tag clp; optimal vertices may differ from
// Simplex's where the LP has several optima.
func CLP(T [][]float64, replicas, capacity []int) ([][]float64, error) {
	if len(T) == 0 {
		return [][]float64{}, nil
	}
	p := &ilp.Problem{Sense: ilp.Maximize, Capacity: map[string]int{}, Jobs: make([]ilp.Job, len(T))}
	types := make([]string, len(capacity))
	for c, k := range capacity {
		types[c] = "t" + strconv.Itoa(c)
		p.Capacity[types[c]] = k
	}
	for i, row := range T {
		job := ilp.Job{ID: "j" + strconv.Itoa(i), Pin: -1}
		for c, v := range row {
			job.Options = append(job.Options, ilp.Option{Type: types[c], GPUs: replicas[i], Value: v})
		}
		p.Jobs[i] = job
	}
	rel, err := ilp.RelaxCLP(p)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrLP, err)
	}
	X := make([][]float64, len(T))
	for i := range T {
		X[i] = make([]float64, len(capacity))
		copy(X[i], rel.X[i])
	}
	return X, nil
}
