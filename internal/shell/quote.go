// Package shell writes the commands actfuzz prints for the user to run
// (replay, minimize, diff, resume): each argument quoted for a POSIX
// shell only when it needs it, so that a printed command runs as printed
// and still reads plainly.
package shell

import "strings"

// Quote quotes s for a POSIX shell when it holds anything but letters,
// digits and -_./+:=@ (or is empty).
func Quote(s string) string {
	if s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_./+:=@", r))
	}) < 0 {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
