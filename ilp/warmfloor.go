package ilp

// keepWarm makes sol, the plan of a solve whose model the deadline cut
// short, at least as good as the warm start ws (feasible: search.warm is
// set), as Settings.WarmStart promises: the model's incumbent is chosen
// over the jobs the model holds only, and may take the capacity that ws
// gives to the jobs after them (model.rest), whose warm options then no
// longer fit. When sol is worse than ws, it becomes the pins and ws
// completed by the late admission (its warm pass keeps every profitable
// warm option, which all fit; its greedy pass only adds), whose objective
// is at least ws's. sol.Bound, a bound on every assignment, is kept.
func keepWarm(p *Problem, sol *Solution, ws, pins []int, clk *clock) {
	sign := 1.0
	if p.Sense == Minimize {
		sign = -1
	}
	if !(sign*(p.Objective(ws)-sol.Objective) > 0) {
		return
	}
	alt := append([]int(nil), pins...)
	if _, err := admitLate(p, alt, 0, ws, len(p.Jobs), clk, nil); err != nil {
		return // every option is validated: admitLate finds no error
	}
	if obj := p.Objective(alt); sign*(obj-sol.Objective) > 0 {
		sol.Assignment, sol.Objective = alt, obj
	}
}
