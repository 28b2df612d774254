package ns3

import (
	"fmt"
	"strings"
)

// Models are the ns-3.37 TCP congestion controls the driver offers, by
// their ns-3 class names. TcpWestwoodPlus is TcpWestwood with
// ProtocolType=WestwoodPlus (ns-3 has one class for both).
//
// In 3.37 TcpCubic's TypeId names TcpSocketBase as its parent, so a list
// built from TcpCongestionOps's children misses it; the driver uses this
// fixed list instead.
var Models = []string{
	"TcpNewReno", "TcpLinuxReno", "TcpCubic", "TcpBbr", "TcpBic",
	"TcpDctcp", "TcpHighSpeed", "TcpHtcp", "TcpHybla", "TcpIllinois",
	"TcpLedbat", "TcpLp", "TcpScalable", "TcpVegas", "TcpVeno",
	"TcpWestwood", "TcpWestwoodPlus", "TcpYeah",
}

// nativeToNS3 maps the names of package ccai to the closest ns-3 model,
// so that one configuration can run on both subjects (actfuzz diff).
var nativeToNS3 = map[string]string{
	"reno":      "TcpLinuxReno",
	"newreno":   "TcpNewReno",
	"cubic":     "TcpCubic",
	"bbr":       "TcpBbr",
	"bic":       "TcpBic",
	"dctcp":     "TcpDctcp",
	"highspeed": "TcpHighSpeed",
	"htcp":      "TcpHtcp",
	"hybla":     "TcpHybla",
	"illinois":  "TcpIllinois",
	"ledbat":    "TcpLedbat",
	"lp":        "TcpLp",
	"scalable":  "TcpScalable",
	"vegas":     "TcpVegas",
	"veno":      "TcpVeno",
	"westwood":  "TcpWestwoodPlus", // Linux's tcp_westwood is Westwood+
	"yeah":      "TcpYeah",
}

// Model resolves a congestion-control name for the ns-3 subject: an ns-3
// class name (any case, with or without "ns3::") or the name of the
// corresponding native CCAI ("cubic" → TcpCubic, "reno" → TcpLinuxReno).
func Model(name string) (string, error) {
	n := strings.TrimPrefix(strings.TrimSpace(name), "ns3::")
	for _, m := range Models {
		if strings.EqualFold(n, m) {
			return m, nil
		}
	}
	if m, ok := nativeToNS3[strings.ToLower(n)]; ok {
		return m, nil
	}
	return "", fmt.Errorf("unknown ns-3 congestion control %q (known: %s; or a native name: reno, cubic, ...)",
		name, strings.Join(Models, ", "))
}

// NativeName maps an ns-3 model name to the native CCAI that corresponds
// to it ("TcpCubic" → "cubic"); other names are returned unchanged.
func NativeName(name string) string {
	m, err := Model(name)
	if err != nil || !strings.HasPrefix(strings.ToLower(strings.TrimPrefix(name, "ns3::")), "tcp") {
		return name
	}
	switch m {
	case "TcpLinuxReno":
		return "reno"
	case "TcpNewReno":
		return "reno" // no separate native NewReno: Reno with SACK/NewReno recovery
	case "TcpWestwood", "TcpWestwoodPlus":
		return "westwood"
	}
	for native, ns := range nativeToNS3 {
		if ns == m {
			return native
		}
	}
	return name
}

// CCAFor translates a flow's congestion-control name for a subject by its
// Name(): ns-3 names for "ns3", native names for "native", unchanged for
// others.
func CCAFor(subject, name string) string {
	switch subject {
	case "ns3":
		if m, err := Model(name); err == nil {
			return m
		}
	case "native":
		return NativeName(name)
	}
	return name
}
