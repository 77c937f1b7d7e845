"""Server settings: the only place graphmem reads the environment (prefix ``GRAPHMEM_``)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, SecretStr

from graphmem.config import GraphMemConfig, StoreConfig


class Settings(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    #: a data folder (embedded store) or a database URL (neo4j:// ..., falkordb:// ...)
    data: str = "./graphmem-data"
    #: where API keys live (hashed); defaults to <data>/keys.db for a folder
    keys_file: Path | None = None
    host: str = "127.0.0.1"
    port: int = Field(default=8765, ge=1, le=65535)
    #: no API keys at all - only ever allowed on a loopback host
    dev_no_auth: bool = False
    neo4j_user: str = "neo4j"
    neo4j_password: SecretStr | None = None
    falkordb_graph: str = "graphmem"
    max_body_bytes: int = Field(default=4 * 1024 * 1024, gt=0)
    max_batch: int = Field(default=1000, gt=0)
    scheduler: bool = True
    #: serve /metrics without a key, with totals only (no namespace names)
    metrics_public: bool = False

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: object) -> Settings:
        env = os.environ if env is None else env
        values: dict[str, object] = {}
        for name in cls.model_fields:
            raw = env.get(f"GRAPHMEM_{name.upper()}")
            if raw is not None:
                values[name] = raw.lower() in ("1", "true", "yes") if name in (
                    "dev_no_auth", "scheduler", "metrics_public") else raw
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls.model_validate(values)

    @property
    def is_url(self) -> bool:
        return "://" in self.data

    def keys_path(self) -> Path:
        if self.keys_file is not None:
            return self.keys_file
        if self.is_url:
            return Path("./graphmem-keys.db")
        return Path(self.data) / "keys.db"

    def memory_config(self) -> GraphMemConfig:
        return GraphMemConfig(store=StoreConfig(neo4j_user=self.neo4j_user,
                                                neo4j_password=self.neo4j_password,
                                                falkordb_graph=self.falkordb_graph))
