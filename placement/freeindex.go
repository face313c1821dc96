package placement

import "math/bits"

// The free-count index: per pool and free GPU count f, the set of the
// pool's nodes with exactly f free GPUs (a bitset over the pool's nodes, in
// node order), kept up to date as GPUs are taken and given back. Best fit
// then looks at the sets from the part's size up instead of at every node
// of the pool: a start costs O(node size × pool nodes / 64), not O(pool
// nodes).

// freeIndex is the index of one pool.
type freeIndex struct {
	words int      // words per set
	sets  []uint64 // set f at [f*words, (f+1)*words)
}

// indexFree builds every pool's index with every node at its free count,
// and each node's position in its pools.
func (p *problem) indexFree() {
	if len(p.fidx) != len(p.pools) {
		p.fidx = make([]freeIndex, len(p.pools))
	}
	for pl, nodes := range p.pnodes {
		largest := 0
		for k, n := range nodes {
			nd := &p.nodes[n]
			largest = max(largest, nd.gpus)
			if pl == nd.pool {
				nd.at[0] = int32(k)
			} else {
				nd.at[1] = int32(k)
			}
		}
		fi := &p.fidx[pl]
		fi.words = (len(nodes) + 63) / 64
		fi.sets = grown(fi.sets, (largest+1)*fi.words)
		clear(fi.sets)
		for k, n := range nodes {
			fi.sets[p.free[n]*fi.words+k/64] |= 1 << (k % 64)
		}
	}
}

// addFree changes the free GPUs of node n by d.
func (p *problem) addFree(n, d int) {
	nd := &p.nodes[n]
	old := p.free[n]
	p.free[n] = old + d
	for q, pl := range [2]int{nd.pool, nd.mixed} {
		if pl < 0 {
			continue
		}
		fi := &p.fidx[pl]
		k := int(nd.at[q])
		w, bit := k/64, uint64(1)<<(k%64)
		fi.sets[old*fi.words+w] &^= bit
		fi.sets[(old+d)*fi.words+w] |= bit
	}
}

// bestFit returns the node of pool pk, not in used, with the fewest free
// GPUs that are at least size (ties: earliest node), or -1.
func (p *problem) bestFit(pk int, size int, used usedSet) int {
	fi := &p.fidx[pk]
	nodes := p.pnodes[pk]
	for f := size; f*fi.words < len(fi.sets); f++ {
		set := fi.sets[f*fi.words : (f+1)*fi.words]
		for w, x := range set {
			for ; x != 0; x &= x - 1 {
				if n := nodes[w*64+bits.TrailingZeros64(x)]; !used.has(n) {
					return n
				}
			}
		}
	}
	return -1
}

// bestFitScan is bestFit by a scan of the pool's nodes (its brute-force
// twin in tests).
func (p *problem) bestFitScan(pk int, size int, used usedSet) int {
	best := -1
	for _, n := range p.pnodes[pk] {
		f := p.free[n]
		if f < size || used.has(n) {
			continue
		}
		if best < 0 || f < p.free[best] {
			best = n
			if f == size {
				break
			}
		}
	}
	return best
}
