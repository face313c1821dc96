package sia

import (
	"fmt"
	"slices"

	"github.com/sia-sched/sia/bootstrap"
)

// QueueReason says why a job gets no GPUs in a plan (Decision.Reason of a
// Queue or Preempt decision), so that a host can tell its user.
type QueueReason int

const (
	// ReasonNone: the job has GPUs (every decision but Queue and Preempt).
	ReasonNone QueueReason = iota
	// ReasonTooLarge: the job's smallest size (MinGPUs in multiples of its
	// replica size, or a rigid job's GPUs) is larger than every GPU type it
	// may use has (capacity), or than Options.MaxGPUsPerJob; a type on
	// which a rigid job's GPUs are no whole number of replicas does not
	// count (it has no configuration there at any size).
	ReasonTooLarge
	// ReasonNoAdmissibleType: no GPU type of the cluster can run the job — Types,
	// or its Models (bootstrap.Excluded) rule out every type,
	// or no configuration of the types left is valid (batch limits, or a
	// rigid job's GPUs that are no whole number of its replicas).
	ReasonNoAdmissibleType
	// ReasonQuota: the quotas covering the job leave no room for any of its
	// configurations (their limits, less what other jobs of the quota
	// hold).
	ReasonQuota
	// ReasonReserved: the job's configurations fit only in GPUs withheld by
	// Snapshot.Reserved.
	ReasonReserved
	// ReasonLostOptimisation: the job could run, but the optimal allocation gives
	// the GPUs to jobs worth more, or values waiting at least as much as
	// every configuration of the job (a running job discounted by its
	// restart factor).
	ReasonLostOptimisation
	// ReasonDeadline: the round ran out of time (or hit Options.SolverMaxNodes)
	// before it could give the job GPUs or prove it should wait: its row
	// was cut short, the allocation is not proven optimal, or placement
	// stopped at its share of the deadline before it placed the job.
	ReasonDeadline
	// ReasonUnplaceable: the solver gave the job GPUs, but placement found no
	// GPUs for the configuration (fragmentation).
	ReasonUnplaceable
)

// String returns the reason's name in lower case ("too-large", …).
func (r QueueReason) String() string {
	switch r {
	case ReasonNone:
		return "none"
	case ReasonTooLarge:
		return "too-large"
	case ReasonNoAdmissibleType:
		return "no-admissible-type"
	case ReasonQuota:
		return "quota"
	case ReasonReserved:
		return "reserved"
	case ReasonLostOptimisation:
		return "lost-optimisation"
	case ReasonDeadline:
		return "deadline"
	case ReasonUnplaceable:
		return "unplaceable"
	}
	return fmt.Sprintf("QueueReason(%d)", int(r))
}

// reasoner explains why jobs get no GPUs: it knows what the solution leaves
// free per type and per quota.
type reasoner struct {
	snap     *Snapshot
	m        *goodputMatrix
	sol      solution
	o        *Options
	free     map[string]int // capacity − reserved − used by the solution
	capacity map[string]int // GPUs per type (goodputMatrix.TypeCapacity, summed once)
	capAt    []int          // the same by position in m.Types (no map look-up per queued job)
	qfree    []int          // snapshot quotas: limit − used
	quotasOf map[int][]int  // row → snapshot quotas covering it
}

func newReasoner(snap *Snapshot, m *goodputMatrix, sol solution, o *Options) *reasoner {
	r := &reasoner{snap: snap, m: m, sol: sol, o: o, free: map[string]int{}, capacity: map[string]int{}, quotasOf: map[int][]int{}}
	r.capAt = make([]int, len(m.Types))
	for k, t := range m.Types {
		r.capacity[t] = m.TypeCapacity(t)
		r.capAt[k] = r.capacity[t]
		r.free[t] = r.capacity[t] - m.Reserved[t]
	}
	for i, c := range sol.Choice {
		if c >= 0 {
			e := &m.Rows[i].Entries[c]
			r.free[e.Config.Type] -= e.charge()
			if c == m.Rows[i].Pin {
				for _, n := range m.Rows[i].spill {
					r.free[e.Config.Type] -= n
				}
			}
		}
	}
	r.qfree = make([]int, len(m.Quotas))
	for q := range m.Quotas {
		iq := &m.Quotas[q]
		r.qfree[q] = iq.Limit
		if iq.AllJobs {
			continue // placement rows of the cluster, not a snapshot quota
		}
		for _, i := range iq.Jobs {
			r.quotasOf[i] = append(r.quotasOf[i], q)
			if c := sol.Choice[i]; c >= 0 {
				r.qfree[q] -= quotaUse(iq, usesOf(&m.Rows[i].Entries[c], false))
			}
		}
	}
	return r
}

