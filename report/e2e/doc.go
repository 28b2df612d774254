// Package e2e holds the browser test of the HTML report (e2e_test.go): `make
// e2e` runs a short campaign and loads its report/index.html in headless
// Chromium. Plain `go test ./...` skips it.
package e2e
