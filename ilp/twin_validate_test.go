package ilp

import (
	"fmt"
	"maps"
	"math"
	"slices"
	"time"
)

// This file keeps Problem.validate as it was before it was split into its
// steps as a naive twin: TestValidateTwin asserts that both return the
// same scan and the same error.

func twinValidate(p *Problem, clk *clock, warm []int) (scan, error) {
	var sc scan
	if p == nil {
		return sc, invalid("", "nil problem")
	}
	if p.Sense != Minimize && p.Sense != Maximize {
		return sc, invalid("sense", "must be Minimize or Maximize, got %d", int(p.Sense))
	}
	if math.IsNaN(p.Grid) || math.IsInf(p.Grid, 0) || p.Grid < 0 {
		return sc, invalid("grid", "must be a finite non-negative number, got %v", p.Grid)
	}
	types := slices.Sorted(maps.Keys(p.Capacity))
	total := 0
	for _, t := range types {
		if t == "" {
			return sc, invalid("capacity", "empty GPU type name")
		}
		c := p.Capacity[t]
		if c < 0 {
			return sc, invalid(fmt.Sprintf("capacity[%q]", t), "negative capacity %d", c)
		}
		if total = addCount(total, c); total > MaxGPUs {
			return sc, invalid(fmt.Sprintf("capacity[%q]", t), "capacity %d brings the total over every type above MaxGPUs (%d)", c, MaxGPUs)
		}
	}
	for _, t := range slices.Sorted(maps.Keys(p.Reserved)) {
		r := p.Reserved[t]
		c, ok := p.Capacity[t]
		switch {
		case !ok:
			return sc, invalid(fmt.Sprintf("reserved[%q]", t), "unknown GPU type")
		case r < 0:
			return sc, invalid(fmt.Sprintf("reserved[%q]", t), "negative reservation %d", r)
		case r > c:
			return sc, invalid(fmt.Sprintf("reserved[%q]", t), "reservation %d exceeds capacity %d", r, c)
		}
	}
	sign := 1.0
	if p.Sense == Minimize {
		sign = -1
	}
	sc.scale = 1
	sc.best = make([]float64, len(p.Jobs))
	if len(warm) != len(p.Jobs) {
		warm = nil
	}
	ids := make(map[string]int, len(p.Jobs))
	valueSum := 0.0 // Σ_j max(|Unallocated|, max |Value|)
	lastType, lastKnown := "", false
	// optionErr checks option k of job i, looking the type up only when
	// it differs from the previous option's (consecutive options mostly
	// share a type)
	optionErr := func(i, k int, o Option) error {
		if o.Type != lastType || !lastKnown {
			_, lastKnown = p.Capacity[o.Type]
			lastType = o.Type
		}
		if !lastKnown || o.GPUs <= 0 || o.Value-o.Value != 0 || p.Grid > 0 && !onGrid(o.Value, p.Grid) {
			return p.optionError(i, k)
		}
		return nil
	}
	sc.checked = len(p.Jobs)
	invGrid := 1 / p.Grid // (used when Grid > 0)
	work := 0
	for i := range p.Jobs {
		j := &p.Jobs[i]
		f := func() string { return jobField(i, j.ID) }
		if j.ID == "" {
			return sc, invalid(fmt.Sprintf("jobs[%d]", i), "empty job ID")
		}
		if i < sc.checked {
			if k, dup := ids[j.ID]; dup {
				return sc, invalid(f(), "duplicate job ID (also jobs[%d])", k)
			}
			ids[j.ID] = i
		}
		if math.IsNaN(j.Unallocated) || math.IsInf(j.Unallocated, 0) {
			return sc, invalid(f()+".unallocated", "value must be finite, got %v", j.Unallocated)
		}
		if p.Grid > 0 && !onGrid(j.Unallocated, p.Grid) {
			return sc, invalid(f()+".unallocated", "value %v is not on the declared grid %v", j.Unallocated, p.Grid)
		}
		if clk != nil && sc.checked == len(p.Jobs) {
			if work += len(j.Options) + 8; work >= validateChunk {
				work = 0
				if past(clk.validateEnd) {
					sc.checked = i
				}
			}
		}
		top := math.Abs(j.Unallocated)
		if i < sc.checked {
			best, dev := 0.0, 0.0
			for k := range j.Options {
				o := &j.Options[k]
				// the common case inline; optionErr names the problem
				if o.Type != lastType || !lastKnown || o.GPUs <= 0 || o.Value-o.Value != 0 {
					if err := optionErr(i, k, *o); err != nil {
						return sc, err
					}
				}
				if a := math.Abs(o.Value); a > top {
					top = a
				}
				if v := sign * (o.Value - j.Unallocated); v > best {
					best = v
				}
				if p.Grid > 0 {
					// gridDev with a multiplication: the same nearest
					// multiple for every value near the grid (those off it
					// fail either way); NaN fails the test below
					d := math.Abs(o.Value - math.Round(o.Value*invGrid)*p.Grid)
					if !(d <= min(gridTol*p.Grid, gridRelTol*math.Abs(o.Value))) {
						if err := optionErr(i, k, *o); err != nil {
							return sc, err
						}
						// on the grid after all (1/Grid overflows)
						d = gridDev(o.Value, p.Grid)
					}
					dev = max(dev, d)
				}
			}
			sc.best[i] = best
			if p.Grid > 0 {
				sc.dev += gridDev(j.Unallocated, p.Grid) + dev
			}
		}
		if j.Pin < -1 || j.Pin >= len(j.Options) {
			return sc, invalid(f()+".pin", "index %d out of range (job has %d options; -1 = not pinned)", j.Pin, len(j.Options))
		}
		if i >= sc.checked {
			// out of time: only the options a fallback plan may use
			for x := range 2 {
				k := j.Pin
				if x == 1 {
					k = warmOf(warm, i, len(j.Options))
				}
				if k >= 0 {
					if err := optionErr(i, k, j.Options[k]); err != nil {
						return sc, err
					}
					top = math.Max(top, math.Abs(j.Options[k].Value))
				}
			}
		}
		sc.scale = math.Max(sc.scale, top)
		if valueSum += top; !(valueSum <= MaxValueSum) {
			return sc, invalid(f(), "values too large: the sum over jobs of the largest |value| exceeds MaxValueSum (%g), so objectives could overflow", MaxValueSum)
		}
	}
	trace("validate.jobs")
	var seen []int32 // seen[ji] = qi+1: job ji is listed by quota qi
	for qi, q := range p.Quotas {
		f := fmt.Sprintf("quotas[%d] %q", qi, q.Name)
		if q.Type != "" {
			if _, ok := p.Capacity[q.Type]; !ok {
				return sc, invalid(f+".type", "unknown GPU type %q", q.Type)
			}
			if len(q.Types) > 0 {
				return sc, invalid(f+".types", "must be empty when type is set (got %d types)", len(q.Types))
			}
		}
		for k, t := range q.Types {
			if _, ok := p.Capacity[t]; !ok {
				return sc, invalid(fmt.Sprintf("%s.types[%d]", f, k), "unknown GPU type %q", t)
			}
			if slices.Contains(q.Types[:k], t) {
				return sc, invalid(fmt.Sprintf("%s.types[%d]", f, k), "GPU type %q listed twice", t)
			}
		}
		if q.Limit < 0 {
			return sc, invalid(f+".limit", "negative limit %d", q.Limit)
		}
		if q.MinGPUs < 0 {
			return sc, invalid(f+".min_gpus", "negative minimum %d", q.MinGPUs)
		}
		if q.AllJobs && len(q.Jobs) > 0 {
			return sc, invalid(f+".jobs", "must be empty when all_jobs is set (got %d jobs)", len(q.Jobs))
		}
		if len(q.Jobs) > 0 && seen == nil {
			seen = make([]int32, len(p.Jobs))
		}
		for _, ji := range q.Jobs {
			if ji < 0 || ji >= len(p.Jobs) {
				return sc, invalid(f+".jobs", "job index %d out of range [0,%d)", ji, len(p.Jobs))
			}
			if seen[ji] == int32(qi+1) {
				return sc, invalid(f+".jobs", "job index %d listed twice", ji)
			}
			seen[ji] = int32(qi + 1)
		}
	}
	trace("validate.quotas")
	return sc, p.checkPins()
}