// reason returns why job i, which gets no GPUs, waits; unplaced says the
// solver allocated it but placement could not.
func (r *reasoner) reason(i int, unplaced bool) QueueReason {
	if unplaced {
		return ReasonUnplaceable
	}
	row := &r.m.Rows[i]
	j := &r.snap.Jobs[i]
	offered := 0
	for k := range row.Entries {
		if e := &row.Entries[k]; !e.Dropped && !e.Dominated || k == row.Pin {
			offered++
		}
	}
	switch {
	case len(row.Entries) == 0 && row.Partial:
		return r.whyNotBuilt(j)
	case len(row.Entries) == 0:
		return r.whyNoEntries(j)
	case offered == 0 && row.Partial:
		return ReasonDeadline
	case offered == 0:
		return ReasonLostOptimisation
	}
	// Some configuration is offered: which constraint keeps it out? First
	// the limits themselves, then what the allocation leaves.
	if q, res := r.blocked(i, row, true); q {
		return ReasonQuota
	} else if res {
		return ReasonReserved
	}
	if row.Partial || r.sol.Status != StatusOptimal && !r.sol.spanCut {
		return ReasonDeadline
	}
	if q, res := r.blocked(i, row, false); q {
		return ReasonQuota
	} else if res {
		return ReasonReserved
	}
	return ReasonLostOptimisation
}

// blocked reports whether every offered entry of row i is kept out by a
// snapshot quota covering the job (quota), and whether every one fits only
// with the reserved GPUs (reserved): against the limits and the capacity
// less Reserved (static), or against what the solution leaves of them.
func (r *reasoner) blocked(i int, row *matrixRow, static bool) (quota, reserved bool) {
	quota, reserved = true, true
	for k := range row.Entries {
		e := &row.Entries[k]
		if (e.Dropped || e.Dominated) && k != row.Pin {
			continue
		}
		t, g := e.Config.Type, e.charge()
		free := r.free[t]
		if static {
			free = r.capacity[t] - r.m.Reserved[t]
		}
		if g <= free || g > free+r.m.Reserved[t] {
			reserved = false
		}
		blockedByQuota := false
		for _, q := range r.quotasOf[i] {
			room := r.qfree[q]
			if static {
				room = r.m.Quotas[q].Limit
			}
			if quotaUse(&r.m.Quotas[q], usesOf(e, false)) > room {
				blockedByQuota = true
				break
			}
		}
		quota = quota && blockedByQuota
	}
	return quota, reserved
}

// whyNotBuilt is the reason of a job whose row the round had no time to
// build: TooLarge or NoAdmissibleType when the job's bounds and Types alone
// say so (no call to its Models, past the deadline), else Deadline. A job
// that can never run must not read "deadline" round after round.
func (r *reasoner) whyNotBuilt(j *Job) QueueReason {
	allowed, tooLarge := 0, 0
	for k, t := range r.m.Types {
		if j.Types != nil && !slices.Contains(j.Types, t) {
			continue
		}
		allowed++
		size, limit := max(j.MinGPUs, 1), min(r.capAt[k], r.o.MaxGPUsPerJob)
		if j.Kind == Rigid {
			size, limit = j.GPUs, r.capAt[k]
		}
		if size > limit {
			tooLarge++
		}
	}
	switch {
	case allowed == 0:
		return ReasonNoAdmissibleType
	case tooLarge == allowed:
		return ReasonTooLarge
	}
	return ReasonDeadline
}

// whyNoEntries tells TooLarge from NoAdmissibleType for a job whose row is
// empty.
func (r *reasoner) whyNoEntries(j *Job) QueueReason {
	admissible, tooLarge := 0, 0
	for k, t := range r.m.Types {
		if j.Types != nil && !slices.Contains(j.Types, t) {
			continue
		}
		m, src := j.Models.Model(t)
		if src == bootstrap.Excluded {
			continue
		}
		p := max(m.Stages, 1)
		if j.Kind == Rigid && j.GPUs%p != 0 {
			continue // no whole number of replicas: no configuration on t, at any size
		}
		admissible++
		size, limit := max(j.MinGPUs, 1), min(r.capAt[k], r.o.MaxGPUsPerJob)
		if j.Kind == Rigid {
			size, limit = j.GPUs, r.capAt[k]
		}
		if size = ceilDiv(size, p) * p; size > limit || size < 0 {
			tooLarge++
		}
	}
	if admissible > 0 && tooLarge == admissible {
		return ReasonTooLarge
	}
	return ReasonNoAdmissibleType
}
