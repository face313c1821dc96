package ilp

import (
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"
)

// Sentinel errors. Errors returned by this package wrap one of them, so callers
// can test with errors.Is; the message names the offending job, option, type or
// field.
var (
	// ErrInvalidInput marks a problem that breaks a documented rule (negative
	// capacity, NaN value, duplicate job ID, unknown type, bad pin index, ...).
	ErrInvalidInput = errors.New("ilp: invalid input")
	// ErrInfeasible marks a problem whose pins (together with capacities,
	// reservations and quotas) cannot all hold.
	ErrInfeasible = errors.New("ilp: infeasible pins")
)

// InputError describes one offending item of a Problem. It wraps
// ErrInvalidInput (or ErrInfeasible for pins that cannot all hold) and is
// usable with errors.As.
type InputError struct {
	Field  string // path of the offending item, e.g. `jobs[3] "j3".options[2].value`
	Reason string // what is wrong with it
	Err    error  // ErrInvalidInput or ErrInfeasible
}

// Error implements error.
func (e *InputError) Error() string {
	if e.Field == "" {
		return "ilp: " + e.Reason
	}
	return "ilp: " + e.Field + ": " + e.Reason
}

// Unwrap returns the sentinel the error belongs to (ErrInvalidInput or
// ErrInfeasible).
func (e *InputError) Unwrap() []error { return []error{e.Err} }

func invalid(field, format string, args ...any) error {
	return &InputError{Field: field, Reason: fmt.Sprintf(format, args...), Err: ErrInvalidInput}
}

// Sense says whether the objective is minimised or maximised.
type Sense int

const (
	// Minimize asks for the smallest objective (Sia with p < 0).
	Minimize Sense = iota
	// Maximize asks for the largest objective (Sia with p > 0).
	Maximize
)

// String returns "min" or "max".
func (s Sense) String() string {
	switch s {
	case Minimize:
		return "min"
	case Maximize:
		return "max"
	}
	return fmt.Sprintf("Sense(%d)", int(s))
}

// Option is one configuration a job may take: GPUs GPUs of type Type, worth
// Value in the objective.
type Option struct {
	Type  string  // GPU type; must be a key of Problem.Capacity
	GPUs  int     // number of GPUs the option uses (> 0)
	Value float64 // contribution to the objective when chosen (finite; see MaxValueSum)
}

// Job is one row of the allocation problem: the job takes at most one of its
// Options, or none, in which case it contributes Unallocated.
type Job struct {
	ID          string   // unique, non-empty
	Options     []Option // may be empty: the job then stays unallocated
	Unallocated float64  // contribution when the job gets no option (finite; see MaxValueSum)
	// Pin forces the job onto Options[Pin] (a job in the middle of a
	// checkpoint-restore, or a non-preemptible one). -1 means not pinned.
	// Note that 0 pins the job to its first option.
	Pin int
}

// Quota is an extra capacity row: the GPUs of type Type (of the types listed
// in Types when Types is non-empty; of every type when both are empty) used
// by the jobs it covers must not exceed Limit. It covers the jobs
// listed in Jobs (indices into Problem.Jobs), or every job when AllJobs is
// set (Jobs must then be empty); an empty Jobs list without AllJobs covers no
// job, so the row always holds. When MinGPUs > 0, only options with at least
// MinGPUs GPUs count toward the row.
//
// Per-queue quotas per type are expressed with Jobs; a placement limit such
// as "configurations of type T with at least 16 GPUs together use at most 48
// GPUs" is Quota{Type: "T", MinGPUs: 16, Limit: 48, AllJobs: true}, and a
// limit over a set of types (say the types that share one kind of node) is
// Quota{Types: []string{"T1", "T2"}, ...}. Every row's coefficient is the
// option's GPU count.
type Quota struct {
	Name    string // for messages and the LP file; may be empty
	Jobs    []int  // indices into Problem.Jobs; duplicates are an error
	AllJobs bool   // cover every job of the problem; Jobs must be empty
	Type    string // a key of Problem.Capacity, or "" for every type (or the types in Types)
	// Types, when non-empty, restricts the row to options whose type is
	// listed: keys of Problem.Capacity, each at most once. It is mutually
	// exclusive with Type.
	Types   []string
	MinGPUs int // >= 0; options with fewer GPUs do not count (0: all count)
	Limit   int // >= 0
}

