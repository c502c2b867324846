"""Settings are parsed once from an environment mapping and refuse anything but one DeepSeek gateway."""

from __future__ import annotations

import pickle

import pytest

from control_plane.settings import LLMSettings, Secret, Settings
from control_plane.synthesizers.pricing import ModelPrice
from data_plane.errors import ConfigurationError

KEY = "sk-test-0123456789abcdef"
CF_TOKEN = "cf-token-fedcba9876543210"
CF_URL = "https://gateway.ai.cloudflare.com/v1/0123abcd/my-gateway/deepseek"


def test_defaults_without_environment() -> None:
    """An empty environment gives the offline synthesizer and the documented LLM defaults."""
    s = Settings.from_env({})
    assert s.database_url is None
    assert s.synthesizer == "offline"
    assert s.llm == LLMSettings(
        model="deepseek-flash",
        api_key=None,
        base_url="https://api.deepseek.com",
        cf_aig_token=None,
        timeout_s=30.0,
        max_retries=2,
        context_window=1_000_000,
        max_tokens=2048,
        thinking="disabled",
        reasoning_effort=None,
    )


def test_api_key_makes_deepseek_the_default() -> None:
    """With DEEPSEEK_API_KEY set and no KG_SYNTHESIZER, the synthesizer is deepseek."""
    s = Settings.from_env({"DEEPSEEK_API_KEY": KEY})
    assert s.synthesizer == "deepseek"
    assert s.llm.api_key is not None and s.llm.api_key.reveal() == KEY


def test_explicit_offline_wins_over_a_key() -> None:
    """KG_SYNTHESIZER=offline keeps the offline synthesizer even when a key is present."""
    assert Settings.from_env({"DEEPSEEK_API_KEY": KEY, "KG_SYNTHESIZER": "offline"}).synthesizer == "offline"


def test_every_variable_is_read() -> None:
    """Each documented variable lands in its field, typed."""
    s = Settings.from_env(
        {
            "KG_DATABASE_URL": "sqlite:///x.db",
            "KG_SYNTHESIZER": "deepseek",
            "DEEPSEEK_API_KEY": KEY,
            "KG_DEEPSEEK_MODEL": "deepseek-v4-pro",
            "KG_DEEPSEEK_THINKING": "enabled",
            "KG_DEEPSEEK_REASONING_EFFORT": "max",
            "KG_DEEPSEEK_PRICES": '{"deepseek-v4-pro": {"cache_hit": 0.1, "cache_miss": 1, "output": 2}}',
            "KG_LLM_BASE_URL": CF_URL + "/",
            "CF_AIG_TOKEN": CF_TOKEN,
            "KG_LLM_TIMEOUT_S": "12.5",
            "KG_LLM_MAX_RETRIES": "5",
            "KG_LLM_CONTEXT_WINDOW": "128000",
            "KG_LLM_MAX_TOKENS": "2048",
        }
    )
    assert s.database_url == "sqlite:///x.db"
    assert (s.llm.model, s.llm.base_url, s.llm.gateway) == ("deepseek-v4-pro", CF_URL, "cloudflare")
    assert (s.llm.thinking, s.llm.reasoning_effort) == ("enabled", "max")
    assert s.llm.price == ModelPrice(cache_hit=0.1, cache_miss=1.0, output=2.0)
    assert s.llm.cf_aig_token == Secret(CF_TOKEN)
    assert (s.llm.timeout_s, s.llm.max_retries, s.llm.context_window, s.llm.max_tokens) == (
        12.5,
        5,
        128000,
        2048,
    )


@pytest.mark.parametrize(
    "model", ["gpt-4o", "claude-3-opus", "deepseek", "DeepSeek-chat", "llama-3-deepseek-"]
)
def test_non_deepseek_model_is_refused_by_name(model: str) -> None:
    """A model name not starting with 'deepseek-' is refused, and the message names the value."""
    with pytest.raises(ConfigurationError, match="not a DeepSeek model") as info:
        Settings.from_env({"KG_DEEPSEEK_MODEL": model})
    assert repr(model) in str(info.value)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://api.deepseek.com", "https://api.deepseek.com"),
        ("https://api.deepseek.com/", "https://api.deepseek.com"),
        ("https://api.deepseek.com/v1", "https://api.deepseek.com/v1"),
        (CF_URL, CF_URL),
        ("http://127.0.0.1:8080", "http://127.0.0.1:8080"),
        ("http://localhost:9/v1/", "http://localhost:9/v1"),
    ],
)
def test_allowed_base_urls(url: str, expected: str) -> None:
    """DeepSeek, a Cloudflare AI Gateway for DeepSeek and loopback URLs are accepted, normalised."""
    assert Settings.from_env({"KG_LLM_BASE_URL": url}).llm.base_url == expected


