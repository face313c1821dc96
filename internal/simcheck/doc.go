// Package simcheck holds property tests that drive every simulated policy
// (Sia and its variants, Gavel, Pollux) over many random multi-round
// simulations and check what must always hold: no allocation breaks a
// constraint, no job is lost, and results are identical across runs and
// across GOMAXPROCS settings. It has no non-test code.
package simcheck
