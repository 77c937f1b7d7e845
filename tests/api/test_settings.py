"""Operators' settings: every section of GraphMemConfig from the environment or a TOML file,
shown with secrets masked; a typo is a one-line error, never a silent default."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from api.settings import Settings
from graphmem.config import GraphMemConfig
from graphmem.errors import ConfigError

GM = shutil.which("graphmem", path=str(Path(sys.executable).parent)) or shutil.which("graphmem")


def test_nested_sections_come_from_the_environment() -> None:
    s = Settings.from_env({
        "GRAPHMEM_TIERS__FAST__HALF_LIFE_HOURS": "2.5",
        "GRAPHMEM_CONSOLIDATION__CRON": "0 3 * * *",
        "GRAPHMEM_CONSOLIDATION__AGE_DAYS": "14",
        "GRAPHMEM_CONSOLIDATION__TIERS": '["slow", "glacial"]',
        "GRAPHMEM_RETRIEVAL__WEIGHTS__RECENCY": "0.2",
        "GRAPHMEM_STORE__NEO4J_DATABASE": "memories",
        "GRAPHMEM_IMPORTANCE__COMPUTED": "true",
        "GRAPHMEM_DYNAMICS__PROMOTION_AGENTS": "2",
    })
    cfg = s.memory_config()
    assert cfg.tiers.fast.half_life_hours == 2.5
    assert cfg.tiers.fast.capacity == 5000  # the rest of the section keeps its defaults
    assert cfg.tiers.medium == Settings().memory_config().tiers.medium
    assert (cfg.consolidation.cron, cfg.consolidation.age_days) == ("0 3 * * *", 14)
    assert [t.value for t in cfg.consolidation.tiers or ()] == ["slow", "glacial"]
    assert cfg.retrieval.weights.recency == 0.2
    assert cfg.store.neo4j_database == "memories"
    assert cfg.importance.computed and cfg.importance.weights["recency"] == 0.3
    assert cfg.dynamics.promotion_agents == 2


@pytest.mark.parametrize("section", list(GraphMemConfig.model_fields))
def test_every_section_of_the_library_is_read_from_the_environment(section: str) -> None:
    """A section added to GraphMemConfig is a setting without a second list: a variable
    under it reaches it (an unknown field there is refused, not ignored as an unknown
    variable would be)."""
    variable = f"GRAPHMEM_{section.upper()}__NO_SUCH_FIELD"
    with pytest.raises(ConfigError, match=variable):
        Settings.from_env({variable: "1"})
    assert getattr(Settings.from_env({}).memory_config(), section) is not None


def test_performance_knobs_are_in_the_tuning_section() -> None:
    cfg = Settings.from_env({"GRAPHMEM_TUNING__SEED_POSTINGS": "7",
                             "GRAPHMEM_TUNING__QUANTIZE_QUERIES": "false",
                             "GRAPHMEM_TUNING__ANN_MIN": "0"}).memory_config()
    assert (cfg.tuning.seed_postings, cfg.tuning.quantize_queries, cfg.tuning.ann_min) == (
        7, False, 0)
    for old in ("GRAPHMEM_EMBEDDING__QUANTIZE_QUERIES", "GRAPHMEM_STORE__ANN_MIN"):
        with pytest.raises(ConfigError, match=old):
            Settings.from_env({old: "0"})  # the old name


@pytest.mark.parametrize("env", [
    {"GRAPHMEM_TIERS__FAST__HALF_LIFE_HOUR": "2"},  # a typo in a section
    {"GRAPHMEM_TIERS__FAST__HALF_LIFE_HOURS": "-1"},  # out of range
    {"GRAPHMEM_PORT": "eighty"},
    {"GRAPHMEM_CONSOLIDATION__CHECK_VIEW": "everything"},
])
def test_a_bad_setting_is_a_config_error_naming_the_variable(env: dict[str, str]) -> None:
    with pytest.raises(ConfigError) as err:
        Settings.from_env(env)
    name = next(iter(env)).rsplit("__", 1)[0]
    assert name.split("__")[0] in str(err.value) and "\n" not in str(err.value)


def test_the_config_file_sits_below_the_environment(tmp_path: Path) -> None:
    f = tmp_path / "graphmem.toml"
    f.write_text('port = 9001\n[tiers.fast]\nhalf_life_hours = 3\ncapacity = 10\n'
                 '[consolidation]\ncron = "0 4 * * *"\n')
    s = Settings.from_env({"GRAPHMEM_CONFIG_FILE": str(f),
                           "GRAPHMEM_TIERS__FAST__CAPACITY": "20"})
    cfg = s.memory_config()
    assert (s.port, cfg.tiers.fast.half_life_hours) == (9001, 3)
    assert cfg.tiers.fast.capacity == 20  # the variable wins over the file
    assert cfg.consolidation.cron == "0 4 * * *"
    assert Settings.from_env({}, config_file=str(f)).port == 9001  # a command-line option
    f.write_text("[tiers.fast]\nhalf_lif = 3\n")
    with pytest.raises(ConfigError):
        Settings.from_env({"GRAPHMEM_CONFIG_FILE": str(f)})
    with pytest.raises(ConfigError):
        Settings.from_env({"GRAPHMEM_CONFIG_FILE": str(tmp_path / "missing.toml")})


def test_store_shorthands_and_secrets_never_shown() -> None:
    s = Settings.from_env({"GRAPHMEM_NEO4J_PASSWORD": "hunter2",
                           "GRAPHMEM_CONSOLIDATION__OPENAI_API_KEY": "sk-secret"})
    store = s.memory_config().store
    assert store.neo4j_password is not None
    assert store.neo4j_password.get_secret_value() == "hunter2"
    shown = json.dumps(s.effective())
    assert "hunter2" not in shown and "sk-secret" not in shown and "**********" in shown
    assert "hunter2" not in repr(s)


def test_graphmem_config_show_prints_what_is_in_effect(tmp_path: Path) -> None:
    assert GM
    env = {k: v for k, v in os.environ.items() if not k.startswith("GRAPHMEM_")}
    env |= {"GRAPHMEM_TIERS__SLOW__CAPACITY": "77", "GRAPHMEM_NEO4J_PASSWORD": "hunter2"}
    out = subprocess.run([GM, "config", "show"], capture_output=True, text=True, env=env,
                         timeout=120)
    assert out.returncode == 0, out.stderr
    assert "GRAPHMEM_TIERS__SLOW__CAPACITY=77" in out.stdout.splitlines()
    assert "hunter2" not in out.stdout
    assert "GRAPHMEM_STORE__NEO4J_PASSWORD=**********" in out.stdout.splitlines()
    lines = out.stdout.splitlines()  # the tuning section last, after a note that says so
    note = next(i for i, line in enumerate(lines) if line.startswith("# tuning"))
    assert "not operator settings" in lines[note]
    assert lines[note + 1:] and all(line.startswith("GRAPHMEM_TUNING__")
                                    for line in lines[note + 1:])
    assert not any(line.startswith("GRAPHMEM_TUNING__") for line in lines[:note])
    as_json = json.loads(subprocess.run([GM, "config", "show", "--json"], capture_output=True,
                                        text=True, env=env, timeout=120).stdout)
    assert as_json["tiers"]["slow"]["capacity"] == 77
    bad = subprocess.run([GM, "config", "show"], capture_output=True, text=True, timeout=120,
                         env=env | {"GRAPHMEM_TIERS__SLOW__CAPACITI": "1"})
    assert bad.returncode == 1 and bad.stderr.startswith("graphmem: error: invalid setting")
