package linux

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"unsafe"

	"github.com/vishvananda/netlink"
	"golang.org/x/sys/unix"
)

// A namespace of a run is an anonymous network namespace: it is created by
// unshare(CLONE_NEWNET) on a locked OS thread and kept alive only by file
// descriptors this process holds (its /proc/thread-self/ns/net, the TUN
// device, the sockets). Nothing is mounted under /run/netns, so when the
// process ends, however it ends (kill -9 included), the kernel drops the
// last reference and destroys the namespace with its TUN device, routes,
// sysctls and sockets (net/core/net_namespace.c, cleanup_net). This is why
// the subject has no namespaces to sweep after a crash; only the tracefs
// instances outlive the process (see sweep).

// nsAddr are the addresses inside the two namespaces: the sender's TUN is
// 10.0.0.1/24 and the receiver's 10.0.0.2/24. They are private to the
// namespaces, so every run may use the same ones.
var (
	senderIP   = net.IPv4(10, 0, 0, 1).To4()
	receiverIP = net.IPv4(10, 0, 0, 2).To4()
)

const (
	tunName = "actfuzz0" // the TUN device inside each namespace
	// mtu is the native subject's packet size: tcp.DefaultMSS (1448) +
	// IPv4 (20) + TCP (20) + timestamp option (12), so that a full
	// segment is 1500 bytes on the emulated wire, as natively.
	mtu = 1500
	// listenPort is the receiver's port.
	listenPort = 5001
)

// netns is one namespace of a run: the descriptor that keeps it alive and
// its TUN device (non-blocking, owned by the emulator's thread).
type netns struct {
	fd  int // /proc/thread-self/ns/net of the namespace
	tun int // the TUN device's queue
}

func (n *netns) close() {
	if n.tun > 0 {
		_ = unix.Close(n.tun)
		n.tun = 0
	}
	if n.fd > 0 {
		_ = unix.Close(n.fd)
		n.fd = 0
	}
}

// onThread runs f on a locked OS thread: f may move the thread into
// another network namespace (setns, unshare), and such a thread must not
// run other goroutines until it is back (Go would otherwise schedule them
// in the wrong namespace). Afterwards the thread returns to the namespace
// it came from and is unlocked; if it cannot return, it stays locked and
// the runtime ends it with the goroutine (or, for the main thread, parks
// it for good), so that no goroutine ever runs in a run's namespace.
func onThread(f func() error) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		orig, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			errc <- fmt.Errorf("open own namespace: %w", err)
			return
		}
		defer unix.Close(orig)
		err = f()
		if unix.Setns(orig, unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread()
		}
		errc <- err
	}()
	return <-errc
}

// newNS creates an anonymous network namespace and runs setup inside it
// (on the thread that created it). The namespace lives as long as the
// returned descriptor, or anything setup created in it, is open.
func newNS(setup func(n *netns) error) (*netns, error) {
	n := &netns{}
	err := onThread(func() error {
		if err := unix.Unshare(unix.CLONE_NEWNET); err != nil {
			return fmt.Errorf("unshare(CLONE_NEWNET): %w", err)
		}
		fd, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			return fmt.Errorf("open namespace: %w", err)
		}
		n.fd = fd
		return setup(n)
	})
	if err != nil {
		n.close()
		return nil, err
	}
	return n, nil
}

// in runs f on a thread inside namespace n.
func (n *netns) in(f func() error) error {
	return onThread(func() error {
		if err := unix.Setns(n.fd, unix.CLONE_NEWNET); err != nil {
			return fmt.Errorf("setns: %w", err)
		}
		return f()
	})
}

// sysctl writes a sysctl of the calling thread's network namespace. The
// net.* sysctls under /proc/sys are resolved against the network namespace
// of the task that opens them (net/sysctl_net.c, net_ctl_header_lookup
// uses current->nsproxy->net_ns), and the caller is always a thread that
// has entered one of our namespaces, so the host's values are never
// written. A test compares the host's values before and after a run.
func sysctl(name, value string) error {
	p := filepath.Join("/proc/sys", strings.ReplaceAll(name, ".", "/"))
	if err := os.WriteFile(p, []byte(value), 0); err != nil {
		return fmt.Errorf("sysctl %s=%s (inside the run's namespace): %w", name, value, err)
	}
	return nil
}

// ifreq is struct ifreq for TUNSETIFF (include/uapi/linux/if.h).
type ifreq struct {
	name  [unix.IFNAMSIZ]byte
	flags uint16
	_     [22]byte
}

// openTUN creates the TUN device in the calling thread's namespace: a
// tun_file records the namespace of the task that opens /dev/net/tun
// (drivers/net/tun.c, tun_chr_open), and the device is created there. It
// is IFF_TUN (IP packets, no Ethernet header), IFF_NO_PI (no packet-info
// prefix) and without IFF_VNET_HDR, so the device offers no offloads: the
// stack segments and checksums every packet in software before the
// emulator sees it, and every packet on the emulated wire is at most one
// MTU, as on the native subject's link. The descriptor is non-blocking:
// the emulator polls it.
func openTUN() (int, error) {
	fd, err := unix.Open("/dev/net/tun", unix.O_RDWR|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, fmt.Errorf("open /dev/net/tun: %w", err)
	}
	var req ifreq
	copy(req.name[:], tunName)
	req.flags = unix.IFF_TUN | unix.IFF_NO_PI
	if _, _, e := unix.Syscall(unix.SYS_IOCTL, uintptr(fd), unix.TUNSETIFF, uintptr(unsafe.Pointer(&req))); e != 0 {
		_ = unix.Close(fd)
		return -1, fmt.Errorf("TUNSETIFF %s: %w", tunName, e)
	}
	return fd, nil
}

