// Package yamlerr rewrites gopkg.in/yaml.v3's decoding errors (line 3:
// cannot unmarshal !!str `ten` into float64) into messages that name the
// file, the line and the field (s.yaml:3: end_s: want a number, not
// "ten"), for every YAML file actfuzz reads.
package yamlerr

import (
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/actfuzz/actfuzz/internal/suggest"
)

var (
	yamlLineRE     = regexp.MustCompile(`^line (\d+): (.*)$`)
	yamlUnknownRE  = regexp.MustCompile(`^field (\S+) not found in type`)
	yamlUnmarshalR = regexp.MustCompile("^cannot unmarshal !!(\\w+) `(.*)` into (.*)$")
)

// Rewrite rewrites a YAML decoding error of a file (a campaign, a
// scenario) so that each problem names the file, the line and the field:
// an unknown key gets a suggestion from keys (the top level's with nested
// false, those of nested mappings with nested true), a value of the wrong
// type names its key. Other errors get the file's name.
func Rewrite(path string, src []byte, err error, keys func(nested bool) []string) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return fmt.Errorf("%s: %s", path, strings.TrimPrefix(err.Error(), "yaml: "))
	}
	var root yaml.Node
	_ = yaml.Unmarshal(src, &root)
	var msgs []string
	for _, e := range te.Errors {
		m := yamlLineRE.FindStringSubmatch(e)
		if m == nil {
			msgs = append(msgs, fmt.Sprintf("%s: %s", path, e))
			continue
		}
		line, _ := strconv.Atoi(m[1])
		what := m[2]
		if u := yamlUnknownRE.FindStringSubmatch(what); u != nil {
			field := keyAtLine(&root, line, u[1], "")
			if field == "" {
				field = u[1]
			}
			nested := strings.Contains(field, ".") || strings.Contains(field, "[")
			msgs = append(msgs, fmt.Sprintf("%s:%d: %s: unknown key%s", path, line, field, suggest.DidYouMean(u[1], keys(nested))))
			continue
		}
		value := ""
		if u := yamlUnmarshalR.FindStringSubmatch(what); u != nil {
			what = fmt.Sprintf("want %s, not %q", goTypeWord(u[3]), u[2])
			value = u[2]
		}
		field := keyAtLine(&root, line, "", value)
		if field == "" {
			field = keyAtLine(&root, line, "", "")
		}
		if field == "" {
			field = "value"
		}
		msgs = append(msgs, fmt.Sprintf("%s:%d: %s: %s", path, line, field, what))
	}
	return errors.New(strings.Join(msgs, "\n"))
}

// goTypeWord says in words what a Go type named in a YAML error holds.
func goTypeWord(t string) string {
	switch {
	case strings.Contains(t, "int"):
		return "an integer"
	case strings.Contains(t, "float"):
		return "a number"
	case strings.Contains(t, "bool"):
		return "true or false"
	case strings.Contains(t, "string"):
		return "a string"
	case strings.HasPrefix(t, "map") || strings.Contains(t, "Range"):
		return "a mapping such as {min: 0, max: 1, step: 0.1}"
	case strings.HasPrefix(t, "[]"):
		return "a list"
	}
	return t
}

// keyAtLine is the dotted path of the key at a line of a YAML document
// (list items as [i]), or "": the key named name if name is not "", else
// the innermost one; whose scalar value is value if value is not "".
func keyAtLine(root *yaml.Node, line int, name, value string) string {
	var walk func(n *yaml.Node, prefix string) string
	walk = func(n *yaml.Node, prefix string) string {
		switch n.Kind {
		case yaml.DocumentNode:
			for _, c := range n.Content {
				if p := walk(c, prefix); p != "" {
					return p
				}
			}
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				p := k.Value
				if prefix != "" {
					p = prefix + "." + k.Value
				}
				if q := walk(v, p); q != "" {
					return q
				}
				if k.Line == line && (name == "" || k.Value == name) && (value == "" || v.Kind == yaml.ScalarNode && v.Value == value) {
					return p
				}
			}
		case yaml.SequenceNode:
			for i, c := range n.Content {
				if q := walk(c, fmt.Sprintf("%s[%d]", prefix, i)); q != "" {
					return q
				}
				if c.Line == line && c.Kind == yaml.ScalarNode {
					return fmt.Sprintf("%s[%d]", prefix, i)
				}
			}
		}
		return ""
	}
	return walk(root, "")
}
