"""NLTK's ``word_tokenize`` as WebArena's ``must_include`` calls it, without NLTK's data.

``word_tokenize`` splits sentences with Punkt, then words with
``NLTKWordTokenizer`` (the improved Treebank tokenizer). Both are pure code,
ported here from NLTK 3.9.1 (Apache-2.0, (C) 2001-2024 NLTK Project). The
English Punkt model (``punkt_tab``) is data that cannot be downloaded here, so
Punkt runs with empty parameters (no learnt abbreviations, collocations or
orthographic contexts), as ``PunktSentenceTokenizer()`` does; on the lower-cased
answers ``must_include`` tokenizes the two differ only around learnt
abbreviations ("i.e. 0"), which the README's "Differs from the reference" lists.

The answer is the agent's text: the one quadratic Treebank rule (the final period,
``([^\\.])(\\.)([\\]\\)}>"\\']*)\\s*$`` under ``re.sub``) is done by hand; the
other expressions are linear.
"""

from __future__ import annotations

import re
import string
from collections.abc import Iterator

# -- Punkt (nltk/tokenize/punkt.py), with empty parameters ------------------------------------

_NON_WORD = r"(?:[)\";}\]\*:@\'\({\[!?])"
_MULTI_CHAR = r"(?:\-{2,}|\.{2,}|(?:\.\s){2,}\.)"
_WORD_START = r"[^\(\"\`{\[:;&\#\*@\)}\]\-,]"
_PUNKT_WORD = re.compile(
    rf"""(
        {_MULTI_CHAR}
        |
        (?={_WORD_START})\S+?
        (?=
            \s|$|{_NON_WORD}|{_MULTI_CHAR}|,(?=$|\s|{_NON_WORD}|{_MULTI_CHAR})
        )
        |
        \S
    )""",
    re.UNICODE | re.VERBOSE,
)
_PERIOD_CONTEXT = re.compile(
    rf"""[.?!](?=(?P<after_tok>{_NON_WORD}|\s+(?P<next_tok>\S+)))""",
    re.UNICODE | re.VERBOSE,
)
_REALIGN = re.compile(r'["\')\]}]+?(?:\s+|(?=--)|$)', re.MULTILINE)
_ELLIPSIS = re.compile(r"\.\.+$")
_NUMERIC = re.compile(r"^-?[\.,]?\d[\d,\.-]*\.?$")
_INITIAL = re.compile(r"[^\W\d]\.$", re.UNICODE)
_PUNCTUATION = tuple(";:,.!?")


class _Token:
    __slots__ = ("ellipsis", "is_initial", "period_final", "sentbreak", "tok", "type")

    def __init__(self, tok: str) -> None:
        self.tok = tok
        self.type = _NUMERIC.sub("##number##", tok.lower())
        self.period_final = tok.endswith(".")
        self.is_initial = bool(_INITIAL.match(tok))
        self.sentbreak = False
        self.ellipsis = False
        # First pass (no abbreviations are known).
        if tok in (".", "?", "!"):
            self.sentbreak = True
        elif _ELLIPSIS.match(tok):
            self.ellipsis = True
        elif self.period_final and not tok.endswith(".."):
            self.sentbreak = True

    @property
    def type_no_period(self) -> str:
        return self.type[:-1] if len(self.type) > 1 and self.type[-1] == "." else self.type


def _ortho_heuristic(tok: _Token) -> bool | str:
    """Punkt's orthographic heuristic with no orthographic context learnt."""
    if tok.tok in _PUNCTUATION:
        return False
    if tok.tok[0].islower():  # never seen sentence-initial in lower case: not a sentence starter
        return False
    return "unknown"


def _second_pass(tok1: _Token, tok2: _Token) -> None:
    if not tok1.period_final:
        return
    if tok1.is_initial or tok1.type_no_period == "##number##":
        heuristic = _ortho_heuristic(tok2)
        # Not a sentence starter; or an initial before a capital word with no known lower-case use ("J. Bach").
        if heuristic is False or (heuristic == "unknown" and tok1.is_initial and tok2.tok[0].isupper()):
            tok1.sentbreak = False


def _contains_sentbreak(text: str) -> bool:
    tokens = [_Token(tok) for line in text.split("\n") if line.strip() for tok in _PUNKT_WORD.findall(line)]
    for i, tok in enumerate(tokens[:-1]):  # the last token is ignored
        _second_pass(tok, tokens[i + 1])
        if tok.sentbreak:
            return True
    return False


def _last_whitespace(text: str) -> int:
    for i in range(len(text) - 1, -1, -1):
        if text[i] in string.whitespace:
            return i
    return 0


def _end_contexts(text: str) -> Iterator[tuple[re.Match[str], str]]:
    previous_slice = slice(0, 0)
    previous_match: re.Match[str] | None = None
    for match in _PERIOD_CONTEXT.finditer(text):
        before = text[previous_slice.stop : match.start()]
        index = _last_whitespace(before)
        index = index + previous_slice.stop + 1 if index else previous_slice.start
        word_slice = slice(index, match.start())
        if previous_match and previous_slice.stop <= word_slice.start:
            yield previous_match, text[previous_slice] + previous_match.group() + previous_match.group("after_tok")
        previous_match, previous_slice = match, word_slice
    if previous_match:
        yield previous_match, text[previous_slice] + previous_match.group() + previous_match.group("after_tok")


def _slices(text: str) -> Iterator[slice]:
    last_break = 0
    for match, context in _end_contexts(text):
        if _contains_sentbreak(context):
            yield slice(last_break, match.end())
            last_break = match.start("next_tok") if match.group("next_tok") else match.end()
    yield slice(last_break, len(text.rstrip()))