// hostConfig is what one namespace is given.
type hostConfig struct {
	addr, peer net.IP
	sack       bool
	initCwnd   int
	receiver   bool
}

// configure sets up the calling thread's fresh namespace: sysctls, the
// loopback, the TUN device with its address, and the route to the peer
// with the initial window. Every value is set explicitly, not left to the
// kernel's defaults, so that a run does not depend on how the kernel was
// built or on the host's settings (a new namespace inherits some values
// from the host's, e.g. net.ipv4.tcp_congestion_control).
func configure(n *netns, hc hostConfig) error {
	sysctls := [][2]string{
		// No IPv6 on the TUN: no router or neighbour solicitations on
		// the emulated wire.
		{"net.ipv6.conf.all.disable_ipv6", "1"},
		{"net.ipv6.conf.default.disable_ipv6", "1"},
		// RFC 2018 SACK as the campaign says (Config.SACK).
		{"net.ipv4.tcp_sack", boolStr(hc.sack)},
		// RFC 7323 timestamps on, as the native subject's packets
		// carry them (sim.IPTCPHeaderBytes).
		{"net.ipv4.tcp_timestamps", "1"},
		// No ECN: the link model marks nothing and the native subject
		// does not negotiate it.
		{"net.ipv4.tcp_ecn", "0"},
		// Every run starts from nothing: no cached ssthresh or RTT
		// from an earlier connection (tcp_metrics).
		{"net.ipv4.tcp_no_metrics_save", "1"},
		// Linux's defaults, written out: 4 MB send buffer at most
		// (tcp.DefaultSndBuf natively), and a receive buffer that
		// never limits the flow (64 MB, as the gVisor subject).
		{"net.ipv4.tcp_wmem", "4096 16384 4194304"},
		{"net.ipv4.tcp_rmem", "4096 131072 67108864"},
		{"net.ipv4.tcp_moderate_rcvbuf", "1"},
		{"net.ipv4.tcp_window_scaling", "1"},
		{"net.ipv4.tcp_slow_start_after_idle", "1"},
		// No PLB/MTU probing surprises.
		{"net.ipv4.tcp_mtu_probing", "0"},
	}
	for _, s := range sysctls {
		if err := sysctl(s[0], s[1]); err != nil {
			return err
		}
	}
	lo, err := netlink.LinkByName("lo")
	if err != nil {
		return fmt.Errorf("loopback: %w", err)
	}
	if err := netlink.LinkSetUp(lo); err != nil {
		return fmt.Errorf("loopback up: %w", err)
	}
	fd, err := openTUN()
	if err != nil {
		return err
	}
	n.tun = fd
	tun, err := netlink.LinkByName(tunName)
	if err != nil {
		return fmt.Errorf("%s: %w", tunName, err)
	}
	if err := netlink.LinkSetMTU(tun, mtu); err != nil {
		return fmt.Errorf("%s mtu: %w", tunName, err)
	}
	if err := netlink.LinkSetUp(tun); err != nil {
		return fmt.Errorf("%s up: %w", tunName, err)
	}
	// A /32 address and a host route to the peer: the route is the one
	// place the initial window is set (ip route … initcwnd, RTAX_INITCWND,
	// read by tcp_init_cwnd).
	a := &netlink.Addr{IPNet: &net.IPNet{IP: hc.addr, Mask: net.CIDRMask(32, 32)}}
	if err := netlink.AddrAdd(tun, a); err != nil {
		return fmt.Errorf("%s address %v: %w", tunName, hc.addr, err)
	}
	rt := &netlink.Route{
		LinkIndex: tun.Attrs().Index,
		Dst:       &net.IPNet{IP: hc.peer, Mask: net.CIDRMask(32, 32)},
		Src:       hc.addr,
		Scope:     netlink.SCOPE_LINK,
		InitCwnd:  hc.initCwnd,
	}
	if err := netlink.RouteAdd(rt); err != nil {
		return fmt.Errorf("route to %v (initcwnd %d): %w", hc.peer, hc.initCwnd, err)
	}
	return nil
}

func boolStr(b bool) string {
	if b {
		return "1"
	}
	return "0"
}

// pidAlive reports whether a process with this pid exists.
func pidAlive(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}

// parseOwner parses the pid out of a name prefix-PID-N.
func parseOwner(name, prefix string) (int, bool) {
	rest, ok := strings.CutPrefix(name, prefix+"-")
	if !ok {
		return 0, false
	}
	p, _, _ := strings.Cut(rest, "-")
	pid, err := strconv.Atoi(p)
	return pid, err == nil && pid > 0
}
