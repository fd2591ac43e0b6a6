"""Users besides the owner, and the tokens that name them (see store.py)."""

from navi.users.store import InMemoryUserStore, Role, SqlUserStore, User, UserError, UserStore

__all__ = ["InMemoryUserStore", "Role", "SqlUserStore", "User", "UserError", "UserStore"]
