package siakube

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/sia-sched/sia/bootstrap"
)

// Phase is where a job is in the controller's life cycle.
type Phase string

// The phases. A job in PhaseStarting or PhaseRestoring is pinned to its
// assignment (sia.JobState.Restoring).
const (
	// PhaseQueued: suspended, no GPUs.
	PhaseQueued Phase = "queued"
	// PhaseStarting: assigned GPUs, waiting to be (re)configured and resumed:
	// its own old pods must be gone and its nodes' GPUs free.
	PhaseStarting Phase = "starting"
	// PhaseRestoring: resumed; pinned until all its pods run and its
	// restore delay has passed.
	PhaseRestoring Phase = "restoring"
	// PhaseRunning: running on its assignment.
	PhaseRunning Phase = "running"
	// PhaseStopping: preempted (suspended), its pods terminating.
	PhaseStopping Phase = "stopping"
)

// NodeGPUs is a job's share of one node.
type NodeGPUs struct {
	Node string `json:"node"`
	GPUs int    `json:"gpus"`
}

// Assignment is the allocation a job holds or is about to take, with the batch
// size the plan chose.
type Assignment struct {
	Type        string     `json:"type,omitempty"`
	GPUs        int        `json:"gpus,omitempty"`
	PerNode     []NodeGPUs `json:"perNode,omitempty"`
	Replicas    int        `json:"replicas,omitempty"`
	LocalBatch  int        `json:"localBatch,omitempty"`
	AccumSteps  int        `json:"accumSteps,omitempty"`
	GlobalBatch int        `json:"globalBatch,omitempty"`
}

// Running reports whether the assignment holds GPUs.
func (a Assignment) Running() bool { return a.GPUs > 0 }

// Nodes returns the node count.
func (a Assignment) Nodes() int { return len(a.PerNode) }

// SameGPUs reports whether a and b hold the same GPUs per node.
func (a Assignment) SameGPUs(b Assignment) bool {
	if a.Type != b.Type || a.GPUs != b.GPUs || len(a.PerNode) != len(b.PerNode) {
		return false
	}
	for i := range a.PerNode {
		if a.PerNode[i] != b.PerNode[i] {
			return false
		}
	}
	return true
}

// NodesString formats PerNode as "node-a=8,node-b=8" (AnnOutNodes).
func (a Assignment) NodesString() string {
	parts := make([]string, len(a.PerNode))
	for i, n := range a.PerNode {
		parts[i] = n.Node + "=" + strconv.Itoa(n.GPUs)
	}
	return strings.Join(parts, ",")
}

// Pods returns the pod count and the GPUs per pod of the assignment in the
// given layout. One pod per node needs the same GPUs on every node; a shape
// that has not (a rigid count placed as whole nodes plus a remainder) gets
// one pod per GPU.
func (a Assignment) Pods(l PodLayout) (pods, gpusPerPod int) {
	if !a.Running() {
		return 0, 0
	}
	if l == PodPerNode {
		per := a.PerNode[0].GPUs
		uniform := true
		for _, n := range a.PerNode {
			uniform = uniform && n.GPUs == per
		}
		if uniform {
			return len(a.PerNode), per
		}
	}
	return a.GPUs, 1
}

// RecordVersion is the version of the Record format.
const RecordVersion = 1

