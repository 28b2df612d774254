//go:build gofuzz

package coverage

import "errors"

// go-fuzz-build (the version the module proxy serves) cannot copy the
// //go:embed globs of gonum/plot's PDF backend, so go-fuzz binaries are
// built without plots; see "go-fuzz and embedded files" in fuzz/doc.go.
var errNoPlots = errors.New("coverage: plots are not built into go-fuzz binaries")

// SaveCoveragePlot is unavailable in go-fuzz builds.
func SaveCoveragePlot(path string, snaps ...Snapshot) error { return errNoPlots }

// SaveGrowthPlot is unavailable in go-fuzz builds.
func SaveGrowthPlot(path string, k int, series ...*Series) error { return errNoPlots }
