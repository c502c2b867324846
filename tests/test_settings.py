"""Settings are parsed once from an environment mapping and refuse anything but one DeepSeek gateway."""

from __future__ import annotations

import pickle

import pytest

from control_plane.settings import LLMSettings, Secret, Settings
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
        model="deepseek-chat",
        api_key=None,
        base_url="https://api.deepseek.com",
        cf_aig_token=None,
        timeout_s=30.0,
        max_retries=2,
        context_window=64000,
        max_tokens=1024,
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
            "KG_DEEPSEEK_MODEL": "deepseek-reasoner",
            "KG_LLM_BASE_URL": CF_URL + "/",
            "CF_AIG_TOKEN": CF_TOKEN,
            "KG_LLM_TIMEOUT_S": "12.5",
            "KG_LLM_MAX_RETRIES": "5",
            "KG_LLM_CONTEXT_WINDOW": "128000",
            "KG_LLM_MAX_TOKENS": "2048",
        }
    )
    assert s.database_url == "sqlite:///x.db"
    assert (s.llm.model, s.llm.base_url, s.llm.gateway) == ("deepseek-reasoner", CF_URL, "cloudflare")
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
