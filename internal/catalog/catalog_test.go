package catalog

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestLoad(t *testing.T) {
	c, err := Load()
	require.NoError(t, err)
	for _, name := range []string{"bert", "cifar10", "deepspeech2", "imagenet", "ncf", "yolov3"} {
		a := c.Apps[name]
		require.NotNil(t, a, name)
		assert.Len(t, a.Progress, a.MaxEpochs, name)
		for i := 1; i < len(a.Progress); i++ {
			assert.Greater(t, a.Progress[i], a.Progress[i-1], name)
		}
		for _, typ := range []string{"t4", "a100", "rtx", "quad", "v100"} {
			ty, ok := a.Types[typ]
			require.True(t, ok, "%s/%s", name, typ)
			require.NoError(t, ty.Params.Validate())
			assert.LessOrEqual(t, ty.MinLocal, ty.MaxLocal)
			// Faster compute per sample on bigger batches: T_acc grows with b.
			assert.Greater(t, ty.Params.AccumTime(float64(ty.MaxLocal)), ty.Params.AccumTime(float64(ty.MinLocal))*0.999)
		}
		r0 := a.NoiseRatio(0, float64(a.InitBatch))
		assert.Greater(t, r0, 0.0)
		assert.False(t, r0 != r0, "NaN")
	}
}

func ExampleLoad() {
	c, err := Load()
	if err != nil {
		panic(err)
	}
	a := c.Apps["cifar10"]
	fmt.Println(a.Name, a.InitBatch, a.MaxBatch, a.MaxEpochs, len(a.Types))
	// Output: cifar10 128 4096 100 5
}
