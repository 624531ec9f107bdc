package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	yamlv2 "go.yaml.in/yaml/v2"
)

// now is the clock of ages in tables; tests set it.
var now = time.Now

// format is a JSON value as a table cell.
func format(v any) string {
	switch v := v.(type) {
	case nil:
		return "-"
	case string:
		if v == "" {
			return "-"
		}
		return v
	case bool:
		if v {
			return "yes"
		}
		return "no"
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case json.Number:
		return v.String()
	case []any:
		parts := make([]string, len(v))
		for i, element := range v {
			parts[i] = format(element)
		}
		return joinOrDash(parts)
	case map[string]any:
		data, _ := json.Marshal(v)
		return string(data)
	}
	return fmt.Sprint(v)
}

// lookup follows a dotted path through nested objects.
func lookup(o obj, path string) any {
	var v any = o
	for _, part := range strings.Split(path, ".") {
		m, ok := v.(obj)
		if !ok {
			return nil
		}
		v = m[part]
	}
	return v
}

// age is a timestamp as "12s ago" ("never" when absent).
func age(v any) string {
	text, ok := v.(string)
	if !ok || text == "" {
		return "never"
	}
	at, err := time.Parse(time.RFC3339Nano, text)
	if err != nil {
		return text
	}
	d := now().Sub(at)
	switch {
	case d < 0:
		return "just now"
	case d < time.Minute:
		return fmt.Sprintf("%ds ago", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm ago", int(d.Minutes()))
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh ago", int(d.Hours()))
	}
	return fmt.Sprintf("%dd ago", int(d.Hours()/24))
}

// table writes aligned columns: a header row, then the rows.
func table(w io.Writer, header []string, rows [][]string) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, row := range rows {
		fmt.Fprintln(tw, strings.Join(row, "\t"))
	}
	return tw.Flush()
}

// writeJSON writes raw JSON indented.
func writeJSON(w io.Writer, raw []byte) error {
	var buf bytes.Buffer
	if err := json.Indent(&buf, raw, "", "  "); err != nil {
		return err
	}
	buf.WriteByte('\n')
	_, err := w.Write(buf.Bytes())
	return err
}

// toYAML converts JSON to YAML, keeping the API's order of fields in objects
// and in a list's objects (nested ones are sorted).
func toYAML(raw []byte) ([]byte, error) {
	trimmed := bytes.TrimSpace(raw)
	if bytes.HasPrefix(trimmed, []byte("{")) {
		var ordered yamlv2.MapSlice
		if err := yamlv2.Unmarshal(trimmed, &ordered); err == nil {
			return yamlv2.Marshal(ordered)
		}
	}
	if bytes.HasPrefix(trimmed, []byte("[")) {
		var ordered []yamlv2.MapSlice
		if err := yamlv2.Unmarshal(trimmed, &ordered); err == nil {
			return yamlv2.Marshal(ordered)
		}
	}
	var value any
	if err := yamlv2.Unmarshal(trimmed, &value); err != nil {
		return nil, err
	}
	return yamlv2.Marshal(value)
}

// writeYAML writes raw JSON as YAML.
func writeYAML(w io.Writer, raw []byte) error {
	data, err := toYAML(raw)
	if err != nil {
		return err
	}
	_, err = w.Write(data)
	return err
}

// writeData writes any JSON answer as -o asks: json, yaml, or YAML for people too.
func (a *app) writeData(raw []byte) error {
	if a.flags.output == "json" {
		return writeJSON(a.env.Stdout, raw)
	}
	return writeYAML(a.env.Stdout, raw)
}

// marshalRaw encodes a value the CLI built (not the API's bytes) for writeData.
func marshalRaw(v any) []byte {
	data, err := json.Marshal(v)
	if err != nil {
		panic(err) // only plain JSON values reach here
	}
	return data
}

// printItems prints a list of objects: a table, the API's objects as a JSON or
// YAML list, or only names (-q).
func (a *app) printItems(k *kind, items []item, n *names) error {
	if a.flags.output != "table" {
		raws := make([]json.RawMessage, len(items))
		for i, it := range items {
			raws[i] = it.raw
		}
		return a.writeData(marshalRaw(raws))
	}
	if a.flags.quiet {
		for _, it := range items {
			fmt.Fprintln(a.env.Stdout, n.display(k, it.obj))
		}
		return nil
	}
	header := make([]string, len(k.columns))
	for i, c := range k.columns {
		header[i] = c.header
	}
	rows := make([][]string, len(items))
	for i, it := range items {
		rows[i] = make([]string, len(k.columns))
		for j, c := range k.columns {
			rows[i][j] = c.value(it.obj, n)
		}
	}
	return table(a.env.Stdout, header, rows)
}

// printItem prints one object: YAML for people, or as -o asks.
func (a *app) printItem(it item) error {
	return a.writeData(it.raw)
}

// say prints a message for people (not with -q, not when -o asks for data).
func (a *app) say(format string, args ...any) {
	if a.flags.quiet {
		return
	}
	out := a.env.Stdout
	if a.flags.output != "table" {
		out = a.env.Stderr
	}
	fmt.Fprintf(out, format+"\n", args...)
}
