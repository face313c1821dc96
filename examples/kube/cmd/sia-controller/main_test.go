package main

import (
	"io"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParseFlags(t *testing.T) {
	c, err := parseFlags([]string{"-namespace", "sia-system", "-period", "30s", "-identity", "p0"}, io.Discard)
	require.NoError(t, err)
	assert.Equal(t, 30*time.Second, c.period)
	assert.True(t, c.leaderElect)
	assert.Equal(t, "nvidia.com/gpu.product", c.typeLabel)
	for _, bad := range [][]string{
		{"-namespace", ""},
		{"-namespace", "x", "-period", "0s"},
		{"-namespace", "x", "-solve-timeout", "40s"},
		{"-namespace", "x", "-identity", ""},
		{"-namespace", "x", "extra"},
	} {
		t.Setenv("POD_NAMESPACE", "")
		_, err := parseFlags(bad, io.Discard)
		assert.Error(t, err, "%v", bad)
	}
}
