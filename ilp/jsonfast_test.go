package ilp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// checkFast reports whether fastDecode accepts data and, when it does,
// requires encoding/json (decodeJSON) to accept data with an equal result.
func checkFast(t testing.TB, data []byte) bool {
	t.Helper()
	got, ok := fastDecode(data)
	if !ok {
		return false
	}
	want, err := decodeJSON(data)
	require.NoError(t, err, "fastDecode accepted %q", data)
	require.Equal(t, want, got, "input %q", data)
	return true
}

// readCorpusFile returns the input of a "go test fuzz v1" file holding one
// []byte value.
func readCorpusFile(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	require.Len(t, lines, 2, path)
	require.Equal(t, "go test fuzz v1", lines[0], path)
	lit, ok := strings.CutPrefix(lines[1], "[]byte(")
	require.True(t, ok, path)
	lit, ok = strings.CutSuffix(lit, ")")
	require.True(t, ok, path)
	s, err := strconv.Unquote(lit)
	require.NoError(t, err, path)
	return []byte(s)
}

// TestFastDecodeTestdata runs the differential check on every JSON file and
// fuzz corpus entry under testdata.
func TestFastDecodeTestdata(t *testing.T) {
	n := 0
	err := filepath.WalkDir("testdata", func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		switch {
		case strings.HasSuffix(path, ".json"):
			data, err := os.ReadFile(path)
			require.NoError(t, err)
			checkFast(t, data)
			n++
		case strings.Contains(path, "FuzzParseJSON") || strings.Contains(path, "FuzzFastDecode"):
			checkFast(t, readCorpusFile(t, path))
			n++
		}
		return nil
	})
	require.NoError(t, err)
	t.Logf("%d inputs", n)
}

// TestFastDecodeGenerated writes random problems with WriteJSON, compact and
// indented, and requires fastDecode to accept them with the result of
// encoding/json, and ParseJSON to give the problem back.
func TestFastDecodeGenerated(t *testing.T) {
	for seed := range uint64(200) {
		rng := rand.New(rand.NewPCG(seed, 7))
		p := randomProblem(rng, rng.IntN(12), 4)
		if seed%3 == 0 {
			p.Grid = 0
			for i := range p.Jobs {
				for k := range p.Jobs[i].Options {
					p.Jobs[i].Options[k].Value = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(40)-20))
				}
			}
		}
		if rng.IntN(2) == 0 {
			p.Reserved = map[string]int{"a100": rng.IntN(513)}
		}
		for range rng.IntN(3) {
			q := Quota{Name: fmt.Sprintf("q%d", rng.IntN(100)), Limit: rng.IntN(100), MinGPUs: rng.IntN(3) * 8}
			if rng.IntN(2) == 0 {
				q.Type = "rtx"
			}
			if rng.IntN(3) == 0 {
				q.AllJobs = true
			} else {
				for i := range p.Jobs {
					if rng.IntN(2) == 0 {
						q.Jobs = append(q.Jobs, i)
					}
				}
			}
			p.Quotas = append(p.Quotas, q)
		}
		if p.Validate() != nil { // pinned jobs over a quota's limit
			p.Quotas = nil
		}
		meta := Meta{}
		if rng.IntN(2) == 0 {
			opt := math.Round(rng.NormFloat64()*1e4) / 100
			meta = Meta{Name: fmt.Sprintf("round-%d", seed), Optimum: &opt}
		}
		var buf bytes.Buffer
		require.NoError(t, WriteJSON(&buf, p, meta))
		var indented bytes.Buffer
		require.NoError(t, json.Indent(&indented, buf.Bytes(), " ", "\t"))
		for _, data := range [][]byte{buf.Bytes(), indented.Bytes()} {
			require.True(t, checkFast(t, data), "fastDecode falls back on WriteJSON output %s", data)
			q, m, err := ParseJSON(data)
			require.NoError(t, err)
			assert.Equal(t, p, q)
			assert.Equal(t, meta, m)
		}
	}
}

