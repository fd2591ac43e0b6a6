"""Each user's custom instructions (`user_instructions`) and the profiles people made on the page
(`custom_profiles`), migration 0035: both as JSON documents of navi/profiles/custom.py's models;
the model each user picked for a built-in profile (`profile_models`, migration 0036)."""

from __future__ import annotations

from sqlalchemy import Column, Connection, DateTime, String, Table, Text, delete, select

from navi.llm.messages import utcnow
from navi.profiles.custom import CustomProfile, Instructions, PreferenceStore, ProfileSpec
from navi.storage.database import Database
from navi.storage.schema import metadata

user_instructions = Table(
    "user_instructions",
    metadata,
    Column("owner", String(128), primary_key=True),
    Column("data", Text, nullable=False),
)
custom_profiles = Table(
    "custom_profiles",
    metadata,
    Column("id", String(64), primary_key=True),
    Column("owner", String(128), nullable=False, index=True),
    Column("data", Text, nullable=False),
    Column("updated_at", DateTime(timezone=True), nullable=False),
)
profile_models = Table(
    "profile_models",
    metadata,
    Column("owner", String(128), primary_key=True),
    Column("profile_id", String(64), primary_key=True),
    Column("model", String(300), nullable=False),
)


class SqlPreferenceStore(PreferenceStore):
    def __init__(self, db: Database) -> None:
        self.db = db

    async def instructions(self, owner: str) -> Instructions:
        query = select(user_instructions.c.data).where(user_instructions.c.owner == owner)
        raw = await self.db.read(lambda conn: conn.execute(query).scalar())
        return Instructions.model_validate_json(raw) if raw else Instructions()

    async def set_instructions(self, owner: str, instructions: Instructions) -> None:
        data = instructions.model_dump_json()

        def write(conn: Connection) -> None:
            conn.execute(delete(user_instructions).where(user_instructions.c.owner == owner))
            conn.execute(user_instructions.insert().values(owner=owner, data=data))

        await self.db.write(write)

    async def profiles(self) -> list[CustomProfile]:
        c = custom_profiles.c
        query = select(c.id, c.owner, c.data).order_by(c.updated_at, c.id)
        rows = await self.db.read(lambda conn: conn.execute(query).all())
        return [
            CustomProfile(id=r.id, owner=r.owner, spec=ProfileSpec.model_validate_json(r.data)) for r in rows
        ]

    async def put_profile(self, profile: CustomProfile) -> None:
        data = profile.spec.model_dump_json()

        def write(conn: Connection) -> None:
            conn.execute(delete(custom_profiles).where(custom_profiles.c.id == profile.id))
            conn.execute(
                custom_profiles.insert().values(
                    id=profile.id, owner=profile.owner, data=data, updated_at=utcnow()
                )
            )

        await self.db.write(write)

    async def delete_profile(self, profile_id: str, owner: str) -> bool:
        c = custom_profiles.c
        statement = delete(custom_profiles).where(c.id == profile_id, c.owner == owner)
        return bool(await self.db.write(lambda conn: conn.execute(statement).rowcount))

    async def profile_models(self, owner: str) -> dict[str, str]:
        c = profile_models.c
        query = select(c.profile_id, c.model).where(c.owner == owner)
        rows = await self.db.read(lambda conn: conn.execute(query).all())
        return {r.profile_id: r.model for r in rows}

    async def set_profile_model(self, owner: str, profile_id: str, model: str | None) -> None:
        c = profile_models.c

        def write(conn: Connection) -> None:
            conn.execute(delete(profile_models).where(c.owner == owner, c.profile_id == profile_id))
            if model:
                conn.execute(profile_models.insert().values(owner=owner, profile_id=profile_id, model=model))

        await self.db.write(write)