// Counts reports whether option o (of a job the quota covers) counts toward
// the quota: its type matches (Type, or one of Types) and it has at least
// MinGPUs GPUs.
func (q *Quota) Counts(o Option) bool {
	return o.GPUs >= q.MinGPUs && q.countsType(o.Type)
}

// countsType reports whether options of type t count toward the quota
// (when large enough; see Counts).
func (q *Quota) countsType(t string) bool {
	switch {
	case q.Type != "":
		return t == q.Type
	case len(q.Types) > 0:
		return slices.Contains(q.Types, t)
	}
	return true
}

// members returns the indices of the jobs q covers in a problem of n jobs.
func (q *Quota) members(n int) []int {
	if !q.AllJobs {
		return q.Jobs
	}
	all := make([]int, n)
	for i := range all {
		all[i] = i
	}
	return all
}

// jobQuotaLists returns, per job of p, the indices of the quotas covering
// it in increasing order, all in one backing array (two allocations
// whatever the number of jobs: building it is linear and cheap enough for
// the time after a deadline). Entries of jobs no quota covers are nil.
func jobQuotaLists(p *Problem) [][]int {
	n := len(p.Jobs)
	out := make([][]int, n)
	if len(p.Quotas) == 0 {
		return out
	}
	var all []int // the quotas over every job
	cnt := make([]int, n)
	for qi := range p.Quotas {
		q := &p.Quotas[qi]
		if q.AllJobs {
			all = append(all, qi)
			continue
		}
		for _, ji := range q.Jobs {
			cnt[ji]++
		}
	}
	all = all[:len(all):len(all)]
	// the jobs no listed quota covers share the list all (the lists are
	// read-only): a copy per job would be jobs × quotas of work before the
	// clock is looked at, for an input of a few bytes per quota
	var listed []int // jobs some listed quota covers
	size := 0
	for ji, c := range cnt {
		if c > 0 {
			listed = append(listed, ji)
			size += c + len(all)
		} else if len(all) > 0 {
			out[ji] = all
		}
	}
	flat := make([]int, 0, size)
	pos := make([]int, n) // where job ji's list is in flat
	for _, ji := range listed {
		pos[ji] = len(flat)
		flat = flat[:len(flat)+cnt[ji]+len(all)]
		cnt[ji] = pos[ji] // from here on: the end of job ji's list so far
	}
	for qi := range p.Quotas {
		q := &p.Quotas[qi]
		jobs := q.Jobs
		if q.AllJobs {
			jobs = listed
		}
		for _, ji := range jobs {
			flat[cnt[ji]] = qi
			cnt[ji]++
		}
	}
	for _, ji := range listed {
		out[ji] = flat[pos[ji]:cnt[ji]:cnt[ji]]
	}
	return out
}

// Problem is one allocation round: choose at most one option per job so that,
// per GPU type, the chosen GPUs do not exceed Capacity minus Reserved, every
// quota holds and every pin holds, optimising the sum over jobs of the chosen
// option's Value (or the job's Unallocated value).
type Problem struct {
	Sense    Sense
	Capacity map[string]int // GPUs per type (>= 0; the sum over types at most MaxGPUs)
	Reserved map[string]int // GPUs per type withheld from this round (0 <= Reserved <= Capacity); may be nil
	Jobs     []Job
	Quotas   []Quota
	// Grid, when positive, declares that every Value and Unallocated is an
	// integer multiple of Grid (e.g. 0.01 for values rounded to two decimals),
	// up to floating-point noise of at most 0.1% of a step and 10^-6 of the
	// value (values stored in single precision qualify).
	// The solver then stops as soon as no solution can beat the incumbent by a
	// whole grid step. Values off the grid are an input error. 0 means values
	// are arbitrary.
	Grid float64
}

// gridTol and gridRelTol bound the slack allowed when checking that a value
// lies on the grid: at most gridTol of a grid step and at most gridRelTol of
// the value itself, so that the test means "a multiple of the step up to
// floating-point noise" for every step, however large next to the values.
// Values recorded in single precision (such as the published rounds, where
// 0.66 is stored as 0.6600000262, a relative error below 2^-24) stay well
// inside both; the solver accounts for the actual deviations when it uses
// the grid.
const (
	gridTol    = 1e-3
	gridRelTol = 1e-6
)

