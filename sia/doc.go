// Package sia composes the leaves of this module into Sia's scheduling round:
// given a Snapshot of the cluster and its jobs it builds the restart-discounted
// goodput matrix, solves the allocation and places it onto nodes, returning a Plan.
package sia
