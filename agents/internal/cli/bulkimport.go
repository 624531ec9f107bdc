package cli

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"fulcrum/agents/internal/apiclient"
)

// A bulkKind is a kind whose objects belong to a parent and are written many at a time
// through the API's batch endpoint (rules of a virtual service, members of a pool): one
// request, one transaction, one bad row refuses them all.
type bulkKind struct {
	noun, nouns   string // "rule", "rules": also the request's list of rows
	parent        string // the parent's kind ("virtual-service") and, with _ for -, its field
	help          string
	columns       map[string]string // CSV column: "text", "int", "bool", or "" for csvRow's own
	csvRow        func(row obj, column, cell string) error
	finish        func(row obj) // after a CSV row's cells, e.g. a default that depends on them
	resolve       func(a *app, ctx context.Context, rows []obj) error
	post          func(c *apiclient.Client, ctx context.Context, body io.Reader) (*http.Response, error)
	postDelete    func(c *apiclient.Client, ctx context.Context, body io.Reader) (*http.Response, error)
	parentSubject string // the parent in the help: "SERVICE"
}

const ruleImportHelp = `Many rules of one service in one request and one transaction (POST /api/v1/rules/bulk/):
added after the service's own rules in the file's order, or, with --replace, made the
service's whole ordered list (rules of the same name keep their id, the others are deleted).
Every row is checked as a single rule is; one bad row refuses the whole file and is named
(by its line in a CSV file), and nothing changes. Applied with the next revision.

FILE is YAML or JSON (a list of rule objects, as "fulcrum rule create -f" takes, without
virtual_service), or CSV (a .csv name, or --csv) with a header line and one rule a line of
one condition. CSV columns (any order; empty cells take the API's defaults):
  name                                       the rule's name (required)
  action                                     use_pool (the default when pool is set), redirect,
                                             deny, set_request_header, ...
  pool                                       the pool's name or id
  kind, values, negate, match                the condition: e.g. path_prefix, "/api/|/v2/"
                                             (values separated by |), true|false, and the header,
                                             cookie or query parameter name of the kinds that take one
  enabled, redirect_code, redirect_location, deny_status, header_name, header_value`

const memberImportHelp = `Many members of one pool in one request and one transaction (POST /api/v1/members/bulk/):
added to the pool, or, with --replace, made the pool's whole list (members of the same name
keep their id and are updated, the others are deleted). Every row is checked as a single
member is, and the pool once; one bad row refuses the whole file and is named (by its line
in a CSV file), and nothing changes. Applied with the next revision.

FILE is YAML or JSON (a list of member objects, as "fulcrum member create -f" takes, without
pool), or CSV (a .csv name, or --csv) with a header line and one member a line. CSV columns
(any order; empty cells take the API's defaults):
  name, address, port                        required: e.g. s1, 192.0.2.11, 8080
  weight, state, backup                      1-256; enabled, drain or disabled; true|false
  max_connections, max_queue, slowstart_ms   0 = no limit, no queue limit, no ramp
  min_connections, forwarding                layer 4: the IPVS lower threshold, nat|dr|tunnel
  loopback                                   true for a service on each node itself`

var bulkKinds = map[string]*bulkKind{
	"rule": {
		noun: "rule", nouns: "rules", parent: "virtual-service", parentSubject: "SERVICE", help: ruleImportHelp,
		columns: map[string]string{
			"name": "text", "action": "text", "pool": "text", "kind": "", "values": "", "negate": "", "match": "",
			"enabled": "bool", "redirect_code": "int", "redirect_location": "text", "deny_status": "int",
			"header_name": "text", "header_value": "text",
		},
		csvRow: ruleCondition,
		finish: func(row obj) {
			if _, ok := row["conditions"]; !ok {
				row["conditions"] = []any{}
			}
			if _, ok := row["action"]; !ok && row["pool"] != nil {
				row["action"] = "use_pool"
			}
		},
		resolve: func(a *app, ctx context.Context, rows []obj) error { return a.poolIDs(ctx, rows) },
		post: func(c *apiclient.Client, ctx context.Context, body io.Reader) (*http.Response, error) {
			return c.RulesBulkCreateWithBody(ctx, jsonType, body)
		},
		postDelete: func(c *apiclient.Client, ctx context.Context, body io.Reader) (*http.Response, error) {
			return c.RulesBulkDeleteCreateWithBody(ctx, jsonType, body)
		},
	},
	"member": {
		noun: "member", nouns: "members", parent: "pool", parentSubject: "POOL", help: memberImportHelp,
		columns: map[string]string{
			"name": "text", "address": "text", "port": "int", "weight": "int", "state": "text", "backup": "bool",
			"max_connections": "int", "max_queue": "int", "slowstart_ms": "int", "min_connections": "int",
			"forwarding": "text", "loopback": "bool",
		},
		post: func(c *apiclient.Client, ctx context.Context, body io.Reader) (*http.Response, error) {
			return c.MembersBulkCreateWithBody(ctx, jsonType, body)
		},
		postDelete: func(c *apiclient.Client, ctx context.Context, body io.Reader) (*http.Response, error) {
			return c.MembersBulkDeleteCreateWithBody(ctx, jsonType, body)
		},
	},
}

