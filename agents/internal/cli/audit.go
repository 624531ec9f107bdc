package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/spf13/cobra"

	"fulcrum/agents/internal/apiclient"
)

// auditFilters are the audit log's query parameters, as flags: each names its
// field of the generated parameters.
var auditFilters = []struct {
	flag, help string
	param      func(*apiclient.AuditListParams) **string
}{
	{"actor", "only this person or token", func(p *apiclient.AuditListParams) **string { return &p.Actor }},
	{"action", "only this action, e.g. create, update, delete, login", func(p *apiclient.AuditListParams) **string { return &p.Action }},
	{"object-type", "only this object type, e.g. pool", func(p *apiclient.AuditListParams) **string { return &p.ObjectType }},
	{"since", "only from this time on (ISO 8601)", func(p *apiclient.AuditListParams) **string { return &p.Since }},
	{"until", "only before this time (ISO 8601)", func(p *apiclient.AuditListParams) **string { return &p.Until }},
	{"status", "only ok, failed, or this HTTP status", func(p *apiclient.AuditListParams) **string { return &p.Status }},
	{"object-name", "only this object name", func(p *apiclient.AuditListParams) **string { return &p.ObjectName }},
	{"search", "only entries that contain this text", func(p *apiclient.AuditListParams) **string { return &p.Q }},
}

func (a *app) auditCommand() *cobra.Command {
	values := make([]string, len(auditFilters))
	var limit int
	var follow bool
	var interval time.Duration
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "The audit log: who changed what, when (the newest last; --follow for new entries)",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var filters apiclient.AuditListParams
			for i, f := range auditFilters {
				if values[i] != "" {
					*f.param(&filters) = &values[i]
				}
			}
			return a.audit(cmd.Context(), filters, limit, follow, interval)
		},
	}
	for i, f := range auditFilters {
		cmd.Flags().StringVar(&values[i], f.flag, "", f.help)
	}
	cmd.Flags().IntVarP(&limit, "limit", "n", 20, "how many of the newest entries to show first")
	cmd.Flags().BoolVarP(&follow, "follow", "f", false, "keep printing new entries until interrupted")
	cmd.Flags().DurationVar(&interval, "interval", 2*time.Second, "how often --follow asks for new entries")
	return cmd
}

func (a *app) audit(ctx context.Context, filters apiclient.AuditListParams, limit int, follow bool, interval time.Duration) error {
	entries, raws, err := a.auditPage(ctx, filters, limit)
	if err != nil {
		return err
	}
	if !follow && a.flags.output != "table" {
		return a.writeData(marshalRaw(raws))
	}
	newest := 0
	a.printAudit(entries, raws, !follow || a.flags.output == "table", &newest)
	for follow {
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(interval):
		}
		entries, raws, err := a.auditPage(ctx, filters, 100)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		a.printAudit(entries, raws, false, &newest)
	}
	return nil
}

// auditPage reads the newest entries (the API answers newest first).
func (a *app) auditPage(ctx context.Context, filters apiclient.AuditListParams, limit int) ([]obj, []json.RawMessage, error) {
	c, err := a.client()
	if err != nil {
		return nil, nil, err
	}
	filters.Limit = &limit // filters is a copy: the caller's stays as it was
	var p page
	resp, err := c.AuditList(ctx, &filters)
	if err := apiclient.Decode(resp, err, &p); err != nil {
		return nil, nil, err
	}
	entries := make([]obj, len(p.Results))
	for i, raw := range p.Results {
		if err := json.Unmarshal(raw, &entries[i]); err != nil {
			return nil, nil, err
		}
	}
	return entries, p.Results, nil
}

// printAudit prints entries oldest first, only those newer than *newest (by id),
// as table rows (with a header when asked) or one JSON object per line.
func (a *app) printAudit(entries []obj, raws []json.RawMessage, header bool, newest *int) {
	var rows [][]string
	for i := len(entries) - 1; i >= 0; i-- {
		e := entries[i]
		id := idOf(e)
		if id <= *newest && id != 0 {
			continue
		}
		if id > *newest {
			*newest = id
		}
		if a.flags.output != "table" {
			var line []byte
			line, _ = json.Marshal(raws[i])
			fmt.Fprintln(a.env.Stdout, string(line))
			continue
		}
		rows = append(rows, auditRow(e))
	}
	if a.flags.output != "table" {
		return
	}
	if header {
		_ = table(a.env.Stdout, []string{"TIME", "ACTOR", "ACTION", "OBJECT", "STATUS", "SUMMARY"}, rows)
		return
	}
	for _, row := range rows {
		fmt.Fprintln(a.env.Stdout, joinTabs(row))
	}
}

