package shareddata

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeTB records Skipf and Fatalf instead of stopping the test.
type fakeTB struct {
	testing.TB
	skipped, failed string
}

func (f *fakeTB) Helper()                           {}
func (f *fakeTB) Skipf(format string, args ...any)  { f.skipped = fmt.Sprintf(format, args...) }
func (f *fakeTB) Fatalf(format string, args ...any) { f.failed = fmt.Sprintf(format, args...) }

func TestLocateAbsolute(t *testing.T) {
	dir := t.TempDir()
	t.Setenv(EnvDir, dir)
	got, err := Locate()
	require.NoError(t, err)
	want, _ := filepath.Abs(dir)
	assert.Equal(t, want, got)
}

func TestLocateRelativeToModuleRoot(t *testing.T) {
	// "internal" exists relative to the module root, not to this package's
	// folder: Locate must try the module root first.
	t.Setenv(EnvDir, "internal")
	got, err := Locate()
	require.NoError(t, err)
	assert.Equal(t, "internal", filepath.Base(got))
	st, err := os.Stat(got)
	require.NoError(t, err)
	assert.True(t, st.IsDir())
}

// TestLocateMissing: a missing folder, or a file where a folder is
// expected, is ErrNotFound naming where it looked.
func TestLocateMissing(t *testing.T) {
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, []byte("x"), 0o644))
	for _, dir := range []string{filepath.Join(t.TempDir(), "absent"), file, "no/such/relative/dir"} {
		t.Setenv(EnvDir, dir)
		_, err := Locate()
		require.Error(t, err, dir)
		assert.True(t, errors.Is(err, ErrNotFound), "%v", err)
		assert.Contains(t, err.Error(), filepath.Base(dir))
		assert.Contains(t, err.Error(), EnvDir)
	}
}

func TestDirSkipsOrFails(t *testing.T) {
	t.Setenv(EnvDir, filepath.Join(t.TempDir(), "absent"))
	t.Setenv(EnvRequire, "")
	f := &fakeTB{TB: t}
	Dir(f)
	assert.Contains(t, f.skipped, "absent")
	assert.Empty(t, f.failed)

	t.Setenv(EnvRequire, "1")
	f = &fakeTB{TB: t}
	Dir(f)
	assert.Contains(t, f.failed, EnvRequire+"=1")
}

func TestPath(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "profiles", "bert"), 0o755))
	t.Setenv(EnvDir, dir)
	t.Setenv(EnvRequire, "")
	assert.Equal(t, filepath.Join(dir, "profiles", "bert"), Path(t, "profiles", "bert"))

	f := &fakeTB{TB: t}
	Path(f, "profiles", "missing")
	assert.Contains(t, f.skipped, "missing")
	t.Setenv(EnvRequire, "1")
	f = &fakeTB{TB: t}
	Path(f, "profiles", "missing")
	assert.Contains(t, f.failed, "missing")
}
