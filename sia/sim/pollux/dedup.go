package pollux

import (
	"hash/maphash"
	"slices"
	"unsafe"
)

// dedup is a set of states for the search's duplicate elimination: an
// open-addressing table of the added states (which must not change while
// in the set). States are compared element by element, so the set is exact;
// the hash seed only decides where states are stored, never the answers.
type dedup struct {
	seed  maphash.Seed
	slots []int32 // index+1 into keys, 0 = empty
	keys  [][]int8
}

// reset empties the set and makes room for n states.
func (d *dedup) reset(n int) {
	if len(d.slots) == 0 {
		d.seed = maphash.MakeSeed()
	}
	size := 16
	for size < 2*n {
		size *= 2
	}
	if len(d.slots) < size {
		d.slots = make([]int32, size)
	} else {
		clear(d.slots)
	}
	d.keys = d.keys[:0]
}

// add inserts x and reports whether it was absent.
func (d *dedup) add(x []int8) bool {
	if 2*(len(d.keys)+1) > len(d.slots) {
		d.grow()
	}
	mask := uint64(len(d.slots) - 1)
	for i := maphash.Bytes(d.seed, int8Bytes(x)) & mask; ; i = (i + 1) & mask {
		k := d.slots[i]
		if k == 0 {
			d.keys = append(d.keys, x)
			d.slots[i] = int32(len(d.keys))
			return true
		}
		if slices.Equal(d.keys[k-1], x) {
			return false
		}
	}
}

// grow doubles the table and re-inserts the states.
func (d *dedup) grow() {
	keys := d.keys
	d.slots = make([]int32, 2*len(d.slots))
	d.keys = nil
	for _, x := range keys {
		d.add(x)
	}
}

// int8Bytes views a state as bytes, for hashing.
func int8Bytes(x []int8) []byte {
	if len(x) == 0 {
		return nil
	}
	return unsafe.Slice((*byte)(unsafe.Pointer(&x[0])), len(x))
}