// Record is what the controller keeps about a job between rounds, in the
// cluster (one ConfigMap per job): nothing of it is read from the Job.
type Record struct {
	Version int `json:"version"`
	// Job is the sia job ID (namespace/name) and UID the Job's UID: a record
	// whose UID is not the Job's (a Job deleted and created again under the
	// same name) is discarded.
	Job string `json:"job"`
	UID string `json:"uid"`
	// Phase and Assigned are the job's life-cycle phase and allocation.
	Phase    Phase      `json:"phase"`
	Assigned Assignment `json:"assigned"`
	// Restarts counts checkpoint-restarts (resize, move, migrate, and every
	// start after the first); Started says the job was ever resumed; Peak is
	// the largest replica count it was given.
	Restarts int  `json:"restarts"`
	Started  bool `json:"started"`
	Peak     int  `json:"peak"`
	// FirstSeen is when the controller first read the Job, on the
	// controller's own clock: the job's submission time for sia (its age
	// drives the restart factor). The Job's creationTimestamp is on the API
	// server's wall clock, which an injected clock need not follow.
	FirstSeen time.Time `json:"firstSeen,omitzero"`
	// RestoreUntil is when a restoring job's pin ends (zero while its pods
	// are not all running).
	RestoreUntil time.Time `json:"restoreUntil,omitzero"`
	// Reason is the last queue reason or error shown to the user.
	Reason string `json:"reason,omitempty"`
	// Measurement is the last measurement annotation taken into the tracker.
	Measurement string `json:"measurement,omitempty"`
	// Tracker is the job's bootstrap.Tracker (MarshalJSON).
	Tracker json.RawMessage `json:"tracker,omitempty"`
}

// Pinned reports whether the job is pinned to its assignment this round.
func (r *Record) Pinned() bool {
	return r.Assigned.Running() && (r.Phase == PhaseStarting || r.Phase == PhaseRestoring)
}

// Encode serialises the record with its tracker.
func (r *Record) Encode(tr *bootstrap.Tracker) ([]byte, error) {
	if tr != nil {
		b, err := tr.MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("job %s: tracker: %w", r.Job, err)
		}
		r.Tracker = b
	}
	r.Version = RecordVersion
	return json.Marshal(r)
}

// DecodeRecord reads a record and its tracker (nil when the record has none).
func DecodeRecord(b []byte) (*Record, *bootstrap.Tracker, error) {
	var r Record
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, nil, fmt.Errorf("record: %w", err)
	}
	if r.Version != RecordVersion {
		return nil, nil, fmt.Errorf("record of job %s: version %d, want %d", r.Job, r.Version, RecordVersion)
	}
	if err := r.check(); err != nil {
		return nil, nil, err
	}
	if len(r.Tracker) == 0 {
		return &r, nil, nil
	}
	tr := new(bootstrap.Tracker)
	if err := tr.UnmarshalJSON(r.Tracker); err != nil {
		return nil, nil, fmt.Errorf("record of job %s: tracker: %w", r.Job, err)
	}
	return &r, tr, nil
}

func (r *Record) check() error {
	bad := func(f string, a ...any) error {
		return fmt.Errorf("record of job %s: %s", r.Job, fmt.Sprintf(f, a...))
	}
	switch r.Phase {
	case PhaseQueued, PhaseStarting, PhaseRestoring, PhaseRunning, PhaseStopping:
	default:
		return bad("unknown phase %q", r.Phase)
	}
	a := r.Assigned
	sum := 0
	for _, n := range a.PerNode {
		if n.Node == "" || n.GPUs < 1 || n.GPUs > MaxJobGPUs {
			return bad("assignment lists node %q with %d GPUs", n.Node, n.GPUs)
		}
		sum += n.GPUs
	}
	switch {
	case sum != a.GPUs || a.GPUs > MaxJobGPUs:
		return bad("assignment of %d GPUs lists %d (at most %d)", a.GPUs, sum, MaxJobGPUs)
	case r.Restarts < 0:
		return bad("restarts %d, want >= 0", r.Restarts)
	case r.Peak < 0:
		return bad("peak %d, want >= 0", r.Peak)
	}
	if a.Running() != (r.Phase == PhaseStarting || r.Phase == PhaseRestoring || r.Phase == PhaseRunning) {
		return bad("phase %s with %d GPUs assigned", r.Phase, a.GPUs)
	}
	return nil
}

// perNode returns the per-node GPUs of a placement, sorted by node.
func perNode(counts map[string]int) []NodeGPUs {
	out := make([]NodeGPUs, 0, len(counts))
	for n, c := range counts {
		out = append(out, NodeGPUs{Node: n, GPUs: c})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Node < out[j].Node })
	return out
}

var zeroTime time.Time
