package cli

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
)

// offlineAfter is how long a node may stay silent before status calls it
// offline: its agent polls at least once a minute.
const offlineAfter = 2 * time.Minute

// status is what `fulcrum status -o json` prints.
type status struct {
	NewestRevision *int            `json:"newest_revision"`
	Nodes          []nodeStatus    `json:"nodes"`
	VIPs           []vipStatus     `json:"vips"`
	Health         []healthProblem `json:"health"`
}

type nodeStatus struct {
	Name     string `json:"name"`
	Address  string `json:"address"`
	Running  *int   `json:"running_revision"`
	Apply    string `json:"newest_revision_state"`
	Message  string `json:"message,omitempty"`
	LastSeen string `json:"last_seen"`
	Online   bool   `json:"online"`
	Standby  bool   `json:"standby"`
	VRRP     []vrrp `json:"vrrp"`
}

type vrrp struct {
	Group string `json:"group"`
	State string `json:"state"`
}

type vipStatus struct {
	Service  string   `json:"service"`
	Address  string   `json:"address"`
	Protocol string   `json:"protocol"`
	Pool     string   `json:"pool"`
	Enabled  bool     `json:"enabled"`
	HAGroup  string   `json:"ha_group,omitempty"`
	Masters  []string `json:"masters"`
}

type healthProblem struct {
	Pool   string `json:"pool"`
	Member string `json:"member"`
	Node   string `json:"node,omitempty"`
	State  string `json:"state"`
	Reason string `json:"reason"`
}

func (a *app) statusCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Nodes (revision running vs newest, VRRP roles), VIPs and their masters, members not up",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			s, err := a.collectStatus(cmd.Context())
			if err != nil {
				return err
			}
			if a.flags.output != "table" {
				return a.writeData(marshalRaw(s))
			}
			return a.printStatus(s)
		},
	}
}

func (a *app) collectStatus(ctx context.Context) (status, error) {
	n := a.namer(ctx)
	var s status
	revs, err := a.revisions(ctx, 1)
	if err != nil {
		return s, err
	}
	lists := map[string][]item{}
	for _, name := range []string{"node", "ha-group", "virtual-service", "member"} {
		if lists[name], err = n.items(name); err != nil {
			return s, err
		}
	}
	var newest *revision
	if len(revs) > 0 {
		newest = &revs[0]
		s.NewestRevision = &revs[0].Number
	}
	s.Nodes = nodeStatuses(lists["node"], newest)
	s.VIPs = vipStatuses(lists["virtual-service"], lists["ha-group"], s.Nodes, n)
	s.Health = healthProblems(lists["member"], n)
	return s, nil
}

func nodeStatuses(nodes []item, newest *revision) []nodeStatus {
	out := make([]nodeStatus, 0, len(nodes))
	for _, it := range nodes {
		o := it.obj
		ns := nodeStatus{Name: format(o["name"]), Address: format(o["address"]), Apply: "-", LastSeen: age(o["last_seen"]), VRRP: []vrrp{}}
		if v, ok := o["applied_revision"].(float64); ok {
			running := int(v)
			ns.Running = &running
		}
		ns.Standby, _ = o["standby"].(bool)
		if seen, ok := o["last_seen"].(string); ok {
			at, err := time.Parse(time.RFC3339Nano, seen)
			ns.Online = err == nil && now().Sub(at) < offlineAfter
		}
		if newest != nil {
			for _, state := range newest.Nodes {
				if state.Node == ns.Name {
					ns.Apply, ns.Message = state.State, state.Message
				}
			}
		}
		list, _ := o["vrrp"].([]any)
		for _, element := range list {
			if v, ok := element.(obj); ok {
				ns.VRRP = append(ns.VRRP, vrrp{Group: format(v["group"]), State: format(v["state"])})
			}
		}
		out = append(out, ns)
	}
	return out
}

