package apply

import (
	"errors"
	"fmt"
	"slices"

	"fulcrum/agents/internal/bundle"
)

// runtimePlan decides whether the bundle files next can go live through
// HAProxy's runtime API instead of a reload, and returns the server
// changes to send. That is so when the live files are what the daemons
// loaded, and next differs from them only in haproxy.cfg and
// haproxy.d/servers.json, with both servers.json listing the same servers
// under the same structure hash: then the configurations differ only in
// server weights and admin states. Otherwise the error says why not.
func runtimePlan(st State, live, next map[string]string) ([]bundle.ServerChange, error) {
	if live == nil {
		return nil, errors.New("nothing is live yet")
	}
	if !isLoaded(st, live) {
		return nil, errors.New("the live files are not what the daemon loaded")
	}
	if name, ok := otherDifference(live, next); ok {
		return nil, fmt.Errorf("%s differs", name)
	}
	liveText, inLive := live[bundle.ServersFile]
	nextText, inNext := next[bundle.ServersFile]
	if !inLive || !inNext {
		return nil, fmt.Errorf("no %s to compare", bundle.ServersFile)
	}
	from, err := bundle.ParseServers(liveText)
	if err != nil {
		return nil, fmt.Errorf("live %w", err)
	}
	to, err := bundle.ParseServers(nextText)
	if err != nil {
		return nil, fmt.Errorf("new %w", err)
	}
	return bundle.DiffServers(from, to)
}

// otherDifference returns the first file, in name order, other than
// haproxy.cfg and servers.json that one set has and the other lacks or
// holds with different content.
func otherDifference(a, b map[string]string) (string, bool) {
	var names []string
	for name := range a {
		names = append(names, name)
	}
	for name := range b {
		if _, ok := a[name]; !ok {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	for _, name := range names {
		if name == bundle.MainFile || name == bundle.ServersFile {
			continue
		}
		ca, inA := a[name]
		cb, inB := b[name]
		if inA != inB || ca != cb {
			return name, true
		}
	}
	return "", false
}
