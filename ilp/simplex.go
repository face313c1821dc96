package ilp

import "math"

// denseLP is a small dense two-phase simplex (tableau form, Bland's rule) used
// for the cutting-plane master of the Lagrangian dual, which has a handful of
// columns (one per coupling row, plus one) and at most a few hundred rows.
//
// It maximises c·x subject to A x <= b, x >= 0. ok is false when the problem is
// infeasible, unbounded or the iteration limit is hit (the caller then keeps
// its previous multipliers, which still give a valid bound).
func denseLP(A [][]float64, b, c []float64) (x []float64, val float64, ok bool) {
	return denseLPUntil(A, b, c, nil)
}

// lpCheckWork is the tableau work (entries updated) between two looks at
// stop in denseLPUntil: some tens of microseconds.
const lpCheckWork = 1 << 15

// denseLPUntil is denseLP that also gives up (ok false) as soon as stop
// (when non-nil) reports true, looking at it every lpCheckWork entries of
// pivoting: a master of many cuts can take milliseconds.
func denseLPUntil(A [][]float64, b, c []float64, stop func() bool) (x []float64, val float64, ok bool) {
	m, n := len(A), len(c)
	// columns: 0..n-1 structural, n..n+m-1 slacks, n+m artificial, n+m+1 rhs
	w := n + m + 2
	rhs, art := w-1, n+m
	t := make([][]float64, m+1)
	buf := make([]float64, (m+1)*w)
	for i := 0; i <= m; i++ {
		t[i] = buf[i*w : (i+1)*w]
	}
	basis := make([]int, m)
	minRow, minB := -1, 0.0
	for i := 0; i < m; i++ {
		copy(t[i][:n], A[i])
		t[i][n+i] = 1
		t[i][rhs] = b[i]
		basis[i] = n + i
		if b[i] < minB {
			minRow, minB = i, b[i]
		}
	}
	obj := t[m]
	const eps = 1e-10
	limit := 50 * (m + n + 10)

	pivot := func(r, col int) {
		pr := t[r]
		inv := 1 / pr[col]
		for j := range pr {
			pr[j] *= inv
		}
		pr[col] = 1
		for i := range t {
			if i == r {
				continue
			}
			row := t[i]
			f := row[col]
			if f == 0 {
				continue
			}
			for j := range row {
				row[j] -= f * pr[j]
			}
			row[col] = 0
		}
		basis[r] = col
	}
	// iterate runs the simplex on the current objective row; banned columns
	// never enter. It returns false on unboundedness or the iteration limit.
	work := 0
	iterate := func(banned int) bool {
		for it := 0; it < limit; it++ {
			if work += (m + 1) * w; stop != nil && work >= lpCheckWork {
				if work = 0; stop() {
					return false
				}
			}
			col := -1
			for j := 0; j < rhs; j++ {
				if j != banned && obj[j] < -eps {
					col = j
					break
				}
			}
			if col < 0 {
				return true
			}
			r, best := -1, math.Inf(1)
			for i := 0; i < m; i++ {
				if a := t[i][col]; a > eps {
					q := t[i][rhs] / a
					if q < best-1e-12 || (q <= best+1e-12 && r >= 0 && basis[i] < basis[r]) {
						r, best = i, q
					}
				}
			}
			if r < 0 {
				return false
			}
			pivot(r, col)
		}
		return false
	}

	if minRow >= 0 {
		// phase 1: maximise -x0 with x0 entering every row at coefficient -1
		for i := 0; i < m; i++ {
			t[i][art] = -1
		}
		obj[art] = 1
		pivot(minRow, art)
		if !iterate(-1) {
			return nil, 0, false
		}
		if obj[rhs] < -1e-7 {
			return nil, 0, false
		}
		for i := 0; i < m; i++ {
			if basis[i] == art {
				for j := 0; j < art; j++ {
					if math.Abs(t[i][j]) > eps {
						pivot(i, j)
						break
					}
				}
			}
		}
		for i := 0; i <= m; i++ {
			t[i][art] = 0
		}
	}
	// phase 2 objective
	for j := range obj {
		obj[j] = 0
	}
	for j := 0; j < n; j++ {
		obj[j] = -c[j]
	}
	for i := 0; i < m; i++ {
		if bc := basis[i]; bc < n && obj[bc] != 0 {
			f := obj[bc]
			for j := range obj {
				obj[j] -= f * t[i][j]
			}
			obj[bc] = 0
		}
	}
	if !iterate(art) {
		return nil, 0, false
	}
	x = make([]float64, n)
	for i := 0; i < m; i++ {
		if basis[i] < n {
			x[basis[i]] = math.Max(0, t[i][rhs])
		}
	}
	for j := 0; j < n; j++ {
		val += c[j] * x[j]
	}
	return x, val, true
}