func joinTabs(row []string) string {
	out := ""
	for i, cell := range row {
		if i > 0 {
			out += "  "
		}
		out += cell
	}
	return out
}

// auditRow reads an entry's fields by the names the audit log may use.
func auditRow(e obj) []string {
	at := firstNonEmpty(str(e, "at"), str(e, "timestamp"), str(e, "created_at"), str(e, "time"))
	if t, err := time.Parse(time.RFC3339Nano, at); err == nil {
		at = t.Local().Format("2006-01-02 15:04:05")
	}
	object := firstNonEmpty(str(e, "object_type"), "-")
	if name := firstNonEmpty(str(e, "object_name"), str(e, "object_repr"), format(e["object_id"])); name != "-" {
		object += "/" + name
	}
	actor := firstNonEmpty(str(e, "actor"), str(e, "username"), str(e, "user"))
	return []string{firstNonEmpty(at, "-"), firstNonEmpty(actor, "-"), format(e["action"]), object,
		format(firstPresent(e, "status", "status_code")), format(firstPresent(e, "detail", "path"))}
}

func firstPresent(e obj, keys ...string) any {
	for _, key := range keys {
		if v, ok := e[key]; ok && v != nil && v != "" {
			return v
		}
	}
	return nil
}

func (a *app) backupCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "backup",
		Short: "Export every object (with private keys) or restore an export (admin only)",
		Args:  cobra.ArbitraryArgs,
		RunE:  helpOrUnknown,
	}
	var file string
	export := &cobra.Command{
		Use:   "export",
		Short: "Write the appliance's objects as one JSON document (to -f FILE, mode 0600, or stdout)",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			body, err := apiclient.Read(c.BackupRetrieve(cmd.Context()))
			if err != nil {
				return err
			}
			if file == "" || file == "-" {
				return writeJSON(a.env.Stdout, body)
			}
			if err := os.WriteFile(file, append(body, '\n'), 0o600); err != nil {
				return err
			}
			a.say("Backup written to %s (it holds private keys: keep it safe).", file)
			return nil
		},
	}
	export.Flags().StringVarP(&file, "file", "f", "", "file to write (mode 0600)")
	var dryRun bool
	restore := &cobra.Command{
		Use:   "restore FILE",
		Short: "Replace the objects with an export's (--dry-run: only show what would change); apply afterwards",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			docs, err := readDocuments(args[0], a.env.Stdin)
			if err != nil {
				return err
			}
			if len(docs) != 1 {
				return usagef("%s: one backup document expected", args[0])
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			request := apiclient.BackupRestoreRequest{Document: docs[0], DryRun: dryRun}
			body, err := apiclient.Read(c.BackupRestoreCreate(cmd.Context(), request))
			if err != nil {
				return err
			}
			if a.flags.output != "table" {
				return a.writeData(body)
			}
			var result apiclient.BackupRestoreResult
			if err := json.Unmarshal(body, &result); err != nil {
				return fmt.Errorf("the API's answer is not what was expected: %w", err)
			}
			a.printRestore(args[0], result)
			return nil
		},
	}
	restore.Flags().BoolVar(&dryRun, "dry-run", false, "only check the document and show what would change; change nothing")
	cmd.AddCommand(export, restore)
	return cmd
}

// printRestore shows what a restore changed, or would change (a dry run).
func (a *app) printRestore(file string, result apiclient.BackupRestoreResult) {
	if !result.Applied {
		fmt.Fprintf(a.env.Stdout, "Dry run: restoring %s would change (nothing is changed):\n", displayPath(file))
		a.printObjectChanges(result.Changes)
		return
	}
	fmt.Fprintf(a.env.Stdout, "Restored %s:\n", displayPath(file))
	a.printObjectChanges(result.Changes)
	nodes := make([]string, 0, len(result.NodeTokens))
	for node := range result.NodeTokens {
		nodes = append(nodes, node)
	}
	sort.Strings(nodes)
	for _, node := range nodes {
		fmt.Fprintf(a.env.Stdout, "Agent token of the new node %s (shown only now): %s\n", node, result.NodeTokens[node])
	}
	if len(result.Changes) > 0 {
		fmt.Fprintln(a.env.Stdout, "Not applied yet: 'fulcrum pending' shows it, 'fulcrum apply' applies it.")
	}
}
