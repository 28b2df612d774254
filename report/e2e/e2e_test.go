// Package e2e loads a campaign's report in headless Chromium (`make e2e`):
// the page must load without a console error, with every image decoded,
// every link resolving and every section present, and a screenshot of it
// is saved for a person to look at.
package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// sections are the ids every report has.
var sections = []string{"summary", "findings", "faults", "campaign", "run", "coverage", "regions"}

func TestE2EReportInBrowser(t *testing.T) {
	dir := os.Getenv("ACTFUZZ_E2E_DIR")
	if dir == "" {
		t.Skip("ACTFUZZ_E2E_DIR unset: `make e2e` runs a short campaign and loads its report in headless Chromium")
	}
	page, err := filepath.Abs(filepath.Join(dir, "report", "index.html"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(page); err != nil {
		t.Fatalf("no report: %v", err)
	}
	shot := os.Getenv("ACTFUZZ_E2E_SHOT")
	if shot == "" {
		shot = filepath.Join(dir, "report", "screenshot.png")
	}
	browser := os.Getenv("CHROME")
	if browser == "" {
		for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
			if p, err := exec.LookPath(name); err == nil {
				browser = p
				break
			}
		}
	}
	if browser == "" {
		t.Fatal("no chromium on PATH (make e2e installs Debian's chromium; or set CHROME)")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(browser), chromedp.NoSandbox,
		chromedp.DisableGPU, chromedp.WindowSize(1400, 1000),
		// A file:// page may load its images from beside it.
		chromedp.Flag("allow-file-access-from-files", true))
	// A guard against a hung browser, not a measurement.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	actx, acancel := chromedp.NewExecAllocator(ctx, opts...)
	defer acancel()
	bctx, bcancel := chromedp.NewContext(actx)
	defer bcancel()

	var mu sync.Mutex
	var consoleErrs []string
	add := func(s string) {
		mu.Lock()
		consoleErrs = append(consoleErrs, s)
		mu.Unlock()
	}
	err = chromedp.Listen(bctx, func(ev any) {
		switch ev := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			if ev.Type == "error" || ev.Type == "assert" {
				var args []string
				for _, a := range ev.Args {
					args = append(args, a.Description+string(a.Value))
				}
				add("console." + string(ev.Type) + ": " + strings.Join(args, " "))
			}
		case *runtime.EventExceptionThrown:
			add("exception: " + ev.ExceptionDetails.Text)
		case *log.EventEntryAdded:
			if ev.Entry.Level == log.EntryLevelError {
				add(string(ev.Entry.Source) + ": " + ev.Entry.Text + " " + ev.Entry.URL)
			}
		}
	})
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	if err := chromedp.Do(bctx,
		chromedp.EmulateViewport(1400, 1000),
		chromedp.Navigate("file://"+page),
		chromedp.WaitReady("body"),
	); err != nil {
		t.Fatalf("chromium: loading %s: %v", page, err)
	}
	eval := func(js string, opts ...chromedp.EvaluateOption) []string {
		t.Helper()
		v, err := chromedp.Run(bctx, chromedp.Evaluate[[]string](js, opts...))
		if err != nil {
			t.Fatalf("chromium: %s: %v", js, err)
		}
		return v
	}
	// Load the lazy images too, and wait until each has loaded or failed.
	eval(`Promise.all(Array.from(document.images).map(i => { i.loading = "eager";
		return i.complete ? 0 : new Promise(r => { i.onload = i.onerror = r; }); })).then(() => [])`, chromedp.EvalAwaitPromise)
	broken := eval(`Array.from(document.images).filter(i => !(i.complete && i.naturalWidth > 0)).map(i => i.getAttribute("src"))`)
	missing := eval(`["` + strings.Join(sections, `","`) + `"].filter(id => { const e = document.getElementById(id); return !e || e.getBoundingClientRect().height < 20; })`)
	// A page that reads well does not scroll sideways.
	overflow := eval(`document.documentElement.scrollWidth > window.innerWidth ? [String(document.documentElement.scrollWidth)] : []`)
	hrefs := eval(`Array.from(document.querySelectorAll("a[href]")).map(a => a.getAttribute("href"))`)
	ids := eval(`Array.from(document.querySelectorAll("[id]")).map(e => e.id)`)
	buf, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatalf("chromium: screenshot: %v", err)
	}
	// The first screenful too: what a person sees on opening the page.
	top, err := chromedp.Run(bctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatalf("chromium: screenshot: %v", err)
	}
	if err := os.WriteFile(strings.TrimSuffix(shot, ".png")+"-top.png", top, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(shot, buf, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s (%d bytes)", shot, len(buf))
	mu.Lock()
	for _, e := range consoleErrs {
		t.Errorf("console error: %s", e)
	}
	mu.Unlock()
	for _, src := range broken {
		t.Errorf("broken image: %s", src)
	}
	for _, w := range overflow {
		t.Errorf("the page is %s px wide in a %d px window: it scrolls sideways", w, 1400)
	}
	for _, id := range missing {
		t.Errorf("missing or empty section #%s", id)
	}
	idSet := map[string]bool{}
	for _, id := range ids {
		idSet[id] = true
	}
	for _, h := range hrefs {
		switch {
		case strings.HasPrefix(h, "#"):
			if !idSet[h[1:]] {
				t.Errorf("broken link %s: no such id", h)
			}
		case strings.Contains(h, "://"):
			t.Errorf("link %s leaves the page's directory: the report must work offline", h)
		default:
			if _, err := os.Stat(filepath.Join(filepath.Dir(page), filepath.FromSlash(h))); err != nil {
				t.Errorf("broken link %s: %v", h, err)
			}
		}
	}
	if len(hrefs) < len(sections) {
		t.Errorf("%d links, want at least the %d of the navigation", len(hrefs), len(sections))
	}
}