// MaxGPUs is the largest total capacity (the sum of Capacity over every
// type) a Problem may declare. Every sum of GPU counts the solver forms
// (usage of a row, capacity of the aggregate row, pinned GPUs) stays within
// twice this, far from overflowing int, and is exact in float64.
const MaxGPUs = 1 << 50

// MaxValueSum bounds the sum over jobs of each job's largest |Value| or
// |Unallocated|: within it every objective, profit and Lagrangian bound the
// solver computes is finite.
const MaxValueSum = 1e280

func jobField(i int, id string) string { return fmt.Sprintf("jobs[%d] %q", i, id) }

// onGrid reports whether v is within floating error of a multiple of grid
// (see gridTol).
func onGrid(v, grid float64) bool {
	return gridDev(v, grid) <= min(gridTol*grid, gridRelTol*math.Abs(v))
}

// OnGrid reports whether every Value and Unallocated of p lies on a grid of
// the given step (within the tolerance Validate allows), so that a caller
// can declare Grid = step. Sia's values, rounded to two decimals, are on the
// 0.01 grid.
func (p *Problem) OnGrid(step float64) bool {
	if !(step > 0) || math.IsInf(step, 0) {
		return false
	}
	for _, j := range p.Jobs {
		if !onGrid(j.Unallocated, step) {
			return false
		}
		for _, o := range j.Options {
			if !onGrid(o.Value, step) {
				return false
			}
		}
	}
	return true
}

// gridDev is the distance from v to the nearest multiple of grid (+Inf when
// v/grid overflows).
func gridDev(v, grid float64) float64 {
	d := math.Abs(v - math.Round(v/grid)*grid)
	if math.IsNaN(d) {
		return math.Inf(1)
	}
	return d
}

// addCount returns a + b for non-negative counts, saturating at math.MaxInt
// instead of wrapping around.
func addCount(a, b int) int {
	if b > math.MaxInt-a {
		return math.MaxInt
	}
	return a + b
}

// Validate checks p against every documented rule and returns the first
// violation as an *InputError wrapping ErrInvalidInput, or wrapping
// ErrInfeasible when the pins cannot all hold together.
func (p *Problem) Validate() error {
	_, err := p.validate(nil, nil)
	return err
}

// scan is what validating a problem learns on the way, for the solver: the
// scale of its values, their deviations from the grid, each job's best
// profit over staying unallocated, and each option's type row.
type scan struct {
	// checked is the number of jobs whose every option was validated: all
	// of them unless the clock stopped the validation (see validate).
	checked int
	scale   float64   // max(1, the largest |Value| or |Unallocated|)
	top     float64   // the largest |Value| or |Unallocated| (of the values read)
	dev     float64   // Σ_j gridDev(Unallocated) + max_o gridDev(Value) (Grid > 0)
	best    []float64 // per job: max(0, max_o ±(Value − Unallocated)); jobs < checked
	// rows holds the type row (the index in the sorted types) of every
	// option of the checked jobs, job after job, when the types are at
	// most maxRecordedTypes (else nil): the model's build reads it
	// instead of looking the types' names up again.
	rows []uint8
}

// maxRecordedTypes is the most types whose rows scan.rows records.
const maxRecordedTypes = 1 << 8

// validateChunk is the number of options validated between two looks at the
// clock: a few tens of microseconds.
const validateChunk = 1 << 11

// validate checks p as Validate does and returns what it learned (see scan).
// With a clock, it looks at the time every validateChunk options, and when
// the deadline has passed it stops reading options: the jobs from
// scan.checked on have only what a fallback plan uses checked: their
// Unallocated and Pin, their pinned option and their option in warm (a warm
// start, when it has one entry per job), not their other options nor the
// uniqueness of their IDs; the quotas and pins are checked in full. Validation is then incomplete, which the caller
// must treat as such (Solve falls back to the pins and the warm start).
func (p *Problem) validate(clk *clock, warm []int) (scan, error) {
	if err := p.validateSettings(); err != nil {
		return scan{}, err
	}
	types, err := p.validateCapacity()
	if err != nil {
		return scan{}, err
	}
	v := newValidator(p, types, clk, warm)
	for i := range p.Jobs {
		if err := v.job(i); err != nil {
			return v.sc, err
		}
	}
	if v.sc.checked < len(p.Jobs) {
		v.sc.rows = nil
	}
	trace("validate.jobs")
	if err := p.validateQuotas(); err != nil {
		return v.sc, err
	}
	trace("validate.quotas")
	return v.sc, p.checkPins()
}

