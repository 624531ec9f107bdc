package cli

import (
	"context"
	"io"
	"net/http"
	"strconv"
	"strings"

	"fulcrum/agents/internal/apiclient"
)

const jsonType = "application/json"

// obj is one API object as decoded JSON.
type obj = map[string]any

// ops are a kind's REST calls, through the generated client.
type ops struct {
	list   func(ctx context.Context, c *apiclient.Client, limit, offset int) (*http.Response, error)
	get    func(ctx context.Context, c *apiclient.Client, id int) (*http.Response, error)
	create func(ctx context.Context, c *apiclient.Client, body io.Reader) (*http.Response, error)
	update func(ctx context.Context, c *apiclient.Client, id int, ifMatch *string, body io.Reader) (*http.Response, error)
	remove func(ctx context.Context, c *apiclient.Client, id int, ifMatch *string) (*http.Response, error)
}

// column is one column of a kind's table.
type column struct {
	header string
	value  func(o obj, n *names) string
}

// kind is one type of API object as the CLI shows it.
type kind struct {
	name    string // singular, the command: "pool"
	plural  string
	aliases []string
	short   string
	// key are the fields that name an object for people, joined by "/":
	// a member is pool/name. A field that refers to another kind shows that one's name.
	key []string
	// refs are the fields (a path "nodes[].node" for lists of objects) that hold
	// another kind's id: people may give names there, tables show names.
	refs map[string]string
	// columns of the table; -o json|yaml print the API's objects.
	columns []column
	// path is the kind's collection (or, for a singleton, its object) under the API's root.
	path string
	ops  ops
	// singleton kinds (ipvs-sync) have one object, no id: show and update only.
	singleton   bool
	noCreate    bool
	noUpdate    bool
	noDelete    bool
	description string
}

// rest are the calls of a kind at its collection path ("api/v1/pools/"), as the API serves
// every kind: GET ?limit&offset, POST, and GET, PATCH and DELETE of {id}/, the last two with
// the version read (If-Match). They go through the generated client's server, HTTP client
// and request editors; TestKindsAreTheSchemas checks api/openapi.yaml has each call a kind uses.
func rest(path string) ops {
	item := func(id int) string { return path + strconv.Itoa(id) + "/" }
	return ops{
		list: func(ctx context.Context, c *apiclient.Client, limit, offset int) (*http.Response, error) {
			return call(ctx, c, http.MethodGet, path+"?limit="+strconv.Itoa(limit)+"&offset="+strconv.Itoa(offset), nil, nil)
		},
		get: func(ctx context.Context, c *apiclient.Client, id int) (*http.Response, error) {
			return call(ctx, c, http.MethodGet, item(id), nil, nil)
		},
		create: func(ctx context.Context, c *apiclient.Client, body io.Reader) (*http.Response, error) {
			return call(ctx, c, http.MethodPost, path, nil, body)
		},
		update: func(ctx context.Context, c *apiclient.Client, id int, ifMatch *string, body io.Reader) (*http.Response, error) {
			return call(ctx, c, http.MethodPatch, item(id), ifMatch, body)
		},
		remove: func(ctx context.Context, c *apiclient.Client, id int, ifMatch *string) (*http.Response, error) {
			return call(ctx, c, http.MethodDelete, item(id), ifMatch, nil)
		},
	}
}

// single are the calls of a kind with one object at path ("api/v1/ipvs-sync/"): GET and PATCH.
func single(path string) ops {
	return ops{
		get: func(ctx context.Context, c *apiclient.Client, _ int) (*http.Response, error) {
			return call(ctx, c, http.MethodGet, path, nil, nil)
		},
		update: func(ctx context.Context, c *apiclient.Client, _ int, ifMatch *string, body io.Reader) (*http.Response, error) {
			return call(ctx, c, http.MethodPatch, path, ifMatch, body)
		},
	}
}

// call sends one request to the API the generated client c is set up for.
func call(ctx context.Context, c *apiclient.Client, method, path string, ifMatch *string, body io.Reader) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, method, c.Server+path, body)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", jsonType)
	}
	if ifMatch != nil {
		req.Header.Set("If-Match", *ifMatch)
	}
	for _, edit := range c.RequestEditors {
		if err := edit(ctx, req); err != nil {
			return nil, err
		}
	}
	return c.Client.Do(req)
}

