package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestProbe11GridUnderflow: -grid 1e-400 was read as 0 ("no grid"); it is
// a usage error naming the flag.
func TestProbe11GridUnderflow(t *testing.T) {
	in := filepath.Join(t.TempDir(), "p.json")
	require.NoError(t, os.WriteFile(in, []byte(`{"sense":"max","unallocated":0,"capacity":{"a":4},"jobs":[{"id":"j","options":[{"type":"a","gpus":2,"value":1}]}]}`), 0o644))
	var out, errb bytes.Buffer
	code := run([]string{"-in", in, "-grid", "1e-400"}, &out, &errb)
	assert.Equal(t, 2, code)
	assert.Contains(t, errb.String(), "-grid")
	assert.Contains(t, errb.String(), "underflows")
	assert.Empty(t, out.String())
	errb.Reset()
	require.Zero(t, run([]string{"-in", in, "-grid", "0e-400"}, &out, &errb), errb.String())
}
