package ilp

// buildOver accounts for building job i and reports whether buildModel
// must stop before it (the clock's buildEnd has passed). The work of a job
// is its options times the rows each may use (its type's and the quotas
// covering the job): it looks at the clock once every validateChunk/16
// units, so that jobs under thousands of quotas are timed by what they
// cost, and jobs of a few options cost no look each.
func (b *builder) buildOver(clk *clock, i int, work *int) bool {
	n := len(b.p.Jobs[i].Options)
	if *work += (n + 8) * (1 + len(b.jobQuotas[i])); *work < validateChunk/16 {
		return false
	}
	*work = 0
	return past(clk.buildEnd)
}