// validateSettings checks the problem's sense and grid.
func (p *Problem) validateSettings() error {
	if p == nil {
		return invalid("", "nil problem")
	}
	if p.Sense != Minimize && p.Sense != Maximize {
		return invalid("sense", "must be Minimize or Maximize, got %d", int(p.Sense))
	}
	if math.IsNaN(p.Grid) || math.IsInf(p.Grid, 0) || p.Grid < 0 {
		return invalid("grid", "must be a finite non-negative number, got %v", p.Grid)
	}
	return nil
}

// validateCapacity checks the capacities (named types, non-negative, at
// most MaxGPUs in all) and the reservations (of known types, within their
// capacity), and returns the types sorted by name.
func (p *Problem) validateCapacity() ([]string, error) {
	total := 0
	types := slices.Sorted(maps.Keys(p.Capacity))
	for _, t := range types {
		if t == "" {
			return nil, invalid("capacity", "empty GPU type name")
		}
		c := p.Capacity[t]
		if c < 0 {
			return nil, invalid(fmt.Sprintf("capacity[%q]", t), "negative capacity %d", c)
		}
		if total = addCount(total, c); total > MaxGPUs {
			return nil, invalid(fmt.Sprintf("capacity[%q]", t), "capacity %d brings the total over every type above MaxGPUs (%d)", c, MaxGPUs)
		}
	}
	for _, t := range slices.Sorted(maps.Keys(p.Reserved)) {
		r := p.Reserved[t]
		c, ok := p.Capacity[t]
		switch {
		case !ok:
			return nil, invalid(fmt.Sprintf("reserved[%q]", t), "unknown GPU type")
		case r < 0:
			return nil, invalid(fmt.Sprintf("reserved[%q]", t), "negative reservation %d", r)
		case r > c:
			return nil, invalid(fmt.Sprintf("reserved[%q]", t), "reservation %d exceeds capacity %d", r, c)
		}
	}
	return types, nil
}

// validator is the state of the validation of a problem's jobs, one job at
// a time (see validate).
type validator struct {
	p        *Problem
	sc       scan
	clk      *clock
	warm     []int   // the warm start, when it has one entry per job
	sign     float64 // +1 maximise, -1 minimise
	invGrid  float64 // 1/Grid (used when Grid > 0)
	ids      idSet   // the jobs' IDs seen so far
	valueSum float64 // Σ_j max(|Unallocated|, max |Value|)
	work     int     // options since the last look at the clock
	types    *typeRows
	// the last option's type and its row: consecutive options mostly
	// share a type, looked up once
	lastType string
	lastRow  int32
	nrows    int // options recorded in sc.rows so far
}

func newValidator(p *Problem, types []string, clk *clock, warm []int) *validator {
	v := &validator{p: p, clk: clk, warm: warm, sign: 1, invGrid: 1 / p.Grid, ids: newIDSet(len(p.Jobs)), types: newTypeRows(types), lastRow: noRow}
	if p.Sense == Minimize {
		v.sign = -1
	}
	if len(warm) != len(p.Jobs) {
		v.warm = nil
	}
	v.sc.scale = 1
	v.sc.best = make([]float64, len(p.Jobs))
	v.sc.checked = len(p.Jobs)
	if len(types) <= maxRecordedTypes {
		n := 0
		for i := range p.Jobs {
			n += len(p.Jobs[i].Options)
		}
		v.sc.rows = make([]uint8, n)
	}
	return v
}

