package sia

import (
	"time"
)

// restarts reports whether applying an action to a job with state st
// checkpoint-restarts it (the N of the restart factor, paper §3.3): a
// change of allocation of a running job (Resize, Move, Migrate) and a Start
// of a job that has run before (a resume after a preemption). The first
// start does not count.
func restarts(st *JobState, a Action) bool {
	switch a {
	case Resize, Move, Migrate:
		return true
	case Start:
		return st.PeakReplicas > 0
	}
	return false
}

// restoring reports whether the job is in a checkpoint-restore at now: the
// host says so (Restoring), or the restore Advance recorded has not ended.
func (st *JobState) restoring(now time.Time) bool {
	return st.Current.Running() && (st.Restoring || now.Before(st.RestoreUntil))
}

// restoreView returns the job as the matrix sees it at now: a job whose
// recorded restore (RestoreUntil) has not ended is Restoring. It copies the
// job only then; the snapshot is never changed.
func restoreView(j *Job, now time.Time) *Job {
	if j.State.Restoring || !j.State.restoring(now) {
		return j
	}
	v := *j
	v.State.Restoring = true
	return &v
}

// Advance applies the job's decision of a round to its state, the
// bookkeeping between rounds that the library owns (as raft's Ready/Advance
// step): Current becomes the decision's allocation, Restarts counts the
// decision's restart (Decision.Restart: Resize, Move, Migrate, or a Start
// after a preemption), PeakReplicas keeps the largest replica count the job
// has run with, and RestoreUntil records the end of the checkpoint-restore
// a restart begins (Decision.RestoreUntil; kept while the job keeps its
// allocation, cleared when it has none), so that the job is pinned while a
// later snapshot's Now is before it. Restoring, the host's own
// signal, is cleared: after Advance the library tracks the restore.
//
// A host that applies every plan calls Advance once per decision and keeps
// nothing else; the job's models (bootstrap.Tracker.Observe) are updated
// separately from what the job measures.
func (st *JobState) Advance(d Decision) {
	if d.Restart {
		st.Restarts++
		st.RestoreUntil = d.RestoreUntil
	}
	if !d.Allocation.Running() {
		st.RestoreUntil = time.Time{} // a job without GPUs restores nothing
	}
	st.Current = d.Allocation
	st.PeakReplicas = max(st.PeakReplicas, d.Replicas)
	st.Restoring = false
}

// Advance applies the plan to the snapshot's jobs (JobState.Advance for
// each decision, matched by job ID) and moves Now to next, so that the
// snapshot is the input of the next round once the host has removed the
// jobs that finished and added the new ones. Decisions of jobs the snapshot
// does not have are ignored.
func (s *Snapshot) Advance(p *Plan, next time.Time) {
	byID := make(map[string]int, len(p.Decisions))
	for k, d := range p.Decisions {
		byID[d.Job] = k
	}
	for i := range s.Jobs {
		if k, ok := byID[s.Jobs[i].ID]; ok {
			s.Jobs[i].State.Advance(p.Decisions[k])
		}
	}
	s.Now = next
}

// DropDepartedNodes clears the allocation of every job that holds a GPU on
// a node the cluster no longer lists (or whose Placement names a GPU beyond
// its node's count, or a node of another type): the job is then queued and
// the round may start it elsewhere. It returns the IDs of the jobs
// concerned, in snapshot order. A host calls it after removing nodes that
// failed or left, before the round (which otherwise rejects such a
// snapshot).
func (s *Snapshot) DropDepartedNodes() []string {
	nodes := make(map[string]Node, len(s.Nodes))
	for _, n := range s.Nodes {
		nodes[n.ID] = n
	}
	var dropped []string
	for i := range s.Jobs {
		st := &s.Jobs[i].State
		if !st.Current.Running() {
			continue
		}
		lost := false
		for _, g := range st.Current.Placement {
			n, ok := nodes[g.Node]
			if !ok || n.Type != st.Current.Type || g.Index < 0 || g.Index >= n.GPUs {
				lost = true
				break
			}
		}
		if !lost {
			continue
		}
		st.Current = Allocation{}
		st.Restoring = false
		st.RestoreUntil = time.Time{}
		dropped = append(dropped, s.Jobs[i].ID)
	}
	return dropped
}