func vipStatuses(services, groups []item, nodes []nodeStatus, n *names) []vipStatus {
	groupOf := map[string]string{}
	for _, g := range groups {
		vips, _ := g.obj["vips"].([]any)
		for _, vip := range vips {
			address, _, _ := strings.Cut(format(vip), "/")
			groupOf[address] = format(g.obj["name"])
		}
	}
	out := make([]vipStatus, 0, len(services))
	for _, it := range services {
		o := it.obj
		v := vipStatus{
			Service: format(o["name"]), Address: vipColumn(o, n), Protocol: format(o["protocol"]),
			Pool: n.name("pool", o["default_pool"]), Masters: []string{},
		}
		v.Enabled, _ = o["enabled"].(bool)
		v.HAGroup = groupOf[format(o["vip"])]
		for _, node := range nodes {
			for _, state := range node.VRRP {
				if v.HAGroup != "" && state.Group == v.HAGroup && state.State == "master" {
					v.Masters = append(v.Masters, node.Name)
				}
			}
		}
		out = append(out, v)
	}
	return out
}

// healthProblems are the members not up: set aside by an operator, or not
// healthy on a node (the live figures the nodes report, with their reason).
func healthProblems(members []item, n *names) []healthProblem {
	out := []healthProblem{}
	for _, it := range members {
		o := it.obj
		pool, member := n.name("pool", o["pool"]), format(o["name"])
		if state := format(o["state"]); state != "enabled" && state != "-" {
			out = append(out, healthProblem{Pool: pool, Member: member, State: state, Reason: "set by an operator"})
		}
		live, _ := o["live"].([]any)
		for _, element := range live {
			entry, ok := element.(obj)
			if !ok {
				continue
			}
			health := firstNonEmpty(str(entry, "status"), str(entry, "health"), str(entry, "check_status"))
			reason := firstNonEmpty(str(entry, "reason"), str(entry, "message"), str(entry, "check"))
			if (health != "" && !strings.EqualFold(health, "up")) || (health == "" && reason != "") {
				out = append(out, healthProblem{Pool: pool, Member: member, Node: str(entry, "node"),
					State: firstNonEmpty(health, "note"), Reason: firstNonEmpty(reason, "-")})
			}
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Pool+"/"+out[i].Member < out[j].Pool+"/"+out[j].Member })
	return out
}

func str(o obj, key string) string {
	if v, ok := o[key].(string); ok {
		return v
	}
	return ""
}

func (a *app) printStatus(s status) error {
	w := a.env.Stdout
	newest := "none"
	if s.NewestRevision != nil {
		newest = strconv.Itoa(*s.NewestRevision)
	}
	fmt.Fprintf(w, "NODES (newest revision: %s)\n", newest)
	rows := make([][]string, len(s.Nodes))
	for i, ns := range s.Nodes {
		running := "-"
		if ns.Running != nil {
			running = strconv.Itoa(*ns.Running)
		}
		state := "offline"
		if ns.Online {
			state = "online"
		}
		if ns.Standby {
			state += ",standby"
		}
		apply := ns.Apply
		if ns.Message != "" && ns.Apply == "failed" {
			apply += ": " + ns.Message
		}
		var roles []string
		for _, v := range ns.VRRP {
			roles = append(roles, v.Group+":"+v.State)
		}
		rows[i] = []string{ns.Name, ns.Address, running, state, ns.LastSeen, joinOrDash(roles), apply}
	}
	if err := sectionTable(w, []string{"NAME", "ADDRESS", "RUNNING", "STATE", "SEEN", "VRRP", "NEWEST"}, rows, "no node registered"); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nVIPS")
	rows = make([][]string, len(s.VIPs))
	for i, v := range s.VIPs {
		rows[i] = []string{v.Service, v.Address, v.Protocol, v.Pool, format(v.Enabled), firstNonEmpty(v.HAGroup, "-"), joinOrDash(v.Masters)}
	}
	if err := sectionTable(w, []string{"SERVICE", "VIP", "PROTOCOL", "POOL", "ENABLED", "HA GROUP", "MASTER"}, rows, "no virtual service"); err != nil {
		return err
	}
	fmt.Fprintln(w, "\nHEALTH")
	if len(s.Health) == 0 {
		fmt.Fprintln(w, "every member is up")
		return nil
	}
	rows = make([][]string, len(s.Health))
	for i, h := range s.Health {
		rows[i] = []string{h.Pool + "/" + h.Member, firstNonEmpty(h.Node, "-"), h.State, h.Reason}
	}
	return table(w, []string{"MEMBER", "NODE", "STATE", "REASON"}, rows)
}

// sectionTable is a table, or a line saying there is nothing to show.
func sectionTable(w io.Writer, header []string, rows [][]string, none string) error {
	if len(rows) == 0 {
		_, err := fmt.Fprintln(w, none)
		return err
	}
	return table(w, header, rows)
}