// job checks job i: its ID and Unallocated, then (until the clock stops
// the validation) every option, else the options a fallback plan may use;
// its pin; and the sum of the jobs' largest values so far.
func (v *validator) job(i int) error {
	j := &v.p.Jobs[i]
	if err := v.jobHeader(i); err != nil {
		return err
	}
	v.lookAtClock(i)
	top := math.Abs(j.Unallocated)
	if i < v.sc.checked {
		t, err := v.options(i)
		if err != nil {
			return err
		}
		top = math.Max(top, t)
	}
	if j.Pin < -1 || j.Pin >= len(j.Options) {
		return invalid(jobField(i, j.ID)+".pin", "index %d out of range (job has %d options; -1 = not pinned)", j.Pin, len(j.Options))
	}
	if i >= v.sc.checked {
		t, err := v.fallbackOptions(i)
		if err != nil {
			return err
		}
		top = math.Max(top, t)
	}
	v.sc.scale = math.Max(v.sc.scale, top)
	v.sc.top = math.Max(v.sc.top, top)
	if v.valueSum += top; !(v.valueSum <= MaxValueSum) {
		return invalid(jobField(i, j.ID), "values too large: the sum over jobs of the largest |value| exceeds MaxValueSum (%g), so objectives could overflow", MaxValueSum)
	}
	return nil
}

// jobHeader checks job i's ID (non-empty; unique among the checked jobs)
// and its Unallocated value (finite, on the grid).
func (v *validator) jobHeader(i int) error {
	p, j := v.p, &v.p.Jobs[i]
	if j.ID == "" {
		return invalid(fmt.Sprintf("jobs[%d]", i), "empty job ID")
	}
	if i < v.sc.checked {
		if k := v.ids.add(p.Jobs, i); k >= 0 {
			return invalid(jobField(i, j.ID), "duplicate job ID (also jobs[%d])", k)
		}
	}
	if math.IsNaN(j.Unallocated) || math.IsInf(j.Unallocated, 0) {
		return invalid(jobField(i, j.ID)+".unallocated", "value must be finite, got %v", j.Unallocated)
	}
	if p.Grid > 0 && !onGrid(j.Unallocated, p.Grid) {
		return invalid(jobField(i, j.ID)+".unallocated", "value %v is not on the declared grid %v", j.Unallocated, p.Grid)
	}
	return nil
}

// lookAtClock looks at the clock every validateChunk options and, once
// the validation's stage has ended, stops reading options from job i on
// (scan.checked).
func (v *validator) lookAtClock(i int) {
	if v.clk == nil || v.sc.checked != len(v.p.Jobs) {
		return
	}
	if v.work += len(v.p.Jobs[i].Options) + 8; v.work >= validateChunk {
		v.work = 0
		if past(v.clk.validateEnd) {
			v.sc.checked = i
		}
	}
}

// roundHalf is 1.5 × 2^52: adding and then subtracting it rounds a float64
// of magnitude below 2^51 to an integer (to even at ties): the nearest
// multiple of the grid without a call (see options).
const roundHalf = 0x1.8p52

// options checks every option of job i (known type, positive GPUs, finite
// value on the grid) and returns the largest |Value|; it records the job's
// best profit and its grid deviations in the scan, and its options' type
// rows (scan.rows). It reads the options twice: their numbers, without a
// branch that depends on them, then their types (in the first level of
// cache by then). A branch taken at each change of type, unpredictably,
// in the same pass cost the loads that streamed ahead of it: the pass was
// three times slower. Options that fail a check are checked again in
// order (checkedOptions), to name the first failure.
func (v *validator) options(i int) (float64, error) {
	p, j := v.p, &v.p.Jobs[i]
	top, best, dev := 0.0, 0.0, 0.0
	un, sign, grid, invGrid := j.Unallocated, v.sign, p.Grid, v.invGrid
	bad := false
	for k := range j.Options {
		o := &j.Options[k]
		bad = bad || o.GPUs <= 0 || o.Value-o.Value != 0
		top = max(top, math.Abs(o.Value))
		best = max(best, sign*(o.Value-un))
		if grid > 0 {
			// the distance to the nearest multiple, found with a
			// multiplication: the same multiple for every value near
			// the grid (those off it fail either way, and a tie is off
			// it whichever way it rounds); NaN fails the test below
			x := o.Value * invGrid
			r := (x + roundHalf) - roundHalf
			if !(math.Abs(x) < 0x1p51) {
				r = math.Round(x)
			}
			d := math.Abs(o.Value - r*grid)
			bad = bad || !(d <= min(gridTol*grid, gridRelTol*math.Abs(o.Value)))
			dev = max(dev, d)
		}
	}
	if bad || !v.optionTypes(i) {
		return v.checkedOptions(i)
	}
	v.sc.best[i] = best
	if grid > 0 {
		v.sc.dev += gridDev(un, grid) + dev
	}
	return top, nil
}