// kinds are the objects the CLI manages, in the order `fulcrum --help` lists them.
var kinds []*kind

// init fills kinds (their columns look kinds up, which a variable's initializer may not).
func init() {
	kinds = []*kind{
		{
			name: "virtual-service", plural: "virtual-services", aliases: []string{"vs", "service", "services", "virtual-services"},
			short: "Virtual services: a VIP and port, how traffic is taken in, and its default pool",
			key:   []string{"name"},
			refs: map[string]string{"default_pool": "pool", "default_certificate": "certificate",
				"sni_certificates": "certificate", "client_ca": "certificate"},
			columns: []column{
				text("NAME", "name"), {"VIP", vipColumn}, text("PROTOCOL", "protocol"), text("FORWARDING", "forwarding"),
				ref("POOL", "default_pool", "pool"), text("ENABLED", "enabled"), count("WARNINGS", "warnings"),
			},
			path: "api/v1/virtual-services/",
		},
		{
			name: "rule", plural: "rules", aliases: []string{"rules"},
			short: "Content-switching rules of a virtual service, addressed as SERVICE/RULE",
			key:   []string{"virtual_service", "name"},
			refs:  map[string]string{"virtual_service": "virtual-service", "pool": "pool"},
			columns: []column{
				ref("SERVICE", "virtual_service", "virtual-service"), text("POSITION", "position"), text("NAME", "name"),
				text("ACTION", "action"), ref("POOL", "pool", "pool"), text("ENABLED", "enabled"), count("CONDITIONS", "conditions"),
			},
			path: "api/v1/rules/",
		},
		{
			name: "pool", plural: "pools", aliases: []string{"pools"},
			short: "Pools of real servers (members) and how they are balanced",
			key:   []string{"name"},
			refs:  map[string]string{"tls_ca": "certificate"},
			columns: []column{
				text("NAME", "name"), text("ALGORITHM", "algorithm"), count("MEMBERS", "members"),
				{"HEALTH CHECK", func(o obj, _ *names) string { return format(lookup(o, "health_check.type")) }},
				text("DESCRIPTION", "description"),
			},
			path: "api/v1/pools/",
		},
		{
			name: "member", plural: "members", aliases: []string{"members"},
			short: "Members (real servers) of a pool, addressed as POOL/MEMBER; drain, enable, disable",
			key:   []string{"pool", "name"},
			refs:  map[string]string{"pool": "pool"},
			columns: []column{
				ref("POOL", "pool", "pool"), text("NAME", "name"), text("ADDRESS", "address"), text("PORT", "port"),
				text("WEIGHT", "weight"), text("STATE", "state"), text("BACKUP", "backup"),
			},
			path: "api/v1/members/",
		},
		{
			name: "health-check", plural: "health-checks", aliases: []string{"hc", "health-checks"},
			short: "Health checks, one per pool, addressed by the pool's name",
			key:   []string{"pool"},
			refs:  map[string]string{"pool": "pool"},
			columns: []column{
				ref("POOL", "pool", "pool"), text("TYPE", "type"), text("INTERVAL MS", "interval_ms"),
				text("TIMEOUT MS", "timeout_ms"), text("RISE", "rise"), text("FALL", "fall"), text("PATH", "path"),
			},
			path: "api/v1/health-checks/",
		},
		{
			name: "certificate", plural: "certificates", aliases: []string{"cert", "certs", "certificates"},
			short: "TLS certificates and keys; generate makes a self-signed one",
			key:   []string{"name"},
			columns: []column{
				text("NAME", "name"), text("SUBJECT", "subject"), text("NOT AFTER", "not_after"),
				text("DAYS LEFT", "expires_in_days"), text("KEY", "has_key"), count("WARNINGS", "warnings"),
			},
			path: "api/v1/certificates/",
		},
		{
			name: "node", plural: "nodes", aliases: []string{"nodes"},
			short: "Balancer nodes and their agents; standby hands their VIPs over",
			key:   []string{"name"},
			columns: []column{
				text("NAME", "name"), text("ADDRESS", "address"), text("REVISION", "applied_revision"),
				{"LAST SEEN", func(o obj, _ *names) string { return age(o["last_seen"]) }}, text("STANDBY", "standby"),
				{"VRRP", vrrpColumn},
			},
			path: "api/v1/nodes/",
		},
		{
			name: "join-code", plural: "join-codes", aliases: []string{"join-codes"}, noUpdate: true,
			short: "One-time codes that let a new appliance join this cluster (admins): create shows the code once, delete revokes",
			key:   []string{"code_id"},
			columns: []column{
				text("ID", "id"), text("CODE ID", "code_id"), text("STATE", "state"), text("CREATED BY", "created_by"),
				text("EXPIRES", "expires_at"), text("NODE", "node"),
			},
			path: "api/v1/join-codes/",
		},
		{
			name: "ha-group", plural: "ha-groups", aliases: []string{"ha", "ha-groups"},
			short: "High-availability groups: VRRP instances that move VIPs between nodes",
			key:   []string{"name"},
			refs:  map[string]string{"nodes[].node": "node"},
			columns: []column{
				text("NAME", "name"), text("VRID", "vrid"), text("VIPS", "vips"), {"NODES", haNodesColumn},
				text("PREEMPT", "preempt"),
			},
			path: "api/v1/ha-groups/",
		},
		{
			name: "ipvs-sync", plural: "ipvs-sync", singleton: true,
			short: "IPVS connection synchronisation between nodes (one setting)",
			refs:  map[string]string{"ha_group": "ha-group"},
			path:  "api/v1/ipvs-sync/",
		},
		{
			name: "token", plural: "tokens", aliases: []string{"tokens"}, noUpdate: true,
			short: "Your API tokens: create shows the secret once, delete revokes",
			key:   []string{"name"},
			columns: []column{
				text("ID", "id"), text("NAME", "name"), text("OWNER", "owner"), text("ROLE", "role"), text("STATE", "state"),
				text("EXPIRES", "expires_at"), {"LAST USED", func(o obj, _ *names) string { return age(o["last_used_at"]) }},
			},
			path: "api/v1/tokens/",
		},
		{
			name: "user", plural: "users", aliases: []string{"users"},
			short: "People who may sign in, and their roles (admin only)",
			key:   []string{"username"},
			columns: []column{
				text("USERNAME", "username"), text("ROLE", "role"), text("ACTIVE", "is_active"), text("LAST LOGIN", "last_login"),
			},
			path: "api/v1/users/",
		},
	}
	for _, k := range kinds {
		if k.singleton {
			k.ops = single(k.path)
		} else {
			k.ops = rest(k.path)
		}
	}
}

