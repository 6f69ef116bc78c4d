"""The `trainsteps` command line: one module per command, one output sink."""
