module fulcrum/agents

go 1.24.0

require (
	github.com/google/go-cmp v0.7.0
	github.com/mdlayher/genetlink v1.3.2
	github.com/mdlayher/netlink v1.9.0
	github.com/vishvananda/netlink v1.3.1
	golang.org/x/sys v0.41.0
)

require (
	github.com/mdlayher/socket v0.5.1 // indirect
	github.com/vishvananda/netns v0.0.5 // indirect
	golang.org/x/net v0.50.0 // indirect
	golang.org/x/sync v0.3.0 // indirect
)