@pytest.mark.parametrize(
    "url",
    [
        "https://api.openai.com/v1",
        "http://api.deepseek.com",
        "https://api.deepseek.com.evil.example",
        "https://api.deepseek.com/v2",
        "https://api.deepseek.com/?x=1",
        "https://gateway.ai.cloudflare.com/v1/acct/gw/openai",
        "https://gateway.ai.cloudflare.com/v1/acct/deepseek",
        "http://10.0.0.1:8080",
        "https://127.0.0.1:8080",
        "http://127.0.0.1",
        "ftp://api.deepseek.com",
    ],
)
def test_other_base_urls_are_refused(url: str) -> None:
    """Any other host, scheme or path is refused at start-up."""
    with pytest.raises(ConfigurationError, match="not an allowed model gateway"):
        Settings.from_env({"KG_LLM_BASE_URL": url})


def test_credentials_in_a_refused_url_are_not_echoed() -> None:
    """A refused URL with user:password is reported without the password."""
    with pytest.raises(ConfigurationError) as info:
        Settings.from_env({"KG_LLM_BASE_URL": "https://user:hunter2@api.deepseek.com"})
    assert "hunter2" not in str(info.value)


@pytest.mark.parametrize("var", ["OPENAI_BASE_URL", "OPENAI_API_BASE", "DEEPSEEK_BASE_URL"])
def test_a_second_base_url_is_refused(var: str) -> None:
    """Another base-URL variable pointing elsewhere is a second gateway and is refused."""
    with pytest.raises(ConfigurationError, match="exactly one model gateway URL is allowed") as info:
        Settings.from_env({var: "https://api.openai.com/v1"})
    assert var in str(info.value)


def test_a_second_base_url_equal_to_the_first_is_tolerated() -> None:
    """The same URL under another variable name is not a second gateway."""
    s = Settings.from_env({"KG_LLM_BASE_URL": CF_URL, "OPENAI_BASE_URL": CF_URL + "/"})
    assert s.llm.base_url == CF_URL


def test_deepseek_without_a_key_is_refused() -> None:
    """KG_SYNTHESIZER=deepseek without DEEPSEEK_API_KEY fails at start-up, saying which variable."""
    with pytest.raises(ConfigurationError, match="DEEPSEEK_API_KEY"):
        Settings.from_env({"KG_SYNTHESIZER": "deepseek"})


def test_unknown_synthesizer_is_refused() -> None:
    """Only 'offline' and 'deepseek' are synthesizers."""
    with pytest.raises(ConfigurationError, match="KG_SYNTHESIZER"):
        Settings.from_env({"KG_SYNTHESIZER": "openai"})


def test_gateway_token_without_a_gateway_is_refused() -> None:
    """CF_AIG_TOKEN with DeepSeek's own URL is refused instead of being sent to DeepSeek."""
    with pytest.raises(ConfigurationError, match="CF_AIG_TOKEN"):
        Settings.from_env({"CF_AIG_TOKEN": CF_TOKEN})


@pytest.mark.parametrize(
    ("var", "value"),
    [
        ("KG_LLM_MAX_RETRIES", "6"),
        ("KG_LLM_MAX_RETRIES", "-1"),
        ("KG_LLM_MAX_RETRIES", "two"),
        ("KG_LLM_TIMEOUT_S", "0"),
        ("KG_LLM_TIMEOUT_S", "nan"),
        ("KG_LLM_TIMEOUT_S", "soon"),
        ("KG_LLM_CONTEXT_WINDOW", "12.5"),
        ("KG_LLM_MAX_TOKENS", "0"),
    ],
)
def test_out_of_range_numbers_are_refused(var: str, value: str) -> None:
    """Numeric settings outside their bounds or not numbers are refused, naming the variable."""
    with pytest.raises(ConfigurationError, match=var):
        Settings.from_env({var: value})


def test_overrides_win_and_none_means_not_given() -> None:
    """Keyword overrides (e.g. CLI options) beat the environment; None leaves the environment's value."""
    env = {"DEEPSEEK_API_KEY": KEY, "KG_DATABASE_URL": "sqlite:///env.db"}
    s = Settings.from_env(env, synthesizer="offline", database_url=None, max_retries=0)
    assert (s.synthesizer, s.database_url, s.llm.max_retries) == ("offline", "sqlite:///env.db", 0)


def test_overrides_are_validated_like_the_environment() -> None:
    """An override is checked as strictly as the variable it replaces."""
    with pytest.raises(ConfigurationError, match="not a DeepSeek model"):
        Settings.from_env({}, model="gpt-4o")


def test_unknown_override_is_refused() -> None:
    """A misspelt override is an error, not silently ignored."""
    with pytest.raises(ConfigurationError, match="modle"):
        Settings.from_env({}, modle="deepseek-chat")


