//go:build clp

package ilp

import (
	"fmt"
	"maps"
	"math"
	"slices"

	"github.com/lanl/clp"
)

// Relaxation is the LP relaxation of a Problem solved by COIN-OR CLP.
type Relaxation struct {
	// Bound is the LP optimum: no assignment has a better objective (an
	// upper bound when maximising, a lower bound when minimising).
	Bound float64
	// X[i][k] is the LP value of job i taking option k; jobs pinned to an
	// option have 1 there.
	X [][]float64
	// Prices holds the duals of the capacity rows by type (per GPU, in
	// objective units, non-negative).
	Prices map[string]float64
}

// RelaxCLP solves the LP relaxation of p (binaries relaxed to [0,1]) with the
// CLP dual simplex through github.com/lanl/clp, independently of the pure-Go
// Lagrangian bounds: the rows are the same as in WriteLP (one per job, one
// per type, one per quota). It is available with the build tag clp and
// needs libClp (Debian: coinor-libclp-dev) and pkg-config. Each call uses a
// fresh Simplex, whose C memory is released by finalizers.
func RelaxCLP(p *Problem) (Relaxation, error) {
	if err := p.Validate(); err != nil {
		return Relaxation{}, err
	}
	types := slices.Sorted(maps.Keys(p.Capacity))
	typeRow := make(map[string]int, len(types))
	nJobs := len(p.Jobs)
	for r, t := range types {
		typeRow[t] = nJobs + r
	}
	quotaBase := nJobs + len(types)
	nRows := quotaBase + len(p.Quotas)
	// quota rows per (job, type)
	inQuota := make([][]int, nJobs)
	for q := range p.Quotas {
		for _, i := range p.Quotas[q].members(nJobs) {
			inQuota[i] = append(inQuota[i], q)
		}
	}
	nCols, nnz := 0, 0
	for i, j := range p.Jobs {
		nCols += len(j.Options) + 1
		nnz += 1 + len(j.Options)*(2+len(inQuota[i]))
	}
	mat := clp.NewPackedMatrix()
	// reserve first: appending to an unreserved matrix is quadratic
	mat.Reserve(nCols, nnz, false)
	colB := make([]clp.Bounds, 0, nCols)
	obj := make([]float64, 0, nCols)
	colOf := make([][]int, nJobs)
	for i, j := range p.Jobs {
		colOf[i] = make([]int, len(j.Options))
		for k, o := range j.Options {
			col := []clp.Nonzero{{Index: i, Value: 1}, {Index: typeRow[o.Type], Value: float64(o.GPUs)}}
			for _, q := range inQuota[i] {
				if p.Quotas[q].Counts(o) {
					col = append(col, clp.Nonzero{Index: quotaBase + q, Value: float64(o.GPUs)})
				}
			}
			colOf[i][k] = len(obj)
			mat.AppendColumn(col)
			b := clp.Bounds{Lower: 0, Upper: 1}
			if j.Pin == k {
				b.Lower = 1
			}
			colB = append(colB, b)
			obj = append(obj, o.Value)
		}
		// the unallocated column
		mat.AppendColumn([]clp.Nonzero{{Index: i, Value: 1}})
		b := clp.Bounds{Lower: 0, Upper: 1}
		if j.Pin >= 0 {
			b.Upper = 0
		}
		colB = append(colB, b)
		obj = append(obj, j.Unallocated)
	}
	mat.SetDimensions(nRows, len(obj))
	rowB := make([]clp.Bounds, nRows)
	for i := 0; i < nJobs; i++ {
		rowB[i] = clp.Bounds{Lower: 1, Upper: 1}
	}
	for r, t := range types {
		rowB[nJobs+r] = clp.Bounds{Lower: math.Inf(-1), Upper: float64(p.Capacity[t] - p.Reserved[t])}
	}
	for q, qu := range p.Quotas {
		rowB[quotaBase+q] = clp.Bounds{Lower: math.Inf(-1), Upper: float64(qu.Limit)}
	}
	if len(obj) == 0 {
		return Relaxation{Bound: 0, X: [][]float64{}, Prices: map[string]float64{}}, nil
	}
	s := clp.NewSimplex()
	s.LoadProblem(mat, colB, obj, rowB, nil)
	if p.Sense == Maximize {
		s.SetOptimizationDirection(clp.Maximize)
	} else {
		s.SetOptimizationDirection(clp.Minimize)
	}
	if st := s.Dual(clp.NoValuesPass, clp.NoStartFinishOptions); st != clp.Optimal {
		return Relaxation{}, fmt.Errorf("%w: CLP status %d (secondary %d)", ErrInvalidInput, st, s.SecondaryStatus())
	}
	sol := s.PrimalColumnSolution()
	duals := s.DualRowSolution()
	rel := Relaxation{Bound: s.ObjectiveValue(), X: make([][]float64, nJobs), Prices: make(map[string]float64, len(types))}
	for i, j := range p.Jobs {
		rel.X[i] = make([]float64, len(j.Options))
		for k := range j.Options {
			rel.X[i][k] = sol[colOf[i][k]]
		}
	}
	for r, t := range types {
		rel.Prices[t] = math.Abs(duals[nJobs+r])
	}
	return rel, nil
}
