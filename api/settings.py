"""Server and operator settings: the only place graphmem reads the environment.

Every variable has the prefix ``GRAPHMEM_``; sections of ``GraphMemConfig`` nest with
``__`` (``GRAPHMEM_TIERS__FAST__HALF_LIFE_HOURS=2``, ``GRAPHMEM_CONSOLIDATION__CRON="0 3 * *
*"``, ``GRAPHMEM_RETRIEVAL__WEIGHTS__RECENCY=0.1``); lists and tuples are JSON
(``GRAPHMEM_CONSOLIDATION__TIERS='["slow","glacial"]'``). An optional TOML file
(``GRAPHMEM_CONFIG_FILE``, same names without the prefix, sections as tables) sits below the
environment: variables win over the file, the file over the defaults. Secrets are
``SecretStr`` and never printed (``graphmem config show`` masks them).

Example:
    >>> s = Settings.from_env({"GRAPHMEM_TIERS__FAST__HALF_LIFE_HOURS": "2"})
    >>> s.memory_config().tiers.fast.half_life_hours
    2.0
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from contextvars import ContextVar
from pathlib import Path
from typing import Any

from pydantic import Field, SecretStr, ValidationError
from pydantic_settings import (
    BaseSettings,
    EnvSettingsSource,
    InitSettingsSource,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
)

from graphmem.config import GraphMemConfig, RetrievalConfig
from graphmem.errors import ConfigError

PREFIX = "GRAPHMEM_"
#: the library's sections (``GRAPHMEM_<SECTION>__<FIELD>``), written once: in ``GraphMemConfig``
SECTIONS = tuple(GraphMemConfig.model_fields)


class Settings(BaseSettings, GraphMemConfig):
    """Every setting of the server and CLI, from ``GRAPHMEM_*`` variables, a TOML file and
    the defaults (see the module docstring): the server's own, and the library's sections
    as ``GraphMemConfig`` declares them (inherited, so a new section is a setting at once).

    Example:
        >>> s = Settings.from_env({"GRAPHMEM_RETRIEVAL__WEIGHTS__RECENCY": "0.1"})
        >>> s.memory_config().retrieval.weights.recency
        0.1
    """

    model_config = SettingsConfigDict(env_prefix=PREFIX, env_nested_delimiter="__",
                                      nested_model_default_partial_update=True,
                                      frozen=True, extra="forbid")

    #: a data folder (embedded store) or a database URL (neo4j:// ..., falkordb:// ...)
    data: str = "./graphmem-data"
    #: where API keys live (hashed); defaults to <data>/keys.db for a folder
    keys_file: Path | None = None
    #: a TOML file of settings below the environment (``[tiers.fast]`` ...)
    config_file: Path | None = None
    host: str = "127.0.0.1"
    port: int = Field(default=8765, ge=1, le=65535)
    #: no API keys at all - only ever allowed on a loopback host
    dev_no_auth: bool = False
    #: shorthands for the store section (``GRAPHMEM_STORE__NEO4J_PASSWORD`` works too)
    neo4j_user: str | None = None
    neo4j_password: SecretStr | None = None
    falkordb_graph: str | None = None
    max_body_bytes: int = Field(default=4 * 1024 * 1024, gt=0)
    max_batch: int = Field(default=1000, gt=0)
    scheduler: bool = True
    #: serve /metrics without a key, with totals only (no namespace names)
    metrics_public: bool = False
    #: with keys in the graph database: a verified key is trusted this long without asking
    #: it again (a revocation reaches every replica within it)
    key_cache_seconds: float = Field(default=5.0, ge=0)
    # connection limits of ``graphmem serve`` (``api/server.py``)
    #: seconds a connection has to complete its request head, from its opening or from its
    #: previous response; then it is closed
    header_timeout: float = Field(default=10.0, gt=0)
    #: seconds an idle keep-alive connection stays open
    keep_alive_timeout: float = Field(default=5.0, gt=0)
    #: open connections per process (beyond it the one waiting longest for a request head is
    #: closed); unset: the open-files limit less ``fd_reserve`` and what is open at start
    max_connections: int | None = Field(default=None, ge=1)
    #: bytes of a request head (request line and headers) at most; more is answered 431
    max_head_bytes: int = Field(default=64 * 1024, ge=1024)
    #: file descriptors kept for the store (SQLite handles per thread, a driver's pool, logs)
    fd_reserve: int = Field(default=256, ge=0)
    #: while connection limits bite, at most one log line (with counts) per this many seconds
    limits_log_seconds: float = Field(default=60.0, gt=0)
    #: the server records searches' accesses in a writer thread (``defer_access``)
    retrieval: RetrievalConfig = RetrievalConfig(defer_access=True)

    @classmethod
    def settings_customise_sources(
        cls, settings_cls: type[BaseSettings], init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource, dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        env = _GIVEN_ENV.get()
        if env is not None:  # from_env(mapping): that mapping instead of os.environ
            env_settings = EnvSettingsSource(settings_cls)
            env_settings.env_vars = {k.lower(): v for k, v in env.items()}
        file = _file_source(settings_cls, init_settings, env_settings)
        return (init_settings, env_settings, *([file] if file else []))

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None, **overrides: object) -> Settings:
        """Settings from ``env`` (default: the process environment) and the config file it
        names, with ``overrides`` (command-line options; None means "not given") on top."""
        given = {k: v for k, v in overrides.items() if v is not None}
        token = _GIVEN_ENV.set(None if env is None else dict(env))
        try:
            return cls(**given)  # type: ignore[arg-type]
        except ValidationError as exc:
            first = exc.errors()[0]
            where = PREFIX + "__".join(str(p) for p in first["loc"]).upper()
            raise ConfigError(f"invalid setting {where}: {first['msg']} "
                              f"({exc.error_count()} error(s))") from None
        finally:
            _GIVEN_ENV.reset(token)

    @property
    def is_url(self) -> bool:
        return "://" in self.data

    @property
    def keys_in_store(self) -> bool:
        """API keys live in the graph database itself (shared by every replica) unless a
        key file is named; the embedded default keeps ``keys.db`` in its folder."""
        return self.is_url and self.keys_file is None

    def keys_path(self) -> Path:
        if self.keys_file is not None:
            return self.keys_file
        if self.is_url:
            return Path("./graphmem-keys.db")
        return Path(self.data) / "keys.db"

    def memory_config(self) -> GraphMemConfig:
        """The library's configuration: the sections, with the store shorthands applied."""
        store = self.store.model_copy(update={k: v for k, v in (
            ("neo4j_user", self.neo4j_user), ("neo4j_password", self.neo4j_password),
            ("falkordb_graph", self.falkordb_graph)) if v is not None})
        sections = {name: getattr(self, name) for name in SECTIONS}
        return GraphMemConfig(**sections | {"store": store})

    def effective(self) -> dict[str, Any]:
        """Every setting as it is in effect, secrets masked (``graphmem config show``): the
        server's, then the library's sections in their order (``tuning`` last). A SecretStr
        dumps as '**********' (None when unset)."""
        server = set(type(self).model_fields) - set(SECTIONS)
        out = self.model_dump(mode="json", include=server - {
            "neo4j_user", "neo4j_password", "falkordb_graph"})  # applied to the store section
        return out | self.memory_config().model_dump(mode="json")


#: the mapping ``from_env`` was given, for this context only
_GIVEN_ENV: ContextVar[dict[str, str] | None] = ContextVar("graphmem_settings_env",
                                                          default=None)


def _file_source(settings_cls: type[BaseSettings], init: PydanticBaseSettingsSource,
                 env: PydanticBaseSettingsSource) -> PydanticBaseSettingsSource | None:
    """The TOML file named by an override or ``GRAPHMEM_CONFIG_FILE``, when there is one."""
    name = init().get("config_file") or env().get("config_file")
    if not name:
        return None
    path = Path(str(name))
    try:
        values = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read the config file {path}: {exc}") from exc
    return InitSettingsSource(settings_cls, init_kwargs=values)

