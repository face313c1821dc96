// Package ilp solves Sia's allocation problem exactly: choose at most one option
// per job under per-type GPU capacity (and optional quota rows), with pins,
// deadlines and warm starts. It knows nothing of goodput, only options and values.
package ilp
