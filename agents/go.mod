module fulcrum/agents

go 1.24.0

require (
	github.com/google/go-cmp v0.7.0
	github.com/mattn/go-shellwords v1.0.16
	github.com/mdlayher/genetlink v1.3.2
	github.com/mdlayher/netlink v1.9.0
	github.com/oapi-codegen/runtime v1.8.0
	github.com/spf13/cobra v1.10.2
	github.com/spf13/pflag v1.0.9
	github.com/vishvananda/netlink v1.3.1
	go.yaml.in/yaml/v2 v2.4.2
	golang.org/x/sys v0.41.0
	golang.org/x/term v0.40.0
	sigs.k8s.io/yaml v1.6.0
)

require (
	github.com/apapsch/go-jsonmerge/v2 v2.0.0 // indirect
	github.com/google/uuid v1.6.0 // indirect
	github.com/inconshreveable/mousetrap v1.1.0 // indirect
	github.com/mdlayher/socket v0.5.1 // indirect
	github.com/vishvananda/netns v0.0.5 // indirect
	golang.org/x/net v0.50.0 // indirect
	golang.org/x/sync v0.3.0 // indirect
)
