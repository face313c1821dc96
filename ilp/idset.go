package ilp

import "hash/maphash"

// idSet finds duplicate job IDs: an open-addressing table of job indices
// keyed by the IDs' hashes, sized once for every job. On 5,000 jobs a Go
// map took about 1.5 ms (its growth and per-entry bookkeeping); this
// table, one word per slot, a few hundred microseconds.
type idSet struct {
	slots []uint64 // per slot: the ID's hash's top 32 bits << 32 | (job index + 1); 0 is empty
	mask  uint64
	// hashes holds the hashes of the IDs of jobs from hashed on, computed
	// idBatch at a time in a loop of nothing else: the processor then
	// loads the IDs' bytes (each in a cache line of its own) together,
	// not one after the other (a third of the validation's time)
	hashes [idBatch]uint64
	hashed int
}

// idBatch is the number of IDs hashed together (see idSet.hashes).
const idBatch = 64

// idSeed seeds the IDs' hashes: the answers do not depend on it.
var idSeed = maphash.MakeSeed()

func newIDSet(n int) idSet {
	size := 16
	for size < 2*n {
		size *= 2
	}
	return idSet{slots: make([]uint64, size), mask: uint64(size - 1), hashed: -idBatch}
}

// hash returns the hash of job i's ID, hashing the IDs of jobs i to
// i+idBatch when it is not among those hashed last.
func (s *idSet) hash(jobs []Job, i int) uint64 {
	if i-s.hashed >= idBatch || i < s.hashed {
		s.hashed = i
		end := min(len(jobs), i+idBatch)
		for k := range jobs[i:end] {
			s.hashes[k] = maphash.String(idSeed, jobs[i+k].ID)
		}
	}
	return s.hashes[i-s.hashed]
}

// add records job i's ID (of the jobs) and returns the index of an earlier
// job with the same ID, or -1.
func (s *idSet) add(jobs []Job, i int) int {
	id := jobs[i].ID
	h := s.hash(jobs, i)
	tag := h >> 32 << 32
	for x := h & s.mask; ; x = (x + 1) & s.mask {
		v := s.slots[x]
		if v == 0 {
			s.slots[x] = tag | uint64(i+1)
			return -1
		}
		if v>>32<<32 == tag {
			if k := int(uint32(v)) - 1; jobs[k].ID == id {
				return k
			}
		}
	}
}
