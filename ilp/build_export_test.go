package ilp

// This file exports to the package's external tests and benchmarks the
// two phases Solve runs before its search: validation and the model's
// build.

// ValidateOnly validates p as Solve does without a deadline.
func ValidateOnly(p *Problem) error {
	_, err := p.validate(nil, nil)
	return err
}

// ModelBuilder validates p once and returns a function that builds its
// model (without a deadline) and returns the number of options it holds.
func ModelBuilder(p *Problem) (func() int, error) {
	sc, err := p.validate(nil, nil)
	if err != nil {
		return nil, err
	}
	return func() int {
		m := buildModel(p, sc, nil)
		n := 0
		for i := range m.jobs {
			n += len(m.jobs[i].opts)
		}
		return n
	}, nil
}

// FusedBuilder returns a function that validates p and builds its model in
// one pass (validateBuild, without a deadline) and returns the number of
// options the model holds (0 when the pass did not apply).
func FusedBuilder(p *Problem) func() int {
	return func() int {
		_, m, err := p.validateBuild(nil, nil)
		if err != nil || m == nil {
			return 0
		}
		n := 0
		for i := range m.jobs {
			n += len(m.jobs[i].opts)
		}
		return n
	}
}
