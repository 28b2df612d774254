package symbolic

import (
	"path/filepath"
	"strings"
	"testing"
)

// The scenarios of testdata/hostile (issue 48): each refused with a
// message that names the file and the field, before anything runs.
func TestLoadScenarioHostile(t *testing.T) {
	want := map[string]string{
		"end-ten.yaml":        `testdata/hostile/end-ten.yaml:3: end_s: want a number, not "ten"`,
		"nested-typo.yaml":    `testdata/hostile/nested-typo.yaml:5: tcp.env.bufer: unknown key (did you mean "buffer"?)`,
		"condition-loop.yaml": `condition "never-ends": when: 1:5: map(…) is not allowed`,
		"name-escape.yaml":    `testdata/hostile/name-escape.yaml: name "x\x1b[2J": character 2 (U+001B) is not printable`,
	}
	files, err := filepath.Glob("testdata/hostile/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != len(want) {
		t.Errorf("%d files, %d expectations", len(files), len(want))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			sc, err := LoadScenario(f)
			if err == nil {
				// Conditions are checked when the scenario is compiled.
				err = sc.Validate()
			}
			if w := want[filepath.Base(f)]; err == nil || !strings.Contains(err.Error(), w) {
				t.Fatalf("error %v, want %q", err, w)
			}
			if strings.Contains(err.Error(), "\x1b") {
				t.Errorf("a terminal escape in %q", err)
			}
		})
	}
}
