"""Model Context Protocol: Navi as an MCP server (and, beside it, MCP servers as Navi tools)."""
