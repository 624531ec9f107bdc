package bundle

import (
	"fmt"
	"net/netip"
	"regexp"
)

// apiName is the API's object name rule (compiler/rules.py NAME_RE).
var apiName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$`)

// Feedback says where the node agent reads the load of one member of a
// dynamic-least-load (DLLC) pool: fulcrum-loadd's JSON endpoint on the
// member. The compiler writes it into servers.json (HAProxy pools, where
// the loads are only shown) and ipvs.json (IPVS services, where the agent
// feeds them to the ip_vs_dllc module or turns them into wlc weights).
type Feedback struct {
	// Pool and Member name the member for the API.
	Pool   string `json:"pool"`
	Member string `json:"member"`
	// Address and Port are where fulcrum-loadd's JSON endpoint answers.
	Address string `json:"address"`
	Port    int    `json:"port"`
}

// URL is the load endpoint, e.g. http://10.0.1.2:3334/v1/load.
func (f Feedback) URL() string {
	addr, _ := netip.ParseAddr(f.Address) // validated
	return "http://" + netip.AddrPortFrom(addr, uint16(f.Port)).String() + "/v1/load"
}

func (f Feedback) validate() error {
	addr, err := netip.ParseAddr(f.Address)
	switch {
	case !apiName.MatchString(f.Pool) || !apiName.MatchString(f.Member):
		return fmt.Errorf("feedback: pool %q / member %q: want names matching %s", f.Pool, f.Member, apiName)
	case err != nil || addr.Zone() != "":
		return fmt.Errorf("feedback: address %q: want an IP address", f.Address)
	case f.Port < 1 || f.Port > 65535:
		return fmt.Errorf("feedback: port %d: want 1 to 65535", f.Port)
	}
	return nil
}

// DestFeedback is a real server of an IPVS dllc service: where its load is
// read, its port in the IPVS table and the weight keepalived gives it.
type DestFeedback struct {
	Feedback
	// DestPort is the real server's port in the IPVS table.
	DestPort int `json:"dest_port"`
	// Weight is the member's weight in keepalived.conf (0 when drained).
	Weight int `json:"weight"`
}

func (d DestFeedback) validate() error {
	switch {
	case d.DestPort < 1 || d.DestPort > 65535:
		return fmt.Errorf("feedback %s: dest_port %d: want 1 to 65535", d.Member, d.DestPort)
	case d.Weight < 0:
		return fmt.Errorf("feedback %s: weight %d: want 0 or more", d.Member, d.Weight)
	}
	return d.Feedback.validate()
}
