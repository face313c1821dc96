// Package siakube maps Kubernetes objects to a sia.Snapshot and a sia.Plan
// back to object changes, with no client: it reads Nodes, Pods and batch/v1
// Indexed Jobs and returns what the controller (package controller) must
// write. Every user-facing annotation lives under the one prefix Prefix
// ("sia.sched.io/"); see the module's README for the reference.
package siakube
