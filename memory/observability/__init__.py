"""What an operator sees of the provider: Prometheus metrics (`metrics`, `collect`, the
`/metrics` view in `endpoint`), structured logs (`logs`), OpenTelemetry traces (`tracing`), and
the one wrapper every op runs in (`observe`). docs/observability.md is the operator's page."""
