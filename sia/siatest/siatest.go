// Package siatest holds test support for hosts and tests of package sia:
// Table, a fixed goodput table usable as a job's Models, with which the
// paper's running example and the package's tests state normalised goodputs
// directly.
package siatest

import (
	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/goodput"
)

// Table is a fixed goodput table, GPU type → replicas → goodput, usable as
// a sia.Job's Models (it implements sia.Evaluator): the running example of the paper
// and tests use it to state normalised goodputs directly. A type absent from
// the table has no model yet (bootstrap.None); a type present with an empty
// (or nil) map is excluded: the job cannot run on it (bootstrap.Excluded). A
// replica count absent from a type's map is an invalid configuration.
type Table map[string]map[int]float64

// Model reports Measured for the types in the table with at least one
// entry, Excluded for those with none and None for the others; the model
// itself only carries a batch size of 1 (Evaluate gives the goodputs).
func (t Table) Model(gpuType string) (goodput.Model, bootstrap.Source) {
	row, ok := t[gpuType]
	switch {
	case !ok:
		return goodput.Model{InitBatch: 1, MaxBatch: 1}, bootstrap.None
	case len(row) == 0:
		return goodput.Model{InitBatch: 1, MaxBatch: 1}, bootstrap.Excluded
	}
	return goodput.Model{InitBatch: 1, MaxBatch: 1}, bootstrap.Measured
}

// Evaluate returns the table's goodput for the type and replica count.
func (t Table) Evaluate(gpuType string, nodes, replicas int) (goodput.Choice, bool) {
	v, ok := t[gpuType][replicas]
	if !ok || !(v > 0) {
		return goodput.Choice{}, false
	}
	return goodput.Choice{Goodput: v, Throughput: v, Efficiency: 1}, true
}
