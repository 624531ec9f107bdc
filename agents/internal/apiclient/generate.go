// Package apiclient is the Go client of the Fulcrum REST API: client.gen.go is
// generated from api/openapi.yaml by a pinned oapi-codegen (never edit it by
// hand: `make -C agents generate` or the top-level `make openapi` writes it,
// `make lint` fails when it is stale), and helpers.go adds the few thin pieces
// the CLI needs around it: authorization, If-Match, and the API's error answers
// read into one type. Every request goes through a generated method.
package apiclient
