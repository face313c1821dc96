package sia

// The round's steps, for the external tests (package sia_test) that check
// them one by one; they are not part of the package's API.
type (
	Matrix   = goodputMatrix
	Solution = solution
	Layout   = layout
)

var (
	BuildMatrix = newMatrix
	Solve       = solveMatrix
	Place       = placeSolution
)

// PlanMatrix returns the goodput matrix the plan was solved on.
func PlanMatrix(p *Plan) *Matrix { return p.matrix }

// PlanEntry returns the matrix entry decision i of the plan was placed with.
func PlanEntry(p *Plan, i int) *matrixEntry { return p.entry(i) }

// PlanFilled returns the jobs the plan's fill step started (sorted IDs).
func PlanFilled(p *Plan) []string { return p.filled }

// RaceEnabled reports whether the tests run under the race detector.
const RaceEnabled = raceEnabled