def sent_tokenize(text: str) -> list[str]:
    """Punkt's ``PunktSentenceTokenizer().tokenize(text)`` (empty parameters, boundaries realigned)."""
    sentences: list[str] = []
    slices = list(_slices(text))
    realign = 0
    for i, first in enumerate(slices):
        first = slice(first.start + realign, first.stop)
        second = slices[i + 1] if i + 1 < len(slices) else None
        if second is None:
            if text[first]:
                sentences.append(text[first])
            continue
        match = _REALIGN.match(text[second])
        if match:
            sentences.append(text[first.start : second.start + len(match.group(0).rstrip())])
            realign = match.end()
        else:
            realign = 0
            if text[first]:
                sentences.append(text[first])
    return sentences


# -- NLTKWordTokenizer (nltk/tokenize/destructive.py) ----------------------------------------

_STARTING_QUOTES = [
    (re.compile("([«“‘„]|[`]+)", re.U), r" \1 "),  # noqa: RUF001 (NLTK's quotes)
    (re.compile(r"^\""), r"``"),
    (re.compile(r"(``)"), r" \1 "),
    (re.compile(r"([ \(\[{<])(\"|\'{2})"), r"\1 `` "),
    (re.compile(r"(?i)(\')(?!re|ve|ll|m|t|s|d|n)(\w)\b", re.U), r"\1 \2"),
]
_ENDING_QUOTES = [
    (re.compile("([»”’])", re.U), r" \1 "),  # noqa: RUF001
    (re.compile(r"''"), " '' "),
    (re.compile(r'"'), " '' "),
    (re.compile(r"\s+"), " "),
    (re.compile(r"([^' ])('[sS]|'[mM]|'[dD]|') "), r"\1 \2 "),
    (re.compile(r"([^' ])('ll|'LL|'re|'RE|'ve|'VE|n't|N'T) "), r"\1 \2 "),
]
_FINAL_PERIOD_1 = "]})>\"'»”’ "  # noqa: RUF001 - the closers the first final-period rule lets follow the period
_FINAL_PERIOD_2 = "]})>\"'"
_PUNCTUATION_RULES: list[tuple[re.Pattern[str], str] | str] = [
    _FINAL_PERIOD_1,
    (re.compile(r"([:,])([^\d])"), r" \1 \2"),
    (re.compile(r"([:,])$"), r" \1 "),
    (re.compile(r"\.{2,}", re.U), r" \g<0> "),
    (re.compile(r"[;@#$%&]"), r" \g<0> "),
    _FINAL_PERIOD_2,
    (re.compile(r"[?!]"), r" \g<0> "),
    (re.compile(r"([^'])' "), r"\1 ' "),
    (re.compile(r"[*]", re.U), r" \g<0> "),
]
_PARENS_BRACKETS = (re.compile(r"[\]\[\(\)\{\}\<\>]"), r" \g<0> ")
_DOUBLE_DASHES = (re.compile(r"--"), r" -- ")
_CONTRACTIONS2 = [
    re.compile(pattern)
    for pattern in (
        r"(?i)\b(can)(?#X)(not)\b",
        r"(?i)\b(d)(?#X)('ye)\b",
        r"(?i)\b(gim)(?#X)(me)\b",
        r"(?i)\b(gon)(?#X)(na)\b",
        r"(?i)\b(got)(?#X)(ta)\b",
        r"(?i)\b(lem)(?#X)(me)\b",
        r"(?i)\b(more)(?#X)('n)\b",
        r"(?i)\b(wan)(?#X)(na)(?=\s)",
    )
]
_CONTRACTIONS3 = [re.compile(r"(?i) ('t)(?#X)(is)\b"), re.compile(r"(?i) ('t)(?#X)(was)\b")]


def _final_period(text: str, closers: str) -> str:
    """``re.sub(r'([^\\.])(\\.)([CLOSERS]*)\\s*$', r'\\1 \\2 \\3 ', text)`` in one pass from the end.

    Only the last period can match (a period is no closer); what follows it must be closers, then space.
    """
    dot = text.rfind(".")
    if dot < 1 or text[dot - 1] == ".":
        return text
    tail = text[dot + 1 :]
    closing = 0
    while closing < len(tail) and tail[closing] in closers:
        closing += 1
    # Greedy closers, then \s* to the end: giving closers back only adds spaces to a tail that has a non-space.
    if tail[closing:] and not tail[closing:].isspace():
        return text
    separator = " " if closers is _FINAL_PERIOD_1 else ""
    return f"{text[:dot]} .{separator}{tail[:closing]} "


def treebank_tokenize(text: str) -> list[str]:
    """``NLTKWordTokenizer().tokenize(text)`` (one sentence)."""
    for regexp, substitution in _STARTING_QUOTES:
        text = regexp.sub(substitution, text)
    for rule in _PUNCTUATION_RULES:
        text = _final_period(text, rule) if isinstance(rule, str) else rule[0].sub(rule[1], text)
    text = _PARENS_BRACKETS[0].sub(_PARENS_BRACKETS[1], text)
    text = _DOUBLE_DASHES[0].sub(_DOUBLE_DASHES[1], text)
    text = " " + text + " "
    for regexp, substitution in _ENDING_QUOTES:
        text = regexp.sub(substitution, text)
    for regexp in _CONTRACTIONS2:
        text = regexp.sub(r" \1 \2 ", text)
    for regexp in _CONTRACTIONS3:
        text = regexp.sub(r" \1 \2 ", text)
    return text.split()


def word_tokenize(text: str) -> list[str]:
    """NLTK's ``word_tokenize(text)``: Punkt sentences (empty parameters), then Treebank words."""
    return [token for sentence in sent_tokenize(text) for token in treebank_tokenize(sentence)]