// importCommand is "fulcrum KIND import PARENT FILE" for a kind written in batches.
func (a *app) importCommand(b *bulkKind) *cobra.Command {
	var replace, asCSV bool
	cmd := &cobra.Command{
		Use:   "import " + b.parentSubject + " FILE",
		Short: fmt.Sprintf("Add many %s to a %s at once from CSV, YAML or JSON (--replace: they become its %s)", b.nouns, b.parent, b.nouns),
		Long:  b.help,
		Args:  exactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			parent, err := a.resolve(ctx, kindByName(b.parent), args[0])
			if err != nil {
				return err
			}
			var rows []obj
			var lines []int
			if asCSV || strings.EqualFold(filepath.Ext(args[1]), ".csv") {
				rows, lines, err = b.readCSV(args[1], cmd.InOrStdin())
			} else {
				rows, err = readDocuments(args[1], cmd.InOrStdin())
			}
			if err != nil {
				return err
			}
			if b.resolve != nil {
				if err := b.resolve(a, ctx, rows); err != nil {
					return err
				}
			}
			mode := "append"
			if replace {
				mode = "replace"
			}
			parentField := strings.ReplaceAll(b.parent, "-", "_")
			body, err := json.Marshal(obj{parentField: idOf(parent.obj), "mode": mode, b.nouns: rows})
			if err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			answer, err := apiclient.Read(b.post(c, ctx, bytes.NewReader(body)))
			if err != nil {
				return b.rowsByLine(err, lines)
			}
			if a.flags.output != "table" {
				return a.writeData(answer)
			}
			var result struct{ Created, Updated, Deleted int }
			var total map[string]any
			if err := json.Unmarshal(answer, &result); err != nil {
				return err
			}
			if err := json.Unmarshal(answer, &total); err != nil {
				return err
			}
			a.say("Imported %d %s into %s: %d created, %d updated, %d deleted; it has %s %s.",
				len(rows), b.nouns, format(parent.obj["name"]), result.Created, result.Updated, result.Deleted,
				format(total[b.nouns]), b.nouns)
			return nil
		},
	}
	cmd.Flags().BoolVar(&replace, "replace", false, fmt.Sprintf("the file's %s become the %s's %s", b.nouns, b.parent, b.nouns))
	cmd.Flags().BoolVar(&asCSV, "csv", false, "FILE is CSV whatever its name (\"-\": standard input)")
	return cmd
}

// deleteManyCommand is "fulcrum KIND delete-many PARENT NAME..." for a kind written in batches.
func (a *app) deleteManyCommand(b *bulkKind) *cobra.Command {
	var from string
	cmd := &cobra.Command{
		Use:   "delete-many " + b.parentSubject + " [NAME...]",
		Short: fmt.Sprintf("Delete many %s of a %s at once, by name", b.nouns, b.parent),
		Long: fmt.Sprintf(`Delete %s of one %s by name in one request and one transaction
(POST %s): all of them or, if one is missing, none (the answer names it). The %s's
other %s stay, in their order. The names are the arguments, or one a line in --from FILE
("-": standard input; blank lines and lines starting with # are skipped). Applied with
the next revision.`, b.nouns, b.parent, "/api/v1/"+b.nouns+"/bulk-delete/", b.parent, b.nouns),
		Args: rangeArgs(1, -1),
		RunE: func(cmd *cobra.Command, args []string) error {
			names := args[1:]
			if from != "" {
				listed, err := readNames(from, cmd.InOrStdin())
				if err != nil {
					return err
				}
				names = append(names, listed...)
			}
			if len(names) == 0 {
				return usagef("no %s named: give their names, or --from FILE", b.nouns)
			}
			ctx := cmd.Context()
			parent, err := a.resolve(ctx, kindByName(b.parent), args[0])
			if err != nil {
				return err
			}
			parentField := strings.ReplaceAll(b.parent, "-", "_")
			body, err := json.Marshal(obj{parentField: idOf(parent.obj), "names": names})
			if err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			answer, err := apiclient.Read(b.postDelete(c, ctx, bytes.NewReader(body)))
			if err != nil {
				return err
			}
			if a.flags.output != "table" {
				return a.writeData(answer)
			}
			var result struct{ Deleted int }
			var total map[string]any
			if err := json.Unmarshal(answer, &result); err != nil {
				return err
			}
			if err := json.Unmarshal(answer, &total); err != nil {
				return err
			}
			a.say("Deleted %d %s from %s; it has %s %s.", result.Deleted, b.nouns, format(parent.obj["name"]),
				format(total[b.nouns]), b.nouns)
			return nil
		},
	}
	cmd.Flags().StringVar(&from, "from", "", "a file of names, one a line (\"-\": standard input)")
	return cmd
}

