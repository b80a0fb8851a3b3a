"""The flow language: models, parser, names and the YAML writer. Imports nothing else of argent."""
