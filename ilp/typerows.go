package ilp

import (
	"unsafe"
)

// typeRows finds the row of an option's GPU type, the type's index among
// the problem's types sorted by name, for the validation, which records it
// per option for the model's build (scan.rows): the build then compares no
// type name.
//
// Options mostly share a handful of type strings: a host builds them from
// its own names (one string per type), and a decoder from the input's
// bytes (one string per option). A string is looked up first in a small
// cache keyed by where its bytes are and its length, which answers the
// first kind without comparing bytes; then in the sorted names (a map when
// there are many).
type typeRows struct {
	names []string         // the types, sorted
	index map[string]int32 // name → row, when names are too many to scan
	cache [typeCacheSize]typeSlot
}

// typeSlot is one entry of typeRows' cache: the bytes' address and length
// of a string known to name type row.
type typeSlot struct {
	ptr *byte
	n   int
	row int32
}

// typeCacheSize is the number of typeRows' cache entries (a power of two),
// and typeScanMax the most names looked up by a linear scan.
// typeProbes the entries a string may occupy (from typeSlotOf on).
const (
	typeCacheSize = 64
	typeProbes    = 4
	typeScanMax   = 16
)

// noRow is the row of a string that names no type.
const noRow = -1

func newTypeRows(names []string) *typeRows {
	tr := &typeRows{names: names}
	if len(names) > typeScanMax {
		tr.index = make(map[string]int32, len(names))
		for r, t := range names {
			tr.index[t] = int32(r)
		}
	}
	return tr
}

// row returns t's type row, or noRow when t names no type.
func (tr *typeRows) row(t string) int32 {
	p := unsafe.StringData(t)
	x := typeSlotOf(p)
	for range typeProbes {
		if s := &tr.cache[x]; s.ptr == p && s.n == len(t) && p != nil {
			return s.row
		} else if s.ptr == nil {
			break
		}
		x = (x + 1) % typeCacheSize
	}
	r := tr.lookup(t)
	if r != noRow && p != nil {
		// the first free entry of t's probes, else its first
		x := typeSlotOf(p)
		for range typeProbes - 1 {
			if tr.cache[x].ptr == nil {
				break
			}
			x = (x + 1) % typeCacheSize
		}
		tr.cache[x] = typeSlot{ptr: p, n: len(t), row: r}
	}
	return r
}

// typeSlotOf is the cache entry of a string whose bytes are at p.
func typeSlotOf(p *byte) uint {
	return uint((uint64(uintptr(unsafe.Pointer(p))) * 0x9e3779b97f4a7c15) >> (64 - 6))
}

// lookup finds t among the names, without the cache.
func (tr *typeRows) lookup(t string) int32 {
	if tr.index != nil {
		if r, ok := tr.index[t]; ok {
			return r
		}
		return noRow
	}
	for r, n := range tr.names {
		if n == t {
			return int32(r)
		}
	}
	return noRow
}

// sameString reports whether a and b are equal, comparing their bytes only
// when they are not the same bytes.
func sameString(a, b string) bool {
	return len(a) == len(b) && (unsafe.StringData(a) == unsafe.StringData(b) || a == b)
}