// readNames reads names one a line from path ("-": stdin), skipping blank and # lines.
func readNames(path string, stdin io.Reader) ([]string, error) {
	data, err := readInput(path, stdin)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, line := range strings.Split(string(data), "\n") {
		if line = strings.TrimSpace(line); line != "" && !strings.HasPrefix(line, "#") {
			names = append(names, line)
		}
	}
	return names, nil
}

// poolIDs replaces each row's pool name by the pool's id.
func (a *app) poolIDs(ctx context.Context, rows []obj) error {
	ids := map[string]int{}
	for _, row := range rows {
		name, ok := row["pool"].(string)
		if !ok || name == "" {
			continue
		}
		if _, known := ids[name]; !known {
			pool, err := a.resolve(ctx, kindByName("pool"), name)
			if err != nil {
				return err
			}
			ids[name] = idOf(pool.obj)
		}
		row["pool"] = ids[name]
	}
	return nil
}

// readCSV reads rows from CSV (see the kind's help); lines[i] is the line of rows[i].
func (b *bulkKind) readCSV(path string, stdin io.Reader) ([]obj, []int, error) {
	var in io.Reader = stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, nil, usagef("cannot read %s: %v", path, err)
		}
		defer f.Close()
		in = f
	}
	reader := csv.NewReader(in)
	reader.TrimLeadingSpace = true
	header, err := reader.Read()
	if err != nil {
		return nil, nil, usagef("%s: no header line: %v", displayPath(path), err)
	}
	for i, column := range header {
		header[i] = strings.ToLower(strings.TrimSpace(column))
		if _, ok := b.columns[header[i]]; !ok {
			return nil, nil, usagef("%s: unknown column %q (see fulcrum %s import --help)", displayPath(path), column, b.noun)
		}
	}
	var rows []obj
	var lines []int
	for {
		record, err := reader.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		line, _ := reader.FieldPos(0)
		if err != nil {
			return nil, nil, usagef("%s: %v", displayPath(path), err)
		}
		row, err := b.row(header, record)
		if err != nil {
			return nil, nil, usagef("%s, line %d: %v", displayPath(path), line, err)
		}
		rows = append(rows, row)
		lines = append(lines, line)
	}
	if len(rows) == 0 {
		return nil, nil, usagef("%s: no %s after the header", displayPath(path), b.nouns)
	}
	return rows, lines, nil
}

// row is one CSV record as the API's row: typed cells, empty ones left to the API's defaults.
func (b *bulkKind) row(header, record []string) (obj, error) {
	row := obj{}
	for i, cell := range record {
		column := header[i]
		if cell == "" {
			continue
		}
		switch b.columns[column] {
		case "bool":
			value, err := strconv.ParseBool(cell)
			if err != nil {
				return nil, fmt.Errorf("%s: %q is not true or false", column, cell)
			}
			row[column] = value
		case "int":
			value, err := strconv.Atoi(cell)
			if err != nil {
				return nil, fmt.Errorf("%s: %q is not a number", column, cell)
			}
			row[column] = value
		case "text":
			row[column] = cell
		default:
			if err := b.csvRow(row, column, cell); err != nil {
				return nil, err
			}
		}
	}
	if b.finish != nil {
		b.finish(row)
	}
	return row, nil
}

// ruleCondition puts a rule's condition cells into its one condition.
func ruleCondition(row obj, column, cell string) error {
	if _, ok := row["conditions"]; !ok {
		row["conditions"] = []any{obj{}}
	}
	condition := row["conditions"].([]any)[0].(obj)
	switch column {
	case "kind":
		condition["kind"] = cell
	case "values":
		condition["values"] = strings.Split(cell, "|")
	case "match":
		condition["name"] = cell
	case "negate":
		value, err := strconv.ParseBool(cell)
		if err != nil {
			return fmt.Errorf("%s: %q is not true or false", column, cell)
		}
		condition["negate"] = value
	}
	return nil
}

var rowIndex = regexp.MustCompile(`^\w+\.(\d+)(\.|$)`)

// rowsByLine names a refused batch's rows by their CSV lines (rules.17.conditions → line 19:
// conditions), or as "rule N" (from 1) for YAML and JSON files.
func (b *bulkKind) rowsByLine(err error, lines []int) error {
	var refused *apiclient.APIError
	if !errors.As(err, &refused) {
		return err
	}
	for i, problem := range refused.Problems {
		if !strings.HasPrefix(problem.Path, b.nouns+".") {
			continue
		}
		m := rowIndex.FindStringSubmatch(problem.Path)
		if m == nil {
			continue
		}
		index, _ := strconv.Atoi(m[1])
		where := fmt.Sprintf("%s %d", b.noun, index+1)
		if index < len(lines) {
			where = fmt.Sprintf("line %d", lines[index])
		}
		refused.Problems[i].Path = where + strings.TrimPrefix(problem.Path, b.nouns+"."+m[1])
	}
	return refused
}
