package feedback

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"sync"

	"golang.org/x/sys/unix"
)

// ModuleFile is the ip_vs_dllc module's load interface,
// /proc/net/ip_vs_dllc, of one network namespace: each write is one line
// "<proto> <vip>:<port> <rip>:<port> <milli-load>" or
// "fwm <mark> <rip>:<port> <milli-load>" (appliance/kernel/ip_vs_dllc/README.md).
type ModuleFile struct {
	// NetNS is the path of the network namespace, e.g. /run/netns/fl-lb;
	// empty means the agent's own.
	NetNS string

	mu sync.Mutex
	f  *os.File
}

// procFile is the interface's name in the namespace of the thread that
// opens it; /proc/net would follow the process's first thread instead.
const procFile = "/proc/thread-self/net/ip_vs_dllc"

// Write sends one line. The file is opened on first use and again after an
// error (the module may have been unloaded and loaded again).
func (m *ModuleFile) Write(line string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.f == nil {
		f, err := m.open()
		if err != nil {
			return err
		}
		m.f = f
	}
	_, err := m.f.WriteString(line + "\n")
	if err != nil && !errors.Is(err, unix.ENOENT) && !errors.Is(err, unix.EINVAL) {
		// Not a refusal of this line: the file itself is gone or broken.
		_ = m.f.Close()
		m.f = nil
	}
	return err
}

// Close releases the file.
func (m *ModuleFile) Close() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.f == nil {
		return nil
	}
	err := m.f.Close()
	m.f = nil
	return err
}

// open opens the file from inside NetNS (see inNetNS).
func (m *ModuleFile) open() (*os.File, error) {
	if m.NetNS == "" {
		return os.OpenFile(procFile, os.O_WRONLY, 0)
	}
	var f *os.File
	err := inNetNS(m.NetNS, func() (err error) {
		f, err = os.OpenFile(procFile, os.O_WRONLY, 0)
		return err
	})
	return f, err
}

// moduleLine renders one load for the module: "tcp 10.0.0.10:80
// 10.0.1.2:80 500", or "fwm 7 [2001:db8::2]:80 500" for a mark service.
func moduleLine(protocol, vip string, port int, fwmark uint32, dest netip.AddrPort, milli uint32) string {
	if fwmark != 0 {
		return fmt.Sprintf("fwm %d %s %d", fwmark, dest, milli)
	}
	addr, _ := netip.ParseAddr(vip) // validated by bundle.ParseIPVS
	return fmt.Sprintf("%s %s %s %d", protocol, netip.AddrPortFrom(addr, uint16(port)), dest, milli)
}
