"""One package or module per framework; each turns a spec into a `Schedule` with pure functions."""
