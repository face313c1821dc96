// Package internal is the parent of packages that users of this module must not
// import: test-data location and the trace-driven simulator.
package internal
