"""Users besides the owner, and the tokens that name them (see store.py; SQL: navi/storage/users.py)."""

from navi.users.store import InMemoryUserStore, Role, User, UserError, UserStore

__all__ = ["InMemoryUserStore", "Role", "User", "UserError", "UserStore"]
