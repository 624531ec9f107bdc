package cli

import (
	"context"
	"encoding/json"
	"strconv"

	"github.com/spf13/cobra"

	"fulcrum/agents/internal/apiclient"
)

// extraCommands are a kind's actions beyond create, update and delete.
func (a *app) extraCommands(k *kind) []*cobra.Command {
	switch k.name {
	case "member":
		return []*cobra.Command{
			a.importCommand(bulkKinds["member"]),
			a.deleteManyCommand(bulkKinds["member"]),
			a.memberStateCommand(k, "drain", "drain", "Drain a member: no new connections, sessions kept (at once, on every node)"),
			a.memberStateCommand(k, "enable", "enabled", "Put a member back in service (at once, on every node)"),
			a.memberStateCommand(k, "disable", "disabled", "Take a member out of service for maintenance (at once, on every node)"),
			a.memberWeightCommand(k),
		}
	case "certificate":
		return []*cobra.Command{a.generateCertificateCommand(k)}
	case "node":
		return []*cobra.Command{a.standbyCommand(k), a.switchoverCommand()}
	case "rule":
		return []*cobra.Command{a.importCommand(bulkKinds["rule"]), a.deleteManyCommand(bulkKinds["rule"])}
	}
	return nil
}

// runtimeResult is the answer of a runtime change: the object and the revision that carries it.
type runtimeResult struct {
	Revision int             `json:"revision"`
	Member   json.RawMessage `json:"member"`
	Node     json.RawMessage `json:"node"`
}

func (a *app) memberStateCommand(k *kind, verb, state, short string) *cobra.Command {
	return &cobra.Command{
		Use:               verb + " POOL/MEMBER...",
		Short:             short,
		Args:              rangeArgs(1, -1),
		ValidArgsFunction: a.completeNames(k, true),
		RunE: func(cmd *cobra.Command, args []string) error {
			value := apiclient.MemberRuntimeStateEnum(state)
			for _, ref := range args {
				if err := a.memberRuntime(cmd.Context(), k, ref, apiclient.MemberRuntimeRequest{State: &value}); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

func (a *app) memberWeightCommand(k *kind) *cobra.Command {
	return &cobra.Command{
		Use:               "weight POOL/MEMBER WEIGHT",
		Short:             "Set a member's weight at once, on every node",
		Args:              exactArgs(2),
		ValidArgsFunction: a.completeNames(k, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			weight, err := strconv.Atoi(args[1])
			if err != nil {
				return usagef("weight %q: must be a number", args[1])
			}
			return a.memberRuntime(cmd.Context(), k, args[0], apiclient.MemberRuntimeRequest{Weight: &weight})
		},
	}
}

func (a *app) memberRuntime(ctx context.Context, k *kind, ref string, change apiclient.MemberRuntimeRequest) error {
	member, err := a.resolve(ctx, k, ref)
	if err != nil {
		return err
	}
	c, err := a.client()
	if err != nil {
		return err
	}
	var result runtimeResult
	body, err := apiclient.Read(c.MembersRuntimeCreate(ctx, idOf(member.obj), change))
	if err != nil {
		return err
	}
	if a.flags.output != "table" {
		return a.writeData(body)
	}
	if err := json.Unmarshal(body, &result); err != nil {
		return err
	}
	updated, err := decodeItem(result.Member)
	if err != nil {
		return err
	}
	a.say("Member %s: state %s, weight %s (revision %d).", a.namer(ctx).display(k, updated.obj),
		format(updated.obj["state"]), format(updated.obj["weight"]), result.Revision)
	return nil
}

func (a *app) generateCertificateCommand(k *kind) *cobra.Command {
	var request apiclient.CertificateGenerateRequest
	var days int
	var keyType, description string
	var sans []string
	cmd := &cobra.Command{
		Use:   "generate NAME --common-name CN",
		Short: "Make a new key and a self-signed certificate on the appliance",
		Args:  exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			request.Name = args[0]
			if cmd.Flags().Changed("days") {
				request.Days = &days
			}
			if keyType != "" {
				kt := apiclient.KeyTypeEnum(keyType)
				request.KeyType = &kt
			}
			if description != "" {
				request.Description = &description
			}
			if len(sans) > 0 {
				request.Sans = &sans
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			body, err := apiclient.Read(c.CertificatesGenerateCreate(cmd.Context(), request))
			if err != nil {
				return err
			}
			it, err := decodeItem(body)
			if err != nil {
				return err
			}
			if a.flags.output != "table" {
				return a.printItem(it)
			}
			a.say("Created certificate %s for %s, valid until %s.", format(it.obj["name"]), format(it.obj["subject"]), format(it.obj["not_after"]))
			return nil
		},
	}
	cmd.Flags().StringVar(&request.CommonName, "common-name", "", "the certificate's common name (required)")
	cmd.Flags().StringArrayVar(&sans, "san", nil, "a DNS name or IP address (default: the common name); repeatable")
	cmd.Flags().IntVar(&days, "days", 365, "days of validity")
	cmd.Flags().StringVar(&keyType, "key-type", "", "key type, e.g. rsa-2048 or ecdsa-p256 (default: the API's)")
	cmd.Flags().StringVar(&description, "description", "", "description")
	_ = cmd.MarkFlagRequired("common-name")
	return cmd
}

func (a *app) standbyCommand(k *kind) *cobra.Command {
	var off bool
	cmd := &cobra.Command{
		Use:               "standby NODE",
		Short:             "Hand a node's VIPs to its peers (--off: take its part again)",
		Args:              exactArgs(1),
		ValidArgsFunction: a.completeNames(k, false),
		RunE: func(cmd *cobra.Command, args []string) error {
			node, err := a.resolve(cmd.Context(), k, args[0])
			if err != nil {
				return err
			}
			c, err := a.client()
			if err != nil {
				return err
			}
			body, err := apiclient.Read(c.NodesStandbyCreate(cmd.Context(), idOf(node.obj), apiclient.NodeStandbyRequest{Standby: !off}))
			if err != nil {
				return err
			}
			if a.flags.output != "table" {
				return a.writeData(body)
			}
			var result runtimeResult
			if err := json.Unmarshal(body, &result); err != nil {
				return err
			}
			state := "in standby"
			if off {
				state = "back in service"
			}
			a.say("Node %s is %s (revision %d).", args[0], state, result.Revision)
			return nil
		},
	}
	cmd.Flags().BoolVar(&off, "off", false, "leave standby")
	return cmd
}

// switchoverCommand hands the management VIP and the writable cluster database over to the
// synchronous standby (POST /api/v1/cluster/switchover/, admins).
func (a *app) switchoverCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "switchover",
		Short: "Hand the management VIP and the cluster database over to the synchronous standby",
		Long: "Hand the management VIP, and the writable cluster database with it, over to the appliance\n" +
			"whose database is the synchronous standby; this one becomes its standby. Nothing is lost.\n" +
			"Changes are refused for the few seconds it takes; this command then works on as before.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := a.client()
			if err != nil {
				return err
			}
			body, err := apiclient.Read(c.ClusterSwitchoverCreate(cmd.Context()))
			if err != nil {
				return err
			}
			if a.flags.output != "table" {
				return a.writeData(body)
			}
			var result apiclient.Switchover
			if err := json.Unmarshal(body, &result); err != nil {
				return err
			}
			a.say("%s", result.Detail)
			return nil
		},
	}
}
