package main

import (
	"bytes"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRun(t *testing.T) {
	var a, b bytes.Buffer
	require.NoError(t, run(nil, &a))
	require.NoError(t, run(nil, &b))
	assert.Equal(t, a.String(), b.String(), "the demo is deterministic")
	out := a.String()
	assert.Contains(t, out, "finished 12/12 jobs")
	for _, action := range []string{" start ", " resize ", " migrate ", " finish "} {
		assert.Contains(t, out, action)
	}
}

func TestBadFlags(t *testing.T) {
	for _, args := range [][]string{
		{"-rounds", "0"}, {"-jobs", "-1"}, {"-nope"}, {"extra"}, {"-rounds", "x"},
	} {
		var out bytes.Buffer
		err := run(args, &out)
		require.Error(t, err, args)
		assert.NotContains(t, err.Error(), "\n", "one-line message")
	}
	var out bytes.Buffer
	err := run([]string{"-rounds", "1", "-jobs", "1"}, &out)
	require.Error(t, err, "nothing finishes in one round")
	assert.True(t, strings.Contains(err.Error(), "no job finished"))
}
