// Package experiments holds the worked examples of docs/experiments.md as
// tests. It is a module of its own that imports the library as a user
// would (a replace directive points it at this checkout), so that the
// examples prove the simulator is usable from outside the module.
//
//	cd examples/experiments && go test ./...
package experiments
