"""WebArena's evaluator logic, verbatim from ``evaluation_harness/evaluators.py`` (web-arena-x/webarena, see
README.md for the commit). Stripped: beartype, Playwright and the reading of config files (the config is passed
in); URLEvaluator's and HTMLContentEvaluator's bodies are kept as functions of the page's URL / the selected text.
``word_tokenize`` is NLTK's (``pip install nltk``) with an untrained Punkt: its English model cannot be downloaded.
The test oracle for agenthub_env_webarena.evaluators; not imported by the plugin.
"""

# ruff: noqa
# fmt: off
# mypy: ignore-errors
import collections
import html
import urllib
import urllib.parse
from typing import Any


_TOKENIZERS: list = []


def word_tokenize(text: str) -> list[str]:
    """nltk.word_tokenize(text), its Punkt untrained (PunktSentenceTokenizer())."""
    if not _TOKENIZERS:
        from nltk.tokenize.destructive import NLTKWordTokenizer
        from nltk.tokenize.punkt import PunktSentenceTokenizer

        _TOKENIZERS.extend([PunktSentenceTokenizer(), NLTKWordTokenizer()])
    sentences, words = _TOKENIZERS
    return [t for s in sentences.tokenize(text) for t in words.tokenize(s)]


class StringEvaluator:
    """Check whether the answer is correct with:
    exact match: the answer is exactly the same as the reference answer
    must include: each phrase in the reference answer must be included in the answer
    fuzzy match: the answer is similar to the reference answer, using LLM judge
    """

    @staticmethod
    def clean_answer(answer: str) -> str:
        answer = answer.strip()
        if answer.startswith("'") and answer.endswith("'"):
            answer = answer[1:-1]
        elif answer.startswith('"') and answer.endswith('"'):
            answer = answer[1:-1]
        return answer.lower()

    @staticmethod
    def exact_match(ref: str, pred: str) -> float:
        return float(
            StringEvaluator.clean_answer(pred)
            == StringEvaluator.clean_answer(ref)
        )

    @staticmethod
    def must_include(ref: str, pred: str, tokenize: bool = False) -> float:
        clean_ref = StringEvaluator.clean_answer(ref)
        clean_pred = StringEvaluator.clean_answer(pred)
        # tokenize the answer if the ref is a single word
        # prevent false positive (e.g, 0)
        if (
            tokenize
            and len(clean_ref) == 1
            and len(word_tokenize(clean_ref)) == 1
        ):
            tok_pred = word_tokenize(clean_pred)
            return float(clean_ref in tok_pred)
        else:
            return float(clean_ref in clean_pred)


def string_match(configs: dict, answer: str) -> float:
    """StringEvaluator.__call__ with the stop action's answer (exact_match and must_include only)."""
    pred = StringEvaluator.clean_answer(answer)

    score = 1.0
    for approach, value in configs["eval"]["reference_answers"].items():
        match approach:
            case "exact_match":
                score *= StringEvaluator.exact_match(ref=value, pred=pred)

            case "must_include":
                assert isinstance(value, list)
                for must_value in value:
                    score *= StringEvaluator.must_include(
                        ref=must_value,
                        pred=pred,
                        tokenize=(len(value) == 1),
                    )
            case "fuzzy_match":
                intent = configs["intent"]
                if value == "N/A":
                    # if the instruction only asks the model to generate N/A when encountering an unachievable task
                    # without more concrete reasons
                    score *= StringEvaluator.exact_match(ref=value, pred=pred)
                    # if the instruction also asks the model to generate the reason why the task is unachievable
                    # this should be the default as it will prevent false positive N/A`
                    if score != 1:
                        score = 1.0 * StringEvaluator.ua_match(
                            intent=configs["intent"],
                            ref=configs["eval"]["string_note"],
                            pred=pred,
                        )
                else:
                    assert isinstance(value, list)
                    for reference in value:
                        score *= StringEvaluator.fuzzy_match(
                            ref=reference, pred=pred, intent=intent
                        )
    return score




def url_match(configs: dict, page_url: str) -> float:
    """URLEvaluator.__call__ on the final page's URL."""
    def clean_url(url: str) -> str:
        url = str(url)
        url = url.rstrip("/")
        return url

    def parse_url(url: str) -> tuple[str, dict[str, list[str]]]:
        """Parse a URL into its base, path, and query components."""
        parsed_url = urllib.parse.urlparse(url)
        base_path = parsed_url.netloc + parsed_url.path
        query = urllib.parse.parse_qs(parsed_url.query)
        return base_path, query

    def parse_urls(
        urls: list[str],
    ) -> tuple[list[str], dict[str, set[str]]]:
        """Parse a list of URLs."""
        base_paths = []
        queries = collections.defaultdict(set)
        for url in urls:
            base_path, query = parse_url(url)
            base_paths.append(base_path)
            for k, v in query.items():
                queries[k].update(v)
        return base_paths, queries

    pred = clean_url(page_url)
    ref_urls = configs["eval"]["reference_url"].split(" |OR| ")
    ref_urls = [clean_url(url) for url in ref_urls]
    matching_rule = configs["eval"].get("url_note", "GOLD in PRED")
    if matching_rule == "GOLD in PRED":
        ref_base_paths, ref_queries = parse_urls(ref_urls)
        pred_base_paths, pred_query = parse_url(pred)

        base_score = float(
            any(
                [
                    ref_base_path in pred_base_paths
                    for ref_base_path in ref_base_paths
                ]
            )
        )
        query_score = 1.0
        for k, possible_values in ref_queries.items():
            query_score *= float(
                any(
                    possible_ref_value in pred_query.get(k, [])
                    for possible_ref_value in possible_values
                )
            )
        score = base_score * query_score

    else:
        raise ValueError(f"Unknown matching rule: {matching_rule}")

    return score



def program_html_score(target: dict, selected_element: str) -> float:
    """The required_contents part of HTMLContentEvaluator.__call__ for one target."""
    score = 1.0
    selected_element = html.unescape(selected_element)

    if "exact_match" in target["required_contents"]:
        required_contents = target["required_contents"]["exact_match"]
        cur_score = StringEvaluator.exact_match(
            ref=required_contents, pred=selected_element
        )
        score *= float(cur_score)
        # print(f"[exact match] {cur_score}, selected element: {selected_element}, required contents: {required_contents}")
    elif "must_include" in target["required_contents"]:
        required_contents = target["required_contents"]["must_include"]
        assert isinstance(required_contents, list)
        for content in required_contents:
            content_or = content.split(" |OR| ")
            cur_score = any(
                [
                    StringEvaluator.must_include(
                        ref=content,
                        pred=selected_element,
                        tokenize=False,
                    )
                    for content in content_or
                ]
            )
            score *= float(cur_score)
            # print(f"[must include] {cur_score}, selected element: {selected_element}, required contents: {content_or}")
    else:
        raise ValueError(
            f"Unknown required_contents: {target['required_contents'].keys()}"
        )
    return score


def locator_text(result: Any) -> str:
    """What HTMLContentEvaluator makes of a ``document...`` locator's value."""
    selected_element = str(result)
    if not selected_element:
        selected_element = ""
    return selected_element