// kindByName finds a kind by its name.
func kindByName(name string) *kind {
	for _, k := range kinds {
		if k.name == name {
			return k
		}
	}
	panic("no kind " + name)
}

func text(header, field string) column {
	return column{header, func(o obj, _ *names) string { return format(lookup(o, field)) }}
}

func count(header, field string) column {
	return column{header, func(o obj, _ *names) string {
		if list, ok := o[field].([]any); ok {
			return strconv.Itoa(len(list))
		}
		return "-"
	}}
}

func ref(header, field, kindName string) column {
	return column{header, func(o obj, n *names) string { return n.name(kindName, o[field]) }}
}

func vipColumn(o obj, _ *names) string {
	vip := format(o["vip"])
	if strings.Contains(vip, ":") {
		vip = "[" + vip + "]"
	}
	port := format(o["port"])
	if end := format(o["port_end"]); end != "-" && end != "0" && end != port {
		port += "-" + end
	}
	return vip + ":" + port
}

func vrrpColumn(o obj, _ *names) string {
	list, _ := o["vrrp"].([]any)
	var parts []string
	for _, item := range list {
		if v, ok := item.(obj); ok {
			parts = append(parts, format(v["group"])+":"+format(v["state"]))
		}
	}
	return joinOrDash(parts)
}

func haNodesColumn(o obj, n *names) string {
	list, _ := o["nodes"].([]any)
	var parts []string
	for _, item := range list {
		if v, ok := item.(obj); ok {
			parts = append(parts, n.name("node", v["node"])+"("+format(v["priority"])+")")
		}
	}
	return joinOrDash(parts)
}

func joinOrDash(parts []string) string {
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ",")
}
