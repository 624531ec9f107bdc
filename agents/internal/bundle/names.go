// Package bundle is the contract between the API's compiler and the node
// agent: which file names a bundle may carry, which daemon reads each, the
// mode each is written with, haproxy.d/servers.json (every server's weight
// and administrative state, which lets the agent apply such changes without
// a reload), keepalived.d/ipvs.json (the IPVS virtual servers keepalived
// manages and the kernel scheduler each should use) and
// keepalived.d/ha.json (the node's VRRP high availability) and
// firewall.nft (the node's firewall sets).
package bundle

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
)

// File names of the HAProxy unit. haproxy.cfg refers to the others as
// "${FULCRUM_CONF_DIR}/haproxy.d/<leaf>".
const (
	// MainFile is the configuration HAProxy loads; every bundle has it.
	MainFile = "haproxy.cfg"
	// IncludeDir holds the files haproxy.cfg refers to: maps, certificates,
	// check scripts, servers.json.
	IncludeDir = "haproxy.d"
	// ServersFile lists every server's weight and admin state.
	ServersFile = IncludeDir + "/servers.json"
)

// File names of the keepalived unit (layer 4: IPVS, and VRRP). A bundle
// has them only when the revision has layer-4 services or the node is in
// an HA group.
const (
	// KeepalivedFile is keepalived's whole configuration.
	KeepalivedFile = "keepalived.conf"
	// KeepalivedDir holds the files of the keepalived unit other than its
	// configuration: ipvs.json, ha.json, fulcrum.nft, check scripts.
	KeepalivedDir = "keepalived.d"
	// IPVSFile lists the IPVS virtual servers and their wanted schedulers.
	IPVSFile = KeepalivedDir + "/ipvs.json"
	// NftFile is an nftables script (it creates and flushes its own table
	// NftTable) that sets the firewall marks of port-range services.
	NftFile = KeepalivedDir + "/fulcrum.nft"
	// NftTable is the table NftFile owns, as nft names it.
	NftTable = "inet fulcrum"
)

// The firewall unit. Every bundle the API compiles has FirewallFile; the
// agent loads it only when it manages the node's firewall (--firewall).
const (
	// FirewallFile is an nftables script that replaces the elements of the
	// sets FirewallSets of FirewallTable (the appliance's firewall baseline
	// makes the table; the script does not).
	FirewallFile = "firewall.nft"
	// FirewallTable is the baseline's table, as nft names it.
	FirewallTable = "inet fulcrum_firewall"
)

// FirewallSets are the sets of FirewallTable that FirewallFile fills:
// the virtual services (destination . protocol . port) and the traffic
// between the balancers (source . destination . protocol . port).
var FirewallSets = []string{"services4", "services6", "cluster4", "cluster6"}

// Part is the share of a bundle one daemon reads: its main file and the
// directory of the files that belong with it. The agent checks, reloads
// and stops each daemon on its own part only.
type Part struct {
	// Daemon names the daemon in logs and reports.
	Daemon string
	// MainFile is the file the daemon loads; a bundle without it does not
	// configure the daemon.
	MainFile string
	// Dir holds the part's other files, one level deep; empty when the
	// part is its main file alone.
	Dir string
}

// The parts a bundle may have.
var (
	// HAProxyPart is haproxy.cfg and haproxy.d/; every bundle has it.
	HAProxyPart = Part{Daemon: "haproxy", MainFile: MainFile, Dir: IncludeDir}
	// KeepalivedPart is keepalived.conf and keepalived.d/.
	KeepalivedPart = Part{Daemon: "keepalived", MainFile: KeepalivedFile, Dir: KeepalivedDir}
	// FirewallPart is firewall.nft, alone.
	FirewallPart = Part{Daemon: "firewall", MainFile: FirewallFile}
	// Parts lists every part.
	Parts = []Part{HAProxyPart, KeepalivedPart, FirewallPart}
)

// Owns reports whether the bundle file name belongs to the part.
func (p Part) Owns(name string) bool {
	if name == p.MainFile {
		return true
	}
	if p.Dir == "" {
		return false
	}
	leaf, ok := strings.CutPrefix(name, p.Dir+"/")
	return ok && includeLeaf.MatchString(leaf)
}

// In reports whether files configure the part's daemon: they hold its
// main file.
func (p Part) In(files map[string]string) bool {
	_, ok := files[p.MainFile]
	return ok
}

// Of returns the part's files among files.
func (p Part) Of(files map[string]string) map[string]string {
	out := map[string]string{}
	for name, content := range files {
		if p.Owns(name) {
			out[name] = content
		}
	}
	return out
}

// includeLeaf is the rule for a file name inside IncludeDir or
// KeepalivedDir. Its first
// character rules out ".", ".." and hidden files; "/" and "\" are not
// allowed at all.
var includeLeaf = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$`)

// CheckNames accepts the file names of a bundle: MainFile, which is
// required, KeepalivedFile, FirewallFile, and any number of
// IncludeDir/<leaf> and KeepalivedDir/<leaf>. Anything else (other
// directories, "..", absolute paths, deeper nesting) is refused.
func CheckNames(files map[string]string) error {
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names) // the same bundle always gets the same message
	for _, name := range names {
		if !validName(name) {
			return fmt.Errorf("refused file name %q: want %s, %s, %s, %s/<leaf> or %s/<leaf> with <leaf> matching %s",
				name, MainFile, KeepalivedFile, FirewallFile, IncludeDir, KeepalivedDir, includeLeaf)
		}
	}
	if _, ok := files[MainFile]; !ok {
		return fmt.Errorf("bundle lacks %s", MainFile)
	}
	return nil
}

func validName(name string) bool {
	return slices.ContainsFunc(Parts, func(p Part) bool { return p.Owns(name) })
}

// Mode is the permission a file is written with: scripts (haproxy.d/*.sh,
// keepalived.d/*.sh) are executable by their owner only, everything else
// is readable by its owner only, since bundles carry TLS private keys.
func Mode(name string) os.FileMode {
	for _, p := range Parts {
		if name != p.MainFile && p.Owns(name) && strings.HasSuffix(name, ".sh") {
			return 0o700
		}
	}
	return 0o600
}

// DirMode is the permission of every directory holding bundle files.
const DirMode os.FileMode = 0o700
