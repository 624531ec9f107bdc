package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"fulcrum/agents/internal/apiclient"
)

// pageSize is how many objects one list request asks for.
const pageSize = 500

// item is one object: its JSON as the API sent it (printed as is for
// scripts) and decoded (for tables, names and versions).
type item struct {
	raw json.RawMessage
	obj obj
}

func decodeItem(raw json.RawMessage) (item, error) {
	var o obj
	if err := json.Unmarshal(raw, &o); err != nil {
		return item{}, fmt.Errorf("the API's answer is not an object: %w", err)
	}
	return item{raw: raw, obj: o}, nil
}

// page is a paginated list answer.
type page struct {
	Count   int               `json:"count"`
	Next    *string           `json:"next"`
	Results []json.RawMessage `json:"results"`
}

// listAll reads every object of a kind, page by page.
func (a *app) listAll(ctx context.Context, k *kind) ([]item, error) {
	c, err := a.client()
	if err != nil {
		return nil, err
	}
	var items []item
	for offset := 0; ; {
		var p page
		resp, err := k.ops.list(ctx, c, pageSize, offset)
		if err := apiclient.Decode(resp, err, &p); err != nil {
			return nil, err
		}
		for _, raw := range p.Results {
			it, err := decodeItem(raw)
			if err != nil {
				return nil, err
			}
			items = append(items, it)
		}
		offset += len(p.Results)
		if len(p.Results) == 0 || offset >= p.Count || p.Next == nil {
			return items, nil
		}
	}
}

// getItem reads one object by id (the singleton's one object for id 0).
func (a *app) getItem(ctx context.Context, k *kind, id int) (item, error) {
	c, err := a.client()
	if err != nil {
		return item{}, err
	}
	body, err := apiclient.Read(k.ops.get(ctx, c, id))
	if err != nil {
		return item{}, err
	}
	return decodeItem(body)
}

// names maps ids to the names people use, reading each kind's list once per run.
type names struct {
	app   *app
	ctx   context.Context
	lists map[string][]item
}

func (a *app) namer(ctx context.Context) *names {
	if a.names == nil {
		a.names = &names{app: a, ctx: ctx, lists: map[string][]item{}}
	}
	return a.names
}

// items is the (cached) list of a kind.
func (n *names) items(kindName string) ([]item, error) {
	if list, ok := n.lists[kindName]; ok {
		return list, nil
	}
	list, err := n.app.listAll(n.ctx, kindByName(kindName))
	if err != nil {
		return nil, err
	}
	n.lists[kindName] = list
	return list, nil
}

// name is the display name of the object of kind with this id ("-" for none,
// the id itself when it cannot be read).
func (n *names) name(kindName string, id any) string {
	if id == nil {
		return "-"
	}
	want := format(id)
	list, err := n.items(kindName)
	if err != nil {
		return "#" + want
	}
	for _, it := range list {
		if format(it.obj["id"]) == want {
			return n.display(kindByName(kindName), it.obj)
		}
	}
	return "#" + want
}

// display is how people name an object: its key fields joined by "/".
func (n *names) display(k *kind, o obj) string {
	parts := make([]string, 0, len(k.key))
	for _, field := range k.key {
		if target, ok := k.refs[field]; ok {
			parts = append(parts, n.name(target, o[field]))
		} else {
			parts = append(parts, format(o[field]))
		}
	}
	return strings.Join(parts, "/")
}

var digits = regexp.MustCompile(`^[0-9]+$`)

// resolve finds the object people name ref: its display name, else its id.
func (a *app) resolve(ctx context.Context, k *kind, ref string) (item, error) {
	if k.singleton {
		return a.getItem(ctx, k, 0)
	}
	n := a.namer(ctx)
	list, err := n.items(k.name)
	if err != nil {
		return item{}, err
	}
	for _, it := range list {
		if n.display(k, it.obj) == ref {
			return it, nil
		}
	}
	if digits.MatchString(ref) {
		for _, it := range list {
			if format(it.obj["id"]) == ref {
				return it, nil
			}
		}
	}
	return item{}, &notFoundError{fmt.Sprintf("no %s %q (%s)", k.name, ref, k.keyHelp())}
}

// keyHelp says how objects of a kind are named.
func (k *kind) keyHelp() string {
	if len(k.key) == 1 && k.key[0] != "pool" {
		return "give its " + k.key[0] + " or id"
	}
	return "give " + strings.ToUpper(strings.Join(k.keyLabels(), "/")) + " or its id"
}

func (k *kind) keyLabels() []string {
	labels := make([]string, len(k.key))
	for i, field := range k.key {
		label := field
		if target, ok := k.refs[field]; ok {
			label = strings.TrimPrefix(target, "virtual-")
		}
		labels[i] = label
	}
	return labels
}

// idOf is an object's id.
func idOf(o obj) int {
	id, _ := strconv.Atoi(format(o["id"]))
	return id
}

// versionOf is an object's version (0 when it has none).
func versionOf(o obj) int {
	v, _ := strconv.Atoi(format(o["version"]))
	return v
}

// resolveRefs replaces names given where the API wants another object's id.
func (a *app) resolveRefs(ctx context.Context, k *kind, body obj) error {
	for path, target := range k.refs {
		if field, inner, ok := strings.Cut(path, "[]."); ok {
			list, _ := body[field].([]any)
			for _, element := range list {
				if o, isObj := element.(obj); isObj {
					if err := a.resolveValue(ctx, o, inner, target); err != nil {
						return fmt.Errorf("%s: %w", field, err)
					}
				}
			}
			continue
		}
		if err := a.resolveValue(ctx, body, path, target); err != nil {
			return err
		}
	}
	return nil
}

func (a *app) resolveValue(ctx context.Context, o obj, field, target string) error {
	switch v := o[field].(type) {
	case string:
		id, err := a.idFor(ctx, target, v)
		if err != nil {
			return err
		}
		o[field] = id
	case []any:
		for i, element := range v {
			if name, ok := element.(string); ok {
				id, err := a.idFor(ctx, target, name)
				if err != nil {
					return err
				}
				v[i] = id
			}
		}
	}
	return nil
}

func (a *app) idFor(ctx context.Context, kindName, ref string) (int, error) {
	if ref == "" {
		return 0, usagef("empty %s name", kindName)
	}
	it, err := a.resolve(ctx, kindByName(kindName), ref)
	if err != nil {
		return 0, err
	}
	return idOf(it.obj), nil
}
