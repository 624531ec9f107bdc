package bundle

import (
	"encoding/json"
	"fmt"
	"net/netip"
	"regexp"
	"strings"
)

// Admin is a server's administrative state.
type Admin string

// Admin states servers.json may carry; they are also the words HAProxy's
// "set server <b>/<s> state" takes.
const (
	Ready Admin = "ready"
	Maint Admin = "maint"
)

// MaxWeight is the largest weight HAProxy accepts.
const MaxWeight = 256

// Server is one server's runtime settings as listed in servers.json.
type Server struct {
	// Backend and Server name the server as HAProxy does.
	Backend string `json:"backend"`
	Server  string `json:"server"`
	// Weight is the configured weight, 0 to MaxWeight.
	Weight int `json:"weight"`
	// Admin is ready or maint.
	Admin Admin `json:"admin"`
	// Address and Port are the server's endpoint in haproxy.cfg. A
	// servers.json written before they were listed has neither; such a
	// server's endpoint is unknown.
	Address string `json:"address,omitempty"`
	Port    int    `json:"port,omitempty"`
	// Checked says that HAProxy health-checks the server ("check"), so
	// that a check can bring it up once it is down.
	Checked bool `json:"checked,omitempty"`
	// Feedback is where the node agent reads the server's load; set for
	// the servers of dynamic-least-load pools only.
	Feedback Feedback `json:"feedback,omitzero"`
}

// Name is "backend/server", how HAProxy's runtime API names the server.
func (s Server) Name() string { return s.Backend + "/" + s.Server }

// Servers is the content of servers.json.
type Servers struct {
	// Structure is a hash of the configuration with every server's weight
	// and admin state masked out: two revisions with the same Structure
	// differ at most in those settings.
	Structure string `json:"structure"`
	// Servers lists every server of the configuration.
	Servers []Server `json:"servers"`
}

// haproxyName is what HAProxy accepts in proxy and server names. Checking it
// also keeps a name from smuggling a second command (";", newline) into a
// runtime API line.
var haproxyName = regexp.MustCompile(`^[A-Za-z0-9._:-]+$`)

// ParseServers decodes and validates servers.json. Fields it does not know
// are left alone: during a rolling upgrade, a newer API's servers.json (a
// field added for a newer agent) must still apply on this agent.
func ParseServers(text string) (Servers, error) {
	var s Servers
	if err := json.NewDecoder(strings.NewReader(text)).Decode(&s); err != nil {
		return s, fmt.Errorf("%s: %w", ServersFile, err)
	}
	if s.Structure == "" {
		return s, fmt.Errorf("%s: no structure hash", ServersFile)
	}
	seen := map[string]bool{}
	for i, srv := range s.Servers {
		if err := srv.validate(); err != nil {
			return s, fmt.Errorf("%s: servers/%d: %w", ServersFile, i, err)
		}
		if seen[srv.Name()] {
			return s, fmt.Errorf("%s: servers/%d: %s listed twice", ServersFile, i, srv.Name())
		}
		seen[srv.Name()] = true
	}
	return s, nil
}

func (s Server) validate() error {
	var err error
	switch {
	case !haproxyName.MatchString(s.Backend) || !haproxyName.MatchString(s.Server):
		return fmt.Errorf("bad server name %q: want %s for backend and server", s.Name(), haproxyName)
	case s.Weight < 0 || s.Weight > MaxWeight:
		return fmt.Errorf("%s: weight %d out of 0..%d", s.Name(), s.Weight, MaxWeight)
	case s.Admin != Ready && s.Admin != Maint:
		return fmt.Errorf("%s: admin %q, want %q or %q", s.Name(), s.Admin, Ready, Maint)
	case s.Address != "" || s.Port != 0:
		err = s.validateEndpoint()
	}
	if err == nil && s.Feedback != (Feedback{}) {
		err = s.Feedback.validate()
	}
	if err != nil {
		return fmt.Errorf("%s: %w", s.Name(), err)
	}
	return nil
}

func (s Server) validateEndpoint() error {
	addr, err := netip.ParseAddr(s.Address)
	switch {
	case err != nil || addr.Zone() != "":
		return fmt.Errorf("address %q: want an IP address", s.Address)
	case s.Port < 1 || s.Port > 65535:
		return fmt.Errorf("port %d: want 1 to 65535", s.Port)
	}
	return nil
}

// ServerChange is a server whose weight or admin state differs between two
// revisions.
type ServerChange struct {
	From, To Server
}

// Revert is the change that undoes c.
func (c ServerChange) Revert() ServerChange { return ServerChange{From: c.To, To: c.From} }

// DiffServers lists, in the order of to, the servers whose weight or admin
// state differ from from. It fails when the two revisions have a different
// structure or do not list the same servers: only a reload can apply those.
func DiffServers(from, to Servers) ([]ServerChange, error) {
	if from.Structure != to.Structure {
		return nil, fmt.Errorf("structure changed (%.12s -> %.12s)", from.Structure, to.Structure)
	}
	if len(from.Servers) != len(to.Servers) {
		return nil, fmt.Errorf("server count changed (%d -> %d)", len(from.Servers), len(to.Servers))
	}
	old := make(map[string]Server, len(from.Servers))
	for _, s := range from.Servers {
		old[s.Name()] = s
	}
	var changes []ServerChange
	for _, s := range to.Servers {
		prev, ok := old[s.Name()]
		if !ok {
			return nil, fmt.Errorf("server %s is new", s.Name())
		}
		if prev != s {
			changes = append(changes, ServerChange{From: prev, To: s})
		}
	}
	return changes, nil
}
