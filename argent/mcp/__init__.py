"""The MCP adapter: an MCP server over stdio that is a client of a tool-server."""
