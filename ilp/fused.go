package ilp

// validateBuild validates p as validate does and builds its model in the
// same pass: each job's model is built right after its options are
// validated, while they are still in the processor's cache (reading the
// 203,000 options of the 5,000-job corpus instances again cost the build
// a fifth of its time). It returns a nil model when the pass does not
// apply, and the caller then builds it (buildModel): when the quotas or
// the pins are invalid (the error must then be the first one validate
// reports, in its order), when the types are too many to record, and
// when the validation was cut short by the clock (scan.checked: the
// caller falls back), and when the pass is not expected to end well before
// the deadline (fuseBefore). The pass looks at the clock as buildModel
// does, and when the rest of it is no longer expected to end well before
// the deadline (a loaded machine), it validates the rest of the jobs
// first and builds their models after, until buildEnd, as buildModel
// does: the validation, about a third of the work, is then complete
// sooner.
func (p *Problem) validateBuild(clk *clock, warm []int) (scan, *model, error) {
	if err := p.validateSettings(); err != nil {
		return scan{}, nil, err
	}
	types, err := p.validateCapacity()
	if err != nil {
		return scan{}, nil, err
	}
	// (the pass starts with the build's setup, which is not interruptible:
	// 5,000 quotas of one job each took 3.8 ms of a 5 ms deadline before
	// the first job was read, and the solve ended 4.5 ms past it)
	if len(types) > maxRecordedTypes || !fuseBefore(clk, p.options()+int(setupCost(p)/fusedNanos)) || p.validateQuotas() != nil || !p.pinsValid() {
		sc, err := p.validate(clk, warm)
		return sc, nil, err
	}
	v := newValidator(p, types, clk, warm)
	m := newModelRows(p, v.sc)
	b := newBuilder(m)
	b.subtractPins()
	trace("build.setup")
	work, stop, rest := 0, -1, p.options()
	for i := range p.Jobs {
		if err := v.job(i); err != nil {
			return v.sc, nil, err
		}
		n := len(p.Jobs[i].Options)
		if rest -= n; stop >= 0 || i >= v.sc.checked || p.Jobs[i].Pin >= 0 {
			continue
		}
		// (when the rest is no longer expected to fit before the
		// deadline, it is validated first and built after: see
		// fuseBefore)
		if clk != nil && b.fuseOver(clk, i, &work, rest) {
			stop = i
			continue
		}
		b.add(i, v.sc.rows[v.nrows-n:v.nrows])
	}
	trace("validate.jobs")
	if v.sc.checked < len(p.Jobs) {
		v.sc.rows = nil
		return v.sc, nil, p.checkPins()
	}
	if err := p.checkPins(); err != nil {
		return v.sc, nil, err
	}
	m.scale, m.dev = v.sc.scale, v.sc.dev
	if stop >= 0 {
		b.buildJobs(stop, v.sc, clk)
	}
	b.finish()
	return v.sc, m, nil
}

// pinsValid reports whether every pin is an index of its job's options
// and every pinned option is valid (optionError), so that the model's
// rows can take the pins off before the jobs are validated.
func (p *Problem) pinsValid() bool {
	for i := range p.Jobs {
		j := &p.Jobs[i]
		if j.Pin == -1 {
			continue
		}
		if j.Pin < -1 || j.Pin >= len(j.Options) || p.optionError(i, j.Pin) != nil {
			return false
		}
	}
	return true
}

// options returns the number of options of p's jobs.
func (p *Problem) options() int {
	n := 0
	for i := range p.Jobs {
		n += len(p.Jobs[i].Options)
	}
	return n
}
