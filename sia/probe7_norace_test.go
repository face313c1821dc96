//go:build !race

package sia_test

// probe7Race is true under the race detector, which slows the code down
// too much for the deadline contract.
const probe7Race = false