// TwinValidateCheck validates p (with warm as the warm start, and no
// deadline) with Problem.validate and its naive twin and returns an error
// naming the first difference between their scans or errors (nil when
// they agree), and the error both returned.
func TwinValidateCheck(p *Problem, warm []int) (same, err error) {
	// without a clock, and with one whose validation stage has ended
	// (validation stops at its first look at it)
	for _, clk := range []*clock{nil, {validateEnd: time.Unix(1, 0)}} {
		a, errA := twinValidate(p, clk, warm)
		b, errB := p.validate(clk, warm)
		if fmt.Sprint(errA) != fmt.Sprint(errB) {
			return fmt.Errorf("clock %v: error %v, want %v", clk != nil, errB, errA), errA
		}
		// the pass that builds the model as it validates
		c, _, errC := p.validateBuild(clk, warm)
		if fmt.Sprint(errA) != fmt.Sprint(errC) {
			return fmt.Errorf("clock %v: validateBuild's error %v, want %v", clk != nil, errC, errA), errA
		}
		if errA == nil && (a.checked != c.checked || a.scale != c.scale || a.dev != c.dev || !slices.Equal(a.best[:a.checked], c.best[:c.checked])) {
			return fmt.Errorf("clock %v: validateBuild's scan %+v, want %+v", clk != nil, c, a), nil
		}
		if errA != nil {
			if clk == nil {
				err = errA
			}
			continue
		}
		if a.checked != b.checked || a.scale != b.scale || a.dev != b.dev || !slices.Equal(a.best[:a.checked], b.best[:b.checked]) {
			return fmt.Errorf("clock %v: scan %+v, want %+v", clk != nil, b, a), nil
		}
	}
	return nil, err
}

// TwinValidateOnly is ValidateOnly with the naive twin, for
// BenchmarkBuild's comparison.
func TwinValidateOnly(p *Problem) error {
	_, err := twinValidate(p, nil, nil)
	return err
}
