//go:build race

package ilp_test

// raceEnabled: the race detector slows the solver several times over, so
// the deadline tests do not judge wall-clock overshoot under it.
const raceEnabled = true
