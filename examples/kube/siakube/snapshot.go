package siakube

import (
	"fmt"
	"sort"
	"time"

	"github.com/sia-sched/sia/bootstrap"
	"github.com/sia-sched/sia/sia"
)

// This file is the one place that builds a sia.Snapshot.

// JobInput is one opted-in job as the controller sees it before a round.
type JobInput struct {
	// ID is the sia job ID, namespace/name.
	ID string
	// Spec is the parsed description, Submitted the job's submission time
	// (the controller passes Record.FirstSeen, on its own clock).
	Spec      *JobSpec
	Submitted time.Time
	// Record and Tracker are the job's persisted state (never nil).
	Record  *Record
	Tracker *bootstrap.Tracker
}

// SnapshotResult is a snapshot and how its jobs map back.
type SnapshotResult struct {
	// Snapshot is the round's input; Jobs[i] is the input of
	// Snapshot.Jobs[i].
	Snapshot sia.Snapshot
	Jobs     []*JobInput
	// Rejected lists the jobs left out of the round and why (a job whose
	// description the scheduler refuses).
	Rejected map[string]error
	// Cleared lists the jobs whose assignment was dropped and why (a node
	// gone, cordoned or too small now, or an assignment the job's bounds no
	// longer allow); they are treated as queued.
	Cleared map[string]string
}

// BuildSnapshot builds the round's snapshot from the usable nodes and the
// opted-in jobs (in any order; the snapshot lists them sorted by ID).
// Assignments are checked against the nodes: pinned jobs first, then the
// others, each must find its nodes, of its type, with its GPUs free, or it is
// cleared. Each job is then validated on its own, so one job's bad
// description never fails the round of the others. opts are the scheduler's
// options (nil = defaults) used to validate.
func BuildSnapshot(now time.Time, nodes []GPUNode, jobs []*JobInput) SnapshotResult {
	res := SnapshotResult{Rejected: map[string]error{}, Cleared: map[string]string{}}
	siaNodes := make([]sia.Node, len(nodes))
	byName := make(map[string]*GPUNode, len(nodes))
	for i := range nodes {
		siaNodes[i] = sia.Node{ID: nodes[i].Name, Type: nodes[i].Type, GPUs: nodes[i].GPUs}
		byName[nodes[i].Name] = &nodes[i]
	}
	sorted := append([]*JobInput(nil), jobs...)
	sort.Slice(sorted, func(i, j int) bool { return sorted[i].ID < sorted[j].ID })

	// Assignments to GPUs: pinned jobs first, so that a shrunken node clears
	// a running job rather than one in the middle of a restore.
	used := map[string]int{}
	current := make([]sia.Allocation, len(sorted))
	for pass := 0; pass < 2; pass++ {
		for i, j := range sorted {
			if j.Record.Pinned() != (pass == 0) || !j.Record.Assigned.Running() {
				continue
			}
			alloc, why := placeAssignment(j.Record.Assigned, byName, used)
			if why != "" {
				res.Cleared[j.ID] = why
				continue
			}
			current[i] = alloc
		}
	}
	for i, j := range sorted {
		sj := siaJob(now, j, current[i])
		one := sia.Snapshot{Now: now, Nodes: siaNodes, Jobs: []sia.Job{sj}}
		err := one.Validate()
		if err != nil && sj.State.Current.Running() {
			res.Cleared[j.ID] = err.Error()
			sj.State = sia.JobState{Restarts: sj.State.Restarts, RestartCost: sj.State.RestartCost, PeakReplicas: sj.State.PeakReplicas}
			one.Jobs[0] = sj
			err = one.Validate()
		}
		if err != nil {
			res.Rejected[j.ID] = err
			continue
		}
		res.Snapshot.Jobs = append(res.Snapshot.Jobs, sj)
		res.Jobs = append(res.Jobs, j)
	}
	res.Snapshot.Now = now
	res.Snapshot.Nodes = siaNodes
	return res
}

// placeAssignment turns an assignment into an allocation with GPUs, numbering
// each node's GPUs in the order the jobs claim them (the controller does not
// pin device indices; the kubelet's device plugin picks them).
func placeAssignment(a Assignment, byName map[string]*GPUNode, used map[string]int) (sia.Allocation, string) {
	for _, pn := range a.PerNode {
		n := byName[pn.Node]
		switch {
		case n == nil:
			return sia.Allocation{}, fmt.Sprintf("node %s is gone or unusable", pn.Node)
		case n.Type != a.Type:
			return sia.Allocation{}, fmt.Sprintf("node %s is now of type %s, not %s", pn.Node, n.Type, a.Type)
		case used[pn.Node]+pn.GPUs > n.GPUs:
			return sia.Allocation{}, fmt.Sprintf("node %s has %d GPUs for sia jobs, %d of them taken, %d needed", pn.Node, n.GPUs, used[pn.Node], pn.GPUs)
		}
	}
	alloc := sia.Allocation{Type: a.Type, Nodes: len(a.PerNode), GPUs: a.GPUs}
	for _, pn := range a.PerNode {
		for k := 0; k < pn.GPUs; k++ {
			alloc.Placement = append(alloc.Placement, sia.GPU{Node: pn.Node, Index: used[pn.Node] + k})
		}
		used[pn.Node] += pn.GPUs
	}
	return alloc, ""
}

func siaJob(now time.Time, j *JobInput, cur sia.Allocation) sia.Job {
	s := j.Spec
	sub := j.Submitted
	if sub.After(now) {
		sub = now
	}
	sj := sia.Job{
		ID: j.ID, Application: s.Application, Kind: s.Kind, Submitted: sub,
		MinGPUs: s.MinGPUs, MaxGPUs: s.MaxGPUs, GPUs: s.GPUs, NonPreemptible: s.NonPreemptible,
		Models: j.Tracker,
		State: sia.JobState{
			Current: cur, Restarts: j.Record.Restarts, RestartCost: s.RestartCost,
			PeakReplicas: j.Record.Peak,
		},
	}
	sj.State.Restoring = cur.Running() && j.Record.Pinned()
	return sj
}
