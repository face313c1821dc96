package fleet

import (
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestClusterShape(t *testing.T) {
	c := Config{Jobs: 100, GPUs: 800, Types: 6, Seed: 4}
	perType := map[string]int{}
	for _, n := range c.Cluster(rand.New(rand.NewPCG(c.Seed, 11))) {
		assert.Contains(t, nodeSizes, n.GPUs, "node %s", n.ID)
		perType[n.Type] += n.GPUs
	}
	require.Len(t, perType, c.Types)
	for typ, g := range perType {
		assert.Contains(t, TypeNames[:c.Types], typ)
		assert.GreaterOrEqual(t, g, c.GPUs/c.Types, "type %s", typ)
		assert.Less(t, g, c.GPUs/c.Types+slices.Max(nodeSizes), "type %s", typ)
	}
}

func TestJobListDeterministic(t *testing.T) {
	c := Config{Jobs: 200, GPUs: 800, Types: 8, Seed: 5}
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	a := c.JobList(rand.New(rand.NewPCG(c.Seed, 11)), c.Jobs, now)
	b := c.JobList(rand.New(rand.NewPCG(c.Seed, 11)), c.Jobs, now)
	require.Equal(t, a, b)
	for _, j := range a {
		assert.NotEmpty(t, j.Models, "job %s", j.ID)
		assert.False(t, j.Submitted.After(now), "job %s", j.ID)
		for typ := range j.Models {
			assert.Contains(t, TypeNames[:c.Types], typ, "job %s", j.ID)
		}
		if j.Kind == Rigid {
			assert.Positive(t, j.GPUs, "job %s", j.ID)
		}
	}
}
