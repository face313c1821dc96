// Package shareddata locates the shared data folder (measured profiles, workload
// traces and recorded allocation problems) for tests, benchmarks and examples.
//
// The folder is given by the environment variable SIA_DATA and defaults to
// ../shared/data relative to the module root. Tests that need it call Dir, which
// skips the test with a clear message when the folder is absent, unless
// SIA_REQUIRE_DATA=1 (as in CI), in which case the test fails.
package shareddata

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// EnvDir names the environment variable that points at the shared data folder.
const EnvDir = "SIA_DATA"

// EnvRequire names the environment variable that, when set to 1, turns a missing
// data folder into a test failure instead of a skip.
const EnvRequire = "SIA_REQUIRE_DATA"

// ErrNotFound is returned by Locate when the shared data folder does not exist.
var ErrNotFound = errors.New("shareddata: shared data folder not found")

// Locate returns the absolute path of the shared data folder without a testing.TB:
// $SIA_DATA if set (relative paths are taken from the module root, then from the
// working directory), else ../shared/data beside the module root.
func Locate() (string, error) {
	root, rootErr := moduleRoot()
	dir := os.Getenv(EnvDir)
	var candidates []string
	switch {
	case dir != "" && filepath.IsAbs(dir):
		candidates = []string{dir}
	case dir != "":
		if rootErr == nil {
			candidates = append(candidates, filepath.Join(root, dir))
		}
		if wd, err := os.Getwd(); err == nil {
			candidates = append(candidates, filepath.Join(wd, dir))
		}
	case rootErr == nil:
		candidates = []string{filepath.Join(root, "..", "shared", "data")}
	}
	for _, c := range candidates {
		if st, err := os.Stat(c); err == nil && st.IsDir() {
			return filepath.Abs(c)
		}
	}
	return "", fmt.Errorf("%w (looked in %q; set %s)", ErrNotFound, candidates, EnvDir)
}

// Dir returns the shared data folder for a test. When the folder is missing the
// test is skipped, or fails when SIA_REQUIRE_DATA=1.
func Dir(t testing.TB) string {
	t.Helper()
	dir, err := Locate()
	if err != nil {
		if os.Getenv(EnvRequire) == "1" {
			t.Fatalf("%v; %s=1 requires it", err, EnvRequire)
		}
		t.Skipf("skipping: %v", err)
	}
	return dir
}

// Path joins elems under the shared data folder (see Dir) and checks that the
// result exists, skipping or failing like Dir when it does not.
func Path(t testing.TB, elems ...string) string {
	t.Helper()
	p := filepath.Join(append([]string{Dir(t)}, elems...)...)
	if _, err := os.Stat(p); err != nil {
		if os.Getenv(EnvRequire) == "1" {
			t.Fatalf("shared data file missing: %v", err)
		}
		t.Skipf("skipping: shared data file missing: %v", err)
	}
	return p
}

func moduleRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", errors.New("shareddata: no go.mod above the working directory")
		}
	}
}
