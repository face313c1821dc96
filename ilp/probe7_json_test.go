package ilp_test

import (
	"bytes"
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/sia-sched/sia/ilp"
)

// TestProbe7JSONMemory: the JSON reader's memory is bounded by its input:
// large arrays of every kind (jobs, options of one job, a quota's jobs, a
// capacity map of many types, a long ID, unknown-key errors deep in a big
// file) allocate at most a small multiple of the input's bytes.
func TestProbe7JSONMemory(t *testing.T) {
	if testing.Short() || raceEnabled {
		t.Skip("megabytes of JSON")
	}
	gen := func(f func(b *bytes.Buffer)) []byte {
		var b bytes.Buffer
		f(&b)
		return b.Bytes()
	}
	jobs := func(n int, opts string) func(b *bytes.Buffer) {
		return func(b *bytes.Buffer) {
			b.WriteString(`{"sense":"max","unallocated":0,"capacity":{"a":4},"jobs":[`)
			for i := range n {
				if i > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(b, `{"id":"j%d","options":[%s]}`, i, opts)
			}
			b.WriteString(`]}`)
		}
	}
	cases := []struct {
		name string
		in   []byte
		bad  string // "" when valid
	}{
		{"50k jobs without options", gen(jobs(50000, "")), ""},
		{"25k jobs of one option", gen(jobs(25000, `{"type":"a","gpus":1,"value":0.5}`)), ""},
		{"one job of 75k options", gen(func(b *bytes.Buffer) {
			b.WriteString(`{"sense":"max","unallocated":0,"capacity":{"a":4},"jobs":[{"id":"j","options":[`)
			for i := range 75000 {
				if i > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(b, `{"type":"a","gpus":%d,"value":%d.5}`, 1+i%4, i%7)
			}
			b.WriteString(`]}]}`)
		}), ""},
		{"a quota over 25k jobs", gen(func(b *bytes.Buffer) {
			jobs(25000, "")(b)
			b.Truncate(b.Len() - 1)
			b.WriteString(`,"quotas":[{"name":"q","limit":3,"jobs":[`)
			for i := range 25000 {
				if i > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(b, `"j%d"`, i)
			}
			b.WriteString(`]}]}`)
		}), ""},
		{"25k types", gen(func(b *bytes.Buffer) {
			b.WriteString(`{"sense":"max","unallocated":0,"capacity":{`)
			for i := range 25000 {
				if i > 0 {
					b.WriteByte(',')
				}
				fmt.Fprintf(b, `"t%d":%d`, i, i%9)
			}
			b.WriteString(`},"jobs":[{"id":"j","options":[{"type":"t7","gpus":1,"value":1}]}]}`)
		}), ""},
		{"an ID of 2 MB", []byte(`{"sense":"max","unallocated":0,"capacity":{"a":4},"jobs":[{"id":"` + strings.Repeat("x", 2<<20) + `"}]}`), ""},
		{"unknown key after 25k jobs", gen(func(b *bytes.Buffer) {
			jobs(25000, `{"type":"a","gpus":1,"value":0.5}`)(b)
			b.Truncate(b.Len() - 1)
			b.WriteString(`,"extra":1}`)
		}), `"extra"`},
		{"duplicate job ID at the end", gen(func(b *bytes.Buffer) {
			jobs(25000, "")(b)
			b.Truncate(b.Len() - 2)
			b.WriteString(`,{"id":"j5"}]}`)
		}), `"j5"`},
	}
	var ms runtime.MemStats
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			runtime.GC()
			runtime.ReadMemStats(&ms)
			a0 := ms.TotalAlloc
			p, _, err := ilp.ParseJSON(c.in)
			runtime.ReadMemStats(&ms)
			ratio := float64(ms.TotalAlloc-a0) / float64(len(c.in))
			t.Logf("%d bytes of input, %.2f bytes allocated per byte", len(c.in), ratio)
			if c.bad == "" {
				require.NoError(t, err)
				require.NotNil(t, p)
			} else {
				require.ErrorIs(t, err, ilp.ErrInvalidInput)
				assert.Contains(t, err.Error(), c.bad)
			}
			assert.Less(t, ratio, 40.0, "bytes allocated per byte of input")
		})
	}
}
