//go:build race

package simcheck

// raceEnabled shrinks the simulations under the race detector, which slows
// them about tenfold; the same code paths still run.
const raceEnabled = true
