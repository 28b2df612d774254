package cli

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/actfuzz/actfuzz/act"
	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/internal/capread"
)

// The output directory of a run: its default name, its lock, and the
// refusal of one that holds another campaign.

// defaultOut is run's output directory without --out:
// out/<campaign name>-<UTC time>.
func defaultOut(c *act.Campaign, now time.Time) string {
	name := "default"
	if c.Path != "" {
		name = strings.TrimSuffix(filepath.Base(c.Path), filepath.Ext(c.Path))
	}
	return filepath.Join("out", name+"-"+now.UTC().Format("20060102T150405Z"))
}

// lockOut takes the output directory's lock for the command's lifetime
// (corpus.LockDir: one campaign process a directory; a second one is bad
// input, exit 2) and removes the debris of atomic writes that a process
// killed mid-write left there, such as a checkpoint's temporary file.
func lockOut(cmd, out string, info, stderr io.Writer) (unlock func(), code int) {
	unlock, err := corpus.LockDir(out)
	switch {
	case errors.Is(err, corpus.ErrLocked):
		fmt.Fprintf(stderr, "actfuzz %s: --out %v; wait for it to end or choose another --out\n", cmd, err)
		return nil, exitUsage
	case err != nil:
		fmt.Fprintf(stderr, "actfuzz %s: --out %s: %v\n", cmd, out, err)
		return nil, exitInternal
	}
	n, err := corpus.RemoveDebris(out)
	if err != nil {
		unlock()
		fmt.Fprintf(stderr, "actfuzz %s: --out %s: %v\n", cmd, out, err)
		return nil, exitInternal
	}
	if n > 0 {
		fmt.Fprintf(info, "actfuzz %s: removed %d temporary files in %s that a process killed mid-write left\n", cmd, n, out)
	}
	return unlock, exitOK
}

// checkOut refuses an output directory that holds a campaign, unless it is
// being resumed, and one resumed with another campaign file: both bad input.
func checkOut(cmd, out string, c *act.Campaign, resume bool, stderr io.Writer) int {
	old, err := capread.ReadFile(filepath.Join(out, "campaign.yaml"), act.MaxCampaignBytes, "max_campaign_bytes", false)
	held := err == nil || errors.Is(err, capread.ErrCapped)
	for _, d := range []string{"findings", "coverage"} {
		if ents, err := os.ReadDir(filepath.Join(out, d)); err == nil && len(ents) > 0 {
			held = true
		}
	}
	switch {
	case !held:
		return exitOK
	case !resume:
		fmt.Fprintf(stderr, "actfuzz %s: --out %s already holds a campaign; continue it with --resume or choose another --out\n", cmd, out)
		return exitUsage
	case old != nil && !bytes.Equal(old, c.Source):
		fmt.Fprintf(stderr, "actfuzz %s: --out %s holds another campaign (its campaign.yaml differs from %s); resume with that file or choose another --out\n", cmd, out, c.Path)
		return exitUsage
	}
	return exitOK
}