// TestFastDecodeFallback lists inputs that fastDecode must leave to
// encoding/json, built by replacing a part of an input it accepts.
func TestFastDecodeFallback(t *testing.T) {
	const base = `{"name":"r","optimum":2.5,"sense":"min","unallocated":1.1,"capacity":{"t4":24,"a100":16},` +
		`"reserved":{"t4":1},"grid":0.01,` +
		`"jobs":[{"id":"j0","options":[{"type":"t4","gpus":1,"value":0.71}],"pin":0},{"id":"j1","options":[]}],` +
		`"quotas":[{"name":"q","jobs":["j0"],"all_jobs":false,"type":"t4","min_gpus":2,"limit":8}]}`
	require.True(t, checkFast(t, []byte(base)))
	require.True(t, checkFast(t, []byte(" \t\r\n"+base+"\n\n")), "JSON whitespace around")
	for _, tc := range []struct{ name, old, new string }{
		{"escaped string", `"j0","options"`, `"j\u0030","options"`},
		{"escaped slash", `"name":"r"`, `"name":"\/"`},
		{"non-ASCII", `"name":"r"`, `"name":"é"`},
		{"invalid UTF-8", `"name":"r"`, "\"name\":\"\xff\""},
		{"raw tab in string", `"name":"r"`, "\"name\":\"a\tb\""},
		{"upper-case key", `"sense"`, `"Sense"`},
		{"upper-case option key", `"gpus"`, `"GPUS"`},
		{"unknown key", `"grid":0.01`, `"grid":0.01,"foo":1`},
		{"duplicate key", `"sense":"min"`, `"sense":"min","sense":"max"`},
		{"duplicate map key", `{"t4":24,`, `{"t4":24,"t4":25,`},
		{"duplicate option key", `"gpus":1,`, `"gpus":1,"gpus":2,`},
		{"duplicate quota key", `"limit":8`, `"limit":8,"limit":9`},
		{"float gpus", `"gpus":1`, `"gpus":1.0`},
		{"exponent gpus", `"gpus":1`, `"gpus":1e2`},
		{"negative zero pin", `"pin":0`, `"pin":-0`},
		{"int overflow", `"gpus":1`, `"gpus":99999999999999999999`},
		{"float overflow", `"value":0.71`, `"value":1e999`},
		{"leading zero", `"gpus":1`, `"gpus":01`},
		{"plus sign", `"value":0.71`, `"value":+0.71`},
		{"bare fraction", `"value":0.71`, `"value":.71`},
		{"empty fraction", `"value":0.71`, `"value":1.`},
		{"empty exponent", `"value":0.71`, `"value":1e`},
		{"NaN", `"value":0.71`, `"value":NaN`},
		{"string number", `"value":0.71`, `"value":"0.71"`},
		{"number string", `"id":"j0"`, `"id":0`},
		{"null optimum", `"optimum":2.5`, `"optimum":null`},
		{"null jobs", `"jobs":[{"id":"j0","options":[{"type":"t4","gpus":1,"value":0.71}],"pin":0},{"id":"j1","options":[]}]`, `"jobs":null`},
		{"null option", `"options":[]`, `"options":[null]`},
		{"null gpus", `"gpus":1`, `"gpus":null`},
		{"all_jobs number", `"all_jobs":false`, `"all_jobs":0`},
		{"all_jobs capitalised", `"all_jobs":false`, `"all_jobs":False`},
		{"object for array", `"options":[]`, `"options":{}`},
		{"array for object", `"capacity":{"t4":24,"a100":16}`, `"capacity":[]`},
		{"nested array", `"jobs":["j0"]`, `"jobs":[["j0"]]`},
		{"missing comma", `"sense":"min",`, `"sense":"min"`},
		{"missing colon", `"sense":"min"`, `"sense" "min"`},
		{"trailing comma object", `"limit":8}`, `"limit":8,}`},
		{"trailing comma array", `"options":[]`, `"options":[{"type":"t4","gpus":1,"value":0.7},]`},
		{"trailing garbage", `"limit":8}]}`, `"limit":8}]} x`},
		{"second object", `"limit":8}]}`, `"limit":8}]}{}`},
		{"truncated", `"limit":8}]}`, `"limit":8}]`},
		{"vertical tab", `"sense":"min",`, "\"sense\":\v\"min\","},
		{"BOM", `{"name":"r"`, "\ufeff{\"name\":\"r\""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, 1, strings.Count(base, tc.old), "old text must occur once")
			in := strings.Replace(base, tc.old, tc.new, 1)
			_, ok := fastDecode([]byte(in))
			assert.False(t, ok, "fastDecode accepted %s", in)
		})
	}
	for _, in := range []string{"", " ", "[]", "null", `"x"`, "{", `{"sense"`, `{"sense":`, `{"sense":"min"`} {
		_, ok := fastDecode([]byte(in))
		assert.False(t, ok, "fastDecode accepted %q", in)
	}
}

