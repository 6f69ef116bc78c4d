"""The web calculator: one page and a JSON API over the same plan() the CLI uses."""
