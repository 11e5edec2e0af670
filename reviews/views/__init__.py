"""Console views, one module per screen. Each is a thin edge: parse the form, call one op through
`reviews.console`, render the answer."""
