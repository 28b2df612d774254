// Package names checks the names that files give to things (a
// condition's, a scenario's): names reach file names, terminals, logs and
// reports, so they are bounded and printable.
package names

import (
	"fmt"
	"unicode"
	"unicode/utf8"
)

// MaxLen (max_name_length) caps a name, in characters. A condition's
// name becomes a directory of findings (one byte a character) and a
// heading of findings.md; 128 is half of what most file systems take in
// one path element, and many times the longest oracle's name.
const MaxLen = 128

// Check refuses a name that is empty, not valid UTF-8, longer than MaxLen
// characters or holds a character that is not printable (a control
// character such as an escape sequence that would rewrite the terminal, a
// bidirectional override or a zero-width character that would make a
// name read as another). The error starts with "name" and quotes at most
// the name's first characters.
func Check(name string) error {
	if name == "" {
		return fmt.Errorf("name: empty")
	}
	if !utf8.ValidString(name) {
		return fmt.Errorf("name: not valid UTF-8")
	}
	if n := utf8.RuneCountInString(name); n > MaxLen {
		return fmt.Errorf("name: %d characters (%.32q…), over the cap of %d (max_name_length)", n, name, MaxLen)
	}
	for i, r := range []rune(name) {
		if !unicode.IsPrint(r) {
			return fmt.Errorf("name %q: character %d (%U) is not printable", name, i+1, r)
		}
	}
	return nil
}
