package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestHostileFlags: sizes that would run for days or overflow the demo's
// clock are refused before the first round, naming the flag.
func TestHostileFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-rounds", "1000000000"},
		{"-rounds", "9223372036854775807"},
		{"-jobs", "1000000000"},
		{"-jobs", "9223372036854775807"},
		{"-rounds", "99999999999999999999"},
	} {
		_, err := parseFlags(args)
		require.Error(t, err, args)
		assert.Contains(t, err.Error(), args[0], args)
	}
	c, err := parseFlags([]string{"-rounds", "1000000", "-jobs", "100000"})
	require.NoError(t, err)
	assert.Equal(t, 1000000, c.rounds)
}