def test_secrets_never_show_in_reprs() -> None:
    """repr and str of settings show neither the API key, the gateway token nor a database password."""
    s = Settings.from_env(
        {
            "DEEPSEEK_API_KEY": KEY,
            "CF_AIG_TOKEN": CF_TOKEN,
            "KG_LLM_BASE_URL": CF_URL,
            "KG_DATABASE_URL": "postgresql+psycopg://kg:db-pass-123@db.example/kg",
        }
    )
    for text in (repr(s), str(s), repr(s.llm), f"{s.llm.api_key}", f"{s.llm.cf_aig_token!r}"):
        assert KEY not in text
        assert CF_TOKEN not in text
        assert "db-pass-123" not in text
    assert repr(Secret(KEY)) == str(Secret(KEY)) == "***"


def test_secrets_cannot_be_pickled() -> None:
    """Pickling a Secret fails rather than writing the key somewhere."""
    with pytest.raises(TypeError):
        pickle.dumps(Secret(KEY))


@pytest.mark.parametrize(
    ("model", "replacement"),
    [("deepseek-chat", "THINKING=disabled"), ("deepseek-reasoner", "THINKING=enabled")],
)
def test_retired_models_are_refused_naming_the_replacement(model: str, replacement: str) -> None:
    """deepseek-chat and deepseek-reasoner are no longer served: refused at start-up, with what to use."""
    with pytest.raises(ConfigurationError, match="retired") as caught:
        Settings.from_env({"KG_DEEPSEEK_MODEL": model})
    assert "deepseek-flash" in str(caught.value) and replacement in str(caught.value)


@pytest.mark.parametrize("model", ["deepseek-flash", "deepseek-v4-flash", "deepseek-v4-pro"])
def test_current_models_are_accepted(model: str) -> None:
    """The current model names (and the legacy V4 Flash name DeepSeek still accepts) start up."""
    assert Settings.from_env({"KG_DEEPSEEK_MODEL": model}).llm.model == model


def test_thinking_enabled_gets_room_to_think_and_the_default_effort() -> None:
    """With thinking on, the completion budget and timeout grow and the effort is explicit (high)."""
    llm = Settings.from_env({"KG_DEEPSEEK_THINKING": "enabled"}).llm
    assert (llm.thinking, llm.reasoning_effort, llm.max_tokens, llm.timeout_s) == (
        "enabled",
        "high",
        8192,
        120.0,
    )


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"KG_DEEPSEEK_THINKING": "sometimes"}, "KG_DEEPSEEK_THINKING='sometimes'"),
        ({"KG_DEEPSEEK_REASONING_EFFORT": "high"}, "needs KG_DEEPSEEK_THINKING=enabled"),
        ({"KG_DEEPSEEK_THINKING": "enabled", "KG_DEEPSEEK_REASONING_EFFORT": "huge"}, "low, high, max"),
        ({"KG_DEEPSEEK_MODEL": "deepseek-v9"}, "has no price"),
        ({"KG_DEEPSEEK_PRICES": "{not json"}, "KG_DEEPSEEK_PRICES is not JSON"),
        ({"KG_DEEPSEEK_PRICES": '{"deepseek-flash": {"output": 1}}'}, "exactly the keys"),
        (
            {"KG_DEEPSEEK_PRICES": '{"deepseek-flash": {"cache_hit": -1, "cache_miss": 1, "output": 1}}'},
            "cache_hit must be in",
        ),
    ],
)
def test_bad_thinking_effort_and_price_settings_are_refused(env: dict[str, str], message: str) -> None:
    """Each bad value is refused at start-up with a message naming the variable and the problem."""
    with pytest.raises(ConfigurationError, match=message.replace("(", r"\(").replace("[", r"\[")):
        Settings.from_env(env)


def test_a_new_model_starts_with_its_configured_price() -> None:
    """Model names and prices are configuration: a new name works once it has a price."""
    env = {
        "KG_DEEPSEEK_MODEL": "deepseek-v5-flash",
        "KG_DEEPSEEK_PRICES": '{"deepseek-v5-flash": {"cache_hit": 0.01, "cache_miss": 0.2, "output": 0.9}}',
    }
    llm = Settings.from_env(env).llm
    assert llm.price == ModelPrice(0.01, 0.2, 0.9)
    assert "deepseek-flash" in llm.prices  # the built-in table is kept underneath


def test_describe_shows_configuration_but_no_secret() -> None:
    """``describe`` (what `kg doctor` prints) names model, thinking and gateway, never the key or token."""
    env = {"DEEPSEEK_API_KEY": KEY, "KG_LLM_BASE_URL": CF_URL, "CF_AIG_TOKEN": CF_TOKEN}
    text = repr(Settings.from_env(env).llm.describe())
    assert "deepseek-flash" in text and "disabled" in text and CF_URL in text
    assert KEY not in text and CF_TOKEN not in text
