package siakube

import (
	"fmt"

	"github.com/sia-sched/sia/sia"
)

// This file is the one place that applies sia Decisions.

// Assign returns the assignment of a decision: its type, GPUs per node and
// batch size.
func Assign(d sia.Decision) Assignment {
	if !d.Allocation.Running() {
		return Assignment{}
	}
	counts := map[string]int{}
	for _, g := range d.Allocation.Placement {
		counts[g.Node]++
	}
	return Assignment{
		Type: d.Allocation.Type, GPUs: d.Allocation.GPUs, PerNode: perNode(counts),
		Replicas: d.Replicas, LocalBatch: d.LocalBatch, AccumSteps: d.AccumSteps, GlobalBatch: d.GlobalBatch,
	}
}

// Step says what a decision asks of the Job object.
type Step int

const (
	// StepNone: nothing changes on the Job (Keep, Queue of a queued job).
	StepNone Step = iota
	// StepBatch: only the published batch size changes (Keep).
	StepBatch
	// StepStart: the job is (re)configured for its new assignment and resumed
	// once its old pods are gone (Start, Resize, Move, Migrate).
	StepStart
	// StepSuspend: the job is suspended (Preempt).
	StepSuspend
	// StepQueue: the job waits; its queue reason is shown (Queue).
	StepQueue
)

// Advance applies a decision to a job's record: its phase, assignment,
// restart count and peak. Start after an earlier run counts a restart (the
// library leaves that to the host), as do Resize, Move and Migrate; a Move
// that keeps the GPUs per node is no restart (the controller does not pin
// device indices) and becomes a Keep. It returns the step the Job needs.
func Advance(r *Record, d sia.Decision) (Step, error) {
	next := Assign(d)
	r.Peak = max(r.Peak, d.Replicas)
	switch d.Action {
	case sia.Keep:
		if !r.Assigned.Running() {
			return StepNone, fmt.Errorf("job %s: keep without an assignment", r.Job)
		}
		return keep(r, next), nil
	case sia.Move:
		if r.Assigned.SameGPUs(next) {
			return keep(r, next), nil
		}
		fallthrough
	case sia.Resize, sia.Migrate:
		r.Restarts++
		r.Assigned, r.Phase, r.RestoreUntil, r.Reason = next, PhaseStarting, zeroTime, ""
		return StepStart, nil
	case sia.Start:
		if r.Started {
			r.Restarts++
		}
		r.Assigned, r.Phase, r.RestoreUntil, r.Reason = next, PhaseStarting, zeroTime, ""
		return StepStart, nil
	case sia.Preempt:
		r.Assigned, r.Phase, r.RestoreUntil, r.Reason = Assignment{}, PhaseStopping, zeroTime, d.Reason.String()
		return StepSuspend, nil
	case sia.Queue:
		if r.Phase != PhaseStopping {
			r.Phase = PhaseQueued
		}
		r.Assigned, r.RestoreUntil, r.Reason = Assignment{}, zeroTime, d.Reason.String()
		return StepQueue, nil
	}
	return StepNone, fmt.Errorf("job %s: unknown action %v", r.Job, d.Action)
}

func keep(r *Record, next Assignment) Step {
	changed := r.Assigned.LocalBatch != next.LocalBatch || r.Assigned.AccumSteps != next.AccumSteps ||
		r.Assigned.GlobalBatch != next.GlobalBatch
	next.PerNode = r.Assigned.PerNode
	r.Assigned = next
	if changed {
		return StepBatch
	}
	return StepNone
}

// Clear drops a job's assignment (its node is gone): the job is queued for
// the round; if its pods still run, the next Start suspends it first.
func Clear(r *Record, why string) {
	if r.Assigned.Running() {
		r.Phase = PhaseStopping
	}
	r.Assigned, r.RestoreUntil, r.Reason = Assignment{}, zeroTime, why
}