// optionTypes looks up the types of job i's options, records their rows
// (scan.rows) and reports whether every one is known.
func (v *validator) optionTypes(i int) bool {
	j := &v.p.Jobs[i]
	var rows []uint8
	if v.sc.rows != nil {
		rows = v.sc.rows[v.nrows : v.nrows+len(j.Options)]
	}
	lastType, lastRow := v.lastType, v.lastRow
	for k := range j.Options {
		if t := j.Options[k].Type; !sameString(t, lastType) || lastRow == noRow {
			lastType, lastRow = t, v.types.row(t)
			if lastRow == noRow {
				return false
			}
		}
		if rows != nil {
			rows[k] = uint8(lastRow)
		}
	}
	v.lastType, v.lastRow = lastType, lastRow
	v.nrows += len(rows)
	return true
}

// checkedOptions is options one option at a time, each checked in full in
// order: the first that fails is the error.
func (v *validator) checkedOptions(i int) (float64, error) {
	p, j := v.p, &v.p.Jobs[i]
	top, best, dev := 0.0, 0.0, 0.0
	un, sign, grid := j.Unallocated, v.sign, p.Grid
	for k := range j.Options {
		o := &j.Options[k]
		if err := v.optionErr(i, k); err != nil {
			return 0, err
		}
		top = max(top, math.Abs(o.Value))
		best = max(best, sign*(o.Value-un))
		if grid > 0 {
			dev = max(dev, gridDev(o.Value, grid))
		}
	}
	// every option is valid after all (values on the grid that the
	// multiplication by 1/Grid misjudged): record their rows
	v.optionTypes(i)
	v.sc.best[i] = best
	if grid > 0 {
		v.sc.dev += gridDev(un, grid) + dev
	}
	return top, nil
}

// fallbackOptions checks, for a job i the clock left unchecked, the
// options a fallback plan may use (its pinned option and its option in the
// warm start) and returns their largest |Value|.
func (v *validator) fallbackOptions(i int) (float64, error) {
	j := &v.p.Jobs[i]
	top := 0.0
	for _, k := range [2]int{j.Pin, warmOf(v.warm, i, len(j.Options))} {
		if k >= 0 {
			if err := v.optionErr(i, k); err != nil {
				return 0, err
			}
			top = math.Max(top, math.Abs(j.Options[k].Value))
		}
	}
	return top, nil
}

// optionErr checks option k of job i (see optionError), looking its type
// up only when it differs from the previous option's.
func (v *validator) optionErr(i, k int) error {
	o := &v.p.Jobs[i].Options[k]
	if !sameString(o.Type, v.lastType) || v.lastRow == noRow {
		v.lastType, v.lastRow = o.Type, v.types.row(o.Type)
	}
	if v.lastRow == noRow || o.GPUs <= 0 || o.Value-o.Value != 0 || v.p.Grid > 0 && !onGrid(o.Value, v.p.Grid) {
		return v.p.optionError(i, k)
	}
	return nil
}

