// Package report writes a campaign's morning report: one self-contained
// HTML page, DIR/report/index.html, with the campaign, the run, coverage at
// every region size k (tables, plots and heat maps of the visited regions)
// and the findings with the commands that replay, minimize and diff them.
// `actfuzz report DIR` writes it from a campaign's output directory, and
// `actfuzz run` regenerates it at each checkpoint (act.Options.OnCheckpoint).
//
// The page uses html/template, inline CSS and no script; its images are
// PNG files beside it (report/*.png) or the findings' own plots
// (findings/<condition>/<id>.png), linked relatively, so the directory can
// be copied or served as it is.
package report

import (
	"bytes"
	_ "embed"
	"errors"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/actfuzz/actfuzz/act"
	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/netenv"
)

//go:embed index.html.tmpl
var pageTemplate string

// Dir is the report's directory inside a campaign's output directory.
const Dir = "report"

// Options say how a report is written.
type Options struct {
	// Program starts the suggested commands ("actfuzz" by default).
	Program string
	// DiffVs names the subject that `diff` should compare a finding's
	// seed with, or "" when none can run it here; no diff is suggested
	// then (nor when DiffVs is nil).
	DiffVs func(*corpus.Seed) string
	// Live says the campaign is still running (the page then says it is
	// regenerated at each checkpoint).
	Live bool
	// PeakRSS is the campaign process's peak resident memory in bytes, if
	// measured (0: not measured, as for a report written after the run).
	PeakRSS int64
	// Now stamps the page; zero means time.Now.
	Now time.Time
}

// Write writes out/report/index.html and its images for the campaign c and
// the reports of its methods (the first one is the campaign's own run; the
// others, baselines of the same campaign, are compared with it). It returns
// the page's path.
func Write(out string, c *act.Campaign, reps []*act.Report, opt Options) (string, error) {
	if len(reps) == 0 {
		return "", errors.New("report: no campaign run to report")
	}
	dir := filepath.Join(out, Dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", fmt.Errorf("report: %w", err)
	}
	if opt.Program == "" {
		opt.Program = "actfuzz"
	}
	if opt.Now.IsZero() {
		opt.Now = time.Now()
	}
	pg, err := build(out, dir, c, reps, opt)
	if err != nil {
		return "", err
	}
	var b bytes.Buffer
	if err := render(&b, pg); err != nil {
		return "", err
	}
	path := filepath.Join(dir, "index.html")
	if err := corpus.WriteFileAtomic(path, b.Bytes()); err != nil {
		return "", fmt.Errorf("report: %w", err)
	}
	return path, nil
}

// Load reads the campaign and the checkpointed runs in out (the method
// first, then the other methods checkpointed there, sorted). method ""
// takes the only one, or "act" when there are several. The campaign is
// read for the subject that ran it, by its capabilities among subjects
// (the native subject's when none matches, or the checkpoint does not
// name it).
func Load(out, method string, subjects []netenv.Capabilities) (*act.Campaign, []*act.Report, error) {
	if _, err := os.Stat(filepath.Join(out, "campaign.yaml")); err != nil {
		return nil, nil, err
	}
	ms := act.CheckpointMethods(out)
	if len(ms) == 0 {
		return nil, nil, fmt.Errorf("%s: no checkpoint: %w", filepath.Join(out, "coverage"), os.ErrNotExist)
	}
	slices.Sort(ms)
	switch {
	case method != "" && !slices.Contains(ms, method):
		return nil, nil, fmt.Errorf("%s holds no checkpoint of method %q (it has %s): %w", out, method, strings.Join(ms, ", "), os.ErrNotExist)
	case method == "" && slices.Contains(ms, "act"):
		method = "act"
	case method == "":
		method = ms[0]
	}
	order := append([]string{method}, slices.DeleteFunc(slices.Clone(ms), func(m string) bool { return m == method })...)
	var reps []*act.Report
	for _, m := range order {
		r, err := act.LoadReport(out, m)
		if err != nil {
			return nil, nil, err
		}
		reps = append(reps, r)
	}
	caps := netenv.NativeCapabilities()
	for _, sc := range subjects {
		if sc.Name == reps[0].SubjectName() {
			caps = sc
		}
	}
	c, err := act.LoadCampaignFor(filepath.Join(out, "campaign.yaml"), caps)
	if err != nil {
		return nil, nil, err
	}
	return c, reps, nil
}

func render(b *bytes.Buffer, pg *page) error {
	t, err := template.New("index").Funcs(template.FuncMap{"join": strings.Join}).Parse(pageTemplate)
	if err != nil {
		return fmt.Errorf("report template: %w", err)
	}
	if err := t.Execute(b, pg); err != nil {
		return fmt.Errorf("report template: %w", err)
	}
	return nil
}

// PeakRSS is this process's peak resident memory in bytes (Linux's VmHWM),
// or 0 where it cannot be read.
func PeakRSS() int64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			var kb int64
			if _, err := fmt.Sscanf(strings.TrimSpace(rest), "%d kB", &kb); err == nil {
				return kb << 10
			}
		}
	}
	return 0
}
