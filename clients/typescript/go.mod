// A module of its own only so that the Go tooling (go vet ./..., go mod tidy) stays out of this
// TypeScript client and its node_modules; it holds no Go code.
module github.com/paygate/paygate/clients/typescript
