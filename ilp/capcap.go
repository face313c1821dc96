package ilp

// capToDemand lowers each coupling row's capacity to the most its jobs
// could ever use together: the sum over the model's jobs of the largest
// option each has on the row (a type row: options of that type; a quota
// row: options the quota counts, of the jobs it covers). Capacity beyond
// that no assignment can use, so the capped model has the same feasible
// assignments, optima and bounds; but the knapsack programs' tables and
// everything else sized by a row's capacity are then bounded by the
// input's size, not by capacity × jobs (a 6-job problem on 2^22 GPUs
// allocated 285 MB).
//
// Only a complete model is capped: the late admission of the jobs a
// deadline kept out of the model (model.rest) draws on the rows' capacity
// too. The type rows cost a pass over the groups; the quota rows a pass
// over the groups' row lists, which looks at the clock (by the entries
// read) and leaves the quota rows as they are when the build's time is up.
func (m *model) capToDemand(clk *clock) {
	if m.rest < len(m.p.Jobs) {
		return
	}
	ntypes := len(m.types)
	demand := make([]int, m.nrows) // Σ over jobs of the largest option on the row
	cur := make([]int, m.nrows)    // the current job's largest option on the row
	stamp := make([]int32, m.nrows)
	for r := range stamp {
		stamp[r] = -1
	}
	add := func(ji int32, r int32, g int) {
		if stamp[r] != ji {
			stamp[r], cur[r] = ji, 0
		}
		if g > cur[r] {
			demand[r] += g - cur[r]
			cur[r] = g
		}
	}
	quotas, work := ntypes < m.nrows, 0
	var tops []int // the largest option of each group of the job
	for ji := range m.jobs {
		j := &m.jobs[ji]
		tops = groupTops(j, tops)
		for gi := range j.groups {
			g := tops[gi]
			rows := j.groups[gi].rows
			add(int32(ji), rows[0], g) // the type row comes first (rowsOf)
			if !quotas {
				continue
			}
			for _, r := range rows[1:] {
				add(int32(ji), r, g)
			}
			if clk != nil {
				if work += len(rows) + 4; work >= tickWork {
					work = 0
					if past(clk.buildEnd) {
						quotas = false
					}
				}
			}
		}
	}
	capRows := m.nrows
	if !quotas {
		// the quota rows' sums are incomplete: cap the type rows only
		capRows = ntypes
	}
	for r := 0; r < capRows; r++ {
		m.cap[r] = min(m.cap[r], demand[r])
	}
}

// groupTops sets buf to the GPUs of the largest option of each group of
// job j, in one pass over its options.
func groupTops(j *mjob, buf []int) []int {
	if n := len(j.groups); cap(buf) < n {
		buf = make([]int, n)
	} else {
		buf = buf[:n]
		clear(buf)
	}
	for k := range j.opts {
		o := &j.opts[k]
		buf[o.grp] = max(buf[o.grp], o.g)
	}
	return buf
}
