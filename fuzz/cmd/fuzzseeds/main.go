// Command fuzzseeds writes fuzzer seed corpora for a campaign: the built-in
// inputs of fuzz.DefaultInputs and, encoded with fuzz.Encode, the
// configuration G of every seed file (*.json) found under the directories
// given as arguments — a campaign's output directory, its findings/ or a
// corpus/ of seeds.
//
//	go run ./fuzz/cmd/fuzzseeds -gofuzz out/gofuzz/corpus out/make-run
//	go run ./fuzz/cmd/fuzzseeds -native "$(go env GOCACHE)/fuzz/github.com/actfuzz/actfuzz/fuzz/FuzzRegions" out/make-run
//
// The campaign is -campaign, else ACTFUZZ_CAMPAIGN, else the embedded
// default CUBIC campaign (its P is what the inputs are encoded against).
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/actfuzz/actfuzz/act"
	"github.com/actfuzz/actfuzz/fuzz"
)

func main() {
	campaign := flag.String("campaign", "", "campaign file (default: $ACTFUZZ_CAMPAIGN or the embedded default)")
	gofuzz := flag.String("gofuzz", "", "go-fuzz corpus directory to write")
	native := flag.String("native", "", "`go test -fuzz` corpus directory to write (testdata/fuzz/FuzzRegions or the fuzz cache)")
	flag.Parse()
	if *gofuzz == "" && *native == "" {
		fmt.Fprintln(os.Stderr, "fuzzseeds: give -gofuzz DIR and/or -native DIR")
		os.Exit(2)
	}
	var c *act.Campaign
	var err error
	if *campaign != "" {
		c, err = act.LoadCampaign(*campaign)
	} else {
		c, err = fuzz.CampaignFromEnv()
	}
	if err != nil {
		fail(err)
	}
	inputs := fuzz.DefaultInputs(c)
	for _, dir := range flag.Args() {
		in, skipped, err := fuzz.SeedInputs(c, dir)
		if err != nil {
			fail(err)
		}
		fmt.Fprintf(os.Stderr, "fuzzseeds: %s: %d seeds (%d files skipped)\n", dir, len(in), skipped)
		inputs = append(inputs, in...)
	}
	for _, out := range []struct {
		dir   string
		write func(string, [][]byte) (int, error)
	}{{*gofuzz, fuzz.WriteGoFuzzCorpus}, {*native, fuzz.WriteNativeCorpus}} {
		if out.dir == "" {
			continue
		}
		n, err := out.write(out.dir, inputs)
		if err != nil {
			fail(err)
		}
		fmt.Fprintf(os.Stderr, "fuzzseeds: %s: %d new inputs\n", out.dir, n)
	}
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "fuzzseeds:", err)
	os.Exit(1)
}
