"""The wire between client and tool-server: models, members, archives."""
