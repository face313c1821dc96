// Package internal is the parent of packages that users of this module must not
// import: test-data location, the built-in model catalogue and the simulator's
// property tests. The simulator itself is public: package sia/sim.
package internal
