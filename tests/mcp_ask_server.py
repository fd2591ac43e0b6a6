"""A stdio MCP server for the tests, on the 2026 SDK, whose tools ask the user (elicitation).

`book` asks for a form (how many guests, whose name) through a resolver, which the SDK serves on
either protocol era; `pay` asks the user to open a page (URL mode) by returning the question from
the call (`input_required`, the 2026-07-28 way), and says what the user answered.
"""

from __future__ import annotations

from typing import Annotated

import mcp_types
from mcp.server.mcpserver import (
    AcceptedElicitation,
    CancelledElicitation,
    Context,
    DeclinedElicitation,
    Elicit,
    ElicitationResult,
    MCPServer,
    Resolve,
)
from pydantic import BaseModel, Field

server = MCPServer("navi-test-ask")


class Booking(BaseModel):
    guests: int = Field(description="How many people")
    name: str = Field(description="The name the table is booked under")
    terrace: bool = Field(default=False, description="Outside, on the terrace")


async def ask_booking(day: str) -> Elicit[Booking]:
    return Elicit(f"A table on {day}: for how many people, and in whose name?", Booking)


@server.tool()
async def book(day: str, booking: Annotated[ElicitationResult[Booking], Resolve(ask_booking)]) -> str:
    """Book a table, asking the user for the details."""
    match booking:
        case AcceptedElicitation(data=data):
            where = " on the terrace" if data.terrace else ""
            return f"booked {day} for {data.guests} under {data.name}{where}"
        case DeclinedElicitation():
            return "not booked: the user declined"
        case CancelledElicitation():
            return "not booked: nobody answered"
    return "not booked"


@server.tool()
async def pay(amount: int, ctx: Context) -> str | mcp_types.InputRequiredResult:
    """Take a deposit: the user pays on the payment page."""
    answers = ctx.input_responses or {}
    answer = answers.get("pay")
    if answer is None:
        question = mcp_types.ElicitRequest(
            params=mcp_types.ElicitRequestURLParams(
                message=f"A deposit of {amount} EUR confirms the booking.",
                url=f"https://pay.example.com/deposit?amount={amount}",
                elicitation_id=f"deposit-{amount}",
            )
        )
        return mcp_types.InputRequiredResult(input_requests={"pay": question})
    return f"deposit: the user answered {getattr(answer, 'action', answer)}"


if __name__ == "__main__":
    server.run()
