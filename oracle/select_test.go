package oracle

import (
	"testing"

	"github.com/actfuzz/actfuzz/ccai"
	"github.com/actfuzz/actfuzz/corpus"
	"github.com/actfuzz/actfuzz/netenv"
)

// TestLibraryCompiles: every oracle compiles on every native congestion
// control it applies to, and names a statement and a source.
func TestLibraryCompiles(t *testing.T) {
	caps := netenv.NativeCapabilities()
	for _, o := range Library() {
		if o.Statement == "" || o.Source == "" || o.Kind == "" {
			t.Errorf("%s: statement, source and kind are required", o.Name)
		}
		specs, skips := Select(Choice{Names: []string{o.Name}}, caps, ccai.Names(), ccai.ProfileLinux)
		if len(specs) == 0 && o.NotOn["native"] == "" && o.NotOn["native/linux"] == "" && o.MinFlows == 0 {
			t.Errorf("%s: no condition on the native subject (%v)", o.Name, skips)
		}
		for _, sp := range specs {
			for _, cca := range sp.Only {
				if _, err := corpus.Compile([]corpus.ConditionSpec{sp}, corpus.SchemaFor(cca)); err != nil {
					t.Errorf("%s on %s: %v", o.Name, cca, err)
				}
			}
		}
	}
}
