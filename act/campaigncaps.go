package act

import (
	"fmt"

	"gopkg.in/yaml.v3"

	"github.com/actfuzz/actfuzz/corpus"
)

// Caps of a campaign file (docs/limits.md). A campaign can come from
// anyone: each cap is far above what a campaign needs and bounds what
// parsing and checking it cost.
const (
	// MaxCampaignBytes (max_campaign_bytes) caps a campaign file: the
	// examples are under 4 kB; MaxConditions conditions at the
	// expression cap (internal/exprcheck) take about 2 MB.
	MaxCampaignBytes = 4 << 20
	// MaxConditions (max_conditions) caps a campaign's conditions. Each
	// is evaluated at every state record of every flow; the oracle
	// library, checked beside them, has about 30.
	MaxConditions = 256
)

// checkConditions checks a campaign's conditions before anything is
// compiled: their number, each one's name (corpus.CheckName) and cost
// (corpus.ConditionSpec.Check), and that no two write the same findings
// directory (corpus.FileKey: a.b, a/b and a b all write findings/a_b/,
// and Huge and huge do on a case-insensitive file system). Errors name
// the file, the line and the field.
func checkConditions(path string, root *yaml.Node, conds []corpus.ConditionSpec) error {
	at := func(i int, key string) string {
		return fmt.Sprintf("%s:%d", path, conditionLine(root, i, key))
	}
	if len(conds) > MaxConditions {
		return fmt.Errorf("%s:%d: conditions: %d conditions, over the cap of %d (max_conditions)", path, findLine(root, []string{"conditions"}), len(conds), MaxConditions)
	}
	byKey := map[string]int{}
	for i, sp := range conds {
		if err := corpus.CheckName(sp.Name); err != nil {
			return fmt.Errorf("%s: conditions[%d].%w", at(i, "name"), i, err)
		}
		if err := sp.Check(); err != nil {
			return fmt.Errorf("%s: conditions[%d]: %w", at(i, ""), i, err)
		}
		if _, err := sp.Refs(); err != nil {
			return fmt.Errorf("%s: conditions[%d]: condition %q: %w", at(i, ""), i, sp.Name, err)
		}
		k := corpus.FileKey(sp.Name)
		if j, ok := byKey[k]; ok {
			return fmt.Errorf("%s: conditions[%d].name %q and conditions[%d].name %q: both would write findings/%s/ (names must differ in their letters, digits, - and _, ignoring case)",
				at(i, "name"), j, conds[j].Name, i, sp.Name, corpus.FileName(sp.Name))
		}
		byKey[k] = i
	}
	return nil
}

// conditionLine is the line of conditions[i] (of its key, if the item is
// a mapping that has it), or of conditions:.
func conditionLine(root *yaml.Node, i int, key string) int {
	line := findLine(root, []string{"conditions"})
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	if n.Kind != yaml.MappingNode {
		return line
	}
	for j := 0; j+1 < len(n.Content); j += 2 {
		if n.Content[j].Value != "conditions" {
			continue
		}
		seq := n.Content[j+1]
		if seq.Kind != yaml.SequenceNode || i >= len(seq.Content) {
			return line
		}
		item := seq.Content[i]
		if key != "" && item.Kind == yaml.MappingNode {
			for k := 0; k+1 < len(item.Content); k += 2 {
				if item.Content[k].Value == key {
					return item.Content[k].Line
				}
			}
		}
		return item.Line
	}
	return line
}
