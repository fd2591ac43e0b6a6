"""Profiles: identity, tools and model settings per domain (`secretary`, `server_admin`, `smart_home`)."""

from navi.profiles.base import BASE_TOOLS, AgentProfile
from navi.profiles.registry import ProfileRegistry, UnknownProfile, builtin_profiles

__all__ = [
    "BASE_TOOLS",
    "AgentProfile",
    "ProfileRegistry",
    "UnknownProfile",
    "builtin_profiles",
]