// FuzzFastDecode checks that whenever fastDecode accepts an input,
// encoding/json accepts it too with an equal result.
func FuzzFastDecode(f *testing.F) {
	f.Add([]byte(`{"sense":"min","unallocated":1.1,"capacity":{"t4":24,"a100":16},` +
		`"jobs":[{"id":"j0","options":[{"type":"t4","gpus":1,"value":0.71}],"pin":0},{"id":"j1","options":[]}]}`))
	f.Add([]byte(`{"name":"r","optimum":-0,"sense":"max","unallocated":-1e-3,"capacity":{"a":3},"reserved":{"a":1},"grid":0.5,` +
		`"jobs":[],"quotas":[{"name":"q","jobs":[],"all_jobs":true,"type":"a","min_gpus":0,"limit":1}]}`))
	f.Add([]byte(" {\n\t\"jobs\": [ { \"id\": \"x\" } ] ,\"grid\":1E+2}\r\n"))
	f.Add([]byte(`{"capacity":{"t4":-9223372036854775808},"quotas":[{"limit":9223372036854775807}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		checkFast(t, data)
	})
}

// randomProblem builds a valid problem of n jobs with up to maxOpts options
// each over the GPU types t4, a100 and rtx, values rounded to 0.01 (ilptest
// cannot be imported here: it imports ilp).
func randomProblem(rng *rand.Rand, n, maxOpts int) *Problem {
	types := []string{"t4", "a100", "rtx"}
	p := &Problem{Sense: Sense(rng.IntN(2)), Capacity: map[string]int{"t4": 768, "a100": 512, "rtx": 768}, Grid: 0.01,
		Jobs: make([]Job, 0, n)} // ParseJSON gives a non-nil empty slice for "jobs":[]
	unalloc := math.Round(rng.Float64()*200) / 100
	for i := range n {
		j := Job{ID: fmt.Sprintf("j%d", i), Unallocated: unalloc, Pin: -1}
		for range rng.IntN(maxOpts + 1) {
			j.Options = append(j.Options, Option{Type: types[rng.IntN(len(types))], GPUs: 1 + rng.IntN(32),
				Value: math.Round((rng.Float64()*4-1)*100) / 100})
		}
		if len(j.Options) > 0 && rng.IntN(10) == 0 {
			j.Pin = rng.IntN(len(j.Options))
		}
		p.Jobs = append(p.Jobs, j)
	}
	return p
}

// BenchmarkParseJSON times ParseJSON on a 1500-job problem with 10 to 30
// options per job, as written by WriteJSON.
func BenchmarkParseJSON(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	p := randomProblem(rng, 0, 0)
	types := []string{"t4", "a100", "rtx"}
	for i := range 1500 {
		j := Job{ID: fmt.Sprintf("j%d", i), Unallocated: 1.1, Pin: -1}
		for range 10 + rng.IntN(21) {
			j.Options = append(j.Options, Option{Type: types[rng.IntN(3)], GPUs: 1 + rng.IntN(32),
				Value: math.Round(rng.Float64()*150) / 100})
		}
		p.Jobs = append(p.Jobs, j)
	}
	var buf bytes.Buffer
	require.NoError(b, WriteJSON(&buf, p, Meta{Name: "bench"}))
	data := buf.Bytes()
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := ParseJSON(data); err != nil {
			b.Fatal(err)
		}
	}
}
