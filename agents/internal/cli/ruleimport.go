package cli

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"fulcrum/agents/internal/apiclient"
)

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

var csvColumns = map[string]string{
	"name": "text", "action": "text", "pool": "text", "kind": "", "values": "", "negate": "", "match": "",
	"enabled": "bool", "redirect_code": "int", "redirect_location": "text", "deny_status": "int",
	"header_name": "text", "header_value": "text",
}

func (a *app) ruleImportCommand() *cobra.Command {
	var replace, asCSV bool
	cmd := &cobra.Command{
		Use:   "import SERVICE FILE",
		Short: "Add many rules to a service at once from CSV, YAML or JSON (--replace: they become its rules)",
		Long:  ruleImportHelp,
		Args:  exactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			service, err := a.resolve(ctx, kindByName("virtual-service"), args[0])
			if err != nil {
				return err
			}
			var rows []obj
			var lines []int
			if asCSV || strings.EqualFold(filepath.Ext(args[1]), ".csv") {
				rows, lines, err = readRuleCSV(args[1], cmd.InOrStdin())
			} else {
				rows, err = readDocuments(args[1], cmd.InOrStdin())
			}
			if err != nil {
				return err
			}
			if err := a.poolIDs(ctx, rows); err != nil {
				return err
			}
			mode := "append"
			if replace {
				mode = "replace"
			}
			body, err := json.Marshal(obj{"virtual_service": idOf(service.obj), "mode": mode, "rules": rows})
			if err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			answer, err := apiclient.Read(c.RulesBulkCreateWithBody(ctx, jsonType, bytes.NewReader(body)))
			if err != nil {
				return rowsByLine(err, lines)
			}
			if a.flags.output != "table" {
				return a.writeData(answer)
			}
			var result apiclient.BulkRulesResult
			if err := json.Unmarshal(answer, &result); err != nil {
				return err
			}
			a.say("Imported %d rules into %s: %d created, %d updated, %d deleted; it has %d rules.",
				len(rows), format(service.obj["name"]), result.Created, result.Updated, result.Deleted, result.Rules)
			return nil
		},
	}
	cmd.Flags().BoolVar(&replace, "replace", false, "the file's rules become the service's rules, in its order")
	cmd.Flags().BoolVar(&asCSV, "csv", false, "FILE is CSV whatever its name (\"-\": standard input)")
	return cmd
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

// readRuleCSV reads rules from CSV (see ruleImportHelp); lines[i] is the line of rows[i].
func readRuleCSV(path string, stdin io.Reader) ([]obj, []int, error) {
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
		if _, ok := csvColumns[header[i]]; !ok {
			return nil, nil, usagef("%s: unknown column %q (see fulcrum rule import --help)", displayPath(path), column)
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
		row, err := csvRule(header, record)
		if err != nil {
			return nil, nil, usagef("%s, line %d: %v", displayPath(path), line, err)
		}
		rows = append(rows, row)
		lines = append(lines, line)
	}
	if len(rows) == 0 {
		return nil, nil, usagef("%s: no rules after the header", displayPath(path))
	}
	return rows, lines, nil
}

func csvRule(header, record []string) (obj, error) {
	row, condition := obj{}, obj{}
	for i, cell := range record {
		column := header[i]
		if cell == "" {
			continue
		}
		switch column {
		case "kind":
			condition["kind"] = cell
		case "values":
			condition["values"] = strings.Split(cell, "|")
		case "match":
			condition["name"] = cell
		case "negate", "enabled":
			value, err := strconv.ParseBool(cell)
			if err != nil {
				return nil, fmt.Errorf("%s: %q is not true or false", column, cell)
			}
			if column == "negate" {
				condition["negate"] = value
			} else {
				row[column] = value
			}
		default:
			if csvColumns[column] == "int" {
				value, err := strconv.Atoi(cell)
				if err != nil {
					return nil, fmt.Errorf("%s: %q is not a number", column, cell)
				}
				row[column] = value
			} else {
				row[column] = cell
			}
		}
	}
	if len(condition) > 0 {
		row["conditions"] = []any{condition}
	} else {
		row["conditions"] = []any{}
	}
	if _, ok := row["action"]; !ok && row["pool"] != nil {
		row["action"] = "use_pool"
	}
	return row, nil
}

var rowPath = regexp.MustCompile(`^rules\.(\d+)(\.|$)`)

// rowsByLine names a refused batch's rows by their CSV lines (rules.17.conditions → line 19:
// conditions), or as "rule N" (from 1) for YAML and JSON files.
func rowsByLine(err error, lines []int) error {
	var refused *apiclient.APIError
	if !errors.As(err, &refused) {
		return err
	}
	for i, problem := range refused.Problems {
		m := rowPath.FindStringSubmatch(problem.Path)
		if m == nil {
			continue
		}
		index, _ := strconv.Atoi(m[1])
		where := fmt.Sprintf("rule %d", index+1)
		if index < len(lines) {
			where = fmt.Sprintf("line %d", lines[index])
		}
		refused.Problems[i].Path = where + strings.TrimPrefix(problem.Path, "rules."+m[1])
	}
	return refused
}
