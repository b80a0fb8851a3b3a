"""The client of a tool-server, embedded or over a link."""
