"""A stdio MCP server on the 2025 SDK (`mcp` 1.27.2, protocol 2025-11-25), run with
`navi.testing.old_mcp.old_sdk_path()` first on PYTHONPATH: it knows no `server/discover`, so
clients must fall back to the `initialize` handshake. `book` asks the user with
`elicitation/create` in the middle of the call, as 2025 servers do."""

from mcp.server.fastmcp import Context, FastMCP  # the 1.27.2 package: FastMCP is its server API
from pydantic import BaseModel, Field

app = FastMCP("navi-test-old")


class Booking(BaseModel):
    guests: int = Field(description="How many people")
    name: str = Field(description="The name the table is booked under")


@app.tool()
async def book(day: str, ctx: Context) -> str:  # type: ignore[type-arg]
    """Book a table, asking the user for the details."""
    import mcp.types

    answer = await ctx.elicit(f"A table on {day}: for how many people, and in whose name?", Booking)
    if answer.action == "accept":
        sdk = mcp.types.LATEST_PROTOCOL_VERSION
        return f"booked {day} for {answer.data.guests} under {answer.data.name} (sdk {sdk})"
    return f"not booked: {answer.action}"


if __name__ == "__main__":
    app.run()