// validateQuotas checks every quota: known type or types (not both, none
// twice), non-negative limit and minimum, and job indices in range, each
// at most once (none with AllJobs).
func (p *Problem) validateQuotas() error {
	var seen []int32 // seen[ji] = qi+1: job ji is listed by quota qi
	for qi := range p.Quotas {
		q := &p.Quotas[qi]
		f := quotaField(qi, q) // formatted for errors only: 4,000 quotas took 1.3 ms
		if err := p.quotaTypes(q, f); err != nil {
			return err
		}
		if q.Limit < 0 {
			return invalid(f()+".limit", "negative limit %d", q.Limit)
		}
		if q.MinGPUs < 0 {
			return invalid(f()+".min_gpus", "negative minimum %d", q.MinGPUs)
		}
		if q.AllJobs && len(q.Jobs) > 0 {
			return invalid(f()+".jobs", "must be empty when all_jobs is set (got %d jobs)", len(q.Jobs))
		}
		if len(q.Jobs) > 0 && seen == nil {
			seen = make([]int32, len(p.Jobs))
		}
		for _, ji := range q.Jobs {
			if ji < 0 || ji >= len(p.Jobs) {
				return invalid(f()+".jobs", "job index %d out of range [0,%d)", ji, len(p.Jobs))
			}
			if seen[ji] == int32(qi+1) {
				return invalid(f()+".jobs", "job index %d listed twice", ji)
			}
			seen[ji] = int32(qi + 1)
		}
	}
	return nil
}

// quotaField returns a function naming quota qi (q) in errors.
func quotaField(qi int, q *Quota) func() string {
	return func() string { return fmt.Sprintf("quotas[%d] %q", qi, q.Name) }
}

// quotaTypes checks quota q's Type and Types (f names the quota).
func (p *Problem) quotaTypes(q *Quota, f func() string) error {
	if q.Type != "" {
		if _, ok := p.Capacity[q.Type]; !ok {
			return invalid(f()+".type", "unknown GPU type %q", q.Type)
		}
		if len(q.Types) > 0 {
			return invalid(f()+".types", "must be empty when type is set (got %d types)", len(q.Types))
		}
	}
	for k, t := range q.Types {
		if _, ok := p.Capacity[t]; !ok {
			return invalid(fmt.Sprintf("%s.types[%d]", f(), k), "unknown GPU type %q", t)
		}
		if slices.Contains(q.Types[:k], t) {
			return invalid(fmt.Sprintf("%s.types[%d]", f(), k), "GPU type %q listed twice", t)
		}
	}
	return nil
}

// optionError checks option k of job i against the documented rules.
func (p *Problem) optionError(i, k int) error {
	o := p.Jobs[i].Options[k]
	// the field name is built only for an error
	of := func() string { return fmt.Sprintf("%s.options[%d]", jobField(i, p.Jobs[i].ID), k) }
	if _, ok := p.Capacity[o.Type]; !ok {
		return invalid(of()+".type", "unknown GPU type %q", o.Type)
	}
	if o.GPUs <= 0 {
		return invalid(of()+".gpus", "must be positive, got %d", o.GPUs)
	}
	if math.IsNaN(o.Value) || math.IsInf(o.Value, 0) {
		return invalid(of()+".value", "value must be finite, got %v", o.Value)
	}
	if p.Grid > 0 && !onGrid(o.Value, p.Grid) {
		return invalid(of()+".value", "value %v is not on the declared grid %v", o.Value, p.Grid)
	}
	return nil
}

// warmOf returns warm[i] when it is an option index of a job with n
// options, else -1.
func warmOf(warm []int, i, n int) int {
	if i < len(warm) && warm[i] >= 0 && warm[i] < n {
		return warm[i]
	}
	return -1
}

// checkPins verifies that the pinned options fit every capacity and quota row.
func (p *Problem) checkPins() error {
	used := make(map[string]int)
	for _, j := range p.Jobs {
		if j.Pin >= 0 {
			o := j.Options[j.Pin]
			used[o.Type] = addCount(used[o.Type], o.GPUs)
		}
	}
	for _, t := range slices.Sorted(maps.Keys(used)) {
		avail := p.Capacity[t] - p.Reserved[t]
		if used[t] > avail {
			return &InputError{
				Field:  fmt.Sprintf("capacity[%q]", t),
				Reason: fmt.Sprintf("pinned jobs need %s GPUs but only %d are available (%s)", countStr(used[t]), avail, pinnedOn(p, &Quota{Type: t}, nil)),
				Err:    ErrInfeasible,
			}
		}
	}
	// each quota's usage by the pins, in time linear in the pins and the
	// quotas' entries (pinsOnQuotas: not pins × quotas over every job)
	pinUse := pinsOnQuotas(p)
	for qi, q := range p.Quotas {
		if u := pinUse[qi]; u > q.Limit {
			return &InputError{
				Field:  fmt.Sprintf("quotas[%d] %q", qi, q.Name),
				Reason: fmt.Sprintf("pinned jobs need %s GPUs but the limit is %d (%s)", countStr(u), q.Limit, pinnedOn(p, &q, q.members(len(p.Jobs)))),
				Err:    ErrInfeasible,
			}
		}
	}
	return nil
}

