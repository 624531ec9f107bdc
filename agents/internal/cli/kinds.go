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
	ops     ops
	// singleton kinds (ipvs-sync) have one object, no id: show and update only.
	singleton   bool
	noCreate    bool
	noUpdate    bool
	noDelete    bool
	description string
}

func limitOffset(limit, offset int) (*int, *int) { return &limit, &offset }

var (
	poolOps = ops{
		list: func(ctx context.Context, c *apiclient.Client, limit, offset int) (*http.Response, error) {
			l, o := limitOffset(limit, offset)
			return c.PoolsList(ctx, &apiclient.PoolsListParams{Limit: l, Offset: o})
		},
		get: func(ctx context.Context, c *apiclient.Client, id int) (*http.Response, error) {
			return c.PoolsRetrieve(ctx, id)
		},
		create: func(ctx context.Context, c *apiclient.Client, body io.Reader) (*http.Response, error) {
			return c.PoolsCreateWithBody(ctx, jsonType, body)
		},
		update: func(ctx context.Context, c *apiclient.Client, id int, v *string, body io.Reader) (*http.Response, error) {
			return c.PoolsPartialUpdateWithBody(ctx, id, &apiclient.PoolsPartialUpdateParams{IfMatch: v}, jsonType, body)
		},
		remove: func(ctx context.Context, c *apiclient.Client, id int, v *string) (*http.Response, error) {
			return c.PoolsDestroy(ctx, id, &apiclient.PoolsDestroyParams{IfMatch: v})
		},
	}
	memberOps = ops{
		list: func(ctx context.Context, c *apiclient.Client, limit, offset int) (*http.Response, error) {
			l, o := limitOffset(limit, offset)
			return c.MembersList(ctx, &apiclient.MembersListParams{Limit: l, Offset: o})
		},
		get: func(ctx context.Context, c *apiclient.Client, id int) (*http.Response, error) {
			return c.MembersRetrieve(ctx, id)
		},
		create: func(ctx context.Context, c *apiclient.Client, body io.Reader) (*http.Response, error) {
			return c.MembersCreateWithBody(ctx, jsonType, body)
		},
		update: func(ctx context.Context, c *apiclient.Client, id int, v *string, body io.Reader) (*http.Response, error) {
			return c.MembersPartialUpdateWithBody(ctx, id, &apiclient.MembersPartialUpdateParams{IfMatch: v}, jsonType, body)
		},
		remove: func(ctx context.Context, c *apiclient.Client, id int, v *string) (*http.Response, error) {
			return c.MembersDestroy(ctx, id, &apiclient.MembersDestroyParams{IfMatch: v})
		},
	}
	serviceOps = ops{
		list: func(ctx context.Context, c *apiclient.Client, limit, offset int) (*http.Response, error) {
			l, o := limitOffset(limit, offset)
			return c.VirtualServicesList(ctx, &apiclient.VirtualServicesListParams{Limit: l, Offset: o})
		},
		get: func(ctx context.Context, c *apiclient.Client, id int) (*http.Response, error) {
			return c.VirtualServicesRetrieve(ctx, id)
		},
		create: func(ctx context.Context, c *apiclient.Client, body io.Reader) (*http.Response, error) {
			return c.VirtualServicesCreateWithBody(ctx, jsonType, body)
		},
		update: func(ctx context.Context, c *apiclient.Client, id int, v *string, body io.Reader) (*http.Response, error) {
			return c.VirtualServicesPartialUpdateWithBody(ctx, id, &apiclient.VirtualServicesPartialUpdateParams{IfMatch: v}, jsonType, body)
		},
		remove: func(ctx context.Context, c *apiclient.Client, id int, v *string) (*http.Response, error) {
			return c.VirtualServicesDestroy(ctx, id, &apiclient.VirtualServicesDestroyParams{IfMatch: v})
		},
	}
	ruleOps = ops{
		list: func(ctx context.Context, c *apiclient.Client, limit, offset int) (*http.Response, error) {
			l, o := limitOffset(limit, offset)
			return c.RulesList(ctx, &apiclient.RulesListParams{Limit: l, Offset: o})
		},
		get: func(ctx context.Context, c *apiclient.Client, id int) (*http.Response, error) {
			return c.RulesRetrieve(ctx, id)
		},
		create: func(ctx context.Context, c *apiclient.Client, body io.Reader) (*http.Response, error) {
			return c.RulesCreateWithBody(ctx, jsonType, body)
		},
		update: func(ctx context.Context, c *apiclient.Client, id int, v *string, body io.Reader) (*http.Response, error) {
			return c.RulesPartialUpdateWithBody(ctx, id, &apiclient.RulesPartialUpdateParams{IfMatch: v}, jsonType, body)
		},
		remove: func(ctx context.Context, c *apiclient.Client, id int, v *string) (*http.Response, error) {
			return c.RulesDestroy(ctx, id, &apiclient.RulesDestroyParams{IfMatch: v})
		},
	}
	healthCheckOps = ops{
		list: func(ctx context.Context, c *apiclient.Client, limit, offset int) (*http.Response, error) {
			l, o := limitOffset(limit, offset)
			return c.HealthChecksList(ctx, &apiclient.HealthChecksListParams{Limit: l, Offset: o})
		},
		get: func(ctx context.Context, c *apiclient.Client, id int) (*http.Response, error) {
			return c.HealthChecksRetrieve(ctx, id)
		},
		create: func(ctx context.Context, c *apiclient.Client, body io.Reader) (*http.Response, error) {
			return c.HealthChecksCreateWithBody(ctx, jsonType, body)
		},
		update: func(ctx context.Context, c *apiclient.Client, id int, v *string, body io.Reader) (*http.Response, error) {
			return c.HealthChecksPartialUpdateWithBody(ctx, id, &apiclient.HealthChecksPartialUpdateParams{IfMatch: v}, jsonType, body)
		},
		remove: func(ctx context.Context, c *apiclient.Client, id int, v *string) (*http.Response, error) {
			return c.HealthChecksDestroy(ctx, id, &apiclient.HealthChecksDestroyParams{IfMatch: v})
		},
	}
	certificateOps = ops{
		list: func(ctx context.Context, c *apiclient.Client, limit, offset int) (*http.Response, error) {
			l, o := limitOffset(limit, offset)
			return c.CertificatesList(ctx, &apiclient.CertificatesListParams{Limit: l, Offset: o})
		},
		get: func(ctx context.Context, c *apiclient.Client, id int) (*http.Response, error) {
			return c.CertificatesRetrieve(ctx, id)
		},
		create: func(ctx context.Context, c *apiclient.Client, body io.Reader) (*http.Response, error) {
			return c.CertificatesCreateWithBody(ctx, jsonType, body)
		},
		update: func(ctx context.Context, c *apiclient.Client, id int, v *string, body io.Reader) (*http.Response, error) {
			return c.CertificatesPartialUpdateWithBody(ctx, id, &apiclient.CertificatesPartialUpdateParams{IfMatch: v}, jsonType, body)
		},
		remove: func(ctx context.Context, c *apiclient.Client, id int, v *string) (*http.Response, error) {
			return c.CertificatesDestroy(ctx, id, &apiclient.CertificatesDestroyParams{IfMatch: v})
		},
	}
	nodeOps = ops{
		list: func(ctx context.Context, c *apiclient.Client, limit, offset int) (*http.Response, error) {
			l, o := limitOffset(limit, offset)
			return c.NodesList(ctx, &apiclient.NodesListParams{Limit: l, Offset: o})
		},
		get: func(ctx context.Context, c *apiclient.Client, id int) (*http.Response, error) {
			return c.NodesRetrieve(ctx, id)
		},
		create: func(ctx context.Context, c *apiclient.Client, body io.Reader) (*http.Response, error) {
			return c.NodesCreateWithBody(ctx, jsonType, body)
		},
		update: func(ctx context.Context, c *apiclient.Client, id int, v *string, body io.Reader) (*http.Response, error) {
			return c.NodesPartialUpdateWithBody(ctx, id, &apiclient.NodesPartialUpdateParams{IfMatch: v}, jsonType, body)
		},
		remove: func(ctx context.Context, c *apiclient.Client, id int, v *string) (*http.Response, error) {
			return c.NodesDestroy(ctx, id, &apiclient.NodesDestroyParams{IfMatch: v})
		},
	}
	haGroupOps = ops{
		list: func(ctx context.Context, c *apiclient.Client, limit, offset int) (*http.Response, error) {
			l, o := limitOffset(limit, offset)
			return c.HaGroupsList(ctx, &apiclient.HaGroupsListParams{Limit: l, Offset: o})
		},
		get: func(ctx context.Context, c *apiclient.Client, id int) (*http.Response, error) {
			return c.HaGroupsRetrieve(ctx, id)
		},
		create: func(ctx context.Context, c *apiclient.Client, body io.Reader) (*http.Response, error) {
			return c.HaGroupsCreateWithBody(ctx, jsonType, body)
		},
		update: func(ctx context.Context, c *apiclient.Client, id int, v *string, body io.Reader) (*http.Response, error) {
			return c.HaGroupsPartialUpdateWithBody(ctx, id, &apiclient.HaGroupsPartialUpdateParams{IfMatch: v}, jsonType, body)
		},
		remove: func(ctx context.Context, c *apiclient.Client, id int, v *string) (*http.Response, error) {
			return c.HaGroupsDestroy(ctx, id, &apiclient.HaGroupsDestroyParams{IfMatch: v})
		},
	}
	ipvsSyncOps = ops{
		get: func(ctx context.Context, c *apiclient.Client, _ int) (*http.Response, error) {
			return c.IpvsSyncRetrieve(ctx)
		},
		update: func(ctx context.Context, c *apiclient.Client, _ int, v *string, body io.Reader) (*http.Response, error) {
			return c.IpvsSyncPartialUpdateWithBody(ctx, &apiclient.IpvsSyncPartialUpdateParams{IfMatch: v}, jsonType, body)
		},
	}
	// Tokens are never changed, only revoked; the API takes no version for that.
	tokenOps = ops{
		list: func(ctx context.Context, c *apiclient.Client, limit, offset int) (*http.Response, error) {
			l, o := limitOffset(limit, offset)
			return c.TokensList(ctx, &apiclient.TokensListParams{Limit: l, Offset: o})
		},
		get: func(ctx context.Context, c *apiclient.Client, id int) (*http.Response, error) {
			return c.TokensRetrieve(ctx, id)
		},
		create: func(ctx context.Context, c *apiclient.Client, body io.Reader) (*http.Response, error) {
			return c.TokensCreateWithBody(ctx, jsonType, body)
		},
		remove: func(ctx context.Context, c *apiclient.Client, id int, _ *string) (*http.Response, error) {
			return c.TokensDestroy(ctx, id)
		},
	}
	joinCodeOps = ops{
		list: func(ctx context.Context, c *apiclient.Client, limit, offset int) (*http.Response, error) {
			l, o := limitOffset(limit, offset)
			return c.JoinCodesList(ctx, &apiclient.JoinCodesListParams{Limit: l, Offset: o})
		},
		get: func(ctx context.Context, c *apiclient.Client, id int) (*http.Response, error) {
			return c.JoinCodesRetrieve(ctx, id)
		},
		// A code takes no fields: the API makes it.
		create: func(ctx context.Context, c *apiclient.Client, _ io.Reader) (*http.Response, error) {
			return c.JoinCodesCreate(ctx)
		},
		remove: func(ctx context.Context, c *apiclient.Client, id int, _ *string) (*http.Response, error) {
			return c.JoinCodesDestroy(ctx, id)
		},
	}
	userOps = ops{
		list: func(ctx context.Context, c *apiclient.Client, limit, offset int) (*http.Response, error) {
			l, o := limitOffset(limit, offset)
			return c.UsersList(ctx, &apiclient.UsersListParams{Limit: l, Offset: o})
		},
		get: func(ctx context.Context, c *apiclient.Client, id int) (*http.Response, error) {
			return c.UsersRetrieve(ctx, id)
		},
		create: func(ctx context.Context, c *apiclient.Client, body io.Reader) (*http.Response, error) {
			return c.UsersCreateWithBody(ctx, jsonType, body)
		},
		update: func(ctx context.Context, c *apiclient.Client, id int, v *string, body io.Reader) (*http.Response, error) {
			return c.UsersPartialUpdateWithBody(ctx, id, &apiclient.UsersPartialUpdateParams{IfMatch: v}, jsonType, body)
		},
		remove: func(ctx context.Context, c *apiclient.Client, id int, v *string) (*http.Response, error) {
			return c.UsersDestroy(ctx, id, &apiclient.UsersDestroyParams{IfMatch: v})
		},
	}
)

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
			ops: serviceOps,
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
			ops: ruleOps,
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
			ops: poolOps,
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
			ops: memberOps,
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
			ops: healthCheckOps,
		},
		{
			name: "certificate", plural: "certificates", aliases: []string{"cert", "certs", "certificates"},
			short: "TLS certificates and keys; generate makes a self-signed one",
			key:   []string{"name"},
			columns: []column{
				text("NAME", "name"), text("SUBJECT", "subject"), text("NOT AFTER", "not_after"),
				text("DAYS LEFT", "expires_in_days"), text("KEY", "has_key"), count("WARNINGS", "warnings"),
			},
			ops: certificateOps,
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
			ops: nodeOps,
		},
		{
			name: "join-code", plural: "join-codes", aliases: []string{"join-codes"}, noUpdate: true,
			short: "One-time codes that let a new appliance join this cluster (admins): create shows the code once, delete revokes",
			key:   []string{"code_id"},
			columns: []column{
				text("ID", "id"), text("CODE ID", "code_id"), text("STATE", "state"), text("CREATED BY", "created_by"),
				text("EXPIRES", "expires_at"), text("NODE", "node"),
			},
			ops: joinCodeOps,
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
			ops: haGroupOps,
		},
		{
			name: "ipvs-sync", plural: "ipvs-sync", singleton: true,
			short: "IPVS connection synchronisation between nodes (one setting)",
			refs:  map[string]string{"ha_group": "ha-group"},
			ops:   ipvsSyncOps,
		},
		{
			name: "token", plural: "tokens", aliases: []string{"tokens"}, noUpdate: true,
			short: "Your API tokens: create shows the secret once, delete revokes",
			key:   []string{"name"},
			columns: []column{
				text("ID", "id"), text("NAME", "name"), text("OWNER", "owner"), text("ROLE", "role"), text("STATE", "state"),
				text("EXPIRES", "expires_at"), {"LAST USED", func(o obj, _ *names) string { return age(o["last_used_at"]) }},
			},
			ops: tokenOps,
		},
		{
			name: "user", plural: "users", aliases: []string{"users"},
			short: "People who may sign in, and their roles (admin only)",
			key:   []string{"username"},
			columns: []column{
				text("USERNAME", "username"), text("ROLE", "role"), text("ACTIVE", "is_active"), text("LAST LOGIN", "last_login"),
			},
			ops: userOps,
		},
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
