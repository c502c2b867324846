"""The one name normaliser (data_plane.names): names a learner cannot tell apart are one name, and
names told apart by symbols, digits, letters or script are not."""

from __future__ import annotations

import unicodedata

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from data_plane.names import confusable, normalise, tokenize

WORD = st.text(alphabet="abcdefghijklmnoprtuvwxyz", min_size=2, max_size=9)
NAME = st.lists(WORD, min_size=1, max_size=4)
_ACCENTED = {"a": "á", "e": "é", "i": "ï", "o": "ö", "u": "ü", "c": "ç", "n": "ñ"}


def _fullwidth(text: str) -> str:
    return "".join(chr(ord(ch) + 0xFEE0) if "!" <= ch <= "~" else ch for ch in text)


@settings(max_examples=100, deadline=None)
@given(NAME, st.data())
def test_spellings_a_learner_cannot_tell_apart_are_one_name(words: list[str], data: st.DataObject) -> None:
    """Case, hyphen or space, a possessive, diacritics and full-width forms do not change a
    name's key."""
    plain = " ".join(words)
    cased = " ".join(w.upper() if data.draw(st.booleans()) else w.title() for w in words)
    hyphened = "-".join(words)
    possessive = " ".join(f"{w}'s" if i == 0 else w for i, w in enumerate(words))
    accented = "".join(_ACCENTED.get(ch, ch) if data.draw(st.booleans()) else ch for ch in plain)
    key = normalise(plain)
    assert normalise(cased) == key
    assert normalise(hyphened) == key
    assert normalise(_fullwidth(cased)) == key
    assert normalise(accented) == key
    assert normalise(possessive) == key


@settings(max_examples=100, deadline=None)
@given(NAME, st.sampled_from(["++", "#", "+"]), st.data())
def test_symbols_digits_and_letters_tell_names_apart(
    words: list[str], symbol: str, data: st.DataObject
) -> None:
    """A name with "++", "#" or "+" after a word, another digit, or another letter is another name."""
    plain = " ".join(words)
    i = data.draw(st.integers(0, len(words) - 1))
    marked = " ".join(w + symbol if j == i else w for j, w in enumerate(words))
    assert normalise(marked) != normalise(plain)
    assert normalise(plain + " 3") != normalise(plain + " 4")
    word = words[i]
    k = data.draw(st.integers(0, len(word) - 1))
    other = data.draw(st.sampled_from([c for c in "bdfgkqz" if c != word[k]]))
    changed = " ".join(w[:k] + other + w[k + 1 :] if j == i else w for j, w in enumerate(words))
    assert normalise(changed) != normalise(plain) or _same_after_plural(changed, plain)


def _same_after_plural(a: str, b: str) -> bool:
    """The conservative singular may make two words one ("bus" / "buss" aside): such pairs are
    the regular plural's doing, which the property above states separately."""
    return all(x.rstrip("s") == y.rstrip("s") for x, y in zip(a.split(), b.split(), strict=True))


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("Hooke's law", "hookes law"),
        ("Hooke's law", "Hooke law"),
        ("k-means", "k means"),
        ("A.I.", "AI"),
        ("Node.js", "nodejs"),
        ("Gödel's theorem", "godels theorem"),
        ("Ｃ＋＋", "C++"),
        ("Embeddings", "embedding"),
        ("Straße", "strasse"),
        ("Μηχανική μάθηση", "μηχανικη μαθηση"),
        ("CNN's", "CNNs"),
    ],
)
def test_one_name(a: str, b: str) -> None:
    """Spellings a learner writes for the same name normalise alike."""
    assert normalise(a) == normalise(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("k-means", "k-means++"),
        ("C", "C++"),
        ("C", "C#"),
        ("C++", "C#"),
        ("GPT-3", "GPT-4"),
        ("C", "R"),
        ("机器学习", "深度学习"),
    ],
)
def test_two_names(a: str, b: str) -> None:
    """Names told apart by symbols, digits, one letter or their characters stay apart."""
    assert normalise(a) != normalise(b)


def test_names_in_any_script_have_words() -> None:
    """A name in Chinese or Greek has a key, and a CJK name is found inside unspaced text."""
    assert normalise("机器学习") == ("机", "器", "学", "习")
    assert normalise("Μηχανική μάθηση")
    question = normalise("什么是机器学习?")
    assert question[-4:] == normalise("机器学习")


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=40) | st.text(alphabet="aA é-'.+#C机→ 1", max_size=20))
def test_normalise_gives_the_words_tokenize_gives(text: str) -> None:
    """``normalise`` (words alone, the fast path) and ``tokenize`` (words and spans) agree."""
    assert normalise(text) == tuple(t.text for t in tokenize(text))


def test_tokens_keep_their_place_in_the_text() -> None:
    """Every word's span is where it stands in the original text, folding or not."""
    text = "Was brauche ich vor Gödel's Sätzen und Ｃ＋＋?"
    for token in tokenize(text):
        surface = text[token.start : token.end]
        assert normalise(surface) == (token.text,)


def test_a_word_mixing_scripts_is_confusable() -> None:
    """ "RАG" with a Cyrillic А passes for "RAG"; names in one script per word do not."""
    assert confusable("RАG") is not None
    assert "Cyrillic" in (confusable("RАG") or "")
    for name in ("RAG", "α-helix", "Μηχανική μάθηση", "机器学习", "C++"):
        assert confusable(name) is None


def test_diacritics_of_other_scripts_stay() -> None:
    """Marks that are part of a letter outside Latin, Greek and Cyrillic are kept."""
    word = "क्षमता"  # Devanagari: the virama (U+094D) joins two consonants
    assert any(unicodedata.combining(ch) for ch in "".join(normalise(word)))


def test_a_head_word_or_short_name_suggests_the_name_it_starts() -> None:
    """ "attention" suggests "Attention mechanism" first (before names that only hold the word, or
    are spelt alike); "HTML" suggests "HTML basics", its only candidate."""
    from control_plane.understanding.names import NameIndex as Index

    index = Index.from_names(
        [
            ("attention_mechanism", "Attention mechanism", ()),
            ("self_attention", "Self-attention", ()),
            ("flash_attention", "FlashAttention", ()),
            ("paged_attention", "PagedAttention", ()),
            ("html_basics", "HTML basics", ()),
            ("css", "CSS", ()),
        ]
    )
    assert [s.concept_id for s in index.suggest("attention")][:1] == ["attention_mechanism"]
    assert [s.concept_id for s in index.suggest("HTML")] == ["html_basics"]