// countStr prints a saturated sum of counts: "more than MaxInt" at the cap.
func countStr(n int) string {
	if n == math.MaxInt {
		return fmt.Sprintf("more than %d", math.MaxInt-1)
	}
	return fmt.Sprint(n)
}

// pinnedOn lists (at most a few) pinned jobs whose pinned option counts
// toward q, restricted to the given job indices when jobs is non-nil.
func pinnedOn(p *Problem, q *Quota, jobs []int) string {
	var idx []int
	if jobs == nil {
		for i := range p.Jobs {
			idx = append(idx, i)
		}
	} else {
		idx = append(idx, jobs...)
		sort.Ints(idx)
	}
	s, n := "pinned:", 0
	for _, i := range idx {
		j := p.Jobs[i]
		if j.Pin >= 0 && q.Counts(j.Options[j.Pin]) {
			if n == 5 {
				return s + " ..."
			}
			s += fmt.Sprintf(" %q=%d", j.ID, j.Options[j.Pin].GPUs)
			n++
		}
	}
	return s
}

// Objective returns the objective of an assignment (assign[i] = option index
// of job i, or -1 for none), summing values in job order. It does not check
// feasibility; see Check.
func (p *Problem) Objective(assign []int) float64 {
	var s float64
	if p == nil {
		return 0
	}
	for i, j := range p.Jobs {
		if i < len(assign) && assign[i] >= 0 && assign[i] < len(j.Options) {
			s += j.Options[assign[i]].Value
		} else {
			s += j.Unallocated
		}
	}
	return s
}

// Check returns an error wrapping ErrInvalidInput if assign is not a feasible
// assignment of p: wrong length, an index out of range, a pin not held, or a
// capacity (minus reservation) or quota exceeded. The message names the job,
// type or quota. It does not validate p itself (see Validate) but does not
// panic on an invalid p either.
func (p *Problem) Check(assign []int) error {
	if p == nil {
		return invalid("", "nil problem")
	}
	if len(assign) != len(p.Jobs) {
		return invalid("assignment", "has %d entries for %d jobs", len(assign), len(p.Jobs))
	}
	used := make(map[string]int)
	for i, j := range p.Jobs {
		a := assign[i]
		if a < -1 || a >= len(j.Options) {
			return invalid(jobField(i, j.ID), "assigned option %d out of range", a)
		}
		if j.Pin >= 0 && j.Pin < len(j.Options) && a != j.Pin {
			return invalid(jobField(i, j.ID), "pinned to option %d but assigned %d", j.Pin, a)
		}
		if a >= 0 {
			if o := j.Options[a]; o.GPUs > 0 {
				used[o.Type] = addCount(used[o.Type], o.GPUs)
			}
		}
	}
	for _, t := range slices.Sorted(maps.Keys(used)) {
		if avail := p.Capacity[t] - p.Reserved[t]; used[t] > avail {
			return invalid(fmt.Sprintf("capacity[%q]", t), "assignment uses %s GPUs, %d available", countStr(used[t]), avail)
		}
	}
	for qi, q := range p.Quotas {
		u := 0
		for _, ji := range q.members(len(p.Jobs)) {
			if ji < 0 || ji >= len(p.Jobs) {
				return invalid(fmt.Sprintf("quotas[%d] %q.jobs", qi, q.Name), "job index %d out of range [0,%d)", ji, len(p.Jobs))
			}
			if a := assign[ji]; a >= 0 && q.Counts(p.Jobs[ji].Options[a]) && p.Jobs[ji].Options[a].GPUs > 0 {
				u = addCount(u, p.Jobs[ji].Options[a].GPUs)
			}
		}
		if u > q.Limit {
			return invalid(fmt.Sprintf("quotas[%d] %q", qi, q.Name), "assignment uses %s GPUs, limit %d", countStr(u), q.Limit)
		}
	}
	return nil
}
