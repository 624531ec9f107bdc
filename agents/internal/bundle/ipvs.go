package bundle

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"regexp"
	"strings"
)

// IPVSService is one IPVS virtual server keepalived manages, as listed in
// keepalived.d/ipvs.json. It is either an address service (Address and
// Port set, FWMark 0) or a firewall-mark service (FWMark > 0, Address ""
// and Port 0, Family saying inet or inet6).
type IPVSService struct {
	// Key names the service for the API, e.g. "tcp 10.0.0.10:80"; the
	// agent only echoes it back in its status.
	Key string `json:"key"`
	// Name is the virtual service's name in the API, echoed in the status.
	Name string `json:"name"`
	// Protocol is "tcp" or "udp".
	Protocol string `json:"protocol"`
	// Family is "inet" or "inet6"; empty means inet, or the address's.
	Family string `json:"family,omitempty"`
	// Address and Port are the virtual address of an address service.
	Address string `json:"address"`
	Port    int    `json:"port"`
	// FWMark is the firewall mark of a mark service, 0 otherwise.
	FWMark uint32 `json:"fwmark"`
	// Scheduler is the kernel scheduler the operator wants, e.g. "dllc".
	Scheduler string `json:"scheduler"`
	// KeepalivedScheduler is the scheduler keepalived.conf names, one
	// keepalived accepts; the agent replaces it with Scheduler in the
	// kernel where they differ.
	KeepalivedScheduler string `json:"keepalived_scheduler"`
	// HealthCheck is the type of keepalived's check of the members, e.g.
	// "tcp" or "http"; empty when the pool has none.
	HealthCheck string `json:"health_check,omitempty"`
	// Members lists the real servers keepalived.conf gives the service,
	// with the members they stand for.
	Members []IPVSMember `json:"members,omitempty"`
	// Feedback lists the real servers of a dllc service and where each
	// answers with its load; empty for other schedulers.
	Feedback []DestFeedback `json:"feedback,omitempty"`
}

// IPVSMember is one real server of an IPVS service, as keepalived.conf
// declares it: the pool member it stands for, its address and port in the
// kernel's table (port 0 for a firewall-mark service), and its weight.
type IPVSMember struct {
	// Pool and Member name it in the API.
	Pool   string `json:"pool"`
	Member string `json:"member"`
	// Address and Port are the real server as IPVS lists it.
	Address string `json:"address"`
	Port    int    `json:"port"`
	// Weight is its weight in keepalived.conf; 0 when drained.
	Weight int `json:"weight"`
	// Sorry says it is the service's sorry server, which keepalived adds
	// only when every other real server is out.
	Sorry bool `json:"sorry"`
}

// AddrPort is the real server's address and port.
func (m IPVSMember) AddrPort() netip.AddrPort {
	addr, _ := netip.ParseAddr(m.Address) // validated
	return netip.AddrPortFrom(addr, uint16(m.Port))
}

func (m IPVSMember) validate() error {
	addr, err := netip.ParseAddr(m.Address)
	switch {
	case !apiName.MatchString(m.Pool) || !apiName.MatchString(m.Member):
		return fmt.Errorf("members: pool %q / member %q: want names matching %s", m.Pool, m.Member, apiName)
	case err != nil || addr.Zone() != "":
		return fmt.Errorf("members: %s: address %q: want an IP address", m.Member, m.Address)
	case m.Port < 0 || m.Port > 65535:
		return fmt.Errorf("members: %s: port %d: want 0 to 65535", m.Member, m.Port)
	case m.Weight < 0:
		return fmt.Errorf("members: %s: weight %d: want 0 or more", m.Member, m.Weight)
	}
	return nil
}

// IPVS is the content of keepalived.d/ipvs.json.
type IPVS struct {
	// Services lists every virtual server keepalived.conf declares.
	Services []IPVSService `json:"services"`
}

// schedulerName is what the kernel accepts as a scheduler name
// (IP_VS_SCHEDNAME_MAXLEN is 16 with the terminating NUL). It also keeps
// the name safe to print in logs and messages.
var schedulerName = regexp.MustCompile(`^[a-z0-9_]{1,15}$`)

// ParseIPVS parses and validates ipvs.json: keys unique and non-empty,
// protocols tcp or udp, address services with an IP address and a port
// from 1 to 65535, mark services with neither, and scheduler names the
// kernel could know.
func ParseIPVS(text string) (IPVS, error) {
	var v IPVS
	dec := json.NewDecoder(strings.NewReader(text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		return IPVS{}, fmt.Errorf("%s: %w", IPVSFile, err)
	}
	seen := map[string]bool{}
	for i, s := range v.Services {
		if err := s.validate(); err != nil {
			return IPVS{}, fmt.Errorf("%s: service %d (%q): %w", IPVSFile, i, s.Key, err)
		}
		if seen[s.Key] {
			return IPVS{}, fmt.Errorf("%s: key %q listed twice", IPVSFile, s.Key)
		}
		seen[s.Key] = true
	}
	return v, nil
}

func (s IPVSService) validate() error {
	switch {
	case s.Key == "":
		return fmt.Errorf("empty key")
	case s.Protocol != "tcp" && s.Protocol != "udp":
		return fmt.Errorf("protocol %q: want tcp or udp", s.Protocol)
	case s.Family != "" && s.Family != "inet" && s.Family != "inet6":
		return fmt.Errorf("family %q: want inet or inet6", s.Family)
	case !schedulerName.MatchString(s.Scheduler):
		return fmt.Errorf("scheduler %q: want a name matching %s", s.Scheduler, schedulerName)
	case !schedulerName.MatchString(s.KeepalivedScheduler):
		return fmt.Errorf("keepalived_scheduler %q: want a name matching %s", s.KeepalivedScheduler, schedulerName)
	}
	for _, f := range s.Feedback {
		if err := f.validate(); err != nil {
			return err
		}
	}
	for _, m := range s.Members {
		if err := m.validate(); err != nil {
			return err
		}
	}
	if s.FWMark > 0 {
		if s.Address != "" || s.Port != 0 {
			return fmt.Errorf("a firewall-mark service has no address or port")
		}
		return nil
	}
	addr, err := netip.ParseAddr(s.Address)
	switch {
	case err != nil || addr.Zone() != "":
		return fmt.Errorf("address %q: want an IP address", s.Address)
	case s.Port < 1 || s.Port > 65535:
		return fmt.Errorf("port %d: want 1 to 65535", s.Port)
	case s.Family != "" && s.Family != familyOf(addr):
		return fmt.Errorf("family %q does not match address %s", s.Family, s.Address)
	}
	return nil
}

// AddressFamily is "inet" or "inet6": Family if set, else the address's.
func (s IPVSService) AddressFamily() string {
	if s.Family != "" {
		return s.Family
	}
	if addr, err := netip.ParseAddr(s.Address); err == nil {
		return familyOf(addr)
	}
	return "inet"
}

func familyOf(addr netip.Addr) string {
	if addr.Is4() {
		return "inet"
	}
	return "inet6"
}
