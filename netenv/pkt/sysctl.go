package pkt

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The preamble: the shell commands of a script (its init command, usually
// "`../common/defaults.sh` plus sysctls", and commands between events) map
// to the model's settings. Each sysctl is one of:
//   - mapped: the model has the setting (tcp_sack, tcp_timestamps,
//     tcp_ecn, tcp_congestion_control, tcp_wmem, tcp_slow_start_after_idle);
//   - fixed: the model behaves as one value (tcp_reordering=3,
//     tcp_dsack=1, tcp_frto=2); another value makes the script unsupported;
//   - approximated: the model lacks the mechanism (RACK and TLP for
//     tcp_recovery and tcp_early_retrans, TSO deferral for
//     tcp_tso_win_divisor, pacing ratios): the script runs and the result
//     lists the approximation, or with Config.Strict it is unsupported;
//   - irrelevant to a sender's congestion control (fast open, syncookies,
//     tcp_rmem, SYN retry counts, notsent_lowat): ignored.
// Of other commands, a pfifo qdisc and `ethtool -K tun0 ... off` (TSO and
// GSO off: MSS-sized segments, which the model always sends) are accepted.
// Any other sysctl makes the script unsupported, named.

// settings are the model settings a preamble selects.
type settings struct {
	sack, dsack, timestamps bool
	ecn                     int // tcp_ecn: 0 off, 1 request and accept, 2 accept only
	congestion              string
	wmemMax                 uint64
	idleRestart             bool
	approx                  []string
}

func defaultSettings() settings {
	// Linux's own defaults, before any preamble.
	return settings{sack: true, dsack: true, timestamps: true, ecn: 2, congestion: "cubic", idleRestart: true}
}

// unsupportedError is a construct the model cannot run.
type unsupportedError struct{ construct string }

func (e *unsupportedError) Error() string { return "unsupported: " + e.construct }

func unsupported(format string, a ...any) error {
	return &unsupportedError{construct: fmt.Sprintf(format, a...)}
}

// command runs a shell command of the script: its sysctls and the shell
// scripts it sources (defaults.sh), resolved against dir.
func (st *settings) command(text, dir string, strict bool, depth int) error {
	text = strings.ReplaceAll(text, "\\\n", " ") // continuation lines
	for _, line := range strings.Split(text, "\n") {
		if i := strings.Index(line, "#"); i >= 0 {
			line = line[:i]
		}
		f, err := shellFields(line)
		if err != nil {
			return err
		}
		if len(f) == 0 {
			continue
		}
		switch {
		case f[0] == "sysctl":
			for _, kv := range f[1:] {
				if strings.HasPrefix(kv, "-") || kv == ">" || strings.HasPrefix(kv, "/dev/") || strings.Contains(kv, ">") {
					continue
				}
				name, val, ok := strings.Cut(kv, "=")
				if !ok {
					return unsupported("sysctl read %s", kv)
				}
				if err := st.sysctl(name, val, strict); err != nil {
					return err
				}
			}
		case strings.HasSuffix(f[0], "set_sysctls.py"):
			// The suite's helper: each argument is /proc/sys/<path>=value.
			for _, kv := range f[1:] {
				path, val, ok := strings.Cut(kv, "=")
				name, isProc := strings.CutPrefix(path, "/proc/sys/")
				if !ok || !isProc {
					return unsupported("set_sysctls.py argument %q", kv)
				}
				if err := st.sysctl(strings.ReplaceAll(name, "/", "."), val, strict); err != nil {
					return err
				}
			}
		case strings.HasSuffix(f[0], ".sh"):
			if depth > 4 {
				return unsupported("nested shell script %s", f[0])
			}
			path := f[0]
			if !filepath.IsAbs(path) {
				path = filepath.Join(dir, path)
			}
			src, err := os.ReadFile(path)
			if err != nil {
				return unsupported("shell script %s (not readable: %v)", f[0], err)
			}
			if err := st.command(string(src), filepath.Dir(path), strict, depth+1); err != nil {
				return err
			}
		case f[0] == "ip" && len(f) > 1 && f[1] == "tcp_metrics":
			// Flushing cached metrics: the model keeps none.
		case f[0] == "ethtool" && len(f) > 3 && f[1] == "-K" && offloadsOff(f[3:]):
			// Segmentation offloads off on the tun device: Linux then
			// sends MSS-sized segments, which is all the model sends.
		case f[0] == "tc" && strings.Contains(line, "pfifo"):
			// A FIFO qdisc on the tun device: no pacing by fq, as the
			// model has none.
		default:
			return unsupported("shell command %q", strings.TrimSpace(line))
		}
	}
	return nil
}

// offloadsOff says whether ethtool -K's feature list only turns features
// off ("tso off gso off").
func offloadsOff(kv []string) bool {
	if len(kv)%2 != 0 {
		return false
	}
	for i := 1; i < len(kv); i += 2 {
		if kv[i] != "off" {
			return false
		}
	}
	return true
}

// sysctl applies one net.* setting.
func (st *settings) sysctl(name, val string, strict bool) error {
	key := strings.TrimPrefix(name, "net.ipv4.")
	num := func() (int64, error) {
		v, err := strconv.ParseInt(val, 0, 64)
		if err != nil {
			return 0, unsupported("sysctl %s=%s (not a number)", name, val)
		}
		return v, nil
	}
	fixed := func(want int64) error {
		v, err := num()
		if err != nil || v != want {
			return unsupported("sysctl %s=%s (the model behaves as %d)", name, val, want)
		}
		return nil
	}
	approx := func(why string) error {
		if strict {
			return unsupported("sysctl %s=%s (%s)", name, val, why)
		}
		st.approx = append(st.approx, fmt.Sprintf("%s=%s: %s", key, val, why))
		return nil
	}
	switch key {
	case "tcp_sack", "tcp_timestamps", "tcp_slow_start_after_idle":
		v, err := num()
		if err != nil {
			return err
		}
		switch key {
		case "tcp_sack":
			st.sack = v != 0
		case "tcp_timestamps":
			st.timestamps = v != 0
		default:
			st.idleRestart = v != 0
		}
	case "tcp_ecn":
		v, err := num()
		if err != nil || v < 0 || v > 2 {
			return unsupported("sysctl %s=%s (AccECN not modelled)", name, val)
		}
		st.ecn = int(v)
	case "tcp_congestion_control":
		st.congestion = val
	case "tcp_wmem":
		f := strings.Fields(val)
		v, err := strconv.ParseUint(f[len(f)-1], 10, 64)
		if len(f) != 3 || err != nil {
			return unsupported("sysctl %s=%q", name, val)
		}
		// The model's send buffer is the autotuning ceiling (netenv/tcp
		// app.go: DefaultSndBuf).
		st.wmemMax = v
	case "tcp_reordering":
		return fixed(3)
	case "tcp_dsack":
		return fixed(1)
	case "tcp_frto":
		return fixed(2)
	case "tcp_fack":
		// A no-op since Linux 4.15 (FACK was folded into RACK).
	case "tcp_recovery":
		if v, err := num(); err == nil && v == 0 {
			return nil
		}
		return approx("RACK loss detection is not modelled; loss is marked by RFC 6675 DupThresh")
	case "tcp_early_retrans":
		if v, err := num(); err == nil && v == 0 {
			return nil
		}
		return approx("tail loss probes are not modelled")
	case "tcp_tso_win_divisor", "tcp_min_tso_segs":
		return approx("TSO deferral is not modelled; outbound segments are coalesced by the matcher")
	case "tcp_pacing_ss_ratio", "tcp_pacing_ca_ratio":
		// Pacing applies only under fq or an algorithm that paces (BBR);
		// the suite's scripts run on pfifo.
	case "tcp_rmem", "tcp_syn_retries", "tcp_synack_retries", "tcp_notsent_lowat", "tcp_fastopen",
		"tcp_fastopen_key", "tcp_syncookies", "tcp_ecn_option", "tcp_fastopen_cookies":
		// Not a sender's congestion control: the receive side, the
		// handshake (the interpreter's), fast open, AccECN options.
	default:
		return unsupported("sysctl %s", name)
	}
	return nil
}

// shellFields splits a command line as the shell does for the suite's
// preambles: blanks separate words, quotes group them, and $((a*b))
// arithmetic (defaults.sh's $((15*1024*1024))) is evaluated.
func shellFields(line string) ([]string, error) {
	var fields []string
	var cur strings.Builder
	inWord := false
	var quote byte
	for i := 0; i < len(line); i++ {
		c := line[i]
		switch {
		case quote != 0 && c == quote:
			quote = 0
		case quote == 0 && (c == '"' || c == '\''):
			quote, inWord = c, true
		case strings.HasPrefix(line[i:], "$(("):
			end := strings.Index(line[i:], "))")
			if end < 0 {
				return nil, unsupported("shell arithmetic in %q", line)
			}
			v, err := shellArith(line[i+3 : i+end])
			if err != nil {
				return nil, err
			}
			cur.WriteString(strconv.FormatInt(v, 10))
			inWord = true
			i += end + 1
		case quote == 0 && (c == ' ' || c == '\t'):
			if inWord {
				fields = append(fields, cur.String())
				cur.Reset()
				inWord = false
			}
		default:
			cur.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		fields = append(fields, cur.String())
	}
	return fields, nil
}

// shellArith evaluates a product or sum of integers.
func shellArith(expr string) (int64, error) {
	var total int64
	for _, term := range strings.Split(expr, "+") {
		prod := int64(1)
		for _, f := range strings.Split(term, "*") {
			v, err := strconv.ParseInt(strings.TrimSpace(f), 0, 64)
			if err != nil {
				return 0, unsupported("shell arithmetic $((%s))", expr)
			}
			prod *= v
		}
		total += prod
	}
	return total, nil
}
